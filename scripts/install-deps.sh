#!/usr/bin/env bash
# Install the Debian 12 (bookworm) packages needed to build and test baton.
#
# Usage: scripts/install-deps.sh [--demo | --compile]
#   (default)  everything the test tiers need (scripts/test.sh, CI)
#   --demo     only what building baton and running scripts/demo.sh need:
#              the compiler, CMake, the libraries' headers and redis-server
#   --compile  only what compiling both of the test command's trees needs
#              (the normal one and the sanitizer one): scripts/test.sh
#              installs these first, then the rest while they compile
#
# Nothing is done when every package is already installed; otherwise the
# package lists are refreshed and only the missing packages are installed.
# (procps: `ps`, used by scripts/demo.sh; redis-server brings redis-cli.)
# Uses sudo when not run as root. The system's configured apt sources are used
# as they are.
set -euo pipefail

demo=0
compile=0
case "${1:-}" in
  --demo) demo=1 ;;
  --compile) compile=1 ;;
  "") ;;
  *)
    echo "install-deps: unknown argument '$1' (usage: scripts/install-deps.sh [--demo | --compile])" >&2
    exit 2
    ;;
esac

# Building the baton binary and running the demo.
build_packages=(
  g++ cmake make pkg-config
  libboost-dev libhiredis-dev libspdlog-dev libcli11-dev libyaml-cpp-dev
  nlohmann-json3-dev prometheus-cpp-dev libsystemd-dev libpq-dev libssl-dev
  libzookeeper-st-dev
  redis-server procps
)

# Compiling the test command's two trees.
compile_packages=(
  "${build_packages[@]}"
  # scripts/build.sh and the sanitizer tree build with Ninja (the demo with Make).
  ninja-build
  # the test suites (GoogleTest, GoogleMock); Python for the docs test's CMake
  python3 libgtest-dev libgmock-dev
  # scripts/compiler-cache.sh: later builds on this machine reuse earlier objects.
  ccache
  # the sanitizer tree and scripts/fuzz.sh: clang with libFuzzer and the
  # sanitizer runtimes (a Recommends of clang-14, so not installed by
  # --no-install-recommends).
  clang-14 libclang-rt-14-dev
)

packages=(
  "${compile_packages[@]}"
  # the postgres store's tests (a PostgreSQL 15 server, initdb; PgBouncer for
  # the check that catches transaction pooling).
  postgresql pgbouncer
  # the zookeeper and etcd stores' tests (real servers: ZooKeeper 3.8, etcd
  # 3.4 and etcdctl) and their benchmark peers (python3-kazoo's Election).
  zookeeper etcd-server etcd-client python3-kazoo
  # bench/run.py: the redis-py peer (python3-redis) and the redlock peer (nodejs).
  python3-redis nodejs
  # tests/faults: iptables rules inside a private network namespace, and
  # libfaketime to run a candidate on a slow clock (redlock_faults) and to
  # make an expired certificate (tests/support/test_pki.cpp).
  iptables libfaketime
  # the TLS tests make their certificates with the openssl command.
  openssl
  # tests/deploy: systemd-analyze, the .deb (cpack with dpkg-shlibdeps, lintian),
  # a Debian 12 tree booted with systemd-nspawn, and the container image built
  # with buildah and run with podman (runc).
  systemd systemd-container debootstrap dpkg-dev lintian
  podman buildah runc uidmap fuse-overlayfs
  # tests/deploy/kube-play-test.sh: the pause process of podman's pods
  # (podman kube play); PyYAML for the manifests it plays (kube_podman.py)
  # and for tests/docs/check_metrics.py.
  catatonit python3-yaml
  # promtool, for the alert rules in monitoring/ (check rules, test rules):
  # Debian ships it only with the server, ~19 MB to download, ~100 MB
  # installed with its web assets. Where services start on install (not in
  # a container with policy-rc.d), the server starts too, on port 9090.
  prometheus
)

if ((demo)); then packages=("${build_packages[@]}"); fi
if ((compile)); then packages=("${compile_packages[@]}"); fi

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
if ((demo == 0 && compile == 0)) && ! command -v npm >/dev/null 2>&1; then
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

# The demo keeps apt's and dpkg's hundreds of lines in a log, shown on failure.
apt_log=/dev/stdout
if ((demo)); then
  apt_log="${TMPDIR:-/tmp}/baton-install-deps.log"
  : >"$apt_log"
fi
run_apt() {
  if ! "$@" >>"$apt_log" 2>&1; then
    if [[ "$apt_log" != /dev/stdout ]]; then tail -n 30 "$apt_log" >&2; fi
    echo "install-deps: '$*' failed (log: $apt_log)" >&2
    exit 1
  fi
}
# BATON_APT_UPDATED=1: the lists were refreshed moments ago (scripts/test.sh's
# second call).
if [[ "${BATON_APT_UPDATED:-0}" != 1 ]]; then
  echo "install-deps: refreshing the package lists (apt-get update)"
  run_apt "${as_root[@]}" apt-get update -qq
fi
# The image's build stage (Dockerfile) installs the mirror's current packages,
# and its compile is cache hits only if this machine compiled against the same
# headers. A machine image ships some header packages older than the mirror's
# (seen: linux-libc-dev, libssl-dev, libpq-dev), and nearly every file includes
# one of them, so the image compiled baton all over again. Before the first
# compile, those already installed are brought up to the mirror's version.
if ((compile)); then
  for package in libc6-dev linux-libc-dev libstdc++-12-dev libssl-dev libpq-dev libsystemd-dev; do
    versions=$(LC_ALL=C apt-cache policy "$package" 2>/dev/null |
      awk '$1 == "Installed:" { i = $2 } $1 == "Candidate:" { c = $2 } END { print i, c }')
    read -r installed candidate <<<"$versions"
    if [[ -n "$installed" && "$installed" != "(none)" && -n "$candidate" &&
      "$candidate" != "(none)" && "$installed" != "$candidate" ]]; then
      missing+=("$package")
    fi
  done
fi
echo "install-deps: installing (or bringing up to date) ${#missing[@]} packages and what they need: ${missing[*]}"
run_apt "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
