# SPDX-License-Identifier: MIT
# Examples are shipped in the tarball but not installed.  hello/ is built
# out of tree against the installed SDK, the JSON files are snippets for
# MCP client configurations, and nginx/ runs several mcpd processes behind
# nginx (tests/e2e/nginx.test.mjs tests its mcpd.conf as it is).

EXTRA_DIST += \
	examples/hello/hello.c \
	examples/hello/Makefile \
	examples/hello/oot-test.sh \
	examples/hello-cpp/Makefile \
	examples/claude_desktop_config.json \
	examples/cursor-mcp.json \
	examples/vscode-mcp.json \
	examples/nginx/README.md \
	examples/nginx/mcpd.conf \
	examples/nginx/mcpd-stateless.conf \
	examples/nginx/mcpd@.service

# Installs into a staging directory and builds hello.so out of tree with
# pkg-config, exactly as a plugin author would, then calls it through mcpd.
TESTS += examples/hello/oot-test.sh

# everything: the MCP conformance fixture (tools, resources, a template,
# prompts, completion and subscriptions), written against sdk/mcpd.h only.
# Built by `make` so the end-to-end tests and the conformance run can load
# examples/.libs/everything.so, never installed; -rpath makes libtool build
# a shared object anyway.  Its watcher thread needs pthreads, which
# configure added to LIBS.
noinst_LTLIBRARIES += examples/everything.la
examples_everything_la_SOURCES = examples/everything/everything.c \
	examples/everything/tasks.c examples/everything/tasks.h
examples_everything_la_LDFLAGS = $(PLUGIN_LDFLAGS) -rpath /nowhere
examples_everything_la_LIBADD = $(JSONC_LIBS)

# hello-cpp: a plugin in C++17 from the same header, built and served by
# `make check` (tests/e2e/abi.test.mjs); tests/sdk/build-flags.sh also
# compiles it as C++20.
noinst_LTLIBRARIES += examples/hello_cpp.la
examples_hello_cpp_la_SOURCES = examples/hello-cpp/hello.cpp
examples_hello_cpp_la_CXXFLAGS = -std=c++17 -Wall -Wextra -Werror \
	-Wno-unused-parameter -fvisibility=hidden -fvisibility-inlines-hidden \
	$(JSONC_CFLAGS)
examples_hello_cpp_la_LDFLAGS = $(PLUGIN_LDFLAGS) -rpath /nowhere
examples_hello_cpp_la_LIBADD = $(JSONC_LIBS)
