"""Turning samples into summaries, tables, target verdicts and the JSON file.

Tables are printed as Markdown so they can be pasted into docs/benchmarks.md
unchanged. The headline table shows medians and each peer's ratio to baton
(peer / baton: above 1 means the peer takes longer or costs more). Idle
figures for standbys are the worst (largest) standby of the run.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import subprocess
from pathlib import Path


def summarize(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), "min": round(min(values), 3),
            "median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def summaries(samples: dict) -> dict:
    """Each metric's samples summarized; the takeover's hops (takeover_hops: at debug level)
    are summarized already, and their raw samples stay in the raw section."""
    out = {m: summarize(v) for m, v in samples.items() if m not in ("hops", "hops_us")}
    if "hops" in samples:
        out["hops"] = samples["hops"]
    return out


def _first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unavailable ({error})"
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else "?"


def machine_info() -> dict:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_total = "?"
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_total = f"{int(line.split()[1]) // 1024} MB"
    return {
        "nproc": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)),
        "kernel": platform.release(),
        "cpu_model": model,
        "mem_total": mem_total,
        "os": _first_line(["sh", "-c", ". /etc/os-release && echo \"$PRETTY_NAME\""]),
        "loadavg_at_start": Path("/proc/loadavg").read_text().split()[:3],
    }


def baton_version(baton: Path) -> str:
    return _first_line([str(baton), "version"])


def redis_version(binary: str) -> str:
    return _first_line([binary, "--version"])


def now_utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- idle helpers --------------------------------------------------------------

def idle_view(idle: dict) -> dict:
    """Leader and worst standby figures of one implementation's idle run."""
    standbys = [c for c in idle["candidates"] if c["role"] == "standby"]
    leaders = [c for c in idle["candidates"] if c["role"] == "leader"]
    leader = leaders[0] if leaders else None

    def worst(field: str) -> float | None:
        return max((c[field] for c in standbys), default=None)

    return {
        "standby_rss_mb": None if worst("rss_kb_main") is None else worst("rss_kb_main") / 1024,
        "standby_pss_mb": None if worst("pss_kb_main") is None else worst("pss_kb_main") / 1024,
        # With its parked keeper (child.park) and the keeper's waiting child.
        "standby_tree_rss_mb": None if worst("rss_kb") is None else worst("rss_kb") / 1024,
        "standby_tree_pss_mb": None if worst("pss_kb") is None else worst("pss_kb") / 1024,
        "standby_cpu_s_per_min": worst("cpu_s_per_min"),
        "standby_cmds_per_s": worst("redis_cmds_per_s"),
        "leader_rss_mb": None if leader is None else leader["rss_kb"] / 1024,
        "leader_main_rss_mb": None if leader is None else leader["rss_kb_main"] / 1024,
        "leader_pss_mb": None if leader is None else leader["pss_kb"] / 1024,
        "leader_cpu_s_per_min": None if leader is None else leader["cpu_s_per_min"],
        "leader_cmds_per_s": None if leader is None else leader["redis_cmds_per_s"],
        "redis_cpu_pct": idle["redis_cpu_pct"],
    }


# --- tables ----------------------------------------------------------------------

def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def _ratio(peer: float | None, baton: float | None) -> str:
    if peer is None or baton is None:
        return "—"
    if baton <= 0:
        return "∞" if peer > 0 else "—"
    return f"{peer / baton:.1f}×"


