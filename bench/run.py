#!/usr/bin/env python3
"""baton's benchmark: baton beside its peers, same machine, same Redis, same TTL.

Runs baton, redis-py's Lock (with a renewal thread) and redlock v5 (`using()`)
through the same scenarios -- start-up, crash takeover, graceful handover,
idle cost -- plus baton on PostgreSQL (baton-pg) on a PostgreSQL server the
run starts itself, baton on Redis Sentinel with and without WAIT for the
replica (baton-sentinel, baton-sentinel-noack) on a master + replica + 3
sentinels the run starts itself, baton on ZooKeeper (baton-zk) beside
python3-kazoo's Election recipe (kazoo) on a standalone ZooKeeper the run
starts itself, baton on etcd (baton-etcd) beside `etcdctl elect` and
`etcdctl lock` (etcdctl-elect, etcdctl-lock) on a single-member etcd the run
starts itself, and baton alone at scale, and prints one
Markdown table of medians with each peer's ratio to baton, min/median/max
details, baton's targets from issue 3 with met/missed, and writes everything
(raw samples included) to a JSON file. Timing comes from the workers' own
event log (CLOCK_MONOTONIC), never from what the daemons say.

Full run (about 20 minutes):  bench/run.py
Smoke run (under 4 minutes):  bench/run.py --smoke
Sentinel beside Redis (crash and handover, about 7 minutes):
  bench/run.py --only baton,baton-sentinel,baton-sentinel-noack --scenarios crash,handover
etcd beside Redis (about 14 minutes, 10 of them etcdctl elect's 60 s sessions):
  bench/run.py --only baton,baton-etcd,etcdctl-elect,etcdctl-lock --scenarios startup,crash,handover --reps 10
Exit status: 0 done, 1 harness error (message on stderr), 3 overlapping
workers (two leaders worked at once) in any implementation. Timing targets
are reported, never asserted. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baton_bench import floor, quorum, report, sentinel_group  # noqa: E402
from baton_bench.candidates import (baton_etcd_kind, baton_kind,  # noqa: E402
                                    baton_postgres_kind, baton_socket_kind,
                                    baton_zookeeper_kind, candidate_kind, etcdctl_elect_kind,
                                    etcdctl_lock_kind, peer_kind, zookeeper_peer_kind)
from baton_bench.etcd_server import ETCDCTL, etcd_server, etcd_version  # noqa: E402
from baton_bench.peers_setup import (PEERS_DIR, default_cache_dir, find_redis_py,  # noqa: E402
                                     install_redlock, peer_setup_error)
from baton_bench.postgres_server import find_bindir, postgres_server, server_version  # noqa: E402
from baton_bench.processes import registry  # noqa: E402
from baton_bench.redis_server import harness_error, redis_server  # noqa: E402
from baton_bench.zookeeper_server import zookeeper_server  # noqa: E402
from baton_bench.scenarios import (measure_idle, measure_postgres_baseline,  # noqa: E402
                                   measure_redis_baseline,
                                   measure_scale, measure_startup, measure_switchover,
                                   measure_takeover,
                                   run_context, settings)

REPO_ROOT = Path(__file__).resolve().parent.parent
KINDS = ("baton", "baton-socket", "baton-pg", "baton-zk", "baton-etcd", "baton-sentinel",
         "baton-sentinel-noack", "redis-py", "redlock", "baton-redlock3", "redlock3", "kazoo",
         "etcdctl-elect", "etcdctl-lock")
# The kinds on a server that is slow to start (ZooKeeper's JVM) or slow to take over
# (etcdctl elect's 60 s session): run them with --only.
SLOW_KINDS = ("baton-zk", "kazoo", "baton-etcd", "etcdctl-elect", "etcdctl-lock")
# The Sentinel kinds: baton finding the master through 3 sentinels, with WAIT
# for the replica after every grant and renewal (and without, to show its cost).
SENTINEL_KINDS = ("baton-sentinel", "baton-sentinel-noack")
# Smoke leaves out the ack-off twin (it only answers how much WAIT costs) and
# the slow kinds.
SMOKE_KINDS = tuple(k for k in KINDS if k not in ("baton-sentinel-noack", *SLOW_KINDS))
# crash-minority-down: the crash takeover of the quorum kinds with one of
# their three masters down.
SCENARIOS = ("startup", "crash", "crash-minority-down", "handover", "switchover", "idle", "scale")
QUORUM_KINDS = ("baton-redlock3", "redlock3")
TTL_MS = 3000
EXIT_HARNESS = 1
EXIT_OVERLAP = 3


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true",
                        help="2 repetitions, 2 s idle window, ~50 standbys at scale")
    parser.add_argument("--baton", help="baton binary (default: $BATON_BENCH_BATON or build/baton)")
    parser.add_argument("--worker", help="test_worker binary (default: $BATON_BENCH_WORKER or "
                                         "build/tests/test_worker)")
    parser.add_argument("--floor-probe", help="floor_probe binary (default: $BATON_BENCH_FLOOR_PROBE "
                                              "or build/bench/floor_probe)")
    parser.add_argument("--pg-floor-probe",
                        help="pg_floor_probe binary, for baton-pg (default: "
                             "$BATON_BENCH_PG_FLOOR_PROBE or build/bench/pg_floor_probe)")
    parser.add_argument("--redis-server", default=None, help="redis-server binary (default: PATH)")
    parser.add_argument("--python", default=None, help="python3 with redis-py for the redis-py peer")
    parser.add_argument("--cache-dir", default=None,
                        help="where npm installs redlock (default: ~/.cache/baton-bench)")
    parser.add_argument("--out", default=None, help="directory for logs (default: a new temp dir)")
    parser.add_argument("--json", default=None, help="results file (default: OUT/results.json)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 20, smoke 2)")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated implementations (default: {','.join(KINDS)}; "
                             f"smoke: all but baton-sentinel-noack, {', '.join(SLOW_KINDS)})")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help=f"comma-separated scenarios (default: {','.join(SCENARIOS)})")
    parser.add_argument("--scale-standbys", type=int, default=None,
                        help="standbys at scale (default 1000, smoke 50), over --scale-elections")
    parser.add_argument("--scale-elections", type=int, default=10,
                        help="elections at scale (default 10): 1 puts every standby on one "
                             "election; 1000 with --scale-standbys 2000 is 1,000 elections "
                             "of 3 candidates")
    parser.add_argument("--idle-window", type=float, default=None,
                        help="idle measurement window, s (default 60, smoke 2)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    parser.add_argument("--note", default=None,
                        help="free text recorded with the results, e.g. which commit baton was built from")
    args = parser.parse_args()
    if args.only is None:
        args.only = ",".join(SMOKE_KINDS if args.smoke else KINDS)
    args.only = [k.strip() for k in args.only.split(",") if k.strip()]
    args.scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    for kind in args.only:
        if kind not in KINDS:
            parser.error(f"--only: unknown implementation '{kind}' (known: {', '.join(KINDS)})")
    if args.scale_elections < 1:
        parser.error("--scale-elections: at least 1")
    for scenario in args.scenarios:
        if scenario not in SCENARIOS:
            parser.error(f"--scenarios: unknown scenario '{scenario}' "
                         f"(known: {', '.join(SCENARIOS)})")
    if "baton" not in args.only:
        parser.error("--only must include baton: every ratio is to baton")
    return args


def make_settings(args: argparse.Namespace) -> settings:
    smoke = args.smoke
    elections = args.scale_elections
    standbys = args.scale_standbys or (50 if smoke else 1000)
    per_election = -(-standbys // elections) + 1  # the standbys plus each election's leader
    return settings(
        smoke=smoke,
        reps=args.reps or (2 if smoke else 20),
        ttl_ms=TTL_MS,
        tick_ms=5,
        idle_tick_ms=1000,
        idle_candidates=3,
        idle_warmup_s=3.5 if smoke else 2 * TTL_MS / 1000.0,
        # Smoke checks that every kind runs each scenario and that the report
        # is made, never a figure: its windows are as short as still yield one
        # (two renewals of each idle candidate), since they are most of its time.
        idle_window_s=args.idle_window or (2.0 if smoke else 60.0),
        settle_s=0.5 if smoke else 1.0,
        phase_s=0.5 if smoke else 1.0,
        scale_elections=elections,
        scale_per_election=per_election,
        scale_warmup_s=2.0 if smoke else 10.0,
        scale_window_s=2.0 if smoke else 60.0,
        scale_kills=2 if smoke else 20,
        scale_tick_ms=100,
        scale_releases=1 if smoke else 5,
    )


def binary(flag: str | None, variable: str, default: Path, what: str) -> Path:
    path = Path(flag or os.environ.get(variable) or default)
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise harness_error(f"{what} not found at {path}: build it (cmake --build build --target "
                            f"baton test_worker floor_probe pg_floor_probe) or pass its path")
    return path.resolve()


def setup_kinds(args, cfg: settings, out_dir: Path, versions: dict) -> dict[str, candidate_kind]:
    kinds: dict[str, candidate_kind] = {}
    baton = binary(args.baton, "BATON_BENCH_BATON", REPO_ROOT / "build" / "baton", "baton")
    worker = binary(args.worker, "BATON_BENCH_WORKER", REPO_ROOT / "build" / "tests" / "test_worker",
                    "test_worker")
    kinds["baton"] = baton_kind(baton, worker, cfg.ttl_ms)
    args.worker_path = worker
    # The PostgreSQL start-up floor adds fork+exec of the worker to its own.
    if ("crash" in args.scenarios or "handover" in args.scenarios
            or ("startup" in args.scenarios and "baton-pg" in args.only)):
        args.floor_probe_path = binary(args.floor_probe, "BATON_BENCH_FLOOR_PROBE",
                                       REPO_ROOT / "build" / "bench" / "floor_probe", "floor_probe")
    if "baton-socket" in args.only:
        kinds["baton-socket"] = baton_socket_kind(baton, worker, cfg.ttl_ms,
                                                  PEERS_DIR / "socket_app.py", out_dir)
    if "baton-pg" in args.only:
        kinds["baton-pg"] = baton_postgres_kind(baton, worker, cfg.ttl_ms)
        versions["postgres"] = server_version(find_bindir())
        if {"startup", "crash", "handover"} & set(args.scenarios):
            args.pg_floor_probe_path = binary(args.pg_floor_probe, "BATON_BENCH_PG_FLOOR_PROBE",
                                              REPO_ROOT / "build" / "bench" / "pg_floor_probe",
                                              "pg_floor_probe")
    if "baton-zk" in args.only:
        kinds["baton-zk"] = baton_zookeeper_kind(baton, worker, cfg.ttl_ms)
    if "kazoo" in args.only:
        # Debian's python3-kazoo is importable by the system interpreter.
        python = args.python or "/usr/bin/python3"
        kinds["kazoo"] = zookeeper_peer_kind("kazoo", "kazoo Election", [python],
                                             PEERS_DIR / "kazoo_candidate.py", cfg.ttl_ms)
        versions["python3-kazoo"] = report._first_line(
            [python, "-c", "import kazoo.version; print(kazoo.version.__version__)"])
    if "baton-etcd" in args.only:
        kinds["baton-etcd"] = baton_etcd_kind(baton, worker, cfg.ttl_ms)
    if "etcdctl-lock" in args.only or "etcdctl-elect" in args.only:
        if not ETCDCTL.exists():
            raise harness_error(f"etcdctl not found at {ETCDCTL} (install Debian's etcd-client)")
        versions["etcdctl"] = report._first_line([str(ETCDCTL), "version"])
    if "etcdctl-lock" in args.only:
        kinds["etcdctl-lock"] = etcdctl_lock_kind(ETCDCTL, worker, cfg.ttl_ms)
    if "etcdctl-elect" in args.only:
        python = args.python or "/usr/bin/python3"
        kinds["etcdctl-elect"] = etcdctl_elect_kind(
            [python], PEERS_DIR / "etcdctl_elect_candidate.py", ETCDCTL, worker)
    if any(k in args.only for k in ("baton-etcd", "etcdctl-lock", "etcdctl-elect")):
        versions["etcd"] = etcd_version()
    if "baton-zk" in args.only or "kazoo" in args.only:
        versions["zookeeper"] = report._first_line(["dpkg-query", "-W", "-f", "${Version}",
                                                    "zookeeper"])
    versions["baton"] = report.baton_version(baton)
    versions["baton_binary"] = str(baton)
    if "redis-py" in args.only:
        python, version = find_redis_py(args.python)
        kinds["redis-py"] = peer_kind("redis-py", "redis-py Lock", [python],
                                      PEERS_DIR / "redispy_candidate.py", cfg.ttl_ms)
        versions["python3-redis"] = version
        versions["python3 (peer)"] = report._first_line([python, "--version"])
    if "baton-sentinel" in args.only:
        kinds["baton-sentinel"] = sentinel_group.baton_sentinel_kind(baton, worker, cfg.ttl_ms)
    if "baton-sentinel-noack" in args.only:
        kinds["baton-sentinel-noack"] = sentinel_group.baton_sentinel_noack_kind(baton, worker,
                                                                                cfg.ttl_ms)
    if "baton-redlock3" in args.only:
        kinds["baton-redlock3"] = quorum.baton_redlock_kind(baton, worker, cfg.ttl_ms)
    if "redlock" in args.only or "redlock3" in args.only:
        cache = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
        script, node_version, packages = install_redlock(cache, out_dir / "npm.log")
        if "redlock" in args.only:
            kinds["redlock"] = peer_kind("redlock", "redlock using()", [shutil.which("node")],
                                         script, cfg.ttl_ms)
        if "redlock3" in args.only:
            kinds["redlock3"] = quorum.redlock_quorum_peer(
                "redlock3", "redlock using(), 3 masters", [shutil.which("node")], script,
                cfg.ttl_ms)
        versions["node"] = node_version
        versions.update(packages)
    return kinds


def run(args, cfg: settings, out_dir: Path, procs: registry) -> int:
    seed = args.seed if args.seed is not None else int(time.time())
    redis_binary = args.redis_server or shutil.which("redis-server")
    if not redis_binary:
        raise harness_error("redis-server not found on PATH (install redis-server)")
    document = {
        "date": report.now_utc(),
        "command": shlex.join(sys.argv),
        "cwd": os.getcwd(),
        "mode": "smoke" if cfg.smoke else "full",
        "seed": seed,
        "note": args.note,
        "machine": report.machine_info(),
        "versions": {"redis-server": report.redis_version(redis_binary),
                     "python3 (harness)": sys.version.split()[0]},
        "settings": cfg.__dict__,
        "results": {},
    }
    kinds = setup_kinds(args, cfg, out_dir, document["versions"])
    order = [k for k in KINDS if k in kinds]
    print(f"# baton benchmark ({document['mode']}), {document['date']}")
    print(f"command: {document['command']}  (cwd {document['cwd']})")
    if args.note:
        print(f"note: {args.note}")
    print("machine: " + json.dumps(document["machine"]))
    print("versions: " + json.dumps(document["versions"]))
    print(f"logs: {out_dir}", flush=True)

    ctx = run_context(procs, out_dir, redis_binary, cfg, random.Random(seed))
    results: dict[str, dict] = {k: {} for k in order}
    raw: dict[str, dict] = {k: {} for k in order}

    def step(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)

    # One server of each store for start-up, crash and handover, shared by all kinds on it.
    shared: dict = {}

    def server_for(kind: candidate_kind):
        if kind.store not in shared:
            if kind.store == "postgres":
                shared[kind.store] = postgres_server(procs, out_dir, "shared")
            elif kind.store == "zookeeper":
                shared[kind.store] = zookeeper_server(procs, out_dir, "shared")
            elif kind.store == "etcd":
                shared[kind.store] = etcd_server(procs, out_dir, "shared")
            elif kind.store == "redis3":
                shared[kind.store] = quorum.redis_trio(procs, redis_binary, out_dir, "shared")
            elif kind.store == "sentinel":
                group = sentinel_group.sentinel_group(procs, redis_binary, out_dir, "shared")
                step(f"  sentinel group: master {group.port}, replica {group.replica.port}, "
                     f"sentinels {','.join(str(s.port) for s in group.sentinels)}; "
                     f"ready in {group.ready_s:.1f}s")
                shared[kind.store] = group
            else:
                shared[kind.store] = redis_server(procs, redis_binary, out_dir, "shared")
        return shared[kind.store]

    floor_runs: list[dict] = []

    def measure_floor(when: str) -> None:
        if getattr(args, "floor_probe_path", None):
            step(f"floor ({when}): fork+exec of the worker and a Redis round trip")
            server = shared.get("redis") or server_for(kinds["baton"])
            floor_runs.append(floor.probe(args.floor_probe_path, args.worker_path, server.port,
                                          out_dir / f"floor-{when}.log", 10 if cfg.smoke else 50))
        if getattr(args, "pg_floor_probe_path", None):
            step(f"floor ({when}): a libpq client's first write and a PostgreSQL write round trip")
            pg = kinds["baton-pg"]
            floor_runs.append(floor.probe_postgres(args.pg_floor_probe_path,
                                                   pg.url(server_for(pg).port),
                                                   5 if cfg.smoke else 20))

    try:
        measure_floor("before")
        for scenario in ("startup", "crash", "handover", "switchover"):
            if scenario not in args.scenarios:
                continue
            for kind in order:
                if scenario == "switchover" and kinds[kind].switchover_socket("x", "x") is None:
                    continue  # the peers have no switchover
                step(f"{scenario}: {kind} ({cfg.reps} repetitions)")
                server = server_for(kinds[kind])
                if scenario == "startup":
                    samples = measure_startup(ctx, kinds[kind], server)
                elif scenario == "switchover":
                    samples = measure_switchover(ctx, kinds[kind], server)
                else:
                    samples = measure_takeover(ctx, kinds[kind], server, scenario)
                raw[kind][scenario] = samples
                results[kind][scenario] = report.summaries(samples)
                step(f"  {json.dumps(results[kind][scenario])}")
        if "crash-minority-down" in args.scenarios:
            for kind in order:
                if kind not in QUORUM_KINDS:
                    continue
                step(f"crash-minority-down: {kind}, one of 3 masters down ({cfg.reps} repetitions)")
                trio = quorum.redis_trio(procs, redis_binary, out_dir, f"minority-{kind}")
                try:
                    trio.take_down(2)
                    samples = measure_takeover(ctx, kinds[kind], trio, "crash",
                                               f"minority-down-{kind}")
                finally:
                    trio.stop()
                raw[kind]["crash-minority-down"] = samples
                results[kind]["crash-minority-down"] = report.summaries(samples)
                step(f"  {json.dumps(results[kind]['crash-minority-down'])}")
        measure_floor("after")
        if "sentinel" in shared:
            ctx.problems.extend(shared["sentinel"].verify())
    finally:
        for server in shared.values():
            server.stop()
    baseline = None
    if "idle" in args.scenarios or "scale" in args.scenarios:
        window = min(cfg.idle_window_s, 20.0)
        step(f"redis baseline: a redis-server without clients ({window:.0f}s)")
        baseline = measure_redis_baseline(ctx, window)
        if "baton-pg" in kinds and "idle" in args.scenarios:
            step(f"postgres baseline: a PostgreSQL server without clients ({window:.0f}s)")
            baseline.update(measure_postgres_baseline(ctx, window))
        step("  " + json.dumps(baseline))
    if "idle" in args.scenarios:
        for kind in order:
            if not kinds[kind].measure_idle:
                continue
            step(f"idle: {kind} ({cfg.idle_candidates} candidates, {cfg.idle_window_s:.0f}s window)")
            quorum_kind = kinds[kind].store == "redis3"
            idle = (quorum.measure_idle_quorum(ctx, kinds[kind]) if quorum_kind
                    else measure_idle(ctx, kinds[kind]))
            raw[kind]["idle"] = idle
            results[kind]["idle_view"] = report.idle_view(idle)
            if quorum_kind:
                # A candidate's commands are summed over the three masters.
                results[kind]["idle_view"]["commands_per_s_per_master"] = (
                    idle["commands_per_s_per_master"])
            for extra in ("sentinel_cmds_per_s", "sentinel_cpu_pct", "replica_cpu_pct"):
                if extra in idle:
                    results[kind]["idle_view"][extra] = idle[extra]
            step("  " + json.dumps(results[kind]["idle_view"]))
    scale = None
    if "scale" in args.scenarios:
        step(f"scale: baton, {cfg.scale_elections * cfg.scale_per_election} candidates on "
             f"{cfg.scale_elections} elections")
        scale = measure_scale(ctx, kinds["baton"])
        scale["lag_after_expiry"] = report.summarize(scale["lag_after_expiry_ms"])
        scale["failover_total"] = report.summarize(scale["failover_total_ms"])
        step("  redis CPU %.2f%%, %.1f client commands/s, lag median %s ms" % (
            scale["redis_cpu_pct"], scale["redis_client_cmds_per_s"],
            scale["lag_after_expiry"].get("median")))

    overlaps_found = []
    for kind in order:
        count = 0
        checked = 0
        for log in ctx.logs.get(kind, []):
            log.refresh()
            checked += len(log.intervals)
            for found in log.overlaps():
                count += 1
                overlaps_found.append({"implementation": kind, "log": found.log,
                                       "first": found.first.__dict__,
                                       "second": found.second.__dict__,
                                       "shared_ms": found.shared_ns / 1e6})
            if log.bad_lines:
                ctx.problems.append(f"{log.path}: {len(log.bad_lines)} unparsable lines")
        results[kind]["overlaps"] = count
        results[kind]["intervals_checked"] = checked

    document["machine"]["loadavg_at_end"] = Path("/proc/loadavg").read_text().split()[:3]
    document["results"] = results
    document["raw"] = raw
    document["scale"] = scale
    document["redis_baseline"] = baseline
    document["overlaps"] = overlaps_found
    document["problems"] = ctx.problems
    floor_figures = None
    if floor_runs:
        document["raw_floor"] = floor.merge(floor_runs)
        floor_figures = floor.floors(document["raw_floor"])
        document["floor"] = floor_figures
        document["overheads"] = floor.overheads(results, floor_figures, order)
    document["targets"] = report.evaluate_targets(results["baton"], scale, document.get("overheads"))
    if "baton-pg" in results:
        document["targets"] += report.evaluate_postgres_targets(results["baton-pg"])

    print()
    print(report.headline_table(results, order))
    print()
    print(report.detail_table(results, order))
    quorum_kinds = [k for k in order if k in QUORUM_KINDS]
    if quorum_kinds:
        print()
        print(report.quorum_table(results, quorum_kinds))
    sentinel_kinds = [k for k in order if k in SENTINEL_KINDS]
    if sentinel_kinds:
        print()
        print(report.sentinel_table(results, ["baton"] + sentinel_kinds))
    if floor_figures:
        print()
        print(floor.table(floor_figures, document["overheads"]))
    if scale:
        print()
        print(report.scale_table(scale))
    if baseline:
        print(f"\nredis-server with no clients: {baseline['redis_cpu_pct']:.2f} % of one core "
              f"(its own timers; included in every Redis CPU figure above)")
        if "postgres_cpu_pct" in baseline:
            print(f"PostgreSQL with no clients: {baseline['postgres_cpu_pct']:.2f} % of one core "
                  f"(its background processes; included in baton-pg's store CPU above)")
    print()
    print(report.targets_table(document["targets"]))
    for problem in ctx.problems:
        print(f"problem: {problem}")
    json_path = Path(args.json) if args.json else out_dir / "results.json"
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nresults: {json_path}")
    if overlaps_found:
        print(f"FAIL: {len(overlaps_found)} overlapping worker intervals", file=sys.stderr)
        for found in overlaps_found[:10]:
            print(f"  {found['implementation']}: {found['first']['name']} and "
                  f"{found['second']['name']} shared {found['shared_ms']:.3f} ms in {found['log']}",
                  file=sys.stderr)
        return EXIT_OVERLAP
    return 0


class interrupted(Exception):
    pass


def main() -> int:
    args = parse_args()
    cfg = make_settings(args)
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="baton-bench-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    procs = registry()

    def on_signal(signum, _frame):
        raise interrupted(f"signal {signum}")

    def on_alarm(_signum, _frame):
        raise harness_error("the run exceeded its time limit")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGALRM, on_alarm)
    # A safety net over the whole run; every wait inside is bounded as well.
    # Smoke: below ctest's 400 s timeout, leaving time for cleanup.
    signal.alarm(360 if cfg.smoke else 3 * 3600)
    try:
        return run(args, cfg, out_dir, procs)
    except (harness_error, peer_setup_error) as error:
        print(f"bench: error: {error}", file=sys.stderr)
        return EXIT_HARNESS
    except interrupted as error:
        print(f"bench: interrupted ({error})", file=sys.stderr)
        return EXIT_HARNESS
    finally:
        signal.alarm(0)
        procs.cleanup()


if __name__ == "__main__":
    sys.exit(main())
