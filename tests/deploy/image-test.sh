#!/usr/bin/env bash
# The container image, built from the Dockerfile and run for real: two
# containers of it elect a leader on a redis-server this script starts on
# loopback, `baton status` inside them tells leader from standby, the image's
# HEALTHCHECK passes, and stopping the leader's container hands the lease over.
# Then the Kubernetes manifests run on the same image with `podman kube play`
# (kube-play-test.sh).
#
#   tests/deploy/image-test.sh SOURCE_DIR WORK_DIR
#
# Debian 12 comes from debootstrap (debian-rootfs.sh) and is imported as a
# local base image, so no registry is used. Everything podman and buildah
# store lives under WORK_DIR (their own --root/--runroot), which is removed
# at the end: the host's images and containers are never touched.
# Needs root, podman, buildah, runc, debootstrap, redis-server, and for the
# Kubernetes part catatonit (the pods' pause process) and python3 with PyYAML.
set -euo pipefail

source_dir=${1:?usage: image-test.sh SOURCE_DIR WORK_DIR}
work_parent=${2:?usage: image-test.sh SOURCE_DIR WORK_DIR}
skip=77

for tool in podman buildah debootstrap redis-server redis-cli tar; do
  if ! command -v "$tool" >/dev/null; then
    echo "image-test: SKIP: $tool is not installed (scripts/install-deps.sh)" >&2
    exit $skip
  fi
done
if ! command -v catatonit >/dev/null && [[ ! -x /usr/libexec/podman/catatonit ]]; then
  echo "image-test: SKIP: catatonit is not installed (podman's pods need it; scripts/install-deps.sh)" >&2
  exit $skip
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
  echo "image-test: SKIP: python3 with PyYAML (python3-yaml) is not installed (scripts/install-deps.sh)" >&2
  exit $skip
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "image-test: SKIP: needs root (debootstrap, podman storage)" >&2
  exit $skip
fi

mkdir -p "$work_parent"
work=$(mktemp -d "$work_parent/image-test.XXXXXX")
# Podman refuses a runroot longer than 50 characters (its sockets live
# there), so the run-time state gets a short private directory of its own.
runtime=$(mktemp -d "${TMPDIR:-/tmp}/baton-image.XXXXXX")
store=(--root "$work/storage" --runroot "$runtime/run" --storage-driver overlay)
# Podman keeps its events, locks and tmp files under its own tmpdir; keep them
# private too, and run without systemd (no timers for healthchecks, cgroupfs).
pod=(podman "${store[@]}" --tmpdir "$runtime/tmp" --events-backend none --cgroup-manager cgroupfs)
# podman's default rlimits may exceed what a nested or restricted host allows.
limits=(--ulimit nofile=20000:20000 --ulimit nproc=32768:32768)
bud=(buildah "${store[@]}")
tag=$(basename "$work" | tr 'A-Z.' 'a-z-')
base_image=localhost/baton-test-base:$tag
image=localhost/baton-test:$tag
containers=("baton-$tag-a" "baton-$tag-b")
# What the Kubernetes manifests run besides baton (kube-standin.Containerfile).
standin_image=localhost/baton-test-standin:$tag
standin_pid=""
redis_pid=""

started=$EPOCHREALTIME
phase_started=$started
phase() {
  local now=$EPOCHREALTIME
  awk -v name="$1" -v from="$phase_started" -v to="$now" \
    'BEGIN { printf "image-test: phase %-28s %6.1fs\n", name, to - from }'
  phase_started=$now
}
# Prefixes each line with the time, so the build log shows where time goes.
stamp_lines() {
  local line
  while IFS= read -r line; do printf '%(%T)T %s\n' -1 "$line"; done
}
# Podman 4 still tries to reach systemd for healthcheck timers and says so;
# only that message is dropped.
without_systemd_noise() {
  grep -v 'unable to get systemd connection' >&2 || true
}
fail() {
  echo "image-test: FAIL: $*" >&2
  exit 1
}
# A command that stops the script under `set -e` says which one it was.
set -E
trap 'echo "image-test: FAIL: line $LINENO: \"$BASH_COMMAND\" exited $?" >&2' ERR

cleanup() {
  local status=$?
  set +e
  trap - ERR
  [[ -n "$standin_pid" ]] && kill "$standin_pid" 2>/dev/null && wait "$standin_pid" 2>/dev/null
  for ctr in "${containers[@]}"; do
    "${pod[@]}" rm --force --time 5 "$ctr" >/dev/null 2>&1
  done
  "${pod[@]}" pod stop --all --time 5 >/dev/null 2>&1
  "${pod[@]}" pod rm --all --force >/dev/null 2>&1
  "${pod[@]}" rmi --force "$image" "$base_image" "$standin_image" >/dev/null 2>&1
  # Intermediate build containers and the build stage's image, by the names
  # buildah gives them in this private store.
  "${bud[@]}" rm --all >/dev/null 2>&1
  "${pod[@]}" image prune --all --force >/dev/null 2>&1
  [[ -n "$redis_pid" ]] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  # The overlay driver bind-mounts its directory onto itself; unmount whatever
  # is left under the work directory before removing it.
  grep -oE " ($work|$runtime)/[^ ]*" /proc/mounts | sort -r | while read -r mnt; do umount -l "$mnt"; done
  rm -rf "$work" "$runtime"
  if [[ $status -eq 0 ]]; then
    awk -v from="$started" -v to="$EPOCHREALTIME" 'BEGIN { printf "image-test: PASS in %.1fs\n", to - from }'
  fi
  exit $status
}
trap cleanup EXIT

