/* SPDX-License-Identifier: MIT */
/* bad_name.c -- a tool name with a character outside [A-Za-z0-9_.-].  The
 * host must refuse the plugin and say which name is wrong. */
#include <mcpd.h>

static int bad_name_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_ERROR;
}

static const mcpd_tool tools[] = {
    {.name = "has space", .call = bad_name_call},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "bad_name", .version = "1.0", .tools = tools);
