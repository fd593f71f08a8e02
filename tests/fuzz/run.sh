#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh BUILDDIR [SECONDS] -- builds the fuzzers (build.sh) into
# BUILDDIR/tests/fuzz and runs each for SECONDS (default 60) on a copy of
# its seed corpus in a temporary directory.  Exits non-zero when a fuzzer
# crashed, leaked, timed out, ran out of memory or broke an invariant; its
# reproducer (crash-*, leak-*, timeout-*, oom-*) is copied to
# BUILDDIR/tests/fuzz/findings/ and its log tail printed.  The last line is
# "fuzz: N passed, M failed".
#
# FUZZERS limits the run to some of them ("fuzz_protocol"); FUZZ_JOBS > 1
# runs each with that many parallel workers (-fork); FUZZ_SEED fixes
# libFuzzer's seed (0, the default, picks one at random).  CI fixes it, so
# that its gate explores the same inputs every run; long campaigns
# (make fuzz) should not.
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 BUILDDIR [SECONDS]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
out=$build/tests/fuzz
fuzzers=${FUZZERS:-fuzz_protocol fuzz_arguments fuzz_uritpl}
jobs=${FUZZ_JOBS:-1}

if ! sh "$here/build.sh" "$build" "$out"; then
  echo "fuzz: the build failed" >&2
  echo "fuzz: 0 passed, 1 failed"
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/mcpd-fuzz-run-XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

pass=0
fail=0
for fz in $fuzzers; do
  corpus=${fz#fuzz_}
  mkdir -p "$work/$fz/corpus" "$work/$fz/artifacts"
  cp "$here/corpus/$corpus/"* "$work/$fz/corpus/"
  log=$work/$fz/log
  echo "fuzz: running $fz for ${seconds}s" >&2
  set -- -max_total_time="$seconds" -seed="${FUZZ_SEED:-0}" \
    -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$work/$fz/artifacts/"
  [ "$jobs" -gt 1 ] 2>/dev/null && set -- "$@" -fork="$jobs" \
    -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0
  # Leaks and UBSan reports stop the run; the corpus grows in place.
  (cd "$work/$fz" &&
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
      UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
      exec "$out/$fz" "$@" "$work/$fz/corpus") >"$log" 2>&1
  rc=$?
  artifacts=$(ls "$work/$fz/artifacts" 2>/dev/null)
  stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' \
    "$log" | sed 's/^stat:://; s/:  */ /' | tr '\n' ' ')
  cov=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" |
    tail -n1 | sed -n 's/.*\(cov: [0-9]*\).*\(ft: [0-9]*\).*\(corp: [^ ]*\).*/\1 \2 \3/p')
  if [ "$rc" = 0 ] && [ -z "$artifacts" ]; then
    pass=$((pass + 1))
    echo "fuzz: $fz passed: $stats$cov" >&2
  else
    fail=$((fail + 1))
    mkdir -p "$out/findings"
    for a in $artifacts; do
      cp "$work/$fz/artifacts/$a" "$out/findings/$fz-$a"
    done
    echo "---- $fz failed (exit $rc) ----" >&2
    grep -E '^==fuzz==|ERROR: |SUMMARY: |runtime error: ' "$log" |
      cut -c1-400 | head -n 20 >&2
    echo "---- last lines of its log ----" >&2
    grep -v -E '^#[0-9]+[[:space:]]|^INFO: |^ *"|^MS: ' "$log" | tail -n 40 |
      cut -c1-400 >&2
    [ -n "$artifacts" ] &&
      echo "fuzz: reproducers in $out/findings/ (run: $out/$fz FILE)" >&2
  fi
done

echo "fuzz: $pass passed, $fail failed"
[ "$fail" = 0 ]
