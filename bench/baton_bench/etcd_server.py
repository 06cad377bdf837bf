"""A single-member etcd (Debian's `etcd-server`, 3.4) on free loopback ports.

Its data directory is on /dev/shm when there is one: etcd 3.4 has no switch to turn fsync off,
and the benchmark measures leases, not the disk (Redis runs without persistence and ZooKeeper
with fsync off here too). Default heartbeat (100 ms) and election timeout (1 s): one member
elects itself at once, and etcd grants no lease below 1.5 election timeouts (2 s), under the
benchmark's 3 s ttl. Started through the run's process registry, stopped by its own pid.
"""

from __future__ import annotations

import subprocess
import tempfile
import urllib.request
from pathlib import Path

from .processes import registry
from .server_start import no_connection, start_on_free_ports, stop_and_remove, wait_ready
from .redis_server import free_port, harness_error

ETCD = Path("/usr/bin/etcd")
ETCDCTL = Path("/usr/bin/etcdctl")
RAM_DIR = Path("/dev/shm")
# Straight to loopback, whatever proxy the environment names.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def etcd_version() -> str:
    """The server's version from `etcd --version`, e.g. "3.4.23"."""
    try:
        out = subprocess.run([str(ETCD), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unavailable ({error})"
    lines = out.stdout.strip().splitlines()
    return lines[0].split(":", 1)[-1].strip() if lines else "?"


class etcd_server:
    def __init__(self, procs: registry, log_dir: Path, label: str) -> None:
        if not ETCD.exists():
            raise harness_error(f"etcd not found at {ETCD} (install Debian's etcd-server)")
        self._procs = procs
        base = RAM_DIR if RAM_DIR.is_dir() else None
        self.dir = Path(tempfile.mkdtemp(prefix=f"baton-bench-etcd-{label}-", dir=base))
        self.log_path = log_dir / f"etcd-{label}.log"
        attempts = iter(range(3))

        def spawn():
            attempt = next(attempts)
            port, peer_port = free_port(), free_port()
            client_url = f"http://127.0.0.1:{port}"
            peer_url = f"http://127.0.0.1:{peer_port}"
            argv = [str(ETCD), "--name", "bench", "--data-dir", str(self.dir / f"data{attempt}"),
                    "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
                    "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                    "--initial-cluster", f"bench={peer_url}",
                    "--logger", "zap", "--log-level", "warn"]
            with open(self.log_path, "ab") as out:
                return procs.spawn(argv, output=out), port

        self.port, self.proc = start_on_free_ports(
            procs, 3, spawn, self._wait_ready,
            lambda: harness_error(f"etcd did not start (see {self.log_path})"), data_dir=self.dir)

    @staticmethod
    def _wait_ready(proc, port: int) -> bool:
        """Until /health says true: the member has elected itself and serves."""
        def healthy():
            with _DIRECT.open(f"http://127.0.0.1:{port}/health", timeout=1.0) as reply:
                return True if b'"true"' in reply.read() else None
        return wait_ready(proc, healthy, limit=30.0, every=0.1)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def connect(self):
        """The takeover scenario reads the lease's remaining time from a connection; etcd tells
        a lease's remaining time in whole seconds only, so none is read: a stand-in."""
        return no_connection()

    def stop(self) -> None:
        stop_and_remove(self.proc, self.dir)
