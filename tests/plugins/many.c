/* SPDX-License-Identifier: MIT */
/* many.c -- registers a large number of tools at run time, for paging,
 * lookup and list_changed tests and for benchmarks.
 *
 * init() reads {"count": N} from its config (default 10000) and adds the
 * inline tools t0 .. t{N-1} with host->add_tool(); each echoes its "text"
 * argument like echo.so.  The table also declares one static tool,
 * many_echo, that does the same.
 */
#include <stdio.h>

#include <mcpd.h>

#define MANY_DEFAULT_COUNT 10000

#define ECHO_SCHEMA                                                            \
  "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"      \
  "\"required\":[\"text\"],\"additionalProperties\":false}"

/* One image, one host table: see plugins/echo/echo.c. */
static const mcpd_host *host;

static int many_echo(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  json_object *text;

  if (!json_object_object_get_ex(arguments, "text", &text))
    return host->result_error(call, "missing argument 'text'");
  return host->result_text_len(call, json_object_get_string(text),
                               (size_t)json_object_get_string_len(text));
}

static int many_init(const mcpd_host *h, mcpd_self *self, json_object *config,
                     void **state, char **errmsg) {
  mcpd_tool tool = {0};
  json_object *v;
  char name[24];
  int64_t count = MANY_DEFAULT_COUNT, i;

  (void)state;
  host = h;
  if (config != NULL && json_object_object_get_ex(config, "count", &v)) {
    count = json_object_get_int64(v);
    if (!json_object_is_type(v, json_type_int) || count < 0) {
      *errmsg = h->mprintf("\"count\" must be a non-negative integer");
      return MCPD_ERROR;
    }
  }
  /* add_tool() copies the struct and the name, so both live on the stack. */
  tool.name = name;
  tool.description = "Echoes text; one of many run-time tools.";
  tool.input_schema = ECHO_SCHEMA;
  tool.call = many_echo;
  tool.exec = MCPD_EXEC_INLINE;
  tool.read_only_hint = MCPD_HINT_TRUE;
  for (i = 0; i < count; i++) {
    snprintf(name, sizeof(name), "t%lld", (long long)i);
    if (h->add_tool(self, &tool) != MCPD_OK) {
      *errmsg = h->mprintf("add_tool(\"%s\") failed", name);
      return MCPD_ERROR;
    }
  }
  return MCPD_OK;
}

static const mcpd_tool tools[] = {
    {
        .name = "many_echo",
        .description = "Echoes text.",
        .input_schema = ECHO_SCHEMA,
        .call = many_echo,
        .exec = MCPD_EXEC_INLINE,
        .read_only_hint = MCPD_HINT_TRUE,
    },
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "many", .version = "1.0",
                   .description = "Adds N echo tools at run time.",
                   .init = many_init, .tools = tools);