# Phase 1: a Debian 12 base image, imported from a debootstrapped tree, or
# from BATON_TEST_ROOTFS_TAR (a tar of such a tree) when the caller has one:
# deploy tests that share it skip minutes of debootstrap.
if [[ -n "${BATON_TEST_ROOTFS_TAR:-}" ]]; then
  [[ -r "$BATON_TEST_ROOTFS_TAR" ]] || fail "BATON_TEST_ROOTFS_TAR=$BATON_TEST_ROOTFS_TAR is not readable"
  "${pod[@]}" import --quiet "$BATON_TEST_ROOTFS_TAR" "$base_image" >/dev/null
else
  bash "$source_dir/tests/deploy/debian-rootfs.sh" "$work/rootfs"
  phase "debootstrap"
  tar -C "$work/rootfs" -c . | "${pod[@]}" import --quiet - "$base_image" >/dev/null
  rm -rf "$work/rootfs"
fi
phase "import base image"

# The Kubernetes manifests' other images, built beside the baton image (its
# apt downloads overlap the compile) and awaited before kube-play-test.sh.
mkdir -p "$work/standin-context"
"${bud[@]}" bud --isolation=chroot --format docker --layers=false \
  --build-arg "BASE_IMAGE=$base_image" "${limits[@]}" \
  -f "$source_dir/tests/deploy/kube-standin.Containerfile" -t "$standin_image" \
  "$work/standin-context" >"$work/standin.log" 2>&1 &
standin_pid=$!

