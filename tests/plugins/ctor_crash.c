/* SPDX-License-Identifier: MIT */
/* ctor_crash.c -- a plugin whose ELF constructor raises SIGSEGV when
 * $MCPD_TEST_CTOR_CRASH is "1": the process that opens the file dies
 * before anyone sees its descriptor.  Otherwise a tiny plugin with one
 * tool, `ctor_ok` (INLINE), that answers "ok". */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <mcpd.h>

__attribute__((constructor)) static void ctor_crash_maybe(void) {
  const char *crash = getenv("MCPD_TEST_CTOR_CRASH");

  if (crash != NULL && strcmp(crash, "1") == 0)
    raise(SIGSEGV);
}

static int ctor_crash_ok(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "ok");
}

static const mcpd_tool tools[] = {
    {.name = "ctor_ok",
     .description = "Returns \"ok\".",
     .call = ctor_crash_ok,
     .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "ctor_crash", .version = "1.0",
                   .description = "Crashes in its constructor on request.",
                   .tools = tools);
