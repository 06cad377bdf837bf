#!/usr/bin/env bash
# Live demo of baton: three candidates, one worker at a time, failover after a
# crash and a graceful handover.
#
# It installs what it needs (the compiler, CMake, the libraries' headers and
# redis-server: scripts/install-deps.sh --demo), builds only the baton binary
# and its keeper into build-demo/ (the daemon alone, -O1, as unity batches: a
# few large compile jobs instead of a hundred small ones, about a minute on 2
# cores where build.sh's build of the same binary takes two and a half;
# scripts/build.sh and the tests use build/), starts a throwaway
# redis-server on a free loopback port (no persistence, everything in a temp
# dir), and three `baton run` candidates (demo-1..3, election "demo", lease
# ttl 3s), each supervising scripts/demo-worker.sh. Then it:
#   1. shows who leads and the leader's worker at work;
#   2. simulates a crash of the leader's machine (SIGKILL to its baton and its
#      worker) and times how long until another worker starts: about one ttl,
#      since the dead leader's lease must expire first;
#   3. sends SIGTERM to the new leader: its worker stops, the lease is released
#      at once, and the last candidate takes over without waiting for a ttl.
# On exit (also Ctrl-C) it stops only the processes it started and removes its
# temp dir. Every wait is bounded.
#
# Usage: scripts/demo.sh [--no-build] [--redis-only]
#   --no-build    use the existing build-demo/baton, else build/baton (skip
#                 install-deps and the build)
#   --redis-only  self-check: start and stop the throwaway Redis, nothing else
# Environment: BATON_BINARY=path runs that baton instead.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
demo_build="$root/build-demo"
baton=${BATON_BINARY:-"$demo_build/baton"} # override to demo another build
worker="$here/demo-worker.sh"
election=demo
lease_key="baton:{$election}:lease"
ttl=3s
wait_limit=30 # seconds, for every wait below

build=1
redis_only=0
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --redis-only) redis_only=1 build=0 ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "demo: unknown argument '$arg' (try --help)" >&2
      exit 2
      ;;
  esac
