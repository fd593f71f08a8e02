/* SPDX-License-Identifier: MIT */
/* bad_reserved.c -- a prompt argument that sets a reserved field.  Every
 * table's reserved fields must be zero, so that a later minor can give
 * them a meaning; the host refuses the plugin and says which entry. */
#include <mcpd.h>

static int get(mcpd_call *call, const mcpd_request *req) {
  (void)call, (void)req;
  return MCPD_ERROR;
}

static const mcpd_prompt_argument arguments[] = {
    {.name = "topic", .reserved = {(void *)1}},
    {0},
};

static const mcpd_prompt prompts[] = {
    {.name = "bad_reserved", .arguments = arguments, .get = get},
    MCPD_PROMPT_END,
};

MCPD_PLUGIN_DEFINE(.name = "bad_reserved", .version = "1.0",
                   .prompts = prompts);
