/* SPDX-License-Identifier: MIT */
/* printf_init.c -- writes to stdout from init(), as careless plugins do.
 * mcpd must keep that text off its protocol stream. */
#include <stdio.h>
#include <unistd.h>

#include <mcpd.h>

static const mcpd_host *host;

static int printf_init_init(const mcpd_host *h, mcpd_self *self,
                            json_object *config, void **state, char **errmsg) {
  ssize_t n;

  (void)self, (void)config, (void)state, (void)errmsg;
  host = h;
  printf("printf_init: hello from init\n");
  fflush(stdout);
  n = write(1, "printf_init: raw write from init\n", 33);
  (void)n;
  return MCPD_OK;
}

static int printf_init_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  return host->result_text(call, "ok");
}

static const mcpd_tool tools[] = {
    {.name = "printf_init", .call = printf_init_call, .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "printf_init", .version = "1.0",
                   .init = printf_init_init, .tools = tools);
