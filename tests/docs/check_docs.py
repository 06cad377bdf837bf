#!/usr/bin/env python3
"""Run or check every command shown in README.md, the pages under docs/, examples/README.md
and fence/README.md.

Usage: check_docs.py BATON_BINARY REPO_ROOT [MARKDOWN | DIRECTORY...]

A DIRECTORY stands for every *.md file under it, so a new page is checked without a change here.

Which code blocks and lines are commands:
  - a block fenced as ```console or ``` (no language): lines starting with "$ " are
    commands (a trailing backslash continues one); the lines after a command, up to the
    next "$ ", are its documented output;
  - a block fenced as ```sh (or bash/shell): every line is a command (comments and
    blank lines ignored, trailing backslashes join lines);
  - other blocks (yaml, json, ...) are not commands.

What happens to each command:
  - `baton run ARGS` (or build/baton ...): `baton check-config ARGS` instead, which
    validates every flag and value without a server and without running forever; if the
    block shows output, check-config must print exactly that (and exit 2 if it is an
    error message), else it must exit 0;
  - `baton check-config|version|--version|--help ...`: run, must exit 0 (or match the
    documented output);
  - `baton status|watch|resign|health ...`: run against a socket nobody listens on;
    must not be a usage error (exit 2);
  - examples/*.py: run with the documented arguments for a moment; must not exit with a
    usage error;
  - scripts/*.sh: must exist and be executable (they install, build or run for minutes);
  - anything else (redis-cli, curl, systemctl, docker, pipes, ...) needs a marker.

Markers: an HTML comment on the last non-blank line before a block's fence:
  <!-- docs-test: skip WHY -->                 the block cannot run here (say why);
  <!-- docs-test: session NAME [expect="TEXT"]... -->
        the blocks of one session, in order, form one bash script that runs for real,
        with the ports 6390 and 6391 replaced by free loopback ports, /tmp/ by a private
        directory and build/baton by the binary under test; it must exit 0 and print
        every TEXT.

Paths under /tmp/ are moved to a private directory for every command. Every command
runs with a timeout. Only loopback is used.
"""

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(skip|session)\b(.*?)-->\s*$")
FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_+-]*)\s*$")
SCRIPT_LANGS = {"sh", "bash", "shell"}
CONSOLE_LANGS = {"console", ""}
BATON_NAMES = {"baton", "build/baton", "./build/baton"}
CLIENT_VERBS = {"status", "watch", "resign", "health"}
PLAIN_VERBS = {"check-config", "version", "--version", "--help", "-h", "help"}
TIMEOUT = 20  # seconds, for one command
SESSION_TIMEOUT = 120  # seconds, for one session script
EXAMPLE_RUN = 2.0  # seconds an example app runs before it is stopped


class Block:
    def __init__(self, path, line, lang, marker, marker_arg, body):
        self.path, self.line, self.lang = path, line, lang
        self.marker, self.marker_arg, self.body = marker, marker_arg, body

    def where(self, offset=0):
        return f"{self.path}:{self.line + offset}"


def parse_blocks(path, rel):
    blocks = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        marker = MARKER.match(lines[j]) if j >= 0 else None
        body = []
        k = i + 1
        while k < len(lines) and not re.match(r"^\s*```\s*$", lines[k]):
            body.append(lines[k][len(indent):] if lines[k].startswith(indent) else lines[k])
            k += 1
        blocks.append(Block(rel, i + 2, lang, marker.group(1) if marker else None,
                            marker.group(2).strip() if marker else "", body))
        i = k + 1
    return blocks


def commands_of(block):
    """[(line offset, command, documented output lines)]"""
    out = []
    if block.lang in SCRIPT_LANGS:
        pending, start = "", 0
        for n, raw in enumerate(block.body):
            if not pending:
                start = n
            text = raw.rstrip()
            if text.endswith("\\"):
                pending += text[:-1] + " "
                continue
            cmd = (pending + text).strip()
            pending = ""
            if cmd and not cmd.startswith("#"):
                out.append((start, cmd, []))
    elif block.lang in CONSOLE_LANGS:
        cur = None
        n = 0
        while n < len(block.body):
            raw = block.body[n]
            if raw.startswith("$ "):
                start, cmd = n, raw[2:]
                while cmd.rstrip().endswith("\\") and n + 1 < len(block.body):
                    n += 1
                    cmd = cmd.rstrip()[:-1] + " " + block.body[n].lstrip("> ").strip()
                cur = (start, cmd.strip(), [])
                out.append(cur)
            elif cur is not None:
                cur[2].append(raw)
            n += 1
        for _, _, output in out:
            while output and not output[-1].strip():
                output.pop()
    return out


