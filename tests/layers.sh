#!/bin/sh
# The layering check: every module under src/ uses (includes, or calls into)
# only itself and the modules listed before it in src/layers.txt.
#
# It reads the #include lines of every src/*.c and src/*.h, and, when the
# build has compiled them, the symbols each object file needs (nm), which
# catches a call through a hand-written prototype too.  Exit 0 when clean,
# 1 with one line per violation otherwise.
#
# Environment (set by tests/e2e.mk under `make check`): MCPD_SRCDIR and
# MCPD_BUILDDIR; both default to the directory above this script.

srcdir=${MCPD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${MCPD_BUILDDIR:-$srcdir}
layers=$srcdir/src/layers.txt
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# rank: "module number", in the order of the file.
sed -e 's/#.*//' -e 's/^[^:]*://' "$layers" | tr ' \t' '\n\n' |
  grep -v '^$' | awk '{ print $1, NR }' >"$tmp/rank"
[ -s "$tmp/rank" ] || { echo "layers: $layers lists no module" >&2; exit 99; }
dups=$(cut -d' ' -f1 "$tmp/rank" | sort | uniq -d)
[ -z "$dups" ] || { echo "layers: listed twice in $layers: $dups" >&2; exit 1; }

status=0
rank_of() { awk -v m="$1" '$1 == m { print $2 }' "$tmp/rank"; }

# Every source file belongs to a module that has a place.
for f in "$srcdir"/src/*.c "$srcdir"/src/*.h; do
  m=$(basename "$f"); m=${m%.*}
  if [ -z "$(rank_of "$m")" ]; then
    echo "layers: src/$(basename "$f") is in no layer of src/layers.txt"
    status=1
  fi
done

# Includes.
for f in "$srcdir"/src/*.c "$srcdir"/src/*.h; do
  m=$(basename "$f"); m=${m%.*}
  r=$(rank_of "$m"); [ -n "$r" ] || continue
  for inc in $(sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)\.h".*/\1/p' "$f"); do
    ir=$(rank_of "$inc"); [ -n "$ir" ] || continue
    if [ "$ir" -gt "$r" ]; then
      echo "layers: src/$(basename "$f") includes $inc.h, which is above it"
      status=1
    fi
  done
done

# Symbols, when the objects exist: who defines what, and who needs it.
nm=${NM:-nm}
found=0
for m in $(cut -d' ' -f1 "$tmp/rank"); do
  for o in "$builddir/src/.libs/$m.o" "$builddir/src/$m.o"; do
    [ -f "$o" ] || continue
    found=1
    "$nm" -P "$o" 2>/dev/null | awk -v m="$m" '
      $2 ~ /^[TDBRCGSV]$/ { print $1, m >> "'"$tmp/defs"'" }
      $2 == "U" { print m, $1 > "'"$tmp/uses.$m"'" }'
    break
  done
done
if [ "$found" = 1 ] && [ -f "$tmp/defs" ]; then
  sort -u "$tmp/defs" -o "$tmp/defs"
  for u in "$tmp"/uses.*; do
    [ -f "$u" ] || continue
    m=${u##*/uses.}
    r=$(rank_of "$m")
    sort -u "$u" | while read -r user sym; do
      def=$(awk -v s="$sym" '$1 == s { print $2; exit }' "$tmp/defs")
      [ -n "$def" ] || continue
      dr=$(rank_of "$def")
      if [ "$dr" -gt "$r" ]; then
        echo "layers: $user calls $sym in $def, which is above it"
        echo fail >"$tmp/symfail"
      fi
    done
  done
  [ -f "$tmp/symfail" ] && status=1
else
  echo "layers: no objects under $builddir/src; checked includes only" >&2
fi

[ "$status" = 0 ] && echo "layers: src/ uses only what lies below each module"
exit "$status"
