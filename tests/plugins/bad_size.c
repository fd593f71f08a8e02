/* SPDX-License-Identifier: MIT */
/* bad_size.c -- a descriptor whose tool element size is not one any ABI
 * 1.x header produces (a hand-rolled descriptor, or memory corruption).
 * The host must refuse it instead of stepping through the table by a size
 * it cannot trust. */
#include <mcpd.h>

static int bad_size_call(mcpd_call *call, const mcpd_request *req) {
  (void)call, (void)req;
  return MCPD_ERROR;
}

static const mcpd_tool tools[] = {
    {.name = "bad_size", .call = bad_size_call},
    MCPD_TOOL_END,
};

MCPD_EXPORT extern const mcpd_plugin_descriptor mcpd_plugin;
const mcpd_plugin_descriptor mcpd_plugin = {
    .abi_major = MCPD_ABI_MAJOR,
    .abi_minor = MCPD_ABI_MINOR,
    .size = (uint32_t)sizeof(mcpd_plugin_descriptor),
    .tool_size = 8,
    .resource_size = (uint16_t)sizeof(mcpd_resource),
    .resource_template_size = (uint16_t)sizeof(mcpd_resource_template),
    .prompt_size = (uint16_t)sizeof(mcpd_prompt),
    .prompt_argument_size = (uint16_t)sizeof(mcpd_prompt_argument),
    .name = "bad_size",
    .version = "1.0",
    .tools = tools,
};
