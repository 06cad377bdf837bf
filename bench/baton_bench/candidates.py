"""The candidates: baton and its peers, how to start, signal and measure them.

A candidate kind knows its command line and its lock key. A running candidate
knows its process tree: for baton, the daemon (own process group) and, while
it leads, a keeper in another process group with the worker (test_worker)
under it; for a peer, one process that is also its own worker. "Crash" is
SIGKILL to every process group of the candidate (for baton both the daemon's
and the keeper's, although the keeper would kill the worker anyway when the
daemon dies); "graceful" is SIGTERM to the main process. Costs (CPU, memory)
count the candidate's processes but not baton's worker: the peers do their
"work" (writing the event lines) inside the candidate, baton runs it as a
separate app, and that app is the user's, not baton's.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import proc_stats
from .etcd_expiry import expiry_after_kill_ns
from .event_log import event_log
from .processes import kill_group, registry, wait_exit
from .redis_server import harness_error
from .redis_wire import redis_connection
from .zookeeper_watch import zookeeper_watches

WORKER_COMM = "test_worker"
# baton's log level in the benchmark: warn keeps logging off the measured path;
# BATON_BENCH_LOG_LEVEL=debug shows its takeover timing lines (in OUT/*.out).
BATON_LOG_LEVEL = os.environ.get("BATON_BENCH_LOG_LEVEL", "warn")
# Extra `baton run` options for every baton candidate, e.g. "--park=false"
# (how the benchmark compares a setting's cost).
BATON_EXTRA_ARGS = os.environ.get("BATON_BENCH_EXTRA_ARGS", "").split()


# {PTTL, microseconds of TIME}, read in one script so that both are one instant.
PRECISE_REMAINING = ("local p = redis.call('PTTL', KEYS[1]) "
                     "return {p, redis.call('TIME')[2]}")


class candidate_kind:
    """One implementation under test."""

    slug = ""
    label = ""
    # A word in the command line of the candidate's processes (for safe cleanup).
    marker = ""
    # Which server the candidates share: "redis" or "postgres".
    store = "redis"
    # Whether the idle scenario measures it.
    measure_idle = True
    # Whether a graceful stop is SIGTERM to the whole process group (what a service manager
    # sends) rather than to the main process alone.
    stop_whole_group = False
    # How long a crashed leader's lease can outlive it, s (None: the ttl).
    lease_bound_s: float | None = None

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        raise NotImplementedError

    def lock_key(self, election: str) -> str:
        raise NotImplementedError

    def prepare_election(self, port: int, election: str) -> None:
        """Runs once before the first candidate of a new election starts."""

    def switchover_socket(self, election: str, name: str) -> Path | None:
        """The socket of candidate `name`'s daemon, for `baton switchover`; None: the kind has no
        switchover (the peers)."""
        return None

    def expiry_after_kill_ns(self, server, election: str) -> int | None:
        """For a store whose remaining time is too coarse to read before the kill (etcd): the
        lease's expiry found after it, on the harness's clock; None: not measured."""
        return None

    def expiry_watch(self, server, election: str) -> zookeeper_watches | None:
        """For a store whose leases end with their holder's session (ZooKeeper): watches on the
        holder's node, set before the kill, whose deletion dates the expiry; None: none."""
        return None

    def remaining_ms(self, conn, election: str) -> float:
        """The lease's remaining time in the store's clock, read on `conn` (the server's).

        To the microsecond: PTTL is rounded down to the millisecond, and Redis
        deletes the key once its millisecond clock has passed the expiry, so
        the key is free PTTL + (1 ms - the microseconds into the current
        millisecond) later. Plain PTTL would put the expiry up to 1 ms early
        and overstate every lag after it.
        """
        reply = conn.command("EVAL", PRECISE_REMAINING, "1", self.lock_key(election))
        if not (isinstance(reply, list) and len(reply) == 2 and isinstance(reply[0], int)
                and reply[0] > 0):
            raise harness_error(f"PTTL {self.lock_key(election)} = {reply!r}")
        return reply[0] + (1000 - int(reply[1]) % 1000) / 1000.0


