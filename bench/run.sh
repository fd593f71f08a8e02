#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh -- measure mcpd against the floor server, in one run.
#
# usage: bench/run.sh BUILDDIR SRCDIR   (what `make bench` does)
#
# The machine is shared and noisy, so no figure stands alone: mcpd-load runs
# mcpd and the floor side by side in one invocation, taking turns of a few
# thousand calls, each invocation is repeated, and the table shows medians.
# It is a benchmark, not a test: a missed target still exits 0; only a broken
# run (an error response, a missing response, a crash) exits nonzero.
#
# Plugins run in a worker process of their own by default (issue 22), so a
# plain `mcpd --plugins DIR` here measures isolated plugins; `--in-process`
# measures them loaded into mcpd.  Rows name the mode they run.
#
# Environment knobs: BENCH_REPS (default 7), BENCH_N (default 20000),
# BENCH_HTTP_N (default 5000, the calls per HTTP run), BENCH_VERBOSE=1 to
# print every raw mcpd-load line.

set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILDDIR SRCDIR" >&2
  exit 2
fi
builddir=$1
srcdir=$2
reps=${BENCH_REPS:-7}
n=${BENCH_N:-20000}
hn=${BENCH_HTTP_N:-5000}
. "$srcdir/bench/common.sh"

mcpd=$builddir/src/mcpd
echo_so=$builddir/plugins/.libs/echo.so
many_so=$builddir/tests/plugins/.libs/many.so
# The bundled plugins, for start-up with all of them loaded.
bundled="calc echo fetch fs sqlite"
floor=$builddir/bench/floor
http_floor=$builddir/bench/http-floor
load=$builddir/bench/mcpd-load

bench_need "make bench" "$mcpd" "$echo_so" "$floor" "$http_floor" "$load"
bench_tmp mcpd-bench
mkdir "$tmp/echo" "$tmp/none" "$tmp/many" "$tmp/five"
cp "$echo_so" "$tmp/echo/echo.so"
# sqlite and fetch are built only when configure found their libraries; the
# start-up row names how many plugins it loaded.
nbundled=0
for p in $bundled; do
  if [ -f "$builddir/plugins/.libs/$p.so" ]; then
    cp "$builddir/plugins/.libs/$p.so" "$tmp/five/$p.so"
    nbundled=$((nbundled + 1))
  else
    echo "run.sh: plugins/$p.so not built; start-up rows load without it" >&2
  fi
done
have_many=no
if [ -f "$many_so" ]; then
  have_many=yes
  cp "$many_so" "$tmp/many/many.so"
  echo '{"plugins":{"many":{"count":10}}}' > "$tmp/many10.json"
  echo '{"plugins":{"many":{"count":10000}}}' > "$tmp/many10000.json"
fi
rev=$(git -C "$srcdir" describe --always --dirty 2>/dev/null || echo unknown)
printf 'mcpd bench: revision %s, %d calls per run (%d over HTTP), %d repetitions\n' \
  "$rev" "$n" "$hn" "$reps"

results=$tmp/results
: > "$results"
broke=0

