/* host_api.c -- the services table plugins call (struct mcpd_host).
 *
 * Result builders run on whatever thread owns the call (the loop, a pool
 * worker, or the plugin's own thread for asynchronous tools); they touch
 * only that call's private objects.  Everything that reaches a session goes
 * through the server's host queue. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "jsonrpc.h"
#include "loader.h"
#include "log.h"
#include "server.h"
#include "session.h"

static char *host_vmprintf(const char *fmt, va_list ap) {
  va_list copy;
  int n;
  char *buf;

  va_copy(copy, ap);
  n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n < 0 || (buf = malloc((size_t)n + 1)) == NULL)
    return NULL;
  vsnprintf(buf, (size_t)n + 1, fmt, ap);
  return buf;
}

static char *host_mprintf(const char *fmt, ...) {
  va_list ap;
  char *s;
  va_start(ap, fmt);
  s = host_vmprintf(fmt, ap);
  va_end(ap);
  return s;
}

static void host_free(void *p) {
  free(p);
}

static void host_log(mcpd_self *self, mcpd_log_level level, const char *fmt,
                     ...) {
  plugin *p = self ? self->plugin : NULL;
  const char *name = p ? p->name : "?";
  log_level local;
  va_list ap;
  char *text;

  va_start(ap, fmt);
  text = host_vmprintf(fmt, ap);
  va_end(ap);
  if (text == NULL)
    return;
  if (level <= MCPD_LOG_DEBUG)
    local = LOG_LEVEL_DEBUG;
  else if (level <= MCPD_LOG_NOTICE)
    local = LOG_LEVEL_INFO;
  else if (level == MCPD_LOG_WARNING)
    local = LOG_LEVEL_WARN;
  else
    local = LOG_LEVEL_ERROR;
  log_msg(local, "plugin \"%s\": %s", name, text);
  if (p != NULL)
    server_log_to_clients(p->srv, (int)level, name, text);
  free(text);
}

static int usable(mcpd_call *call) {
  return call != NULL && !atomic_load(&call->completed);
}

/* Starts the next block in the comma-joined content text. */
static void next_block(mcpd_call *call) {
  if (call->n_blocks++ > 0)
    strbuf_append(&call->content, ",", 1);
}

/* Rarer block kinds are built with json-c and appended as text. */
static int add_block(mcpd_call *call, json_object *block) {
  size_t len;
  const char *text = jsonrpc_to_string(block, &len);
  next_block(call);
  strbuf_append(&call->content, text, len);
  json_object_put(block);
  return call->content.failed ? MCPD_ERROR : MCPD_OK;
}

static json_object *new_block(const char *type) {
  json_object *block = json_object_new_object();
  json_object_object_add(block, "type", json_object_new_string(type));
  return block;
}

static int host_result_text_len(mcpd_call *call, const char *text, size_t len) {
  if (!usable(call) || text == NULL || len > INT32_MAX)
    return MCPD_ERROR;
  next_block(call);
  strbuf_puts(&call->content, "{\"type\":\"text\",\"text\":");
  strbuf_json_string(&call->content, text, len);
  strbuf_append(&call->content, "}", 1);
  return call->content.failed ? MCPD_ERROR : MCPD_OK;
}

static int host_result_text(mcpd_call *call, const char *text) {
  if (text == NULL)
    return MCPD_ERROR;
  return host_result_text_len(call, text, strlen(text));
}

static int media(mcpd_call *call, const char *type, const char *data,
                 const char *mime_type) {
  json_object *block;
  if (!usable(call) || data == NULL || mime_type == NULL)
    return MCPD_ERROR;
  block = new_block(type);
  json_object_object_add(block, "data", json_object_new_string(data));
  json_object_object_add(block, "mimeType", json_object_new_string(mime_type));
  return add_block(call, block);
}

static int host_result_image(mcpd_call *call, const char *data,
                             const char *mime_type) {
  return media(call, "image", data, mime_type);
}

static int host_result_audio(mcpd_call *call, const char *data,
                             const char *mime_type) {
  return media(call, "audio", data, mime_type);
}

