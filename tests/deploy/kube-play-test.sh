#!/usr/bin/env bash
# docker/kubernetes/ run for real with `podman kube play`: the Secret, the
# ConfigMaps (baton.yaml and the stand-in app, mounted as volumes), Redis and
# the baton Deployment's pods, each an app container and a baton sidecar that
# share the socket through an emptyDir, under the manifests' securityContext.
# The test then does what the kubelet and a rollout would:
#
#   - probes every pod as the manifests say (liveness and readiness, named
#     ports resolved): every pod is live and Ready, leader and standbys alike;
#   - finds exactly one pod whose /leader answers 200 (the contract a proxy's
#     health check relies on for leader-only routing), the one `baton status`
#     names in every pod, whose app works while the others' stand by;
#   - scrapes /metrics of every pod: one leader and one term in all of them,
#     and `promtool check metrics` finds nothing to say about the exposition;
#   - takes one step of the Deployment's RollingUpdate (maxSurge 1,
#     maxUnavailable 0): a new pod comes up and is Ready as a standby, then
#     the leader's pod is stopped (SIGTERM, as on deletion) and another pod
#     leads within a bound, every remaining pod still Ready.
#
#   tests/deploy/kube-play-test.sh SOURCE_DIR WORK_DIR BATON_IMAGE STANDIN_IMAGE -- PODMAN...
#
# PODMAN... is the podman command with its private store (image-test.sh's);
# BATON_IMAGE was built from the Dockerfile, STANDIN_IMAGE is Debian with
# redis-server and python3, tagged as the manifests' Redis and Python images
# the way `kind load docker-image` would, so no registry is used. What podman
# 4.3 does differently from Kubernetes, and how the test stands in for it, is
# listed in kube_podman.py (one Deployment per replica, no host ports, the
# probes run by this script, hostAliases for Service names, the Secret created
# with `podman secret create`). Services, the kubelet's restarts and a real
# rollout controller are not run.
set -euo pipefail

source_dir=${1:?usage: kube-play-test.sh SOURCE_DIR WORK_DIR BATON_IMAGE STANDIN_IMAGE -- PODMAN...}
work=${2:?} baton_image=${3:?} standin_image=${4:?}
shift 4
[[ "${1:-}" == "--" ]] && shift
manifests=$source_dir/docker/kubernetes
tool=(python3 "$source_dir/tests/deploy/kube_podman.py")
mkdir -p "$work"
# Podman's pod networks live in a config directory of the test's own, not in
# the host's /etc/cni/net.d.
pod=("$@" --network-config-dir "$work/cni")
# The rlimits podman would give a container may exceed what a nested or
# restricted host allows (as image-test.sh's --ulimit); kube play takes them
# from a containers.conf only.
cat >"$work/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
EOF
export CONTAINERS_CONF=$work/containers.conf
network=baton-kube-$$
deployment=baton-demo
secret_name=""
created_pods=()

phase_started=$EPOCHREALTIME
phase() {
  local now=$EPOCHREALTIME
  awk -v name="$1" -v from="$phase_started" -v to="$now" \
    'BEGIN { printf "kube-play-test: phase %-26s %6.1fs\n", name, to - from }'
  phase_started=$now
}
fail() {
  echo "kube-play-test: FAIL: $*" >&2
  for p in "${created_pods[@]}"; do
    for c in $("${pod[@]}" pod inspect "$p" --format '{{range .Containers}}{{.Name}} {{end}}' 2>/dev/null); do
      [[ $c == *-infra ]] && continue
      echo "---- $c" >&2
      "${pod[@]}" logs --tail 15 "$c" >&2 2>&1 || true
    done
  done
  exit 1
}
set -E
trap 'echo "kube-play-test: FAIL: line $LINENO: \"$BASH_COMMAND\" exited $?" >&2' ERR
cleanup() {
  local status=$?
  set +e
  trap - ERR
  # Stopped first: a forced removal of running pods takes seconds each.
  "${pod[@]}" pod stop --all --time 5 >/dev/null 2>&1
  "${pod[@]}" pod rm --all --force >/dev/null 2>&1
  "${pod[@]}" volume prune --force >/dev/null 2>&1
  [[ -n "$secret_name" ]] && "${pod[@]}" secret rm "$secret_name" >/dev/null 2>&1
  "${pod[@]}" network rm --force "$network" >/dev/null 2>&1
  exit $status
}
trap cleanup EXIT

