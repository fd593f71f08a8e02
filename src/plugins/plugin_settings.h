/* SPDX-License-Identifier: MIT */
/* plugin_settings.h -- the host's settings for each plugin, and the
 * lookups the loader, the worker link and the call executor make in them.
 *
 * The --config file's plugins.NAME holds what a plugin's init() sees, and
 * plugins.NAME.mcpd what the host does with that plugin (its deadline,
 * whether it is isolated, its resource limits).  settings.c fills this
 * struct; its owners only read it. */
#ifndef MCPD_PLUGIN_SETTINGS_H
#define MCPD_PLUGIN_SETTINGS_H

#include <stdint.h>

#include <json-c/json.h>

typedef struct plugin_settings {
  uint64_t deadline_ms; /* --deadline: the default for every call */
  /* Every plugin runs in a worker process of its own unless these say
   * otherwise (plugin_settings_isolated()). */
  int in_process_all;            /* --in-process */
  json_object *in_process_names; /* --in-process NAME..., a set; owned */
  json_object *isolate_names;    /* --isolate NAME..., a set; owned */
  /* plugins.NAME.mcpd of the config, by plugin name (owned), or NULL: the
   * host's settings for that plugin, which its init() does not see. */
  json_object *hosting;
  json_object *configs; /* the config's "plugins", borrowed; may be NULL */
  /* Worker mode: the one config the host passed (owned; NULL for none),
   * whatever name the plugin has. */
  int worker;
  json_object *worker_config;
} plugin_settings;

/* The deadline of a call into `plugin` (`tool`: the tool's name, or NULL
 * for other calls): the tool's, else the plugin's, else --deadline. */
uint64_t plugin_settings_deadline(const plugin_settings *ps, const char *plugin,
                                  const char *tool);

/* Whether `plugin` runs in a worker process: --in-process NAME or
 * --isolate NAME first, then plugins.NAME.mcpd.isolate, then --in-process
 * (every plugin); by default it does. */
int plugin_settings_isolated(const plugin_settings *ps, const char *plugin);

/* Whether every plugin runs in mcpd's process whatever its name: the
 * loader then needs no worker to learn a plugin's name before it knows
 * where the plugin runs. */
int plugin_settings_all_in_process(const plugin_settings *ps);

/* plugins.NAME.mcpd.limits.KEY ("addressSpaceMiB", "cpuSeconds",
 * "openFiles"), or 0 for none. */
uint64_t plugin_settings_limit(const plugin_settings *ps, const char *plugin,
                               const char *key);

/* Plugin config for plugin `name`, borrowed, or NULL.  In worker mode it
 * is the one config the host passed, whatever the name. */
json_object *plugin_settings_config(const plugin_settings *ps,
                                    const char *name);

/* Frees what `ps` owns and zeroes it. */
void plugin_settings_free(plugin_settings *ps);

#endif
