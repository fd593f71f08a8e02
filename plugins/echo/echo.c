/* SPDX-License-Identifier: MIT */
/* echo.c -- the "echo" plugin: returns its text argument unchanged.
 *
 * It is the smallest useful tool and the one the benchmarks drive, so it
 * runs inline on the event loop and does nothing but copy one string.
 */
#include <mcpd.h>

static int echo_call(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *text;

  /* The schema makes "text" a required string, so the host has checked it.
   * The explicit length keeps embedded NUL characters intact. */
  if (!json_object_object_get_ex(req->arguments, "text", &text))
    return host->result_error(call, "missing argument 'text'");
  return host->result_text_len(call, json_object_get_string(text),
                               (size_t)json_object_get_string_len(text));
}

static const mcpd_tool tools[] = {
    {
        .name = "echo",
        .title = "Echo",
        .description = "Returns the given text unchanged.",
        .input_schema = "{\"type\":\"object\","
                        "\"properties\":{\"text\":{\"type\":\"string\","
                        "\"description\":\"The text to send back.\"}},"
                        "\"required\":[\"text\"],"
                        "\"additionalProperties\":false}",
        .call = echo_call,
        .exec = MCPD_EXEC_INLINE,
        .read_only_hint = MCPD_HINT_TRUE,
        .destructive_hint = MCPD_HINT_FALSE,
        .idempotent_hint = MCPD_HINT_TRUE,
        .open_world_hint = MCPD_HINT_FALSE,
    },
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "echo", .version = "1.0",
                   .description = "Echoes text back; a smoke test and "
                                  "benchmark target.",
                   .tools = tools);
