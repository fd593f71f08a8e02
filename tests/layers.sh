#!/bin/sh
# SPDX-License-Identifier: MIT
# The layering check.  src/layers.txt is a graph: for each module of src/
# (a file name without .c/.h, in whichever folder it lives) the modules it
# may use.  This script checks that
#
# - every module under src/ is listed once, and every listed one exists;
# - the graph has no circle (tsort), so no module reaches itself;
# - every use is an edge of the graph: the #include lines of each file,
#   and, when the build has compiled them, the symbols each object file
#   needs (nm), which catches a call through a hand-written prototype too;
# - every edge is used: the graph says what the code does, no more;
# - the folders of src/, its layers, use each other without a circle;
# - the files of each bundled plugin (and plugins/common), and those of
#   the benchmark's load driver, call each other without a circle, judged
#   on their objects.
#
# Exit 0 when clean, 1 with one line per violation otherwise.
#
# `tests/layers.sh --print` prints the uses it finds in the file's own
# format instead, for a maintainer who adds a module.
#
# Environment (set by tests/e2e.mk under `make check`): MCPD_SRCDIR and
# MCPD_BUILDDIR; both default to the directory above this script.

export LC_ALL=C
srcdir=${MCPD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${MCPD_BUILDDIR:-$srcdir}
layers=$srcdir/src/layers.txt
nm=${NM:-nm}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0

# edges: "module dep" for each dep a line allows; mods: every listed module.
sed -e 's/#.*//' "$layers" | awk -v out="$tmp" '
  /^[ \t]*$/ { next }
  {
    i = index($0, ":")
    if (i == 0) { print "layers: no colon in: " $0 > "/dev/stderr"; bad = 1; next }
    m = substr($0, 1, i - 1); gsub(/[ \t]/, "", m)
    print m > (out "/mods")
    n = split(substr($0, i + 1), d, /[ \t]+/)
    for (k = 1; k <= n; k++) if (d[k] != "") print m, d[k] > (out "/edges")
  }
  END { exit bad }' || exit 1
[ -s "$tmp/mods" ] || { echo "layers: $layers lists no module" >&2; exit 99; }
touch "$tmp/edges"
dups=$(sort "$tmp/mods" | uniq -d)
[ -z "$dups" ] || { echo "layers: listed twice in $layers: $dups"; exit 1; }

# Where each module's sources are.
find "$srcdir/src" -name '*.[ch]' | sort >"$tmp/files"
sed 's|.*/||; s|\.[ch]$||' "$tmp/files" | sort -u >"$tmp/present"
sort "$tmp/mods" >"$tmp/listed"
comm -23 "$tmp/present" "$tmp/listed" | while read -r m; do
  echo "layers: module $m (src/) is not in src/layers.txt"
  echo x >>"$tmp/fail"
done
comm -13 "$tmp/present" "$tmp/listed" | while read -r m; do
  echo "layers: src/layers.txt lists $m, which has no source file"
  echo x >>"$tmp/fail"
done
awk '{ print $2 }' "$tmp/edges" | sort -u | comm -23 - "$tmp/listed" |
  while read -r m; do
    echo "layers: src/layers.txt lets a module use $m, which it does not list"
    echo x >>"$tmp/fail"
  done

# No circle: tsort names the modules of a cycle on stderr.
awk '$1 != $2 { print $2, $1 }' "$tmp/edges" | tsort >/dev/null 2>"$tmp/cycle"
if [ -s "$tmp/cycle" ]; then
  echo "layers: src/layers.txt has a circle:"
  sed 's/^tsort: /  /' "$tmp/cycle"
  status=1
fi
awk '$1 == $2 { print "layers: " $1 " lists itself" }' "$tmp/edges"

# Uses, from the includes: "module used".
while read -r f; do
  m=${f##*/}; m=${m%.*}
  sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)\.h".*/\1/p' "$f" |
    sed 's|.*/||' | while read -r inc; do
      [ "$inc" != "$m" ] && echo "$m $inc"
    done
done <"$tmp/files" | awk -v l="$tmp/present" '
  BEGIN { while ((getline x < l) > 0) ok[x] = 1 }
  ($2 in ok)' | sort -u >"$tmp/uses"

# Uses, from the objects: who defines what, and who needs it.  What the
# files of src/platform/ define is the platform interface's (platform.h):
# a caller uses `platform`, whichever system's file the build took.
found=0
: >"$tmp/defs"
impls=$(sed -n 's|.*/src/platform/\([^/]*\)\.c$|\1|p' "$tmp/files" | tr '\n' ' ')
for m in $(cat "$tmp/present"); do
  o=$(find "$builddir/src" \( -path "*/.libs/$m.o" -o -name "$m.o" \) \
    2>/dev/null | head -n 1)
  [ -n "$o" ] || continue
  found=1
  owner=$m
  case " $impls " in *" $m "*) owner=platform ;; esac
  "$nm" -P "$o" 2>/dev/null | awk -v m="$m" -v d="$owner" -v t="$tmp" '
    $2 ~ /^[TDBRCGSV]$/ { print $1, d >> (t "/defs") }
    $2 == "U" { print m, $1 >> (t "/needs") }'
