/* SPDX-License-Identifier: MIT */
/* late_log.c -- one POOL tool, log_after_cancel, that waits until its
 * client cancels it (5 s at most) and then logs one warning line, "logged
 * after the cancel": tests/e2e/late-log.test.mjs checks that the line
 * reaches the caller's session alone, also through an isolated worker and
 * over HTTP on the session's standalone stream. */
#include <time.h>

#include <mcpd.h>

static int log_after_cancel(mcpd_call *call, const mcpd_request *req) {
  struct timespec ms = {0, 1000000};

  for (int i = 0; i < 5000 && !req->host->cancelled(call); i++)
    nanosleep(&ms, NULL);
  req->host->log(req->self, MCPD_LOG_WARNING, "logged after the cancel");
  return req->host->result_text(call, "done");
}

static const mcpd_tool tools[] = {
    {.name = "log_after_cancel",
     .description = "Waits to be cancelled, then logs a warning.",
     .call = log_after_cancel,
     .exec = MCPD_EXEC_POOL},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "late_log", .version = "1.0", .tools = tools);
