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
# Environment: BATON_TEST_JOBS (default 2), BATON_BUILD_JOBS (default 2).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${BATON_TEST_JOBS:-2}

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

if [[ "${BATON_QUICK:-0}" == 1 ]]; then
  echo "test: BATON_QUICK=1: skipping the sanitizer build and the fuzzers"
  exit 0
fi
"$root/scripts/sanitize.sh"
"$root/scripts/fuzz.sh" 20