rep=1
while [ "$rep" -le "$reps" ]; do
  printf 'run.sh: repetition %d of %d\n' "$rep" "$reps" >&2
  # Against the floor: ping and echo in the default mode (echo in its
  # worker), then echo with --in-process (echo loaded into mcpd).
  for w in 1 64; do
    bench_measure "ping-w$w" "$rep" mcpd floor -n "$n" -w "$w" \
      -- "$mcpd" --plugins "$tmp/echo" --no-watch --log-level error \
      --vs "$floor"
    bench_measure "echo-w$w" "$rep" mcpd floor -n "$n" -w "$w" \
      --method tools/call --tool echo --args '{"text":"hello"}' \
      --expect '"hello"' \
      -- "$mcpd" --plugins "$tmp/echo" --no-watch --log-level error \
      --vs "$floor"
    bench_measure "inproc-echo-w$w" "$rep" mcpd floor -n "$n" -w "$w" \
      --method tools/call --tool echo --args '{"text":"hello"}' \
      --expect '"hello"' \
      -- "$mcpd" --in-process --plugins "$tmp/echo" --no-watch \
      --log-level error --vs "$floor"
  done
  # What isolation costs a call (issues 13 and 22): echo in its worker (the
  # default) against echo loaded into mcpd (--in-process), and the worker's
  # memory.  At 1 in flight the server started first can run faster on
  # some machines, so that pair runs in both orders and run.sh takes the
  # geometric mean of the two ratios, as vs.sh does.
  for w in 1 64; do
    bench_measure "iso-w$w" "$rep" isolated inproc -n "$n" -w "$w" \
      --method tools/call --tool echo --args '{"text":"hello"}' \
      --expect '"hello"' \
      -- "$mcpd" --plugins "$tmp/echo" --no-watch --log-level error \
      --vs "$mcpd" --in-process --plugins "$tmp/echo" --no-watch \
      --log-level error
  done
  bench_measure "iso-w1-rev" "$rep" inproc isolated -n "$n" -w 1 \
    --method tools/call --tool echo --args '{"text":"hello"}' \
    --expect '"hello"' \
    -- "$mcpd" --in-process --plugins "$tmp/echo" --no-watch \
    --log-level error \
    --vs "$mcpd" --plugins "$tmp/echo" --no-watch --log-level error
  # No floor here: this run only measures mcpd's footprint with no plugins.
  bench_measure ping-bare "$rep" mcpd - -n "$n" -w 64 \
    -- "$mcpd" --plugins "$tmp/none" --no-watch --log-level error
  bench_measure startup "$rep" mcpd floor --startup 50 \
    -- "$mcpd" --plugins "$tmp/echo" --no-watch --log-level error \
    --vs "$floor"
  # Start-up with the five bundled plugins (issue 22), in each mode.  mcpd
  # reads no input until every worker is ready or failed, so the time to
  # the initialize answer includes starting the five workers.
  bench_measure startup-five "$rep" mcpd floor --startup 20 \
    -- "$mcpd" --plugins "$tmp/five" --no-watch --log-level error \
    --vs "$floor"
  bench_measure inproc-startup-five "$rep" mcpd floor --startup 20 \
    -- "$mcpd" --in-process --plugins "$tmp/five" --no-watch \
    --log-level error --vs "$floor"
  if [ "$have_many" = yes ]; then
    # Each call names the last tool registered, the one a linear lookup
    # would find last.
    bench_measure tools "$rep" 10000 10 -n 5000 -w 1 --method tools/call \
      --tool t9999 --tool-vs t9 --args '{"text":"hello"}' --expect '"hello"' \
      -- "$mcpd" --plugins "$tmp/many" --config "$tmp/many10000.json" \
      --no-watch --log-level error \
      --vs "$mcpd" --plugins "$tmp/many" --config "$tmp/many10.json" \
      --no-watch --log-level error
  fi
  # Streamable HTTP, against the libmicrohttpd floor.  Both listen on port
  # 0 and announce the port on stderr, which mcpd does at its default log
  # level; the driver passes on only warnings and errors.  HTTP round trips
  # cost several times a stdio line, so these runs take fewer calls, in
  # turns of 1000.
  bench_measure http-ping-w1 "$rep" mcpd floor --transport http -n "$hn" -w 1 \
    --chunk 1000 \
    -- "$mcpd" --transport http --listen 127.0.0.1:0 --plugins "$tmp/echo" \
    --no-watch --vs "$http_floor"
  for w in 1 64; do
    bench_measure "http-echo-w$w" "$rep" mcpd floor --transport http -n "$hn" \
      -w "$w" --chunk 1000 \
      --method tools/call --tool echo --args '{"text":"hello"}' \
      --expect '"hello"' \
      -- "$mcpd" --transport http --listen 127.0.0.1:0 --plugins "$tmp/echo" \
      --no-watch --vs "$http_floor"
  done
  # The cost of the transport: the same mcpd and call over HTTP and stdio.
  bench_measure http-stdio "$rep" http stdio --transport http \
    --transport-vs stdio -n "$hn" -w 1 --chunk 1000 \
    --method tools/call --tool echo --args '{"text":"hello"}' \
    --expect '"hello"' \
    -- "$mcpd" --transport http --listen 127.0.0.1:0 --plugins "$tmp/echo" \
    --no-watch \
    --vs "$mcpd" --plugins "$tmp/echo" --no-watch --log-level error
  # The 2026-07-28 revision (issue 14): the same mcpd and echo call in the
  # modern era (no handshake, the _meta envelope on every request; over
  # HTTP no session, and the MCP-Protocol-Version, Mcp-Method and Mcp-Name
  # headers) against the legacy one: what the per-request envelope costs.
  bench_measure modern-stdio "$rep" modern legacy --era modern --era-vs legacy \
    -n "$n" -w 1 \
    --method tools/call --tool echo --args '{"text":"hello"}' \
    --expect '"hello"' \
    -- "$mcpd" --plugins "$tmp/echo" --no-watch --log-level error \
    --vs "$mcpd" --plugins "$tmp/echo" --no-watch --log-level error
  bench_measure modern-http "$rep" modern legacy --transport http \
    --era modern --era-vs legacy -n "$hn" -w 1 --chunk 1000 \
    --method tools/call --tool echo --args '{"text":"hello"}' \
    --expect '"hello"' \
    -- "$mcpd" --transport http --listen 127.0.0.1:0 --plugins "$tmp/echo" \
    --no-watch \
    --vs "$mcpd" --transport http --listen 127.0.0.1:0 --plugins "$tmp/echo" \
    --no-watch
  rep=$((rep + 1))
