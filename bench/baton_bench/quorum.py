"""Quorum kinds: baton's redlock store and node-redlock over the same 3 masters.

A `redis_trio` is three independent redis-servers (no replication). The
harness hands an election group the first master's port, as for one server;
the quorum kinds look the others up by it (`ports_of`). The lease of a quorum
is free once a majority of the masters can grant again: the majority-th
smallest of the masters' remaining times, a master that is down counting as
never.
"""

from __future__ import annotations

import time
from pathlib import Path

from .candidates import PRECISE_REMAINING, baton_kind, peer_kind
from .processes import registry
from .redis_server import harness_error, redis_server
from .redis_wire import redis_connection

# First master's port -> every master's port, for the trios of this run.
ports_of: dict[int, list[int]] = {}


class multi_connection:
    """One connection per live master (a stopped master has none)."""

    def __init__(self, ports: list[int], live: list[bool]) -> None:
        self.conns = [redis_connection(p, timeout=5.0) if up else None
                      for p, up in zip(ports, live)]

    def close(self) -> None:
        for conn in self.conns:
            if conn is not None:
                conn.close()

    def __enter__(self) -> "multi_connection":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


class redis_trio:
    def __init__(self, procs: registry, binary: str, log_dir: Path, label: str) -> None:
        self.servers = [redis_server(procs, binary, log_dir, f"{label}-m{i}") for i in range(3)]
        self.live = [True, True, True]
        self.port = self.servers[0].port
        self.ports = [s.port for s in self.servers]
        ports_of[self.port] = self.ports

    def connect(self) -> multi_connection:
        return multi_connection(self.ports, self.live)

    def take_down(self, index: int) -> None:
        """Stops master `index` for the rest of the trio's life (a master that is down)."""
        self.servers[index].stop()
        self.live[index] = False

    def commands_processed(self) -> list[int | None]:
        out = []
        for server, up in zip(self.servers, self.live):
            if not up:
                out.append(None)
                continue
            with server.connect() as conn:
                out.append(int(conn.info("stats")["total_commands_processed"]))
        return out

    def cpu_seconds(self) -> float:
        return sum(s.cpu_seconds() for s, up in zip(self.servers, self.live) if up)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


def majority_remaining_ms(conn: multi_connection, key: str) -> float:
    """When a majority of the masters could grant `key` again, in ms from now."""
    remaining = []
    for c in conn.conns:
        if c is None:
            continue
        reply = c.command("EVAL", PRECISE_REMAINING, "1", key)
        if isinstance(reply, list) and len(reply) == 2 and isinstance(reply[0], int) and reply[0] > 0:
            remaining.append(reply[0] + (1000 - int(reply[1]) % 1000) / 1000.0)
        else:
            remaining.append(0.0)  # free there now
    majority = len(conn.conns) // 2 + 1
    # Down masters never grant: they sort last, as "never".
    remaining.sort()
    remaining += [float("inf")] * (len(conn.conns) - len(remaining))
    value = remaining[majority - 1]
    if value <= 0 or value == float("inf"):
        raise harness_error(f"{key}: no majority holds the lease ({remaining!r})")
    return value


class baton_redlock_kind(baton_kind):
    """baton with `store.kind: redlock` over the run's three masters."""

    slug = "baton-redlock3"
    label = "baton (Redlock, 3 masters)"
    store = "redis3"

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        argv = super().argv(port, election, name, log, tick_ms)
        masters = ",".join(f"redis://127.0.0.1:{p}" for p in ports_of[port])
        at = argv.index("--redis-url")
        return argv[:at] + ["--store-kind", "redlock", "--redlock-masters", masters] + argv[at + 2:]

    def prepare_election(self, port: int, election: str) -> None:
        for p in ports_of[port]:
            try:
                with redis_connection(p, timeout=1.0) as conn:
                    conn.command("SET", f"baton:{{{election}}}:token", "1", "NX")
            except OSError:
                pass  # a master that is down

    def remaining_ms(self, conn, election: str) -> float:
        return majority_remaining_ms(conn, self.lock_key(election))


class redlock_quorum_peer(peer_kind):
    """node-redlock v5 over the three masters (one ioredis client each)."""

    store = "redis3"

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        argv = super().argv(port, election, name, log, tick_ms)
        at = argv.index("--port")
        return argv[:at] + ["--ports", ",".join(str(p) for p in ports_of[port])] + argv[at + 2:]

    def remaining_ms(self, conn, election: str) -> float:
        return majority_remaining_ms(conn, self.lock_key(election))


def measure_idle_quorum(ctx, kind) -> dict:
    """RSS and CPU of the candidates; client commands (MONITOR, script-internal
    calls excluded) per candidate over all masters, and per master."""
    from .candidates import election_group
    from .scenarios import (_client_ports, _cpu_by_pid, _member_figures, monitor_counter,
                            wait_single_leader)
    cfg = ctx.config
    trio = redis_trio(ctx.procs, ctx.redis_binary, ctx.out_dir, f"idle-{kind.slug}")
    election = f"idle-{kind.slug}"
    log = ctx.new_log(kind, election)
    group = election_group(ctx.procs, kind, trio.port, election, log, ctx.out_dir,
                           cfg.idle_tick_ms)
    monitors = []
    try:
        group.start_all(cfg.idle_candidates)
        leader_iv = wait_single_leader(log, 15.0 + cfg.ttl_ms / 1000.0, election)
        time.sleep(cfg.idle_warmup_s)
        members = list(group.members.values())
        monitors = [monitor_counter(p) for p in trio.ports]
        owners = [_client_ports(members, p) for p in trio.ports]
        cpu_before = _cpu_by_pid(members)
        redis_cpu_before = trio.cpu_seconds()
        started = time.monotonic()
        for m in monitors:
            m.begin()
        time.sleep(cfg.idle_window_s)
        counts = [m.end() for m in monitors]
        elapsed = time.monotonic() - started
        cpu_after = _cpu_by_pid(members)
        redis_cpu_after = trio.cpu_seconds()
        for owner, p in zip(owners, trio.ports):
            owner.update(_client_ports(members, p))
        log.refresh()
        live = log.live()
        if len(live) != 1 or live[0].name != leader_iv.name:
            ctx.problems.append(f"{election}: the leader changed during the idle window")
        per_member = []
        for member in members:
            commands: dict[str, int] = {}
            for owner, per_client in zip(owners, counts):
                ports = {p for p, name in owner.items() if name == member.name}
                for client, per_command in per_client.items():
                    if int(client.rsplit(":", 1)[1]) in ports:
                        for command, n in per_command.items():
                            commands[command] = commands.get(command, 0) + n
            per_member.append(_member_figures(member, leader_iv.name, cpu_before, cpu_after,
                                              elapsed, commands))
        per_master = [round(sum(sum(c.values()) for c in per_client.values()) / elapsed, 3)
                      for per_client in counts]
        return {
            "window_s": round(elapsed, 3),
            "candidates": per_member,
            "redis_cpu_pct": round((redis_cpu_after - redis_cpu_before) / elapsed * 100.0, 3),
            "commands_per_s_per_master": per_master,
            "redis_client_cmds_per_s": round(sum(per_master), 3),
        }
    finally:
        for m in monitors:
            m.close()
        ctx.finish_group(group)
        trio.stop()