def split(cmd):
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    words = list(lex)
    if words and words[-1] == "&":
        words.pop()
    return words


class Checker:
    def __init__(self, baton, root):
        self.baton, self.root = baton, root
        self.tmp = tempfile.mkdtemp(prefix="baton-docs-")
        self.failures = []
        self.counts = {"run": 0, "check-config": 0, "client": 0, "exists": 0,
                       "session": 0, "skipped": 0}

    def fail(self, where, cmd, why):
        self.failures.append(f"{where}: {cmd}\n    {why}")

    def private(self, word):
        return word.replace("/tmp/", self.tmp + "/")

    def execute(self, argv, env=None, timeout=TIMEOUT):
        full_env = dict(os.environ)
        for k in list(full_env):
            if k.startswith("BATON_"):
                del full_env[k]
        full_env.update(env or {})
        return subprocess.run(argv, cwd=self.root, env=full_env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def check_command(self, where, cmd, output):
        words = split(cmd)
        if any(w in ("|", "||", "&&", ";", ">", ">>", "<", "&") for w in words) or "$(" in cmd:
            return self.fail(where, cmd, "a shell pipeline or construct: make its block a "
                             "session or mark it <!-- docs-test: skip WHY -->")
        env = {}
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            k, v = words.pop(0).split("=", 1)
            env[k] = self.private(v)
        if not words:
            return
        prog, args = words[0], [self.private(w) for w in words[1:]]
        if prog in BATON_NAMES:
            return self.check_baton(where, cmd, args, env, output)
        if prog.startswith("examples/") and os.path.isfile(os.path.join(self.root, prog)):
            return self.check_example(where, cmd, prog, args, env)
        if prog.startswith("scripts/"):
            path = os.path.join(self.root, prog)
            self.counts["exists"] += 1
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                self.fail(where, cmd, f"{prog} is not an executable file")
            return
        self.fail(where, cmd, f"'{prog}' cannot be checked offline: make its block a session "
                  "or mark it <!-- docs-test: skip WHY -->")

    def check_baton(self, where, cmd, args, env, output):
        verb = args[0] if args else ""
        if verb == "run":
            args = self.stub_placeholder(args)
            sock = args[args.index("--socket") + 1] if "--socket" in args[:-1] else None
            if sock and not os.access(os.path.dirname(sock) or ".", os.W_OK):
                self.fail(where, cmd, f"the socket's directory {os.path.dirname(sock)} is "
                          "missing or not writable here: use /tmp or $XDG_RUNTIME_DIR")
            argv = [self.baton, "check-config"] + args[1:]
            self.counts["check-config"] += 1
        elif verb in PLAIN_VERBS:
            argv = [self.baton] + args
            self.counts["run"] += 1
        elif verb in CLIENT_VERBS:
            rest = args[1:]
            if "--socket" not in rest and "--config" not in rest and \
                    "BATON_SOCKET_PATH" not in env:
                rest += ["--socket", os.path.join(self.tmp, "nobody-listens.sock")]
            argv = [self.baton, verb] + rest
            self.counts["client"] += 1
        else:
            return self.fail(where, cmd, f"unknown baton verb '{verb}'")
        try:
            r = self.execute(argv, env)
        except subprocess.TimeoutExpired:
            return self.fail(where, cmd, f"timed out after {TIMEOUT}s")
        got = (r.stdout + r.stderr).rstrip("\n").split("\n")
        if verb in CLIENT_VERBS:
            if r.returncode == 2:
                self.fail(where, cmd, f"usage error: {r.stderr.strip()}")
            return
        if output:
            want = [line.rstrip() for line in output]
            if [line.rstrip() for line in got] != want:
                return self.fail(where, cmd, "output differs:\n      documented: " +
                                 "\n                  ".join(want) + "\n      actual:     " +
                                 "\n                  ".join(got))
            expect_rc = 2 if want[0].startswith("baton: ") else 0
        else:
            expect_rc = 0
        if r.returncode != expect_rc:
            self.fail(where, cmd, f"exit {r.returncode}, expected {expect_rc}: "
                      f"{r.stderr.strip()[:500]}")

    def stub_placeholder(self, args):
        """`-- ./worker ARGS` names the reader's own app: stand in an executable stub for a
        ./NAME that is not in the repository, so check-config can accept it."""
        if "--" not in args:
            return args
        i = args.index("--") + 1
        if i < len(args) and args[i].startswith("./") and \
                not os.path.exists(os.path.join(self.root, args[i])):
            stub = os.path.join(self.tmp, "stub-" + os.path.basename(args[i]))
            with open(stub, "w") as f:
                f.write("#!/bin/sh\nexit 0\n")
            os.chmod(stub, 0o755)
            args = args[:i] + [stub] + args[i + 1:]
        return args

    def check_example(self, where, cmd, prog, args, env):
        self.counts["run"] += 1
        full_env = dict(os.environ, **env)
        p = subprocess.Popen([os.path.join(self.root, prog)] + args, cwd=self.tmp,
                             env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            _, err = p.communicate(timeout=EXAMPLE_RUN)
            if p.returncode == 2 or "usage:" in err:
                self.fail(where, cmd, f"usage error: {err.strip()[:500]}")
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # still running with these arguments: fine
            p.communicate()

    def run_session(self, name, blocks, expects):
        self.counts["session"] += 1
        with socket.socket() as s, socket.socket() as s2:
            s.bind(("127.0.0.1", 0))
            s2.bind(("127.0.0.1", 0))
            port, port2 = s.getsockname()[1], s2.getsockname()[1]
        script = "\n".join("\n".join(b.body) for b in blocks)
        script = script.replace("6390", str(port)).replace("6391", str(port2))
        script = script.replace("/tmp/", self.tmp + "/")
        script = re.sub(r"(?<![\w/.])(\./)?build/baton\b", self.baton, script)
        where = blocks[0].where()
        p = subprocess.Popen(["bash", "-c", script], cwd=self.root, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True,
                             env={k: v for k, v in os.environ.items()
                                  if not k.startswith("BATON_")})
        try:
            out, _ = p.communicate(timeout=SESSION_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            self.fail(where, f"session {name}", f"timed out after {SESSION_TIMEOUT}s:\n{out}")
            return
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # anything the script left behind
            except ProcessLookupError:
                pass
            # A daemonized redis-server left running by a failed script.
            subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"],
                           capture_output=True, timeout=10)
        if p.returncode != 0:
            self.fail(where, f"session {name}", f"exit {p.returncode}:\n{out}")
            return
        for text in expects:
            if text not in out:
                self.fail(where, f"session {name}", f"output lacks '{text}':\n{out}")

    def check_file(self, path, rel):
        sessions = {}
        for block in parse_blocks(path, rel):
            cmds = commands_of(block)
            if block.marker == "skip":
                if not block.marker_arg:
                    self.fail(block.where(), "skip marker", "say why the block cannot run")
                self.counts["skipped"] += len(cmds)
                continue
            if block.marker == "session":
                # Checked statically too, for a precise message (unless the config file
                # is one the session writes under /tmp/ first); then run for real below.
                for offset, cmd, output in cmds:
                    words = split(cmd)
                    writes_config = "--config" in words[:-1] and \
                        words[words.index("--config") + 1].startswith("/tmp/")
                    if len(words) > 1 and words[0] in BATON_NAMES and words[1] == "run" and \
                            not writes_config:
                        self.check_command(block.where(offset), cmd, output)
                name, _, rest = block.marker_arg.partition(" ")
                entry = sessions.setdefault(name, ([], []))
                entry[0].append(block)
                entry[1].extend(re.findall(r'expect="([^"]*)"', rest))
                continue
            for offset, cmd, output in cmds:
                self.check_command(block.where(offset), cmd, output)
        for name, (blocks, expects) in sessions.items():
            self.run_session(name, blocks, expects)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    baton, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    files = []
    for rel in sys.argv[3:] or ["README.md", "docs", "examples/README.md", "fence/README.md"]:
        if os.path.isdir(os.path.join(root, rel)):
            for d, _, names in sorted(os.walk(os.path.join(root, rel))):
                files += sorted(os.path.relpath(os.path.join(d, n), root)
                                for n in names if n.endswith(".md"))
        else:
            files.append(rel)
    checker = Checker(baton, root)
    started = time.monotonic()
    try:
        for rel in files:
            checker.check_file(os.path.join(root, rel), rel)
    finally:
        subprocess.run(["rm", "-rf", checker.tmp])
    c = checker.counts
    print(f"docs: {c['run']} commands run, {c['check-config']} `baton run` lines checked with "
          f"check-config, {c['client']} client commands checked for usage, {c['exists']} "
          f"scripts checked to exist, {c['session']} sessions run, {c['skipped']} commands in "
          f"skipped blocks ({time.monotonic() - started:.1f}s)")
    for f in checker.failures:
        print("FAIL " + f)
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
