"""Starting processes in their own process groups, and ending only those.

Every process the harness starts goes through spawn(): it gets its own session
(so its process group id equals its pid) and is recorded in a registry. At the
end, or on any error, cleanup() SIGKILLs the recorded groups that are still
alive, plus extra groups and worker pids the harness learned about on the way
(a baton keeper's group, a worker seen in an event log) -- each after checking
that the pid still runs the program we started, so a recycled pid is never hit.
Nothing is ever killed by name.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import IO

from . import proc_stats


class registry:
    """Processes started by this run and groups/pids learned from them."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []
        # pgid -> a word its leader's command line must contain.
        self.extra_groups: dict[int, str] = {}
        # pid -> a word its command line must contain.
        self.extra_pids: dict[int, str] = {}

    def spawn(self, argv: list[str], output: IO | int, env: dict[str, str] | None = None,
              cwd: Path | None = None, user: int | None = None, group: int | None = None,
              extra_groups: list[int] | None = None) -> subprocess.Popen:
        """`user`/`group`/`extra_groups`: run as another user (root only; postgres refuses root)."""
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
            user=user,
            group=group,
            extra_groups=extra_groups,
        )
        self.procs.append(proc)
        return proc

    def note_group(self, pgid: int, marker: str) -> None:
        self.extra_groups[pgid] = marker

    def note_pid(self, pid: int, marker: str) -> None:
        self.extra_pids[pid] = marker

    def forget_exited(self) -> None:
        self.procs = [p for p in self.procs if p.poll() is None]

    def cleanup(self) -> None:
        """SIGKILL whatever we started that is still there, and reap it."""
        for proc in self.procs:
            if proc.poll() is None:
                kill_group(proc.pid, signal.SIGKILL)
        for pgid, marker in list(self.extra_groups.items()):
            if _runs(pgid, marker) and proc_stats.pgid_of(pgid) == pgid:
                kill_group(pgid, signal.SIGKILL)
        for pid, marker in list(self.extra_pids.items()):
            if _runs(pid, marker):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 10.0
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        self.procs.clear()


def _runs(pid: int, marker: str) -> bool:
    if not proc_stats.is_running(pid):
        return False
    return any(marker in part for part in proc_stats.cmdline_of(pid))


def kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def wait_exit(proc: subprocess.Popen, timeout_s: float) -> bool:
    try:
        proc.wait(timeout=timeout_s)
        return True
    except subprocess.TimeoutExpired:
        return False
