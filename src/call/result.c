/* SPDX-License-Identifier: MIT */
/* result.c -- what a call answers: the builders plugins call, the
 * checks a result passes (its shape for the kind of call, the tool's
 * output schema, finite numbers, one line of JSON, valid UTF-8) and the
 * answer's JSON text, written without building a tree where it can. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "loader.h"
#include "log.h"
#include "result.h"
#include "schema.h"
#include "utf8.h"

/* The most values one completion result carries (MCP's limit). */
#define COMPLETION_MAX 100

static int build_text(mcpd_call *c, int status, strbuf *out, char *err,
                      size_t errlen);

/* --- the checks and the answer's text -------------------------------- */

/* Whether `text` is one line of strict JSON.  A plugin can attach its own
 * json-c serializer to a value it hands back, and json-c then prints
 * whatever that serializer writes -- a newline would start a forged
 * message on the client's stream. */
static int one_json_line(const char *text, size_t len) {
  json_tokener *tok;
  json_object *obj = NULL;
  const char *why;
  int ok;

  if (memchr(text, '\n', len) != NULL || memchr(text, '\r', len) != NULL)
    return 0;
  if ((tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH)) == NULL)
    return 0;
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  ok = jsonrpc_parse(tok, text, len, &obj, &why) == 0;
  json_object_put(obj);
  json_tokener_free(tok);
  return ok;
}

/* The whole result: built, then made valid UTF-8 (plugin text is not
 * trusted to be), then checked when plugin-built json-c values went in. */
static int build_result(mcpd_call *c, int status, strbuf *out, char *err,
                        size_t errlen) {
  if (status != MCPD_OK && status != MCPD_ERROR) {
    snprintf(err, errlen,
             "%s %s returned %d, which is neither MCPD_OK nor MCPD_ERROR",
             call_what(c), c->name, status);
    return -1;
  }
  if (build_text(c, status, out, err, errlen) != 0)
    return -1;
  if (!utf8_valid(out->data, out->len)) {
    size_t len;
    char *fixed = utf8_repair(out->data, out->len, &len);
    if (fixed == NULL) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    log_warn("plugin \"%s\": %s %s returned text that is not valid UTF-8; "
             "bad bytes were replaced with U+FFFD",
             c->plugin->name, call_what(c), c->name);
    free(out->data);
    out->data = fixed;
    out->len = len;
    out->cap = len + 1;
  }
  /* A worker's result passed the same checks on its way in. */
  if ((c->result.structured != NULL ||
       (c->result.replacement != NULL && !c->result.remote_checked)) &&
      !one_json_line(out->data, out->len)) {
    snprintf(err, errlen,
             "%s %s returned a value that does not serialize as JSON "
             "(a custom json-c serializer?)",
             call_what(c), c->name);
    return -1;
  }
  return 0;
}

/* What a client declared it can do, as CLIENT_* bits, so that any thread
 * can check a request to it without touching the session. */
#define CLIENT_SAMPLING 0x1u
#define CLIENT_SAMPLING_TOOLS 0x2u
#define CLIENT_ELICIT_FORM 0x4u

/* Whether `result` has member `key` of type `type`. */
static int has(json_object *result, const char *key, json_type type,
               json_object **out) {
  json_object *v;
  if (!json_object_object_get_ex(result, key, &v) ||
      !json_object_is_type(v, type))
    return 0;
  if (out)
    *out = v;
  return 1;
}

/* Checks the shape of a result a plugin handed over whole: what the
 * client's schema needs at the top, and every item an object. */
static int valid_result(const mcpd_call *c, json_object *result) {
  static const char *const keys[] = {"content", "contents", "messages", NULL};
  json_object *list, *completion;
  size_t n;

  if (!json_object_is_type(result, json_type_object))
    return 0;
  if (c->kind == CALL_COMPLETE)
    return has(result, "completion", json_type_object, &completion) &&
           has(completion, "values", json_type_array, &list) &&
           json_object_array_length(list) <= 100;
  if (!has(result, keys[c->kind], json_type_array, &list))
    return 0;
  n = json_object_array_length(list);
  for (size_t i = 0; i < n; i++) {
    json_object *item = json_object_array_get_idx(list, i);
    if (!json_object_is_type(item, json_type_object))
      return 0;
    if (c->kind == CALL_TOOL && !has(item, "type", json_type_string, NULL))
      return 0;
    if (c->kind == CALL_READ && !has(item, "uri", json_type_string, NULL))
      return 0;
    if (c->kind == CALL_PROMPT &&
        (!has(item, "role", json_type_string, NULL) ||
         !has(item, "content", json_type_object, NULL)))
      return 0;
  }
  return 1;
}