done

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
note() { printf '    %s\n' "$*"; }
die() {
  printf 'demo: %s\n' "$*" >&2
  exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ---- processes this script started, and cleanup ----------------------------

run_dir=
redis_pid=
baton_pids=() # index i-1 is demo-i

# Is `pid` alive and still running a command line containing `pattern`?
# (Guards every kill against a recycled pid.)
is_ours() {
  local pid=$1 pattern=$2 args
  [[ -n "$pid" ]] || return 1
  args=$(ps -o args= -p "$pid" 2>/dev/null) || return 1
  [[ "$args" == *"$pattern"* ]]
}

worker_pid_of() { # node -> pid of its current worker, if it is running
  local file="$run_dir/worker-$1.pid" pid
  [[ -f "$file" ]] || return 1
  pid=$(<"$file")
  is_ours "$pid" demo-worker.sh || return 1
  echo "$pid"
}

# The worker runs in a process group of its own (baton puts it there), which
# also holds its `sleep`: signal the group.
signal_worker_of() { # node signal
  local pid
  pid=$(worker_pid_of "$1") || return 0
  kill "-$2" -- "-$pid" 2>/dev/null || kill "-$2" "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$? i pid deadline
  trap - EXIT INT TERM
  set +e
  if [[ -n "$run_dir" ]]; then
    say "Cleaning up"
    for i in 1 2 3; do
      pid=${baton_pids[i - 1]:-}
      if is_ours "$pid" "$baton"; then kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"; fi
    done
    deadline=$(($(date +%s) + 10))
    for i in 1 2 3; do
      pid=${baton_pids[i - 1]:-}
      while is_ours "$pid" "$baton" && (($(date +%s) < deadline)); do sleep 0.1; done
      if is_ours "$pid" "$baton"; then kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"; fi
      [[ -n "$pid" ]] && wait "$pid" 2>/dev/null
      signal_worker_of "demo-$i" KILL # only if baton left it behind
    done
    if is_ours "$redis_pid" redis-server; then
      kill -TERM "$redis_pid"
      wait "$redis_pid" 2>/dev/null
    fi
    rm -rf -- "$run_dir"
    note "stopped everything this demo started; removed $run_dir"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- helpers ----------------------------------------------------------------

# wait_until SECONDS COMMAND...: poll COMMAND every 0.1 s until it succeeds.
wait_until() {
  local limit=$1 deadline
  shift
  deadline=$(($(now_ms) + limit * 1000))
  until "$@"; do
    (($(now_ms) < deadline)) || return 1
    sleep 0.1
  done
}

rcli() { redis-cli -h 127.0.0.1 -p "$redis_port" --raw "$@" 2>/dev/null; }

leader_node() { # node id from the lease value `<node_id>:<nonce>`; fails if none
  local value
  value=$(rcli GET "$lease_key") || return 1
  [[ -n "$value" ]] || return 1
  echo "${value%:*}"
}

have_python=0
if command -v python3 >/dev/null 2>&1; then have_python=1; fi

# One line describing node i as its socket reports it.
socket_status() {
  local sock="$run_dir/demo-$1.sock"
  if ((have_python == 0)); then
    echo "(python3 not installed: socket not queried)"
    return
  fi
  python3 - "$sock" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(2.0)
try:
    s.connect(sys.argv[1])
    s.sendall(b'{"cmd":"status"}\n')
    data = b""
    while b"\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    reply = json.loads(data.split(b"\n")[0])
    leader = reply.get("leader")
    print("state=%-9s leader=%s" % (reply.get("state"), leader if leader else "(none)"))
except (OSError, ValueError) as error:
    print("no answer (%s)" % (error.__class__.__name__,))
PY
}

show_candidates() {
  local i pid alive
  for i in 1 2 3; do
    pid=${baton_pids[i - 1]}
    alive="running"
    is_ours "$pid" "$baton" || alive="gone   "
    printf '    demo-%s  baton pid %-7s %s  %s\n' "$i" "$pid" "$alive" "$(socket_status "$i")"
  done
  note "lease in Redis: $(rcli GET "$lease_key" || true)  (fencing token $(rcli GET "baton:{$election}:token" || true))"
}

# What demo-worker.sh prints (baton passes its app's output through).
work_lines='demo-[0-9]+ working \(tick|demo-[0-9]+: worker '

starts_in() { # node -> number of worker starts in its log
  grep -c -- "$1: worker started (pid" "$run_dir/$1.log" 2>/dev/null || true
}

# Succeeds when some node other than $1 has more worker starts than recorded
# in the `before` array; sets `new_node`.
new_worker_started() {
  local i
  for i in 1 2 3; do
    [[ "demo-$i" == "$1" ]] && continue
    if (($(starts_in "demo-$i") > before[i - 1])); then
      new_node="demo-$i"
      return 0
    fi
  done
  return 1
}

leader_is() { [[ "$(leader_node)" == "$1" ]]; }
baton_gone() { ! is_ours "$1" "$baton"; }

show_work() { # node: its latest worker lines
  grep -E -- "$work_lines" "$run_dir/$1.log" | tail -n "${2:-3}" | sed 's/^/    | /'
}

# ---- build --------------------------------------------------------------------

# Prints the build's progress as one line per tenth, from CMake's "[ NN%]".
show_progress() {
  local line shown=-10 percent
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$build_log"
    [[ "$line" =~ ^\[\ *([0-9]+)%\] ]] || continue
    percent=${BASH_REMATCH[1]}
    if ((percent >= shown + 10)); then
      shown=$percent
      note "building: $percent % ($(seconds_since "$demo_started") s so far)"
    fi
  done
}
seconds_since() { echo $((($(now_ms) - $1) / 1000)); }

demo_started=$(now_ms)
if ((build)); then
  say "Installing what the demo needs: compiler, CMake, the libraries' headers, redis-server"
  "$here/install-deps.sh" --demo
  note "packages ready ($(seconds_since "$demo_started") s)"
  say "Building the baton binary only, into build-demo/ (the tests are built by scripts/test.sh)"
  build_log="${TMPDIR:-/tmp}/baton-demo-build.log"
  : >"$build_log"
  source "$here/compiler-cache.sh"
  if ! {
    cmake -S "$root" -B "$demo_build" -G "Unix Makefiles" "${compiler_cache_args[@]}" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DBATON_BUILD_TESTS=OFF -DCMAKE_UNITY_BUILD=ON \
      -DCMAKE_UNITY_BUILD_BATCH_SIZE=0 &&
      cmake --build "$demo_build" -j "${BATON_BUILD_JOBS:-2}" --target baton baton-keeper
  } 2>&1 | show_progress; then
    tail -n 40 "$build_log"
    die "build failed (full log: $build_log)"
  fi
  note "built $baton ($(seconds_since "$demo_started") s since the demo started; log $build_log)"
fi
if ((build == 0 && redis_only == 0)) && [[ -z "${BATON_BINARY:-}" && ! -x "$baton" ]]; then
  baton="$root/build/baton" # from scripts/build.sh
fi
if ((redis_only == 0)); then
  [[ -x "$baton" ]] || die "no $baton: run scripts/demo.sh without --no-build, or scripts/build.sh"
fi
command -v redis-server >/dev/null || die "redis-server not installed (scripts/install-deps.sh)"

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/baton-demo.XXXXXX")
export DEMO_RUN_DIR="$run_dir" # demo-worker.sh records its pid there

# ---- Redis ----------------------------------------------------------------------

free_port() {
  if ((have_python)); then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  else
    echo $((20000 + RANDOM % 20000))
  fi
}

# Ours answers, not another server that had the port first.
redis_answers() { rcli INFO server | tr -d '\r' | grep -x "process_id:$redis_pid" >/dev/null; }
redis_up_or_dead() { redis_answers || ! kill -0 "$redis_pid" 2>/dev/null; }

say "Starting a throwaway redis-server on loopback"
redis_port=
for attempt in 1 2 3 4 5; do
  port=$(free_port)
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
    --dir "$run_dir" --logfile "$run_dir/redis.log" --daemonize no &
  redis_pid=$!
  redis_port=$port
  if wait_until 10 redis_up_or_dead && redis_answers; then
    break
  fi
  # Lost a race for the port (or redis failed): try another.
  kill "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=
  ((attempt < 5)) || die "redis-server did not start; see $run_dir/redis.log"
done
note "redis-server pid $redis_pid on 127.0.0.1:$redis_port (no persistence, dir $run_dir)"

if ((redis_only)); then
  note "redis answers: $(rcli PING); lease key would be $lease_key"
  exit 0
fi

# ---- candidates -----------------------------------------------------------------

say "Starting three candidates for election '$election' (lease ttl $ttl)"
for i in 1 2 3; do
  # setsid: each candidate leads a process group of its own, like a daemon on
  # its own machine, so it can be killed as a unit.
  setsid "$baton" run \
    --election "$election" --node-id "demo-$i" \
    --redis-url "redis://127.0.0.1:$redis_port/0" --ttl "$ttl" \
    --socket "$run_dir/demo-$i.sock" --stop-timeout 5s --log-level info \
    -- "$worker" >"$run_dir/demo-$i.log" 2>&1 </dev/null &
  baton_pids+=("$!")
  note "demo-$i: baton pid $! (log $run_dir/demo-$i.log)"
done

if ! wait_until "$wait_limit" leader_node >/dev/null; then
  tail -n 20 "$run_dir"/demo-*.log
  die "no leader after ${wait_limit}s"
fi
leader=$(leader_node)
wait_until "$wait_limit" grep -q -- "$leader working (tick" "$run_dir/$leader.log" ||
  die "$leader leads but its worker printed nothing in ${wait_limit}s"

say "$leader won the election; its worker is working"
show_candidates
note "watching the leader's worker for 3 seconds:"
sleep 3 # a pause for the human watching, not a synchronisation
show_work "$leader" 3
for i in 1 2 3; do
  [[ "demo-$i" == "$leader" ]] && continue
  if grep -q -- "demo-$i working (tick" "$run_dir/demo-$i.log"; then
    note "WARNING: demo-$i's worker also worked while $leader led"
  fi
done

# ---- 1. crash of the leader ------------------------------------------------------

leader_index=${leader#demo-}
leader_pid=${baton_pids[leader_index - 1]}
before=()
for i in 1 2 3; do before+=("$(starts_in "demo-$i")"); done

say "Crash: SIGKILL to $leader's baton (pid $leader_pid, its process group) and its worker"
note "no release can happen: the others must wait for the lease to expire (ttl $ttl)"
started=$(now_ms)
# (stderr muted: bash would announce the kill of its background job)
{
  kill -KILL -- "-$leader_pid" || kill -KILL "$leader_pid"
  signal_worker_of "$leader" KILL
  wait "$leader_pid" || true
} 2>/dev/null

new_node=
if ! wait_until "$wait_limit" new_worker_started "$leader"; then
  tail -n 20 "$run_dir"/demo-*.log
  die "no new worker within ${wait_limit}s of the crash"
fi
elapsed=$(($(now_ms) - started))
printf '\n    \033[1m%s took over: its worker started %d.%03d s after the crash\033[0m\n' \
  "$new_node" $((elapsed / 1000)) $((elapsed % 1000))
wait_until 5 leader_is "$new_node" || true
show_candidates
show_work "$new_node" 2

# ---- 2. graceful handover ---------------------------------------------------------

second=$new_node
second_index=${second#demo-}
second_pid=${baton_pids[second_index - 1]}
before=()
for i in 1 2 3; do before+=("$(starts_in "demo-$i")"); done

say "Graceful handover: SIGTERM to $second's baton (pid $second_pid)"
note "it stops its worker, then releases the lease, so the standby need not wait for a ttl"
started=$(now_ms)
kill -TERM "$second_pid"
new_node=
if ! wait_until "$wait_limit" new_worker_started "$second"; then
  tail -n 20 "$run_dir"/demo-*.log
  die "no new worker within ${wait_limit}s of the SIGTERM"
fi
elapsed=$(($(now_ms) - started))
printf '\n    \033[1m%s took over: its worker started %d.%03d s after the SIGTERM\033[0m\n' \
  "$new_node" $((elapsed / 1000)) $((elapsed % 1000))
if wait_until "$wait_limit" baton_gone "$second_pid"; then
  second_status=0
  wait "$second_pid" 2>/dev/null || second_status=$?
  note "$second's baton exited with status $second_status"
else
  note "WARNING: $second's baton still running ${wait_limit}s after SIGTERM"
fi
note "$second's last lines:"
show_work "$second" 2
wait_until 5 leader_is "$new_node" || true
show_candidates
show_work "$new_node" 2

# Each worker's span runs from its start line to its last tick or stop line in
# work.log; any two spans of different workers that intersect are an overlap.
check_overlaps() {
  awk '
    { key = $2 " (pid " $3 ")"
      if (!(key in first)) { first[key] = $1; keys[n++] = key }
      last[key] = $1 }
    END {
      bad = 0
      for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) {
        a = keys[i]; b = keys[j]
        if (first[a] <= last[b] && first[b] <= last[a]) {
          printf "    OVERLAP: %s and %s worked at the same time\n", a, b; bad = 1
        }
      }
      printf "    %d worker runs checked\n", n
      exit bad
    }' "$run_dir/work.log"
}

say "Checking the workers' own timestamps for overlaps"
if check_overlaps; then
  say "Done: at every moment at most one worker ran"
else
  die "two workers ran at once"
fi
