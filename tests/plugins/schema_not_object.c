/* SPDX-License-Identifier: MIT */
/* schema_not_object.c -- valid JSON Schema whose root is not an object
 * schema.  Tool arguments are always an object, so the host must refuse it. */
#include <mcpd.h>

static int schema_not_object_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_ERROR;
}

static const mcpd_tool tools[] = {
    {
        .name = "schema_not_object",
        .input_schema = "{\"type\":\"array\"}",
        .call = schema_not_object_call,
    },
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "schema_not_object", .version = "1.0",
                   .tools = tools);
