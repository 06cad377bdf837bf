#!/usr/bin/env python3
"""Draw docs/benchmarks.md's figures as SVG plots from the bench's JSON results.

Usage: bench/plot.py [--results DIR] [--use NAME=PATH]... [--out DIR]

Reads the result files that docs/benchmarks.md cites for today's figures (from
bench/results/ unless --results says otherwise; --use sentinel.json=/tmp/r.json reads
one of them from elsewhere) and writes into docs/plots/ (or --out):

  takeover-<table>.svg  per table of the page: crash lag after the lease's expiry and
                        graceful handover gap of each implementation, median bar with a
                        max whisker, and the floor bench/run.py set against baton's
                        figures in the same run (rested fork+exec + one or two store
                        round trips) as a dashed mark;
  standby-memory.svg    a standby's RSS, PSS and RSS with its parked keeper, per kind,
                        against the 8 MB goal;
  scale-standbys.svg    crash lag against the number of standbys of one election, from
                        the scale run (3 candidates and 1,001 of the same run).

Only the standard library; the same input gives the same bytes (no dates, no random, no
dict order that depends on the input's). tests/docs/check_plots.py regenerates the
plots and fails when they differ from the committed ones.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One entry per table of docs/benchmarks.md: (file stem, title, [(result file, kind in
# its "results", label)]). The files are the ones the table's figures come from.
TAKEOVER_PLOTS = [
    ("floor", "The floor: baton and an app on its socket", [
        ("takeover-floor.json", "baton", "baton (supervised worker)"),
        ("takeover-floor.json", "baton-socket", "baton-socket (app on the socket)"),
    ]),
    ("redis", "One Redis: baton against redis-py and node-redlock", [
        ("redis-peers-2fcb524.json", "baton", "baton"),
        ("redis-peers-2fcb524.json", "redis-py", "redis-py Lock"),
        ("redis-peers-2fcb524.json", "redlock", "redlock v5 using()"),
    ]),
    ("sentinel", "Redis Sentinel beside one Redis", [
        ("sentinel.json", "baton", "baton, one Redis"),
        ("sentinel.json", "baton-sentinel", "sentinel, replica_ack: all"),
        ("sentinel.json", "baton-sentinel-noack", "sentinel, replica_ack: off"),
    ]),
    ("redlock", "Redlock over three masters against node-redlock", [
        ("redlock3.json", "baton", "baton, one Redis"),
        ("redlock3.json", "baton-redlock3", "baton-redlock3"),
        ("redlock3.json", "redlock3", "node-redlock, 3 masters"),
    ]),
    ("postgres", "PostgreSQL beside one Redis", [
        ("postgres-beside-redis.json", "baton", "baton, one Redis"),
        ("postgres-beside-redis.json", "baton-pg", "baton-pg"),
    ]),
    ("zookeeper", "ZooKeeper against kazoo", [
        ("zookeeper-beside-redis.json", "baton", "baton, one Redis"),
        ("zookeeper-beside-redis.json", "baton-zk", "baton-zk"),
        ("zookeeper-beside-redis.json", "kazoo", "kazoo Election"),
    ]),
    ("etcd", "etcd against etcdctl", [
        ("etcd-beside-redis.json", "baton", "baton, one Redis"),
        ("etcd-beside-redis.json", "baton-etcd", "baton-etcd"),
        ("etcd-beside-redis.json", "etcdctl-lock", "etcdctl lock"),
        ("etcd-beside-redis.json", "etcdctl-elect", "etcdctl elect"),
    ]),
]
MEMORY_FILE = "standby-memory-ea81fb3.json"
SCALE_FILE = "scale-1000-front-runners-669ff0b.json"

DEFAULT_FILES = sorted({f for _, _, rows in TAKEOVER_PLOTS for f, _, _ in rows}
                       | {MEMORY_FILE, SCALE_FILE})

# --- drawing ---------------------------------------------------------------------

WIDTH = 760
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""
BATON_COLOR = "#2b6cb0"
PEER_COLOR = "#dd8a2e"
INK = "#222222"
GRID = "#dddddd"
MUTED = "#666666"
FLOOR_COLOR = "#c53030"


def num(x: float) -> str:
    """A coordinate with at most two decimals, no trailing zeros, never '-0'."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def fmt_ms(x: float) -> str:
    """A measured value: three significant digits or so (2.54, 13.0, 171)."""
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def fmt_tick(x: float, step: float) -> str:
    """An axis tick: as many decimals as the step needs (0, 2.5, 5; 0, 20, 40)."""
    decimals = 0
    while decimals < 3 and abs(step * 10 ** decimals - round(step * 10 ** decimals)) > 1e-9:
        decimals += 1
    return f"{x:,.{decimals}f}"


