# SPDX-License-Identifier: MIT
# Bundled plugins, installed into $(pluginsdir).  Each is one shared object
# that exports only `mcpd_plugin` (see PLUGIN_LDFLAGS in Makefile.am).

# What the bundled plugins share: reading a config object, a growable
# buffer, UTF-8 and base64.  A libtool convenience library, so each plugin
# that links it carries its own copy, compiled -fvisibility=hidden like the
# rest of the plugin: nothing in it is exported beside `mcpd_plugin`.
# echo and calc need none of it and do not link it.
noinst_LTLIBRARIES += plugins/common/libplugcommon.la
plugins_common_libplugcommon_la_SOURCES = \
	plugins/common/plugin_config.c plugins/common/plugin_config.h \
	plugins/common/buf.c plugins/common/buf.h \
	plugins/common/utf8.c plugins/common/utf8.h \
	plugins/common/base64.c plugins/common/base64.h
PLUGIN_COMMON = plugins/common/libplugcommon.la

plugins_LTLIBRARIES += plugins/echo.la
plugins_echo_la_SOURCES = plugins/echo/echo.c
plugins_echo_la_LDFLAGS = $(PLUGIN_LDFLAGS)
plugins_echo_la_LIBADD = $(JSONC_LIBS)

# calc needs libm (LT_LIB_M in configure.ac).
plugins_LTLIBRARIES += plugins/calc.la
plugins_calc_la_SOURCES = plugins/calc/calc.c
plugins_calc_la_LDFLAGS = $(PLUGIN_LDFLAGS)
plugins_calc_la_LIBADD = $(JSONC_LIBS) $(LIBM)

# fs serves files under configured roots.  -pthread for the thread that
# watches subscribed files; _GNU_SOURCE for O_PATH and the *at() calls.
plugins_LTLIBRARIES += plugins/fs.la
plugins_fs_la_SOURCES = plugins/fs/fs.c plugins/fs/fs.h \
	plugins/fs/resolve.c plugins/fs/roots.c plugins/fs/roots.h \
	plugins/fs/tools.c plugins/fs/util.c \
	plugins/fs/watch.c plugins/fs/watch.h
plugins_fs_la_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
plugins_fs_la_CFLAGS = $(AM_CFLAGS) -pthread
plugins_fs_la_LDFLAGS = $(PLUGIN_LDFLAGS) -pthread
plugins_fs_la_LIBADD = $(PLUGIN_COMMON) $(JSONC_LIBS)
EXTRA_DIST += plugins/fs/README.md

# exec runs the programs its config names as tools, never through a shell.
plugins_LTLIBRARIES += plugins/exec.la
plugins_exec_la_SOURCES = plugins/exec/exec.c
plugins_exec_la_LDFLAGS = $(PLUGIN_LDFLAGS)
plugins_exec_la_LIBADD = $(PLUGIN_COMMON) $(JSONC_LIBS)
EXTRA_DIST += plugins/exec/README.md

# sqlite queries the SQLite databases named in its config; built only when
# configure found libsqlite3.  -pthread: a call's cancellation interrupts
# its query from the loop thread.
if HAVE_SQLITE
plugins_LTLIBRARIES += plugins/sqlite.la
plugins_sqlite_la_SOURCES = plugins/sqlite/sqlite.h \
	plugins/sqlite/config.c plugins/sqlite/conn.c plugins/sqlite/cell.c \
	plugins/sqlite/jobs.c plugins/sqlite/schema.c plugins/sqlite/catalog.c \
	plugins/sqlite/statement.c plugins/sqlite/prompt.c plugins/sqlite/sqlite.c \
	plugins/sqlite/rows.c plugins/sqlite/watch.c
plugins_sqlite_la_CPPFLAGS = $(AM_CPPFLAGS) -D_POSIX_C_SOURCE=200809L
plugins_sqlite_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) -pthread
plugins_sqlite_la_LDFLAGS = $(PLUGIN_LDFLAGS) -pthread
plugins_sqlite_la_LIBADD = $(PLUGIN_COMMON) $(JSONC_LIBS) $(SQLITE_LIBS)
endif
EXTRA_DIST += plugins/sqlite/README.md

# fetch fetches URLs with libcurl; built only when configure found it.
# -pthread for its lock; _GNU_SOURCE for memmem, strndup and SOCK_CLOEXEC.
if HAVE_CURL
plugins_LTLIBRARIES += plugins/fetch.la
plugins_fetch_la_SOURCES = plugins/fetch/fetch.c plugins/fetch/fetch.h \
	plugins/fetch/http.c plugins/fetch/html.c plugins/fetch/policy.c \
	plugins/fetch/robots.c plugins/fetch/util.c
plugins_fetch_la_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
plugins_fetch_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) -pthread
plugins_fetch_la_LDFLAGS = $(PLUGIN_LDFLAGS) -pthread
plugins_fetch_la_LIBADD = $(PLUGIN_COMMON) $(JSONC_LIBS) $(CURL_LIBS)
endif
EXTRA_DIST += plugins/fetch/README.md

# proxy serves other MCP servers (child processes, or Streamable HTTP with
# libcurl); built only when configure found libcurl.  -pthread for its
# thread; _GNU_SOURCE for strsignal.
if HAVE_CURL
plugins_LTLIBRARIES += plugins/proxy.la
plugins_proxy_la_SOURCES = plugins/proxy/proxy.c plugins/proxy/proxy.h \
	plugins/proxy/cmdq.c plugins/proxy/callbacks.c plugins/proxy/config.c \
	plugins/proxy/link.h plugins/proxy/upstream.c plugins/proxy/entries.c \
	plugins/proxy/stdio_link.c plugins/proxy/http_link.c
plugins_proxy_la_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
plugins_proxy_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) -pthread
plugins_proxy_la_LDFLAGS = $(PLUGIN_LDFLAGS) -pthread
plugins_proxy_la_LIBADD = $(PLUGIN_COMMON) $(JSONC_LIBS) $(CURL_LIBS)
endif
EXTRA_DIST += plugins/proxy/README.md

# mcpd loads only *.so, so the .la files libtool installs beside the plugins
# are clutter in a directory users browse; drop them.  Without its .la,
# libtool's uninstall no longer knows the .so, hence the uninstall hook.
BUNDLED_PLUGINS = echo calc fs exec
if HAVE_SQLITE
BUNDLED_PLUGINS += sqlite
endif
if HAVE_CURL
BUNDLED_PLUGINS += fetch proxy
endif

install-data-hook:
	for p in $(BUNDLED_PLUGINS); do \
	  rm -f "$(DESTDIR)$(pluginsdir)/$$p.la"; \
	done

uninstall-hook:
	for p in $(BUNDLED_PLUGINS); do \
	  rm -f "$(DESTDIR)$(pluginsdir)/$$p.so"; \
	done

# The helpers of plugins/common (buffer, UTF-8, base64) with Check, linked
# against the same convenience library the plugins link.
if HAVE_CHECK
check_PROGRAMS += tests/plugins_common/common_tests
TESTS += tests/plugins_common/common_tests
tests_plugins_common_common_tests_SOURCES = \
	tests/plugins_common/common_tests.c
tests_plugins_common_common_tests_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_plugins_common_common_tests_LDADD = $(PLUGIN_COMMON) $(CHECK_LIBS) \
	$(JSONC_LIBS)
endif
