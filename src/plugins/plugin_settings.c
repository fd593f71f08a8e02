/* SPDX-License-Identifier: MIT */
/* plugin_settings.c -- the per-plugin lookups in the host's settings. */
#include "config.h"

#include <string.h>

#include "plugin_settings.h"

static int named(json_object *set, const char *name) {
  return set != NULL && json_object_object_get_ex(set, name, NULL);
}

/* plugins.NAME.mcpd.isolate: 1, 0, or -1 when the config does not say. */
static int config_isolate(const plugin_settings *ps, const char *plugin) {
  json_object *h, *v;
  if (ps->hosting != NULL &&
      json_object_object_get_ex(ps->hosting, plugin, &h) &&
      json_object_object_get_ex(h, "isolate", &v))
    return json_object_get_boolean(v);
  return -1;
}

int plugin_settings_isolated(const plugin_settings *ps, const char *plugin) {
  int c;
  if (named(ps->in_process_names, plugin))
    return 0;
  if (named(ps->isolate_names, plugin))
    return 1;
  if ((c = config_isolate(ps, plugin)) >= 0)
    return c;
  return !ps->in_process_all;
}

int plugin_settings_all_in_process(const plugin_settings *ps) {
  if (!ps->in_process_all || (ps->isolate_names != NULL &&
                              json_object_object_length(ps->isolate_names)))
    return 0;
  if (ps->hosting != NULL) {
    json_object_object_foreach(ps->hosting, name, h) {
      (void)h;
      if (config_isolate(ps, name) == 1)
        return 0;
    }
  }
  return 1;
}

uint64_t plugin_settings_limit(const plugin_settings *ps, const char *plugin,
                               const char *key) {
  json_object *h, *v;
  if (ps->hosting != NULL &&
      json_object_object_get_ex(ps->hosting, plugin, &h) &&
      json_object_object_get_ex(h, "limits", &v) &&
      json_object_object_get_ex(v, key, &v))
    return (uint64_t)json_object_get_int64(v);
  return 0;
}

uint64_t plugin_settings_deadline(const plugin_settings *ps, const char *plugin,
                                  const char *tool) {
  json_object *h, *v;
  uint64_t ms = ps->deadline_ms;
  if (ps->hosting == NULL ||
      !json_object_object_get_ex(ps->hosting, plugin, &h))
    return ms;
  if (json_object_object_get_ex(h, "deadlineMs", &v))
    ms = (uint64_t)json_object_get_int64(v);
  if (tool != NULL && json_object_object_get_ex(h, "tools", &v) &&
      json_object_object_get_ex(v, tool, &v) &&
      json_object_object_get_ex(v, "deadlineMs", &v))
    ms = (uint64_t)json_object_get_int64(v);
  return ms;
}

json_object *plugin_settings_config(const plugin_settings *ps,
                                    const char *name) {
  json_object *cfg;
  if (ps->worker)
    return ps->worker_config;
  if (ps->configs && json_object_object_get_ex(ps->configs, name, &cfg))
    return cfg;
  return NULL;
}

void plugin_settings_free(plugin_settings *ps) {
  json_object_put(ps->hosting);
  json_object_put(ps->in_process_names);
  json_object_put(ps->isolate_names);
  json_object_put(ps->worker_config);
  memset(ps, 0, sizeof(*ps));
}
