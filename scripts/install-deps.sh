#!/usr/bin/env bash
# Install the Debian 12 (bookworm) packages needed to build and test baton.
#
# Nothing is done when every package is already installed; otherwise the
# package lists are refreshed and only the missing packages are installed.
# (procps: `ps`, used by scripts/demo.sh; redis-server brings redis-cli.)
# Uses sudo when not run as root. The system's configured apt sources are used
# as they are.
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  # scripts/compiler-cache.sh: later builds on this machine reuse earlier objects.
  ccache
  libboost-dev libhiredis-dev libspdlog-dev libcli11-dev libyaml-cpp-dev
  nlohmann-json3-dev prometheus-cpp-dev libsystemd-dev
  libgtest-dev libgmock-dev
  redis-server procps
  # the postgres store (libpq) and its tests (a PostgreSQL 15 server, initdb;
  # PgBouncer for the check that catches transaction pooling).
  libpq-dev postgresql pgbouncer
  # scripts/fuzz.sh: clang with libFuzzer and the sanitizer runtimes (a
  # Recommends of clang-14, so not installed by --no-install-recommends).
  clang-14 libclang-rt-14-dev
  # bench/run.py: the redis-py peer (python3-redis) and the redlock peer (nodejs).
  python3 python3-redis nodejs
  # tests/faults: iptables rules inside a private network namespace.
  iptables
  # tests/deploy: systemd-analyze, the .deb (cpack with dpkg-shlibdeps, lintian),
  # a Debian 12 tree booted with systemd-nspawn, and the container image built
  # with buildah and run with podman (runc).
  systemd systemd-container debootstrap dpkg-dev lintian
  podman buildah runc uidmap fuse-overlayfs
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$package")
  fi
done

# The benchmark's redlock peer needs npm. Debian ships it apart from nodejs; a
# nodejs from elsewhere usually brings its own npm, which Debian's npm package
# would conflict with, so npm is asked for only when there is none.
if ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

if ((EUID == 0)); then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: missing packages (${missing[*]}), and not root and no sudo" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
