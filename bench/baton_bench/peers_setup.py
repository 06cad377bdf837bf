"""Finding the peers' runtimes and installing the Node peer's packages.

redis-py comes from Debian (python3-redis); the harness itself needs only the
standard library, so the interpreter that runs the harness (perhaps a pyenv
one) may lack it: the first of --python, this interpreter and /usr/bin/python3
that can `import redis` runs the peer.

redlock and ioredis come from npm at the versions pinned in
bench/peers/package-lock.json (which holds integrity hashes, no download
addresses). They are installed with `npm ci` into a cache directory named
after a hash of package.json + package-lock.json, never into the source tree;
the candidate script is copied next to that node_modules so Node's module
resolution finds them. A missing runtime is an error with a clear message,
never a silent skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PEERS_DIR = Path(__file__).resolve().parent.parent / "peers"


class peer_setup_error(RuntimeError):
    """A peer cannot run here; the message says what to install."""


def find_redis_py(preferred: str | None) -> tuple[str, str]:
    """(interpreter, redis-py version) of a python3 that has redis-py."""
    candidates = [preferred] if preferred else [sys.executable, "/usr/bin/python3"]
    tried = []
    for python in candidates:
        if not python or python in tried:
            continue
        tried.append(python)
        try:
            out = subprocess.run([python, "-c", "import redis; print(redis.__version__)"],
                                 capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0:
            return python, out.stdout.strip()
    raise peer_setup_error(
        "redis-py is not importable by " + ", ".join(tried) +
        ": install Debian's python3-redis (scripts/install-deps.sh does) or pass --python")


def _lock_hash() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((PEERS_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "baton-bench"


def install_redlock(cache_dir: Path, log: Path) -> tuple[Path, str, dict[str, str]]:
    """(candidate script in the cache, node version, package versions)."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        raise peer_setup_error(
            "the redlock peer needs node and npm (" +
            ("npm" if node else "node and npm") + " not found on PATH): install them, e.g. "
            "`apt-get install nodejs npm` on Debian 12 (NodeSource's nodejs package includes npm)")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True,
                                  timeout=30).stdout.strip()
    target = cache_dir / f"node-{_lock_hash()}"
    installed = target / "node_modules" / "redlock" / "package.json"
    if not installed.exists():
        target.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(PEERS_DIR / name, target / name)
        with open(log, "ab") as out:
            result = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
                cwd=target, stdout=out, stderr=subprocess.STDOUT, timeout=600)
        if result.returncode != 0 or not installed.exists():
            raise peer_setup_error(f"`npm ci` for redlock failed in {target} (see {log})")
    script = target / "redlock_candidate.mjs"
    shutil.copyfile(PEERS_DIR / "redlock_candidate.mjs", script)
    versions = {}
    for package in ("redlock", "ioredis"):
        meta = json.loads((target / "node_modules" / package / "package.json").read_text())
        versions[package] = meta.get("version", "?")
    return script, node_version, versions
