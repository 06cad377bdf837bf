#!/usr/bin/env python3
"""Check that a committed page equals what the binary prints for it.

Usage: check_generated.py BATON_BINARY REPO_ROOT

docs/configuration-reference.md is printed by `baton __config-reference` from the
option table and the store kinds' registry. When the page and the binary disagree
(an option added, a default or a help line changed, a kind registered) this exits 1
with the difference and the command that writes the page again.
"""

import difflib
import os
import subprocess
import sys

PAGES = {"docs/configuration-reference.md": ["__config-reference"]}


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    baton, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    failed = False
    for rel, args in PAGES.items():
        r = subprocess.run([baton] + args, capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            print(f"FAIL baton {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
            failed = True
            continue
        try:
            committed = open(os.path.join(root, rel), encoding="utf-8").read()
        except OSError as e:
            committed = ""
            print(f"FAIL {rel}: {e}")
        if committed != r.stdout:
            failed = True
            diff = difflib.unified_diff(committed.splitlines(), r.stdout.splitlines(),
                                        f"{rel} (committed)", f"baton {' '.join(args)}",
                                        lineterm="", n=1)
            print(f"FAIL {rel} differs from what the binary prints; write it again with\n"
                  f"    build/baton {' '.join(args)} > {rel}\n" + "\n".join(diff))
        else:
            print(f"ok   {rel} is what `baton {' '.join(args)}` prints")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