def nice_max(value: float) -> tuple[float, float]:
    """An axis end at or above value, and its tick step (1, 2 or 5 × 10^n, ~5 ticks)."""
    value = max(value, 1e-9)
    raw = value / 5
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        step = m * mag
        if step * 5 >= value:
            break
    return step * math.ceil(value / step - 1e-9), step


class Svg:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, s: str) -> None:
        self.parts.append(s)

    def text(self, x: float, y: float, s: str, size: int = 12, anchor: str = "start",
             color: str = INK, weight: str = "normal", style: str = "normal") -> None:
        attrs = f'x="{num(x)}" y="{num(y)}" font-size="{size}" fill="{color}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if weight != "normal":
            attrs += f' font-weight="{weight}"'
        if style != "normal":
            attrs += f' font-style="{style}"'
        self.add(f"<text {attrs}>{escape(s)}</text>")

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str = INK,
             width: float = 1, dash: str = "") -> None:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
                 f'stroke="{color}" stroke-width="{num(width)}"{d}/>')

    def rect(self, x: float, y: float, w: float, h: float, color: str,
             title: str = "") -> None:
        t = f"<title>{escape(title)}</title>" if title else ""
        self.add(f'<rect x="{num(x)}" y="{num(y)}" width="{num(max(w, 0))}" '
                 f'height="{num(h)}" fill="{color}">{t}</rect>')

    def render(self, height: float, title: str) -> str:
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
                f'height="{num(height)}" viewBox="0 0 {WIDTH} {num(height)}" {FONT}>\n'
                f"<title>{escape(title)}</title>\n"
                f'<rect x="0" y="0" width="{WIDTH}" height="{num(height)}" fill="#ffffff"/>\n')
        return head + "\n".join(self.parts) + "\n</svg>\n"


def caption(svg: Svg, y: float, lines: list[str]) -> float:
    for line in lines:
        svg.text(16, y, line, size=10, color=MUTED)
        y += 14
    return y


def wrap(s: str, width: int = 118) -> list[str]:
    out, line = [], ""
    for word in s.split(" "):
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return out + [line] if line else out


def legend(svg: Svg, x: float, y: float, items: list[tuple[str, str]]) -> None:
    """items: (kind, label); kind is a color, 'whisker' or 'floor'."""
    for kind, label in items:
        if kind == "whisker":
            svg.line(x, y - 4, x + 14, y - 4, INK)
            svg.line(x + 14, y - 8, x + 14, y, INK)
        elif kind == "floor":
            svg.line(x + 7, y - 10, x + 7, y + 2, FLOOR_COLOR, 2, "4 2")
        elif kind == "goal":
            svg.line(x + 7, y - 10, x + 7, y + 2, FLOOR_COLOR, 2, "4 2")
        else:
            svg.rect(x, y - 9, 14, 10, kind)
        svg.text(x + 19, y, label, size=11)
        x += 19 + 6.3 * len(label) + 18


def hbar_panel(svg: Svg, y: float, heading: str, rows: list[dict], unit: str) -> float:
    """Horizontal bars: rows of {label, median, max, floor, color, missing}; the next y."""
    left, right = 224, WIDTH - 165
    svg.text(16, y, heading, size=13, weight="bold")
    y += 14
    present = [r for r in rows if r.get("median") is not None]
    top = max([r["max"] for r in present] + [r["floor"] for r in present if r.get("floor")]
              + [1e-9])
    end, step = nice_max(top)
    scale = (right - left) / end
    row_h, bar_h = 24, 14
    plot_top, plot_h = y, row_h * len(rows)
    ticks = int(round(end / step))
    for i in range(ticks + 1):
        x = left + i * step * scale
        svg.line(x, plot_top, x, plot_top + plot_h, GRID)
        svg.text(x, plot_top + plot_h + 14, fmt_tick(i * step, step), size=10, anchor="middle",
                 color=MUTED)
    svg.text((left + right) / 2, plot_top + plot_h + 28, unit, size=11, anchor="middle")
    for i, r in enumerate(rows):
        cy = plot_top + i * row_h + row_h / 2
        svg.text(left - 8, cy + 4, r["label"], size=11, anchor="end")
        if r.get("median") is None:
            svg.text(left + 6, cy + 4, r["missing"], size=11, color=MUTED, style="italic")
            continue
        med, mx, fl = r["median"], r["max"], r.get("floor")
        tip = f"{r['label']}: median {fmt_ms(med)}, max {fmt_ms(mx)} {unit}"
        svg.rect(left, cy - bar_h / 2, med * scale, bar_h, r["color"],
                 tip + (f", floor {fmt_ms(fl)} {unit}" if fl else ""))
        svg.line(left + med * scale, cy, left + mx * scale, cy, INK)
        svg.line(left + mx * scale, cy - 5, left + mx * scale, cy + 5, INK)
        label = f"{fmt_ms(med)} (max {fmt_ms(mx)})" + (f", floor {fmt_ms(fl)}" if fl else "")
        svg.text(left + mx * scale + 5, cy + 4, label, size=10)
        if fl:
            fx = left + fl * scale
            svg.line(fx, cy - row_h / 2 + 1, fx, cy + row_h / 2 - 1, FLOOR_COLOR, 2, "3 2")
    svg.line(left, plot_top, left, plot_top + plot_h, INK)
    return plot_top + plot_h + 52


