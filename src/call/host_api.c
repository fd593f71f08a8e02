/* SPDX-License-Identifier: MIT */
/* host_api.c -- the top of the call room: the table plugins call
 * (struct mcpd_host), whose call functions resolve the plugin's handle
 * and hold it entered while the module below does the work, and the
 * wiring of the room: which module hears which event of a call. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ask.h"
#include "handles.h"
#include "loader.h"
#include "log.h"
#include "plugin_api.h"
#include "remote.h"
#include "result.h"
#include "schedule.h"

/* What each module of the room is told of a call's life, in order.  The
 * deadline starts before anything can finish the call; a worker's call
 * or a POOL call is taken over before the core runs it inline.  The
 * answer is ask.c's, which leaves ordinary results to result.c. */
static const call_hooks hooks = {
    .setup = {sched_setup, result_setup, ask_setup},
    .start = {sched_start_deadline, remote_start, sched_start_pool},
    .cancel = {ask_cancel, remote_cancel, sched_cancel},
    .end = {ask_end, sched_end},
    .free = {result_free, ask_free_call},
    .answer = ask_answer,
};

int call_exec_init(call_exec *e, uv_loop_t *loop) {
  int rc;
  memset(e, 0, sizeof(*e));
  e->loop = loop;
  atomic_init(&e->log_floor, 8);
  if ((rc = hostq_init(&e->queue, loop)) != 0)
    return rc;
  sched_init(e);
  e->hooks = &hooks;
  e->host = &call_host_api;
  return 0;
}

void call_exec_close(call_exec *e) {
  hostq_close(&e->queue);
  sched_close(e);
}

/* --- what plugins call: handles in, checked, then the work above ------- */

/* Resolves a plugin's call handle with its slot locked, so the call cannot
 * finish meanwhile; a stale or bogus handle is refused with one line. */
static mcpd_call *enter(mcpd_call *h, handle_slot **slot, const char *what) {
  char owner[HANDLES_OWNER_MAX + 1];
  mcpd_call *c = handles_enter((uintptr_t)h, slot, owner);
  if (c == NULL) {
    log_error("plugin \"%s\": %s() on a call that has already finished; "
              "ignored (a plugin bug)",
              owner[0] != '\0' ? owner : "?", what);
    call_set_error("%s: the call has already finished", what);
  }
  return c;
}

#define CALL_OR(h, what, fail)                                                 \
  handle_slot *slot;                                                           \
  mcpd_call *c = enter(h, &slot, what);                                        \
  int rc;                                                                      \
  if (c == NULL) {                                                             \
    fail;                                                                      \
    return MCPD_ERROR;                                                         \
  }

static int host_result_text(mcpd_call *h, const char *text) {
  CALL_OR(h, "result_text", (void)0);
  rc = result_add_text(c, text);
  handles_leave(slot);
  return rc;
}

static int host_result_text_len(mcpd_call *h, const char *text, size_t len) {
  CALL_OR(h, "result_text_len", (void)0);
  rc = result_add_text_len(c, text, len);
  handles_leave(slot);
  return rc;
}

static int host_result_image(mcpd_call *h, const char *data,
                             const char *mime_type) {
  CALL_OR(h, "result_image", (void)0);
  rc = result_add_image(c, data, mime_type);
  handles_leave(slot);
  return rc;
}

static int host_result_audio(mcpd_call *h, const char *data,
                             const char *mime_type) {
  CALL_OR(h, "result_audio", (void)0);
  rc = result_add_audio(c, data, mime_type);
  handles_leave(slot);
  return rc;
}

static int host_result_resource_link(mcpd_call *h, const char *uri,
                                     const char *name, const char *description,
                                     const char *mime_type) {
  CALL_OR(h, "result_resource_link", (void)0);
  rc = result_add_resource_link(c, uri, name, description, mime_type);
  handles_leave(slot);
  return rc;
}

static int host_result_resource_text(mcpd_call *h, const char *uri,
                                     const char *mime_type, const char *text) {
  CALL_OR(h, "result_resource_text", (void)0);
  rc = result_add_resource_text(c, uri, mime_type, text);
  handles_leave(slot);
  return rc;
}

static int host_result_resource_blob(mcpd_call *h, const char *uri,
                                     const char *mime_type, const char *blob) {
  CALL_OR(h, "result_resource_blob", (void)0);
  rc = result_add_resource_blob(c, uri, mime_type, blob);
  handles_leave(slot);
  return rc;
}

static int host_result_structured(mcpd_call *h, json_object *value) {
  CALL_OR(h, "result_structured", json_object_put(value));
  rc = result_set_structured(c, value);
  handles_leave(slot);
  return rc;
}

