/* SPDX-License-Identifier: MIT */
/* abi_major.c -- a descriptor from a future ABI major (99).  The host must
 * refuse it from the descriptor alone, before any of its code runs.  The
 * struct is written by hand because MCPD_PLUGIN_DEFINE always fills in the
 * current numbers. */
#include <mcpd.h>

static int abi_major_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_ERROR;
}

static const mcpd_tool tools[] = {
    {.name = "abi_major", .call = abi_major_call},
    MCPD_TOOL_END,
};

MCPD_EXPORT extern const mcpd_plugin_descriptor mcpd_plugin;
const mcpd_plugin_descriptor mcpd_plugin = {
    .abi_major = 99,
    .abi_minor = 0,
    .size = (uint32_t)sizeof(mcpd_plugin_descriptor),
    .name = "abi_major",
    .version = "1.0",
    .tools = tools,
};
