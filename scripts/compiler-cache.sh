# Sourced by build.sh, sanitize.sh and fuzz.sh: use ccache when it is
# installed, with its cache outside the checkout, so that a later run on the
# same machine (a new clone in CI, a rebuilt tree) compiles only what changed.
# Without ccache nothing changes: every build works, just from scratch.
#
# Sets compiler_cache_args (CMake arguments, empty without ccache).
# BATON_CCACHE=0 turns it off; CCACHE_DIR chooses the cache (default
# ${XDG_CACHE_HOME:-~/.cache}/baton-ccache, at most 3 GB).
compiler_cache_args=()
if [[ "${BATON_CCACHE:-1}" != 0 ]] && command -v ccache >/dev/null 2>&1; then
  export CCACHE_DIR="${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/baton-ccache}"
  # Paths below the checkout are hashed relative to it, and the working
  # directory not at all, so a clone in another directory hits the same entries.
  export CCACHE_BASEDIR="$root"
  export CCACHE_NOHASHDIR=1
  # The locale only changes the language of warnings; left out of the hash, a
  # build where LANG is unset (the Dockerfile's build stage, which the deploy
  # test gives this cache) hits the entries of one where it is set.
  # pch_defines,time_macros and the include file times: what ccache needs to
  # cache compiles that read a precompiled header (the sanitizer tree's), which
  # is written just before them.
  export CCACHE_SLOPPINESS=locale,pch_defines,time_macros,include_file_mtime,include_file_ctime
  mkdir -p "$CCACHE_DIR"
  ccache --max-size=3G >/dev/null
  compiler_cache_args=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  echo "compiler cache: ccache in $CCACHE_DIR ($(ccache --print-stats 2>/dev/null | awk -F'\t' '$1=="files_in_cache"{print $2}') files)"
fi
