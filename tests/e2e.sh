#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end tests: spawn the built src/mcpd and drive it with raw JSON-RPC
# lines and with the official MCP TypeScript SDK client (tests/e2e/*.test.mjs).
#
# Environment (set by tests/e2e.mk under `make check`):
#   MCPD_BUILDDIR  top build directory (src/mcpd, plugins/.libs, tests/plugins/.libs)
#   MCPD_SRCDIR    top source directory (tests/e2e, tests/node_modules)
#   MCPD_REQUIRE_E2E=1  fail instead of skipping when node or the SDK is missing
#   MCPD_SKIP_E2E=1     skip even when both are there (the Debian package
#                       build: its tests must not depend on a tests/node_modules
#                       left in the source tree)
#   NODE           the node binary (default: node on PATH)
#
# Exit 77 (skipped) when node or the npm dependencies are missing, so a
# machine without node still passes `make check`; CI sets MCPD_REQUIRE_E2E=1.

srcdir=${MCPD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${MCPD_BUILDDIR:-$srcdir}
MCPD_SRCDIR=$srcdir
MCPD_BUILDDIR=$builddir
export MCPD_SRCDIR MCPD_BUILDDIR

skip() {
  echo "e2e: $*" >&2
  if [ "${MCPD_REQUIRE_E2E:-0}" = 1 ]; then
    echo "e2e: MCPD_REQUIRE_E2E=1, so this is a failure" >&2
    exit 1
  fi
  exit 77
}

[ "${MCPD_SKIP_E2E:-0}" = 1 ] && { echo "e2e: MCPD_SKIP_E2E=1" >&2; exit 77; }

case ${NODE:-} in
  "" | no) NODE=$(command -v node 2>/dev/null) ;;
esac
[ -n "$NODE" ] && "$NODE" --version >/dev/null 2>&1 ||
  skip "node not found; install Node.js 20 or later to run the end-to-end tests"

major=$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null)
[ "${major:-0}" -ge 20 ] 2>/dev/null ||
  skip "node $("$NODE" --version) is too old; the end-to-end tests need node 20 or later"

[ -f "$srcdir/tests/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
  skip "the MCP SDK is not installed in $srcdir/tests/node_modules; run: npm ci --prefix tests"

[ -x "$builddir/src/mcpd" ] || {
  echo "e2e: $builddir/src/mcpd is not built; run make first" >&2
  exit 99
}

set -- "$srcdir"/tests/e2e/*.test.mjs
[ -f "$1" ] || { echo "e2e: no tests found in $srcdir/tests/e2e" >&2; exit 99; }

exec "$NODE" --test --test-reporter=spec --test-concurrency=2 "$@"