# --- data --------------------------------------------------------------------------

def load(paths: dict[str, str], name: str) -> dict:
    with open(paths[name], encoding="utf-8") as f:
        return json.load(f)


def commit_of(data: dict) -> str:
    version = data.get("baton") or (data.get("versions") or {}).get("baton", "")
    m = re.search(r"commit ([0-9a-f]+(?:-dirty)?)", version)
    if m:
        return f"build {m.group(1)}"
    m = re.search(r"commit ([0-9a-f]{7,})", data.get("note") or "")
    return f"build of {m.group(1)}" if m else "commit not recorded"


def source_line(name: str, data: dict) -> str:
    date = (data.get("date") or "?").replace("T", " ").replace("Z", " UTC")
    load_avg = (data.get("machine") or {}).get("loadavg_at_start")
    extra = f", load {load_avg[0]}" if load_avg else ""
    return f"bench/results/{name} ({date}, {commit_of(data)}{extra})"


def figure(result: dict, scenario: str, metric: str) -> dict | None:
    s = (result.get(scenario) or {}).get(metric)
    return s if isinstance(s, dict) and s.get("n") else None


def floor_for(data: dict, kind: str, figure_name: str) -> float | None:
    """The floor bench/run.py set against this kind's figure in its run, if any."""
    for o in data.get("overheads") or []:
        if o.get("kind") == kind and o.get("figure") == figure_name:
            return o.get("floor_ms")
    return None


def takeover_plot(stem: str, title: str, rows: list[tuple[str, str, str]],
                  paths: dict[str, str]) -> str:
    files = []
    for name, _, _ in rows:
        if name not in files:
            files.append(name)
    data = {name: load(paths, name) for name in files}
    svg = Svg()
    svg.text(16, 26, title, size=16, weight="bold")
    svg.text(16, 44, "median bar, whisker to the largest sample; lower is better; "
             "every candidate with a 3 s ttl", size=11, color=MUTED)
    legend(svg, 16, 64, [(BATON_COLOR, "baton"), (PEER_COLOR, "peer"),
                         ("whisker", "max"), ("floor", "floor (same run)")])
    y = 100
    panels = [("crash: lag after the lease's expiry", "crash", "lag_after_expiry_ms",
               "crash: lag after expiry",
               "not measured: only failover from SIGKILL (session expiry)"),
              ("graceful: handover gap (old app's stop \u2192 new app's start)", "handover",
               "handover_gap_ms", "graceful: handover gap", "not measured")]
    floors = 0
    for heading, scenario, metric, floor_figure, missing in panels:
        prow = []
        for name, kind, label in rows:
            s = figure(data[name]["results"].get(kind, {}), scenario, metric)
            fl = floor_for(data[name], kind, floor_figure)
            floors += 1 if (s and fl) else 0
            prow.append({"label": label, "median": s["median"] if s else None,
                         "max": s["max"] if s else None, "floor": fl, "missing": missing,
                         "color": BATON_COLOR if kind.startswith("baton") else PEER_COLOR})
        y = hbar_panel(svg, y, heading, prow, "ms")
    notes = ["Data: " + "; ".join(source_line(n, data[n]) for n in files) + "."]
    if floors:
        notes.append("Floor: what no election could beat in the same run, as bench/run.py "
                     "gives it to baton's kinds: a rested fork+exec of the worker + one "
                     "(crash) or two (handover) store round trips; an app on the socket has "
                     "the round trips only. The peers get none.")
    else:
        notes.append("No floor: " + ("these runs" if len(files) > 1 else "this run")
                     + " did not measure it.")
    notes.append("Made by bench/plot.py; the table beside it in docs/benchmarks.md gives "
                 "these medians, rounded.")
    lines = [w for n in notes for w in wrap(n)]
    y = caption(svg, y - 8, lines)
    return svg.render(y + 6, title)


