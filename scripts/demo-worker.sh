#!/usr/bin/env bash
# The app of the live demo (scripts/demo.sh): stands for real work by printing
# "<node> working (tick N)" once a second, with the fencing token baton handed
# it in BATON_TOKEN. On SIGTERM it finishes the current tick and exits 0.
# When $DEMO_RUN_DIR is set it records its pid there (worker-<node>.pid) so the
# demo can find it, and appends "<wall-clock µs> <node> <pid> start|tick|stop"
# to $DEMO_RUN_DIR/work.log so the demo can check that no two workers overlapped.
# Bounded: it stops by itself after an hour.
set -euo pipefail

node=${BATON_NODE_ID:-${1:-demo}}
token=${BATON_TOKEN:-unset}

record() { # event
  if [[ -n "${DEMO_RUN_DIR:-}" && -d "$DEMO_RUN_DIR" ]]; then
    # Microseconds: exact in awk's doubles, unlike nanoseconds since 1970.
    echo "$(($(date +%s%N) / 1000)) $node $$ $1" >>"$DEMO_RUN_DIR/work.log"
  fi
}

if [[ -n "${DEMO_RUN_DIR:-}" && -d "$DEMO_RUN_DIR" ]]; then
  echo "$$" >"$DEMO_RUN_DIR/worker-$node.pid"
fi

stopping=0
sleeper=
trap 'stopping=1' TERM INT

record start
echo "$node: worker started (pid $$, token $token)"
for ((tick = 1; tick <= 3600 && stopping == 0; tick++)); do
  record tick
  echo "$node working (tick $tick, token $token)"
  # Sleeping in the background and waiting for it lets the TERM trap run at
  # once instead of after the sleep.
  sleep 1 &
  sleeper=$!
  wait "$sleeper" || true
done
if [[ -n "$sleeper" ]]; then kill "$sleeper" 2>/dev/null || true; fi
if ((stopping)); then
  echo "$node: worker got SIGTERM, stopping cleanly"
fi
record stop
exit 0
