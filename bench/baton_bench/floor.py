"""The machine's floor for a takeover, and baton's figures as floor + overhead.

No leader election can start a worker faster than the machine starts a
process, and none can take a lease faster than one store round trip. The
floor probe (bench/floor_probe.cpp, a small C++ program) measures both in the
same run as the daemons: a plain fork + exec of the same worker binary (from
before the fork to the worker's own `start` line) and a Redis PING round trip,
each after a short rest. A takeover follows rest (a standby sleeps until a
timer or an announcement wakes it), and on this kind of machine the same start
takes 1.5-2x longer after 50 ms idle than back to back, a round trip several
times longer. Both are reported; the floor is the rested one, and the table
also shows the overhead over the back-to-back ("hot") floor.

Floors per figure:
  - crash lag after expiry: fork+exec + one round trip (the acquire);
  - graceful handover gap: fork+exec + two round trips (the old leader's
    release, then the acquire; the announcement travels with the release);
  - a socket app (no process to start): one round trip after expiry, two
    after a handover.
Overhead = median - floor median; ratio = median / floor median.

For baton-pg, PostgreSQL's own floor replaces the Redis round trip
(bench/pg_floor_probe.cpp): a write transaction on an open session after
rest, and, for start-up, a libpq client's first write from process start
(libpq loaded, a session opened, one write answered) + fork+exec of the
worker. Without its samples (pg_floor_probe not run) baton-pg has no rows.
"""

from __future__ import annotations

import json
import statistics
import subprocess
from pathlib import Path

from .redis_server import harness_error


def _run_probe(name: str, argv: list[str]) -> dict:
    """Runs a probe once; returns the samples it printed (lists of ms)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as error:
        raise harness_error(f"{name} took over 120 s") from error
    if done.returncode != 0:
        raise harness_error(f"{name} failed ({done.returncode}): {done.stderr.strip()}")
    try:
        return json.loads(done.stdout)
    except ValueError as error:
        raise harness_error(f"{name} printed no JSON: {done.stdout[:200]!r}") from error


def probe(floor_probe: Path, worker: Path, redis_port: int, log: Path, reps: int) -> dict:
    """The machine's and Redis's floor (floor_probe), once."""
    return _run_probe("floor_probe", [str(floor_probe), "--worker", str(worker), "--log", str(log),
                                      "--redis-port", str(redis_port), "--reps", str(reps)])


def probe_postgres(pg_floor_probe: Path, url: str, reps: int) -> dict:
    """PostgreSQL's floor against `url` (pg_floor_probe), once."""
    return _run_probe("pg_floor_probe", [str(pg_floor_probe), "--url", url, "--reps", str(reps)])


def merge(runs: list[dict]) -> dict:
    merged: dict[str, list[float]] = {}
    for run in runs:
        for name, samples in run.items():
            merged.setdefault(name, []).extend(samples)
    return merged


def floors(samples: dict) -> dict:
    """Medians of the probes, and the floor of each figure (ms)."""
    out = redis_floors(samples) if "fork_exec_rested_ms" in samples else {}
    if "pg_write_rtt_idle_ms" in samples and "fork_exec_ms" in out:
        spawn = out["fork_exec_ms"]
        rtt = statistics.median(samples["pg_write_rtt_idle_ms"])
        first = statistics.median(samples["pg_first_write_ms"])
        out.update({
            "pg_write_rtt_ms": round(rtt, 3),
            "pg_first_write_ms": round(first, 3),
            "pg_startup_ms": round(first + spawn, 3),
            "pg_crash_ms": round(spawn + rtt, 3),
            "pg_handover_ms": round(spawn + 2 * rtt, 3),
        })
    return out


