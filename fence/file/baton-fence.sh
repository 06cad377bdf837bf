#!/bin/sh
# baton fence for files: put a file into a shared directory only if this
# term's fencing token is at least the highest token that has written there.
#
#   baton-fence.sh DIR SOURCE NAME    put a copy of SOURCE at DIR/NAME under the fence
#
# The copy is staged in DIR and renamed into place under the lock, so DIR/NAME
# appears whole or not at all (a rename is atomic within one filesystem, which
# a move of SOURCE from elsewhere would not be). SOURCE is left as it is: a
# refused or failed write loses nothing, and the app removes it when it likes.
#
# The token comes from BATON_TOKEN (set by baton for the command it runs);
# BATON_FENCE_TOKEN overrides it, for an app that reads the token from the
# socket's `start` event. The highest token is kept in DIR/.baton-fence; the
# writes of all fenced writers are serialized by flock(1) on
# DIR/.baton-fence.lock.
#
# Exit status: 0 the file is in place; 75 refused, a newer leader has
# written here (stop at once); 2 bad arguments or no token; 1 other errors.
#
# What it guarantees, and only where flock(2) is a real lock shared by every
# writer (one host's local filesystem; NFSv4 and SMB emulate it with their own
# leases, see fence/README.md): no file from an older token lands after a
# newer token has written, provided every writer goes through this script.
# It cannot stop a writer that does not, a rename that another host's stale
# cache hides, or a lock the file server revoked from a frozen client.
set -eu

refuse_exit=75

if [ "$#" -ne 3 ]; then
  echo "usage: baton-fence.sh DIR SOURCE NAME" >&2
  exit 2
fi
dir=$1 source=$2 name=$3
token=${BATON_FENCE_TOKEN:-${BATON_TOKEN:-}}
case $token in
  '' | 0* | *[!0-9]*)
    echo "baton-fence: no fencing token: BATON_TOKEN is '${token}' (not run by baton?)" >&2
    exit 2 ;;
esac
case $name in
  '' | */* | .baton-fence*)
    echo "baton-fence: NAME must be a plain file name, not '$name'" >&2
    exit 2 ;;
esac
[ -d "$dir" ] || { echo "baton-fence: $dir is not a directory" >&2; exit 2; }
[ -f "$source" ] || { echo "baton-fence: $source is not a file" >&2; exit 2; }

# Is decimal $1 lower than decimal $2? By length, then digits: exact at any size.
lower() {
  if [ "${#1}" -ne "${#2}" ]; then [ "${#1}" -lt "${#2}" ]; else [ "$1" \< "$2" ]; fi
}

# The staged copy goes into DIR first, so the final rename stays on one
# filesystem (atomic there) and a crash leaves only a .baton-fence.tmp file.
staged=$dir/.baton-fence.tmp.$$
cp -- "$source" "$staged"
trap 'rm -f -- "$staged" "$dir/.baton-fence.new.$$"' EXIT

exec 9>>"$dir/.baton-fence.lock"
flock 9
stored=$(cat -- "$dir/.baton-fence" 2>/dev/null || true)
if [ -n "$stored" ] && lower "$token" "$stored"; then
  echo "baton-fence: token $token is stale for $dir: token $stored has written since; a newer leader exists" >&2
  exit "$refuse_exit"
fi
if [ "$stored" != "$token" ]; then
  printf '%s\n' "$token" >"$dir/.baton-fence.new.$$"
  mv -f -- "$dir/.baton-fence.new.$$" "$dir/.baton-fence"
fi
mv -f -- "$staged" "$dir/$name"
