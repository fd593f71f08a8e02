/* SPDX-License-Identifier: MIT */
/* dup_a.c -- declares tool "same_name", as dup_b.c does.  Tool names are
 * unique across plugins, so the host must refuse whichever loads second.
 * The tool answers "a" so a test can tell which one was kept. */
#include <mcpd.h>

static const mcpd_host *host;

static int dup_a_init(const mcpd_host *h, mcpd_self *self, json_object *config,
                      void **state, char **errmsg) {
  (void)self, (void)config, (void)state, (void)errmsg;
  host = h;
  return MCPD_OK;
}

static int dup_a_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  return host->result_text(call, "a");
}

static const mcpd_tool tools[] = {
    {.name = "same_name", .call = dup_a_call, .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "dup_a", .version = "1.0", .init = dup_a_init,
                   .tools = tools);