def memory_plot(paths: dict[str, str]) -> str:
    data = load(paths, MEMORY_FILE)
    kinds = list(data["kinds"].keys())  # the run's order: the order the page's table uses
    title = "A standby's memory, per store kind"
    svg = Svg()
    svg.text(16, 26, title, size=16, weight="bold")
    svg.text(16, 44, "median of three standbys, one leader beside them; lower is better",
             size=11, color=MUTED)
    series = [("rss_kb_with_keeper_median", "RSS with its parked keeper", "#9ab7d8"),
              ("rss_kb_median", "RSS, daemon alone", BATON_COLOR),
              ("pss_kb_median", "PSS, daemon alone", "#1a365d")]
    goal = data.get("goal_kb", 0) / 1024
    legend(svg, 16, 64, [(c, l) for _, l, c in series]
           + ([("goal", f"goal {goal:g} MB")] if goal else []))
    left, right = 120, WIDTH - 60
    top_v = max(max(data["kinds"][k][key] for k in kinds for key, _, _ in series) / 1024,
                goal)
    end, step = nice_max(top_v)
    scale = (right - left) / end
    bar_h, gap = 11, 10
    group_h = bar_h * len(series) + gap
    y0 = 88
    plot_h = group_h * len(kinds)
    for i in range(int(round(end / step)) + 1):
        x = left + i * step * scale
        svg.line(x, y0, x, y0 + plot_h, GRID)
        svg.text(x, y0 + plot_h + 14, fmt_tick(i * step, step), size=10, anchor="middle",
                 color=MUTED)
    svg.text((left + right) / 2, y0 + plot_h + 28, "MB (VmRSS; Pss from smaps_rollup)",
             size=11, anchor="middle")
    for gi, kind in enumerate(kinds):
        gy = y0 + gi * group_h + gap / 2
        svg.text(left - 8, gy + bar_h * len(series) / 2 + 4, kind, size=12, anchor="end")
        for si, (key, label, color) in enumerate(series):
            v = data["kinds"][kind][key] / 1024
            by = gy + si * bar_h
            svg.rect(left, by + 1, v * scale, bar_h - 2, color,
                     f"{kind}: {label} {v:.1f} MB")
            svg.text(left + v * scale + 4, by + bar_h - 2, f"{v:.1f}", size=9)
    svg.line(left, y0, left, y0 + plot_h, INK)
    if goal:
        gx = left + goal * scale
        svg.line(gx, y0 - 4, gx, y0 + plot_h, FLOOR_COLOR, 2, "4 2")
        svg.text(gx + 3, y0 - 4, f"goal {goal:g} MB", size=10, color=FLOOR_COLOR)
    y = y0 + plot_h + 48
    notes = [f"Data: {source_line(MEMORY_FILE, data)}, read {data.get('settle_s', '?')} s "
             f"after the standbys started (the later of two readings); ttl "
             f"{data.get('ttl_ms', '?')} ms; bench/standby_memory.py.",
             "Made by bench/plot.py; the table beside it in docs/benchmarks.md gives these "
             "medians, rounded."]
    y = caption(svg, y - 8, [w for n in notes for w in wrap(n)])
    return svg.render(y + 6, title)


