# SPDX-License-Identifier: MIT
# Man pages, made at build time from what they describe, so they cannot
# drift from it: mcpd(1) is doc/mcpd.1.in with its OPTIONS section taken
# from `mcpd --help` (tools/help2roff.awk); mcpd-plugin(7) is
# doc/plugin-guide.md (tools/md2roff.awk).  The tarball carries their
# sources, not the pages.  tests/man.sh checks that every config key is on
# the page and that groff reads both without a warning.

nodist_man1_MANS = doc/mcpd.1
nodist_man7_MANS = doc/mcpd-plugin.7
CLEANFILES += $(nodist_man1_MANS) $(nodist_man7_MANS)
EXTRA_DIST += doc/mcpd.1.in tools/help2roff.awk tools/md2roff.awk

doc/mcpd.1: $(srcdir)/doc/mcpd.1.in $(srcdir)/tools/help2roff.awk \
		src/mcpd$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) doc && \
	src/mcpd$(EXEEXT) --help > $@.help && \
	$(AWK) -v version='$(PACKAGE_VERSION)' -v pluginsdir='$(pluginsdir)' \
	  -v libexecdir='$(pkglibexecdir)' -v bindir='$(bindir)' \
	  -f $(srcdir)/tools/help2roff.awk $@.help $(srcdir)/doc/mcpd.1.in \
	  > $@.tmp && rm -f $@.help && mv $@.tmp $@

doc/mcpd-plugin.7: $(srcdir)/doc/plugin-guide.md $(srcdir)/tools/md2roff.awk
	$(AM_V_GEN)$(MKDIR_P) doc && \
	$(AWK) -v name=mcpd-plugin -v section=7 -v version='$(PACKAGE_VERSION)' \
	  -v summary='writing plugins for the mcpd MCP server host' \
	  -f $(srcdir)/tools/md2roff.awk $(srcdir)/doc/plugin-guide.md \
	  > $@.tmp && mv $@.tmp $@

TESTS += tests/man.sh
EXTRA_DIST += tests/man.sh
