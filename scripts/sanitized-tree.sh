# Sourced by sanitize.sh and fuzz.sh: configure build-asan/, the one tree that
# both the ASan+UBSan test tier and the libFuzzer targets are built in.
# Expects $root; sets build_dir and jobs. Extra arguments go to CMake.
#
# clang (libFuzzer needs it; the fuzzers then link what the tests already
# compiled). -O1 for baton's own code: the integration tests have timing
# bounds, and ASan at -O0 is several times slower (-O0 compiled this tree in
# 421 s against 500, but the fuzzers then ran 3 to 7 times fewer inputs in
# their 20 s); not -O2, which takes longer to compile for little gain. The tests' own code at -O0
# (BATON_TEST_CXX_FLAGS): it runs briefly, and -O0 halves its compile here.
# -g1 (line tables) is all the symbolised stacks need. No NDEBUG, and
# libstdc++'s own bounds checks on. The components also carry libFuzzer's
# coverage instrumentation (BATON_FUZZ), which the tests do not mind.
# Precompiled headers (BATON_PCH): clang reads them cheaply; without a
# timestamp in them, so that the compiler cache can hash them
# (scripts/compiler-cache.sh). Unity batches of 16 files per target
# (cmake/unity.cmake), in the reverse of the normal tree's order, so that a
# file that compiles only thanks to a neighbour in its batch fails one of the
# two: asio's and gtest's templates are instantiated and optimised once per
# batch rather than once per file: on a cold cache this tree compiled in 350 s
# on 2 cores (656 CPU-seconds) against 555 s (1,064) file by file with Make (it
# mostly compiles in the background, where the CPU-seconds are what counts).
build_dir="$root/build-asan"
jobs=${BATON_BUILD_JOBS:-2}

sanitized_tree_cxx=${BATON_SANITIZE_CXX:-}
if [[ -z "$sanitized_tree_cxx" ]]; then
  if command -v clang++-14 >/dev/null 2>&1; then sanitized_tree_cxx=clang++-14; else sanitized_tree_cxx=clang++; fi
fi
command -v "$sanitized_tree_cxx" >/dev/null 2>&1 || {
  echo "$(basename "$0"): $sanitized_tree_cxx not found (scripts/install-deps.sh installs clang)" >&2
  exit 1
}

source "$root/scripts/compiler-cache.sh"
source "$root/scripts/cmake-generator.sh"
use_ninja "$build_dir"
cmake -S "$root" -B "$build_dir" "${generator_args[@]}" "${compiler_cache_args[@]}" \
  -DCMAKE_CXX_COMPILER="$sanitized_tree_cxx" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1 -D_GLIBCXX_ASSERTIONS -Xclang -fno-pch-timestamp" \
  -DBATON_SANITIZE=address,undefined -DBATON_FUZZ=ON -DBATON_TEST_CXX_FLAGS=-O0 \
  -DBATON_FAULT_TESTS=OFF -DBATON_PCH=ON -DBATON_UNITY=reverse "$@"
