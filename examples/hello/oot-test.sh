#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds examples/hello out of tree, the way a plugin author would: install
# mcpd into a staging directory, compile hello.c with nothing but
# `pkg-config --cflags --libs mcpd`, then call the tool through the built
# mcpd and look for the greeting.
#
# Environment (exported by tests/e2e.mk under `make check`):
#   MCPD_BUILDDIR  top build directory (default: the current directory)
#   MCPD_SRCDIR    top source directory (default: found from this script)
#   PKG_CONFIG     the pkg-config program (default: pkg-config)
#
# Exit 0 on success, 1 on failure, 77 (skipped) when pkg-config is missing.

builddir=${MCPD_BUILDDIR:-$(pwd)}
srcdir=${MCPD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
MAKE=${MAKE:-make}

log=
fail() {
  echo "oot-test: $*" >&2
  if [ -n "$log" ] && [ -f "$log" ]; then
    sed 's/^/  | /' "$log" >&2
  fi
  exit 1
}

command -v "$PKG_CONFIG" >/dev/null 2>&1 || {
  echo "oot-test: $PKG_CONFIG not found; skipping" >&2
  exit 77
}
[ -x "$builddir/src/mcpd" ] || fail "$builddir/src/mcpd is not built"

# mcpd refuses plugin directories and files that others can write, and a
# private umask keeps everything below 0700 without extra chmods.
umask 077
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpd-oot.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' 0
trap 'exit 1' HUP INT TERM

# The parent make's flags (jobserver descriptors, -k, ...) do not belong to
# these independent makes.
unset MAKEFLAGS MFLAGS MAKELEVEL

. "$srcdir/tests/stage-install.sh"
stage_install

cflags=$("$PKG_CONFIG" --cflags mcpd) || fail "pkg-config --cflags mcpd failed"
case $cflags in
  *"-I$tmp/root"*) ;;
  *) fail "pkg-config --cflags mcpd misses the staging root: $cflags" ;;
esac

{
  mkdir "$tmp/build" "$tmp/plugins" &&
    cp "$srcdir/examples/hello/hello.c" "$srcdir/examples/hello/Makefile" \
      "$tmp/build/"
} || fail "cannot copy examples/hello"
log=$tmp/build.log
"$MAKE" -C "$tmp/build" PKG_CONFIG="$PKG_CONFIG" >"$log" 2>&1 ||
  fail "building hello.so out of tree failed"

# The .pc's -fvisibility=hidden must leave exactly one dynamic symbol.
if command -v nm >/dev/null 2>&1; then
  syms=$(nm -D --defined-only "$tmp/build/hello.so" 2>/dev/null |
    awk '{ print $NF }' | tr '\n' ' ')
  [ "$syms" = "mcpd_plugin " ] ||
    fail "hello.so exports '$syms', expected only mcpd_plugin"
fi

cp "$tmp/build/hello.so" "$tmp/plugins/" || fail "cannot copy hello.so"
log=$tmp/mcpd.log
out=$("$builddir/src/mcpd" --plugins "$tmp/plugins" --call hello \
  --args '{"name":"World"}' 2>"$log") ||
  fail "mcpd --call hello exited with status $?; stdout: $out"
case $out in
  *"Hello, World!"*) ;;
  *) fail "mcpd --call hello printed '$out', expected 'Hello, World!'" ;;
esac

# The C++ example the same way, with its own Makefile (c++).
if command -v "${CXX:-c++}" >/dev/null 2>&1; then
  {
    mkdir "$tmp/build-cpp" "$tmp/plugins-cpp" &&
      cp "$srcdir/examples/hello-cpp/hello.cpp" \
        "$srcdir/examples/hello-cpp/Makefile" "$tmp/build-cpp/"
  } || fail "cannot copy examples/hello-cpp"
  log=$tmp/build-cpp.log
  "$MAKE" -C "$tmp/build-cpp" PKG_CONFIG="$PKG_CONFIG" >"$log" 2>&1 ||
    fail "building hello_cpp.so out of tree failed"
  cp "$tmp/build-cpp/hello_cpp.so" "$tmp/plugins-cpp/" ||
    fail "cannot copy hello_cpp.so"
  log=$tmp/mcpd-cpp.log
  out=$("$builddir/src/mcpd" --plugins "$tmp/plugins-cpp" --call hello_cpp \
    --args '{"name":"World"}' 2>"$log") ||
    fail "mcpd --call hello_cpp exited with status $?; stdout: $out"
  case $out in
    *"Hello, World!"*) ;;
    *) fail "mcpd --call hello_cpp printed '$out'" ;;
  esac
fi
echo "oot-test: hello.so and hello_cpp.so, built out of tree, answered" \
  "\"Hello, World!\""
exit 0