/* valid_result() on a worker's result text (which jsonrpc_skip_value
 * accepted, so it has no whitespace).  0 says "not valid, or not plain
 * enough to tell": then the tree decides. */
static int valid_result_text(const mcpd_call *c, const char *s, size_t len) {
  static const char *const keys[] = {"content", "contents", "messages"};
  const char *end = s + len, *list, *item, *v;
  size_t n = 0;

  if (c->kind == CALL_COMPLETE)
    list = (v = jsonrpc_member(s, end, "completion")) != NULL && *v == '{'
               ? jsonrpc_member(v, end, "values")
               : NULL;
  else
    list = jsonrpc_member(s, end, keys[c->kind]);
  if (list == NULL || *list != '[')
    return 0;
  for (item = list + 1; *item != ']'; item++) {
    if (c->kind != CALL_COMPLETE) {
      if (*item != '{')
        return 0;
      if (c->kind == CALL_TOOL &&
          ((v = jsonrpc_member(item, end, "type")) == NULL || *v != '"'))
        return 0;
      if (c->kind == CALL_READ &&
          ((v = jsonrpc_member(item, end, "uri")) == NULL || *v != '"'))
        return 0;
      if (c->kind == CALL_PROMPT &&
          ((v = jsonrpc_member(item, end, "role")) == NULL || *v != '"' ||
           (v = jsonrpc_member(item, end, "content")) == NULL || *v != '{'))
        return 0;
    }
    n++;
    if ((item = jsonrpc_skip_value(item, end, 2)) == NULL || *item != ',')
      break;
  }
  return item != NULL && *item == ']' && (c->kind != CALL_COMPLETE || n <= 100);
}

/* A worker's result text as a tree, for the checks text cannot do. */
static json_object *parse_remote(const mcpd_call *c) {
  json_tokener *tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH);
  json_object *obj = NULL;
  const char *why;

  if (tok == NULL)
    return NULL;
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  if (jsonrpc_parse(tok, c->result.remote_text.data, c->result.remote_text.len,
                    &obj, &why) != 0)
    obj = NULL;
  json_tokener_free(tok);
  return obj;
}

/* Checks a tool's structured content against its output schema. */
static int check_output(mcpd_call *c, char *err, size_t errlen) {
  char why[400];
  if (c->entry->output_schema == NULL || c->result.is_error)
    return 0;
  if (c->result.structured == NULL) {
    snprintf(err, errlen,
             "tool %s declares an output schema but returned no "
             "structuredContent",
             c->name);
    return -1;
  }
  if (schema_validate(c->entry->output_schema, c->result.structured, why,
                      sizeof(why)) != 0) {
    snprintf(err, errlen,
             "tool %s returned structuredContent that does not match its "
             "output schema: %s",
             c->name, why);
    return -1;
  }
  return 0;
}

