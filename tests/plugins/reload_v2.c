/* SPDX-License-Identifier: MIT */
/* reload_v2.c -- version 2 of plugin "reload": `version` answers "2" and a
 * new tool, v2_only, appears (so clients must see tools/list_changed). */
#include <mcpd.h>

/* The host table is kept per image; each version is its own image. */
static const mcpd_host *host;

static int reload_init(const mcpd_host *h, mcpd_self *self, json_object *config,
                       void **state, char **errmsg) {
  (void)self, (void)config, (void)state, (void)errmsg;
  host = h;
  return MCPD_OK;
}

static int reload_version(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  return host->result_text(call, "2");
}

static int reload_v2_only(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  return host->result_text(call, "v2");
}

static const mcpd_tool tools[] = {
    {.name = "version", .call = reload_version, .exec = MCPD_EXEC_INLINE},
    {.name = "v2_only", .call = reload_v2_only, .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "reload", .version = "2", .init = reload_init,
                   .tools = tools);
