#!/usr/bin/env python3
"""Check every #include of baton's code against the layers docs/architecture.md writes down.

Usage: check_layers.py REPO_ROOT

The table under "## Layers" in docs/architecture.md is the one source: each row is a
layer, lowest first, and its second column names the layer's files in backquotes
(a folder ends with "/" and holds everything under it; a header or a .cpp is named
whole). A file may include files of its own layer or of a lower one; an include of a
higher layer is a back arrow, and the test names each with its file and line. Every
file of src/, include/ and fuzz/ must belong to a layer, so that a new folder or header
is placed on purpose. Includes of files that are not baton's (<...>, library headers)
are not looked at.
"""

import os
import pathlib
import re
import sys

CODE = re.compile(r"\.(cpp|hpp|h)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
ROW = re.compile(r"^\|\s*(\d+)\s+([^|]+?)\s*\|([^|]*)\|")


def read_layers(root):
    """[(number, name, [path or folder/])] from the Layers table, lowest first."""
    text = (root / "docs/architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)
    if len(section) != 2:
        sys.exit("docs/architecture.md has no '## Layers' section")
    layers = []
    for line in section[1].split("\n## ", 1)[0].splitlines():
        match = ROW.match(line)
        if match:
            places = re.findall(r"`([^`]+)`", match.group(3))
            layers.append((int(match.group(1)), match.group(2), places))
    if not layers:
        sys.exit("docs/architecture.md: the Layers table has no rows")
    return layers


def layer_of(path, layers):
    """The layer whose most specific entry holds `path` (a header named whole beats its folder)."""
    best, best_length = None, -1
    for number, name, places in layers:
        for place in places:
            holds = path.startswith(place) if place.endswith("/") else path == place
            if holds and len(place) > best_length:
                best, best_length = (number, name), len(place)
    return best


def resolve(including, target, root):
    """The repository path an include names, or None when it is not baton's own file."""
    candidates = [
        including.parent / target,  # beside the including file
        root / "include" / target,  # "baton/x.hpp"
        root / "src" / target,  # "config/option_spec.hpp"
    ]
    for candidate in candidates:
        if candidate.is_file():
            return pathlib.Path(os.path.normpath(candidate)).relative_to(root).as_posix()
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1]).resolve()
    layers = read_layers(root)
    problems = []
    for top in ("src", "include", "fuzz"):
        for file in sorted((root / top).rglob("*")):
            if not file.is_file() or not CODE.search(file.name):
                continue
            path = file.relative_to(root).as_posix()
            own = layer_of(path, layers)
            if own is None:
                problems.append(f"{path}: in no layer of docs/architecture.md's Layers table")
                continue
            text = file.read_text(encoding="utf-8", errors="replace")
            for match in INCLUDE.finditer(text):
                target = resolve(file, match.group(1), root)
                if target is None:
                    continue
                theirs = layer_of(target, layers)
                if theirs is None:
                    continue  # reported as a file of its own
                if theirs[0] > own[0]:
                    line = text.count("\n", 0, match.start()) + 1
                    problems.append(
                        f"{path}:{line}: layer {own[0]} ({own[1]}) includes {target}, "
                        f"layer {theirs[0]} ({theirs[1]}): an arrow back up")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s); the layers are docs/architecture.md's '## Layers'")
        return 1
    print(f"{len(layers)} layers, every include runs down or across")
    return 0


if __name__ == "__main__":
    sys.exit(main())