def scale_plot(paths: dict[str, str]) -> str:
    data = load(paths, SCALE_FILE)
    points = []  # (standbys of the election, summary, label)
    small = figure(data["results"].get("baton", {}), "crash", "lag_after_expiry_ms")
    if small:
        per = 3  # bench/run.py keeps 3 candidates per election in the crash scenario
        points.append((per - 1, small, "3 candidates"))
    sc = data.get("scale") or {}
    if sc.get("lag_after_expiry", {}).get("n") and sc.get("elections"):
        per = sc["candidates"] // sc["elections"]
        points.append((per - 1, sc["lag_after_expiry"], f"{per:,} candidates"))
    title = "Crash takeover against the number of standbys of one election"
    svg = Svg()
    svg.text(16, 26, title, size=16, weight="bold")
    svg.text(16, 44, "baton on one Redis, all candidates on the same 2 cores; median dot, "
                     "whisker min to max; lower is better", size=11, color=MUTED)
    legend(svg, 16, 64, [(BATON_COLOR, "median"), ("whisker", "min–max"),
                         ("floor", "the run's floor")])
    left, right, top, bottom = 90, WIDTH - 60, 92, 352
    xmin, xmax = 1, 3 * max([p[0] for p in points] + [10])
    fl = (data.get("floor") or {}).get("crash_ms")
    end, step = nice_max(max([p[1]["max"] for p in points] + ([fl] if fl else []) + [1]))

    def px(n: float) -> float:
        return left + (math.log10(n) - math.log10(xmin)) / (
            math.log10(xmax) - math.log10(xmin)) * (right - left)

    def py(v: float) -> float:
        return bottom - v / end * (bottom - top)

    for i in range(int(round(end / step)) + 1):
        y = py(i * step)
        svg.line(left, y, right, y, GRID)
        svg.text(left - 6, y + 4, fmt_tick(i * step, step), size=10, anchor="end", color=MUTED)
    d = xmin
    while d <= xmax:
        svg.line(px(d), top, px(d), bottom, GRID)
        svg.text(px(d), bottom + 15, f"{d:,}", size=10, anchor="middle", color=MUTED)
        d *= 10
    svg.line(left, bottom, right, bottom, INK)
    svg.line(left, top, left, bottom, INK)
    svg.text((left + right) / 2, bottom + 32, "standbys of the election (log scale)",
             size=11, anchor="middle")
    svg.add(f'<text x="20" y="{num((top + bottom) / 2)}" font-size="11" fill="{INK}" '
            f'text-anchor="middle" transform="rotate(-90 20 {num((top + bottom) / 2)})">'
            f"lag after the lease's expiry (ms)</text>")
    if fl:
        svg.line(left, py(fl), right, py(fl), FLOOR_COLOR, 2, "4 2")
        svg.text(right - 4, py(fl) - 5, f"floor {fmt_ms(fl)} ms", size=10, anchor="end",
                 color=FLOOR_COLOR)
    if len(points) > 1:
        pts = " ".join(f"{num(px(n))},{num(py(s['median']))}" for n, s, _ in points)
        svg.add(f'<polyline points="{pts}" fill="none" stroke="{BATON_COLOR}" '
                f'stroke-width="1.5"/>')
    for i, (n, s, label) in enumerate(points):
        x = px(n)
        svg.line(x, py(s["min"]), x, py(s["max"]), INK)
        for v in (s["min"], s["max"]):
            svg.line(x - 5, py(v), x + 5, py(v), INK)
        svg.add(f'<circle cx="{num(x)}" cy="{num(py(s["median"]))}" r="4.5" '
                f'fill="{BATON_COLOR}"><title>{escape(label)}: median '
                f'{fmt_ms(s["median"])} ms, n={s["n"]}</title></circle>')
        last = i == len(points) - 1 and i > 0
        svg.text(x - 9 if last else x + 9, py(s["median"]) + 4,
                 f"{fmt_ms(s['median'])} ms ({label}, n={s['n']})", size=10,
                 anchor="end" if last else "start")
    notes = [f"Data: {source_line(SCALE_FILE, data)}: the crash scenario's 3-candidate "
             f"election and the scale scenario's election of "
             f"{sc.get('candidates', '?'):,} candidates, in the same run. The JSON holds "
             f"these two sizes only.",
             "Made by bench/plot.py."]
    y = caption(svg, bottom + 54, [w for n in notes for w in wrap(n)])
    return svg.render(y + 6, title)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", default=os.path.join(ROOT, "bench", "results"),
                   help="directory holding the result files (default bench/results)")
    p.add_argument("--use", action="append", default=[], metavar="NAME=PATH",
                   help=f"read result file NAME from PATH instead; NAME one of: "
                        f"{', '.join(DEFAULT_FILES)}")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "plots"),
                   help="directory to write the SVG files into (default docs/plots)")
    args = p.parse_args(argv)
    paths = {name: os.path.join(args.results, name) for name in DEFAULT_FILES}
    for u in args.use:
        name, sep, path = u.partition("=")
        if not sep or name not in paths:
            p.error(f"--use {u}: expected NAME=PATH with NAME one of {', '.join(DEFAULT_FILES)}")
        paths[name] = path
    plots = {f"takeover-{stem}.svg": (lambda s=stem, t=title, r=rows:
                                      takeover_plot(s, t, r, paths))
             for stem, title, rows in TAKEOVER_PLOTS}
    plots["standby-memory.svg"] = lambda: memory_plot(paths)
    plots["scale-standbys.svg"] = lambda: scale_plot(paths)
    os.makedirs(args.out, exist_ok=True)
    for name, make in plots.items():
        text = make()
        with open(os.path.join(args.out, name), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print(os.path.join(args.out, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