done

# Every figure is a median over the repetitions; a ratio is the median of
# the per-repetition ratios, so each one compares measurements taken seconds
# apart.  Peak RSS is the largest seen, since a peak is what it promises.
awk -v have_many="$have_many" -v nbundled="$nbundled" '
function val(line, k,    i, nf, kv) {
  nf = split(line, kv, " ")
  for (i = 1; i <= nf; i++)
    if (index(kv[i], k "=") == 1)
      return substr(kv[i], length(k) + 2) + 0
  return -1
}
function median(list,    a, m, i, j, t) {
  m = split(list, a, " ")
  if (m == 0)
    return -1
  for (i = 2; i <= m; i++)
    for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
      t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
    }
  return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
function add(name, v) {
  if (v <= 0)
    return
  lists[name] = lists[name] (name in lists ? " " : "") v
}
function div(a, b) {
  return a > 0 && b > 0 ? a / b : -1
}
function keep_max(name, v) {
  if (!(name in peak) || v > peak[name])
    peak[name] = v
}
{
  key = $1; who = $2; rep = $3 + 0
  line = $0
  rate[key, who, rep] = val(line, "median_chunk_per_s")
  p50[key, who, rep] = val(line, "p50_us")
  if (key ~ /startup/)
    add(key SUBSEP who, val(line, "startup_p50_us"))
  else
    add(key SUBSEP who, val(line, "median_chunk_per_s"))
  rss = val(line, "rss_kib")
  if (key == "ping-bare")
    keep_max("bare", rss)
  else if (key ~ /^ping/)
    keep_max("ping" SUBSEP who, rss)
  else if (key ~ /^echo/)
    keep_max("echo" SUBSEP who, rss)
  else if (key ~ /^inproc-echo/)
    keep_max("inproc-echo" SUBSEP who, rss)
  else if (key ~ /^http-echo/)
    keep_max("http-echo" SUBSEP who, rss)
  else if (key ~ /^iso/) {
    keep_max("iso" SUBSEP who, rss)
    keep_max("worker" SUBSEP who, val(line, "worker_rss_kib"))
    keep_max("worker-pss" SUBSEP who, val(line, "worker_pss_kib"))
    keep_max("worker-private" SUBSEP who, val(line, "worker_private_kib"))
  }
  if (rep > reps)
    reps = rep
}
function ratio_list(key, field, a, b,    r, list, x, y) {
  list = ""
  for (r = 1; r <= reps; r++) {
    if (field == "rate") {
      x = rate[key, a, r]; y = rate[key, b, r]
    } else {
      x = p50[key, a, r]; y = p50[key, b, r]
    }
    if (x > 0 && y > 0)
      list = list (list == "" ? "" : " ") div(x, y)
  }
  return median(list)
}
# The same for a pair run in both orders, key and key "-rev": each
# repetition contributes the geometric mean of its two ratios (and of the
# two rates of each server), which cancels a factor that favours whichever
# server starts first.
function both_orders_row(metric, key, a, b, goal,
                         r, x, y, x2, y2, al, bl, ql, q) {
  al = bl = ql = ""
  for (r = 1; r <= reps; r++) {
    x = rate[key, a, r]; y = rate[key, b, r]
    x2 = rate[key "-rev", a, r]; y2 = rate[key "-rev", b, r]
    if (x <= 0 || y <= 0 || x2 <= 0 || y2 <= 0)
      continue
    al = al " " sqrt(x * x2); bl = bl " " sqrt(y * y2)
    ql = ql " " sqrt((x / y) * (x2 / y2))
  }
  q = median(ql)
  row(metric, fmt("%.0f", median(al)), fmt("%.0f", median(bl)), q, \
    ">=" goal, q >= goal)
}
# One order of such a pair, for reading.
function order_row(metric, key, a, b,    q) {
  q = ratio_list(key, "rate", a, b)
  info_row(metric, fmt("%.0f", median(lists[key SUBSEP a])), \
    fmt("%.0f", median(lists[key SUBSEP b])), q)
}
# A figure that could not be measured (its run broke) shows as "-".
function fmt(f, v) {
  return v > 0 ? sprintf(f, v) : "-"
}
function row(metric, m, f, ratio, target, ok) {
  printf "%-34s %10s %10s %6s  %-9s %s\n", metric, m, f, \
    fmt("%.2f", ratio), target, ok ? "PASS" : "MISS"
}
function rate_row(metric, key, goal) {
  pair_rate_row(metric, key, "mcpd", "floor", goal)
}
# The same for two servers named otherwise: a in the mcpd column, b in the
# floor column.
function pair_rate_row(metric, key, a, b, goal,    m, f, q) {
  m = median(lists[key SUBSEP a])
  f = median(lists[key SUBSEP b])
  q = ratio_list(key, "rate", a, b)
  row(metric, fmt("%.0f", m), fmt("%.0f", f), q, ">=" goal, \
    q >= goal)
}
# A row with no target: the figures are for reading, not for passing.
function info_row(metric, m, f, ratio) {
  printf "%-34s %10s %10s %6s  %-9s\n", metric, m, f, fmt("%.2f", ratio), \
    "(info)"
}
END {
  printf "%-34s %10s %10s %6s  %-9s %s\n", "metric", "mcpd", "floor", \
    "ratio", "target", "result"
  print "-- default mode: echo in a worker process (mcpd --plugins DIR)"
  rate_row("ping calls/s, 1 in flight", "ping-w1", 0.95)
  rate_row("ping calls/s, 64 in flight", "ping-w64", 0.8)
  # Issue 22 asks 0.6 and 1.0 of in-process, and in-process is asked 0.95
  # and 0.8 of the floor: these are the products.
  rate_row("echo calls/s, 1 in flight", "echo-w1", 0.57)
  rate_row("echo calls/s, 64 in flight", "echo-w64", 0.8)
  m = peak["echo" SUBSEP "mcpd"]; f = peak["echo" SUBSEP "floor"]
  row("peak RSS KiB, echo calls (host)", fmt("%d", m), fmt("%d", f), \
    div(m, f), "<=2253", m > 0 && m <= 2253)
  m = peak["bare"]; f = peak["ping" SUBSEP "floor"]
  row("peak RSS KiB, ping, no plugins", fmt("%d", m), fmt("%d", f), \
    div(m, f), "<=2048", m > 0 && m <= 2048)
  m = median(lists["startup" SUBSEP "mcpd"])
  f = median(lists["startup" SUBSEP "floor"])
  row("start to initialize, echo, p50 us", fmt("%.0f", m), fmt("%.0f", f), \
    div(m, f), "<=2000", m > 0 && m <= 2000)
  m = median(lists["startup-five" SUBSEP "mcpd"]) / 1000
  f = median(lists["startup-five" SUBSEP "floor"]) / 1000
  row("start to initialize, " nbundled " plugins, ms", fmt("%.1f", m), \
    fmt("%.1f", f), div(m, f), "<=20", m > 0 && m <= 20)

  print "-- in-process: echo loaded into mcpd (mcpd --in-process)"
  rate_row("echo calls/s, 1 in flight", "inproc-echo-w1", 0.95)
  rate_row("echo calls/s, 64 in flight", "inproc-echo-w64", 0.8)
  m = peak["inproc-echo" SUBSEP "mcpd"]; f = peak["inproc-echo" SUBSEP "floor"]
  row("peak RSS KiB, echo calls", fmt("%d", m), fmt("%d", f), \
    div(m, f), "<=2253", m > 0 && m <= 2253)
  m = median(lists["inproc-startup-five" SUBSEP "mcpd"]) / 1000
  f = median(lists["inproc-startup-five" SUBSEP "floor"]) / 1000
  row("start to initialize, " nbundled " plugins, ms", fmt("%.1f", m), \
    fmt("%.1f", f), div(m, f), "<=20", m > 0 && m <= 20)

  print "-- isolated (default) vs in-process: mcpd column default, floor"
  print "   column --in-process, one run"
  both_orders_row("echo calls/s, 1 in flight", "iso-w1", "isolated", \
    "inproc", 0.6)
  order_row("  isolated started first", "iso-w1", "isolated", "inproc")
  order_row("  in-process started first", "iso-w1-rev", "isolated", "inproc")
  pair_rate_row("echo calls/s, 64 in flight", "iso-w64", \
    "isolated", "inproc", 1.0)
  m = peak["worker" SUBSEP "isolated"]; f = peak["iso" SUBSEP "inproc"]
  row("worker RSS KiB, echo", fmt("%d", m), fmt("%d", f), \
    div(m, f), "<=2048", m > 0 && m <= 2048)
  m = peak["worker-private" SUBSEP "isolated"]
  f = peak["worker-pss" SUBSEP "isolated"]
  row("worker private / Pss KiB, echo", fmt("%d", m), fmt("%d", f), -1, \
    "<=307", m > 0 && m <= 307)
  print "(worker RSS: the echo worker against the in-process mcpd; worker"
  print " private / Pss: its own pages (Private_Clean + Private_Dirty), target"
  print " 0.3 MiB, and its proportional share, the rest of its RSS being libc,"
  print " json-c and mcpd pages shared with others)"

  print "-- default mode"
  rate_row("http ping calls/s, 1 in flight", "http-ping-w1", 0.95)
  rate_row("http echo calls/s, 1 in flight", "http-echo-w1", 0.57)
  rate_row("http echo calls/s, 64 in flight", "http-echo-w64", 0.8)
  m = peak["http-echo" SUBSEP "mcpd"]; f = peak["http-echo" SUBSEP "floor"]
  info_row("peak RSS KiB, http echo", fmt("%d", m), fmt("%d", f), div(m, f))
  info_row("echo calls/s 1 in flight, http/stdio", \
    fmt("%.0f", median(lists["http-stdio" SUBSEP "http"])), \
    fmt("%.0f", median(lists["http-stdio" SUBSEP "stdio"])), \
    ratio_list("http-stdio", "rate", "http", "stdio"))
  print "(http/stdio row: both columns are mcpd, over HTTP and over stdio)"

  pair_rate_row("echo calls/s, modern vs legacy, stdio", "modern-stdio", \
    "modern", "legacy", 0.9)
  pair_rate_row("echo calls/s, modern vs legacy, HTTP", "modern-http", \
    "modern", "legacy", 0.9)
  print "(modern rows: both columns are mcpd, 1 in flight, in the 2026-07-28"
  print " era and in the legacy one)"

  if (have_many == "yes") {
    q = ratio_list("tools", "p50", "10000", "10")
    row("echo p50 us, 10000 tools vs 10", \
      fmt("%.1f", median(p50list("10000"))), \
      fmt("%.1f", median(p50list("10"))), q, "<=1.2", q > 0 && q <= 1.2)
    print "(tools row: both columns are mcpd, with 10000 and with 10 tools)"
  } else {
    printf "%-34s %10s\n", "echo p50 us, 10000 tools vs 10", \
      "skipped: tests/plugins/many.so not built"
  }
}
function p50list(who,    r, list) {
  list = ""
  for (r = 1; r <= reps; r++)
    if (p50["tools", who, r] > 0)
      list = list (list == "" ? "" : " ") p50["tools", who, r]
  return list
}
' "$results"

