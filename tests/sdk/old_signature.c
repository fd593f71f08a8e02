/* SPDX-License-Identifier: MIT */
/* old_signature.c -- a plugin written before ABI 1.0 and never ported: its
 * tool callback still takes (mcpd_call *, json_object *args, void *user_data).
 * tests/sdk/build-flags.sh expects it NOT to compile with the flags that
 * mcpd.pc gives plugin authors, since loaded it would answer garbage. */
#include <mcpd.h>

static int old_echo(mcpd_call *call, json_object *args, void *user_data) {
  (void)call;
  (void)args;
  (void)user_data;
  return 0;
}

static const mcpd_tool tools[] = {
    {.name = "old_echo",
     .description = "Written against the header before 1.0.",
     .call = old_echo},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "old_signature", .version = "0.9", .tools = tools);
