#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind.sh -- instructions per echo call, counted by callgrind.
#
# usage: bench/callgrind.sh BUILDDIR SRCDIR [COMMIT]
#        (what `make bench-callgrind [BASELINE=COMMIT]` does)
#
# Rates swing with the machine's load; instruction counts do not, so this is
# the figure to trust when a change is small.  The workload is fixed: mcpd
# with the echo plugin loaded into it (in a 0700 directory; --in-process
# where mcpd has that option, since plugins run in workers by default and
# callgrind would count only the host), --no-watch and
# --log-level error reads, from a file made beforehand, an initialize, its
# notifications/initialized and N pipelined tools/call echo requests, and
# writes the answers to a file.  It runs once with N calls and once with
# none under `valgrind --tool=callgrind`; the difference of the two totals
# over N is what one call costs, start-up and shutdown left out.  With a
# COMMIT, bench/baseline.sh builds it beside this build and it is counted
# the same way.
#
# Knobs: CALLGRIND_N (default 2000); CALLGRIND_KEEP=DIR keeps the
# callgrind.out files there, for callgrind_annotate.

set -u

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 BUILDDIR SRCDIR [COMMIT]" >&2
  exit 2
fi
builddir=$1
srcdir=$2
commit=${3:-}
n=${CALLGRIND_N:-2000}
. "$srcdir/bench/common.sh"

if ! command -v valgrind >/dev/null 2>&1; then
  echo "callgrind.sh: valgrind is not installed" >&2
  exit 1
fi
bench_need "make bench-callgrind" "$builddir/src/mcpd" \
  "$builddir/plugins/.libs/echo.so"
base=""
[ -z "$commit" ] || bench_baseline "$commit"
bench_tmp mcpd-callgrind
keep=${CALLGRIND_KEEP:-$tmp}
mkdir -p "$keep" || exit 1

# input FILE COUNT: the handshake, then COUNT echo calls with ids 2, 3, ...
input() {
  awk -v count="$2" 'BEGIN {
    print "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"," \
      "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}," \
      "\"clientInfo\":{\"name\":\"callgrind\",\"version\":\"1\"}}}"
    print "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"
    for (i = 0; i < count; i++)
      printf "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\"," \
        "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hello\"}}}\n", \
        i + 2
  }' > "$1"
}
input "$tmp/in-0" 0
input "$tmp/in-$n" "$n"

# total WHO MCPD ECHO_SO COUNT: prints the Ir total of one run.
total() {
  who=$1 mcpd=$2 so=$3 count=$4
  dir=$tmp/plugins-$who
  [ -d "$dir" ] || { mkdir "$dir" && cp "$so" "$dir/echo.so"; } || return 1
  file=$keep/callgrind.out.$who.$count
  # shellcheck disable=SC2046
  valgrind --tool=callgrind --callgrind-out-file="$file" \
    "$mcpd" $(bench_in_process "$mcpd") --plugins "$dir" --no-watch \
    --log-level error \
    < "$tmp/in-$count" > "$tmp/out" 2> "$tmp/err" || {
    echo "callgrind.sh: $who with $count calls failed:" >&2
    tail -5 "$tmp/err" >&2
    return 1
  }
  got=$(grep -c '"text":"hello"' "$tmp/out")
  if [ "$got" -ne "$count" ]; then
    echo "callgrind.sh: $who answered $got of $count calls" >&2
    return 1
  fi
  sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$file"
}

# per_call WHO MCPD ECHO_SO: prints instructions per call.
per_call() {
  t0=$(total "$1" "$2" "$3" 0) || return 1
  tn=$(total "$1" "$2" "$3" "$n") || return 1
  awk -v a="$t0" -v b="$tn" -v n="$n" 'BEGIN { printf "%.0f", (b - a) / n }'
}

printf 'mcpd callgrind: %d pipelined tools/call echo over stdio, echo %s\n' \
  "$n" in-process
head_ir=$(per_call head "$builddir/src/mcpd" \
  "$builddir/plugins/.libs/echo.so") || exit 1
printf '%-10s %-12s %10s instructions per call\n' HEAD \
  "$(git -C "$srcdir" describe --always --dirty 2>/dev/null)" "$head_ir"
if [ -n "$base" ]; then
  base_ir=$(per_call base "$base/mcpd" "$base/echo.so") || exit 1
  printf '%-10s %-12s %10s instructions per call\n' BASELINE \
    "$(git -C "$srcdir" rev-parse --short "$commit")" "$base_ir"
  awk -v a="$head_ir" -v b="$base_ir" \
    'BEGIN { printf "HEAD/BASELINE %.3f\n", a / b }'
fi
[ "$keep" != "$tmp" ] && echo "callgrind.sh: profiles kept in $keep"
exit 0
