#!/usr/bin/env bash
# Check a systemd unit file with systemd-analyze, without installing it.
#
#   systemd-unit-check.sh verify   BATON_BINARY UNIT_FILE UNIT_NAME
#   systemd-unit-check.sh security BATON_BINARY UNIT_FILE UNIT_NAME MAX_EXPOSURE
#
# The unit is copied into a temporary directory with ExecStart's /usr/bin/baton
# replaced by BATON_BINARY (the one just built), because `verify` reports a
# missing executable; the script checks that this is the copy's only
# difference. UNIT_NAME is what is checked: the file's own name, or an
# instance (baton@demo.service) of a template (baton@.service).
#
# verify: systemd-analyze exits 0 even on unknown keys or bad values, so ANY
# output fails the test. security: the "Overall exposure level" (0 = fully
# sandboxed, 10 = not at all) must not exceed MAX_EXPOSURE.
set -euo pipefail

mode=${1:?usage: systemd-unit-check.sh verify|security BINARY UNIT_FILE UNIT_NAME [MAX]}
binary=${2:?missing BATON_BINARY}
unit_file=${3:?missing UNIT_FILE}
unit_name=${4:?missing UNIT_NAME}

if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-unit-check: systemd-analyze not found (package systemd)" >&2
  exit 77
fi
[[ -x "$binary" ]] || { echo "systemd-unit-check: $binary is not an executable" >&2; exit 1; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
copy="$dir/$(basename "$unit_file")"
sed "s#^ExecStart=/usr/bin/baton #ExecStart=$binary #" "$unit_file" >"$copy"

# Exactly one line may differ: the ExecStart line, and only in the binary.
changed=$(diff "$unit_file" "$copy" | grep -c '^[<>]' || true)
if [[ "$changed" != 2 ]]; then
  echo "systemd-unit-check: expected one ExecStart=/usr/bin/baton line to rewrite, got:" >&2
  diff "$unit_file" "$copy" >&2 || true
  exit 1
fi

case "$mode" in
  verify)
    # A template is checked through an instance: the file is found next to
    # it by name, and %i resolves.
    output=$(cd "$dir" && systemd-analyze verify "./$unit_name" 2>&1) || status=$?
    if [[ -n "$output" || ${status:-0} != 0 ]]; then
      echo "systemd-unit-check: systemd-analyze verify $unit_name (exit ${status:-0}):" >&2
      echo "$output" >&2
      exit 1
    fi
    echo "systemd-unit-check: $unit_name verifies cleanly"
    ;;
  security)
    max=${5:?missing MAX_EXPOSURE}
    output=$(cd "$dir" && systemd-analyze security --offline=yes --no-pager "./$unit_name" 2>&1)
    level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9.]*\).*/\1/p' <<<"$output")
    if [[ -z "$level" ]]; then
      echo "systemd-unit-check: no exposure level in the output of systemd-analyze security:" >&2
      echo "$output" >&2
      exit 1
    fi
    # Print what is still exposed, so a regression shows what changed.
    grep '✗' <<<"$output" || true
    if awk -v level="$level" -v max="$max" 'BEGIN { exit !(level > max) }'; then
      echo "systemd-unit-check: $unit_name exposure level $level is above $max" >&2
      exit 1
    fi
    echo "systemd-unit-check: $unit_name exposure level $level (at most $max)"
    ;;
  *)
    echo "systemd-unit-check: unknown mode '$mode' (verify or security)" >&2
    exit 2
    ;;
esac
