#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CI: build the Debian packages from the release tarball, run lintian on
# them (an error fails), install them into a clean root and check that the
# installed mcpd serves the bundled plugins' tools over stdio.
#
#   .ci/debian.sh TARBALL
#
# The clean root holds exactly the packages mcpd's Depends name, with their
# own dependencies, fetched from the archive and unpacked: a library that
# the control file forgot is missing there, where the CI machine, with
# every -dev package installed, would hide it.  No maintainer scripts run
# and no mirror is bootstrapped, which keeps this to about a minute.
#
# Prints "deb: N passed, M failed" last, for .ci/run's summary.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
tarball=$(readlink -f "$1")

pass=0; fail=0
ok() { echo "deb: ok: $*"; pass=$((pass + 1)); }
bad() { echo "deb: FAILED: $*" >&2; fail=$((fail + 1)); }
finish() {
  echo "deb: $pass passed, $fail failed"
  [ "$fail" = 0 ]
  exit
}

[ "$(id -u)" = 0 ] || sudo=sudo
apt_get() {
  ${sudo:-} env DEBIAN_FRONTEND=noninteractive apt-get -y -qq \
    --no-install-recommends "$@" >/dev/null
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$top/build/deb
rm -rf "$out"
mkdir -p "$out"

# The source: the tarball, which must be enough to build from, and the
# packaging, which is not part of it.
tar -xzf "$tarball" -C "$work"
src=$(echo "$work"/mcpd-*)
cp -r debian "$src/"

apt_get install dpkg-dev debhelper lintian
if ! (cd "$src" && ${sudo:-} env DEBIAN_FRONTEND=noninteractive \
    apt-get build-dep -y -qq ./ >/dev/null); then
  bad "apt-get build-dep"
  finish
fi

# nocheck: the tests the package build would run are the ones this CI run
# already passed, from the same tarball too (make distcheck).  Locally,
# dpkg-buildpackage runs them.
export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-"nocheck parallel=$(nproc)"}
if (cd "$src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1; then
  ok "dpkg-buildpackage"
else
  tail -n 40 "$out/build.log" >&2
  bad "dpkg-buildpackage (log: build/deb/build.log)"
  finish
fi
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out/"

# Errors fail; warnings are shown.
if lintian --fail-on error --tag-display-limit 0 "$out"/*.changes \
    >"$out/lintian.log" 2>&1; then
  ok "lintian (no errors)"
else
  bad "lintian"
fi
cat "$out/lintian.log"

# The clean root.
root=$work/root
mkdir -p "$root/tmp" "$root/etc" "$work/debs"
chmod 1777 "$root/tmp"
mcpd_deb=$(echo "$out"/mcpd_*.deb)
depends=$(dpkg-deb -f "$mcpd_deb" Depends | tr ',' '\n' |
  sed 's/|.*//; s/(.*)//; s/:any//; s/ //g' | grep .)
# shellcheck disable=SC2086
closure=$(apt-cache depends --recurse --important $depends |
  grep -v '^ \|^<' | sort -u)
# shellcheck disable=SC2086
if ! (cd "$work/debs" && apt-get download -q $closure >/dev/null 2>&1); then
  bad "apt-get download of mcpd's dependencies"
  finish
fi
for deb in "$work"/debs/*.deb "$mcpd_deb"; do
  dpkg-deb -x "$deb" "$root"
done
echo 'include /etc/ld.so.conf.d/*.conf' >"$root/etc/ld.so.conf"
${sudo:-} ldconfig -r "$root"
echo "deb: clean root with $(echo "$closure" | wc -w) packages besides mcpd"

chroot=$(PATH=$PATH:/usr/sbin:/sbin command -v chroot)
in_root() {
  ${sudo:-} env -i PATH=/usr/bin:/bin "$chroot" "$root" "$@"
}

if in_root /usr/bin/mcpd --list >"$out/list.log" 2>&1; then
  ok "mcpd --list loads every bundled plugin"
else
  bad "mcpd --list in the clean root"
fi
cat "$out/list.log"

if in_root /usr/libexec/mcpd/mcpd-http --version >/dev/null; then
  ok "mcpd-http runs"
else
  bad "mcpd-http in the clean root"
fi

printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ci","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
  in_root /usr/bin/mcpd >"$out/tools.json" 2>"$out/tools.log"
list=$(grep '"id":2' "$out/tools.json")
missing=""
for tool in echo calculate list_directory read_file list_tables query fetch; do
  printf '%s' "$list" | grep -q "\"name\":\"$tool\"" ||
    missing="$missing $tool"
done
if [ -n "$list" ] && [ -z "$missing" ]; then
  ok "installed mcpd serves tools/list with the bundled plugins' tools"
else
  bad "tools/list in the clean root; missing:${missing:- the answer}"
  cat "$out/tools.json" "$out/tools.log" >&2
fi
finish