# pod_ip POD: its address on the test's network.
pod_ip() {
  local infra
  infra=$("${pod[@]}" pod inspect "$1" --format '{{.InfraContainerID}}')
  "${pod[@]}" inspect "$infra" --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}'
}
# http_code URL: the status of a GET, 0 when nothing answered (2 s at most).
http_code() {
  python3 - "$1" <<'EOF'
import sys, urllib.error, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=2).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print(0)
EOF
}
http_body() {
  python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())' "$1"
}
# play YAML: podman kube play, and the pods it made.
play() {
  local out
  out=$("${pod[@]}" kube play --network "$network" "$1" 2>&1) || { echo "$out" >&2; fail "podman kube play failed"; }
}

# --- images, Secret, network -------------------------------------------------
for image in $("${tool[@]}" images "$manifests"); do
  case $image in
    baton:*) "${pod[@]}" tag "$baton_image" "localhost/$image" ;;
    *) "${pod[@]}" tag "$standin_image" "$image" ;;
  esac
done
read -r live_path live_port < <("${tool[@]}" probe "$manifests" "$deployment" baton liveness)
read -r ready_path ready_port < <("${tool[@]}" probe "$manifests" "$deployment" baton readiness)
[[ $ready_port == "$live_port" ]] || fail "the probes use two ports ($live_port, $ready_port)"
[[ $ready_path == /readyz ]] || fail "readiness is $ready_path, not /readyz: rollouts would wait for standbys"
secret_name=baton-redis
"${tool[@]}" secret "$manifests" "$secret_name" | "${pod[@]}" secret create "$secret_name" - >/dev/null
# A subnet of its own, drawn at random, so that two such tests on one host
# (their networks are private to each) do not both take podman's first free
# one before either has brought its bridge up; podman refuses one in use.
created=""
for _ in 1 2 3 4 5; do
  if "${pod[@]}" network create --subnet "10.89.$((100 + RANDOM % 150)).0/24" "$network" \
    >"$work/network.log" 2>&1; then
    created=1
    break
  fi
done
[[ -n "$created" ]] || { cat "$work/network.log" >&2; fail "podman network create failed"; }
phase "images, secret, network"

# --- Redis -------------------------------------------------------------------
redis_deployment=$("${tool[@]}" backend "$manifests" redis)
"${tool[@]}" play "$manifests" "$redis_deployment" >"$work/redis-play.yaml"
play "$work/redis-play.yaml"
created_pods+=("$redis_deployment-0-pod-0")
redis_ip=$(pod_ip "$redis_deployment-0-pod-0")
[[ -n "$redis_ip" ]] || fail "the Redis pod has no address"
# The password reached Redis on its standard input, not in its argv.
password=$("${tool[@]}" secret "$manifests" "$secret_name" |
  python3 -c 'import base64, json, sys; print(base64.b64decode(json.load(sys.stdin)["password"]).decode())')
answered=""
for _ in $(seq 100); do
  if [[ $(REDISCLI_AUTH=$password redis-cli -h "$redis_ip" ping 2>/dev/null) == PONG ]]; then answered=1; break; fi
  sleep 0.1
done
[[ -n "$answered" ]] || fail "Redis at $redis_ip does not answer PING with the Secret's password"
cmdline=$("${pod[@]}" exec "$redis_deployment-0-pod-0-redis" cat /proc/1/cmdline | tr '\0' ' ')
[[ $cmdline == redis-server* ]] || fail "the Redis container's first process is not redis-server: $cmdline"
[[ $cmdline != *"$password"* ]] || fail "the Redis password is in redis-server's argv"
phase "redis pod answers"

# --- the baton Deployment ----------------------------------------------------
"${tool[@]}" play "$manifests" "$deployment" --alias "redis=$redis_ip" >"$work/baton-play.yaml"
replicas=$(grep -c '^kind: Deployment' "$work/baton-play.yaml")
((replicas >= 2)) || fail "the Deployment has $replicas replicas, fewer than an election needs"
play "$work/baton-play.yaml"
pods=()
for ((i = 0; i < replicas; i++)); do pods+=("$deployment-$i-pod-0"); done
created_pods+=("${pods[@]}")
declare -A ip
for p in "${pods[@]}"; do ip[$p]=$(pod_ip "$p"); done

