#!/usr/bin/env bash
# The project's test command: install missing build dependencies, build, and
# run every test tier (unit and integration) with ctest. Integration tests
# start their own redis-server and baton processes on free loopback ports, so
# they can run in parallel.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${BATON_TEST_JOBS:-2}

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"
