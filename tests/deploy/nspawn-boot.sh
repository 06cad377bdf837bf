#!/usr/bin/env bash
# Install the baton .deb in a fresh Debian 12 root file system, boot it with
# systemd-nspawn, and check the packaged baton.service for real:
#
#   1. rootfs    debootstrap bookworm with systemd, dbus and redis-server
#   2. install   apt-get install ./baton.deb in a chroot (the dependencies come
#                from debootstrap's mirror): the postinst creates the baton user and
#                sets /etc/baton's owner; a config for election "deploy-test"
#                against the container's redis, a drop-in lowering WatchdogSec
#                to 3s, and `systemctl enable baton`
#   3. boot      systemd-nspawn -b on a private network, in the background
#   4. ready     boot finished and baton.service active: with Type=notify that
#                means baton sent READY=1; its STATUS= text is shown
#   5. leader    `baton status` inside the container exits 0 (leader); the
#                daemon runs as user baton
#   6. reload    `systemctl reload baton` (SIGHUP) keeps the same process
#   7. watchdog  SIGSTOP baton's main process: systemd must kill and restart
#                it (new MainPID, active again, "Watchdog timeout" logged) and
#                the new process must lead again
#   8. stop      `systemctl stop baton`: clean exit (status 0) in time
#   9. poweroff  the container shuts down; the root file system is removed
#
#   nspawn-boot.sh DEB_DIR WORK_DIR
#
# DEB_DIR holds the baton_*.deb (deb-package-check.sh builds it); a fresh
# directory is made under WORK_DIR and removed at the end. Needs root,
# debootstrap, systemd-nspawn (systemd-container) and nsenter. Every wait is
# bounded; each phase prints its duration.
set -euo pipefail

