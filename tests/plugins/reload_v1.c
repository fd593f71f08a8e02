/* SPDX-License-Identifier: MIT */
/* reload_v1.c -- version 1 of plugin "reload".  Tests replace the file with
 * reload_v2.so and check that `version` changes from "1" to "2". */
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
  return host->result_text(call, "1");
}

static const mcpd_tool tools[] = {
    {.name = "version", .call = reload_version, .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "reload", .version = "1", .init = reload_init,
                   .tools = tools);
