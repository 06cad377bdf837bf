# Sourced by build.sh and sanitized-tree.sh: the CMake generator, Ninja.
# Ninja compiles a target's files while the libraries it links are still
# being built (Make waits for each whole library first): with unity batches,
# a few large compiles per library, Make left a core idle for a third of the
# normal tree's cold build (251 s against 169 s with Ninja on 2 cores).
#
# use_ninja BUILD_DIR: a tree configured before with another generator is
# configured afresh (CMake refuses to switch generators in place); its
# objects come back from the compiler cache. Sets generator_args.
use_ninja() {
  local build_dir=$1
  command -v ninja >/dev/null 2>&1 || {
    echo "$(basename "$0"): ninja not found (scripts/install-deps.sh installs ninja-build)" >&2
    exit 1
  }
  if [[ -f "$build_dir/CMakeCache.txt" ]] &&
    ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$build_dir/CMakeCache.txt"; then
    echo "$(basename "$0"): $build_dir was configured for another generator: configuring it afresh for Ninja"
    rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
  fi
  generator_args=(-G Ninja)
}