deb_dir=${1:?usage: nspawn-boot.sh DEB_DIR WORK_DIR}
work_parent=${2:?usage: nspawn-boot.sh DEB_DIR WORK_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ((EUID != 0)); then
  echo "nspawn-boot: needs root (debootstrap, chroot, systemd-nspawn)" >&2
  exit 77
fi
for tool in debootstrap systemd-nspawn nsenter dpkg-deb; do
  if ! command -v "$tool" >/dev/null; then
    echo "nspawn-boot: $tool not found (packages: debootstrap, systemd-container, util-linux, dpkg)" >&2
    exit 77
  fi
done
debs=("$deb_dir"/baton_*.deb)
if [[ ${#debs[@]} != 1 || ! -f "${debs[0]}" ]]; then
  echo "nspawn-boot: expected one baton_*.deb in $deb_dir (run deb_package_lintian first)" >&2
  exit 1
fi
deb=${debs[0]}

mkdir -p "$work_parent"
work=$(mktemp -d "$work_parent/run.XXXXXX")
root=$work/root
boot_log=$work_parent/boot.log
nspawn_pid=
init_pid=

phase_name=
phase_start=$SECONDS
test_start=$SECONDS
phase() {
  [[ -n "$phase_name" ]] && echo "nspawn-boot: phase $phase_name took $((SECONDS - phase_start))s"
  phase_name=$1
  phase_start=$SECONDS
  echo "nspawn-boot: phase $phase_name"
}

in_container() { nsenter --target "$init_pid" --all -- env -u BATON_SOCKET_PATH "$@"; }

fail() {
  echo "nspawn-boot: FAILED in phase $phase_name: $*" >&2
  if [[ -n "$init_pid" ]] && kill -0 "$init_pid" 2>/dev/null; then
    echo "--- systemctl status baton" >&2
    in_container systemctl status --no-pager baton.service >&2 || true
    echo "--- journalctl -u baton" >&2
    in_container journalctl --no-pager -u baton.service -n 60 >&2 || true
  fi
  exit 1
}

cleanup() {
  local status=$?
  if [[ -n "$nspawn_pid" ]] && kill -0 "$nspawn_pid" 2>/dev/null; then
    # SIGTERM makes systemd-nspawn power the container off; SIGKILL if not.
    kill -TERM "$nspawn_pid" 2>/dev/null || true
    timeout 20 tail --pid="$nspawn_pid" -s 0.2 -f /dev/null || kill -KILL "$nspawn_pid" 2>/dev/null || true
    wait "$nspawn_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
  echo "nspawn-boot: total $((SECONDS - test_start))s, exit $status (boot log: $boot_log)"
}
trap cleanup EXIT

# The container's init: the descendant of our nspawn whose PID in its own
# namespace is 1.
find_init() {
  local pids=("$nspawn_pid") next pid children
  while ((${#pids[@]})); do
    next=()
    for pid in "${pids[@]}"; do
      if [[ "$pid" != "$nspawn_pid" ]] && awk '/^NSpid:/ { exit !($NF == 1 && NF > 2) }' "/proc/$pid/status" 2>/dev/null; then
        echo "$pid"
        return 0
      fi
      children=$(ps -o pid= --ppid "$pid" || true)
      for pid in $children; do next+=("$pid"); done
    done
    pids=("${next[@]}")
  done
  return 1
}

# wait_until SECONDS DESCRIPTION COMMAND...: run COMMAND every 0.2s until it
# succeeds, at most SECONDS.
wait_until() {
  local limit=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < deadline)) || fail "$what: not within ${limit}s"
    sleep 0.2
  done
}

main_pid() { in_container systemctl show --property=MainPID --value baton.service; }
is_active() { [[ "$(in_container systemctl is-active baton.service)" == active ]]; }
leads() { in_container baton status >/dev/null 2>&1; }
# Read the whole journal first: with pipefail, `journalctl | grep -q` fails
# whenever grep exits at its match before journalctl has written the rest.
journal_shows_watchdog_timeout() {
  local journal
  journal=$(in_container journalctl --no-pager -u baton.service) || return 1
  [[ "$journal" == *'Watchdog timeout'* ]]
}
restarted_from() {
  local pid
  pid=$(main_pid)
  [[ "$pid" != 0 && "$pid" != "$1" ]] && is_active
}

phase rootfs
"$here/debian-rootfs.sh" "$root" systemd,systemd-sysv,dbus,redis-server || fail "debootstrap"

phase install
# apt resolves the package's dependencies (some are virtual packages, which
# debootstrap --include cannot take) from the mirror debootstrap used.
cp "$deb" "$root/root/baton.deb"
chroot "$root" apt-get -q update || fail "apt-get update in the chroot"
chroot "$root" env DEBIAN_FRONTEND=noninteractive \
  apt-get -q install -y --no-install-recommends /root/baton.deb || fail "apt-get install baton.deb"
rm "$root/root/baton.deb"
chroot "$root" getent passwd baton >/dev/null || fail "the postinst did not create user baton"
# Numeric ids: this host's names for them may differ from the container's.
gid=$(chroot "$root" getent group baton | cut -d: -f3)
owner=$(stat -c '%u:%g %a' "$root/etc/baton" "$root/etc/baton/baton.yaml" | paste -sd' ')
[[ "$owner" == "0:$gid 750 0:$gid 640" ]] || fail "/etc/baton and baton.yaml: $owner (want 0:$gid)"
cat >"$root/etc/baton/baton.yaml" <<'EOF'
# Written by nspawn-boot.sh: a short ttl so the first election (which waits
# one ttl on a fresh Redis) and takeovers are quick.
election: deploy-test
redis:
  url: redis://127.0.0.1:6379
lease:
  ttl: 2s
child:
  command: ["/bin/sleep", "infinity"]
EOF
mkdir -p "$root/etc/systemd/system/baton.service.d"
cat >"$root/etc/systemd/system/baton.service.d/deploy-test.conf" <<'EOF'
[Service]
WatchdogSec=3s
EOF
chroot "$root" systemctl enable baton.service || fail "systemctl enable baton"

phase boot
: >"$boot_log"
timeout --kill-after=10 300 systemd-nspawn --directory="$root" --boot --register=no --keep-unit \
  --private-network --machine=baton-deploy >"$boot_log" 2>&1 </dev/null &
nspawn_pid=$!
# The process that becomes PID 1 is systemd-nspawn's own child until it has
# set up the container and exec'd systemd; enter it only after that.
find_init_now() {
  init_pid=$(find_init) && [[ "$(cat "/proc/$init_pid/comm" 2>/dev/null)" == systemd ]]
}
wait_until 30 "the container's systemd started" find_init_now
systemd_listens() { nsenter --target "$init_pid" --mount -- test -S /run/systemd/private; }
wait_until 30 "the container's systemd listening" systemd_listens
# `is-system-running --wait` returns once the boot has finished, which with
# Type=notify includes baton's READY=1 (or its failure).
boot_state=$(timeout 120 nsenter --target "$init_pid" --all -- systemctl is-system-running --wait) \
  || echo "nspawn-boot: system state after boot: ${boot_state:-unknown}"

phase ready
is_active || fail "baton.service is $(in_container systemctl is-active baton.service) after boot"
status_text=$(in_container systemctl show --property=StatusText --value baton.service)
echo "nspawn-boot: STATUS=$status_text"
[[ -n "$status_text" ]] || fail "baton sent no STATUS= text"
watchdog=$(in_container systemctl show --property=WatchdogUSec --value baton.service)
[[ "$watchdog" == 3s ]] || fail "WatchdogUSec is '$watchdog', not the drop-in's 3s"

phase leader
wait_until 30 "baton status exits 0 (leader)" leads
in_container baton status || true
pid=$(main_pid)
uid=$(in_container awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
[[ "$uid" == "$(in_container id -u baton)" ]] || fail "baton's main process runs as uid $uid, not baton"

phase reload
in_container systemctl reload baton.service || fail "systemctl reload"
leads || fail "no leader answer on the socket after SIGHUP"
[[ "$(main_pid)" == "$pid" ]] && is_active || fail "SIGHUP did not keep the same process"

phase watchdog
restarts=$(in_container systemctl show --property=NRestarts --value baton.service)
in_container systemctl kill --kill-whom=main --signal=SIGSTOP baton.service
# 3s without a WATCHDOG=1, the kill, RestartSec=2s, the start: 30s is ample.
wait_until 30 "a restart after the watchdog timeout" restarted_from "$pid"
# systemd's "Watchdog timeout" line reaches journald over a socket, so it can
# land after the restart is visible: wait for it rather than read once.
wait_until 15 "the journal showing a watchdog timeout" journal_shows_watchdog_timeout
(($(in_container systemctl show --property=NRestarts --value baton.service) == restarts + 1)) \
  || fail "NRestarts did not grow by one"
wait_until 30 "the restarted baton leads again" leads

phase stop
in_container timeout 60 systemctl stop baton.service || fail "systemctl stop"
result=$(in_container systemctl show --property=Result --value baton.service)
exit_status=$(in_container systemctl show --property=ExecMainStatus --value baton.service)
[[ "$result" == success && "$exit_status" == 0 ]] \
  || fail "stopping: Result=$result ExecMainStatus=$exit_status"

phase poweroff
in_container systemctl poweroff || true
timeout 60 tail --pid="$nspawn_pid" -s 0.2 -f /dev/null || fail "the container did not power off"
wait "$nspawn_pid" 2>/dev/null || true
nspawn_pid=
phase done
echo "nspawn-boot: PASSED"
