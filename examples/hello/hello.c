/* SPDX-License-Identifier: MIT */
/* hello.c -- the smallest mcpd plugin: one tool that greets by name. */
#include <mcpd.h>

static int hello(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *name = json_object_object_get(req->arguments, "name");
  char *text = host->mprintf("Hello, %s!", json_object_get_string(name));
  int rc = host->result_text(call, text);

  host->free(text);
  return rc;
}

static const mcpd_tool tools[] = {
    {.name = "hello",
     .description = "Greets someone by name.",
     .input_schema = "{\"type\":\"object\",\"required\":[\"name\"],"
                     "\"properties\":{\"name\":{\"type\":\"string\"}}}",
     .call = hello,
     .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "hello", .version = "1.0", .tools = tools);
