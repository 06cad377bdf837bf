#!/usr/bin/env python3
"""Leaderless time while the store restarts, with and without lease.failsafe peers.

One Redis on a free loopback port, three baton candidates on one election (ttl 3 s, each
supervising the test worker). Once one leads and its renewals list the two standbys, the Redis
is SIGKILLed, stays down for --outage seconds and comes back empty on the same port. The run then
waits until an app works after the restart and its lease is in Redis again. Per round, from the
workers' own event log: how long no app worked between the kill and --settle seconds after the
restart, whether the same app (and so the same token) ran throughout, and overlaps.

Both modes run in one invocation, rounds interleaved (off, peers, off, peers, ...), so the two
figures share the machine's state. What "off" shows is the price the mode removes: the app stops
at the renew deadline and nobody leads until the store is back and one ttl has passed (an empty
store holds every acquisition back one ttl).

Usage: bench/store_restart.py [--rounds 3] [--outage 10] [--baton build/baton] [--json FILE]
Exit status: 0 done (figures are reported, never asserted), 1 harness error or an overlap.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baton_bench.event_log import event_log  # noqa: E402
from baton_bench.processes import registry, wait_exit  # noqa: E402
from baton_bench.redis_server import free_port, harness_error  # noqa: E402
from baton_bench.redis_wire import redis_connection  # noqa: E402
from baton_bench.scenarios import wait_single_leader  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
TTL_MS = 3000
CANDIDATES = 3
SECRET = "store-restart-bench-secret-0123456789abcdef"


class store:
    """A redis-server on a fixed loopback port that can be killed and started empty again."""

    def __init__(self, procs: registry, binary: str, out: Path) -> None:
        self.procs, self.binary, self.out = procs, binary, out
        self.port = free_port()
        self.proc = None
        self.start()

    def start(self) -> None:
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--dir", str(self.out)]
        with open(self.out / "redis.out", "ab") as log:
            self.proc = self.procs.spawn(argv, output=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with redis_connection(self.port, timeout=0.5) as conn:
                    if conn.command("PING") == "PONG":
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise harness_error(f"redis-server did not start on port {self.port}")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        if not wait_exit(self.proc, 5.0):
            raise harness_error("redis-server did not die on SIGKILL")

    def get(self, key: str) -> str:
        """The key's value ("" when missing or the server does not answer)."""
        try:
            with redis_connection(self.port, timeout=1.0) as conn:
                value = conn.command("GET", key)
        except OSError:
            return ""
        return value.decode(errors="replace") if isinstance(value, bytes) else (value or "")


def start_candidates(procs: registry, args, s: store, election: str, mode: str,
                     out: Path) -> tuple[list, Path]:
    log = out / f"{election}.events"
    secret = out / "peer.secret"
    secret.write_text(SECRET + "\n")
    with redis_connection(s.port) as conn:
        conn.command("SET", f"baton:{{{election}}}:token", "1", "NX")
    daemons = []
    for n in range(1, CANDIDATES + 1):
        name = f"node-{n}"
        argv = [str(args.baton), "run", "--election", election, "--node-id", name,
                "--redis-url", f"redis://127.0.0.1:{s.port}", "--ttl", f"{TTL_MS}ms",
                "--log-level", "info"]
        if mode == "peers":
            argv += ["--failsafe", "peers", "--failsafe-secret-file", str(secret),
                     "--failsafe-listen", f"127.0.0.1:{free_port()}"]
        argv += ["--", str(args.worker), "--log", str(log), "--name", name, "--tick-ms", "5"]
        with open(out / f"{election}-{name}.out", "ab") as o:
            daemons.append(procs.spawn(argv, output=o))
    return daemons, log


def union_ns(intervals: list[tuple[int, int]], lo: int, hi: int) -> int:
    """How much of [lo, hi] the intervals cover."""
    covered, reach = 0, lo
    for start, end in sorted(intervals):
        start, end = max(start, reach), min(end, hi)
        if end > start:
            covered += end - start
            reach = end
    return covered


