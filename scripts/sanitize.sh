#!/usr/bin/env bash
# Build baton and every test with AddressSanitizer (LeakSanitizer included)
# and UndefinedBehaviorSanitizer into build-asan/ (at the repository top), and
# run the unit and integration tiers there. The fault suite (label faults)
# runs once, in the normal build (scripts/test.sh): most of its time is spent
# waiting for leases to expire, and the code paths it drives (reconnects,
# timeouts, kills) are also driven by the integration tests run here; leaving
# it out keeps CI well under its time limit.
# Part of scripts/test.sh, so CI runs it; it can also be run on its own.
# Extra arguments go to the CMake configure step.
#
# A finding fails the run in two ways: the process that hits it stops at once
# (halt_on_error; the build adds -fno-sanitize-recover=all), so its test
# fails; and every report is also written to a file under
# build-asan/sanitizer-reports/, which this script checks after ctest. The
# second catches findings in processes the tests only start and stop (baton
# daemons, the keeper, the test worker), whose exit status a test may not
# look at.
#
# LeakSanitizer works here (it needs ptrace-like access to the process's own
# threads; these containers allow it), so leaks are reported at exit.
#
# ThreadSanitizer is not run: baton is single-threaded by design. All of its
# code runs on the one io_context thread (src/: no std::thread, no async or
# thread-pool spdlog logger; the keeper is a separate process, not a thread).
# The only other thread in the daemon is Boost.Asio's internal resolver
# thread, which exists while a redis:// host name is being resolved and runs
# only getaddrinfo; its result is handed back through the io_context, so no
# baton data is shared with it. The test code does use threads: the
# fault-injecting TCP proxy (tests/support/fault_proxy.cpp) and one test in
# tests/integration/daemon/event_log_test.cpp (a writer and a small socket
# server); that is test harness, not baton, and is not run under TSan here.
#
# Environment: BATON_BUILD_JOBS (default 2), BATON_TEST_JOBS (default 2).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$root/build-asan"
jobs=${BATON_BUILD_JOBS:-2}
test_jobs=${BATON_TEST_JOBS:-2}
reports="$build_dir/sanitizer-reports"

# -O1, not -O0: the integration tests have timing bounds, and ASan at -O0 is
# several times slower; not -O2 either, which takes longer to compile for
# little gain. -g1 (line tables) is all the symbolised stacks need and keeps
# the build and link fast. No NDEBUG, and libstdc++'s own bounds checks on.
source "$root/scripts/compiler-cache.sh"
cmake -S "$root" -B "$build_dir" -G "Unix Makefiles" "${compiler_cache_args[@]}" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1 -D_GLIBCXX_ASSERTIONS" -DBATON_SANITIZE=address,undefined \
  -DBATON_FAULT_TESTS=OFF "$@"
cmake --build "$build_dir" -j "$jobs"

rm -rf "$reports"
mkdir -p "$reports"
# log_path: each process writes its report to <prefix>.<pid> (and not to a
# stderr that a test may have redirected into a log nobody reads).
# detect_stack_use_after_return needs compiler support g++ 12 lacks, so it is
# not asked for.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:strict_string_checks=1:check_initialization_order=1:strict_init_order=1:detect_odr_violation=2:log_path=$reports/asan"
export LSAN_OPTIONS="report_objects=1:suppressions=$root/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:report_error_type=1:log_path=$reports/ubsan"

status=0
# The benchmark smoke (label bench) measures speed and peers, not baton's
# memory safety; the normal build runs it.
ctest --test-dir "$build_dir" --output-on-failure -j "$test_jobs" -L 'unit|integration' -LE 'bench|deploy|faults' || status=$?

shopt -s nullglob
found=("$reports"/*)
if ((${#found[@]} > 0)); then
  echo "sanitize: ${#found[@]} sanitizer report(s) in $reports:" >&2
  for report in "${found[@]}"; do
    echo "---- $report" >&2
    cat "$report" >&2
  done
  status=1
fi
if ((status != 0)); then
  echo "sanitize: FAILED (ctest or sanitizer reports above)" >&2
  exit "$status"
fi
echo "sanitize: all tests passed under ASan+UBSan; no sanitizer reports"
