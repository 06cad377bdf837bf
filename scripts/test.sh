#!/usr/bin/env bash
# The project's test command (CI runs it through .ci/run): install missing
# packages (what the compiles need first, the rest while they run), build,
# and run every test tier with ctest, each once:
#
#   - the normal build (build/, -O2 as shipped) runs the tiers that need the
#     shipped binaries and realistic timing: faults, campaign (one fixed seed
#     of the randomized fault campaign per store kind, docs/campaign.md),
#     bench (smoke), deploy (the units, the .deb booted, the image built and
#     run) and docs;
#   - the ASan+UBSan build (build-asan/, scripts/sanitize.sh) runs unit,
#     integration and contract: the same tests, stricter (every memory error
#     and undefined behaviour they reach fails them; assertions on);
#   - each libFuzzer target for 20 s (in build-asan/ too, scripts/fuzz.sh).
#
# The normal build compiles only what its tiers need. The sanitizer and fuzz
# targets compile in the background at the lowest CPU priority from the start,
# in what the normal build leaves of the CPUs, then beside the first tier:
# that tier mostly waits (for leases to expire, servers to start,
# packages to unpack), so the compile takes the idle cores and the tests
# still get a core whenever they ask for one.
#
# BATON_QUICK=1: the normal build of everything and every tier in it (unit,
# integration and contract included), no sanitizers, no fuzzers: a fast
# local loop.
# Environment: BATON_TEST_JOBS (default 8 for the first tier, 6 with
# BATON_QUICK=1), BATON_BUILD_JOBS (default 2).
#
# Several tests at once on two cores: most tests spend their time waiting,
# not computing. The fault scenarios, which are timing-sensitive, run in four
# lanes of one test each (tests/faults/CMakeLists.txt); the longest tests
# (the image build, the .deb boot, the benchmark smoke, the fault lanes)
# start first (COST). Eight: the four lanes, the image build (two slots),
# the benchmark smoke and the .deb's tests all start at once; with six, two
# lanes waited behind them and the tier took 447 s instead of about 300.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Each phase's wall time, printed at the end (also when a phase fails), so
# the next slow one is seen at once. ctest's own "Label Time Summary" splits
# the test phases by tier (seconds times processes).
phases=()
phase() {
  local name=$1
  shift
  local started=$SECONDS
  local status=0
  "$@" || status=$?
  phases+=("$(printf '%-16s %5d s%s' "$name" $((SECONDS - started)) "$([[ $status == 0 ]] || echo "  (failed: exit $status)")")")
  return $status
}
background=
finish() {
  # A failed phase ends the run: the background compile goes with it.
  if [[ -n "$background" ]] && kill -0 "$background" 2>/dev/null; then
    kill -- "-$background" 2>/dev/null || true
  fi
  # apt is left to finish: killed, it could leave dpkg half done.
  if [[ -n "${packages_rest:-}" ]]; then wait "$packages_rest" 2>/dev/null || true; fi
  echo "test: wall time per phase"
  local line
  for line in "${phases[@]}"; do echo "  $line"; done
  echo "  $(printf '%-16s %5d s' total "$SECONDS")"
}
trap finish EXIT

if [[ "${BATON_QUICK:-0}" == 1 ]]; then
  phase packages "$root/scripts/install-deps.sh"
  phase build "$root/scripts/build.sh"
  phase tests ctest --test-dir "$root/build" --output-on-failure -j "${BATON_TEST_JOBS:-6}"
  echo "test: BATON_QUICK=1: every tier in the normal build; no sanitizer build, no fuzzers"
  exit 0
fi

# What the compiles need first; the rest (the servers, the deploy tier's
# tools) installs while they run: on a fresh machine that is mostly download
# and unpacking, which the compiles do not wait for.
mkdir -p "$root/build"
packages_marker="$root/build/.packages-started"
touch "$packages_marker"
phase packages "$root/scripts/install-deps.sh" --compile
# The lists need no second refresh when the first call just made one.
lists_fresh=0
if [[ -n $(find /var/lib/apt/lists -maxdepth 0 -newer "$packages_marker" 2>/dev/null) ]]; then
  lists_fresh=1
fi
packages_log="$root/build/install-deps.log"
BATON_APT_UPDATED=$lists_fresh "$root/scripts/install-deps.sh" >"$packages_log" 2>&1 &
packages_rest=$!

# What the first tier's tests run: the daemon, its keeper, the man page and
# completion (the .deb), the workers, the fault suites, the campaign tool and
# its app, the floor probes.
first_tier_targets="baton baton-keeper baton_docs test_worker floor_probe pg_floor_probe fault_tests etcd_fault_tests baton_campaign campaign_app"

# The sanitizer and fuzz builds start at once, at the lowest CPU priority: the
# normal build below takes the CPUs first, and this one fills what it leaves
# (its links and waits), then compiles beside the first tier.
# Its own process group (job control), so that a failed run stops all of it;
# not its own session (setsid): Linux shares the CPUs between sessions
# (autogroup scheduling), which made nice ineffective and halved the normal
# build's speed while the first tier waited for it.
background_log="$root/build/background-builds.log"
set -m
bash -c 'BATON_BUILD_ONLY=1 nice -n 19 "$1/scripts/sanitize.sh" &&
         BATON_BUILD_ONLY=1 nice -n 19 "$1/scripts/fuzz.sh"' _ "$root" \
  >"$background_log" 2>&1 &
background=$!
set +m
background_started=$SECONDS

phase build env BATON_BUILD_TARGETS="$first_tier_targets" "$root/scripts/build.sh"

# This phase is only what the run waited for the rest of the packages.
wait_for_packages() {
  local status=0
  wait "$packages_rest" || status=$?
  packages_rest=
  cat "$packages_log"
  return $status
}
phase packages-wait wait_for_packages

phase tests ctest --test-dir "$root/build" --output-on-failure -j "${BATON_TEST_JOBS:-8}" \
  -L 'faults|campaign|bench|deploy|docs'

# The background compile's own time is in its log; this phase is only what
# the run waited for it after the first tier.
wait_for_background() {
  local status=0
  wait "$background" || status=$?
  background=
  echo "test: sanitizer and fuzz builds: $((SECONDS - background_started)) s in the background"
  if ((status != 0)); then
    echo "test: the sanitizer or fuzz build failed; the end of $background_log:" >&2
    tail -n 80 "$background_log" >&2
  fi
  return $status
}
phase build-wait wait_for_background
phase sanitize "$root/scripts/sanitize.sh"
phase fuzz "$root/scripts/fuzz.sh" 20
