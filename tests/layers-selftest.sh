#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/layers.sh must fail where the rule is broken: a use the graph does
# not allow, an edge nobody uses, a module nobody listed, and a circle.
# Each case is a tiny src/ tree of its own, checked on its includes.
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0

# tree NAME LAYERS FILE:INCLUDES...
tree() {
  d=$tmp/$1; mkdir -p "$d/src/low" "$d/src/high"
  printf '%s\n' "$2" >"$d/src/layers.txt"
  shift 2
  for spec in "$@"; do
    f=${spec%%:*}; incs=${spec#*:}
    : >"$d/src/$f"
    for i in $incs; do echo "#include \"$i.h\"" >>"$d/src/$f"; done
  done
}
# expect NAME STATUS PATTERN: layers.sh on tree NAME exits STATUS and, for
# a failure, prints PATTERN.
expect() {
  out=$(MCPD_SRCDIR=$tmp/$1 MCPD_BUILDDIR=$tmp/$1 sh "$here/layers.sh" 2>&1)
  rc=$?
  if [ "$rc" != "$2" ] || ! printf '%s\n' "$out" | grep -q -- "$3"; then
    echo "layers-selftest: $1: expected status $2 and '$3', got $rc:"
    printf '%s\n' "$out" | sed 's/^/  /'
    status=1
  fi
}

tree good 'a:
b: a' low/a.c: low/a.h: high/b.c:"a b"
expect good 0 'no circle'
tree unlisted 'a:' low/a.c: high/b.c:a
expect unlisted 1 'module b (src/) is not in src/layers.txt'
tree forbidden 'a:
b:' low/a.c: high/b.c:a
expect forbidden 1 'b uses a, which src/layers.txt does not allow'
# An edge no include and no symbol uses: needs the objects, so compile.
tree unused 'a:
b: a' low/a.c: high/b.c:
echo 'int a_fn(void) { return 1; }' >"$tmp/unused/src/low/a.c"
echo 'int b_fn(void) { return 2; }' >"$tmp/unused/src/high/b.c"
${CC:-cc} -c -o "$tmp/unused/src/low/a.o" "$tmp/unused/src/low/a.c" &&
  ${CC:-cc} -c -o "$tmp/unused/src/high/b.o" "$tmp/unused/src/high/b.c" ||
  exit 99
expect unused 1 'lets b use a, which it does not: drop it'
# A call through a hand-written prototype is a use, though nothing is
# included.
echo 'int a_fn(void); int b_fn(void) { return a_fn(); }' \
  >"$tmp/unused/src/high/b.c"
printf 'a:\nb:\n' >"$tmp/unused/src/layers.txt"
${CC:-cc} -c -o "$tmp/unused/src/high/b.o" "$tmp/unused/src/high/b.c" || exit 99
expect unused 1 'b uses a, which src/layers.txt does not allow'
tree circle 'a: b
b: a' low/a.c:b high/b.c:a
expect circle 1 'has a circle'
# No module circle, but low/ and high/ use each other.
tree folders 'a: c
b: a
c:' low/a.c:c high/b.c:a high/c.c:
expect folders 1 'folders of src/ use each other in a circle'
tree missing 'a:
b: a
c:' low/a.c: high/b.c:a
expect missing 1 'lists c, which has no source file'

[ "$status" = 0 ] && echo "layers-selftest: every broken tree was refused"
exit "$status"