HEADLINE_ROWS = [
    # (label, getter(results_of_one_kind) -> value, digits)
    ("start-up: process start → worker running (ms)",
     lambda r: r.get("startup", {}).get("startup_ms", {}).get("median"), 1),
    ("crash: lag_after_expiry (ms)",
     lambda r: r.get("crash", {}).get("lag_after_expiry_ms", {}).get("median"), 1),
    ("crash: failover_total from SIGKILL (ms)",
     lambda r: r.get("crash", {}).get("failover_total_ms", {}).get("median"), 0),
    ("graceful: handover_gap (ms)",
     lambda r: r.get("handover", {}).get("handover_gap_ms", {}).get("median"), 1),
    ("graceful: handover_total from SIGTERM (ms)",
     lambda r: r.get("handover", {}).get("handover_total_ms", {}).get("median"), 1),
    ("switchover: gap, old app stopped → new app running (ms)",
     lambda r: r.get("switchover", {}).get("switchover_gap_ms", {}).get("median"), 1),
    ("switchover: total from `baton switchover` (ms)",
     lambda r: r.get("switchover", {}).get("switchover_total_ms", {}).get("median"), 1),
    ("safety: overlapping worker intervals", lambda r: r.get("overlaps"), 0),
    ("safety: worker intervals checked (leader terms)", lambda r: r.get("intervals_checked"), 0),
    ("idle: RSS per standby (MB)", lambda r: r.get("idle_view", {}).get("standby_rss_mb"), 1),
    ("idle: PSS per standby (MB)", lambda r: r.get("idle_view", {}).get("standby_pss_mb"), 1),
    ("idle: RSS per standby with its parked keeper (MB)",
     lambda r: r.get("idle_view", {}).get("standby_tree_rss_mb"), 1),
    ("idle: PSS per standby with its parked keeper (MB)",
     lambda r: r.get("idle_view", {}).get("standby_tree_pss_mb"), 1),
    ("idle: RSS of the leader, without the app (MB)",
     lambda r: r.get("idle_view", {}).get("leader_rss_mb"), 1),
    ("idle: CPU per standby (s/min)",
     lambda r: r.get("idle_view", {}).get("standby_cpu_s_per_min"), 3),
    ("idle: CPU of the leader (s/min)",
     lambda r: r.get("idle_view", {}).get("leader_cpu_s_per_min"), 3),
    ("idle: store requests/s per standby (Redis commands, PostgreSQL statements)",
     lambda r: r.get("idle_view", {}).get("standby_cmds_per_s"), 2),
    ("idle: store requests/s of the leader",
     lambda r: r.get("idle_view", {}).get("leader_cmds_per_s"), 2),
    ("idle: store server CPU for 3 candidates (% of a core)",
     lambda r: r.get("idle_view", {}).get("redis_cpu_pct"), 2),
]


