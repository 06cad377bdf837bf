"""The measured scenarios: start-up, crash takeover, graceful handover, idle cost, scale.

Every time comes from the workers' event log (CLOCK_MONOTONIC ns written by
the app itself) or from the harness's own CLOCK_MONOTONIC reading taken right
before it acts (spawn, signal, PTTL); the daemons' own reports are never used.
Every wait is bounded; anything that does not happen in time is a
harness_error, which fails the run.
"""

from __future__ import annotations

import random
import subprocess
import re
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import proc_stats, takeover_hops
from .candidates import BATON_LOG_LEVEL, baton_kind, candidate, candidate_kind, election_group
from .event_log import event_log, interval
from .processes import registry, wait_exit
from .postgres_server import postgres_server
from .redis_server import harness_error, redis_server
from .redis_wire import redis_connection
from .sentinel_group import sentinel_group

NS_PER_MS = 1_000_000


@dataclass
class settings:
    smoke: bool
    reps: int
    ttl_ms: int
    tick_ms: int
    idle_tick_ms: int
    idle_candidates: int
    idle_warmup_s: float
    idle_window_s: float
    settle_s: float
    phase_s: float
    scale_elections: int
    scale_per_election: int
    scale_warmup_s: float
    scale_window_s: float
    scale_kills: int
    scale_tick_ms: int
    scale_releases: int


