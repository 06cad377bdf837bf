"""Starting a server on a free loopback port: what every server the benchmark starts shares.

A port found free may be taken by another process before the server binds it, so a start that
does not answer is retried on new ports; readiness is polled, bounded in time, and a server that
exited (its port taken, a bad config) is given up at once.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Callable, Optional

from .processes import wait_exit


def wait_ready(proc, answers: Callable[[], Optional[bool]], limit: float, every: float = 0.05,
               errors: tuple = (OSError,)) -> bool:
    """Polls `answers()` every `every` s for at most `limit` s.

    `answers()` says True (ready), None (not yet) or False (never: another process answers on
    the port); raising one of `errors` counts as not yet. False when the time is up or `proc`
    exited.
    """
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            verdict = answers()
            if verdict is not None:
                return verdict
        except errors:
            pass
        time.sleep(every)
    return False


def start_on_free_ports(procs, tries: int, spawn: Callable[[], tuple], ready: Callable,
                        error: Callable[[], BaseException],
                        data_dir: Optional[Path] = None) -> tuple:
    """Up to `tries` times: `spawn()` -> (proc, port) on ports just found free, then
    `ready(proc, port)`. Returns (port, proc). A server that did not answer is killed and
    forgotten; when no try answered, `data_dir` (if any) is removed and `error()` raised."""
    try:
        for _attempt in range(tries):
            proc, port = spawn()
            if ready(proc, port):
                return port, proc
            procs.forget_exited()
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=5)
    except BaseException:
        if data_dir is not None:
            shutil.rmtree(data_dir, ignore_errors=True)
        raise
    if data_dir is not None:
        shutil.rmtree(data_dir, ignore_errors=True)
    raise error()


def stop_and_remove(proc, data_dir: Path) -> None:
    """Kills `proc` if it still runs (by its own pid) and removes its data directory."""
    try:
        if proc is not None and proc.poll() is None:
            proc.kill()
            wait_exit(proc, 10.0)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


class no_connection:
    """A stand-in for the connection the takeover scenario reads a lease's remaining time from,
    for servers that have none to read."""

    def close(self) -> None:
        pass
