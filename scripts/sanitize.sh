#!/usr/bin/env bash
# Build baton and every test with AddressSanitizer (LeakSanitizer included)
# and UndefinedBehaviorSanitizer into build-asan/ (at the repository top; the
# tree scripts/sanitized-tree.sh configures, which the fuzzers share), and run
# the unit, integration and contract tiers there: in CI (scripts/test.sh) the
# only run of those tiers. The fault suite (label faults)
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
# Environment: BATON_BUILD_JOBS (default 2), BATON_TEST_JOBS (default 6: the
# tests mostly wait on servers and leases; four at once took 250-255 s on 2
# cores against 367 s for two, all passing, and kept the CPUs 69 % busy),
# BATON_BUILD_ONLY=1 (build, run nothing: scripts/test.sh compiles this tree
# while the first tier runs, then calls this script again for the tests).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
test_jobs=${BATON_TEST_JOBS:-6}
source "$root/scripts/sanitized-tree.sh"
reports="$build_dir/sanitizer-reports"

cmake --build "$build_dir" -j "$jobs"
if [[ "${BATON_BUILD_ONLY:-0}" == 1 ]]; then exit 0; fi

rm -rf "$reports"
mkdir -p "$reports"
# log_path: each process writes its report to <prefix>.<pid> (and not to a
# stderr that a test may have redirected into a log nobody reads).
# detect_stack_use_after_return is not asked for: it moves every frame to the
# heap, and the integration tests have timing bounds.
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
