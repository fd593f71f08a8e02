# Bundled plugins, installed into $(pluginsdir).  Each is one shared object
# that exports only `mcpd_plugin` (see PLUGIN_LDFLAGS in Makefile.am).

plugins_LTLIBRARIES += plugins/echo.la
plugins_echo_la_SOURCES = plugins/echo/echo.c
plugins_echo_la_LDFLAGS = $(PLUGIN_LDFLAGS)
plugins_echo_la_LIBADD = $(JSONC_LIBS)

# calc needs libm (LT_LIB_M in configure.ac).
plugins_LTLIBRARIES += plugins/calc.la
plugins_calc_la_SOURCES = plugins/calc/calc.c
plugins_calc_la_LDFLAGS = $(PLUGIN_LDFLAGS)
plugins_calc_la_LIBADD = $(JSONC_LIBS) $(LIBM)

# mcpd loads only *.so, so the .la files libtool installs beside the plugins
# are clutter in a directory users browse; drop them.  Without its .la,
# libtool's uninstall no longer knows the .so, hence the uninstall hook.
BUNDLED_PLUGINS = echo calc

install-data-hook:
	for p in $(BUNDLED_PLUGINS); do \
	  rm -f "$(DESTDIR)$(pluginsdir)/$$p.la"; \
	done

uninstall-hook:
	for p in $(BUNDLED_PLUGINS); do \
	  rm -f "$(DESTDIR)$(pluginsdir)/$$p.so"; \
	done
