"""A throwaway redis-server on a free loopback port, without persistence.

Each instance writes its log next to the run's other files and is stopped by
pid (SIGTERM, then SIGKILL after 5 s). A start that loses the free port to
someone else is retried on another port, a bounded number of times.
"""

from __future__ import annotations

import signal
import socket
from pathlib import Path

from . import proc_stats
from .server_start import start_on_free_ports, wait_ready
from .processes import registry, wait_exit
from .redis_wire import redis_connection


class harness_error(RuntimeError):
    """The harness itself could not do what a scenario needs."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class redis_server:
    def __init__(self, procs: registry, binary: str, log_dir: Path, label: str,
                 extra_args: list[str] | None = None) -> None:
        """`extra_args`: more `--option value...` arguments (e.g. `--replicaof HOST PORT`)."""
        self._procs = procs

        def spawn():
            port = free_port()
            log_path = log_dir / f"redis-{label}-{port}.log"
            argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes",
                    "--logfile", str(log_path), "--dir", str(log_dir), *(extra_args or [])]
            with open(log_dir / f"redis-{label}.out", "ab") as out:
                return procs.spawn(argv, output=out), port

        self.port, self.proc = start_on_free_ports(
            procs, 5, spawn, self._wait_ready,
            lambda: harness_error(f"redis-server ({binary}) did not start on a free loopback port"))

    @staticmethod
    def _wait_ready(proc, port: int) -> bool:
        def pong():
            with redis_connection(port, timeout=1.0) as conn:
                return True if conn.command("PING") == "PONG" else None
        return wait_ready(proc, pong, limit=5.0, every=0.02)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def connect(self, timeout: float = 5.0) -> redis_connection:
        return redis_connection(self.port, timeout=timeout)

    def cpu_seconds(self) -> float:
        value = proc_stats.cpu_seconds(self.pid)
        if value is None:
            raise harness_error("redis-server exited during the run")
        return value

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        if not wait_exit(self.proc, 5.0):
            self.proc.kill()
            self.proc.wait(timeout=5)
