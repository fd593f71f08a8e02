/* SPDX-License-Identifier: MIT */
/* null_name.c -- the second tool entry has no name but does have a callback.
 * Only an entry whose name AND call are both NULL closes the table, so the
 * host must see this one and refuse the plugin rather than stop early. */
#include <mcpd.h>

static int null_name_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_ERROR;
}

static const mcpd_tool tools[] = {
    {.name = "null_name_ok", .call = null_name_call},
    {.name = NULL,
     .description = "A tool without a name.",
     .call = null_name_call},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "null_name", .version = "1.0", .tools = tools);
