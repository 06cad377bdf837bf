#!/usr/bin/env python3
"""A standby's memory on every store kind: baton's ≤ 8 MB RSS goal, checked kind by kind.

For each kind (redis, sentinel, cluster, redlock, postgres, zookeeper, etcd) the run starts the
store on free loopback ports (as bench/run.py does), one baton that leads and then three
standbys on the same election, waits until they have been standing by for a while (acquire
attempts at each lease term, watches and subscriptions armed), and reads each standby's VmRSS
and Pss twice, --settle seconds apart; the later reading counts. Daemon alone, and with its
parked keeper (the process a standby keeps forked, waiting to exec the command).

Usage: bench/standby_memory.py [--kinds redis,etcd] [--baton build/baton] [--json FILE]
Exit status: 0 done (the goal is reported, never asserted), 1 harness error.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baton_bench import proc_stats, quorum, report, sentinel_group  # noqa: E402
from baton_bench.candidates import (WORKER_COMM, baton_etcd_kind, baton_kind,  # noqa: E402
                                    baton_postgres_kind, baton_zookeeper_kind, election_group)
from baton_bench.etcd_server import etcd_server  # noqa: E402
from baton_bench.event_log import event_log  # noqa: E402
from baton_bench.postgres_server import postgres_server  # noqa: E402
from baton_bench.processes import registry  # noqa: E402
from baton_bench.redis_server import harness_error, redis_server  # noqa: E402
from baton_bench.redis_wire import redis_connection  # noqa: E402
from baton_bench.scenarios import wait_single_leader  # noqa: E402
from baton_bench.zookeeper_server import zookeeper_server  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
KINDS = ("redis", "sentinel", "cluster", "redlock", "postgres", "zookeeper", "etcd")
GOAL_KB = 8 * 1024
TTL_MS = 3000
STANDBYS = 3

# Cluster kind: the nodes each cluster's first port stands for.
cluster_nodes_of: dict[int, list[int]] = {}


class baton_cluster_kind(baton_kind):
    """baton with `store.kind: cluster` over the three masters of a cluster."""

    slug = "baton-cluster"

    def argv(self, port, election, name, log, tick_ms):
        argv = super().argv(port, election, name, log, tick_ms)
        nodes = ",".join(f"redis://127.0.0.1:{p}" for p in cluster_nodes_of[port])
        at = argv.index("--redis-url")
        return argv[:at] + ["--store-kind", "cluster", "--cluster-nodes", nodes] + argv[at + 2:]

    def prepare_election(self, port, election):
        # A missing record holds the first start back one ttl: only a later leader.
        pass


class redis_cluster:
    """Three masters, no replicas, every slot assigned (redis-cli --cluster create)."""

    def __init__(self, procs, binary, out_dir, label):
        self.servers = []
        for index in range(3):
            config = f"nodes-{label}-{index}-{uuid.uuid4().hex[:8]}.conf"
            self.servers.append(redis_server(procs, binary, out_dir, f"{label}-{index}",
                                             ["--cluster-enabled", "yes",
                                              "--cluster-config-file", config]))
        self.port = self.servers[0].port
        cluster_nodes_of[self.port] = [s.port for s in self.servers]
        cli = shutil.which("redis-cli")
        if not cli:
            raise harness_error("redis-cli not found (install redis-tools)")
        done = subprocess.run([cli, "--cluster", "create",
                               *[f"127.0.0.1:{s.port}" for s in self.servers],
                               "--cluster-replicas", "0", "--cluster-yes"],
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise harness_error(f"redis-cli --cluster create failed: {done.stdout[-400:]}")
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            if all(self._state_ok(s.port) for s in self.servers):
                return
            time.sleep(0.1)
        raise harness_error("the cluster did not reach cluster_state:ok in 30 s")

    @staticmethod
    def _state_ok(port):
        with redis_connection(port, timeout=1.0) as conn:
            return "cluster_state:ok" in str(conn.command("CLUSTER", "INFO"))

    def stop(self):
        for server in self.servers:
            server.stop()


def store_and_kind(name, procs, redis_binary, baton, worker, out_dir):
    if name == "redis":
        return redis_server(procs, redis_binary, out_dir, name), baton_kind(baton, worker, TTL_MS)
    if name == "sentinel":
        return (sentinel_group.sentinel_group(procs, redis_binary, out_dir, name),
                sentinel_group.baton_sentinel_kind(baton, worker, TTL_MS))
    if name == "cluster":
        return (redis_cluster(procs, redis_binary, out_dir, name),
                baton_cluster_kind(baton, worker, TTL_MS))
    if name == "redlock":
        return (quorum.redis_trio(procs, redis_binary, out_dir, name),
                quorum.baton_redlock_kind(baton, worker, TTL_MS))
    if name == "postgres":
        return postgres_server(procs, out_dir, name), baton_postgres_kind(baton, worker, TTL_MS)
    if name == "zookeeper":
        return zookeeper_server(procs, out_dir, name), baton_zookeeper_kind(baton, worker, TTL_MS)
    if name == "etcd":
        return etcd_server(procs, out_dir, name), baton_etcd_kind(baton, worker, TTL_MS)
    raise harness_error(f"unknown kind {name}")


def mapped(pid):
    """RSS by what is mapped (a file's path, [heap], [anon], ...), KiB, largest first, and
    the anonymous / file-backed split from /proc/PID/status."""
    by_path = {}
    current = None
    try:
        with open(f"/proc/{pid}/smaps") as smaps:
            for line in smaps:
                parts = line.split()
                if parts and "-" in parts[0] and not parts[0].endswith(":"):
                    current = parts[5] if len(parts) > 5 else "[anon]"
                elif parts and parts[0] == "Rss:":
                    by_path[current] = by_path.get(current, 0) + int(parts[1])
        status = {}
        with open(f"/proc/{pid}/status") as text:
            for line in text:
                key, _, value = line.partition(":")
                if key in ("RssAnon", "RssFile", "Threads"):
                    status[key] = int(value.split()[0])
    except OSError:
        return {}
    ranked = sorted(by_path.items(), key=lambda item: -item[1])
    return {"rss_anon_kb": status.get("RssAnon"), "rss_file_kb": status.get("RssFile"),
            "threads": status.get("Threads"),
            "mappings_kb": {Path(path).name if path.startswith("/") else path: kb
                            for path, kb in ranked if kb > 0}}


def reading(member):
    """Daemon alone and daemon + parked keeper: (rss_kb, pss_kb) each."""
    main = proc_stats.memory_kb(member.pid) or (0, 0)
    total_rss, total_pss = 0, 0
    for pid in member.tree():
        if proc_stats.comm_of(pid) in (None, WORKER_COMM):
            continue
        memory = proc_stats.memory_kb(pid)
        if memory:
            total_rss += memory[0]
            total_pss += memory[1]
    return {"rss_kb": main[0], "pss_kb": main[1],
            "rss_kb_with_keeper": total_rss, "pss_kb_with_keeper": total_pss,
            **mapped(member.pid)}


def measure_kind(name, procs, redis_binary, baton, worker, out_dir, settle_s):
    server, kind = store_and_kind(name, procs, redis_binary, baton, worker, out_dir)
    election = f"memory-{name}"
    log = event_log(out_dir / f"{election}.log")
    group = election_group(procs, kind, server.port, election, log, out_dir, 5)
    try:
        leader = group.start(0)
        wait_single_leader(log, 30.0 + TTL_MS / 1000.0, election)
        standbys = [group.start(i) for i in range(1, STANDBYS + 1)]
        time.sleep(settle_s)
        first = [reading(m) for m in standbys]
        time.sleep(settle_s)
        last = [reading(m) for m in standbys]
        log.refresh()
        live = [item.name for item in log.live()]
        if live != [leader.name]:
            raise harness_error(f"{name}: expected {leader.name} alone to lead, saw {live}")
        return {"standbys": last, "standbys_first_reading": first,
                "leader": reading(leader),
                "rss_kb_median": statistics.median(r["rss_kb"] for r in last),
                "pss_kb_median": statistics.median(r["pss_kb"] for r in last),
                "rss_kb_with_keeper_median": statistics.median(r["rss_kb_with_keeper"]
                                                               for r in last)}
    finally:
        group.stop_all()
        group.close()
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--baton", default=str(REPO_ROOT / "build" / "baton"))
    parser.add_argument("--worker", default=str(REPO_ROOT / "build" / "tests" / "test_worker"))
    parser.add_argument("--settle", type=float, default=2 * TTL_MS / 1000.0 + 2.0,
                        help="seconds between the standbys' start and the first reading, and "
                             "between the two readings")
    parser.add_argument("--out", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    for kind in kinds:
        if kind not in KINDS:
            parser.error(f"--kinds: unknown kind '{kind}' (known: {', '.join(KINDS)})")
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="baton-memory-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    redis_binary = shutil.which("redis-server")
    baton, worker = Path(args.baton).resolve(), Path(args.worker).resolve()
    procs = registry()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    document = {"date": report.now_utc(), "machine": report.machine_info(),
                "baton": report.baton_version(baton), "ttl_ms": TTL_MS,
                "settle_s": args.settle, "goal_kb": GOAL_KB, "kinds": {}}
    try:
        for kind in kinds:
            print(f"[{time.strftime('%H:%M:%S')}] {kind}", flush=True)
            document["kinds"][kind] = measure_kind(kind, procs, redis_binary, baton, worker,
                                                   out_dir, args.settle)
    except harness_error as error:
        print(f"standby_memory: error: {error}", file=sys.stderr)
        return 1
    finally:
        procs.cleanup()
    print("\n| kind | standby RSS (MB) | standby PSS (MB) | with parked keeper, RSS (MB) "
          "| leader RSS, without the app (MB) | ≤ 8 MB |")
    print("|---|---|---|---|---|---|")
    for kind, figures in document["kinds"].items():
        rss = figures["rss_kb_median"]
        print(f"| {kind} | {rss / 1024:.1f} | {figures['pss_kb_median'] / 1024:.1f} | "
              f"{figures['rss_kb_with_keeper_median'] / 1024:.1f} | "
              f"{figures['leader']['rss_kb'] / 1024:.1f} | "
              f"{'yes' if rss <= GOAL_KB else f'no, +{(rss - GOAL_KB) / 1024:.1f} MB'} |")
    print("\nper kind, the first standby: anonymous / file-backed RSS (MB), threads, largest mappings (MB)")
    for kind, figures in document["kinds"].items():
        first = figures["standbys"][0]
        top = ", ".join(f"{name} {kb / 1024:.2f}"
                        for name, kb in list(first.get("mappings_kb", {}).items())[:8])
        print(f"- {kind}: {(first.get('rss_anon_kb') or 0) / 1024:.1f} / "
              f"{(first.get('rss_file_kb') or 0) / 1024:.1f}, {first.get('threads')} threads; {top}")
    json_path = Path(args.json) if args.json else out_dir / "standby-memory.json"
    json_path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nresults: {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
