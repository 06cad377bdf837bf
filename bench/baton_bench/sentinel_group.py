"""The Sentinel kinds: baton with `store.kind: sentinel` over a deployment of its own.

A `sentinel_group` is one master, one replica (`replicaof` the master, attached
before any sentinel starts) and three sentinels (`redis-server CONF
--sentinel`, quorum 2), each a process of its own on a free loopback port,
started through the run's registry and stopped by pid. A sentinel rewrites its
config file, so each gets a writable file of its own under the run's output
directory. The harness hands an election group the master's port, as for one
server (the lease key, PTTL and the seeded counter live there); the Sentinel
kinds look the sentinels up by it (`sentinels_of`), and baton finds the master
through them.

Nothing here fails over: down-after-milliseconds is 1 s, and `verify()`
records a problem if the sentinels named another master by the end (a
takeover measured across a failover would be measuring something else).
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

from . import proc_stats
from .candidates import baton_kind
from .server_start import start_on_free_ports, wait_ready
from .processes import registry, wait_exit
from .redis_server import free_port, harness_error, redis_server
from .redis_wire import redis_connection, redis_error

MASTER_NAME = "baton-bench"
SENTINELS = 3
QUORUM = 2
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000
READY_TIMEOUT_S = 20.0
POLL_S = 0.05

# Master's port -> (master name, the sentinels' ports), for the groups of this run.
sentinels_of: dict[int, tuple[str, list[int]]] = {}


def _info(port: int, section: str, timeout: float = 1.0) -> dict[str, str]:
    with redis_connection(port, timeout=timeout) as conn:
        return conn.info(section)


class sentinel_process:
    """One `redis-server CONF --sentinel` on a free loopback port."""

    def __init__(self, procs: registry, binary: str, log_dir: Path, label: str,
                 master_port: int) -> None:
        def spawn():
            port = free_port()
            self.home = log_dir / f"sentinel-{label}-{port}"
            self.home.mkdir(parents=True, exist_ok=True)
            conf = self.home / "sentinel.conf"
            # A fresh file each attempt: a sentinel that lost the port may have rewritten it.
            conf.write_text("\n".join([
                f"port {port}",
                "bind 127.0.0.1",
                "daemonize no",
                "protected-mode no",
                f'logfile "{self.home / "sentinel.log"}"',
                f'dir "{self.home}"',
                f"sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} {QUORUM}",
                f"sentinel down-after-milliseconds {MASTER_NAME} {DOWN_AFTER_MS}",
                f"sentinel failover-timeout {MASTER_NAME} {FAILOVER_TIMEOUT_MS}",
                "",
            ]))
            with open(self.home / "sentinel.out", "ab") as out:
                return procs.spawn([binary, str(conf), "--sentinel"], output=out), port

        self.port, self.proc = start_on_free_ports(
            procs, 5, spawn, self._wait_ready,
            lambda: harness_error(f"redis sentinel ({binary} --sentinel) did not start on a free "
                                  f"loopback port (see {log_dir}/sentinel-{label}-*/sentinel.log)"))

    @staticmethod
    def _wait_ready(proc, port: int) -> bool:
        """Answers on `port`, and the answer comes from our own process (False: someone else
        answers on that port)."""
        return wait_ready(
            proc, lambda: _info(port, "server").get("process_id") == str(proc.pid), limit=10.0,
            every=0.02, errors=(OSError, redis_error))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def master_addr(self) -> tuple[str, int] | None:
        with redis_connection(self.port, timeout=1.0) as conn:
            reply = conn.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
        if not (isinstance(reply, list) and len(reply) == 2):
            return None
        return reply[0].decode(), int(reply[1])

    def cpu_seconds(self) -> float:
        value = proc_stats.cpu_seconds(self.pid)
        if value is None:
            raise harness_error("a redis sentinel exited during the run")
        return value

    def commands_processed(self) -> int:
        """Commands every client sent it so far (a sentinel has no INFO commandstats)."""
        return int(_info(self.port, "stats")["total_commands_processed"])

    def connected_clients(self) -> int:
        return int(_info(self.port, "clients")["connected_clients"])

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        if not wait_exit(self.proc, 5.0):
            self.proc.kill()
            self.proc.wait(timeout=5)


class sentinel_group:
    """1 master + 1 replica + 3 sentinels; `port` is the master's."""

    def __init__(self, procs: registry, binary: str, log_dir: Path, label: str) -> None:
        self.master: redis_server | None = None
        self.replica: redis_server | None = None
        self.sentinels: list[sentinel_process] = []
        self.label = label
        started = time.monotonic()
        try:
            # Redis waits 5 s before a diskless full sync by default.
            fast_sync = ["--repl-diskless-sync-delay", "0"]
            self.master = redis_server(procs, binary, log_dir, f"{label}-master", fast_sync)
            self.port = self.master.port
            self.replica = redis_server(procs, binary, log_dir, f"{label}-replica",
                                        fast_sync + ["--replicaof", "127.0.0.1", str(self.port)])
            # Attached before the sentinels start (their first INFO of the master
            # lists it) and before any baton connects: with replica_ack all, baton
            # waits for the replicas the master had when it connected.
            self._wait("the replica's link to the master is up", self._replica_not_ready)
            for i in range(SENTINELS):
                self.sentinels.append(sentinel_process(procs, binary, log_dir, f"{label}-s{i}",
                                                       self.port))
            self._wait("every sentinel names the master", self._sentinels_not_ready)
        except BaseException:
            self.stop()
            raise
        self.ready_s = round(time.monotonic() - started, 3)
        sentinels_of[self.port] = (MASTER_NAME, [s.port for s in self.sentinels])

    def _wait(self, what: str, not_ready) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        missing = "not asked"
        for _poll in range(int(READY_TIMEOUT_S / POLL_S) + 1):
            try:
                missing = not_ready()
            except (OSError, redis_error) as error:
                missing = str(error)
            if not missing or time.monotonic() >= deadline:
                break
            time.sleep(POLL_S)
        if missing:
            raise harness_error(f"sentinel group {self.label}: not done within "
                                f"{READY_TIMEOUT_S:.0f}s: {what} ({missing})")

    def _replica_not_ready(self) -> str:
        info = _info(self.replica.port, "replication")
        if info.get("master_port") != str(self.port):
            return f"replica's master_port:{info.get('master_port')}"
        if info.get("master_link_status") != "up":
            return f"master_link_status:{info.get('master_link_status')}"
        replicas = _info(self.port, "replication").get("connected_slaves")
        return "" if replicas == "1" else f"master's connected_slaves:{replicas}"

    def _sentinels_not_ready(self) -> str:
        for sentinel in self.sentinels:
            addr = sentinel.master_addr()
            if addr != ("127.0.0.1", self.port):
                return f"sentinel {sentinel.port} answers {addr!r}"
        return ""

    @property
    def url(self) -> str:
        return self.master.url

    @property
    def sentinel_urls(self) -> list[str]:
        return [f"redis://127.0.0.1:{s.port}" for s in self.sentinels]

    def connect(self, timeout: float = 5.0) -> redis_connection:
        """A connection to the master."""
        return self.master.connect(timeout)

    def cpu_seconds(self) -> float:
        """The master's CPU: the server that holds the leases (the others: idle_snapshot)."""
        return self.master.cpu_seconds()

    def verify(self) -> list[str]:
        """Problems: a sentinel that names another master, a master that is no longer one."""
        problems = []
        for sentinel in self.sentinels:
            try:
                addr = sentinel.master_addr()
            except (OSError, redis_error) as error:
                problems.append(f"sentinel group {self.label}: sentinel {sentinel.port}: {error}")
                continue
            if addr != ("127.0.0.1", self.port):
                problems.append(f"sentinel group {self.label}: sentinel {sentinel.port} names "
                                f"{addr!r}, not the master 127.0.0.1:{self.port} (a failover "
                                f"during the run)")
        try:
            role = _info(self.port, "replication").get("role")
            if role != "master":
                problems.append(f"sentinel group {self.label}: the master is now a {role}")
        except (OSError, redis_error) as error:
            problems.append(f"sentinel group {self.label}: master: {error}")
        return problems

    # Idle: what the rest of the deployment did over the window.
    def idle_snapshot(self) -> dict:
        return {"sentinel_cpu_s": sum(s.cpu_seconds() for s in self.sentinels),
                "replica_cpu_s": self.replica.cpu_seconds(),
                "sentinel_commands": sum(s.commands_processed() for s in self.sentinels),
                "at": time.monotonic()}

    def idle_figures(self, before: dict, after: dict) -> dict:
        elapsed = after["at"] - before["at"]
        return {
            "sentinel_cpu_pct": round((after["sentinel_cpu_s"] - before["sentinel_cpu_s"])
                                      / elapsed * 100.0, 3),
            "replica_cpu_pct": round((after["replica_cpu_s"] - before["replica_cpu_s"])
                                     / elapsed * 100.0, 3),
            # Every client's commands on the three sentinels together: the
            # candidates' and the sentinels' own (they PING each other every
            # second); the harness's own INFO is taken out.
            "sentinel_cmds_per_s": round(
                (after["sentinel_commands"] - before["sentinel_commands"] - len(self.sentinels))
                / elapsed, 3),
            "sentinel_connected_clients": sum(s.connected_clients() for s in self.sentinels)
            - len(self.sentinels),
        }

    def stop(self) -> None:
        # Sentinels first: a sentinel that sees the master go would only log (and vote).
        for sentinel in self.sentinels:
            sentinel.stop()
        for server in (self.replica, self.master):
            if server is not None:
                server.stop()
        if self.master is not None:
            sentinels_of.pop(self.master.port, None)


class baton_sentinel_kind(baton_kind):
    """baton with `store.kind: sentinel`, WAIT for every replica after each grant and renewal."""

    slug = "baton-sentinel"
    label = "baton (Sentinel, replica ack all)"
    store = "sentinel"
    replica_ack = "all"

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        argv = super().argv(port, election, name, log, tick_ms)
        master_name, ports = sentinels_of[port]
        at = argv.index("--redis-url")
        return (argv[:at] + ["--store-kind", "sentinel",
                             "--sentinel-addresses",
                             ",".join(f"redis://127.0.0.1:{p}" for p in ports),
                             "--sentinel-master-name", master_name,
                             "--redis-replica-ack", self.replica_ack] + argv[at + 2:])

    # prepare_election (inherited) seeds the counter on the master, `port`.


class baton_sentinel_noack_kind(baton_sentinel_kind):
    """The same without WAIT: what the acknowledgement costs."""

    slug = "baton-sentinel-noack"
    label = "baton (Sentinel, replica ack off)"
    replica_ack = "off"
