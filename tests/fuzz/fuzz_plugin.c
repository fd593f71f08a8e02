/* fuzz_plugin.c -- a fixture plugin for fuzz_protocol ("fuzzfix"), built
 * by build.sh into fuzzfix.so.  Its tools reach what echo and calc do not,
 * and stay deterministic: nothing runs on another thread.
 *
 *   deferred  ASYNC: builds its result and calls complete() inside the
 *             callback, so the reply comes on the next loop turn and the
 *             request is in flight meanwhile (cancellation, the in-flight
 *             cap, the by-id index, duplicate ids).  Optional progress()
 *             and log() first (notifications/progress, notifications/message);
 *             "fail": true returns MCPD_ERROR without complete().  After
 *             complete(), every result builder and a second complete() must
 *             be refused: the plugin aborts if one is not.
 *   mirror    INLINE: hands "value" back as the whole result (result_json),
 *             as structuredContent (result_structured), as text, as an
 *             error or in every other kind of content block, optionally
 *             twice, cut after "cut" bytes (inside a UTF-8 sequence, say)
 *             and returning "status" instead of MCPD_OK, so the host's
 *             checks of plugin results see arbitrary shapes and bytes.
 *   typed     INLINE, declares an output schema: returns "value" as
 *             structuredContent, which the host must check against it.
 */
#include <stdlib.h>
#include <string.h>

#include <mcpd.h>

static const mcpd_host *host;

static int fix_init(const mcpd_host *h, mcpd_self *self, json_object *config,
                    void **state, char **errmsg) {
  (void)self, (void)config, (void)state, (void)errmsg;
  host = h;
  return MCPD_OK;
}

static json_object *arg(json_object *arguments, const char *key) {
  json_object *v = NULL;
  json_object_object_get_ex(arguments, key, &v);
  return v;
}

static int deferred(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  json_object *text = arg(arguments, "text"), *v;

  if ((v = arg(arguments, "log")) != NULL)
    host->log(host->call_self(call), MCPD_LOG_WARNING, "%s",
              json_object_get_string(v));
  if ((v = arg(arguments, "progress")) != NULL)
    host->progress(call, json_object_get_double(v), 10, "step");
  if (text != NULL)
    host->result_text_len(call, json_object_get_string(text),
                          (size_t)json_object_get_string_len(text));
  if ((v = arg(arguments, "fail")) != NULL && json_object_get_boolean(v))
    return MCPD_ERROR;
  if (text == NULL)
    host->result_text(call, "deferred");
  if (host->complete(call, MCPD_OK) != MCPD_OK)
    abort();
  /* The call is answered: the host must refuse everything now. */
  if (host->complete(call, MCPD_OK) != MCPD_ERROR ||
      host->result_text(call, "late") != MCPD_ERROR ||
      host->progress(call, 1e9, 0, NULL) != MCPD_ERROR)
    abort();
  return MCPD_OK;
}

static json_object *copy_value(json_object *arguments) {
  json_object *v = arg(arguments, "value"), *copy = NULL;
  if (v == NULL || json_object_deep_copy(v, &copy, NULL) != 0)
    return NULL;
  return copy;
}

static int mirror(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  const char *mode = json_object_get_string(arg(arguments, "mode"));
  json_object *v = arg(arguments, "value"), *n;
  const char *text = v != NULL ? json_object_get_string(v) : "null";
  size_t len = v != NULL && json_object_is_type(v, json_type_string)
                   ? (size_t)json_object_get_string_len(v)
                   : strlen(text);
  int rc = MCPD_OK;

  /* A plugin may cut text anywhere, also inside a UTF-8 sequence. */
  if ((n = arg(arguments, "cut")) != NULL &&
      (size_t)json_object_get_int64(n) < len)
    len = (size_t)json_object_get_int64(n);
  for (int i = 0; i < (arg(arguments, "twice") != NULL ? 2 : 1); i++) {
    if (strcmp(mode, "json") == 0) {
      rc = host->result_json(call, copy_value(arguments));
    } else if (strcmp(mode, "structured") == 0) {
      rc = host->result_structured(call, copy_value(arguments));
    } else if (strcmp(mode, "error") == 0) {
      rc = host->result_error(call, "%.*s", (int)len, text);
    } else if (strcmp(mode, "blocks") == 0) {
      host->result_image(call, text, "image/png");
      host->result_audio(call, text, "audio/wav");
      host->result_resource_link(call, text, text, i ? text : NULL, NULL);
      host->result_resource_text(call, text, i ? text : NULL, text);
      rc = host->result_resource_blob(call, text, "x/y", text);
    } else {
      rc = host->result_text_len(call, text, len);
    }
  }
  /* Plugins may return anything; the host must cope. */
  if ((n = arg(arguments, "status")) != NULL)
    return json_object_get_int(n);
  return rc;
}

static int typed(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  return host->result_structured(call, copy_value(arguments));
}

static const mcpd_tool tools[] = {
    {
        .name = "deferred",
        .description = "Answers on the next loop turn.",
        .input_schema = "{\"type\":\"object\",\"properties\":{"
                        "\"text\":{\"type\":\"string\"},"
                        "\"log\":{\"type\":\"string\"},"
                        "\"progress\":{\"type\":\"number\"},"
                        "\"fail\":{\"type\":\"boolean\"}},"
                        "\"additionalProperties\":false}",
        .call = deferred,
        .exec = MCPD_EXEC_ASYNC,
    },
    {
        .name = "mirror",
        .description = "Returns its value in the form asked for.",
        .input_schema = "{\"type\":\"object\",\"properties\":{"
                        "\"mode\":{\"enum\":[\"json\",\"structured\","
                        "\"text\",\"error\",\"blocks\"]},\"value\":{},"
                        "\"cut\":{\"type\":\"integer\",\"minimum\":0},"
                        "\"status\":{\"type\":\"integer\"},"
                        "\"twice\":{\"type\":\"boolean\"}},"
                        "\"required\":[\"mode\"]}",
        .call = mirror,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "typed",
        .description = "Returns its value as structured content.",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"value\":{}}}",
        .output_schema = "{\"type\":\"object\",\"properties\":{"
                         "\"n\":{\"type\":\"integer\",\"minimum\":0},"
                         "\"s\":{\"type\":\"string\",\"maxLength\":4}},"
                         "\"required\":[\"n\"],"
                         "\"additionalProperties\":false}",
        .call = typed,
        .exec = MCPD_EXEC_INLINE,
    },
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "fuzzfix", .version = "1.0",
                   .description = "Fixture tools for fuzz_protocol.",
                   .init = fix_init, .tools = tools);
