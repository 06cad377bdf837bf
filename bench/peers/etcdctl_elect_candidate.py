#!/usr/bin/env python3
"""Peer candidate: `etcdctl elect NAME PROPOSAL` (Debian etcd-client 3.4) with a worker behind it.

`etcdctl elect` campaigns (a key under NAME on its session's lease; the lowest create revision
leads, each candidate watching the one before it), prints the leader key and the proposal once
it leads, and stays until SIGINT/SIGTERM, when it resigns (deletes its key). It starts nothing
itself, so this wrapper does what a script around it does: it starts the worker (test_worker,
the same program baton runs) once etcdctl has printed both lines. Its session TTL is etcd's
client default, 60 s; etcd 3.4's `elect` has no flag to change it, so a crashed leader's key
outlives it by up to a minute.

The wrapper adds what etcdctl lacks only where the benchmark needs it to terminate: when
etcdctl exits while the worker runs (its session lost), the worker gets SIGTERM and a new
campaign starts. There is no stop deadline: a worker that ignores SIGTERM keeps working.

SIGTERM: the worker gets SIGTERM and is waited for, then etcdctl gets SIGTERM (it resigns), and
the wrapper exits 0. Everything runs in the wrapper's process group, so a SIGKILL to the group
is a crash of the whole candidate.

Usage: etcdctl_elect_candidate.py --endpoint URL --key NAME --name N --worker PATH --log FILE
       [--tick-ms 5] [--etcdctl /usr/bin/etcdctl]
"""

import argparse
import os
import select
import signal
import subprocess
import sys
import time

WORKER_STOP_BOUND_S = 15.0


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True, help="the member's client URL")
    parser.add_argument("--key", required=True, help="the election's name (a key prefix)")
    parser.add_argument("--name", required=True, help="the proposal, and the worker's name")
    parser.add_argument("--worker", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--tick-ms", type=int, default=5)
    parser.add_argument("--etcdctl", default="/usr/bin/etcdctl")
    return parser.parse_args()


def stop_and_wait(proc, bound_s):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=bound_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    args = parse_args()
    # SIGTERM lands as a byte on this pipe, so the select below wakes for it (no polling).
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    stopping = []
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stopping.append(True))

    env = dict(os.environ, ETCDCTL_API="3")
    worker = None
    while not stopping:
        elect = subprocess.Popen(
            [args.etcdctl, "--endpoints", args.endpoint, "elect", args.key, args.name],
            stdout=subprocess.PIPE, env=env)
        pending = b""
        while not stopping:
            ready, _, _ = select.select([elect.stdout, wake_read], [], [])
            if wake_read in ready:
                os.read(wake_read, 64)
                continue
            chunk = os.read(elect.stdout.fileno(), 4096)
            if not chunk:
                break  # etcdctl exited: its session expired or the call failed
            pending += chunk
            # Elected: etcdctl printed the leader key and the proposal.
            if worker is None and pending.count(b"\n") >= 2:
                worker = subprocess.Popen([args.worker, "--log", args.log, "--name", args.name,
                                           "--tick-ms", str(args.tick_ms)])
        stop_and_wait(worker, WORKER_STOP_BOUND_S)
        worker = None
        stop_and_wait(elect, WORKER_STOP_BOUND_S)
        elect.stdout.close()
        if not stopping:
            time.sleep(0.1)  # etcdctl gave up (the member unreachable): campaign again shortly
    return 0


if __name__ == "__main__":
    sys.exit(main())
