/* SPDX-License-Identifier: MIT */
/* dup_b.c -- declares tool "same_name", as dup_a.c does.  Tool names are
 * unique across plugins, so the host must refuse whichever loads second.
 * The tool answers "b" so a test can tell which one was kept. */
#include <mcpd.h>

static const mcpd_host *host;

static int dup_b_init(const mcpd_host *h, mcpd_self *self, json_object *config,
                      void **state, char **errmsg) {
  (void)self, (void)config, (void)state, (void)errmsg;
  host = h;
  return MCPD_OK;
}

static int dup_b_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  return host->result_text(call, "b");
}

static const mcpd_tool tools[] = {
    {.name = "same_name", .call = dup_b_call, .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "dup_b", .version = "1.0", .init = dup_b_init,
                   .tools = tools);
