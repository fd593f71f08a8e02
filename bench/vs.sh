#!/bin/sh
# SPDX-License-Identifier: MIT
# vs.sh -- measure this build's mcpd against another commit's, in one run.
#
# usage: bench/vs.sh BUILDDIR SRCDIR COMMIT   (what `make bench BASELINE=`
# does)
#
# bench/baseline.sh builds COMMIT's mcpd and echo plugin beside this build;
# then mcpd-load drives both side by side (--vs, alternating turns A B B A,
# once with each started first), so machine load falls on both alike, and
# the table shows HEAD/BASELINE.
# A floor's own rate swings with the machine's load, so comparing mcpd with
# a floor can hide a loss that this comparison shows.  Knobs as in run.sh:
# BENCH_REPS (default 7), BENCH_N (default 20000), BENCH_VERBOSE=1.

set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 BUILDDIR SRCDIR COMMIT" >&2
  exit 2
fi
builddir=$1
srcdir=$2
commit=$3
reps=${BENCH_REPS:-7}
n=${BENCH_N:-20000}
. "$srcdir/bench/common.sh"

mcpd=$builddir/src/mcpd
echo_so=$builddir/plugins/.libs/echo.so
load=$builddir/bench/mcpd-load
bench_need "make bench BASELINE=..." "$mcpd" "$echo_so" "$load"
bench_baseline "$commit"
bench_tmp mcpd-vs
mkdir "$tmp/head" "$tmp/base"
cp "$echo_so" "$tmp/head/echo.so"
cp "$base/echo.so" "$tmp/base/echo.so"
head_rev=$(git -C "$srcdir" describe --always --dirty 2>/dev/null)
base_rev=$(git -C "$srcdir" rev-parse --short "$commit")
printf 'mcpd bench: HEAD %s against BASELINE %s, %d calls per run, %d repetitions\n' \
  "$head_rev" "$base_rev" "$n" "$reps"
echo "(echo loaded into mcpd on both sides: --in-process where mcpd has it)"

results=$tmp/results
: > "$results"
broke=0
# Both with echo loaded into mcpd: the per-call cost of mcpd itself, as the
# targets of issue 21 mean it (run.sh measures the worker's hop).
head_args="$mcpd $(bench_in_process "$mcpd") --plugins $tmp/head --no-watch"
head_args="$head_args --log-level error"
base_args="$base/mcpd $(bench_in_process "$base/mcpd") --plugins $tmp/base"
base_args="$base_args --no-watch --log-level error"

# measure KEY REP MCPD-LOAD-ARGS...: runs the pair twice, HEAD as server 1
# and then the baseline as server 1, and appends "KEY head|base REP ..."
# and "KEY head2|base2 REP ..." to the results.  Both orders are needed:
# on some machines the server mcpd-load starts first runs several times
# faster at 1 in flight (where it lands beside the driver decides how
# much each round trip pays for a wake-up), and the product of the two
# orders' ratios cancels that factor.
measure() {
  key=$1 rep=$2
  shift 2
  # shellcheck disable=SC2086
  bench_measure "$key" "$rep" head base "$@" -- $head_args --vs $base_args
  # shellcheck disable=SC2086
  bench_measure "$key" "$rep" base2 head2 "$@" -- $base_args --vs $head_args
}

echo_call="--method tools/call --tool echo --args {\"text\":\"hello\"}"
rep=1
while [ "$rep" -le "$reps" ]; do
  printf 'vs.sh: repetition %d of %d\n' "$rep" "$reps" >&2
  # shellcheck disable=SC2086
  measure echo-w64 "$rep" -n "$n" -w 64 $echo_call --expect '"hello"'
  # shellcheck disable=SC2086
  measure echo-w1 "$rep" -n "$n" -w 1 $echo_call --expect '"hello"'
  measure ping-w64 "$rep" -n "$n" -w 64
  measure ping-w1 "$rep" -n "$n" -w 1
  rep=$((rep + 1))
done

# A rate ratio is the median of the per-repetition ratios, each of two
# figures taken in one invocation; the range shows how far they spread.
# Peak RSS is the largest seen over the echo runs.
awk '
function val(line, k,    i, nf, kv) {
  nf = split(line, kv, " ")
  for (i = 1; i <= nf; i++)
    if (index(kv[i], k "=") == 1)
      return substr(kv[i], length(k) + 2) + 0
  return -1
}
function sort(list, a,    m, i, j, t) {
  m = split(list, a, " ")
  for (i = 2; i <= m; i++)
    for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
      t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
    }
  return m
}
function median(list,    a, m) {
  m = sort(list, a)
  if (m == 0)
    return -1
  return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
function fmt(f, v) {
  return v > 0 ? sprintf(f, v) : "-"
}
{
  key = $1; who = $2; rep = $3 + 0
  rate[key, who, rep] = val($0, "median_chunk_per_s")
  keys[key] = 1
  if (rep > reps)
    reps = rep
  if (key ~ /^echo/) {
    rss = val($0, "rss_kib")
    sub(/2$/, "", who)
    if (rss > peak[who])
      peak[who] = rss
  }
}
function row(metric, key, goal,    r, x, y, x2, y2, hl, bl, ql, q, a, m) {
  hl = bl = ql = ""
  for (r = 1; r <= reps; r++) {
    x = rate[key, "head", r]; y = rate[key, "base", r]
    x2 = rate[key, "head2", r]; y2 = rate[key, "base2", r]
    if (x <= 0 || y <= 0 || x2 <= 0 || y2 <= 0)
      continue
    hl = hl " " sqrt(x * x2); bl = bl " " sqrt(y * y2)
    ql = ql " " sqrt((x / y) * (x2 / y2))
  }
  q = median(ql)
  m = sort(ql, a)
  printf "%-28s %10s %10s %6s  %-11s %-7s %s\n", metric, \
    fmt("%.0f", median(hl)), fmt("%.0f", median(bl)), fmt("%.2f", q), \
    m ? sprintf("%.2f-%.2f", a[1], a[m]) : "-", ">=" goal, \
    (q >= goal ? "PASS" : "MISS")
}
END {
  printf "%-28s %10s %10s %6s  %-11s %-7s %s\n", "metric", "HEAD", \
    "BASELINE", "ratio", "range", "target", "result"
  row("echo calls/s, 64 in flight", "echo-w64", "1.00")
  row("echo calls/s, 1 in flight", "echo-w1", "0.97")
  row("ping calls/s, 64 in flight", "ping-w64", "0.97")
  row("ping calls/s, 1 in flight", "ping-w1", "0.97")
  h = peak["head"]; b = peak["base"]
  printf "%-28s %10s %10s %6s  %-11s %-7s %s\n", "peak RSS KiB, echo calls", \
    fmt("%d", h), fmt("%d", b), fmt("%.2f", h > 0 && b > 0 ? h / b : -1), \
    "", "<=1.00", (h > 0 && b > 0 && h <= b ? "PASS" : "MISS")
}
' "$results"

if [ "$broke" -ne 0 ]; then
  echo "vs.sh: some runs reported errors; the figures above are suspect" >&2
  exit 1
fi
exit 0