/* The CallToolResult around the content blocks. */
static void tool_result(mcpd_call *c, strbuf *out) {
  const char *text;
  size_t len;

  strbuf_puts(out, "{\"content\":[");
  strbuf_append(out, c->result.content.data, c->result.content.len);
  if (c->result.structured) {
    text = jsonrpc_to_string(c->result.structured, &len);
    if (c->result.n_blocks == 0) {
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
  if (c->result.is_error)
    strbuf_puts(out, ",\"isError\":true");
  strbuf_puts(out, "}");
}

static void completion_result(mcpd_call *c, strbuf *out) {
  size_t sent =
      c->result.n_blocks < COMPLETION_MAX ? c->result.n_blocks : COMPLETION_MAX;
  size_t total = c->result.total > c->result.n_blocks ? c->result.total
                                                      : c->result.n_blocks;
  char tail[64];

  /* content holds the first 100 values; n_blocks counts them all. */
  strbuf_puts(out, "{\"completion\":{\"values\":[");
  strbuf_append(out, c->result.content.data, c->result.content.len);
  snprintf(tail, sizeof(tail), "],\"total\":%zu,\"hasMore\":%s}}", total,
           c->result.has_more || total > sent ? "true" : "false");
  strbuf_puts(out, tail);
}

/* Builds the result as JSON text into `out`; returns 0, or -1 with `err`
 * set. */
static int build_text(mcpd_call *c, int status, strbuf *out, char *err,
                      size_t errlen) {
  const char *name = c->name, *text;
  size_t len;

  if (c->result.bad_result || c->result.content.failed) {
    snprintf(err, errlen, "%s %s built an invalid result", call_what(c), name);
    return -1;
  }
  if (!jsonrpc_all_finite(c->result.structured) ||
      (!c->result.remote_checked &&
       !jsonrpc_all_finite(c->result.replacement))) {
    snprintf(err, errlen,
             "%s %s returned a number that is not finite (NaN or "
             "infinity has no JSON form)",
             call_what(c), name);
    return -1;
  }
  /* A worker's result as text alone: checked as text, or failing that
   * (a shape the check cannot judge) as a tree. */
  if (c->result.replacement == NULL && c->result.remote_text.len > 0 &&
      !valid_result_text(c, c->result.remote_text.data,
                         c->result.remote_text.len) &&
      (c->result.replacement = parse_remote(c)) == NULL) {
    snprintf(err, errlen, "%s %s returned a malformed result", call_what(c),
             name);
    return -1;
  }
  if (c->result.replacement || c->result.remote_text.len > 0) {
    if (c->result.replacement != NULL &&
        !valid_result(c, c->result.replacement)) {
      snprintf(err, errlen, "%s %s returned a malformed result", call_what(c),
               name);
      return -1;
    }
    if (c->result.remote_text.len > 0) {
      *out = c->result.remote_text;
      memset(&c->result.remote_text, 0, sizeof(c->result.remote_text));
      return 0;
    }
    text = jsonrpc_to_string(c->result.replacement, &len);
    strbuf_append(out, text, len);
    return 0;
  }
  if (status != MCPD_OK && c->kind != CALL_TOOL) {
    snprintf(err, errlen, "%s %s failed", call_what(c), name);
    return -1;
  }
  switch (c->kind) {
  case CALL_TOOL:
    if (c->result.n_blocks == 0 && c->result.structured == NULL &&
        !c->result.is_error) {
      snprintf(err, errlen,
               status == MCPD_OK ? "tool %s returned no result"
                                 : "tool %s failed without a result",
               name);
      return -1;
    }
    if (check_output(c, err, errlen) != 0)
      return -1;
    tool_result(c, out);
    break;
  case CALL_READ:
    if (c->result.n_blocks == 0) {
      snprintf(err, errlen, "read of %s returned no contents", name);
      return -1;
    }
    strbuf_puts(out, "{\"contents\":[");
    strbuf_append(out, c->result.content.data, c->result.content.len);
    strbuf_puts(out, "]}");
    break;
  case CALL_PROMPT:
    strbuf_puts(out, "{");
    if (c->entry->description) {
      strbuf_puts(out, "\"description\":");
      strbuf_json_string(out, c->entry->description,
                         strlen(c->entry->description));
      strbuf_puts(out, ",");
    }
    strbuf_puts(out, "\"messages\":[");
    strbuf_append(out, c->result.content.data, c->result.content.len);
    strbuf_puts(out, "]}");
    break;
  case CALL_COMPLETE:
    completion_result(c, out);
    break;
  }
  return out->failed ? -1 : 0;
}

/* Answers the JSON-RPC error a callback chose with fail(). */
static void answer_failure(mcpd_call *c, request *r) {
  json_object *data = NULL;
  const char *msg = c->result.fail_message ? c->result.fail_message : "failed";
  char *fixed = NULL;
  size_t len;

  if (c->result.fail_data != NULL) {
    data = json_object_get(c->result.fail_data);
  } else if (c->result.fail_code == MCPD_ERR_NOT_FOUND &&
             c->kind == CALL_READ) {
    data = json_object_new_object();
    json_object_object_add(data, "uri", json_object_new_string(c->name));
  }
  /* 2026-07-28 answers a missing resource with invalid params (its data
   * still names the URI); -32002 is never sent there. */
  if (c->modern && c->result.fail_code == MCPD_ERR_NOT_FOUND)
    c->result.fail_code = JSONRPC_INVALID_PARAMS;
  /* The message is plugin text: make it valid UTF-8 like any result. */
  if (!utf8_valid(msg, strlen(msg)) &&
      (fixed = utf8_repair(msg, strlen(msg), &len)) != NULL)
    msg = fixed;
  request_fail(r, c->result.fail_code, msg, data);
  free(fixed);
}

/* Whether the call ended in failure: an error answer, a failed status or
 * a tool result with isError. */
int result_failed(mcpd_call *c, int status) {
  json_object *v;
  if (c->result.fail_code != 0 || status != MCPD_OK || c->result.is_error)
    return 1;
  if (c->result.replacement == NULL && c->result.remote_text.len > 0)
    c->result.replacement = parse_remote(c);
  return c->result.replacement != NULL &&
         json_object_object_get_ex(c->result.replacement, "isError", &v) &&
         json_object_get_boolean(v);
}

/* --- the builders ------------------------------------------------------ */

/* Refuses a builder that has no meaning for the call's kind: the result
 * is then an internal error, and last_error() says why. */
static int refuse(mcpd_call *call, const char *builder) {
  static const char *const kinds[] = {"tool call", "resource read",
                                      "prompt get", "completion"};
  log_error("plugin \"%s\": %s() on a %s (%s %s); the call fails",
            call->plugin->name, builder, kinds[call->kind], call_what(call),
            call->name);
  call_set_error("%s() cannot be used on a %s", builder, kinds[call->kind]);
  call->result.bad_result = 1;
  return MCPD_ERROR;
}

/* Starts the next block in the comma-joined content text: a prompt's
 * block is the content of a message with the current role. */
static void begin_block(mcpd_call *call) {
  if (call->result.n_blocks++ > 0)
    strbuf_append(&call->result.content, ",", 1);
  if (call->kind == CALL_PROMPT) {
    strbuf_puts(&call->result.content, "{\"role\":\"");
    strbuf_puts(&call->result.content, call->result.role);
    strbuf_puts(&call->result.content, "\",\"content\":");
  }
}

static void end_block(mcpd_call *call) {
  if (call->kind == CALL_PROMPT)
    strbuf_append(&call->result.content, "}", 1);
}

/* Rarer block kinds are built with json-c and appended as text. */
static int add_block(mcpd_call *call, json_object *block) {
  size_t len;
  const char *text = jsonrpc_to_string(block, &len);
  begin_block(call);
  strbuf_append(&call->result.content, text, len);
  end_block(call);
  json_object_put(block);
  return call->result.content.failed ? MCPD_ERROR : MCPD_OK;
}

static json_object *new_block(const char *type) {
  json_object *block = json_object_new_object();
  json_object_object_add(block, "type", json_object_new_string(type));
  return block;
}

/* One item of a read's contents: the URI asked for unless the plugin
 * names another, the entry's MIME type unless it names one. */
static int read_item(mcpd_call *call, const char *uri, const char *mime_type,
                     const char *key, const char *value, size_t len) {
  if (uri == NULL)
    uri = call->name;
  if (mime_type == NULL)
    mime_type = call->entry->mime_type;
  begin_block(call);
  strbuf_puts(&call->result.content, "{\"uri\":");
  strbuf_json_string(&call->result.content, uri, strlen(uri));
  if (mime_type != NULL) {
    strbuf_puts(&call->result.content, ",\"mimeType\":");
    strbuf_json_string(&call->result.content, mime_type, strlen(mime_type));
  }
  strbuf_puts(&call->result.content, ",\"");
  strbuf_puts(&call->result.content, key);
  strbuf_puts(&call->result.content, "\":");
  strbuf_json_string(&call->result.content, value, len);
  strbuf_append(&call->result.content, "}", 1);
  return call->result.content.failed ? MCPD_ERROR : MCPD_OK;
}

int result_add_text_len(mcpd_call *call, const char *text, size_t len) {
  if (!call_usable(call) || text == NULL || len > INT32_MAX)
    return MCPD_ERROR;
  if (call->kind == CALL_COMPLETE)
    return refuse(call, "result_text");
  if (call->kind == CALL_READ)
    return read_item(call, NULL, NULL, "text", text, len);
  begin_block(call);
  strbuf_puts(&call->result.content, "{\"type\":\"text\",\"text\":");
  strbuf_json_string(&call->result.content, text, len);
  strbuf_append(&call->result.content, "}", 1);
  end_block(call);
  return call->result.content.failed ? MCPD_ERROR : MCPD_OK;
}

int result_add_text(mcpd_call *call, const char *text) {
  if (text == NULL)
    return MCPD_ERROR;
  return result_add_text_len(call, text, strlen(text));
}

/* Content blocks only tools and prompts have. */
static int content_only(mcpd_call *call, const char *builder) {
  if (call->kind == CALL_READ || call->kind == CALL_COMPLETE)
    return refuse(call, builder);
  return MCPD_OK;
}

static int media(mcpd_call *call, const char *type, const char *data,
                 const char *mime_type) {
  json_object *block;
  if (!call_usable(call) || data == NULL || mime_type == NULL)
    return MCPD_ERROR;
  if (content_only(call, strcmp(type, "image") == 0 ? "result_image"
                                                    : "result_audio") != 0)
    return MCPD_ERROR;
  block = new_block(type);
  json_object_object_add(block, "data", json_object_new_string(data));
  json_object_object_add(block, "mimeType", json_object_new_string(mime_type));
  return add_block(call, block);
}

int result_add_image(mcpd_call *call, const char *data, const char *mime_type) {
  return media(call, "image", data, mime_type);
}

int result_add_audio(mcpd_call *call, const char *data, const char *mime_type) {
  return media(call, "audio", data, mime_type);
}

int result_add_resource_link(mcpd_call *call, const char *uri, const char *name,
                             const char *description, const char *mime_type) {
  json_object *block;
  if (!call_usable(call) || uri == NULL || name == NULL)
    return MCPD_ERROR;
  if (content_only(call, "result_resource_link") != 0)
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
  if (!call_usable(call) || value == NULL)
    return MCPD_ERROR;
  if (call->kind == CALL_READ)
    return read_item(call, uri, mime_type, key, value, strlen(value));
  if (call->kind == CALL_COMPLETE)
    return refuse(call, strcmp(key, "text") == 0 ? "result_resource_text"
                                                 : "result_resource_blob");
  if (uri == NULL)
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

int result_add_resource_text(mcpd_call *call, const char *uri,
                             const char *mime_type, const char *text) {
  return embedded(call, uri, mime_type, "text", text);
}

int result_add_resource_blob(mcpd_call *call, const char *uri,
                             const char *mime_type, const char *blob) {
  return embedded(call, uri, mime_type, "blob", blob);
}

int result_set_structured(mcpd_call *call, json_object *value) {
  if (!call_usable(call)) {
    json_object_put(value);
    return MCPD_ERROR;
  }
  if (call->kind != CALL_TOOL) {
    json_object_put(value);
    return refuse(call, "result_structured");
  }
  if (!json_object_is_type(value, json_type_object)) {
    json_object_put(value);
    call->result.bad_result = 1;
    return MCPD_ERROR;
  }
  json_object_put(call->result.structured);
  call->result.structured = value;
  return MCPD_OK;
}

/* A formatted text block; marks the result an error when asked. */
int result_add_textf(mcpd_call *call, int is_error, const char *fmt,
                     va_list ap) {
  char *text;
  int rc;

  if (!call_usable(call) || fmt == NULL)
    return MCPD_ERROR;
  text = call_vmprintf(fmt, ap);
  if (text == NULL)
    return MCPD_ERROR;
  if (is_error && call->kind != CALL_TOOL) {
    /* Only tool results can carry an error the model reads; elsewhere it
     * is fail(), and like fail() the last one decides. */
    free(call->result.fail_message);
    call->result.fail_code = MCPD_ERR_INTERNAL;
    call->result.fail_message = text;
    return MCPD_OK;
  }
  if (is_error)
    call->result.is_error = 1;
  rc = result_add_text(call, text);
  free(text);
  return rc;
}

int result_set_json(mcpd_call *call, json_object *result) {
  if (!call_usable(call)) {
    json_object_put(result);
    return MCPD_ERROR;
  }
  json_object_put(call->result.replacement);
  call->result.replacement = result;
  return MCPD_OK;
}

int result_set_role(mcpd_call *call, const char *role) {
  if (!call_usable(call))
    return MCPD_ERROR;
  if (call->kind != CALL_PROMPT)
    return refuse(call, "prompt_role");
  if (role != NULL && strcmp(role, "user") == 0)
    call->result.role = "user";
  else if (role != NULL && strcmp(role, "assistant") == 0)
    call->result.role = "assistant";
  else {
    call_set_error("prompt_role: the role must be \"user\" or \"assistant\"");
    return MCPD_ERROR;
  }
  return MCPD_OK;
}

int result_add_completion(mcpd_call *call, const char *value) {
  if (!call_usable(call) || value == NULL)
    return MCPD_ERROR;
  if (call->kind != CALL_COMPLETE)
    return refuse(call, "completion_value");
  /* Only the first COMPLETION_MAX are kept; the rest are counted. */
  if (call->result.n_blocks++ < COMPLETION_MAX) {
    if (call->result.n_blocks > 1)
      strbuf_append(&call->result.content, ",", 1);
    strbuf_json_string(&call->result.content, value, strlen(value));
  }
  return call->result.content.failed ? MCPD_ERROR : MCPD_OK;
}

int result_set_completion_total(mcpd_call *call, size_t total, int has_more) {
  if (!call_usable(call))
    return MCPD_ERROR;
  if (call->kind != CALL_COMPLETE)
    return refuse(call, "completion_total");
  call->result.total = total;
  call->result.has_more = has_more != 0;
  return MCPD_OK;
}

int result_set_fail(mcpd_call *call, int code, const char *fmt, va_list ap) {
  char *text;
  if (!call_usable(call) || fmt == NULL)
    return MCPD_ERROR;
  if (code != MCPD_ERR_NOT_FOUND && code != MCPD_ERR_INVALID_PARAMS &&
      code != MCPD_ERR_INTERNAL) {
    call_set_error("fail: %d is not one of the MCPD_ERR_* codes", code);
    return MCPD_ERROR;
  }
  if ((text = call_vmprintf(fmt, ap)) == NULL)
    return MCPD_ERROR;
  free(call->result.fail_message);
  call->result.fail_code = code;
  call->result.fail_message = text;
  return MCPD_OK;
}

/* --- the call's life, and what a worker answered ---------------------- */

void result_setup(mcpd_call *c) {
  c->result.role = "user";
}

void result_free(mcpd_call *c) {
  strbuf_free(&c->result.content);
  strbuf_free(&c->result.remote_text);
  json_object_put(c->result.structured);
  json_object_put(c->result.replacement);
  free(c->result.fail_message);
  json_object_put(c->result.fail_data);
}

void result_answer(mcpd_call *c, request *r, int status) {
  char err[600];
  strbuf out = {0};

  if (c->result.fail_code != 0) {
    answer_failure(c, r);
  } else if (build_result(c, status, &out, err, sizeof(err)) == 0) {
    request_reply_raw(r, out.data, out.len);
    strbuf_free(&out);
  } else {
    strbuf_free(&out);
    if (!r->cancelled)
      log_warn("plugin \"%s\": %s", c->plugin->name, err);
    request_fail(r, JSONRPC_INTERNAL_ERROR, err, NULL);
  }
}

void result_set_failure(mcpd_call *c, int code, char *message) {
  free(c->result.fail_message);
  c->result.fail_code = code;
  c->result.fail_message = message;
}

void result_from_worker(mcpd_call *c, json_object *result, const char *text,
                        size_t len, json_object *error) {
  call_result *res = &c->result;
  if (error != NULL) {
    json_object *code = NULL, *message = NULL, *data = NULL;
    json_object_object_get_ex(error, "code", &code);
    json_object_object_get_ex(error, "message", &message);
    json_object_object_get_ex(error, "data", &data);
    res->fail_code = json_object_is_type(code, json_type_int)
                         ? json_object_get_int(code)
                         : JSONRPC_INTERNAL_ERROR;
    if (res->fail_code == 0)
      res->fail_code = JSONRPC_INTERNAL_ERROR;
    res->fail_message = strdup(json_object_is_type(message, json_type_string)
                                   ? json_object_get_string(message)
                                   : "the plugin's worker failed");
    res->fail_data = json_object_get(data);
    return;
  }
  res->replacement = json_object_get(result); /* NULL for text alone */
  res->remote_checked = 1;
  /* Checked JSON already: the answer is this text, not the tree
   * serialized again (the tree serves the checks of its shape). */
  if (text != NULL) {
    strbuf_append(&res->remote_text, text, len);
    if (res->remote_text.failed) {
      strbuf_free(&res->remote_text);
      res->fail_code = JSONRPC_INTERNAL_ERROR;
      res->fail_message = strdup("out of memory");
    }
  }
}
