#!/usr/bin/env python3
"""An app that follows baton's socket instead of being supervised (bench kind baton-socket).

It starts `baton run` with no command and a socket, as its own child and in
its own process group (so a "crash" of the candidate kills both), subscribes
to the socket and does the "work" itself: on the `start` event it writes the
event log's `start` line and ticks every --tick-ms; on `stop` it writes `stop`
and acknowledges with {"cmd":"stopped"} (baton runs with --require-ack, so the
lease is released only after that). SIGTERM goes on to baton, which stops the
app through the socket, releases, and exits; then this script exits.

Event log lines are those of tests/worker/test_worker.cpp:
`<CLOCK_MONOTONIC ns> <name> <pid> <event>`, one os.write each.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baton", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--election", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--ttl-ms", type=int, required=True)
    parser.add_argument("--tick-ms", type=int, default=5)
    parser.add_argument("--log-level", default="warn")
    return parser.parse_args()


class event_writer:
    def __init__(self, path: str, name: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self.prefix = f" {name} {os.getpid()} "

    def write(self, event: str) -> None:
        os.write(self.fd, f"{time.monotonic_ns()}{self.prefix}{event}\n".encode())


def connect(path: str, baton: subprocess.Popen, limit_s: float = 15.0) -> socket.socket:
    deadline = time.monotonic() + limit_s
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if baton.poll() is not None:
                sys.exit(f"socket_app: baton exited with {baton.returncode} before its socket opened")
            if time.monotonic() >= deadline:
                sys.exit(f"socket_app: no socket at {path} after {limit_s:.0f} s")
            time.sleep(0.01)


def main() -> int:
    args = parse_args()
    baton = subprocess.Popen(
        [args.baton, "run", "--election", args.election, "--node-id", args.name,
         "--redis-url", f"redis://127.0.0.1:{args.port}", "--ttl", f"{args.ttl_ms}ms",
         "--log-level", args.log_level, "--socket", args.socket, "--require-ack"],
        stdin=subprocess.DEVNULL)
    signal.signal(signal.SIGTERM, lambda *_: baton.send_signal(signal.SIGTERM))
    log = event_writer(args.log, args.name)
    sock = connect(args.socket, baton)
    # Subscribed first, then asked: a term that began before the subscription
    # shows in the status reply; any later one arrives as an event.
    sock.sendall(b'{"cmd":"subscribe"}\n{"cmd":"status"}\n')
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    buffer = b""
    working = False
    tick_s = args.tick_ms / 1000.0
    next_tick = 0.0
    # Bounded: the benchmark stops every candidate long before this.
    give_up = time.monotonic() + 3600
    while time.monotonic() < give_up:
        timeout = max(0.0, next_tick - time.monotonic()) if working else 0.5
        for _key, _mask in selector.select(timeout):
            chunk = sock.recv(65536)
            if not chunk:
                baton.wait(timeout=30)
                return 0
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                started = (message.get("type") == "event" and message.get("event") == "start") or \
                    (message.get("type") == "status" and message.get("is_leader") is True)
                if started and not working:
                    log.write("start")
                    working = True
                    next_tick = time.monotonic() + tick_s
                elif message.get("event") == "stop" and working:
                    log.write("stop")
                    working = False
                    ack = {"cmd": "stopped", "token": message.get("token")}
                    sock.sendall(json.dumps(ack).encode() + b"\n")
        if working and time.monotonic() >= next_tick:
            log.write("tick")
            next_tick += tick_s
        if baton.poll() is not None and not working:
            return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
