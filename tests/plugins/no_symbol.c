/* SPDX-License-Identifier: MIT */
/* no_symbol.c -- a plugin that looks valid but exports its descriptor under
 * another name, as an old or foreign plugin would.  The host must report the
 * missing `mcpd_plugin` symbol.  tests/plugins.mk exports mcpd_plugin_v0 so
 * that the object really has a descriptor, just not under the right name. */
#include <mcpd.h>

static int no_symbol_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_ERROR;
}

static const mcpd_tool tools[] = {
    {.name = "no_symbol", .call = no_symbol_call},
    MCPD_TOOL_END,
};

MCPD_EXPORT extern const mcpd_plugin_descriptor mcpd_plugin_v0;
const mcpd_plugin_descriptor mcpd_plugin_v0 = {
    .abi_major = MCPD_ABI_MAJOR,
    .abi_minor = MCPD_ABI_MINOR,
    .size = (uint32_t)sizeof(mcpd_plugin_descriptor),
    .name = "no_symbol",
    .version = "1.0",
    .tools = tools,
};
