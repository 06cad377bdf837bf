#!/usr/bin/env bash
# Build the libFuzzer targets with clang in build-asan/ (at the repository
# top; the sanitizer tests' tree) and run each for SECONDS (default 30), all
# at once (on two cores, the wall time stays SECONDS).
# Fails if any finds a crash, a sanitizer report (ASan+UBSan are on), a
# leak, a hang over 10 s on one input, or an uncaught exception.
#
#   fuzz_config          YAML config, BATON_* environment, command line
#   fuzz_socket_request  socket line framing, request parsing, replies
#   fuzz_peer_wire       peer messages: parsing, MAC check, signing again
#
# Seeds are read from fuzz/corpus/<target>/ (never written); inputs the run
# finds go to build-asan/corpus/<target>/, so later runs start from them too.
# A failing input is saved as build-asan/artifacts/<target>-crash-<sha1>;
# replay it with: build-asan/fuzz/<target> <that file>
#
# Usage: scripts/fuzz.sh [SECONDS]
# Environment: BATON_SANITIZE_CXX (default clang++-14, else clang++),
# BATON_BUILD_JOBS (default 2), BATON_BUILD_ONLY=1 (build the targets, run
# nothing).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-30}
targets=(fuzz_config fuzz_socket_request fuzz_peer_wire)

if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS]  (a whole number of seconds, default 30)" >&2
  exit 2
fi

# Only the fuzz targets are built here; the libraries they link are those of
# the sanitizer tests (scripts/sanitized-tree.sh), so after scripts/sanitize.sh
# this is a link at most.
source "$root/scripts/sanitized-tree.sh"
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"
if [[ "${BATON_BUILD_ONLY:-0}" == 1 ]]; then exit 0; fi

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/baton-fuzz.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf -- "$run_dir"
}
trap cleanup EXIT

mkdir -p "$build_dir/artifacts"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1"
for target in "${targets[@]}"; do
  mkdir -p "$build_dir/corpus/$target" "$run_dir/$target"
  # TMPDIR: fuzz_config keeps its scratch config file there.
  # stdin from /dev/null: nothing the input names can wait on the terminal.
  TMPDIR="$run_dir/$target" "$build_dir/fuzz/$target" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$build_dir/artifacts/$target-" \
    "$build_dir/corpus/$target" "$root/fuzz/corpus/$target" \
    </dev/null >"$run_dir/$target.log" 2>&1 &
  pids+=("$!")
done

status=0
for i in "${!targets[@]}"; do
  target=${targets[i]}
  if wait "${pids[i]}"; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run_dir/$target.log")
    cov=$(grep -o 'cov: [0-9]*' "$run_dir/$target.log" | tail -n 1)
    echo "fuzz: $target: ok, ${runs:-?} inputs in ${seconds}s (${cov:-cov: ?})"
  else
    status=1
    echo "fuzz: $target FAILED; last lines of its log:" >&2
    tail -n 60 "$run_dir/$target.log" >&2
  fi
done
pids=()
if ((status != 0)); then
  echo "fuzz: FAILED; inputs saved in $build_dir/artifacts/" >&2
  exit 1
fi
