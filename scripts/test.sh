#!/usr/bin/env bash
# The project's test command (CI runs it through .ci/run): install missing
# build dependencies, build, and run every test tier (unit, integration, and
# faults when present) with ctest. Integration tests start their own
# redis-server and baton processes on free loopback ports, so they can run in
# parallel.
#
# Then, unless BATON_QUICK=1 is set:
#   - scripts/sanitize.sh: all tests again, built with ASan+UBSan (build-asan/);
#   - scripts/fuzz.sh 20: each libFuzzer target for 20 s (build-fuzz/).
# BATON_QUICK=1 runs only the normal build and tests, for a fast local loop.
# Environment: BATON_TEST_JOBS (default 6), BATON_BUILD_JOBS (default 2).
#
# Six tests at once on two cores: most tests spend their time waiting (for a
# lease to expire, a server to start, a package to unpack), not computing.
# The fault scenarios, which are timing-sensitive, run in three lanes of one
# test each (tests/faults/CMakeLists.txt); the longest tests (the image build,
# the .deb boot, the benchmark smoke, the fault lanes) start first (COST).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${BATON_TEST_JOBS:-6}

# Each phase's wall time, printed at the end (also when a phase fails), so
# the next slow one is seen at once. ctest's own "Label Time Summary" splits
# the test phase by tier (seconds times processes).
phases=()
phase() {
  local name=$1
  shift
  local started=$SECONDS
  local status=0
  "$@" || status=$?
  phases+=("$(printf '%-10s %5d s%s' "$name" $((SECONDS - started)) "$([[ $status == 0 ]] || echo "  (failed: exit $status)")")")
  return $status
}
summary() {
  echo "test: wall time per phase"
  local line
  for line in "${phases[@]}"; do echo "  $line"; done
  echo "  $(printf '%-10s %5d s' total "$SECONDS")"
}
trap summary EXIT

phase packages "$root/scripts/install-deps.sh"
phase build "$root/scripts/build.sh"
phase tests ctest --test-dir "$root/build" --output-on-failure -j "$jobs"
if [[ "${BATON_QUICK:-0}" == 1 ]]; then
  echo "test: BATON_QUICK=1: skipping the sanitizer build and the fuzzers"
  exit 0
fi
phase sanitize "$root/scripts/sanitize.sh"
phase fuzz "$root/scripts/fuzz.sh" 20