# probe_all: every pod live and Ready, and exactly one leader, into $leader.
leader=""
probe_all() {
  local p leaders=()
  for p in "${pods[@]}"; do
    [[ $(http_code "http://${ip[$p]}:$live_port$live_path") == 200 ]] || return 1
    [[ $(http_code "http://${ip[$p]}:$ready_port$ready_path") == 200 ]] || return 1
    [[ $(http_code "http://${ip[$p]}:$live_port/leader") == 200 ]] && leaders+=("$p")
  done
  ((${#leaders[@]} == 1)) || return 1
  leader=${leaders[0]}
}
# wait_for_election SECONDS: bounded in tries and time.
wait_for_election() {
  local deadline=$((SECONDS + $1))
  for _ in $(seq 400); do
    probe_all && return 0
    ((SECONDS < deadline)) || break
    sleep 0.25
  done
  for p in "${pods[@]}"; do
    echo "$p: live $(http_code "http://${ip[$p]}:$live_port$live_path") ready $(http_code "http://${ip[$p]}:$ready_port$ready_path") leader $(http_code "http://${ip[$p]}:$live_port/leader")" >&2
  done
  fail "not every pod live and Ready with exactly one leader within $1 s"
}
# The election's first start on a new Redis holds every acquisition back for
# one ttl (10 s in the ConfigMap).
wait_for_election 60
phase "pods ready, one leader"

# Every sidecar names the same leader; the leader's status exits 0, the
# others' 3; the apps follow their sidecar through the shared socket.
for p in "${pods[@]}"; do
  code=0
  out=$("${pod[@]}" exec "$p-baton" baton status 2>&1) || code=$?
  if [[ $p == "$leader" ]]; then want=0; else want=3; fi
  [[ $code == "$want" ]] || fail "$p: baton status exited $code, expected $want: $out"
  grep -q "leader *$leader" <<<"$out" || fail "$p: baton status does not name $leader: $out"
done
# wait_for_app POD TEXT: its app container printed TEXT (it asks every second).
wait_for_app() {
  local lines
  for _ in $(seq 60); do
    lines=$("${pod[@]}" logs --tail 3 "$1-app" 2>&1)
    [[ $lines == *"$2"* ]] && return 0
    sleep 0.25
  done
  fail "$1: the app did not print '$2'"
}
for p in "${pods[@]}"; do
  if [[ $p == "$leader" ]]; then wait_for_app "$p" "working: this pod leads"; else wait_for_app "$p" "standing by"; fi
done
phase "status and apps"

# What Prometheus would scrape from each pod.
token=""
for p in "${pods[@]}"; do
  http_body "http://${ip[$p]}:$live_port/metrics" >"$work/metrics-$p.txt"
  grep -qx "baton_leader_info{node_id=\"$leader\"} 1" "$work/metrics-$p.txt" ||
    fail "$p: /metrics does not name $leader as the leader"
  t=$(awk '$1 == "baton_term_token" { print $2 }' "$work/metrics-$p.txt")
  [[ -z "$token" || "$t" == "$token" ]] || fail "$p: baton_term_token $t, another pod says $token"
  token=$t
  grep -qx 'baton_ready 1' "$work/metrics-$p.txt" || fail "$p: baton_ready is not 1"
  if command -v promtool >/dev/null; then
    promtool check metrics <"$work/metrics-$p.txt" >"$work/lint.txt" 2>&1 ||
      { cat "$work/lint.txt" >&2; fail "$p: promtool check metrics"; }
  fi
done
phase "metrics"

# --- one step of a rolling update --------------------------------------------
"${tool[@]}" play "$manifests" "$deployment" --first "$replicas" --replicas 1 \
  --alias "redis=$redis_ip" >"$work/surge-play.yaml"
play "$work/surge-play.yaml"
surge=$deployment-$replicas-pod-0
created_pods+=("$surge")
ip[$surge]=$(pod_ip "$surge")
pods+=("$surge")
wait_for_election 30
old_leader=$leader
phase "surge pod ready"

# The kubelet stops a deleted pod's containers with SIGTERM, SIGKILL after
# terminationGracePeriodSeconds (30).
stop_started=$SECONDS
"${pod[@]}" pod stop --time 30 "$old_leader" >/dev/null
remaining=()
for p in "${pods[@]}"; do [[ $p == "$old_leader" ]] || remaining+=("$p"); done
pods=("${remaining[@]}")
wait_for_election 20
((SECONDS - stop_started < 30)) || fail "stopping the leader's pod waited out its grace period"
[[ $leader != "$old_leader" ]] || fail "the stopped pod still leads"
# It released the lease (not left it to expire) and exited.
old_log=$("${pod[@]}" logs "$old_leader-baton" 2>&1)
[[ $old_log == *"state releasing -> stopped"* ]] || fail "$old_leader did not release the lease on SIGTERM"
wait_for_app "$leader" "working: this pod leads"
phase "leader pod stopped, $leader leads"
echo "kube-play-test: PASS: $((${#pods[@]})) pods Ready, $leader leads after $old_leader stopped"
