# SPDX-License-Identifier: MIT
# Check unit suites, one program with a suite per unit (framer, jsonrpc,
# handles, rpc_peer, request_state, negotiation, session, schema, uritpl,
# registry, loader, crash, tools, content, server, watch, auth, settings,
# era, streamable_modern, calls, subscribe, worker, and the call room:
# call, schedule, result, ask, remote, plugin_api, host_api).
# The worker suite runs the built src/mcpd as `mcpd --worker` on the fault
# fixture; the remote suite runs isolated plugins in workers of it.
# The loader, crash, tools, content and server suites load the check-only
# fixture plugins from tests/plugins.mk and the bundled echo plugin, so both
# directories are compiled in as absolute paths; streamable_modern, calls and
# subscribe also load examples/everything (the conformance fixture).  Run one suite with CK_RUN_SUITE=loader, or
# everything without fork under valgrind with CK_FORK=no (leave out the
# crash suite then: its test is meant to die of SIGSEGV).
if HAVE_CHECK
check_PROGRAMS += tests/unit/unit_tests
TESTS += tests/unit/unit_tests

tests_unit_unit_tests_SOURCES = \
	tests/unit/unit.h \
	tests/unit/harness.c \
	tests/unit/main.c \
	tests/unit/test_framer.c \
	tests/unit/test_jsonrpc.c \
	tests/unit/test_handles.c \
	tests/unit/test_rpc_peer.c \
	tests/unit/test_request_state.c \
	tests/unit/test_session.c \
	tests/unit/test_schema.c \
	tests/unit/test_uritpl.c \
	tests/unit/test_id_table.c \
	tests/unit/test_log.c \
	tests/unit/test_registry.c \
	tests/unit/test_loader.c \
	tests/unit/test_tools.c \
	tests/unit/test_content.c \
	tests/unit/test_server.c \
	tests/unit/test_watch.c \
	tests/unit/test_auth.c \
	tests/unit/test_settings.c \
	tests/unit/test_era.c \
	tests/unit/test_streamable_modern.c \
	tests/unit/test_calls.c \
	tests/unit/test_subscribe.c \
	tests/unit/test_worker.c \
	tests/unit/test_call.c \
	tests/unit/test_schedule.c \
	tests/unit/test_result.c \
	tests/unit/test_ask.c \
	tests/unit/test_remote.c \
	tests/unit/test_plugin_api.c \
	tests/unit/test_host_api.c
tests_unit_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) \
	-DMCPD_FIXTURES_DIR='"$(abs_top_builddir)/tests/plugins/.libs"' \
	-DMCPD_ECHO_SO='"$(abs_top_builddir)/plugins/.libs/echo.so"' \
	-DMCPD_EVERYTHING_SO='"$(abs_top_builddir)/examples/.libs/everything.so"' \
	-DMCPD_BIN='"$(abs_top_builddir)/src/mcpd"'
tests_unit_unit_tests_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JWT_CFLAGS)
tests_unit_unit_tests_LDADD = src/libmcpdhttp.la src/libmcpdcore.la \
	$(CHECK_LIBS) $(JSONC_LIBS) $(UV_LIBS) $(JWT_LIBS) $(CRYPTO_LIBS)
endif

# The fetch plugin's parsers (HTML, robots.txt, address classes, host
# lists), built from its own sources: a plugin exports nothing to link to.
if HAVE_CHECK
if HAVE_CURL
check_PROGRAMS += tests/fetch/fetch_tests
TESTS += tests/fetch/fetch_tests
tests_fetch_fetch_tests_SOURCES = tests/fetch/fetch_tests.c \
	plugins/fetch/fetch.h plugins/fetch/html.c plugins/fetch/policy.c \
	plugins/fetch/robots.c plugins/fetch/util.c
tests_fetch_fetch_tests_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/plugins/fetch -D_GNU_SOURCE
tests_fetch_fetch_tests_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	$(CURL_CFLAGS) -pthread
tests_fetch_fetch_tests_LDFLAGS = -pthread
tests_fetch_fetch_tests_LDADD = plugins/common/libplugcommon.la $(CHECK_LIBS) \
	$(CURL_LIBS) $(JSONC_LIBS)
endif
endif
