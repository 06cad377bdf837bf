#!/usr/bin/env bash
# Make a Debian 12 (bookworm) root file system for the deploy tests, with
# debootstrap, as a directory. The mirror is the one this machine's own apt
# sources use (read at run time), so no mirror address lives in the repo.
#
#   tests/deploy/debian-rootfs.sh DIR [PACKAGE,PACKAGE,...]
#
# DIR must not exist yet. Extra packages are passed to debootstrap --include.
# Needs root (debootstrap chroots).
set -euo pipefail

dir=${1:?usage: debian-rootfs.sh DIR [PACKAGES]}
include=${2:-}

# find_mirror SUITE: the first http(s) mirror that serves SUITE: deb822
# .sources files (URIs:/Suites:) first, then one-line sources.list entries.
find_mirror() {
  local suite=$1 file
  for file in /etc/apt/sources.list.d/*.sources; do
    [[ -r "$file" ]] || continue
    awk -v want="$suite" '
      function serves() { return uri != "" && index(" " suites " ", " " want " ") > 0 }
      /^[[:space:]]*$/ { if (serves()) { print uri; exit } uri = ""; suites = ""; next }
      tolower($1) == "uris:" { uri = $2 }
      tolower($1) == "suites:" { $1 = ""; suites = $0 }
      END { if (serves()) print uri }
    ' "$file" | head -n1
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -r "$file" ]] || continue
    awk -v want="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                                        if ($(i + 1) == want) { print $i; exit } }' "$file"
  done
}

mirror=$(find_mirror bookworm | grep -E '^https?://' | head -n1 || true)
if [[ -z "$mirror" ]]; then
  echo "debian-rootfs: no bookworm mirror found in this machine's apt sources" >&2
  exit 1
fi
if [[ -e "$dir" ]]; then
  echo "debian-rootfs: $dir exists already" >&2
  exit 1
fi

args=(--variant=minbase)
[[ -n "$include" ]] && args+=("--include=$include")
echo "debian-rootfs: debootstrap ${args[*]} bookworm $dir (mirror from this machine's apt sources)"
if ! debootstrap "${args[@]}" bookworm "$dir" "$mirror" >"$dir.log" 2>&1; then
  tail -n 30 "$dir.log" >&2
  echo "debian-rootfs: debootstrap failed; full log in $dir.log" >&2
  exit 1
fi

# Debian's own bookworm images take their updates and security fixes too
# (bookworm-updates, bookworm-security): so does this tree, from this
# machine's sources where they have them. Packages installed into it later
# then match what users of those images get, and what this machine's own
# build compiled against (the deploy test's compiler cache hits).
{
  echo "deb $mirror bookworm main"
  for suite in bookworm-updates bookworm-security; do
    uri=$(find_mirror "$suite" | grep -E '^https?://' | head -n1 || true)
    if [[ -n "$uri" ]]; then echo "deb $uri $suite main"; fi
  done
} >"$dir/etc/apt/sources.list"