static int host_result_json(mcpd_call *h, json_object *result) {
  CALL_OR(h, "result_json", json_object_put(result));
  rc = result_set_json(c, result);
  handles_leave(slot);
  return rc;
}

static int host_result_error(mcpd_call *h, const char *fmt, ...) {
  va_list ap;
  CALL_OR(h, "result_error", (void)0);
  va_start(ap, fmt);
  rc = result_add_textf(c, 1, fmt, ap);
  va_end(ap);
  handles_leave(slot);
  return rc;
}

static int host_result_textf(mcpd_call *h, const char *fmt, ...) {
  va_list ap;
  CALL_OR(h, "result_textf", (void)0);
  va_start(ap, fmt);
  rc = result_add_textf(c, 0, fmt, ap);
  va_end(ap);
  handles_leave(slot);
  return rc;
}

static int host_progress(mcpd_call *h, double progress, double total,
                         const char *message) {
  CALL_OR(h, "progress", (void)0);
  rc = ask_progress(c, progress, total, message);
  handles_leave(slot);
  return rc;
}

/* complete() of an ASYNC call: its end is queued behind what it queued
 * before. */
static int host_complete(mcpd_call *h, int status) {
  CALL_OR(h, "complete", (void)0);
  (void)rc;
  if (!call_claim_completion(c)) {
    log_error("plugin \"%s\": complete() refused: the call is not "
              "asynchronous or was already completed",
              c->plugin->name);
    call_set_error("complete: the call is not asynchronous or was already "
                   "completed");
    handles_leave(slot);
    return MCPD_ERROR;
  }
  handles_leave(slot);
  /* Completed: no cancel callback starts from now on.  Wait out one the
   * loop may be running (it may call host functions, so not with the slot
   * locked).  The call cannot go away meanwhile: only the event below
   * finishes it. */
  call_wait_cancel_cb(c);
  if (call_finish_queued(c, status) != 0)
    abort(); /* A lost completion would hang the client forever. */
  return MCPD_OK;
}

/* A finished call reads as cancelled: its work is no longer wanted. */
static int host_cancelled(mcpd_call *h) {
  handle_slot *slot;
  char owner[HANDLES_OWNER_MAX + 1];
  mcpd_call *c = handles_enter((uintptr_t)h, &slot, owner);
  int rc = 1;
  if (c != NULL) {
    rc = atomic_load(&c->cancelled);
    handles_leave(slot);
  }
  return rc;
}

static mcpd_self *host_call_self(mcpd_call *h) {
  handle_slot *slot;
  mcpd_call *c = enter(h, &slot, "call_self");
  mcpd_self *self;
  if (c == NULL)
    return NULL;
  self = &c->plugin->self;
  handles_leave(slot);
  return self;
}

static const char *host_call_tool_name(mcpd_call *h) {
  handle_slot *slot;
  mcpd_call *c = enter(h, &slot, "call_tool_name");
  const char *name;
  if (c == NULL)
    return NULL;
  name = c->name;
  handles_leave(slot);
  return name;
}

static int host_on_cancel(mcpd_call *h, void (*cb)(void *arg), void *arg) {
  int now;
  CALL_OR(h, "on_cancel", (void)0);
  (void)rc;
  now = call_set_cancel_cb(c, cb, arg);
  handles_leave(slot);
  if (now && cb != NULL)
    cb(arg);
  return MCPD_OK;
}

static int host_elicitation_complete(mcpd_call *h, const char *id) {
  CALL_OR(h, "elicitation_complete", (void)0);
  rc = ask_elicitation_complete(c, id);
  handles_leave(slot);
  return rc;
}

static int host_task_status(mcpd_call *h, const char *fmt, ...) {
  va_list ap;
  char *text;
  CALL_OR(h, "task_status", (void)0);
  va_start(ap, fmt);
  text = fmt != NULL ? call_vmprintf(fmt, ap) : NULL;
  va_end(ap);
  if (text == NULL) {
    call_set_error(fmt == NULL ? "task_status: no message" : "out of memory");
    rc = MCPD_ERROR;
  } else {
    rc = ask_task_status(c, text);
  }
  handles_leave(slot);
  free(text);
  return rc;
}

static int host_task_begin(mcpd_call *h) {
  CALL_OR(h, "task_begin", (void)0);
  rc = ask_task_begin(c);
  handles_leave(slot);
  return rc;
}

static json_object *host_call_roots(mcpd_call *h) {
  handle_slot *slot;
  mcpd_call *c = enter(h, &slot, "call_roots");
  json_object *roots;
  if (c == NULL)
    return NULL;
  roots = ask_roots(c);
  handles_leave(slot);
  return roots;
}

