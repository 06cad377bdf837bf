#!/usr/bin/env python3
"""Peer candidate: redis-py's Lock (Debian python3-redis) with a renewal thread.

The way a Python service typically elects a leader with redis-py: a blocking
`Lock.acquire()` (which polls `SET key token NX PX ttl` every `sleep` seconds,
0.1 s by default), and once it holds the lock, a thread that calls
`Lock.reacquire()` (reset the TTL) every ttl/3. The process is its own
worker: while it leads it appends `start`, `tick` (every --tick-ms) and `stop`
lines to the event log in the harness's format,
`<CLOCK_MONOTONIC ns> <name> <pid> <event>` (time.monotonic_ns() is
CLOCK_MONOTONIC on Linux), each line one write() on an O_APPEND descriptor.

It stops working when a renewal finds the lock gone, or when no renewal has
succeeded for 2/3 of the ttl. SIGTERM while leading: stop working (the `stop`
line), release the lock, exit 0. SIGTERM while standing by: exit 0.

Usage: redispy_candidate.py --port P --key K --name N --log FILE
                            [--ttl-ms 3000] [--tick-ms 5] [--sleep 0.1]
"""

import argparse
import os
import select
import signal
import sys
import threading
import time

import redis
from redis.exceptions import LockError, RedisError


COMPARE_AND_DELETE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)


class terminated(Exception):
    """SIGTERM arrived while waiting for the lock."""


class event_writer:
    def __init__(self, path, name):
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._name = name
        self._pid = os.getpid()

    def write(self, event):
        line = f"{time.monotonic_ns()} {self._name} {self._pid} {event}\n".encode()
        os.write(self._fd, line)


class state:
    leading = False
    term = False


def on_sigterm(_signum, _frame):
    state.term = True
    if not state.leading:
        # Standing by (inside the blocking acquire): leave it at once.
        raise terminated()


def renew_loop(lock, interval_s, deadline_s, stop, lost):
    last_ok = time.monotonic()
    while not stop.wait(interval_s):
        try:
            lock.reacquire()
            last_ok = time.monotonic()
        except LockError:
            lost.set()  # the key is gone or holds another token
            return
        except RedisError:
            if time.monotonic() - last_ok >= deadline_s:
                lost.set()
                return


def lead(lock, log, args, wake_fd):
    """Work until SIGTERM or until the lock is lost; returns True on SIGTERM."""
    ttl_s = args.ttl_ms / 1000.0
    stop, lost = threading.Event(), threading.Event()
    renewer = threading.Thread(target=renew_loop, args=(lock, ttl_s / 3, 2 * ttl_s / 3, stop, lost),
                               daemon=True)
    log.write("start")
    renewer.start()
    tick_s = args.tick_ms / 1000.0
    next_tick = time.monotonic() + tick_s
    while not state.term and not lost.is_set():
        left = next_tick - time.monotonic()
        if left > 0:
            # SIGTERM wakes this select through the wakeup fd.
            ready, _, _ = select.select([wake_fd], [], [], left)
            if ready:
                os.read(wake_fd, 512)
            continue
        log.write("tick")
        next_tick += tick_s
        if next_tick <= time.monotonic():
            next_tick = time.monotonic() + tick_s
    log.write("stop")
    stop.set()
    renewer.join(timeout=5)
    if not lost.is_set():
        try:
            lock.release()
        except (LockError, RedisError):
            pass
    return state.term


def give_back(args, token):
    """SIGTERM may have landed just after a successful SET: release on a fresh
    connection (the interrupted one may hold a half-read reply)."""
    if token is None:
        return
    try:
        fresh = redis.Redis(host=args.host, port=args.port, socket_timeout=1.0)
        fresh.eval(COMPARE_AND_DELETE, 1, args.key, token)
    except RedisError:
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--ttl-ms", type=int, default=3000)
    parser.add_argument("--tick-ms", type=int, default=5)
    parser.add_argument("--sleep", type=float, default=0.1, help="acquire polling period, s")
    args = parser.parse_args()

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGTERM, on_sigterm)

    log = event_writer(args.log, args.name)
    client = redis.Redis(host=args.host, port=args.port, socket_timeout=1.0,
                         socket_connect_timeout=1.0)
    # thread_local=False: the renewal thread must see the token the main thread acquired.
    lock = client.lock(args.key, timeout=args.ttl_ms / 1000.0, sleep=args.sleep,
                       thread_local=False)
    try:
        while not state.term:
            try:
                acquired = lock.acquire(blocking=True)
            except RedisError:
                time.sleep(args.sleep)
                continue
            if not acquired:
                continue
            state.leading = True
            if state.term:
                lock.release()
                return 0
            if lead(lock, log, args, wake_r):
                return 0
            state.leading = False
    except terminated:
        give_back(args, lock.local.token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
