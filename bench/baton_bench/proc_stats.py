"""Readings from /proc: CPU ticks, memory, process tree, TCP sockets.

Everything here reads a snapshot and tolerates a process that vanished in
between (it then counts as absent). CPU is the time the process's threads
spent on a CPU (schedstat, ns; utime + stime as a fallback); memory is VmRSS and, where the kernel offers it, Pss
(proportional set size, which splits pages shared between processes, e.g.
the same binary mapped by many daemons).
"""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # comm (field 2) may contain spaces and parentheses: split after the last ')'.
    close = text.rfind(")")
    return [text[: text.find("(")].strip(), text[text.find("(") + 1 : close]] + text[close + 2 :].split()


def cpu_seconds(pid: int) -> float | None:
    """CPU time of `pid` (all its current threads) in seconds, None if it is gone.

    From /proc/PID/task/*/schedstat (nanoseconds on the CPU) when the kernel
    has it: utime + stime in /proc/PID/stat count in 10 ms ticks, too coarse
    for a daemon that is meant to use almost nothing.
    """
    try:
        total_ns = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total_ns += int(f.read().split()[0])
        return total_ns / 1e9
    except (OSError, ValueError, IndexError):
        pass
    return cpu_seconds_ticks(pid)


def cpu_seconds_ticks(pid: int) -> float | None:
    """utime + stime of `pid` in seconds (10 ms resolution), None if it is gone."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    # After pid and comm: state(3) ppid(4) pgrp(5) ... utime(14) stime(15).
    return (int(fields[13]) + int(fields[14])) / CLOCK_TICKS


def pgid_of(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return None if fields is None else int(fields[4])


def state_of(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return None if fields is None else fields[2]


def comm_of(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return None if fields is None else fields[1]


def is_running(pid: int) -> bool:
    """Alive and not a zombie."""
    state = state_of(pid)
    return state is not None and state not in ("Z", "X")


def cmdline_of(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def children_of(pid: int) -> list[int]:
    result: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return result
    for task in tasks:
        try:
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
        except OSError:
            continue
        result.extend(int(x) for x in text.split())
    return result


def descendants_of(pid: int, limit: int = 64) -> list[int]:
    """All descendants (breadth first), at most `limit` of them."""
    found: list[int] = []
    queue = children_of(pid)
    while queue and len(found) < limit:
        child = queue.pop(0)
        found.append(child)
        queue.extend(children_of(child))
    return found


def memory_kb(pid: int) -> tuple[int, int] | None:
    """(VmRSS, Pss) in KiB; Pss falls back to RSS without smaps_rollup."""
    rss = None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
                break
    except OSError:
        return None
    if rss is None:
        return None
    pss = rss
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
                break
    except OSError:
        pass
    return rss, pss


def socket_inodes(pid: int) -> set[int]:
    inodes: set[int] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def loopback_client_ports(server_port: int) -> dict[int, int]:
    """Socket inode -> local port of every IPv4 TCP connection to 127.0.0.1:server_port."""
    result: dict[int, int] = {}
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return result
    wanted = f"0100007F:{server_port:04X}"
    for line in lines:
        fields = line.split()
        if len(fields) < 10 or fields[2] != wanted:
            continue
        local_port = int(fields[1].split(":")[1], 16)
        result[int(fields[9])] = local_port
    return result


def mem_available_kb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0