def redis_floors(samples: dict) -> dict:
    """The machine's and Redis's floors (floor_probe)."""
    spawn = statistics.median(samples["fork_exec_rested_ms"])
    rtt = statistics.median(samples["redis_rtt_idle_ms"])
    hot_spawn = statistics.median(samples["fork_exec_ms"])
    hot_rtt = statistics.median(samples["redis_rtt_ms"])
    return {
        "redis_rtt_hot_ms": round(hot_rtt, 3),
        "fork_exec_hot_ms": round(hot_spawn, 3),
        "hot_crash_ms": round(hot_spawn + hot_rtt, 3),
        "hot_handover_ms": round(hot_spawn + 2 * hot_rtt, 3),
        "fork_exec_ms": round(spawn, 3),  # rested
        "posix_spawn_ms": round(statistics.median(samples["posix_spawn_ms"]), 3),
        "redis_rtt_ms": round(rtt, 3),
        "crash_ms": round(spawn + rtt, 3),
        "handover_ms": round(spawn + 2 * rtt, 3),
        "socket_crash_ms": round(rtt, 3),
        "socket_handover_ms": round(2 * rtt, 3),
    }


# (label, scenario, metric, floor key for a supervised worker, floor key for a socket app)
ROWS = [
    ("crash: lag after expiry", "crash", "lag_after_expiry_ms", "crash_ms", "socket_crash_ms"),
    ("graceful: handover gap", "handover", "handover_gap_ms", "handover_ms", "socket_handover_ms"),
]


# baton-pg's rows: (label, scenario, metric, floor key); no hot floor is measured.
POSTGRES_ROWS = [
    ("start-up: process start → worker running", "startup", "startup_ms", "pg_startup_ms"),
    ("crash: lag after expiry", "crash", "lag_after_expiry_ms", "pg_crash_ms"),
    ("graceful: handover gap", "handover", "handover_gap_ms", "pg_handover_ms"),
]


def overheads(results: dict, floor: dict, kinds: list[str]) -> list[dict]:
    """One row per baton kind and figure: median, floor, overhead, ratio."""
    rows = []
    for kind in kinds:
        if not kind.startswith("baton"):
            continue
        socket_app = kind.endswith("-socket")
        if kind == "baton-pg":
            table_rows = [(label, scenario, metric, key, key)
                          for label, scenario, metric, key in POSTGRES_ROWS]
        else:
            table_rows = [(label, scenario, metric, socket_key if socket_app else worker_key,
                           socket_key if socket_app else "hot_" + worker_key)
                          for label, scenario, metric, worker_key, socket_key in ROWS]
        for label, scenario, metric, base_key, hot_key in table_rows:
            summary = results.get(kind, {}).get(scenario, {}).get(metric)
            if not summary or not summary.get("n") or base_key not in floor:
                continue
            base = floor[base_key]
            hot = floor[hot_key]
            rows.append({"kind": kind, "figure": label, "median_ms": summary["median"],
                         "floor_ms": base, "overhead_ms": round(summary["median"] - base, 3),
                         "ratio": round(summary["median"] / base, 2) if base > 0 else None,
                         "hot_floor_ms": hot,
                         "overhead_over_hot_ms": round(summary["median"] - hot, 3)})
    return rows


def table(floor: dict, rows: list[dict]) -> str:
    pg = ""
    if "pg_write_rtt_ms" in floor:
        pg = (f"; PostgreSQL: a write round trip {floor['pg_write_rtt_ms']:.3f} ms after rest, a "
              f"libpq client's first write {floor['pg_first_write_ms']:.2f} ms from process start")
    lines = [f"floor (same run, medians): fork+exec of the worker {floor['fork_exec_ms']:.2f} ms "
             f"after rest ({floor['fork_exec_hot_ms']:.2f} back to back; posix_spawn "
             f"{floor['posix_spawn_ms']:.2f}), Redis round trip {floor['redis_rtt_ms']:.3f} ms "
             f"after rest ({floor['redis_rtt_hot_ms']:.3f} back to back){pg}", "",
             "| kind | figure (median) | measured (ms) | floor (ms) | overhead (ms) | ratio "
             "| overhead over the hot floor (ms) |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        ratio = "—" if row["ratio"] is None else f"{row['ratio']:.1f}×"
        lines.append(f"| {row['kind']} | {row['figure']} | {row['median_ms']:.2f} | "
                     f"{row['floor_ms']:.2f} | {row['overhead_ms']:.2f} | {ratio} | "
                     f"{row['overhead_over_hot_ms']:.2f} |")
    return "\n".join(lines)