static int host_result_resource_link(mcpd_call *call, const char *uri,
                                     const char *name, const char *description,
                                     const char *mime_type) {
  json_object *block;
  if (!usable(call) || uri == NULL || name == NULL)
    return MCPD_ERROR;
  block = new_block("resource_link");
  json_object_object_add(block, "uri", json_object_new_string(uri));
  json_object_object_add(block, "name", json_object_new_string(name));
  if (description)
    json_object_object_add(block, "description",
                           json_object_new_string(description));
  if (mime_type)
    json_object_object_add(block, "mimeType",
                           json_object_new_string(mime_type));
  return add_block(call, block);
}

static int embedded(mcpd_call *call, const char *uri, const char *mime_type,
                    const char *key, const char *value) {
  json_object *block, *resource;
  if (!usable(call) || uri == NULL || value == NULL)
    return MCPD_ERROR;
  resource = json_object_new_object();
  json_object_object_add(resource, "uri", json_object_new_string(uri));
  if (mime_type)
    json_object_object_add(resource, "mimeType",
                           json_object_new_string(mime_type));
  json_object_object_add(resource, key, json_object_new_string(value));
  block = new_block("resource");
  json_object_object_add(block, "resource", resource);
  return add_block(call, block);
}

static int host_result_resource_text(mcpd_call *call, const char *uri,
                                     const char *mime_type, const char *text) {
  return embedded(call, uri, mime_type, "text", text);
}

static int host_result_resource_blob(mcpd_call *call, const char *uri,
                                     const char *mime_type, const char *blob) {
  return embedded(call, uri, mime_type, "blob", blob);
}

static int host_result_structured(mcpd_call *call, json_object *value) {
  if (!usable(call)) {
    json_object_put(value);
    return MCPD_ERROR;
  }
  if (!json_object_is_type(value, json_type_object)) {
    json_object_put(value);
    call->bad_result = 1;
    return MCPD_ERROR;
  }
  json_object_put(call->structured);
  call->structured = value;
  return MCPD_OK;
}

/* A formatted text block; marks the result an error when asked. */
static int vtext(mcpd_call *call, int is_error, const char *fmt, va_list ap) {
  char *text;
  int rc;

  if (!usable(call) || fmt == NULL)
    return MCPD_ERROR;
  text = host_vmprintf(fmt, ap);
  if (text == NULL)
    return MCPD_ERROR;
  if (is_error)
    call->is_error = 1;
  rc = host_result_text(call, text);
  free(text);
  return rc;
}

static int host_result_error(mcpd_call *call, const char *fmt, ...) {
  va_list ap;
  int rc;
  va_start(ap, fmt);
  rc = vtext(call, 1, fmt, ap);
  va_end(ap);
  return rc;
}

static int host_result_textf(mcpd_call *call, const char *fmt, ...) {
  va_list ap;
  int rc;
  va_start(ap, fmt);
  rc = vtext(call, 0, fmt, ap);
  va_end(ap);
  return rc;
}

static const char *host_call_tool_name(mcpd_call *call) {
  return call ? call->tool->name : NULL;
}

static int host_result_json(mcpd_call *call, json_object *result) {
  if (!usable(call)) {
    json_object_put(result);
    return MCPD_ERROR;
  }
  json_object_put(call->replacement);
  call->replacement = result;
  return MCPD_OK;
}

static int host_cancelled(mcpd_call *call) {
  return call != NULL && atomic_load(&call->cancelled);
}