# Phase 2: the Dockerfile, both stages on the local base. Docker format: OCI
# image configs have no HEALTHCHECK, and buildah drops it from them.
# The build stage compiles through ccache with its cache in /ccache; mounted
# there, the cache scripts/build.sh filled (scripts/compiler-cache.sh names
# it; same flags) turns the image's compile of the daemon into cache hits.
# Without ccache on the host (or BATON_CCACHE=0) the build compiles it all.
root=$source_dir
source "$source_dir/scripts/compiler-cache.sh"
cache_volume=()
if ((${#compiler_cache_args[@]} > 0)); then
  cache_volume=(--volume "$CCACHE_DIR:/ccache")
fi
"${bud[@]}" bud --isolation=chroot --format docker --layers=false \
  --build-arg "BUILD_IMAGE=$base_image" --build-arg "BASE_IMAGE=$base_image" \
  "${cache_volume[@]}" "${limits[@]}" -f "$source_dir/Dockerfile" -t "$image" "$source_dir" 2>&1 |
  stamp_lines >"$work/build.log" ||
  { tail -n 40 "$work/build.log" >&2; fail "image build failed"; }
grep ' STEP ' "$work/build.log" | cut -c1-110
phase "build image"

# Phase 3: what the image says about itself.
config=$("${pod[@]}" image inspect "$image" --format \
  '{{json .Config.Entrypoint}} {{json .Config.User}} {{json .Config.Healthcheck.Test}} {{json .Config.ExposedPorts}} {{json .Config.Volumes}}')
echo "image-test: config $config"
[[ $config == *'["baton","run"]'* ]] || fail "ENTRYPOINT is not [\"baton\",\"run\"]"
[[ $config == *'"baton:baton"'* ]] || fail "the image does not run as user baton"
[[ $config == *'["CMD","baton","health"]'* ]] || fail "no HEALTHCHECK running baton health"
[[ $config == *'"9464/tcp"'* ]] || fail "port 9464 is not exposed"
[[ $config == *'"/run/baton"'* ]] || fail "/run/baton is not a volume"
"${pod[@]}" run --rm --network=none --no-healthcheck "${limits[@]}" --entrypoint id "$image" -u | grep -qx 10001 ||
  fail "the image's user is not uid 10001"
# Every shared library the binaries need is in the runtime image (the parked
# keeper included: without it a standby falls back to `baton __keeper`).
for binary in /usr/bin/baton /usr/libexec/baton/baton-keeper; do
  if ! libraries=$("${pod[@]}" run --rm --network=none --no-healthcheck "${limits[@]}" \
    --entrypoint ldd "$image" "$binary"); then
    fail "$binary is missing from the image, or ldd failed on it"
  fi
  if grep 'not found' <<<"$libraries"; then
    fail "the runtime image lacks libraries of $binary"
  fi
done
size=$("${pod[@]}" image inspect "$image" --format '{{.Size}}')
base_size=$("${pod[@]}" image inspect "$base_image" --format '{{.Size}}')
awk -v size="$size" -v base="$base_size" 'BEGIN {
  printf "image-test: image size %.1f MB: %.1f MB over its base image (here debootstrap minbase, %.1f MB)\n",
         size / 1e6, (size - base) / 1e6, base / 1e6 }'
phase "inspect image"

# Phase 4: a redis-server on a free loopback port. Fault tests run beside
# this one and start servers of their own, so a port can be taken between
# choosing it and binding it: the server that answers must be ours (its
# process_id), and one that lost the race is retried on another port.
free_port() {
  if command -v python3 >/dev/null; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  else
    echo $((20000 + RANDOM % 20000))
  fi
}
for attempt in 1 2 3 4 5 6 7 8 9 10; do
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --logfile "$work/redis.log" &
  redis_pid=$!
  for _ in $(seq 50); do
    redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | grep -x "process_id:$redis_pid" >/dev/null && break 2
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.1
  done
  # Lost the port, or too slow to answer: this one may already be gone.
  kill "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=""
done
[[ -n "$redis_pid" ]] || fail "could not start redis-server on loopback"

# Phase 5: two containers on the host network (they reach only loopback
# here), each with its socket directory from the host, as an app would share it.
run_baton() {
  local name=$1 node=$2
  mkdir -p "$work/sock-$node"
  chown 10001:10001 "$work/sock-$node"
  chmod 0770 "$work/sock-$node"
  # No healthcheck timer (that needs systemd); `podman healthcheck run` below
  # still runs the image's check on demand.
  "${pod[@]}" run -d --name "$name" --network=host --health-interval=disable "${limits[@]}" \
    -v "$work/sock-$node:/run/baton" "$image" \
    --election image-test --node-id "$node" --redis-url "redis://127.0.0.1:$port" \
    --ttl 3s 2>&1 >/dev/null | without_systemd_noise
}
# status_of NAME: the exit status of `baton status` in the container.
status_of() {
  local code=0
  timeout 20 "${pod[@]}" exec "$1" baton status >"$work/status.out" 2>&1 || code=$?
  echo "$code"
}
# wait_for_status NAME CODE: poll, bounded in tries and time.
wait_for_status() {
  local name=$1 want=$2 deadline=$((SECONDS + 60)) code
  for _ in $(seq 120); do
    code=$(status_of "$name")
    [[ $code -eq $want ]] && return 0
    ((SECONDS < deadline)) || break
    sleep 0.5
  done
  cat "$work/status.out" >&2
  "${pod[@]}" logs --tail 20 "$name" >&2 || true
  fail "$name: baton status exited $code, expected $want"
}

run_baton "${containers[0]}" a
wait_for_status "${containers[0]}" 0
[[ -S "$work/sock-a/baton.sock" ]] || fail "no socket in the shared directory"
# An app container that mounts the socket directory read-only, as the compose
# and Kubernetes examples do, as uid 10001, with no network: it can still ask.
timeout 60 "${pod[@]}" run --rm --network=none --no-healthcheck "${limits[@]}" \
  -v "$work/sock-a:/run/baton:ro" --entrypoint baton "$image" status >"$work/status.out" 2>&1 ||
  { cat "$work/status.out" >&2; fail "an app container with a read-only socket mount cannot ask"; }
phase "first container leads"

run_baton "${containers[1]}" b
# `baton health` answers 0 on a standby too, once the daemon is up.
for _ in $(seq 60); do
  timeout 20 "${pod[@]}" exec "${containers[1]}" baton health >/dev/null 2>&1 && break
  sleep 0.5
done
wait_for_status "${containers[1]}" 3
phase "second container stands by"

# The image's HEALTHCHECK, as the engine runs it.
for ctr in "${containers[@]}"; do
  if ! "${pod[@]}" healthcheck run "$ctr" >"$work/health.out" 2>&1; then
    cat "$work/health.out" >&2
    fail "$ctr: podman healthcheck run failed"
  fi
done
phase "healthchecks"

# Stopping the leader's container (SIGTERM) releases the lease; b takes over.
"${pod[@]}" stop --time 20 "${containers[0]}" 2>&1 >/dev/null | without_systemd_noise
wait_for_status "${containers[1]}" 0
phase "takeover after stop"

# Phase 6: the Kubernetes manifests, played on the same image.
for ctr in "${containers[@]}"; do
  "${pod[@]}" rm --force --time 5 "$ctr" >/dev/null 2>&1 || true
done
status=0
wait "$standin_pid" || status=$?
standin_pid=""
((status == 0)) || { tail -n 30 "$work/standin.log" >&2; fail "the stand-in image did not build"; }
phase "stand-in image (awaited)"
bash "$source_dir/tests/deploy/kube-play-test.sh" "$source_dir" "$work/kube" "$image" \
  "$standin_image" -- "${pod[@]}"
phase "kubernetes manifests"
