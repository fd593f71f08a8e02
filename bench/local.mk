# SPDX-License-Identifier: MIT
# rules for bench/ (owned by that area)
#
# `make bench` builds the load driver and the floor servers and measures
# mcpd against the floors in one run (see bench/README.md).  The programs are
# EXTRA_PROGRAMS so a plain `make` does not build them.

EXTRA_PROGRAMS += bench/floor bench/http-floor bench/mcpd-load \
	bench/mcpd-reload
CLEANFILES += bench/floor$(EXEEXT) bench/http-floor$(EXEEXT) \
	bench/mcpd-load$(EXEEXT) bench/mcpd-reload$(EXEEXT)
EXTRA_DIST += bench/run.sh bench/README.md bench/vs.sh bench/baseline.sh \
	bench/callgrind.sh bench/common.sh bench/sessions.mjs

bench_floor_SOURCES = bench/floor.c
bench_floor_LDADD = $(JSONC_LIBS)

bench_http_floor_SOURCES = bench/http-floor.c
bench_http_floor_LDADD = $(MHD_LIBS) $(JSONC_LIBS)

bench_mcpd_load_SOURCES = bench/load.c bench/load.h bench/load_stdio.c \
	bench/load_http.c bench/load_main.c
bench_mcpd_load_LDADD = $(JSONC_LIBS)

bench_mcpd_reload_SOURCES = bench/reload.c

# All the bundled plugins are built, for the start-up rows (issue 22).
# many.la is a check-only fixture, so it is built here on demand.  Without it
# (for instance when Check is missing) run.sh skips the 10000-tools row.
# With BASELINE=COMMIT, vs.sh builds that commit beside this build instead
# and prints the ratios of the same runs of both (see bench/README.md).
bench: src/mcpd$(EXEEXT) $(plugins_LTLIBRARIES) bench/floor$(EXEEXT) \
		bench/http-floor$(EXEEXT) bench/mcpd-load$(EXEEXT) \
		bench/mcpd-reload$(EXEEXT)
	@if test -n "$(BASELINE)"; then \
	  echo "$(SHELL) $(srcdir)/bench/vs.sh ... $(BASELINE)"; \
	  $(SHELL) $(srcdir)/bench/vs.sh $(abs_top_builddir) \
	    $(abs_top_srcdir) "$(BASELINE)"; \
	else \
	  $(MAKE) $(AM_MAKEFLAGS) tests/plugins/good.la || \
	    echo "bench: tests/plugins/good.la did not build; skipping the pool row"; \
	  $(MAKE) $(AM_MAKEFLAGS) tests/plugins/many.la || \
	    echo "bench: tests/plugins/many.la did not build; skipping that row"; \
	  echo "$(SHELL) $(srcdir)/bench/run.sh $(abs_top_builddir) $(abs_top_srcdir)"; \
	  $(SHELL) $(srcdir)/bench/run.sh $(abs_top_builddir) $(abs_top_srcdir); \
	fi

# Instructions per echo call under callgrind, with BASELINE=COMMIT also for
# that commit (bench/callgrind.sh).
bench-callgrind: src/mcpd$(EXEEXT) plugins/echo.la
	$(SHELL) $(srcdir)/bench/callgrind.sh $(abs_top_builddir) \
	  $(abs_top_srcdir) $(BASELINE)

.PHONY: bench bench-callgrind
