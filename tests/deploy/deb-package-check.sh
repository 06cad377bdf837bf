#!/usr/bin/env bash
# Build the Debian package with CPack in BUILD_DIR, check what it holds, and
# run lintian on it: any error (E:) fails; warnings are printed and allowed.
#
#   deb-package-check.sh BUILD_DIR OUT_DIR
#
# OUT_DIR is emptied and receives baton_VERSION_ARCH.deb, which the boot test
# (nspawn-boot.sh) installs.
set -euo pipefail

build_dir=${1:?usage: deb-package-check.sh BUILD_DIR OUT_DIR}
out_dir=${2:?usage: deb-package-check.sh BUILD_DIR OUT_DIR}

for tool in cpack dpkg-deb dpkg-shlibdeps lintian; do
  if ! command -v "$tool" >/dev/null; then
    echo "deb-package-check: $tool not found (packages: cmake, dpkg-dev, lintian)" >&2
    exit 77
  fi
done

fail() { echo "deb-package-check: $*" >&2; exit 1; }

start=$SECONDS
rm -rf "$out_dir"
mkdir -p "$out_dir"
if ! cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$out_dir" >"$out_dir/cpack.log" 2>&1; then
  cat "$out_dir/cpack.log" >&2
  fail "cpack failed"
fi
debs=("$out_dir"/baton_*.deb)
[[ ${#debs[@]} == 1 && -f "${debs[0]}" ]] || fail "expected one baton_*.deb in $out_dir, got: ${debs[*]}"
deb=${debs[0]}
echo "deb-package-check: built $(basename "$deb") in $((SECONDS - start))s"

contents=$(dpkg-deb --contents "$deb")
for path in ./usr/bin/baton ./usr/libexec/baton/baton-keeper ./lib/systemd/system/baton.service ./lib/systemd/system/baton@.service \
            ./etc/baton/baton.yaml ./usr/share/doc/baton/copyright \
            ./usr/share/doc/baton/changelog.Debian.gz ./usr/share/doc/baton/README.md \
            ./usr/share/doc/baton/docs/operating.md ./usr/share/doc/baton/docs/stores/redis.md \
            ./usr/share/man/man1/baton.1.gz ./usr/share/bash-completion/completions/baton; do
  grep -q " $path\$" <<<"$contents" || fail "$path is missing from the package"
done
for binary in ./usr/bin/baton ./usr/libexec/baton/baton-keeper; do
  grep -q "^-rwxr-xr-x root/root .* $binary\$" <<<"$contents" \
    || fail "$binary is not root-owned 0755: $(grep " $binary\$" <<<"$contents")"
done

control=$(mktemp -d)
trap 'rm -rf "$control"' EXIT
dpkg-deb --control "$deb" "$control"
grep -qx /etc/baton/baton.yaml "$control/conffiles" || fail "/etc/baton/baton.yaml is not a conffile"
for script in postinst prerm postrm; do
  [[ -x "$control/$script" ]] || fail "maintainer script $script is missing or not executable"
done
depends=$(dpkg-deb --field "$deb" Depends)
# adduser for the postinst; libhiredis shows that dpkg-shlibdeps ran.
for dependency in adduser libhiredis; do
  grep -q "$dependency" <<<"$depends" || fail "Depends lacks $dependency: $depends"
done
echo "deb-package-check: Depends: $depends"

start=$SECONDS
status=0
lintian_output=$(lintian --fail-on error --display-info "$deb" 2>&1) || status=$?
echo "$lintian_output"
echo "deb-package-check: lintian took $((SECONDS - start))s, exit $status"
if grep -q '^E:' <<<"$lintian_output" || ((status != 0)); then
  fail "lintian reports errors"
fi
echo "deb-package-check: no lintian errors"
