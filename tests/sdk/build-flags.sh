#!/bin/sh
# SPDX-License-Identifier: MIT
# Compiles plugins the way doc/plugin-guide.md tells authors to, with the
# flags of the built sdk/mcpd.pc (the source sdk/ first on the include
# path, ahead of the prefix it names), and checks what an author sees:
#   - examples/hello/hello.c compiles;
#   - tests/sdk/old_signature.c, a tool callback with the signature from
#     before ABI 1.0, does NOT compile (it would load and answer garbage);
#   - the C example of the guide's "Testing a callback outside mcpd",
#     taken out of doc/plugin-guide.md, compiles, links and passes;
#   - examples/hello-cpp/hello.cpp compiles as C++17 and as C++20 (there
#     with -Wpedantic too) without a warning at -Wall -Wextra, and exports
#     mcpd_plugin alone.
#
# Environment (exported by tests/e2e.mk under `make check`):
#   MCPD_BUILDDIR, MCPD_SRCDIR, PKG_CONFIG (default: pkg-config), CC.
# Exit 0 on success, 1 on failure, 77 (skipped) without pkg-config.

builddir=${MCPD_BUILDDIR:-$(pwd)}
srcdir=${MCPD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
CC=${CC:-cc}
CXX=${CXX:-c++}

fail() {
  echo "build-flags: $*" >&2
  [ -f "$tmp/log" ] && sed 's/^/  | /' "$tmp/log" >&2
  exit 1
}

command -v "$PKG_CONFIG" >/dev/null 2>&1 || {
  echo "build-flags: $PKG_CONFIG not found; skipping" >&2
  exit 77
}
[ -f "$builddir/sdk/mcpd.pc" ] || fail "$builddir/sdk/mcpd.pc is not built"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpd-flags.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' 0
trap 'exit 1' HUP INT TERM

PKG_CONFIG_PATH=$builddir/sdk${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
# Not --define-variable=includedir: that would move json-c's -I as well.
cflags=$("$PKG_CONFIG" --cflags mcpd) || fail "pkg-config --cflags mcpd failed"
cflags="-I$srcdir/sdk $cflags"
libs=$("$PKG_CONFIG" --libs mcpd) || fail "pkg-config --libs mcpd failed"
# The guide's build line: cc -O2 -Wall $(pkg-config --cflags --libs mcpd).
# shellcheck disable=SC2086
$CC -O2 -Wall $cflags -o "$tmp/hello.so" "$srcdir/examples/hello/hello.c" \
  $libs >"$tmp/log" 2>&1 || fail "examples/hello/hello.c does not compile"

# shellcheck disable=SC2086
if $CC -O2 -Wall $cflags -o "$tmp/old.so" "$srcdir/tests/sdk/old_signature.c" \
  $libs >"$tmp/log" 2>&1; then
  fail "a tool callback with the old signature compiled with: $cflags"
fi
grep -q "incompatible-pointer-types\|incompatible pointer" "$tmp/log" ||
  fail "old_signature.c failed for another reason than its callback"

# The guide's example, exactly as the guide shows it: its first C block
# after the heading.
awk '/^## Testing a callback outside mcpd/ { sect = 1; next }
     sect && /^## / { exit }
     sect && /^```c$/ { code = 1; next }
     code && /^```$/ { exit }
     code { print }' "$srcdir/doc/plugin-guide.md" >"$tmp/callback_test.c"
grep -q "int main" "$tmp/callback_test.c" ||
  fail "no C example under \"Testing a callback outside mcpd\" in the guide"

# The test program is an executable: mcpd.pc's -shared is not for it.
jsonc_libs=$("$PKG_CONFIG" --libs json-c) || fail "no json-c.pc"
# shellcheck disable=SC2086
$CC -O2 -Wall $cflags -I"$srcdir/examples/hello" -o "$tmp/callback_test" \
  "$tmp/callback_test.c" $jsonc_libs \
  >"$tmp/log" 2>&1 || fail "the guide's callback test does not compile"
"$tmp/callback_test" >"$tmp/log" 2>&1 || fail "callback_test failed"

# C++: the same header, the same flags.
for std in c++17 c++20; do
  extra=
  [ "$std" = c++20 ] && extra=-Wpedantic
  # shellcheck disable=SC2086
  $CXX -std=$std -O2 -Wall -Wextra -Werror -Wno-unused-parameter $extra \
    -fvisibility-inlines-hidden $cflags -o "$tmp/hello_cpp.so" \
    "$srcdir/examples/hello-cpp/hello.cpp" $libs >"$tmp/log" 2>&1 ||
    fail "examples/hello-cpp/hello.cpp does not compile cleanly as $std"
  if command -v nm >/dev/null 2>&1; then
    syms=$(nm -D --defined-only "$tmp/hello_cpp.so" 2>/dev/null |
      awk '{ print $NF }' | tr '\n' ' ')
    [ "$syms" = "mcpd_plugin " ] ||
      fail "hello_cpp.so ($std) exports '$syms', expected only mcpd_plugin"
  fi
done
# The guide's C++ example, as the guide shows it.
awk '/^## C\+\+$/ { sect = 1; next }
     sect && /^## / { exit }
     sect && /^```cpp$/ { code = 1; next }
     code && /^```$/ { exit }
     code { print }' "$srcdir/doc/plugin-guide.md" >"$tmp/guide.cpp"
grep -q "MCPD_PLUGIN_DEFINE" "$tmp/guide.cpp" ||
  fail "no C++ example under \"C++\" in the guide"
# shellcheck disable=SC2086
$CXX -std=c++17 -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
  -fvisibility-inlines-hidden $cflags -o "$tmp/guide_cpp.so" "$tmp/guide.cpp" \
  $libs >"$tmp/log" 2>&1 || fail "the guide's C++ example does not compile"
rm -f "$tmp/log"
echo "build-flags: hello.c and hello.cpp (C++17, C++20) build, an" \
  "old-signature callback does not"
exit 0
