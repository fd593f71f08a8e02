# SPDX-License-Identifier: MIT
# common.sh -- the setup bench/run.sh, vs.sh and callgrind.sh share.
#
# Sourced, not run: `. "$srcdir/bench/common.sh"` once the script has set
# builddir and srcdir (and, for bench_measure, load and results).  Messages
# name the script that sourced this file.
# shellcheck shell=sh disable=SC2154,SC2034

me=$(basename "$0")

# bench_need HINT FILE...: exits 1, saying to run HINT, when a FILE the
# run needs has not been built.
bench_need() {
  hint=$1
  shift
  for f in "$@"; do
    if [ ! -f "$f" ]; then
      echo "$me: $f is missing; run \`$hint\`" >&2
      exit 1
    fi
  done
}

# bench_tmp NAME: sets tmp to a new directory, removed on exit.  mcpd
# refuses plugin directories and files that group or others can write, so
# everything private lives under it, made with umask 077.
bench_tmp() {
  umask 077
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
  trap 'rm -rf "$tmp"' EXIT
  trap 'exit 130' INT TERM
}

# bench_baseline COMMIT: sets base to the directory holding COMMIT's mcpd
# and echo.so, which bench/baseline.sh builds (or reuses); exits 1 when it
# could not.
bench_baseline() {
  base=$(sh "$srcdir/bench/baseline.sh" "$builddir" "$srcdir" "$1" |
    tail -n 1)
  if [ -z "$base" ] || [ ! -f "$base/mcpd" ]; then
    echo "$me: no build of $1 to compare with" >&2
    exit 1
  fi
}

# bench_in_process MCPD: prints --in-process when that mcpd has the option
# (since issue 22, when plugins moved to worker processes by default), and
# nothing for an older one, which loads plugins into itself anyway.  vs.sh
# and callgrind.sh measure mcpd's own per-call cost against earlier commits,
# so both sides must load echo in-process.
bench_in_process() {
  if "$1" --help 2>/dev/null | grep -q -e '--in-process'; then
    echo --in-process
  fi
}

# bench_measure KEY REP WHO1 WHO2 MCPD-LOAD-ARGS...
# mcpd-load (in $load) runs two servers interleaved and prints a line for
# each; this appends them to $results as "KEY WHO REP key=value...", WHO1
# for server 1 and WHO2 for server 2.  A run that reports errors sets
# broke=1.
bench_measure() {
  key=$1 rep=$2 who1=$3 who2=$4
  shift 4
  if ! out=$("$load" --label "$key" "$@"); then
    echo "$me: $key (repetition $rep) reported errors" >&2
    broke=1
  fi
  [ "${BENCH_VERBOSE:-0}" = 1 ] && echo "$out" >&2
  echo "$out" | while read -r line; do
    case $line in
      *" server=1 "*) echo "$key $who1 $rep $line" ;;
      *" server=2 "*) echo "$key $who2 $rep $line" ;;
    esac
  done >> "$results"
}
