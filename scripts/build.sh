#!/usr/bin/env bash
# Configure and build baton and its tests into build/ (at the repository top),
# optimised, with line tables only (-g1: enough for symbolised backtraces, and
# a third faster to compile than full debug info); the tests' own code at -O0
# (tests/CMakeLists.txt says why); each target's files in unity batches of 16,
# in source order (cmake/unity.cmake: the components compile in less than half
# the CPU time; the sanitizer tree batches them in the reverse order, so that a
# file that compiles only thanks to a neighbour fails one of the two).
# Extra arguments go to the CMake configure step,
# e.g. scripts/build.sh -DBATON_BUILD_TESTS=OFF.
# Environment: BATON_BUILD_TARGETS="baton" builds only those targets (default:
# all), BATON_BUILD_JOBS (default 2).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$root/build"
jobs=${BATON_BUILD_JOBS:-2}

source "$root/scripts/compiler-cache.sh"
source "$root/scripts/cmake-generator.sh"
use_ninja "$build_dir"
cmake -S "$root" -B "$build_dir" "${generator_args[@]}" "${compiler_cache_args[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DBATON_TEST_CXX_FLAGS=-O0 -DBATON_UNITY=forward "$@"
targets=()
for target in ${BATON_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