static int host_progress(mcpd_call *call, double progress, double total,
                         const char *message) {
  json_object *params;
  hostq_event *ev;

  if (!usable(call))
    return MCPD_ERROR;
  if (call->progress_token == NULL)
    return MCPD_OK;
  if (!isfinite(progress) || !(progress > call->last_progress))
    return MCPD_ERROR; /* progress MUST increase */
  if (!isfinite(total))
    total = 0;
  call->last_progress = progress;
  params = json_object_new_object();
  if (json_object_is_type(call->progress_token, json_type_string))
    json_object_object_add(
        params, "progressToken",
        json_object_new_string(json_object_get_string(call->progress_token)));
  else
    json_object_object_add(
        params, "progressToken",
        json_object_new_int64(json_object_get_int64(call->progress_token)));
  json_object_object_add(params, "progress", json_object_new_double(progress));
  if (total > 0)
    json_object_object_add(params, "total", json_object_new_double(total));
  if (message)
    json_object_object_add(params, "message", json_object_new_string(message));
  ev = calloc(1, sizeof(*ev));
  if (ev == NULL) {
    json_object_put(params);
    return MCPD_ERROR;
  }
  ev->type = HOSTQ_NOTIFY;
  ev->call = call;
  ev->msg = params;
  server_post(call->srv, ev);
  return MCPD_OK;
}

static int host_complete(mcpd_call *call, int status) {
  hostq_event *ev;
  if (call == NULL || call->tool->exec != MCPD_EXEC_ASYNC ||
      atomic_exchange(&call->completed, 1))
    return MCPD_ERROR;
  ev = calloc(1, sizeof(*ev));
  if (ev == NULL)
    abort(); /* A lost completion would hang the client forever. */
  ev->type = HOSTQ_COMPLETE;
  ev->call = call;
  ev->level = status;
  server_post(call->srv, ev);
  return MCPD_OK;
}

static mcpd_self *host_call_self(mcpd_call *call) {
  return call ? &call->plugin->self : NULL;
}

static int host_add_tool(mcpd_self *self, const mcpd_tool *def) {
  plugin *p = self ? self->plugin : NULL;
  char err[400];
  reg_tool *t;
  hostq_event *ev;

  if (p == NULL || def == NULL)
    return MCPD_ERROR;
  t = reg_tool_new(def, p, err, sizeof(err));
  if (t == NULL) {
    log_error("plugin \"%s\": add_tool refused: %s", p->name, err);
    return MCPD_ERROR;
  }
  if (server_on_loop(p->srv))
    return loader_add_tool(p, t) == 0 ? MCPD_OK : MCPD_ERROR;
  ev = calloc(1, sizeof(*ev));
  if (ev == NULL) {
    reg_tool_release(t);
    return MCPD_ERROR;
  }
  ev->type = HOSTQ_ADD_TOOL;
  ev->plugin = p;
  ev->tool = t;
  server_post(p->srv, ev);
  return MCPD_OK;
}

static int host_remove_tool(mcpd_self *self, const char *name) {
  plugin *p = self ? self->plugin : NULL;
  hostq_event *ev;

  if (p == NULL || name == NULL)
    return MCPD_ERROR;
  if (server_on_loop(p->srv))
    return loader_remove_tool(p, name) == 0 ? MCPD_OK : MCPD_ERROR;
  ev = calloc(1, sizeof(*ev));
  if (ev == NULL || (ev->name = strdup(name)) == NULL) {
    free(ev);
    return MCPD_ERROR;
  }
  ev->type = HOSTQ_REMOVE_TOOL;
  ev->plugin = p;
  server_post(p->srv, ev);
  return MCPD_OK;
}

const mcpd_host call_host_api = {
    .size = sizeof(mcpd_host),
    .abi_major = MCPD_ABI_MAJOR,
    .abi_minor = MCPD_ABI_MINOR,
    .mprintf = host_mprintf,
    .free = host_free,
    .log = host_log,
    .result_text = host_result_text,
    .result_text_len = host_result_text_len,
    .result_image = host_result_image,
    .result_audio = host_result_audio,
    .result_resource_link = host_result_resource_link,
    .result_resource_text = host_result_resource_text,
    .result_resource_blob = host_result_resource_blob,
    .result_structured = host_result_structured,
    .result_error = host_result_error,
    .result_json = host_result_json,
    .cancelled = host_cancelled,
    .progress = host_progress,
    .complete = host_complete,
    .call_self = host_call_self,
    .add_tool = host_add_tool,
    .remove_tool = host_remove_tool,
    .result_textf = host_result_textf,
    .call_tool_name = host_call_tool_name,
};