static void host_free(void *p) {
  free(p);
}

static int host_client_request_keyed(
    mcpd_call *h, const char *key, const char *method, json_object *params,
    void (*cb)(void *, json_object *, int, const char *), void *arg) {
  CALL_OR(h, "client_request", json_object_put(params));
  rc = ask_client(c, key, method, params, cb, arg);
  handles_leave(slot);
  return rc;
}

static int
host_client_request(mcpd_call *h, const char *method, json_object *params,
                    void (*cb)(void *, json_object *, int, const char *),
                    void *arg) {
  return host_client_request_keyed(h, NULL, method, params, cb, arg);
}

static int host_client_request_wait_keyed(mcpd_call *h, const char *key,
                                          const char *method,
                                          json_object *params,
                                          json_object **result, char **error) {
  ask_waiter w;
  int rc;

  if (result != NULL)
    *result = NULL;
  if (error != NULL)
    *error = NULL;
  if (result == NULL) {
    json_object_put(params);
    call_set_error("client_request_wait: result must not be NULL");
    return MCPD_ERROR;
  }
  {
    handle_slot *slot;
    mcpd_call *c = enter(h, &slot, "client_request_wait");
    int on_loop;
    if (c == NULL) {
      json_object_put(params);
      return MCPD_ERROR;
    }
    on_loop = hostq_on_loop(&c->exec->queue);
    handles_leave(slot);
    if (on_loop) {
      json_object_put(params);
      call_set_error("client_request_wait: it would block the loop thread; use "
                     "client_request() there");
      return MCPD_ERROR;
    }
  }
  ask_waiter_init(&w);
  rc = host_client_request_keyed(h, key, method, params, ask_waiter_reply, &w);
  if (rc == MCPD_OK)
    return ask_waiter_wait(&w, result, error);
  if (error != NULL)
    *error = call_mprintf("%s", call_last_error());
  ask_waiter_done(&w);
  return rc;
}

static int host_client_request_wait(mcpd_call *h, const char *method,
                                    json_object *params, json_object **result,
                                    char **error) {
  return host_client_request_wait_keyed(h, NULL, method, params, result, error);
}

static const char *host_last_error(void) {
  return call_last_error();
}

static int host_prompt_role(mcpd_call *h, const char *role) {
  CALL_OR(h, "prompt_role", (void)0);
  rc = result_set_role(c, role);
  handles_leave(slot);
  return rc;
}

static int host_completion_value(mcpd_call *h, const char *value) {
  CALL_OR(h, "completion_value", (void)0);
  rc = result_add_completion(c, value);
  handles_leave(slot);
  return rc;
}

static int host_completion_total(mcpd_call *h, size_t total, int has_more) {
  CALL_OR(h, "completion_total", (void)0);
  rc = result_set_completion_total(c, total, has_more);
  handles_leave(slot);
  return rc;
}

static int host_fail(mcpd_call *h, int code, const char *fmt, ...) {
  va_list ap;
  CALL_OR(h, "fail", (void)0);
  va_start(ap, fmt);
  rc = result_set_fail(c, code, fmt, ap);
  va_end(ap);
  handles_leave(slot);
  return rc;
}

const struct mcpd_host call_host_api = {
    .size = sizeof(mcpd_host),
    .abi_major = MCPD_ABI_MAJOR,
    .abi_minor = MCPD_ABI_MINOR,
    .mprintf = call_mprintf,
    .free = host_free,
    .log = plugin_api_log,
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
    .add_tool = plugin_api_add_tool,
    .remove_tool = plugin_api_remove_tool,
    .result_textf = host_result_textf,
    .call_tool_name = host_call_tool_name,
    .last_error = host_last_error,
    .on_cancel = host_on_cancel,
    .add_resource = plugin_api_add_resource,
    .remove_resource = plugin_api_remove_resource,
    .add_resource_template = plugin_api_add_resource_template,
    .remove_resource_template = plugin_api_remove_resource_template,
    .add_prompt = plugin_api_add_prompt,
    .remove_prompt = plugin_api_remove_prompt,
    .resource_updated = plugin_api_resource_updated,
    .prompt_role = host_prompt_role,
    .completion_value = host_completion_value,
    .completion_total = host_completion_total,
    .fail = host_fail,
    .client_request = host_client_request,
    .client_request_wait = host_client_request_wait,
    .client_request_keyed = host_client_request_keyed,
    .client_request_wait_keyed = host_client_request_wait_keyed,
    .elicitation_complete = host_elicitation_complete,
    .call_roots = host_call_roots,
    .on_roots_changed = plugin_api_on_roots_changed,
    .task_status = host_task_status,
    .task_begin = host_task_begin,
};
