"""A throwaway PostgreSQL server on a free loopback port, for the postgres kind.

initdb into a new directory under the system's temp dir (not the run's output
directory: as root, initdb and postgres run as the `postgres` user, which
must be able to reach it), trust authentication, fsync off, as the project's
own tests do. With `log_statements` every statement a client sends is logged
with its session's pid and application name, which is how the idle scenario
counts statements per candidate (baton names its sessions `baton <node id>`
and `baton <node id> (listen)`). The server is stopped by pid (fast shutdown,
then SIGKILL after 10 s) and its directory removed; its log stays in the
run's output directory.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from . import proc_stats
from .pg_wire import pg_connection, pg_error
from .server_start import start_on_free_ports, wait_ready
from .processes import registry, wait_exit
from .redis_server import free_port, harness_error

STATEMENT_LINE = re.compile(r"^(\d+)\|([^|]*)\|LOG:  (?:statement|execute [^:]*):")


def find_bindir() -> Path:
    """Debian keeps the server binaries out of PATH, one directory per major version."""
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"),
                        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit()
                        else 0)
    if not candidates:
        raise harness_error("PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin "
                            "(install postgresql)")
    return candidates[-1].parent


def server_version(bindir: Path) -> str:
    out = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True, text=True,
                         timeout=30)
    return out.stdout.strip() or out.stderr.strip()


def _run_as() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError as error:
        raise harness_error("running as root and there is no `postgres` user to run initdb and "
                            "postgres as (install postgresql)") from error


class postgres_server:
    def __init__(self, procs: registry, log_dir: Path, label: str,
                 log_statements: bool = False) -> None:
        self._procs = procs
        self.bindir = find_bindir()
        self.user = _run_as()
        self.dir = Path(tempfile.mkdtemp(prefix=f"baton-bench-pg-{label}-"))
        if self.user is not None:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self.log_path = log_dir / f"postgres-{label}.log"
        try:
            self._initdb(log_dir / f"postgres-{label}-initdb.log")
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

        def spawn():
            port = free_port()
            return self._spawn(port, log_statements), port

        self.port, self.proc = start_on_free_ports(
            procs, 5, spawn, self._wait_ready,
            lambda: harness_error(
                f"postgres did not start on a free loopback port (see {self.log_path})"),
            data_dir=self.dir)

    def _as_user(self) -> dict:
        if self.user is None:
            return {}
        return {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}

    def _initdb(self, log_path: Path) -> None:
        argv = [str(self.bindir / "initdb"), "-D", str(self.dir / "data"), "-U", "postgres",
                "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"]
        with open(log_path, "wb") as out:
            try:
                done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=subprocess.STDOUT, timeout=120, **self._as_user())
            except subprocess.TimeoutExpired as error:
                raise harness_error(f"initdb took over 120 s (see {log_path})") from error
        if done.returncode != 0:
            raise harness_error(f"initdb failed with exit code {done.returncode} (see {log_path})")

    def _spawn(self, port: int, log_statements: bool):
        argv = [str(self.bindir / "postgres"), "-D", str(self.dir / "data"), "-p", str(port),
                "-k", str(self.dir), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                "-c", "full_page_writes=off", "-c", "synchronous_commit=on",
                "-c", "max_connections=200", "-c", "log_line_prefix=%p|%a|"]
        if log_statements:
            argv += ["-c", "log_statement=all"]
        with open(self.log_path, "ab") as out:
            return self._procs.spawn(argv, output=out, **self._as_user())

    @staticmethod
    def _wait_ready(proc, port: int) -> bool:
        def answers():
            with pg_connection(port, timeout=1.0) as conn:
                conn.scalar("SELECT 1")
                return True
        return wait_ready(proc, answers, limit=15.0, every=0.05, errors=(OSError, pg_error))

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def connect(self, timeout: float = 5.0) -> pg_connection:
        return pg_connection(self.port, timeout=timeout)

    def cpu_seconds(self) -> float:
        """The postmaster and every process under it (backends, checkpointer, walwriter ...)."""
        total = proc_stats.cpu_seconds(self.pid)
        if total is None:
            raise harness_error("postgres exited during the run")
        for pid in proc_stats.descendants_of(self.pid):
            total += proc_stats.cpu_seconds(pid) or 0.0
        return total

    def log_offset(self) -> int:
        return self.log_path.stat().st_size

    def statements_since(self, offset: int) -> dict[str, int]:
        """Client statements logged after `offset`, per application name."""
        counts: dict[str, int] = {}
        with open(self.log_path, "rb") as log:
            log.seek(offset)
            for raw in log:
                match = STATEMENT_LINE.match(raw.decode(errors="replace"))
                if match:
                    counts[match.group(2)] = counts.get(match.group(2), 0) + 1
        return counts

    def stop(self) -> None:
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)  # fast shutdown
                if not wait_exit(self.proc, 10.0):
                    self.proc.kill()
                    self.proc.wait(timeout=5)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
