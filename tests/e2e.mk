# SPDX-License-Identifier: MIT
# End-to-end tests (tests/e2e.sh): node's built-in test runner drives the
# built src/mcpd over stdio with raw JSON-RPC lines and with the official MCP
# TypeScript SDK client.  The SDK is pinned in tests/package.json and
# tests/package-lock.json; install it with `npm ci --prefix tests`.  Without
# node or the SDK the test is skipped (exit 77) unless MCPD_REQUIRE_E2E=1.

# Every TESTS script finds the build through these two variables.
AM_TESTS_ENVIRONMENT = \
	MCPD_BUILDDIR='$(abs_top_builddir)' MCPD_SRCDIR='$(abs_top_srcdir)'; \
	NODE='$(NODE)'; \
	export MCPD_BUILDDIR MCPD_SRCDIR NODE;

TESTS += tests/e2e.sh tests/conformance.sh

E2E_FILES = \
	tests/e2e/lib.mjs \
	tests/e2e/protocol.test.mjs \
	tests/e2e/lifecycle.test.mjs \
	tests/e2e/sdk.test.mjs \
	tests/e2e/loader.test.mjs \
	tests/e2e/reload.test.mjs \
	tests/e2e/hardening.test.mjs \
	tests/e2e/everything.test.mjs \
	tests/e2e/client.test.mjs \
	tests/e2e/fs.test.mjs \
	tests/e2e/sqlite.test.mjs \
	tests/e2e/fetch.test.mjs \
	tests/e2e/abi.test.mjs \
	tests/e2e/http.test.mjs \
	tests/e2e/nginx.test.mjs \
	tests/e2e/http-streams.test.mjs \
	tests/e2e/http-limits.test.mjs \
	tests/e2e/auth.test.mjs \
	tests/e2e/faults.test.mjs \
	tests/e2e/worker.test.mjs \
	tests/e2e/isolation.test.mjs \
	tests/e2e/isolation-default.test.mjs \
	tests/e2e/modern.test.mjs \
	tests/e2e/modern-listen.test.mjs \
	tests/e2e/modern-keys.test.mjs \
	tests/e2e/modern-http.test.mjs \
	tests/e2e/sdk2.test.mjs \
	tests/e2e/late-log.test.mjs \
	tests/e2e/tasks.test.mjs \
	tests/e2e/tasks-modern.test.mjs \
	tests/e2e/authoring.test.mjs \
	tests/e2e/logs.test.mjs \
	tests/e2e/ops.test.mjs \
	tests/e2e/exec.test.mjs \
	tests/e2e/sqlite-watch.test.mjs \
	tests/e2e/proxy.test.mjs \
	tests/e2e/proxy-modern.test.mjs \
	tests/e2e/proxy-faults.test.mjs \
	tests/e2e/modern-upstream.mjs \
	tests/e2e/bad-upstream.mjs

EXTRA_DIST += \
	tests/e2e.sh \
	tests/conformance.sh \
	tests/package.json \
	tests/package-lock.json \
	$(E2E_FILES)