done
if [ "$found" = 1 ] && [ -f "$tmp/needs" ]; then
  sort -u "$tmp/defs" -o "$tmp/defs"
  awk 'NR == FNR { def[$1] = $2; next }
    ($2 in def) && def[$2] != $1 { print $1, def[$2] }' \
    "$tmp/defs" "$tmp/needs" | sort -u >>"$tmp/uses"
  sort -u "$tmp/uses" -o "$tmp/uses"
else
  echo "layers: no objects under $builddir/src; checked includes only" >&2
fi

if [ "${1:-}" = --print ]; then
  awk 'NR == FNR { u[$1] = ""; next } { u[$1] = u[$1] " " $2 }
    END { for (m in u) print m ":" u[m] }' "$tmp/present" "$tmp/uses" | sort
  exit 0
fi

# Every use an edge, and (with objects) every edge a use.
sort -u "$tmp/edges" >"$tmp/edges.s"
comm -23 "$tmp/uses" "$tmp/edges.s" | while read -r m d; do
  echo "layers: $m uses $d, which src/layers.txt does not allow"
  echo x >>"$tmp/fail"
done
if [ "$found" = 1 ]; then
  comm -13 "$tmp/uses" "$tmp/edges.s" | while read -r m d; do
    echo "layers: src/layers.txt lets $m use $d, which it does not: drop it"
    echo x >>"$tmp/fail"
  done
fi

# The folders of src/ are its layers: the uses between modules, seen
# folder to folder, make no circle either (src/ itself is the top).
awk -v t="$tmp" 'NR == FNR { n = split($0, p, "/"); m = p[n]; sub(/\.[ch]$/, "", m)
    d = (p[n - 1] == "src") ? "src" : p[n - 1]; folder[m] = d; next }
  folder[$1] != folder[$2] { print folder[$2], folder[$1] }' \
  "$tmp/files" "$tmp/edges" | sort -u | tsort >/dev/null 2>"$tmp/fcycle"
if [ -s "$tmp/fcycle" ]; then
  echo "layers: the folders of src/ use each other in a circle:"
  sed 's/^tsort: /  /' "$tmp/fcycle"
  status=1
fi

# no_circle WHAT OBJECT...: the files behind the objects call each other
# without a circle, judged by the symbols each defines and needs (libtool
# and automake name objects TARGET-FILE.o, so the file is what follows the
# last dash).
no_circle() {
  what=$1
  shift
  : >"$tmp/pdefs"; : >"$tmp/pneeds"
  for o in "$@"; do
    f=$(basename "$o" .o); f=${f##*-}
    "$nm" -P "$o" 2>/dev/null | awk -v f="$f" -v t="$tmp" '
      $2 ~ /^[TDBRCGSV]$/ { print $1, f >> (t "/pdefs") }
      $2 == "U" { print f, $1 >> (t "/pneeds") }'
  done
  sort -u "$tmp/pdefs" -o "$tmp/pdefs"
  awk 'NR == FNR { def[$1] = $2; next }
    ($2 in def) && def[$2] != $1 { print def[$2], $1 }' \
    "$tmp/pdefs" "$tmp/pneeds" | sort -u | tsort >/dev/null 2>"$tmp/pcycle"
  if [ -s "$tmp/pcycle" ]; then
    echo "layers: the files of $what call each other in a circle:"
    sed 's/^tsort: /  /' "$tmp/pcycle"
    status=1
  fi
}

# The bundled plugins, each with plugins/common counted in; and the
# benchmark's load driver, when `make bench` has built it.
for dir in "$builddir"/plugins/*/; do
  p=$(basename "$dir")
  [ "$p" = common ] && continue
  objs=$(ls "$dir".libs/*.o "$builddir"/plugins/common/.libs/*.o \
    2>/dev/null | sort -u)
  # shellcheck disable=SC2086
  [ -z "$objs" ] || no_circle "plugins/$p" $objs
done
objs=$(ls "$builddir"/bench/load*.o 2>/dev/null)
# shellcheck disable=SC2086
[ -z "$objs" ] || no_circle "bench/mcpd-load" $objs

[ -f "$tmp/fail" ] && status=1
[ "$status" = 0 ] &&
  echo "layers: src/ uses only what src/layers.txt allows, with no circle"
exit "$status"