def headline_table(results: dict, kinds: list[str]) -> str:
    peers = [k for k in kinds if k != "baton"]
    header = ["metric (median)", "baton"]
    for peer in peers:
        header += [peer, f"{peer} / baton"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, getter, digits in HEADLINE_ROWS:
        base = getter(results.get("baton", {}))
        row = [label, _fmt(base, digits)]
        for peer in peers:
            value = getter(results.get(peer, {}))
            counts = label.startswith("safety:")
            row += [_fmt(value, digits), "—" if counts else _ratio(value, base)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


TIMING_ROWS = [("startup", "startup_ms"), ("crash", "lag_after_expiry_ms"),
               ("crash", "failover_total_ms"), ("handover", "handover_gap_ms"),
               ("handover", "handover_total_ms")]


def detail_table(results: dict, kinds: list[str]) -> str:
    lines = ["| metric (ms) | " + " | ".join(f"{k} min / median / max" for k in kinds) + " | n |",
             "|" + "---|" * (len(kinds) + 2)]
    for scenario, metric in TIMING_ROWS:
        cells, count = [], 0
        for kind in kinds:
            s = results.get(kind, {}).get(scenario, {}).get(metric)
            if not s or not s.get("n"):
                cells.append("—")
                continue
            count = max(count, s["n"])
            cells.append(f"{s['min']:.1f} / {s['median']:.1f} / {s['max']:.1f}")
        lines.append(f"| {metric.removesuffix('_ms')} | " + " | ".join(cells) + f" | {count} |")
    return "\n".join(lines)


def scale_table(scale: dict) -> str:
    lag = scale.get("lag_after_expiry", {})
    total = scale.get("failover_total", {})
    rows = [
        ("candidates (elections × per election)",
         f"{scale['candidates']} ({scale['elections']} × {scale['candidates'] // scale['elections']}), "
         f"{scale['standbys']} standbys"),
        ("Redis CPU at steady state (% of one core)", f"{scale['redis_cpu_pct']:.2f}"),
        ("Redis client commands/s (all candidates)", f"{scale['redis_client_cmds_per_s']:.1f}"),
        ("Redis client commands/s per candidate",
         f"{scale['redis_client_cmds_per_s_per_candidate']:.3f}"),
        ("Redis commands/s incl. those inside scripts", f"{scale['redis_total_commands_per_s']:.1f}"),
        ("Redis connected clients", str(scale["redis_connected_clients"])),
        ("standby CPU (s/min, median / max)",
         f"{scale['standby_cpu_s_per_min_median']:.4f} / {scale['standby_cpu_s_per_min_max']:.4f}"),
        ("standby RSS / PSS (MB, median)",
         f"{scale['standby_rss_kb_median'] / 1024:.1f} / {scale['standby_pss_kb_median'] / 1024:.1f}"),
        ("all standbys' PSS (MB)", f"{scale['standby_pss_mb_sum']:.0f}"),
        ("crash lag_after_expiry under load (ms, min / median / max)",
         f"{lag.get('min', 0):.1f} / {lag.get('median', 0):.1f} / {lag.get('max', 0):.1f} "
         f"(n={lag.get('n', 0)})"),
        ("crash failover_total under load (ms, median)", f"{total.get('median', 0):.0f}"),
        ("time to spawn all candidates (s)", f"{scale['spawn_s']:.1f}"),
    ]
    releases = scale.get("releases") or []
    if releases:
        def med(key):
            values = [r[key] for r in releases if r.get(key) is not None]
            return statistics.median(values) if values else float("nan")
        rows += [
            ("graceful release: handover gap (ms, median / max)",
             f"{med('handover_gap_ms'):.1f} / "
             f"{max(r['handover_gap_ms'] or 0 for r in releases):.1f} (n={len(releases)})"),
            ("graceful release: Redis commands beyond the steady rate (median)",
             f"{med('redis_commands_beyond_steady'):.0f}"),
            ("graceful release: Redis PING round trip (ms, quiet median / during median / max)",
             f"{med('ping_ms_quiet_median'):.2f} / {med('ping_ms_median'):.2f} / "
             f"{max(r['ping_ms_max'] or 0 for r in releases):.2f}"),
        ]
    lines = ["| scale (baton) | value |", "|---|---|"]
    lines += [f"| {label} | {value} |" for label, value in rows]
    return "\n".join(lines)


# --- targets ---------------------------------------------------------------------

def evaluate_targets(baton: dict, scale: dict | None,
                     overheads: list[dict] | None = None) -> list[dict]:
    targets = []

    def add(name: str, value: str, met: bool | None) -> None:
        targets.append({"target": name, "value": value,
                        "status": "n/a" if met is None else ("met" if met else "missed")})

    handover = baton.get("handover", {}).get("handover_gap_ms")
    if handover and handover.get("n"):
        add("handover_gap median ≤ 5 ms, max ≤ 30 ms",
            f"median {handover['median']:.1f} ms, max {handover['max']:.1f} ms",
            handover["median"] <= 5 and handover["max"] <= 30)
    lag = baton.get("crash", {}).get("lag_after_expiry_ms")
    if lag and lag.get("n"):
        add("lag_after_expiry median ≤ 5 ms, max ≤ 30 ms",
            f"median {lag['median']:.1f} ms, max {lag['max']:.1f} ms",
            lag["median"] <= 5 and lag["max"] <= 30)
    for row in overheads or []:
        if row["kind"] == "baton-socket" and row["figure"].startswith("crash"):
            add("socket app: start event after the lease frees ≤ 1 ms over one Redis round trip "
                "(median)", f"{row['median_ms']:.2f} ms = {row['floor_ms']:.2f} + "
                f"{row['overhead_ms']:.2f} ms", row["overhead_ms"] <= 1.0)
        if row["kind"] == "baton":
            add(f"{row['figure']}: overhead over the floor ≤ 1.5 ms (median)",
                f"{row['median_ms']:.2f} ms = floor {row['floor_ms']:.2f} + "
                f"{row['overhead_ms']:.2f} ms ({row['ratio']:.1f}× the floor)",
                row["overhead_ms"] <= 1.5)
    if "overlaps" in baton:
        add("0 overlaps", f"{baton['overlaps']} among {baton.get('intervals_checked', '?')} worker "
            "intervals", baton["overlaps"] == 0)
    idle = baton.get("idle_view")
    if idle:
        worst_rss = max(v for v in (idle["standby_rss_mb"], idle["leader_main_rss_mb"])
                        if v is not None)
        add("idle RSS ≤ 8 MB per daemon",
            f"daemon {worst_rss:.1f} MB (leader's keeper adds "
            f"{idle['leader_rss_mb'] - idle['leader_main_rss_mb']:.1f} MB RSS)",
            worst_rss <= 8)
        worst_cpu = max(v for v in (idle["standby_cpu_s_per_min"], idle["leader_cpu_s_per_min"])
                        if v is not None)
        add("idle CPU ≤ 0.1 s per minute", f"{worst_cpu:.3f} s/min (worst candidate)",
            worst_cpu <= 0.1)
        add("≤ 1 Redis command/s per standby", f"{idle['standby_cmds_per_s']:.2f} /s",
            idle["standby_cmds_per_s"] <= 1)
    if scale:
        add(f"{scale['standbys']} standbys cost Redis < 5% of one core",
            f"{scale['redis_cpu_pct']:.2f} %", scale["redis_cpu_pct"] < 5)
    start = baton.get("startup", {}).get("startup_ms")
    if start and start.get("n"):
        add("start-up to working ≤ 50 ms",
            f"median {start['median']:.1f} ms, max {start['max']:.1f} ms", start["median"] <= 50)
    return targets


def evaluate_postgres_targets(baton_pg: dict) -> list[dict]:
    """The postgres kind's own bar: wake-ups by LISTEN/NOTIFY, not a polling interval."""
    targets = []
    handover = baton_pg.get("handover", {}).get("handover_gap_ms")
    if handover and handover.get("n"):
        targets.append({"target": "PostgreSQL: handover_gap median ≤ 10 ms",
                        "value": f"median {handover['median']:.1f} ms, max {handover['max']:.1f} ms",
                        "status": "met" if handover["median"] <= 10 else "missed"})
    lag = baton_pg.get("crash", {}).get("lag_after_expiry_ms")
    if lag and lag.get("n"):
        targets.append({"target": "PostgreSQL: lag_after_expiry median ≤ 10 ms",
                        "value": f"median {lag['median']:.1f} ms, max {lag['max']:.1f} ms",
                        "status": "met" if lag["median"] <= 10 else "missed"})
    if "overlaps" in baton_pg:
        targets.append({"target": "PostgreSQL: 0 overlaps",
                        "value": f"{baton_pg['overlaps']} among "
                                 f"{baton_pg.get('intervals_checked', '?')} worker intervals",
                        "status": "met" if baton_pg["overlaps"] == 0 else "missed"})
    idle = baton_pg.get("idle_view")
    if idle and idle.get("standby_cmds_per_s") is not None:
        targets.append({"target": "PostgreSQL: ≤ 1 statement/s per standby",
                        "value": f"{idle['standby_cmds_per_s']:.2f} /s",
                        "status": "met" if idle["standby_cmds_per_s"] <= 1 else "missed"})
    return targets


def targets_table(targets: list[dict]) -> str:
    lines = ["| target (baton) | measured | status |", "|---|---|---|"]
    lines += [f"| {t['target']} | {t['value']} | {t['status']} |" for t in targets]
    return "\n".join(lines)


def quorum_table(results: dict, kinds: list[str]) -> str:
    """The quorum kinds: takeover with one of three masters down, commands per master."""
    lines = ["| quorum (3 masters) | " + " | ".join(kinds) + " |",
             "|---|" + "---|" * len(kinds)]

    def cell(kind: str, scenario: str, metric: str) -> str:
        s = results.get(kind, {}).get(scenario, {}).get(metric)
        if not s or not s.get("n"):
            return "—"
        return f"{s['median']:.1f} (max {s['max']:.1f})"

    lines.append("| crash, all masters up: lag after expiry, ms median | " +
                 " | ".join(cell(k, "crash", "lag_after_expiry_ms") for k in kinds) + " |")
    lines.append("| crash, one master down: lag after expiry, ms median | " +
                 " | ".join(cell(k, "crash-minority-down", "lag_after_expiry_ms") for k in kinds) + " |")
    lines.append("| handover gap, ms median | " +
                 " | ".join(cell(k, "handover", "handover_gap_ms") for k in kinds) + " |")
    per_master = []
    for k in kinds:
        values = results.get(k, {}).get("idle_view", {}).get("commands_per_s_per_master")
        per_master.append(" / ".join(f"{v:.1f}" for v in values) if values else "—")
    lines.append("| idle, 3 candidates: commands/s on each master | " + " | ".join(per_master) + " |")
    return "\n".join(lines)


SENTINEL_ROWS = [("start-up (ms)", "startup", "startup_ms"),
                 ("crash: lag after expiry (ms)", "crash", "lag_after_expiry_ms"),
                 ("crash: failover total (ms)", "crash", "failover_total_ms"),
                 ("graceful: handover gap (ms)", "handover", "handover_gap_ms"),
                 ("graceful: handover total (ms)", "handover", "handover_total_ms")]


def sentinel_table(results: dict, kinds: list[str]) -> str:
    """The Sentinel kinds beside single Redis: median (min–max), and what WAIT adds.

    The last column is baton-sentinel's median minus baton-sentinel-noack's:
    the acknowledgement's cost (a grant is only reported after WAIT answers).
    """
    both = "baton-sentinel" in kinds and "baton-sentinel-noack" in kinds
    header = ["Sentinel (1 master + 1 replica + 3 sentinels)"] + kinds
    if both:
        header.append("ack all − ack off (median)")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def summary(kind: str, scenario: str, metric: str) -> dict | None:
        s = results.get(kind, {}).get(scenario, {}).get(metric)
        return s if s and s.get("n") else None

    for label, scenario, metric in SENTINEL_ROWS:
        cells = []
        for kind in kinds:
            s = summary(kind, scenario, metric)
            cells.append("—" if s is None else
                         f"{s['median']:.1f} ({s['min']:.1f}–{s['max']:.1f}, n={s['n']})")
        if all(c == "—" for c in cells):
            continue
        if both:
            ack = summary("baton-sentinel", scenario, metric)
            off = summary("baton-sentinel-noack", scenario, metric)
            cells.append("—" if ack is None or off is None
                         else f"{ack['median'] - off['median']:+.2f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    idle_rows = [("idle: commands/s on the 3 sentinels (all clients, the sentinels' own "
                  "PINGs included)", "sentinel_cmds_per_s", 1),
                 ("idle: CPU of the 3 sentinels (% of a core)", "sentinel_cpu_pct", 2),
                 ("idle: CPU of the replica (% of a core)", "replica_cpu_pct", 2),
                 ("idle: CPU of the master (% of a core)", "redis_cpu_pct", 2)]
    for label, field, digits in idle_rows:
        values = [results.get(k, {}).get("idle_view", {}).get(field) for k in kinds]
        if all(v is None for v in values[1:]):
            continue
        cells = [_fmt(v, digits) for v in values]
        if both:
            cells.append("—")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
