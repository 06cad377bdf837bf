#!/usr/bin/env python3
"""Peer candidate: python3-kazoo's Election recipe (Debian python3-kazoo), Curator's design.

The way a Python service typically elects a leader on ZooKeeper: `Election(client,
path).run(func)` queues an ephemeral sequential node under the path and runs `func` once its
node is the lowest (the lock recipe's queue); the leader leads until `func` returns. The
session timeout is the ttl, so a crashed leader's node goes when its session expires. The
process is its own worker: while it leads it appends `start`, `tick` (every --tick-ms) and
`stop` lines to the event log in the harness's format, `<CLOCK_MONOTONIC ns> <name> <pid>
<event>`, each line one write() on an O_APPEND descriptor.

It stops working when its session is suspended (the connection lost: kazoo cannot tell
whether the session still lives) or lost. SIGTERM while leading: stop working (the `stop`
line), leave the election (the session closed, its node deleted), exit 0. SIGTERM while
standing by: exit 0.

Usage: kazoo_candidate.py --port P --key PATH --name N --log FILE [--ttl-ms 3000] [--tick-ms 5]
"""

import argparse
import os
import signal
import sys
import threading
import time

from kazoo.client import KazooClient, KazooState
from kazoo.recipe.election import Election


class event_writer:
    def __init__(self, path, name):
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._name = name
        self._pid = os.getpid()

    def write(self, event):
        line = f"{time.monotonic_ns()} {self._name} {self._pid} {event}\n".encode()
        os.write(self._fd, line)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--key", required=True, help="the election's znode path")
    parser.add_argument("--name", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--ttl-ms", type=int, default=3000)
    parser.add_argument("--tick-ms", type=int, default=5)
    args = parser.parse_args()

    log = event_writer(args.log, args.name)
    stop = threading.Event()  # SIGTERM
    lost = threading.Event()  # the session suspended or lost while leading

    client = KazooClient(hosts=f"{args.host}:{args.port}", timeout=args.ttl_ms / 1000.0)

    def on_state(new_state):
        if new_state in (KazooState.SUSPENDED, KazooState.LOST):
            lost.set()

    client.add_listener(on_state)
    client.start(timeout=15)
    election = Election(client, args.key, args.name)

    def on_sigterm(_signum, _frame):
        stop.set()
        # Standing by: leave the queue so that run() returns.
        threading.Thread(target=election.cancel, daemon=True).start()

    signal.signal(signal.SIGTERM, on_sigterm)

    def lead():
        lost.clear()
        log.write("start")
        tick_s = args.tick_ms / 1000.0
        while not stop.is_set() and not lost.is_set():
            stop.wait(tick_s)
            if stop.is_set() or lost.is_set():
                break
            log.write("tick")
        log.write("stop")

    while not stop.is_set():
        try:
            election.run(lead)
        except Exception:  # noqa: BLE001 -- a lost connection mid-queue: queue again
            time.sleep(0.1)
        if not stop.is_set():
            # Leadership lost: wait until the session is usable again, then queue again.
            while not stop.is_set() and client.state != KazooState.CONNECTED:
                time.sleep(0.05)
    client.stop()
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
