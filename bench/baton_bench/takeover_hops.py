"""Where a takeover's milliseconds go, hop by hop, from baton's debug timing lines.

With BATON_BENCH_LOG_LEVEL=debug every baton writes, to its election's OUT/<election>.out:
the new leader's "takeover timing: acquire answered ..." line and its keeper's "command exec'd
..." line, both placing the acquire's send on the monotonic clock; on a handover also the old
leader's "release sent ... answered ..." line (its app reported stopped, on that clock) and each
standby's "heard the release" moment. The workers' own start and stop lines are on the same
clock (CLOCK_MONOTONIC), and so is the harness's expiry, so each sample splits into hops:

crash:    expiry -> acquire sent -> acquire answered -> command exec'd -> worker's start line
handover: old worker's stop line -> its keeper reported the stop -> the successor heard the
          release -> acquire sent -> answered -> exec'd -> start line (and, beside that path,
          when the old leader's release was answered)

Hops are in microseconds; a sample whose lines are missing (another log level, a peer) has none.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

TAKEOVER = re.compile(r"takeover timing: acquire answered (\d+)us, app start requested (\d+)us, "
                      r"start\(\) returned (\d+)us after the acquire was sent "
                      r"\(at monotonic (\d+) ns\)")
EXEC = re.compile(r"command exec'd (\d+)us after the acquire was sent \(at monotonic (\d+) ns\)")
RELEASE = re.compile(r"handover timing: release sent (\d+)us and answered (\d+)us after the app "
                     r"was reported stopped \(at monotonic (\d+) ns\)")
HEARD = re.compile(r"handover timing: heard the release at monotonic (\d+) ns")

CRASH_HOPS = ("expiry_to_acquire_sent", "acquire_round_trip", "answer_to_exec",
              "exec_to_start_line")
HANDOVER_HOPS = ("stop_line_to_stop_reported", "stop_reported_to_heard", "heard_to_acquire_sent",
                 "acquire_round_trip", "answer_to_exec", "exec_to_start_line",
                 "stop_reported_to_release_answered")


class timing_lines:
    """The timing lines of one election's daemons, read once after its run."""

    def __init__(self, out_path: Path) -> None:
        self.takeovers: dict[int, int] = {}  # acquire sent ns -> answered us
        self.execs: dict[int, int] = {}  # acquire sent ns -> exec'd us
        self.releases: list[tuple[int, int]] = []  # (app stopped ns, answered us)
        self.heard: list[int] = []
        try:
            text = out_path.read_text(errors="replace")
        except OSError:
            return
        for line in text.splitlines():
            if m := TAKEOVER.search(line):
                self.takeovers[int(m.group(4))] = int(m.group(1))
            elif m := EXEC.search(line):
                self.execs[int(m.group(2))] = int(m.group(1))
            elif m := RELEASE.search(line):
                self.releases.append((int(m.group(3)), int(m.group(2))))
            elif m := HEARD.search(line):
                self.heard.append(int(m.group(1)))
        self.heard.sort()
        self.releases.sort()

    def _takeover(self, after_ns: int, start_ns: int) -> tuple[int, int, int] | None:
        """The won acquire sent in [after_ns, start_ns] with its keeper's exec: (sent ns,
        answered us, exec'd us)."""
        sent = [s for s in self.takeovers if after_ns <= s <= start_ns and s in self.execs]
        if not sent:
            return None
        s = max(sent)
        return s, self.takeovers[s], self.execs[s]

    def crash(self, expiry_ns: int, start_ns: int) -> dict[str, float] | None:
        # An attempt may leave a little before the harness's expiry estimate (that estimate
        # counts from before its question): look 50 ms back.
        found = self._takeover(expiry_ns - 50_000_000, start_ns)
        if found is None:
            return None
        sent, answered_us, exec_us = found
        exec_ns = sent + exec_us * 1000
        return {"expiry_to_acquire_sent": (sent - expiry_ns) / 1000,
                "acquire_round_trip": float(answered_us),
                "answer_to_exec": float(exec_us - answered_us),
                "exec_to_start_line": (start_ns - exec_ns) / 1000}

    def handover(self, stop_ns: int, start_ns: int) -> dict[str, float] | None:
        stopped = [r for r in self.releases if stop_ns - 5_000_000_000 <= r[0] <= start_ns]
        found = self._takeover(stop_ns, start_ns)
        if not stopped or found is None:
            return None
        reported_ns, released_us = stopped[-1]
        sent, answered_us, exec_us = found
        heard = [h for h in self.heard if reported_ns <= h <= sent]
        if not heard:
            return None
        return {"stop_line_to_stop_reported": (reported_ns - stop_ns) / 1000,
                "stop_reported_to_heard": (heard[-1] - reported_ns) / 1000,
                "heard_to_acquire_sent": (sent - heard[-1]) / 1000,
                "acquire_round_trip": float(answered_us),
                "answer_to_exec": float(exec_us - answered_us),
                "exec_to_start_line": (start_ns - (sent + exec_us * 1000)) / 1000,
                "stop_reported_to_release_answered": float(released_us)}


def summarize(samples: list[dict[str, float]], names: tuple[str, ...]) -> dict[str, dict]:
    """Median and max of each hop, in microseconds, over the samples that have it."""
    out: dict[str, dict] = {}
    for name in names:
        values = [s[name] for s in samples if name in s]
        if values:
            out[name] = {"n": len(values), "median_us": round(statistics.median(values), 1),
                         "max_us": round(max(values), 1)}
    return out
