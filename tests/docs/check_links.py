#!/usr/bin/env python3
"""Check every relative link and anchor in the repository's Markdown pages.

Usage: check_links.py REPO_ROOT

For each *.md file tracked by git (or found on disk outside build trees), every
inline link `[text](target)` whose target is not a URL must name a file or
directory that exists, and a `#anchor` must be the GitHub anchor of a heading of
the target page (lower case, punctuation removed, spaces turned to hyphens, a
repeated heading numbered -1, -2, ...). Links inside code blocks and code spans
are not links. Exit 1 and one line per broken link, or 0.
"""

import os
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)\)")
FENCE = re.compile(r"^\s*```")
SKIP_DIRS = {".git", "node_modules"}


def markdown_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                              "--exclude-standard", "*.md"], capture_output=True, text=True,
                             check=True).stdout.split()
        return sorted(f for f in out if os.path.isfile(os.path.join(root, f)))
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
            found += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".md")]
        return sorted(found)


def slug(title):
    title = re.sub(r"`|\*\*|\*|_(?=\w)|(?<=\w)_", lambda m: "" if m.group(0) != "_" else "_",
                   title.strip())
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link in a heading: its text
    title = title.lower()
    title = re.sub(r"[^\w\- ]", "", title)
    return title.replace(" ", "-")


def lines_outside_code(text):
    fence = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fence = not fence
            continue
        if not fence:
            yield n, line


def anchors(path, cache={}):
    if path not in cache:
        seen, result = {}, set()
        text = open(path, encoding="utf-8").read()
        for _, line in lines_outside_code(text):
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            result.add(s if n == 0 else f"{s}-{n}")
        for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', text):
            result.add(m.group(1))
        cache[path] = result
    return cache[path]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = os.path.abspath(sys.argv[1])
    broken, checked = [], 0
    for rel in markdown_files(root):
        path = os.path.join(root, rel)
        text = open(path, encoding="utf-8").read()
        # A file's own code spans are stripped before the links are found.
        for n, line in lines_outside_code(text):
            for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                target = m.group(1)
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                    continue  # a URL (https:, mailto:, file:)
                checked += 1
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                    if file_part else path
                if not dest.startswith(root):
                    broken.append(f"{rel}:{n}: {target}: outside the repository")
                elif not os.path.exists(dest):
                    broken.append(f"{rel}:{n}: {target}: no such file")
                elif anchor:
                    if not dest.endswith(".md"):
                        broken.append(f"{rel}:{n}: {target}: an anchor into a file that is "
                                      "not Markdown")
                    elif anchor not in anchors(dest):
                        broken.append(f"{rel}:{n}: {target}: no heading has the anchor "
                                      f"#{anchor} in {os.path.relpath(dest, root)}")
    print(f"links: {checked} relative links checked in {len(markdown_files(root))} pages")
    for b in broken:
        print("BROKEN " + b)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
