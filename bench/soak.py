#!/usr/bin/env python3
"""Short leases under load: how short can the ttl go without false failovers?

For each ttl (default 1 s and 500 ms): three baton candidates on one
redis-server, each supervising test_worker, run for --minutes while the
machine is loaded -- one CPU hog per core and a disk writer (fsync every
16 MiB), all started by this script and bounded in time. It counts the leader
changes that nobody caused (every worker `start` after the first, from the
workers' own event log), reads each daemon's renew latency and timer delay
histograms from its /metrics, and then SIGKILLs the leader's process groups
(the host "crashes") --kills times, still under load, measuring the failover
as in bench/run.py (lag after the lease expired, and total from the kill).

Full run (about 22 minutes):  bench/soak.py
Quick check:                  bench/soak.py --minutes 1 --kills 2
Exit status: 0 done, 1 harness error, 3 overlapping workers. Nothing is
asserted about timing; the figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baton_bench import report  # noqa: E402
from baton_bench.candidates import baton_kind, election_group  # noqa: E402
from baton_bench.event_log import event_log  # noqa: E402
from baton_bench.processes import registry, wait_exit  # noqa: E402
from baton_bench.redis_server import free_port, harness_error, redis_server  # noqa: E402
from baton_bench.scenarios import wait_single_leader  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
NS_PER_MS = 1_000_000

CPU_HOG = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
DISK_WRITER = """import os, time
end = time.monotonic() + {seconds}
block = b"x" * (1 << 20)
path = {path!r}
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
written = 0
while time.monotonic() < end:
    os.write(fd, block)
    written += 1
    if written % 16 == 0:
        os.fsync(fd)
    if written >= 512:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        written = 0
