/* SPDX-License-Identifier: MIT */
/* bad_schema.c -- an input schema that is not JSON.  The host must refuse
 * the plugin at load, naming the tool. */
#include <mcpd.h>

static int bad_schema_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_ERROR;
}

static const mcpd_tool tools[] = {
    {.name = "bad_schema",
     .input_schema = "{not json",
     .call = bad_schema_call},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "bad_schema", .version = "1.0", .tools = tools);
