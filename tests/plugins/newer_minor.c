/* SPDX-License-Identifier: MIT */
/* newer_minor.c -- built against a minor the host does not have yet
 * (MCPD_ABI_MINOR + 1).  The host must refuse it: the plugin may rely on
 * host functions this host lacks. */
#include <mcpd.h>

static int newer_minor_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_ERROR;
}

static const mcpd_tool tools[] = {
    {.name = "newer_minor", .call = newer_minor_call},
    MCPD_TOOL_END,
};

MCPD_EXPORT extern const mcpd_plugin_descriptor mcpd_plugin;
const mcpd_plugin_descriptor mcpd_plugin = {
    .abi_major = MCPD_ABI_MAJOR,
    .abi_minor = MCPD_ABI_MINOR + 1,
    .size = (uint32_t)sizeof(mcpd_plugin_descriptor),
    .name = "newer_minor",
    .version = "1.0",
    .tools = tools,
};