class baton_kind(candidate_kind):
    slug = "baton"
    label = "baton"

    def __init__(self, baton: Path, worker: Path, ttl_ms: int) -> None:
        self.baton = baton
        self.worker = worker
        self.ttl_ms = ttl_ms
        self.marker = str(baton)
        # Unix socket paths are limited to 107 bytes: a short directory of
        # their own rather than the (possibly deep) output directory.
        self.socket_dir = Path(tempfile.mkdtemp(prefix="baton-bench-sock-"))
        atexit.register(shutil.rmtree, self.socket_dir, True)

    def switchover_socket(self, election: str, name: str) -> Path | None:
        return self.socket_dir / f"{name}-{election}.sock"

    def daemon_args(self, election: str, name: str) -> list[str]:
        """Flags every baton kind adds: a socket in the switchover scenario (its elections are
        named switchover-*), which `baton switchover` talks to; none elsewhere, so that the
        other scenarios measure the daemon as before."""
        if not election.startswith("switchover-"):
            return []
        return ["--socket", str(self.switchover_socket(election, name))]

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        return [str(self.baton), "run", "--election", election, "--node-id", name,
                "--redis-url", f"redis://127.0.0.1:{port}", "--ttl", f"{self.ttl_ms}ms",
                "--log-level", BATON_LOG_LEVEL, *BATON_EXTRA_ARGS, *self.daemon_args(election, name), "--",
                str(self.worker), "--log", str(log), "--name", name, "--tick-ms", str(tick_ms)]

    def lock_key(self, election: str) -> str:
        return f"baton:{{{election}}}:lease"

    def prepare_election(self, port: int, election: str) -> None:
        # A missing fencing counter looks like a Redis that lost its data, which
        # baton answers by holding every acquisition back for one ttl. These
        # elections are new, not recovering: seed the counter so that start-up
        # and takeover measure a free lease, not the hold-back.
        with redis_connection(port) as conn:
            conn.command("SET", f"baton:{{{election}}}:token", "1", "NX")


