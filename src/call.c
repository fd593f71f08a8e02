/* call.c -- one tool call in flight. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "jsonrpc.h"
#include "loader.h"
#include "log.h"
#include "schema.h"
#include "server.h"
#include "session.h"

static void work_cb(uv_work_t *work) {
  mcpd_call *c = work->data;
  c->status = c->tool->cb(c, c->args, c->plugin->state);
}

static void after_work_cb(uv_work_t *work, int status) {
  mcpd_call *c = work->data;
  atomic_store(&c->completed, 1);
  call_finish(c, status == 0 ? c->status : MCPD_ERROR);
}

/* The progress token is copied so worker threads never share json-c
 * reference counts with the loop's message tree. */
static json_object *copy_token(json_object *params) {
  json_object *meta, *token;
  if (!json_object_object_get_ex(params, "_meta", &meta) ||
      !json_object_is_type(meta, json_type_object) ||
      !json_object_object_get_ex(meta, "progressToken", &token))
    return NULL;
  if (json_object_is_type(token, json_type_string))
    return json_object_new_string_len(json_object_get_string(token),
                                      json_object_get_string_len(token));
  if (json_object_is_type(token, json_type_int))
    return json_object_new_int64(json_object_get_int64(token));
  return NULL;
}

void call_start(request *r, reg_tool *tool, json_object *args) {
  server *srv = r->session->srv;
  mcpd_call *c = calloc(1, sizeof(*c));
  int rc;

  if (c == NULL) {
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  c->srv = srv;
  c->req = r;
  r->call = c;
  c->tool = reg_tool_ref(tool);
  c->plugin = tool->owner;
  plugin_ref(c->plugin);
  c->args = json_object_get(args);
  c->progress_token = copy_token(r->params);
  c->last_progress = -1e300;
  c->work.data = c;
  srv->calls_in_flight++;

  switch (tool->exec) {
  case MCPD_EXEC_INLINE:
    rc = tool->cb(c, args, c->plugin->state);
    atomic_store(&c->completed, 1);
    call_finish(c, rc);
    break;
  case MCPD_EXEC_ASYNC:
    rc = tool->cb(c, args, c->plugin->state);
    /* On failure to start, finish now -- unless the plugin already called
     * complete(), whose queued event will finish it. */
    if (rc != MCPD_OK && !atomic_exchange(&c->completed, 1))
      call_finish(c, rc);
    break;
  default:
    if (uv_queue_work(srv->loop, &c->work, work_cb, after_work_cb) != 0) {
      atomic_store(&c->completed, 1);
      call_finish(c, MCPD_ERROR);
    }
    break;
  }
}

void call_cancel(mcpd_call *c) {
  atomic_store(&c->cancelled, 1);
}

/* Checks the shape of a result a plugin handed over whole. */
static int valid_result(json_object *result) {
  json_object *content;
  size_t n;
  if (!json_object_is_type(result, json_type_object) ||
      !json_object_object_get_ex(result, "content", &content) ||
      !json_object_is_type(content, json_type_array))
    return 0;
  n = json_object_array_length(content);
  for (size_t i = 0; i < n; i++) {
    json_object *block = json_object_array_get_idx(content, i), *type;
    if (!json_object_is_type(block, json_type_object) ||
        !json_object_object_get_ex(block, "type", &type) ||
        !json_object_is_type(type, json_type_string))
      return 0;
  }
  return 1;
}

/* Builds the CallToolResult as JSON text into `out`; returns 0, or -1 with
 * `err` set. */
static int build_result(mcpd_call *c, int status, strbuf *out, char *err,
                        size_t errlen) {
  const char *name = c->tool->name;
  const char *text;
  size_t len;

  if (c->bad_result || c->content.failed) {
    snprintf(err, errlen, "tool %s built an invalid result", name);
    return -1;
  }
  if (!jsonrpc_all_finite(c->structured) ||
      !jsonrpc_all_finite(c->replacement)) {
    snprintf(err, errlen,
             "tool %s returned a number that is not finite (NaN or "
             "infinity has no JSON form)",
             name);
    return -1;
  }
  if (c->replacement) {
    if (!valid_result(c->replacement)) {
      snprintf(err, errlen,
               "tool %s returned a malformed result (not an object with a "
               "content array)",
               name);
      return -1;
    }
    text = jsonrpc_to_string(c->replacement, &len);
    strbuf_append(out, text, len);
    return 0;
  }
  if (c->n_blocks == 0 && c->structured == NULL && !c->is_error) {
    snprintf(err, errlen,
             status == MCPD_OK ? "tool %s returned no result"
                               : "tool %s failed without a result",
             name);
    return -1;
  }
  if (c->tool->output_schema && !c->is_error) {
    char why[400];
    if (c->structured == NULL) {
      snprintf(err, errlen,
               "tool %s declares an output schema but returned no "
               "structuredContent",
               name);
      return -1;
    }
    if (schema_validate(c->tool->output_schema, c->structured, why,
                        sizeof(why)) != 0) {
      snprintf(err, errlen,
               "tool %s returned structuredContent that does not match its "
               "output schema: %s",
               name, why);
      return -1;
    }
  }
  strbuf_puts(out, "{\"content\":[");
  strbuf_append(out, c->content.data, c->content.len);
  if (c->structured) {
    text = jsonrpc_to_string(c->structured, &len);
    if (c->n_blocks == 0) {
      /* Clients without structured output read the same data as text. */
      strbuf_puts(out, "{\"type\":\"text\",\"text\":");
      strbuf_json_string(out, text, len);
      strbuf_puts(out, "}");
    }
    strbuf_puts(out, "],\"structuredContent\":");
    strbuf_append(out, text, len);
  } else {
    strbuf_puts(out, "]");
  }
  if (c->is_error)
    strbuf_puts(out, ",\"isError\":true");
  strbuf_puts(out, "}");
  return out->failed ? -1 : 0;
}

void call_finish(mcpd_call *c, int status) {
  server *srv = c->srv;
  request *r = c->req;

  /* Progress and logs the callback queued go out before the response. */
  server_drain(srv);
  if (r != NULL) {
    char err[600];
    strbuf out = {0};
    r->call = NULL;
    if (build_result(c, status, &out, err, sizeof(err)) == 0) {
      request_reply_raw(r, out.data, out.len);
      strbuf_free(&out);
    } else {
      strbuf_free(&out);
      if (!r->cancelled)
        log_warn("plugin \"%s\": %s", c->plugin->name, err);
      request_fail(r, JSONRPC_INTERNAL_ERROR, err, NULL);
    }
  }
  json_object_put(c->args);
  strbuf_free(&c->content);
  json_object_put(c->structured);
  json_object_put(c->replacement);
  json_object_put(c->progress_token);
  reg_tool_release(c->tool);
  plugin_release(c->plugin);
  free(c);
  if (--srv->calls_in_flight == 0)
    server_calls_drained(srv);
}
