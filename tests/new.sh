#!/bin/sh
# SPDX-License-Identifier: MIT
# The five-minute path of doc/plugin-guide.md, as a new plugin author
# walks it, against an installed mcpd (a staging install of this build,
# found on $PATH and through pkg-config):
#   mcpd new demo  ->  make check  ->  make install  ->  mcpd install
# with no edit anywhere, and the plugin served from the default plugin
# directory by the command the client's config now runs.  Also: a name
# that is no C identifier is refused, and an existing directory is never
# overwritten.
#
# Environment (exported by tests/e2e.mk under `make check`):
#   MCPD_BUILDDIR, MCPD_SRCDIR, PKG_CONFIG (default: pkg-config).
# Exit 0 on success, 1 on failure, 77 (skipped) without pkg-config.

builddir=${MCPD_BUILDDIR:-$(pwd)}
srcdir=${MCPD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
MAKE=${MAKE:-make}

log=
fail() {
  echo "new: $*" >&2
  if [ -n "$log" ] && [ -f "$log" ]; then
    sed 's/^/  | /' "$log" >&2
  fi
  exit 1
}

command -v "$PKG_CONFIG" >/dev/null 2>&1 || {
  echo "new: $PKG_CONFIG not found; skipping" >&2
  exit 77
}
[ -x "$builddir/src/mcpd" ] || fail "$builddir/src/mcpd is not built"

# Debian's default umask for users: group-writable files, which mcpd
# refuses to load unless the project's Makefile takes care of it.
umask 002
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpd-new.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' 0
trap 'exit 1' HUP INT TERM
chmod 0755 "$tmp"
unset MAKEFLAGS MFLAGS MAKELEVEL XDG_DATA_HOME XDG_CONFIG_HOME MCPD_PLUGIN_PATH

. "$srcdir/tests/stage-install.sh"
stage_install
bin=$staged_bin
PATH=$(dirname "$bin"):$PATH
HOME=$tmp/home
export PATH HOME
mkdir "$HOME" "$tmp/work" || fail "mkdir failed"

cd "$tmp/work" || fail "cd failed"
log=$tmp/new.log
mcpd new demo >"$log" 2>&1 || fail "mcpd new demo failed"
for f in demo/demo.c demo/Makefile demo/README.md; do
  [ -f "$f" ] || fail "mcpd new demo did not write $f"
done
if mcpd new demo >"$log" 2>&1; then fail "mcpd new demo overwrote demo/"; fi
grep -q "never overwritten" "$log" || fail "no reason given for refusing demo/"
for bad in 9lives my-plugin "a b" ""; do
  if mcpd new "$bad" >"$log" 2>&1; then fail "mcpd new accepted \"$bad\""; fi
  grep -q "not a C identifier" "$log" || fail "no reason given for \"$bad\""
done
[ ! -e 9lives ] && [ ! -e my-plugin ] || fail "a refused name made a directory"

log=$tmp/check.log
"$MAKE" -C demo check >"$log" 2>&1 || fail "make check of the new project failed"
grep -q "demo answered Hello, World!" "$log" || fail "make check did not check"
log=$tmp/make-install.log
"$MAKE" -C demo install >"$log" 2>&1 || fail "make install of the new project failed"
so=$HOME/.local/share/mcpd/plugins/demo.so
[ -f "$so" ] || fail "make install did not put demo.so in $so"

# What the client's config runs, from the default plugin directory.
log=$tmp/client.log
mcpd install claude-desktop -- --log-level error >"$log" 2>&1 ||
  fail "mcpd install claude-desktop failed"
config=$HOME/.config/Claude/claude_desktop_config.json
[ -f "$config" ] || fail "no $config"
command=$(sed -n 's/^ *"command": "\(.*\)",$/\1/p' "$config")
[ "$command" = "$(cd "$(dirname "$bin")" && pwd -P)/mcpd" ] ||
  fail "the entry runs \"$command\", not the mcpd that was invoked"
out=$("$command" --log-level error --call demo --args '{"name":"Ada"}' 2>"$log") ||
  fail "the configured mcpd could not call demo: $out"
case $out in
  *'"Hello, Ada!"'*) ;;
  *) fail "demo answered '$out'" ;;
esac
echo "new: mcpd new, make check, make install and mcpd install: demo answers"
exit 0
