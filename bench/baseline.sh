#!/bin/sh
# SPDX-License-Identifier: MIT
# baseline.sh -- build another commit's mcpd and echo plugin beside HEAD.
#
# usage: bench/baseline.sh BUILDDIR SRCDIR COMMIT
#
# Prints, on its last line of stdout, a directory holding that commit's
# `mcpd` and `echo.so`, for `make bench BASELINE=...` and
# `make bench-callgrind BASELINE=...` to run beside the current build.
#
# The commit is checked out with `git worktree add --detach` under
# BUILDDIR/bench/baseline, configured with the current build's CFLAGS and
# LDFLAGS (from config.status, so both builds are optimized alike), and only
# src/mcpd and plugins/echo.la are made.  The two files are then kept under
# BUILDDIR/bench/baseline/SHA and the worktree and its build are removed
# again, so the repository's worktree list is left as it was.  A commit
# never changes, so a second run with the same commit and flags reuses the
# two files instead of building again; `make clean` does not remove them,
# `rm -rf BUILDDIR/bench/baseline` does.

set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 BUILDDIR SRCDIR COMMIT" >&2
  exit 2
fi
builddir=$1
srcdir=$2
commit=$3

sha=$(git -C "$srcdir" rev-parse --verify --quiet "$commit^{commit}") || {
  echo "baseline.sh: $commit is not a commit of $srcdir" >&2
  exit 1
}
# The current build's compiler and flags, as its configure recorded them.
setting() {
  sed -n "s/^S\[\"$1\"\]=\"\(.*\)\"$/\1/p" "$builddir/config.status" \
    2>/dev/null
}
cc=$(setting CC)
cflags=$(setting CFLAGS)
cppflags=$(setting CPPFLAGS)
ldflags=$(setting LDFLAGS)
[ -n "$cc" ] || cc=cc
[ -n "$cflags" ] || cflags="-g -O2"
flags="CC=$cc CFLAGS=$cflags CPPFLAGS=$cppflags LDFLAGS=$ldflags"

top=$builddir/bench/baseline
out=$top/$sha
if [ -f "$out/mcpd" ] && [ -f "$out/echo.so" ] &&
  [ "$(cat "$out/flags" 2>/dev/null)" = "$flags" ]; then
  echo "baseline.sh: reusing $sha's build in $out" >&2
  echo "$out"
  exit 0
fi

mkdir -p "$top" || exit 1
work=$top/tmp-$sha
tree=$work/src
obj=$work/build
log=$work.log
rm -rf "$work" "$out"
git -C "$srcdir" worktree prune
cleanup() {
  git -C "$srcdir" worktree remove --force "$tree" >/dev/null 2>&1
  rm -rf "$work"
  git -C "$srcdir" worktree prune
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "baseline.sh: building $(git -C "$srcdir" log -1 --format='%h %s' "$sha")" >&2
echo "baseline.sh: with $flags (log: $log)" >&2
jobs=${BENCH_JOBS:-2}
(
  set -e
  git -C "$srcdir" worktree add --detach "$tree" "$sha"
  cd "$tree"
  autoreconf -fi
  mkdir -p "$obj"
  cd "$obj"
  "$tree/configure" -q CC="$cc" CFLAGS="$cflags" CPPFLAGS="$cppflags" \
    LDFLAGS="$ldflags"
  make -j"$jobs" src/mcpd plugins/echo.la
) > "$log" 2>&1 || {
  echo "baseline.sh: building $sha failed; the end of $log:" >&2
  tail -20 "$log" >&2
  exit 1
}

mkdir -p "$out"
cp "$obj/src/mcpd" "$out/mcpd" &&
  cp "$obj/plugins/.libs/echo.so" "$out/echo.so" &&
  printf '%s\n' "$flags" > "$out/flags" || exit 1
echo "$out"