os.close(fd)
os.unlink(path)
"""


class soak_kind(baton_kind):
    """baton with an HTTP endpoint per candidate, for its /metrics."""

    def __init__(self, baton: Path, worker: Path, ttl_ms: int) -> None:
        super().__init__(baton, worker, ttl_ms)
        self.slug = f"baton-ttl{ttl_ms}"
        self.ports: dict[str, int] = {}

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        argv = super().argv(port, election, name, log, tick_ms)
        self.ports[name] = free_port()
        at = argv.index("--")
        argv[at:at] = ["--http-listen", f"127.0.0.1:{self.ports[name]}"]
        # info: the reasons of every stop are in the candidates' output.
        argv[argv.index("--log-level") + 1] = "info"
        return argv


def metrics_of(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        return reply.read().decode()


BUCKET = re.compile(r'^(\w+)_bucket\{(.*)\} (\S+)$')


def histogram(text: str, name: str, labels: str = "") -> list[tuple[float, float]]:
    """[(upper bound in s, cumulative count)] of one histogram series."""
    out = []
    for line in text.splitlines():
        m = BUCKET.match(line)
        if not m or m.group(1) != name:
            continue
        fields = dict(part.split("=", 1) for part in m.group(2).split(",") if "=" in part)
        le = fields.pop("le").strip('"')
        if labels and labels not in m.group(2):
            continue
        out.append((float("inf") if le == "+Inf" else float(le), float(m.group(3))))
    return sorted(out)


def merge(histograms: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    totals: dict[float, float] = {}
    for h in histograms:
        for bound, count in h:
            totals[bound] = totals.get(bound, 0.0) + count
    return sorted(totals.items())


def quantile_bound(h: list[tuple[float, float]], q: float) -> float | None:
    """Upper bound (ms) of the bucket holding the q-quantile."""
    if not h or h[-1][1] <= 0:
        return None
    target = q * h[-1][1]
    for bound, count in h:
        if count >= target:
            return bound * 1000.0
    return None


def summarize_histogram(h: list[tuple[float, float]]) -> dict:
    count = h[-1][1] if h else 0
    over = {f"over_{int(b * 1000)}ms": int(count - c) for b, c in h if b in (0.01, 0.05, 0.1, 0.25)}
    return {"count": int(count), "p50_at_most_ms": quantile_bound(h, 0.5),
            "p99_at_most_ms": quantile_bound(h, 0.99), "p999_at_most_ms": quantile_bound(h, 0.999),
            "max_bucket_ms": next((b * 1000.0 for b, c in h if c >= count), None), **over}


def start_load(procs: registry, out_dir: Path, seconds: float) -> list:
    load = []
    devnull = open(os.devnull, "wb")
    for _ in range(os.cpu_count() or 2):
        load.append(procs.spawn([sys.executable, "-c", CPU_HOG.format(seconds=seconds)], devnull))
    path = str(out_dir / "disk-writer.bin")
    load.append(procs.spawn([sys.executable, "-c", DISK_WRITER.format(seconds=seconds, path=path)],
                            devnull))
    return load


def stop_load(load: list) -> None:
    for proc in load:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        wait_exit(proc, 5.0)


def soak_one(args, procs: registry, out_dir: Path, ttl_ms: int, redis_binary: str) -> dict:
    kind = soak_kind(args.baton_path, args.worker_path, ttl_ms)
    election = f"soak-{ttl_ms}"
    log = event_log(out_dir / f"{election}.log")
    server = redis_server(procs, redis_binary, out_dir, election)
    window_s = args.minutes * 60.0
    ttl_s = ttl_ms / 1000.0
    load = []
    result: dict = {"ttl_ms": ttl_ms, "minutes": args.minutes}
    group = election_group(procs, kind, server.port, election, log, out_dir, tick_ms=5)
    conn = server.connect()
    try:
        group.start_all(3)
        wait_single_leader(log, 15.0 + ttl_s, election)
        # The load runs through the window and the kills after it.
        load = start_load(procs, out_dir, window_s + args.kills * (4 * ttl_s + 10) + 60)
        time.sleep(2.0)  # let the load reach full swing before counting
        log.refresh()
        starts_before = sum(1 for _ in log.intervals)
        began = time.monotonic()
        load_samples = []
        while time.monotonic() - began < window_s:
            time.sleep(min(10.0, window_s - (time.monotonic() - began) + 0.01))
            load_samples.append(float(Path("/proc/loadavg").read_text().split()[0]))
            for member in group.members.values():
                if not member.alive():
                    raise harness_error(f"{election}: candidate {member.name} exited during the soak")
        log.refresh()
        terms = sorted(log.intervals.values(), key=lambda i: i.start_ns)
        result["leader_changes_unprovoked"] = len(terms) - starts_before
        result["terms_in_window"] = [{"name": t.name, "start_ns": t.start_ns} for t in terms[starts_before:]]
        result["loadavg_1min"] = {"median": statistics.median(load_samples), "max": max(load_samples)}
        texts = {name: metrics_of(port) for name, port in kind.ports.items()
                 if group.by_name(name) is not None}
        result["renew_latency"] = summarize_histogram(merge(
            [histogram(t, "baton_store_command_duration_seconds", 'command="renew"')
             for t in texts.values()]))
        result["timer_delay"] = summarize_histogram(merge(
            [histogram(t, "baton_timer_delay_seconds") for t in texts.values()]))

        lags, totals = [], []
        for rep in range(args.kills):
            leader_iv = wait_single_leader(log, 10.0 + ttl_s, f"{election} kill {rep}")
            leader = group.by_name(leader_iv.name)
            if leader is None:
                raise harness_error(f"{election}: worker {leader_iv.name} belongs to no candidate")
            # From before the question: a harness descheduled after the reply
            # (the machine is loaded) must not move the expiry later.
            asked = time.monotonic_ns()
            remaining = kind.remaining_ms(conn, election)
            expiry_ns = asked + int(remaining * NS_PER_MS)
            acted = time.monotonic_ns()
            leader.crash(procs)
            successor = log.wait_for(
                lambda current: current.first_start_after(acted, exclude_name=leader.name),
                timeout_s=2 * ttl_s + 10.0)
            if successor is None:
                raise harness_error(f"{election} kill {rep}: no other worker started")
            lags.append(round((successor.start_ns - expiry_ns) / NS_PER_MS, 3))
            totals.append(round((successor.start_ns - acted) / NS_PER_MS, 3))
            wait_exit(leader.proc, 10.0)
            group.note_workers()
            group.start(leader.index)
            time.sleep(1.0 + ttl_s)
        result["failover_lag_after_expiry_ms"] = lags
        result["failover_total_ms"] = totals
        result["failover"] = {"lag_after_expiry": report.summarize(lags),
                              "total_from_kill": report.summarize(totals)}
    finally:
        stop_load(load)
        conn.close()
        problems = group.stop_all()
        group.close()
        server.stop()
    log.refresh()
    result["overlaps"] = len(log.overlaps())
    result["problems"] = problems
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ttls", default="1000,500", help="lease ttls in ms (default 1000,500)")
    parser.add_argument("--minutes", type=float, default=10.0, help="soak per ttl (default 10)")
    parser.add_argument("--kills", type=int, default=10, help="leader crashes after the soak")
    parser.add_argument("--baton", default=str(REPO_ROOT / "build" / "baton"))
    parser.add_argument("--worker", default=str(REPO_ROOT / "build" / "tests" / "test_worker"))
    parser.add_argument("--out", default=None, help="logs (default: a new temp dir)")
    parser.add_argument("--json", default=None, help="results file (default OUT/soak.json)")
    args = parser.parse_args()
    args.baton_path = Path(args.baton).resolve()
    args.worker_path = Path(args.worker).resolve()
    ttls = [int(t) for t in args.ttls.split(",") if t.strip()]
    if not 0 < args.minutes <= 60 or not 0 <= args.kills <= 100 or not ttls:
        parser.error("--minutes in (0, 60], --kills in [0, 100], at least one ttl")
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="baton-soak-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    redis_binary = __import__("shutil").which("redis-server")
    procs = registry()
    def on_alarm(_signum, _frame):
        raise harness_error("the run exceeded its time limit")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    signal.signal(signal.SIGALRM, on_alarm)
    # A safety net over the whole run; every wait inside is bounded as well.
    signal.alarm(int(len(ttls) * (args.minutes * 60 + args.kills * 30 + 300)))
    document = {"date": report.now_utc(), "command": shlex.join(sys.argv), "machine":
                report.machine_info(), "baton": report.baton_version(args.baton_path),
                "redis-server": report.redis_version(redis_binary or "redis-server"),
                "results": []}
    print(f"# baton short-lease soak, {document['date']}; logs: {out_dir}", flush=True)
    try:
        if not redis_binary:
            raise harness_error("redis-server not found on PATH")
        for ttl in ttls:
            print(f"[{time.strftime('%H:%M:%S')}] ttl {ttl} ms: 3 candidates, {args.minutes:g} min "
                  f"under load, then {args.kills} leader crashes", flush=True)
            one = soak_one(args, procs, out_dir, ttl, redis_binary)
            document["results"].append(one)
            print(json.dumps({k: v for k, v in one.items()
                              if k not in ("terms_in_window", "failover_lag_after_expiry_ms",
                                           "failover_total_ms")}), flush=True)
    except harness_error as error:
        print(f"soak: error: {error}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        procs.cleanup()
    json_path = Path(args.json) if args.json else out_dir / "soak.json"
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(document, indent=2) + "\n")
    print()
    print("| ttl | unprovoked leader changes | renew latency p50 / p99 / p99.9 (ms, at most) "
          "| timer delay p50 / p99 / p99.9 (ms, at most) | failover after expiry, median / max (ms) "
          "| failover from the kill, median (ms) | load avg (1 min, median) | overlaps |")
    print("|---|---|---|---|---|---|---|---|")
    for r in document["results"]:
        rl, td, fo = r["renew_latency"], r["timer_delay"], r["failover"]
        print(f"| {r['ttl_ms']} ms | {r['leader_changes_unprovoked']} in {r['minutes']:g} min | "
              f"{rl['p50_at_most_ms']} / {rl['p99_at_most_ms']} / {rl['p999_at_most_ms']} | "
              f"{td['p50_at_most_ms']} / {td['p99_at_most_ms']} / {td['p999_at_most_ms']} | "
              f"{fo['lag_after_expiry'].get('median')} / {fo['lag_after_expiry'].get('max')} | "
              f"{fo['total_from_kill'].get('median')} | {r['loadavg_1min']['median']:.1f} | "
              f"{r['overlaps']} |")
    print(f"\nresults: {json_path}")
    return 3 if any(r["overlaps"] for r in document["results"]) else 0


if __name__ == "__main__":
    sys.exit(main())