class baton_postgres_kind(baton_kind):
    """baton with `store.kind: postgres`, against the run's own PostgreSQL server."""

    slug = "baton-pg"
    label = "baton (PostgreSQL)"
    store = "postgres"
    table = "baton_lease"

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        return [str(self.baton), "run", "--election", election, "--node-id", name,
                "--store-kind", "postgres", "--postgres-url", self.url(port),
                "--ttl", f"{self.ttl_ms}ms", "--log-level", BATON_LOG_LEVEL,
                *self.daemon_args(election, name), "--",
                str(self.worker), "--log", str(log), "--name", name, "--tick-ms", str(tick_ms)]

    def lock_key(self, election: str) -> str:
        return f"{self.table}[{election}]"

    @staticmethod
    def url(port: int) -> str:
        return f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def prepare_election(self, port: int, election: str) -> None:
        # Like the Redis counter above: a missing row is created held back one
        # ttl (it could be a restored database); `init-store` is how operators
        # create it beforehand, and the table with it.
        argv = [str(self.baton), "init-store", "--election", election, "--store-kind", "postgres",
                "--postgres-url", self.url(port)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired as error:
            raise harness_error(f"baton init-store for {election} took over 30 s") from error
        if done.returncode != 0:
            raise harness_error(f"baton init-store for {election} failed ({done.returncode}): "
                                f"{done.stderr.strip()}")

    def remaining_ms(self, conn, election: str) -> float:
        value = conn.scalar(
            "SELECT extract(epoch FROM expires_at - clock_timestamp()) * 1000 FROM "
            f"{self.table} WHERE election = '{election}'")
        remaining = float(value) if value is not None else 0.0
        if remaining <= 0:
            raise harness_error(f"{self.lock_key(election)}: remaining {value!r} ms")
        return remaining


class baton_zookeeper_kind(baton_kind):
    """baton with `store.kind: zookeeper`, against the run's own standalone ZooKeeper."""

    slug = "baton-zk"
    label = "baton (ZooKeeper)"
    store = "zookeeper"
    measure_idle = False  # the idle scenario counts Redis commands

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        return [str(self.baton), "run", "--election", election, "--node-id", name,
                "--store-kind", "zookeeper", "--zookeeper-servers", f"127.0.0.1:{port}",
                "--ttl", f"{self.ttl_ms}ms", "--log-level", BATON_LOG_LEVEL,
                *self.daemon_args(election, name), "--",
                str(self.worker), "--log", str(log), "--name", name, "--tick-ms", str(tick_ms)]

    def lock_key(self, election: str) -> str:
        return f"/baton/{election}/lease"

    def prepare_election(self, port: int, election: str) -> None:
        # A missing record is made held back one ttl (it could be a wiped
        # ensemble); `init-store` makes it beforehand, as operators do.
        argv = [str(self.baton), "init-store", "--election", election, "--store-kind",
                "zookeeper", "--zookeeper-servers", f"127.0.0.1:{port}",
                "--ttl", f"{self.ttl_ms}ms"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired as error:
            raise harness_error(f"baton init-store for {election} took over 30 s") from error
        if done.returncode != 0:
            raise harness_error(f"baton init-store for {election} failed ({done.returncode}): "
                                f"{done.stderr.strip()}")

    def remaining_ms(self, conn, election: str) -> float | None:
        # A lease lives as long as its holder's session: no expiry to read.
        return None

    def expiry_watch(self, server, election: str) -> zookeeper_watches | None:
        return zookeeper_watches(server.port, lambda _watch: self.lock_key(election))


class zookeeper_peer_kind(candidate_kind):
    """A peer on ZooKeeper (python3-kazoo's Election recipe), taking the peers' flags."""

    store = "zookeeper"
    measure_idle = False

    def __init__(self, slug: str, label: str, interpreter: list[str], script: Path,
                 ttl_ms: int) -> None:
        self.slug = slug
        self.label = label
        self.interpreter = interpreter
        self.script = script
        self.ttl_ms = ttl_ms
        self.marker = script.name

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        return [*self.interpreter, str(self.script), "--port", str(port),
                "--key", self.lock_key(election), "--name", name, "--log", str(log),
                "--ttl-ms", str(self.ttl_ms), "--tick-ms", str(tick_ms)]

    def lock_key(self, election: str) -> str:
        return f"/bench/{election}/{self.slug}"

    def remaining_ms(self, conn, election: str) -> float | None:
        return None

    def expiry_watch(self, server, election: str) -> zookeeper_watches | None:
        def leader_node(watch) -> str | None:
            # The recipe's queue: the lowest sequence number (the name's last ten digits)
            # leads.
            queue = sorted(watch.children(self.lock_key(election)), key=lambda name: name[-10:])
            return f"{self.lock_key(election)}/{queue[0]}" if queue else None
        return zookeeper_watches(server.port, leader_node)


class baton_etcd_kind(baton_kind):
    """baton with `store.kind: etcd`, against the run's own single-member etcd."""

    slug = "baton-etcd"
    label = "baton (etcd)"
    store = "etcd"
    measure_idle = False  # the idle scenario counts Redis commands

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        return [str(self.baton), "run", "--election", election, "--node-id", name,
                "--store-kind", "etcd", "--etcd-endpoints", f"http://127.0.0.1:{port}",
                "--ttl", f"{self.ttl_ms}ms", "--log-level", BATON_LOG_LEVEL,
                *self.daemon_args(election, name), "--",
                str(self.worker), "--log", str(log), "--name", name, "--tick-ms", str(tick_ms)]

    def lock_key(self, election: str) -> str:
        return f"baton/{election}/lease"

    def prepare_election(self, port: int, election: str) -> None:
        # A missing record is made held back one ttl (it could be a restored
        # snapshot); `init-store` makes it beforehand, as operators do.
        argv = [str(self.baton), "init-store", "--election", election, "--store-kind", "etcd",
                "--etcd-endpoints", f"http://127.0.0.1:{port}", "--ttl", f"{self.ttl_ms}ms"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired as error:
            raise harness_error(f"baton init-store for {election} took over 30 s") from error
        if done.returncode != 0:
            raise harness_error(f"baton init-store for {election} failed ({done.returncode}): "
                                f"{done.stderr.strip()}")

    def remaining_ms(self, conn, election: str) -> float | None:
        # etcd tells a lease's remaining time in whole seconds: too coarse to date an expiry
        # before the kill; it is found after it (etcd_expiry.py).
        return None

    def expiry_after_kill_ns(self, server, election: str) -> int | None:
        return expiry_after_kill_ns(server.port, self.lock_key(election))


# `etcdctl elect`'s session TTL: etcd's client default, which 3.4's `elect` cannot change.
ETCDCTL_ELECT_SESSION_S = 60.0


class etcdctl_lock_kind(candidate_kind):
    """`etcdctl lock --ttl S NAME -- WORKER...`: etcdctl runs the worker while it holds the lock.

    A graceful stop is SIGTERM to the process group, as a service manager sends it: etcdctl
    catches SIGTERM but neither forwards it to its command nor unlocks before the command exits,
    so SIGTERM to etcdctl alone would leave the worker running and the lock held.
    """

    store = "etcd"
    measure_idle = False
    stop_whole_group = True

    def __init__(self, etcdctl: Path, worker: Path, ttl_ms: int) -> None:
        self.slug = "etcdctl-lock"
        self.label = "etcdctl lock"
        self.etcdctl = etcdctl
        self.worker = worker
        # The session TTL is whole seconds: the ttl rounded up.
        self.ttl_s = -(-ttl_ms // 1000)
        self.marker = str(etcdctl)

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        return [str(self.etcdctl), "--endpoints", f"http://127.0.0.1:{port}", "lock",
                "--ttl", str(self.ttl_s), self.lock_key(election), "--",
                str(self.worker), "--log", str(log), "--name", name, "--tick-ms", str(tick_ms)]

    def lock_key(self, election: str) -> str:
        return f"bench/{election}/{self.slug}"

    def remaining_ms(self, conn, election: str) -> float | None:
        return None

    def expiry_after_kill_ns(self, server, election: str) -> int | None:
        # The holder's key is the oldest under the lock's prefix.
        return expiry_after_kill_ns(server.port, self.lock_key(election) + "/", prefix=True)


class etcdctl_elect_kind(candidate_kind):
    """`etcdctl elect NAME PROPOSAL` behind bench/peers/etcdctl_elect_candidate.py, which starts
    the worker once etcdctl says it leads."""

    store = "etcd"
    measure_idle = False
    lease_bound_s = ETCDCTL_ELECT_SESSION_S

    def __init__(self, interpreter: list[str], script: Path, etcdctl: Path, worker: Path) -> None:
        self.slug = "etcdctl-elect"
        self.label = "etcdctl elect"
        self.interpreter = interpreter
        self.script = script
        self.etcdctl = etcdctl
        self.worker = worker
        self.marker = script.name

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        return [*self.interpreter, str(self.script), "--endpoint", f"http://127.0.0.1:{port}",
                "--key", self.lock_key(election), "--name", name, "--worker", str(self.worker),
                "--log", str(log), "--tick-ms", str(tick_ms), "--etcdctl", str(self.etcdctl)]

    def lock_key(self, election: str) -> str:
        return f"bench/{election}/{self.slug}"

    def remaining_ms(self, conn, election: str) -> float | None:
        return None


class baton_socket_kind(baton_kind):
    """baton with no command: the app follows its socket (bench/peers/socket_app.py)."""

    slug = "baton-socket"
    label = "baton, socket app"
    measure_idle = False  # its cost is baton's plus a Python app's

    def __init__(self, baton: Path, worker: Path, ttl_ms: int, script: Path, out_dir: Path) -> None:
        super().__init__(baton, worker, ttl_ms)
        self.script = script
        self.marker = script.name

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        return [sys.executable, str(self.script), "--baton", str(self.baton), "--port", str(port),
                "--election", election, "--name", name, "--log", str(log),
                "--socket", str(self.socket_dir / f"{name}-{election}.sock"),
                "--ttl-ms", str(self.ttl_ms), "--tick-ms", str(tick_ms),
                "--log-level", BATON_LOG_LEVEL]


class peer_kind(candidate_kind):
    """A peer script (Python or Node) taking the same flags."""

    def __init__(self, slug: str, label: str, interpreter: list[str], script: Path,
                 ttl_ms: int) -> None:
        self.slug = slug
        self.label = label
        self.interpreter = interpreter
        self.script = script
        self.ttl_ms = ttl_ms
        self.marker = script.name

    def argv(self, port: int, election: str, name: str, log: Path, tick_ms: int) -> list[str]:
        return [*self.interpreter, str(self.script), "--port", str(port),
                "--key", self.lock_key(election), "--name", name, "--log", str(log),
                "--ttl-ms", str(self.ttl_ms), "--tick-ms", str(tick_ms)]

    def lock_key(self, election: str) -> str:
        return f"bench:{{{election}}}:{self.slug}"


@dataclass
class candidate:
    kind: candidate_kind
    proc: subprocess.Popen
    name: str
    index: int
    spawned_ns: int
    # SIGTERM was sent: a second one would make baton SIGKILL its app at once.
    signalled: bool = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tree(self) -> list[int]:
        return [self.pid, *proc_stats.descendants_of(self.pid)]

    def groups(self, procs: registry) -> list[int]:
        """Process groups of this candidate: its own and any its children made."""
        groups = [self.pid]
        for pid in proc_stats.descendants_of(self.pid):
            pgid = proc_stats.pgid_of(pid)
            if pgid is not None and pgid not in groups:
                groups.append(pgid)
                procs.note_group(pgid, self.kind.marker)
        return groups

    def cost_pids(self) -> list[int]:
        """The candidate's own processes (baton: daemon and keeper), without the app."""
        return [pid for pid in self.tree() if proc_stats.comm_of(pid) not in (None, WORKER_COMM)]

    def crash(self, procs: registry) -> None:
        for pgid in self.groups(procs):
            kill_group(pgid, signal.SIGKILL)

    def terminate(self) -> None:
        if self.alive() and not self.signalled:
            self.signalled = True
            if self.kind.stop_whole_group:
                kill_group(self.pid, signal.SIGTERM)
            else:
                self.proc.send_signal(signal.SIGTERM)


class election_group:
    """Candidates of one kind competing in one election, all logging to one event log."""

    def __init__(self, procs: registry, kind: candidate_kind, port: int, election: str,
                 log: event_log, out_dir: Path, tick_ms: int) -> None:
        self.procs = procs
        self.kind = kind
        self.port = port
        self.election = election
        self.log = log
        self.tick_ms = tick_ms
        self.members: dict[int, candidate] = {}
        self._generation = 0
        self._output = open(out_dir / f"{election}.out", "ab")
        kind.prepare_election(port, election)

    @property
    def key(self) -> str:
        return self.kind.lock_key(self.election)

    def start(self, index: int) -> candidate:
        self._generation += 1
        name = f"c{index}g{self._generation}"
        argv = self.kind.argv(self.port, self.election, name, self.log.path, self.tick_ms)
        spawned = time.monotonic_ns()
        proc = self.procs.spawn(argv, output=self._output)
        member = candidate(self.kind, proc, name, index, spawned)
        self.members[index] = member
        return member

    def start_all(self, count: int) -> None:
        for index in range(count):
            self.start(index)

    def by_name(self, name: str) -> candidate | None:
        for member in self.members.values():
            if member.name == name:
                return member
        return None

    def note_workers(self) -> None:
        """Remember worker pids from the log so cleanup can reach them."""
        self.log.refresh()
        for item in self.log.intervals.values():
            self.procs.note_pid(item.pid, item.name)

    def stop_all(self, timeout_s: float = 15.0) -> list[str]:
        """SIGTERM everyone, wait, SIGKILL what is left; returns problems seen.

        Standbys go first: a leader's release would otherwise reach a standby
        before its own SIGTERM and hand it a term that lasts a few milliseconds.
        """
        problems: list[str] = []
        self.note_workers()
        working = {item.name for item in self.log.live()}
        members = list(self.members.values())
        for batch in ([m for m in members if m.name not in working],
                      [m for m in members if m.name in working]):
            for member in batch:
                member.groups(self.procs)  # learn keeper groups before they go away
                member.terminate()
            deadline = time.monotonic() + timeout_s
            for member in batch:
                if not wait_exit(member.proc, max(0.1, deadline - time.monotonic())):
                    problems.append(f"{self.election}/{member.name} ignored SIGTERM for "
                                    f"{timeout_s}s")
                    member.crash(self.procs)
                    wait_exit(member.proc, 5.0)
        self.members.clear()
        self._output.flush()
        return problems

    def close(self) -> None:
        self._output.close()
