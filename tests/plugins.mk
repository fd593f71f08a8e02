# SPDX-License-Identifier: MIT
# Fixture plugins for the loader and end-to-end tests, built by `make check`
# only, as real shared objects: tests/plugins/.libs/NAME.so.  Tests refer to
# them by file name, so keep the names.
#
#   good               one tool per host service and execution mode
#   many               adds {"count": N} tools (default 10000) at init
#   content, _v2       resources, templates, prompts and completion, one entry
#                      per case test_content.c checks; _v2 is the same source
#                      as version "2", for reloads that keep subscriptions
#   reload_v1, _v2     two versions of plugin "reload", for hot reload
#   printf_init        writes to stdout from init()
#   asker              asks the client (sampling, elicitation, roots), one
#                      tool per host function of ABI 1.1
#   late_log           logs after its call was cancelled (issue 24)
#   fault              crashes, hangs and misbehaves on purpose, each fault
#                      in INLINE, POOL and ASYNC form (issue 13)
#   ctor_pid           an ELF constructor records its pid in
#                      $MCPD_TEST_CTOR_FILE; tool `pid` (issue 22)
#   ctor_crash         its constructor raises SIGSEGV when
#                      MCPD_TEST_CTOR_CRASH=1 (issue 22)
#   abi_major          ABI major 99                    refused
#   newer_minor        ABI minor MCPD_ABI_MINOR + 1    refused
#   no_symbol          exports no `mcpd_plugin`        refused
#   init_fails         init() fails with a message     refused
#   null_name          a tool entry with a NULL name   refused
#   bad_schema         input schema "{not json"        refused
#   schema_not_object  input schema {"type":"array"}   refused
#   bad_name           tool name "has space"           refused
#   dup_a, dup_b       both declare tool "same_name"   second one refused
#   bad_size           a tool element size of 8        refused
#   bad_reserved       a prompt argument sets reserved refused

check_LTLIBRARIES += tests/plugins/good.la
tests_plugins_good_la_SOURCES = tests/plugins/good.c
tests_plugins_good_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_good_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/abi_major.la
tests_plugins_abi_major_la_SOURCES = tests/plugins/abi_major.c
tests_plugins_abi_major_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_abi_major_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/newer_minor.la
tests_plugins_newer_minor_la_SOURCES = tests/plugins/newer_minor.c
tests_plugins_newer_minor_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_newer_minor_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/no_symbol.la
tests_plugins_no_symbol_la_SOURCES = tests/plugins/no_symbol.c
# An export list that matches nothing is a syntax error in GNU ld's version
# script, so this one exports its misnamed descriptor instead.
tests_plugins_no_symbol_la_LDFLAGS = -module -avoid-version -shared \
	-export-symbols-regex '^mcpd_plugin_v0$$' -rpath /nowhere
tests_plugins_no_symbol_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/init_fails.la
tests_plugins_init_fails_la_SOURCES = tests/plugins/init_fails.c
tests_plugins_init_fails_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_init_fails_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/null_name.la
tests_plugins_null_name_la_SOURCES = tests/plugins/null_name.c
tests_plugins_null_name_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_null_name_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/bad_schema.la
tests_plugins_bad_schema_la_SOURCES = tests/plugins/bad_schema.c
tests_plugins_bad_schema_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_bad_schema_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/schema_not_object.la
tests_plugins_schema_not_object_la_SOURCES = tests/plugins/schema_not_object.c
tests_plugins_schema_not_object_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_schema_not_object_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/dup_a.la
tests_plugins_dup_a_la_SOURCES = tests/plugins/dup_a.c
tests_plugins_dup_a_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_dup_a_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/dup_b.la
tests_plugins_dup_b_la_SOURCES = tests/plugins/dup_b.c
tests_plugins_dup_b_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_dup_b_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/bad_name.la
tests_plugins_bad_name_la_SOURCES = tests/plugins/bad_name.c
tests_plugins_bad_name_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_bad_name_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/reload_v1.la
tests_plugins_reload_v1_la_SOURCES = tests/plugins/reload_v1.c
tests_plugins_reload_v1_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_reload_v1_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/reload_v2.la
tests_plugins_reload_v2_la_SOURCES = tests/plugins/reload_v2.c
tests_plugins_reload_v2_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_reload_v2_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/many.la
tests_plugins_many_la_SOURCES = tests/plugins/many.c
tests_plugins_many_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_many_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/printf_init.la
tests_plugins_printf_init_la_SOURCES = tests/plugins/printf_init.c
tests_plugins_printf_init_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_printf_init_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/bad_size.la
tests_plugins_bad_size_la_SOURCES = tests/plugins/bad_size.c
tests_plugins_bad_size_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_bad_size_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/bad_reserved.la
tests_plugins_bad_reserved_la_SOURCES = tests/plugins/bad_reserved.c
tests_plugins_bad_reserved_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_bad_reserved_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/content.la
tests_plugins_content_la_SOURCES = tests/plugins/content.c
tests_plugins_content_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_content_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/content_v2.la
tests_plugins_content_v2_la_SOURCES = tests/plugins/content.c
tests_plugins_content_v2_la_CPPFLAGS = $(AM_CPPFLAGS) -DCONTENT_VERSION='"2"'
tests_plugins_content_v2_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_content_v2_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/asker.la
tests_plugins_asker_la_SOURCES = tests/plugins/asker.c
tests_plugins_asker_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_asker_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/late_log.la
tests_plugins_late_log_la_SOURCES = tests/plugins/late_log.c
tests_plugins_late_log_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_late_log_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/fault.la
tests_plugins_fault_la_SOURCES = tests/plugins/fault.c
tests_plugins_fault_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_fault_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/ctor_pid.la
tests_plugins_ctor_pid_la_SOURCES = tests/plugins/ctor_pid.c
tests_plugins_ctor_pid_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_ctor_pid_la_LIBADD = $(JSONC_LIBS)

check_LTLIBRARIES += tests/plugins/ctor_crash.la
tests_plugins_ctor_crash_la_SOURCES = tests/plugins/ctor_crash.c
tests_plugins_ctor_crash_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_plugins_ctor_crash_la_LIBADD = $(JSONC_LIBS)
