#!/usr/bin/env python3
"""follow_lease.py: an app that follows baton over its Unix socket and works
only while it holds a valid lease deadline, so that even a frozen daemon
cannot make it overrun the lease.

It connects to baton's socket, subscribes, and:

- on `start` (or, right after connecting, a `status` that says this node
  leads) begins working and records the lease deadline
  `valid_until_mono_ns` (CLOCK_MONOTONIC nanoseconds, the clock that
  time.monotonic_ns() reads on Linux, shared by every process on the host);
- on `renewed` moves that deadline later;
- stops BY ITSELF the moment time.monotonic_ns() reaches the deadline without
  a newer renewal: a daemon that is frozen (SIGSTOP, a stuck host) sends no
  renewals, and the app stops before its lease can expire in Redis;
- on `stop` (or `kill`) stops, at the latest by the event's
  `kill_at_mono_ns`, and then acknowledges with {"cmd":"stopped","token":N},
  which the daemon waits for when run with --require-ack;
- after a self-stop, a `renewed` event with a deadline still ahead (the
  daemon was only slow) resumes the work.

Its "work" is a line appended to --log every --tick-ms, in the format of
tests/worker/test_worker.cpp, so the tests' overlap checker reads it:
`<CLOCK_MONOTONIC ns> <name> <pid> <event>[ details]` with events start,
env, tick and stop (details say why). Each line is one write() on an
O_APPEND descriptor, so concurrent writers never interleave.

Python 3 standard library only. Usage:
  follow_lease.py --socket /run/baton/baton.sock [--log FILE] [--name NAME]
                  [--tick-ms 50] [--margin-ms 0] [--stop-delay-ms 0]
Exit: 0 on SIGTERM/SIGINT, 2 on bad arguments.
"""

import argparse
import json
import os
import select
import signal
import socket
import sys
import time

RECONNECT_DELAY_NS = 200_000_000
MAX_LINE = 1 << 20


class event_log:
    """Appends `<mono ns> <name> <pid> <event>` lines (stdout when no file)."""

    def __init__(self, path, name):
        self.name = name
        self.pid = os.getpid()
        self.fd = (os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
                   if path else None)

    def write(self, event, at=None):
        """`at`: the time to record (default now), e.g. when a deadline was checked."""
        stamp = time.monotonic_ns() if at is None else at
        line = f"{stamp} {self.name} {self.pid} {event}\n".encode()
        if self.fd is None:
            sys.stdout.write(line.decode())
            sys.stdout.flush()
        else:
            os.write(self.fd, line)


