# SPDX-License-Identifier: MIT
# The ABI 1.0 fixture (tests/abi/README.md): built by `make check` only, as
# a real shared object, tests/abi/.libs/abi10.so, against the frozen header
# in tests/abi/1.0/ -- never sdk/, which moves on.  A per-target CPPFLAGS
# replaces AM_CPPFLAGS, so sdk/ is not on its include path at all.
# tests/e2e/abi.test.mjs loads it into the current mcpd.

check_LTLIBRARIES += tests/abi/abi10.la
tests_abi_abi10_la_SOURCES = tests/abi/abi10.c
tests_abi_abi10_la_CPPFLAGS = -I$(srcdir)/tests/abi/1.0
tests_abi_abi10_la_LDFLAGS = $(CHECK_PLUGIN_LDFLAGS)
tests_abi_abi10_la_LIBADD = $(JSONC_LIBS)

EXTRA_DIST += \
	tests/abi/README.md \
	tests/abi/1.0/mcpd.h \
	tests/e2e/abi.test.mjs
