#!/usr/bin/env python3
"""Check that the committed plots are what bench/plot.py draws from the committed results.

Usage: check_plots.py REPO_ROOT

Runs bench/plot.py into a temporary directory and compares every SVG, byte for byte,
with docs/plots/; also checks that docs/benchmarks.md embeds every plot and embeds
no plot that is missing. Exits 1 with the differences and the command that draws the
plots again (python3 bench/plot.py), or 0.
"""

import difflib
import os
import re
import subprocess
import sys
import tempfile

IMAGE = re.compile(r"!\[[^\]]*\]\((plots/[^)\s]+)\)")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = os.path.abspath(sys.argv[1])
    committed_dir = os.path.join(root, "docs", "plots")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([sys.executable, os.path.join(root, "bench", "plot.py"), "--out", tmp],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print(f"FAIL bench/plot.py exited {r.returncode}:\n{r.stderr.strip()}")
            return 1
        drawn = sorted(f for f in os.listdir(tmp) if f.endswith(".svg"))
        committed = sorted(f for f in os.listdir(committed_dir) if f.endswith(".svg")) \
            if os.path.isdir(committed_dir) else []
        for name in sorted(set(drawn) | set(committed)):
            rel = f"docs/plots/{name}"
            if name not in committed:
                print(f"FAIL {rel} is drawn by bench/plot.py but not committed")
                failed = True
                continue
            if name not in drawn:
                print(f"FAIL {rel} is committed but bench/plot.py no longer draws it")
                failed = True
                continue
            with open(os.path.join(tmp, name), "rb") as f:
                new = f.read()
            with open(os.path.join(committed_dir, name), "rb") as f:
                old = f.read()
            if new != old:
                failed = True
                diff = difflib.unified_diff(old.decode("utf-8", "replace").splitlines(),
                                            new.decode("utf-8", "replace").splitlines(),
                                            f"{rel} (committed)", f"{rel} (bench/plot.py)",
                                            lineterm="", n=0)
                print(f"FAIL {rel} differs from what bench/plot.py draws:\n"
                      + "\n".join(list(diff)[:40]))
            else:
                print(f"ok   {rel}")
    page = os.path.join(root, "docs", "benchmarks.md")
    with open(page, encoding="utf-8") as f:
        embedded = set(IMAGE.findall(f.read()))
    for target in sorted(embedded):
        if not os.path.isfile(os.path.join(root, "docs", target)):
            print(f"FAIL docs/benchmarks.md embeds {target}, which does not exist")
            failed = True
    for name in committed:
        if f"plots/{name}" not in embedded:
            print(f"FAIL docs/benchmarks.md does not embed plots/{name}")
            failed = True
    if failed:
        print("Draw the plots again with\n    python3 bench/plot.py\nand commit docs/plots/.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