def one_round(procs: registry, args, mode: str, out: Path) -> dict:
    election = f"restart-{mode}-{uuid.uuid4().hex[:8]}"
    s = store(procs, args.redis_server, out)
    daemons, log_path = start_candidates(procs, args, s, election, mode, out)
    try:
        log = event_log(log_path)
        leader = wait_single_leader(log, 20.0, f"{mode}: the first leader")
        if mode == "peers":
            # Its renewals must have listed both standbys: what its rounds will ask.
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                record = s.get(f"baton:{{{election}}}:failsafe")
                if sum(f"\nnode-{n} " in record for n in range(1, CANDIDATES + 1)) >= 2:
                    break
                time.sleep(0.05)
            else:
                raise harness_error(f"{mode}: the record never listed the standbys")
        time.sleep(TTL_MS / 1000)  # a few renewals in, as a real outage would find it
        kill_ns = time.monotonic_ns()
        s.kill()
        time.sleep(args.outage)
        s.start()
        back_ns = time.monotonic_ns()
        lease_key = f"baton:{{{election}}}:lease"
        deadline = time.monotonic() + 4 * TTL_MS / 1000 + 10
        while time.monotonic() < deadline and not s.get(lease_key):
            time.sleep(0.02)
        time.sleep(args.settle)
        end_ns = time.monotonic_ns()
        log.refresh()
        spans = [(i.start_ns, i.end_ns) for i in log.all()]
        leaderless_ns = (end_ns - kill_ns) - union_ns(spans, kill_ns, end_ns)
        same = [i for i in log.all() if i.pid == leader.pid]
        kept = bool(same) and same[0].end_ns >= end_ns - 200_000_000 and \
            not any(i.start_ns > kill_ns for i in log.all())
        return {"mode": mode, "leaderless_ms": leaderless_ns / 1e6,
                "outage_ms": (back_ns - kill_ns) / 1e6, "same_app": kept,
                "overlaps": len(log.overlaps()), "bad_lines": len(log.bad_lines)}
    finally:
        for d in daemons:
            if d.poll() is None:
                d.send_signal(signal.SIGTERM)
        for d in daemons:
            if not wait_exit(d, 10.0):
                d.kill()
        s.kill() if s.proc.poll() is None else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--outage", type=float, default=10.0, help="seconds the store is down")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds measured after the lease is back in the store")
    parser.add_argument("--baton", type=Path, default=REPO_ROOT / "build/baton")
    parser.add_argument("--worker", type=Path, default=REPO_ROOT / "build/tests/test_worker")
    parser.add_argument("--redis-server", default="redis-server")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not 1 <= args.rounds <= 20 or not 1 <= args.outage <= 600:
        parser.error("--rounds wants 1 to 20, --outage 1 to 600 seconds")
    out = Path(tempfile.mkdtemp(prefix="baton-store-restart-"))
    procs = registry()
    results = []
    try:
        for r in range(args.rounds):
            for mode in ("off", "peers"):
                got = one_round(procs, args, mode, out)
                print(f"round {r + 1} {mode:5}: leaderless {got['leaderless_ms']:8.1f} ms over "
                      f"an outage of {got['outage_ms']:.0f} ms, same app: {got['same_app']}, "
                      f"overlaps {got['overlaps']}", flush=True)
                results.append(got)
    except harness_error as error:
        print(f"store_restart: {error} (logs in {out})", file=sys.stderr)
        return 1
    finally:
        procs.cleanup()
    print(f"\nttl {TTL_MS} ms, 3 candidates, Redis down {args.outage:g} s then back empty; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| lease.failsafe | rounds | leaderless ms, median [max] | same app throughout | overlaps |")
    print("|---|---:|---:|---:|---:|")
    for mode in ("off", "peers"):
        rows = [x for x in results if x["mode"] == mode]
        values = [x["leaderless_ms"] for x in rows]
        print(f"| {mode} | {len(rows)} | {statistics.median(values):.0f} [{max(values):.0f}] | "
              f"{sum(x['same_app'] for x in rows)} of {len(rows)} | "
              f"{sum(x['overlaps'] for x in rows)} |")
    if args.json:
        args.json.write_text(json.dumps({"ttl_ms": TTL_MS, "outage_s": args.outage,
                                         "rounds": results}, indent=2) + "\n")
    return 1 if any(x["overlaps"] for x in results) else 0


if __name__ == "__main__":
    sys.exit(main())
