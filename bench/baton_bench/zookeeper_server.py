"""A standalone ZooKeeper (Debian's `zookeeper` package, Java) on a free loopback port.

A short tick (200 ms) so that sessions as short as the benchmark's ttl are granted and expire
on time; the admin server off; fsync off (the benchmark measures leases, not the disk). Started
through the run's process registry, stopped by its own pid.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path

from .processes import registry
from .server_start import no_connection, start_on_free_ports, stop_and_remove, wait_ready
from .redis_server import free_port, harness_error

SERVER_JAR = Path("/usr/share/java/zookeeper.jar")
LOG_BINDING_JAR = Path("/usr/share/java/slf4j-simple.jar")


def four_letter(port: int, word: str, timeout: float = 2.0) -> str:
    """A four-letter word's answer ("" when the server does not answer)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.sendall(word.encode())
            chunks = []
            while True:
                data = conn.recv(4096)
                if not data:
                    break
                chunks.append(data)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


class zookeeper_server:
    def __init__(self, procs: registry, log_dir: Path, label: str, tick_ms: int = 200) -> None:
        java = shutil.which("java")
        if not java or not SERVER_JAR.exists():
            raise harness_error("ZooKeeper needs java and /usr/share/java/zookeeper.jar "
                                "(install Debian's zookeeper package)")
        self._procs = procs
        self.dir = Path(tempfile.mkdtemp(prefix=f"baton-bench-zk-{label}-"))
        self.log_path = log_dir / f"zookeeper-{label}.log"

        def spawn():
            port = free_port()
            (self.dir / "zoo.cfg").write_text(
                f"tickTime={tick_ms}\ndataDir={self.dir / 'data'}\nclientPort={port}\n"
                "clientPortAddress=127.0.0.1\nminSessionTimeout=400\n"
                "maxSessionTimeout=60000\nadmin.enableServer=false\n"
                "4lw.commands.whitelist=srvr,ruok\nforceSync=no\nmaxClientCnxns=0\n")
            classpath = f"{SERVER_JAR}:{LOG_BINDING_JAR}"
            argv = [java, "-Xmx128m", "-XX:+UseSerialGC", "-cp", classpath,
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                    str(self.dir / "zoo.cfg")]
            with open(self.log_path, "ab") as out:
                return procs.spawn(argv, output=out), port

        self.port, self.proc = start_on_free_ports(
            procs, 3, spawn, self._wait_ready,
            lambda: harness_error(f"zookeeper did not start (see {self.log_path})"), data_dir=self.dir)

    @staticmethod
    def _wait_ready(proc, port: int) -> bool:
        return wait_ready(proc, lambda: True if "Mode:" in four_letter(port, "srvr", timeout=1.0)
                          else None, limit=30.0, every=0.1)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def connect(self):
        """The takeover scenario reads the lease's remaining time from a connection; ZooKeeper
        has none to read (a lease lives as long as its holder's session): a stand-in."""
        return no_connection()

    def stop(self) -> None:
        stop_and_remove(self.proc, self.dir)
