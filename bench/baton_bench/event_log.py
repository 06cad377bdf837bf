"""The workers' event log: what the apps did, which is what gets measured.

Line format (tests/worker/test_worker.cpp, and the peers write the same):
`<CLOCK_MONOTONIC ns> <name> <pid> <event>[ details]` with event start, env,
tick, term, stop or exit. Every line is one write() on an O_APPEND descriptor,
so concurrent writers never interleave. Each `start` opens an interval for
(name, pid); its end is the last line that process wrote (a SIGKILLed worker
has no stop line: its interval ends at its last tick). Two intervals of
different processes in the same election that share any instant -- touching
counts -- are an overlap: two leaders worked at once.

One log file holds one election (or elections that never run at the same
time), so overlaps are checked per file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from . import proc_stats

T = TypeVar("T")


@dataclass
class interval:
    name: str
    pid: int
    start_ns: int
    end_ns: int
    ticks: int = 0
    stop_ns: int | None = None  # time of the stop/exit line, if the worker ended by itself
    term_ns: int | None = None  # first SIGTERM the worker saw

    @property
    def ended(self) -> bool:
        return self.stop_ns is not None


@dataclass
class overlap:
    log: str
    first: interval
    second: interval
    shared_ns: int


@dataclass
class event_log:
    path: Path
    intervals: dict[tuple[str, int], interval] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)
    _offset: int = 0
    _partial: bytes = b""

    def refresh(self) -> None:
        """Read the complete lines appended since the last call."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return
        self._offset += len(data)
        data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()
        for raw in lines:
            self._parse(raw.decode(errors="replace"))

    def _parse(self, line: str) -> None:
        words = line.split()
        if len(words) < 4 or not words[0].isdigit() or not words[2].isdigit():
            self.bad_lines.append(line)
            return
        ns, name, pid, word = int(words[0]), words[1], int(words[2]), words[3]
        key = (name, pid)
        if word == "start":
            self.intervals[key] = interval(name, pid, ns, ns)
            return
        current = self.intervals.get(key)
        if current is None:
            self.bad_lines.append(line)
            return
        current.end_ns = max(current.end_ns, ns)
        if word == "tick":
            current.ticks += 1
        elif word == "term" and current.term_ns is None:
            current.term_ns = ns
        elif word in ("stop", "exit"):
            current.stop_ns = ns

    def all(self) -> list[interval]:
        return sorted(self.intervals.values(), key=lambda i: i.start_ns)

    def live(self) -> list[interval]:
        """Intervals without a stop line whose process still runs."""
        return [i for i in self.all() if not i.ended and proc_stats.is_running(i.pid)]

    def first_start_after(self, after_ns: int, exclude_name: str | None = None,
                          name: str | None = None) -> interval | None:
        for item in self.all():
            if item.start_ns <= after_ns:
                continue
            if exclude_name is not None and item.name == exclude_name:
                continue
            if name is not None and item.name != name:
                continue
            return item
        return None

    def wait_for(self, predicate: Callable[["event_log"], T | None], timeout_s: float,
                 poll_s: float = 0.01) -> T | None:
        """Poll until predicate returns something other than None, or time runs out."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.refresh()
            value = predicate(self)
            if value is not None:
                return value
            if time.monotonic() >= deadline:
                return None
            time.sleep(poll_s)

    def overlaps(self) -> list[overlap]:
        found: list[overlap] = []
        items = self.all()
        for i, a in enumerate(items):
            for b in items[i + 1:]:
                if b.start_ns > a.end_ns:
                    break  # sorted by start: every later one starts after a ended too
                if a.pid == b.pid:
                    continue
                found.append(overlap(str(self.path), a, b, min(a.end_ns, b.end_ns) - b.start_ns))
        return found
