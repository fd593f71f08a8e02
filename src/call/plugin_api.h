/* SPDX-License-Identifier: MIT */
/* plugin_api.h -- the host functions a plugin calls on itself (its
 * mcpd_self), outside any call: logs, run-time entries, resource updates
 * and the roots callback.  host_api.c puts them in the table; each
 * returns MCPD_OK or MCPD_ERROR with last_error set. */
#ifndef MCPD_PLUGIN_API_H
#define MCPD_PLUGIN_API_H

#include "call_core.h"

void plugin_api_log(mcpd_self *self, mcpd_log_level level, const char *fmt, ...)
    MCPD_PRINTF(3, 4);
int plugin_api_add_tool(mcpd_self *self, const mcpd_tool *def);
int plugin_api_remove_tool(mcpd_self *self, const char *name);
int plugin_api_add_resource(mcpd_self *self, const mcpd_resource *def);
int plugin_api_remove_resource(mcpd_self *self, const char *uri);
int plugin_api_add_resource_template(mcpd_self *self,
                                     const mcpd_resource_template *def);
int plugin_api_remove_resource_template(mcpd_self *self,
                                        const char *uri_template);
int plugin_api_add_prompt(mcpd_self *self, const mcpd_prompt *def);
int plugin_api_remove_prompt(mcpd_self *self, const char *name);
int plugin_api_resource_updated(mcpd_self *self, const char *uri);
int plugin_api_on_roots_changed(mcpd_self *self, void (*cb)(void *arg),
                                void *arg);

#endif