class follower:
    """The work loop's state: whether we work, for which term, until when."""

    def __init__(self, args, log):
        self.args = args
        self.log = log
        self.working = False
        self.token = None         # fencing token of the term we work (or last worked) for
        self.deadline = 0         # ns: the lease's validity; stop by then unless renewed
        self.wind_down_end = None  # ns: a requested stop is carried out then
        self.ack_token = None     # a stop to acknowledge once we are stopped
        self.stopped_term = None  # the token of the last stop the daemon asked for
        self.next_tick = 0
        self.conn = None
        self.buffer = b""
        self.outbox = b""

    # --- the work ----------------------------------------------------------

    def margin(self):
        return self.args.margin_ms * 1_000_000

    def begin(self, token, valid_until, how):
        now = time.monotonic_ns()
        if valid_until - self.margin() <= now:
            note(f"not starting for token {token}: its deadline has already passed")
            return
        self.working = True
        self.token = token
        self.deadline = valid_until
        self.wind_down_end = None
        self.log.write("start" if how == "start" else f"start {how}")
        self.log.write(f"env token={token} node={self.args.name}")
        self.next_tick = now + self.args.tick_ms * 1_000_000

    def end(self, why, at=None):
        """Stop working (if we were), then acknowledge a stop the daemon asked for.

        `at`: when the work ended, if earlier than now (a self-stop ends the
        work at the deadline itself, however late this process gets to run)."""
        if self.working:
            self.working = False
            self.wind_down_end = None
            self.log.write(f"stop {why} token={self.token} valid_until={self.deadline}", at)
        if self.ack_token is not None:
            self.send({"cmd": "stopped", "token": self.ack_token})
            self.ack_token = None

    def step(self):
        """Does what is due; returns when to look again (ns), None = only on input."""
        now = time.monotonic_ns()
        if self.working and self.wind_down_end is not None and now >= self.wind_down_end:
            self.end("requested")
        if self.working and now >= self.deadline - self.margin():
            # No renewal came in time: the daemon may be frozen or cut off,
            # and the lease may be someone else's any moment now. No work was
            # done since the deadline, so that is when the work ended.
            self.end("deadline", self.deadline - self.margin())
        if not self.working:
            return None
        if now >= self.next_tick:
            # A unit of work starts only while the lease is certainly valid:
            # check the clock right before it, and record that moment.
            started = time.monotonic_ns()
            if started >= self.deadline - self.margin():
                self.end("deadline", self.deadline - self.margin())
                return None
            self.log.write("tick", started)
            self.next_tick += self.args.tick_ms * 1_000_000
            if self.next_tick <= now:
                self.next_tick = now + self.args.tick_ms * 1_000_000
        wake = min(self.next_tick, self.deadline - self.margin())
        if self.wind_down_end is not None:
            wake = min(wake, self.wind_down_end)
        return wake

    def on_event(self, e):
        name = e.get("event")
        token = e.get("token")
        if name == "start":
            if self.working and token != self.token:
                self.end("new-term")
            if not self.working:
                self.begin(token, int(e.get("valid_until_mono_ns", 0)), "start")
        elif name == "renewed":
            valid_until = int(e.get("valid_until_mono_ns", 0))
            if self.working and token == self.token:
                self.deadline = max(self.deadline, valid_until)
            elif not self.working and token == self.token and self.stopped_term != token:
                # We stopped by ourselves, but the daemon was only late: the
                # lease is ours until the new deadline.
                self.begin(token, valid_until, "resumed")
        elif name == "stop":
            self.stopped_term = token
            self.ack_token = token
            if not self.working:
                self.end("requested")
                return
            # Wind down for at most --stop-delay-ms, and never past kill_at.
            kill_at = int(e.get("kill_at_mono_ns", 0)) - self.margin()
            self.wind_down_end = min(time.monotonic_ns() + self.args.stop_delay_ms * 1_000_000,
                                     kill_at)
            self.deadline = min(self.deadline, kill_at + self.margin())
        elif name == "kill":
            self.stopped_term = token
            self.end("killed")

    # --- the socket --------------------------------------------------------

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.args.socket)
        except OSError as e:
            s.close()
            return e
        s.setblocking(False)
        self.conn = s
        self.buffer = b""
        self.outbox = b""
        self.send({"cmd": "subscribe"})
        # Events published before we subscribed are lost to us: ask whether
        # this node leads right now.
        self.send({"cmd": "status", "id": "initial-status"})
        return None

    def disconnect(self, why):
        if self.working:
            note(f"socket {self.args.socket}: {why}; working on until the lease deadline at most")
        else:
            note(f"socket {self.args.socket}: {why}")
        if self.conn is not None:
            self.conn.close()
        self.conn = None
        self.outbox = b""

    def send(self, request):
        if self.conn is None:
            return
        self.outbox += (json.dumps(request) + "\n").encode()
        self.flush()

    def flush(self):
        while self.conn is not None and self.outbox:
            try:
                n = self.conn.send(self.outbox)
            except BlockingIOError:
                return
            except OSError as e:
                self.disconnect(f"write failed: {e}")
                return
            self.outbox = self.outbox[n:]

    def read(self):
        try:
            chunk = self.conn.recv(65536)
        except BlockingIOError:
            return
        except OSError as e:
            self.disconnect(f"read failed: {e}")
            return
        if not chunk:
            self.disconnect("closed by the daemon")
            return
        self.buffer += chunk
        while self.conn is not None and b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self.handle(line)
        if len(self.buffer) > MAX_LINE:
            self.disconnect("line too long")

    def handle(self, line):
        try:
            message = json.loads(line)
        except ValueError:
            note(f"ignoring a line that is not JSON: {line[:80]!r}")
            return
        if not isinstance(message, dict):
            return
        kind = message.get("type")
        if kind == "status" and message.get("id") == "initial-status":
            if message.get("is_leader") and not self.working:
                self.begin(message.get("token"), int(message.get("valid_until_mono_ns", 0)),
                           "status")
        elif kind == "error":
            note(f"daemon says: {message.get('error')}")
        elif kind == "event":
            self.on_event(message)


def note(text):
    sys.stderr.write(f"follow_lease: {text}\n")
    sys.stderr.flush()


def parse_args(argv):
    p = argparse.ArgumentParser(description="Work only while baton's lease is valid.")
    p.add_argument("--socket", required=True, help="baton's Unix socket (socket.path)")
    p.add_argument("--log", help="append start/tick/stop lines here (default: stdout)")
    p.add_argument("--name", default=f"follow-{os.getpid()}", help="name in the log lines")
    p.add_argument("--tick-ms", type=int, default=50, help="one unit of work every N ms")
    p.add_argument("--margin-ms", type=int, default=0,
                   help="stop this long before the deadline (clock-rate safety margin)")
    p.add_argument("--stop-delay-ms", type=int, default=0,
                   help="on a stop event keep working this long first (a slow wind-down), "
                        "never past kill_at")
    args = p.parse_args(argv)
    if args.tick_ms < 1 or args.margin_ms < 0 or args.stop_delay_ms < 0:
        p.error("--tick-ms must be >= 1, --margin-ms and --stop-delay-ms >= 0")
    if any(c.isspace() for c in args.name) or not args.name:
        p.error("--name must be one word")
    return args


def main(argv):
    args = parse_args(argv)
    log = event_log(args.log, args.name)
    f = follower(args, log)

    # Signals are turned into a flag checked between waits.
    stopping = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.append(True))

    next_connect = 0
    while True:  # until a signal
        if stopping:
            f.end("signal")
            f.flush()
            return 0
        now = time.monotonic_ns()
        if f.conn is None and now >= next_connect:
            error = f.connect()
            if error is not None:
                next_connect = now + RECONNECT_DELAY_NS
        wake = f.step()
        if f.conn is None:
            wake = next_connect if wake is None else min(wake, next_connect)
        timeout = None if wake is None else max(0, wake - time.monotonic_ns()) / 1e9
        readers = [f.conn] if f.conn is not None else []
        writers = [f.conn] if f.conn is not None and f.outbox else []
        try:
            readable, writable, _ = select.select(readers, writers, [], timeout)
        except InterruptedError:
            continue
        if writable:
            f.flush()
        if readable and f.conn is not None:
            f.read()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