# Hot reload (issue 4): a plugin renamed into a watched directory, timed to
# the list_changed line on mcpd's stdout, 20 times.
reload=$builddir/bench/mcpd-reload
if [ -x "$reload" ]; then
  if out=$("$reload" -r 20 "$echo_so" -- "$mcpd" --log-level error); then
    p50=$(printf '%s\n' "$out" | sed -n 's/.*reload_p50_us=\([0-9]*\).*/\1/p')
    max=$(printf '%s\n' "$out" | sed -n 's/.*reload_max_us=\([0-9]*\).*/\1/p')
    printf '%-34s %10s %10s %6s  %-9s %s\n' "rename to list_changed, ms" \
      "$(awk -v v="$p50" 'BEGIN { printf "%.1f", v / 1000 }')" \
      "max $(awk -v v="$max" 'BEGIN { printf "%.1f", v / 1000 }')" "-" \
      "p50<=100" "$([ "$p50" -le 100000 ] && echo PASS || echo MISS)"
  else
    echo "run.sh: the reload run failed: $out" >&2
    broke=1
  fi
fi

# The thread-pool hop: p50 of a pool tool against an inline one in the same
# fixture plugin (good.so: slow {ms:0} runs on the pool, add inline).
good_so=$builddir/tests/plugins/.libs/good.so
if [ -f "$good_so" ]; then
  mkdir "$tmp/good" && cp "$good_so" "$tmp/good/good.so"
  pool=$("$load" -q -n 5000 -w 1 --method tools/call --tool slow \
    --args '{"ms":0}' -- "$mcpd" --plugins "$tmp/good" --no-watch \
    --log-level error 2>/dev/null | sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p')
  inline=$("$load" -q -n 5000 -w 1 --method tools/call --tool add \
    --args '{"a":1,"b":2}' -- "$mcpd" --plugins "$tmp/good" --no-watch \
    --log-level error 2>/dev/null | sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p')
  if [ -n "$pool" ] && [ -n "$inline" ]; then
    printf '%-34s %10s %10s %6s  %-9s %s\n' "pool vs inline tool p50, us" \
      "$pool" "$inline" \
      "$(awk -v a="$pool" -v b="$inline" 'BEGIN { printf "%.2f", a / b }')" \
      "(info)" ""
  fi
fi

# What an idle HTTP session costs: BENCH_SESSIONS (default 10000) opened
# and left idle, mcpd's VmRSS growth per session (bench/sessions.mjs;
# needs node).  Target: 4 KiB.
if command -v node >/dev/null 2>&1; then
  out=$(node "$srcdir/bench/sessions.mjs" "$mcpd" "$tmp/echo" \
    "${BENCH_SESSIONS:-10000}" 2>&1)
  kib=$(printf '%s\n' "$out" | sed -n 's/.*kib_per_session=\([0-9.]*\).*/\1/p')
  if [ -n "$kib" ]; then
    printf '%-34s %10s %10s %6s  %-9s %s\n' "KiB per idle http session" \
      "$kib" "-" "-" "<=4" \
      "$(awk -v k="$kib" 'BEGIN { print (k <= 4 ? "PASS" : "MISS") }')"
  else
    echo "run.sh: the sessions run failed: $out" >&2
    broke=1
  fi
fi

if [ "$broke" -ne 0 ]; then
  echo "run.sh: some runs reported errors; the figures above are suspect" >&2
  exit 1
fi
exit 0
