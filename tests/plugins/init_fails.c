/* SPDX-License-Identifier: MIT */
/* init_fails.c -- init() allocates its state, then fails with a message.
 * The host must log the message, call fini() with that state (so nothing
 * leaks) and unload the plugin. */
#include <stdlib.h>

#include <mcpd.h>

static int init_fails_init(const mcpd_host *host, mcpd_self *self,
                           json_object *config, void **state, char **errmsg) {
  (void)self, (void)config;
  *state = malloc(16);
  *errmsg = host->mprintf("database unreachable at %s", "db.example");
  return MCPD_ERROR;
}

/* Safe with NULL too: fini() runs whether or not init() got that far. */
static void init_fails_fini(void *state) {
  free(state);
}

static int init_fails_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_ERROR;
}

static const mcpd_tool tools[] = {
    {.name = "init_fails", .call = init_fails_call},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "init_fails", .version = "1.0",
                   .init = init_fails_init, .fini = init_fails_fini,
                   .tools = tools);