@dataclass
class run_context:
    procs: registry
    out_dir: Path
    redis_binary: str
    config: settings
    rng: random.Random
    logs: dict[str, list[event_log]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def new_log(self, kind: candidate_kind, name: str) -> event_log:
        log = event_log(self.out_dir / f"{name}.log")
        self.logs.setdefault(kind.slug, []).append(log)
        return log

    def finish_group(self, group: election_group) -> None:
        self.problems.extend(group.stop_all())
        group.close()


def _ms(ns: int) -> float:
    return round(ns / NS_PER_MS, 3)


def wait_single_leader(log: event_log, timeout_s: float, what: str) -> interval:
    def one_working(current: event_log) -> interval | None:
        live = current.live()
        return live[0] if len(live) == 1 and live[0].ticks > 0 else None

    found = log.wait_for(one_working, timeout_s)
    if found is None:
        raise harness_error(f"{what}: no single working leader within {timeout_s:.0f}s "
                            f"(live: {[i.name for i in log.live()]}; see {log.path})")
    return found


# --- start-up ----------------------------------------------------------------

def measure_startup(ctx: run_context, kind: candidate_kind, server: redis_server) -> dict:
    """Process start to the worker's `start` line, each time on a free lease."""
    log = ctx.new_log(kind, f"startup-{kind.slug}")
    samples = []
    for rep in range(ctx.config.reps):
        group = election_group(ctx.procs, kind, server.port, f"startup-{kind.slug}-{rep}", log,
                               ctx.out_dir, ctx.config.tick_ms)
        try:
            member = group.start(0)
            item = log.wait_for(
                lambda current: current.first_start_after(member.spawned_ns, name=member.name),
                timeout_s=20.0)
            if item is None:
                raise harness_error(f"start-up {kind.slug} rep {rep}: the worker never started "
                                    f"(see {ctx.out_dir / (group.election + '.out')})")
            samples.append(_ms(item.start_ns - member.spawned_ns))
        finally:
            ctx.finish_group(group)
    return {"startup_ms": samples}


# --- crash takeover and graceful handover ------------------------------------

def _later_expiry(kind: candidate_kind, conn, election: str, expiry_ns: int | None) -> int | None:
    """The lease's expiry read again after the kill. A renewal that landed between the first
    read and the kill moved the expiry one renew interval later (one run read 2,001 ms left and
    measured a 1 s "lag"); both reads count from before their question, so each is a bound the
    expiry cannot precede, and the later one is the tighter."""
    if expiry_ns is None:
        return None
    asked = time.monotonic_ns()
    pttl = kind.remaining_ms(conn, election)
    if pttl is None or pttl <= 0:
        return expiry_ns
    return max(expiry_ns, asked + int(pttl * NS_PER_MS))


def measure_takeover(ctx: run_context, kind: candidate_kind, server: redis_server,
                     mode: str, election: str | None = None) -> dict:
    """mode 'crash': SIGKILL the leader's process groups; 'handover': SIGTERM it."""
    cfg = ctx.config
    election = election or f"{mode}-{kind.slug}"
    log = ctx.new_log(kind, election)
    group = election_group(ctx.procs, kind, server.port, election, log, ctx.out_dir,
                           cfg.tick_ms)
    ttl_s = cfg.ttl_ms / 1000.0
    result: dict[str, list] = (
        {"lag_after_expiry_ms": [], "failover_total_ms": [], "pttl_at_kill_ms": []}
        if mode == "crash" else {"handover_gap_ms": [], "handover_total_ms": []})
    conn = server.connect()
    spans: list[tuple[int, int]] = []  # (expiry or old stop line, successor's start), ns
    try:
        group.start_all(3)
        wait_single_leader(log, 15.0 + ttl_s, election)
        for rep in range(cfg.reps):
            # Let a restarted candidate settle into standby, and vary the phase
            # of the kill against the leader's renewal cycle.
            time.sleep(cfg.settle_s + ctx.rng.uniform(0.0, cfg.phase_s))
            leader_iv = wait_single_leader(log, 10.0 + ttl_s, f"{election} rep {rep}")
            leader = group.by_name(leader_iv.name)
            if leader is None:
                raise harness_error(f"{election}: worker {leader_iv.name} belongs to no candidate")
            watch = None
            if mode == "crash":
                # Counted from before the question: the lease cannot expire
                # earlier than that (a renewal only moves it later), so a
                # harness delayed after the reply cannot make a lag look shorter.
                asked = time.monotonic_ns()
                pttl = kind.remaining_ms(conn, election)
                # None: the store has no expiry to read before the kill. A ZooKeeper lease
                # lives as long as its holder's session: the harness's own watch on the
                # holder's node, set now, hears when the session expired; etcd's expiry is
                # read after the kill.
                expiry_ns = None if pttl is None else asked + int(pttl * NS_PER_MS)
                watch = kind.expiry_watch(server, election) if pttl is None else None
                acted = time.monotonic_ns()
                leader.crash(ctx.procs)
                expiry_ns = _later_expiry(kind, conn, election, expiry_ns)
                if watch is not None:
                    # ZooKeeper: the holder's node deleted, its session expired. The watches'
                    # sessions close once the successor started: a close is a write, which
                    # would queue ahead of a successor's own (baton's take) in the server.
                    try:
                        expiry_ns = watch.deleted_ns(2 * ttl_s + 10.0)
                    except BaseException:
                        watch.close()
                        raise
                elif expiry_ns is None:
                    expiry_ns = kind.expiry_after_kill_ns(server, election)
            else:
                acted = time.monotonic_ns()
                leader.terminate()
            # A crashed leader's lease lasts the ttl, or longer where the peer cannot set it
            # (etcdctl elect's 60 s session).
            bound_s = 2 * max(ttl_s, kind.lease_bound_s or 0.0) + 10.0
            successor = log.wait_for(
                lambda current: current.first_start_after(acted, exclude_name=leader.name),
                timeout_s=bound_s)
            if watch is not None:
                watch.close()
            if successor is None:
                raise harness_error(f"{election} rep {rep}: no other worker started within "
                                    f"{bound_s:.0f}s of the {mode}")
            if mode == "crash":
                if expiry_ns is not None:
                    result["lag_after_expiry_ms"].append(_ms(successor.start_ns - expiry_ns))
                    spans.append((expiry_ns, successor.start_ns))
                    if pttl is not None:
                        result["pttl_at_kill_ms"].append(pttl)
                result["failover_total_ms"].append(_ms(successor.start_ns - acted))
            else:
                old = log.intervals[(leader_iv.name, leader_iv.pid)]
                if old.stop_ns is None:
                    raise harness_error(f"{election} rep {rep}: the old worker has no stop line "
                                        f"although a successor started")
                result["handover_gap_ms"].append(_ms(successor.start_ns - old.stop_ns))
                spans.append((old.stop_ns, successor.start_ns))
                result["handover_total_ms"].append(_ms(successor.start_ns - acted))
            if not wait_exit(leader.proc, 15.0):
                ctx.problems.append(f"{election} rep {rep}: {leader.name} still running 15s "
                                    f"after the {mode}")
                leader.crash(ctx.procs)
                wait_exit(leader.proc, 5.0)
            group.note_workers()
            group.start(leader.index)
    finally:
        conn.close()
        ctx.finish_group(group)
    if BATON_LOG_LEVEL == "debug" and isinstance(kind, baton_kind):
        lines = takeover_hops.timing_lines(ctx.out_dir / f"{election}.out")
        split = [lines.crash(*span) if mode == "crash" else lines.handover(*span)
                 for span in spans]
        hops = [h for h in split if h is not None]
        result["hops_us"] = hops
        result["hops"] = takeover_hops.summarize(
            hops, takeover_hops.CRASH_HOPS if mode == "crash" else takeover_hops.HANDOVER_HOPS)
    return result


def measure_switchover(ctx: run_context, kind: candidate_kind, server: redis_server) -> dict:
    """`baton switchover --to NODE` on the leader, NODE another candidate: from the old app's
    stop line to NODE's app's start line (the gap), and from the command to it (the total),
    as measure_takeover's handover counts them for a SIGTERM."""
    cfg = ctx.config
    election = f"switchover-{kind.slug}"
    log = ctx.new_log(kind, election)
    group = election_group(ctx.procs, kind, server.port, election, log, ctx.out_dir,
                           cfg.tick_ms)
    ttl_s = cfg.ttl_ms / 1000.0
    result: dict[str, list] = {"switchover_gap_ms": [], "switchover_total_ms": []}
    try:
        group.start_all(3)
        wait_single_leader(log, 15.0 + ttl_s, election)
        for rep in range(cfg.reps):
            # The leader lists the candidates with every renewal; the old leader cools down
            # for a ttl after each switchover, so it may be the next target only after that.
            time.sleep(max(cfg.settle_s, ttl_s) + ctx.rng.uniform(0.0, cfg.phase_s))
            leader_iv = wait_single_leader(log, 10.0 + ttl_s, f"{election} rep {rep}")
            leader = group.by_name(leader_iv.name)
            if leader is None:
                raise harness_error(f"{election}: worker {leader_iv.name} belongs to no candidate")
            others = [m for m in group.members.values() if m.name != leader.name and m.alive()]
            target = others[rep % len(others)]
            argv = [str(kind.baton), "switchover", "--socket",
                    str(kind.switchover_socket(election, leader.name)), "--to", target.name]
            acted = time.monotonic_ns()
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            if done.returncode != 0:
                raise harness_error(f"{election} rep {rep}: baton switchover exited "
                                    f"{done.returncode}: {done.stderr.strip()}")
            successor = log.wait_for(
                lambda current: current.first_start_after(acted, exclude_name=leader.name),
                timeout_s=2 * ttl_s + 10.0)
            if successor is None or successor.name != target.name:
                raise harness_error(f"{election} rep {rep}: {target.name} did not take over "
                                    f"(first start: {successor.name if successor else None})")
            old = log.intervals[(leader_iv.name, leader_iv.pid)]
            if old.stop_ns is None:
                raise harness_error(f"{election} rep {rep}: the old worker has no stop line")
            result["switchover_gap_ms"].append(_ms(successor.start_ns - old.stop_ns))
            result["switchover_total_ms"].append(_ms(successor.start_ns - acted))
            group.note_workers()
    finally:
        ctx.finish_group(group)
    return result


# --- idle cost -----------------------------------------------------------------

MONITOR_LINE = re.compile(r'^\+?[\d.]+ \[\d+ ([^\]]+)\] "([^"]*)"')


class monitor_counter:
    """Counts client commands per client address with MONITOR (script-internal calls excluded)."""

    def __init__(self, port: int) -> None:
        self._conn = redis_connection(port, timeout=0.5)
        self._conn.send("MONITOR")
        self._conn.set_timeout(5.0)
        if self._conn.read_reply() != "OK":
            raise harness_error("MONITOR was refused")
        self._conn.set_timeout(0.25)
        self._lock = threading.Lock()
        self._counting = False
        self._stop = threading.Event()
        self.counts: dict[str, dict[str, int]] = {}
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                line = self._conn.read_reply()
            except TimeoutError:
                continue
            except Exception as error:  # noqa: BLE001 -- reported by end()
                if not self._stop.is_set():
                    self.error = f"MONITOR connection failed: {error}"
                return
            if not isinstance(line, str):
                continue
            match = MONITOR_LINE.match(line)
            if match is None or match.group(1) == "lua":
                continue
            with self._lock:
                if self._counting:
                    per_client = self.counts.setdefault(match.group(1), {})
                    command = match.group(2).lower()
                    per_client[command] = per_client.get(command, 0) + 1

    def begin(self) -> None:
        with self._lock:
            self.counts.clear()
            self._counting = True

    def end(self) -> dict[str, dict[str, int]]:
        with self._lock:
            self._counting = False
            if self.error:
                raise harness_error(self.error)
            return {client: dict(c) for client, c in self.counts.items()}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        self._conn.close()


def _client_ports(members: list[candidate], port: int) -> dict[int, str]:
    """Local port of each connection to Redis -> name of the candidate owning it."""
    inode_ports = proc_stats.loopback_client_ports(port)
    owners: dict[int, str] = {}
    for member in members:
        for pid in member.tree():
            for inode in proc_stats.socket_inodes(pid):
                if inode in inode_ports:
                    owners[inode_ports[inode]] = member.name
    return owners


def _cpu_by_pid(members: list[candidate]) -> dict[int, float]:
    values: dict[int, float] = {}
    for member in members:
        for pid in member.cost_pids():
            cpu = proc_stats.cpu_seconds(pid)
            if cpu is not None:
                values[pid] = cpu
    return values


def _member_figures(member: candidate, leader_name: str, cpu_before: dict[int, float],
                    cpu_after: dict[int, float], elapsed: float,
                    commands: dict[str, int]) -> dict:
    """Memory now, CPU over the window and store commands of one candidate."""
    pids = member.cost_pids()
    memory = [proc_stats.memory_kb(pid) for pid in pids]
    memory = [m for m in memory if m is not None]
    main_memory = proc_stats.memory_kb(member.pid) or (0, 0)
    cpu = sum(cpu_after[p] - cpu_before[p] for p in pids if p in cpu_after and p in cpu_before)
    return {
        "name": member.name,
        "role": "leader" if member.name == leader_name else "standby",
        "processes": len(pids),
        "rss_kb_main": main_memory[0],
        "pss_kb_main": main_memory[1],
        "rss_kb": sum(m[0] for m in memory),
        "pss_kb": sum(m[1] for m in memory),
        "cpu_s_per_min": round(cpu / elapsed * 60.0, 4),
        # Redis commands, or PostgreSQL statements, this candidate's sessions sent.
        "redis_cmds_per_s": round(sum(commands.values()) / elapsed, 3),
        "redis_commands": commands,
    }


def measure_idle(ctx: run_context, kind: candidate_kind) -> dict:
    if kind.store == "postgres":
        return measure_idle_postgres(ctx, kind)
    if kind.store == "sentinel":
        # Its own deployment, as the other kinds get their own server.
        return measure_idle_redis(ctx, kind, sentinel_group(ctx.procs, ctx.redis_binary,
                                                            ctx.out_dir, f"idle-{kind.slug}"))
    return measure_idle_redis(ctx, kind)


def measure_idle_redis(ctx: run_context, kind: candidate_kind, server=None) -> dict:
    """RSS, CPU and Redis commands of N candidates doing nothing but compete.

    `server`: a dedicated server the function takes over (and stops), with
    `port`, `connect()` and `cpu_seconds()` of the server holding the leases;
    by default a new redis_server. One with `idle_snapshot()` and
    `idle_figures(before, after)` (a Sentinel deployment) adds what the rest of
    it did over the same window.
    """
    cfg = ctx.config
    if server is None:
        server = redis_server(ctx.procs, ctx.redis_binary, ctx.out_dir, f"idle-{kind.slug}")
    snapshot = getattr(server, "idle_snapshot", None)
    election = f"idle-{kind.slug}"
    log = ctx.new_log(kind, election)
    group = election_group(ctx.procs, kind, server.port, election, log, ctx.out_dir,
                           cfg.idle_tick_ms)
    monitor = None
    try:
        group.start_all(cfg.idle_candidates)
        leader_iv = wait_single_leader(log, 15.0 + cfg.ttl_ms / 1000.0, election)
        time.sleep(cfg.idle_warmup_s)
        members = list(group.members.values())
        monitor = monitor_counter(server.port)
        with server.connect() as conn:
            owners = _client_ports(members, server.port)
            calls_before = conn.command_calls()
            usec_before = conn.command_calls("usec")
            total_before = int(conn.info("stats")["total_commands_processed"])
            redis_cpu_before = server.cpu_seconds()
            cpu_before = _cpu_by_pid(members)
            extra_before = snapshot() if snapshot else None
            started = time.monotonic()
            monitor.begin()
            time.sleep(cfg.idle_window_s)
            counts = monitor.end()
            elapsed = time.monotonic() - started
            extras = server.idle_figures(extra_before, snapshot()) if snapshot else {}
            cpu_after = _cpu_by_pid(members)
            redis_cpu_after = server.cpu_seconds()
            calls_after = conn.command_calls()
            total_after = int(conn.info("stats")["total_commands_processed"])
            owners.update(_client_ports(members, server.port))
        log.refresh()
        live = log.live()
        if len(live) != 1 or live[0].name != leader_iv.name:
            ctx.problems.append(f"{election}: the leader changed during the idle window")
        per_member = []
        attributed = 0
        for member in members:
            ports = {p for p, owner in owners.items() if owner == member.name}
            commands: dict[str, int] = {}
            for client, per_command in counts.items():
                if int(client.rsplit(":", 1)[1]) in ports:
                    for command, n in per_command.items():
                        commands[command] = commands.get(command, 0) + n
            attributed += sum(commands.values())
            per_member.append(_member_figures(member, leader_iv.name, cpu_before, cpu_after,
                                              elapsed, commands))
        total_client = sum(sum(c.values()) for c in counts.values())
        return {
            "window_s": round(elapsed, 3),
            "candidates": per_member,
            "redis_cpu_pct": round((redis_cpu_after - redis_cpu_before) / elapsed * 100.0, 3),
            "redis_client_cmds_per_s": round(total_client / elapsed, 3),
            "redis_unattributed_cmds_per_s": round((total_client - attributed) / elapsed, 3),
            "redis_total_commands_per_s": round((total_after - total_before) / elapsed, 3),
            "redis_commandstats_delta": {
                name: calls_after.get(name, 0) - calls_before.get(name, 0)
                for name in calls_after if calls_after.get(name, 0) != calls_before.get(name, 0)},
            **extras,
        }
    finally:
        if monitor is not None:
            monitor.close()
        ctx.finish_group(group)
        if hasattr(server, "verify"):
            ctx.problems.extend(server.verify())
        server.stop()


def measure_idle_postgres(ctx: run_context, kind: candidate_kind) -> dict:
    """As measure_idle_redis, on a PostgreSQL server that logs every client statement."""
    cfg = ctx.config
    server = postgres_server(ctx.procs, ctx.out_dir, f"idle-{kind.slug}", log_statements=True)
    election = f"idle-{kind.slug}"
    log = ctx.new_log(kind, election)
    group = election_group(ctx.procs, kind, server.port, election, log, ctx.out_dir,
                           cfg.idle_tick_ms)
    try:
        group.start_all(cfg.idle_candidates)
        leader_iv = wait_single_leader(log, 15.0 + cfg.ttl_ms / 1000.0, election)
        time.sleep(cfg.idle_warmup_s)
        members = list(group.members.values())
        offset = server.log_offset()
        server_cpu_before = server.cpu_seconds()
        cpu_before = _cpu_by_pid(members)
        started = time.monotonic()
        time.sleep(cfg.idle_window_s)
        elapsed = time.monotonic() - started
        cpu_after = _cpu_by_pid(members)
        server_cpu_after = server.cpu_seconds()
        # Statements are logged as they start; one still being written when the
        # window closed is counted in the next read, not lost from this one.
        counts = server.statements_since(offset)
        log.refresh()
        live = log.live()
        if len(live) != 1 or live[0].name != leader_iv.name:
            ctx.problems.append(f"{election}: the leader changed during the idle window")
        per_member = []
        attributed = 0
        for member in members:
            # baton names its sessions "baton <node id>" and "baton <node id> (listen)".
            sessions = {app: n for app, n in counts.items()
                        if app.split(" ")[1:2] == [member.name] and app.startswith("baton ")}
            attributed += sum(sessions.values())
            per_member.append(_member_figures(member, leader_iv.name, cpu_before, cpu_after,
                                              elapsed, sessions))
        total = sum(counts.values())
        return {
            "window_s": round(elapsed, 3),
            "candidates": per_member,
            "redis_cpu_pct": round((server_cpu_after - server_cpu_before) / elapsed * 100.0, 3),
            "redis_client_cmds_per_s": round(total / elapsed, 3),
            "redis_unattributed_cmds_per_s": round((total - attributed) / elapsed, 3),
            "statements_by_session": counts,
        }
    finally:
        ctx.finish_group(group)
        server.stop()


def _server_alone_cpu(server, window_s: float) -> tuple[float, float]:
    """(window, % of one core) of a store server nobody talks to; stops it."""
    try:
        time.sleep(1.0)
        before = server.cpu_seconds()
        started = time.monotonic()
        time.sleep(window_s)
        elapsed = time.monotonic() - started
        return round(elapsed, 3), round((server.cpu_seconds() - before) / elapsed * 100.0, 3)
    finally:
        server.stop()


def measure_postgres_baseline(ctx: run_context, window_s: float) -> dict:
    """CPU of a PostgreSQL server nobody talks to (its background processes)."""
    window, pct = _server_alone_cpu(postgres_server(ctx.procs, ctx.out_dir, "baseline"), window_s)
    return {"window_s": window, "postgres_cpu_pct": pct}


def measure_redis_baseline(ctx: run_context, window_s: float) -> dict:
    """CPU of a redis-server nobody talks to (its own timers), to read the others against."""
    window, pct = _server_alone_cpu(
        redis_server(ctx.procs, ctx.redis_binary, ctx.out_dir, "baseline"), window_s)
    return {"window_s": window, "redis_cpu_pct": pct}


# --- scale -----------------------------------------------------------------------

# Commands a baton sends itself (the rest in commandstats run inside its scripts).
BATON_CLIENT_COMMANDS = ("evalsha", "eval", "subscribe", "ping", "auth", "select", "hello",
                         "client|setname", "script|load")


def measure_scale(ctx: run_context, kind: candidate_kind) -> dict:
    """Many baton candidates on a few elections against one redis-server."""
    cfg = ctx.config
    total = cfg.scale_elections * cfg.scale_per_election
    standbys = total - cfg.scale_elections
    # About 2 MB of its own (PSS) per idle daemon and 0.3 MB per parked keeper,
    # most of the 8 MB RSS being shared pages; ask for 5 MB each to stay clear.
    needed_kb = total * 5 * 1024
    available_kb = proc_stats.mem_available_kb()
    if available_kb < needed_kb:
        raise harness_error(f"scale: {total} daemons need about {needed_kb // 1024} MB, only "
                            f"{available_kb // 1024} MB available (use --scale-standbys)")
    server = redis_server(ctx.procs, ctx.redis_binary, ctx.out_dir, "scale")
    groups = [election_group(ctx.procs, kind, server.port, f"scale-{kind.slug}-{e}",
                             ctx.new_log(kind, f"scale-{kind.slug}-{e}"), ctx.out_dir,
                             cfg.scale_tick_ms)
              for e in range(cfg.scale_elections)]
    result: dict = {"elections": cfg.scale_elections, "candidates": total, "standbys": standbys}
    try:
        spawn_started = time.monotonic()
        spawned = 0
        for index in range(cfg.scale_per_election):
            for group in groups:
                group.start(index)
                spawned += 1
                if spawned % 50 == 0:
                    time.sleep(0.05)  # keep the 2-core box responsive while spawning
        result["spawn_s"] = round(time.monotonic() - spawn_started, 3)
        for group in groups:
            wait_single_leader(group.log, 60.0, group.election)
        dead = [m.name for g in groups for m in g.members.values() if not m.alive()]
        if dead:
            raise harness_error(f"scale: {len(dead)} candidates exited on their own, e.g. "
                                f"{dead[:3]} (see {ctx.out_dir}/scale-*.out)")
        time.sleep(cfg.scale_warmup_s)
        members = [m for g in groups for m in g.members.values()]
        with server.connect() as conn:
            calls_before = conn.command_calls()
            usec_before = conn.command_calls("usec")
            total_before = int(conn.info("stats")["total_commands_processed"])
            redis_cpu_before = server.cpu_seconds()
            cpu_before = _cpu_by_pid(members)
            started = time.monotonic()
            time.sleep(cfg.scale_window_s)
            elapsed = time.monotonic() - started
            cpu_after = _cpu_by_pid(members)
            redis_cpu_after = server.cpu_seconds()
            calls_after = conn.command_calls()
            usec_after = conn.command_calls("usec")
            total_after = int(conn.info("stats")["total_commands_processed"])
            clients = int(conn.info("clients")["connected_clients"])
            # What other clients of this Redis see while the election idles
            # (the herd's once-a-term attempts included): a window of its own
            # after the cost's, whose PINGs would count in it.
            probe = _latency_probe(server.port, _idle_probe_s(cfg) + 10.0)
            time.sleep(_idle_probe_s(cfg))
            idle_rtts = probe.stop()
        delta = {name: calls_after.get(name, 0) - calls_before.get(name, 0) for name in calls_after}
        client_cmds = sum(delta.get(name, 0) for name in BATON_CLIENT_COMMANDS)
        # Names repeat across elections (c0g1 in each): a leader is its group's member.
        leaders = {id(g.by_name(g.log.live()[0].name)) for g in groups if g.log.live()}
        daemon_cpu = []
        memory = []
        for member in members:
            cpu = sum(cpu_after[p] - cpu_before[p] for p in member.cost_pids()
                      if p in cpu_after and p in cpu_before)
            if id(member) not in leaders:
                daemon_cpu.append(cpu / elapsed * 60.0)
            mem = proc_stats.memory_kb(member.pid)
            if mem is not None and id(member) not in leaders:
                memory.append(mem)
        result.update({
            "window_s": round(elapsed, 3),
            "redis_cpu_pct": round((redis_cpu_after - redis_cpu_before) / elapsed * 100.0, 3),
            "idle_ping_ms_median": round(statistics.median(idle_rtts), 3) if idle_rtts else None,
            "idle_ping_ms_p999": round(sorted(idle_rtts)[int(len(idle_rtts) * 0.999)], 3)
            if idle_rtts else None,
            "idle_ping_ms_max": round(max(idle_rtts), 3) if idle_rtts else None,
            "idle_pings": len(idle_rtts),
            "redis_connected_clients": clients,
            "redis_client_cmds_per_s": round(client_cmds / elapsed, 3),
            "redis_client_cmds_per_s_per_candidate": round(client_cmds / elapsed / total, 4),
            "redis_total_commands_per_s": round((total_after - total_before) / elapsed, 3),
            "redis_commandstats_delta": {k: v for k, v in delta.items() if v},
            # Time Redis spent inside each command (a script's inner calls count in
            # both the script and themselves), in µs per call.
            "redis_usec_per_call": {k: round((usec_after.get(k, 0) - usec_before.get(k, 0)) / v, 2)
                                    for k, v in delta.items() if v},
            "standby_cpu_s_per_min_median": round(statistics.median(daemon_cpu), 5),
            "standby_cpu_s_per_min_max": round(max(daemon_cpu), 5),
            "standby_cpu_s_per_min_sum": round(sum(daemon_cpu), 4),
            "standby_rss_kb_median": statistics.median(m[0] for m in memory),
            "standby_pss_kb_median": statistics.median(m[1] for m in memory),
            "standby_pss_mb_sum": round(sum(m[1] for m in memory) / 1024, 1),
        })
        lags, totals = [], []
        with server.connect() as conn:
            for kill in range(cfg.scale_kills):
                group = groups[kill % len(groups)]
                leader_iv = wait_single_leader(group.log, 10.0 + cfg.ttl_ms / 1000.0,
                                               f"{group.election} kill {kill}")
                leader = group.by_name(leader_iv.name)
                time.sleep(ctx.rng.uniform(0.0, cfg.phase_s))
                asked = time.monotonic_ns()
                remaining = group.kind.remaining_ms(conn, group.election)
                acted = time.monotonic_ns()
                leader.crash(ctx.procs)
                expiry_ns = _later_expiry(group.kind, conn, group.election,
                                          asked + int(remaining * NS_PER_MS))
                successor = group.log.wait_for(
                    lambda current: current.first_start_after(acted, exclude_name=leader.name),
                    timeout_s=2 * cfg.ttl_ms / 1000.0 + 10.0)
                if successor is None:
                    raise harness_error(f"scale kill {kill}: no takeover in {group.election}")
                lags.append(_ms(successor.start_ns - expiry_ns))
                totals.append(_ms(successor.start_ns - acted))
                wait_exit(leader.proc, 5.0)
        result["lag_after_expiry_ms"] = lags
        result["failover_total_ms"] = totals
        result["releases"] = [_release_storm(ctx, groups[r % len(groups)], server,
                                             result["redis_total_commands_per_s"])
                              for r in range(cfg.scale_releases)]
        return result
    finally:
        for group in groups:
            ctx.finish_group(group)
        server.stop()


# How long the scale scenario's idle latency probe runs: a quarter of its
# cost window (15 s, five terms of the bench's 3 s ttl, in a full run).
def _idle_probe_s(cfg) -> float:
    return min(15.0, max(2.0, cfg.scale_window_s / 4))


class _latency_probe:
    """PINGs Redis on its own connection every millisecond, in a thread, and keeps the round
    trips: what any other client of this Redis sees while a herd of standbys wakes."""

    def __init__(self, port: int, bound_s: float = 60.0) -> None:
        self._bound_s = bound_s
        self._conn = redis_connection(port, timeout=5.0)
        self._stop = threading.Event()
        self.rtts_ms: list[float] = []
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        deadline = time.monotonic() + self._bound_s  # bounded even if nobody stops it
        while not self._stop.is_set() and time.monotonic() < deadline:
            sent = time.monotonic_ns()
            try:
                self._conn.command("PING")
            except Exception as error:  # noqa: BLE001 -- reported by stop()
                self.error = f"latency probe: {error}"
                return
            self.rtts_ms.append((time.monotonic_ns() - sent) / NS_PER_MS)
            self._stop.wait(0.001)

    def stop(self) -> list[float]:
        self._stop.set()
        self._thread.join(timeout=5.0)
        self._conn.close()
        if self.error:
            raise harness_error(self.error)
        return self.rtts_ms


def _release_storm(ctx: run_context, group: election_group, server, baseline_per_s: float) -> dict:
    """A graceful release (SIGTERM to the leader) in an election with many standbys: the
    handover gap, the Redis commands the wake-up cost beyond the steady rate, and the Redis
    round trip other clients saw meanwhile."""
    cfg = ctx.config
    leader_iv = wait_single_leader(group.log, 10.0 + cfg.ttl_ms / 1000.0,
                                   f"{group.election} release")
    leader = group.by_name(leader_iv.name)
    if leader is None:
        raise harness_error(f"{group.election}: worker {leader_iv.name} belongs to no candidate")
    with server.connect() as conn:
        probe = _latency_probe(server.port)
        time.sleep(0.2)  # the probe's quiet baseline
        quiet_samples = len(probe.rtts_ms)
        before = int(conn.info("stats")["total_commands_processed"])
        started = time.monotonic()
        acted = time.monotonic_ns()
        leader.terminate()
        successor = group.log.wait_for(
            lambda current: current.first_start_after(acted, exclude_name=leader.name),
            timeout_s=2 * cfg.ttl_ms / 1000.0 + 10.0)
        time.sleep(0.5)  # the herd's refused attempts come in after the winner's
        after = int(conn.info("stats")["total_commands_processed"])
        elapsed = time.monotonic() - started
        rtts = probe.stop()
    if successor is None:
        raise harness_error(f"{group.election} release: no other worker started")
    old = group.log.intervals[(leader_iv.name, leader_iv.pid)]
    during = rtts[quiet_samples:]
    pings = len(during)
    commands = after - before - pings - 1  # less the probe's PINGs and our own INFO
    wait_exit(leader.proc, 15.0)
    group.note_workers()
    group.start(leader.index)
    return {
        "handover_gap_ms": _ms(successor.start_ns - old.stop_ns) if old.stop_ns else None,
        "handover_total_ms": _ms(successor.start_ns - acted),
        "window_s": round(elapsed, 3),
        "redis_commands": commands,
        "redis_commands_beyond_steady": round(commands - baseline_per_s * elapsed),
        "ping_ms_quiet_median": round(statistics.median(rtts[:quiet_samples]), 3)
        if quiet_samples else None,
        "ping_ms_median": round(statistics.median(during), 3) if during else None,
        "ping_ms_max": round(max(during), 3) if during else None,
        "pings": pings,
    }
