/* SPDX-License-Identifier: MIT */
/* callbacks.c -- what mcpd runs for a forwarded entry (on its loop thread:
 * every entry is ASYNC): each copies what it was given into a command for
 * the proxy thread and returns; complete() comes from that thread. */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

static void cancelled(void *arg);

/* Copies `v` for the proxy thread; NULL stays NULL.  0 on success. */
static int copy_json(json_object *v, json_object **out) {
  *out = NULL;
  return v == NULL ? 0 : json_object_deep_copy(v, out, NULL);
}

static int post_call(mcpd_call *call, const mcpd_request *req,
                     px_call_kind kind, json_object *args, json_object *extra) {
  px *p = req->state;
  px_cmd *cmd = calloc(1, sizeof(*cmd));
  json_object *token;

  if (cmd == NULL || (cmd->name = strdup(req->name)) == NULL ||
      copy_json(args, &cmd->params) != 0) {
    json_object_put(extra);
    px_cmd_free(cmd);
    return MCPD_ERROR;
  }
  cmd->kind = PX_CMD_CALL;
  cmd->up = req->data;
  cmd->call_kind = kind;
  cmd->call = call;
  cmd->extra = extra;
  if (kind == PX_TOOL) {
    /* `extra` says the client wants progress; the token stays mcpd's. */
    json_object_put(cmd->extra);
    cmd->extra = NULL;
    if (req->meta != NULL &&
        json_object_object_get_ex(req->meta, "progressToken", &token))
      cmd->extra = json_object_new_boolean(1);
  }
  /* The call first: a call already cancelled runs cancelled() inside
   * on_cancel(), and that command must find the call queued before it. */
  px_post(p, cmd);
  p->host->on_cancel(call, cancelled, call);
  return MCPD_OK;
}

/* The live instances of this copy of the plugin (mcpd loads each file
 * from a private copy, so a reload has globals of its own; a second
 * instance here would be a second load of the same copy): a cancellation
 * names only its call, so each instance hears of it and the one whose
 * upstream runs the call acts. */
static pthread_mutex_t instances_lock = PTHREAD_MUTEX_INITIALIZER;
static px *instances;

void px_instance_add(px *p) {
  pthread_mutex_lock(&instances_lock);
  p->next_instance = instances;
  instances = p;
  pthread_mutex_unlock(&instances_lock);
}

void px_instance_remove(px *p) {
  pthread_mutex_lock(&instances_lock);
  for (px **pp = &instances; *pp != NULL; pp = &(*pp)->next_instance)
    if (*pp == p) {
      *pp = p->next_instance;
      break;
    }
  pthread_mutex_unlock(&instances_lock);
}

/* The client cancelled a call (loop thread): the proxy thread tells the
 * upstream. */
static void cancelled(void *arg) {
  pthread_mutex_lock(&instances_lock);
  for (px *p = instances; p != NULL; p = p->next_instance) {
    px_cmd *cmd = calloc(1, sizeof(*cmd));
    if (cmd == NULL)
      break;
    cmd->kind = PX_CMD_CANCEL;
    cmd->call = arg;
    px_post(p, cmd); /* no `up`: every upstream looks for the call */
  }
  pthread_mutex_unlock(&instances_lock);
}

int px_tool_cb(mcpd_call *call, const mcpd_request *req) {
  return post_call(call, req, PX_TOOL, req->arguments, NULL);
}

int px_read_cb(mcpd_call *call, const mcpd_request *req) {
  return post_call(call, req, PX_READ, NULL, NULL);
}

int px_prompt_cb(mcpd_call *call, const mcpd_request *req) {
  return post_call(call, req, PX_PROMPT, req->arguments, NULL);
}

static json_object *argument(const char *name, const char *value) {
  json_object *a = json_object_new_object();
  json_object_object_add(a, "name", json_object_new_string(name));
  json_object_object_add(a, "value", json_object_new_string(value));
  return a;
}

int px_complete_prompt_cb(mcpd_call *call, const mcpd_request *req,
                          const char *arg, const char *value,
                          json_object *context) {
  return post_call(call, req, PX_COMPLETE_PROMPT, context,
                   argument(arg, value));
}

int px_complete_template_cb(mcpd_call *call, const mcpd_request *req,
                            const char *arg, const char *value,
                            json_object *context) {
  return post_call(call, req, PX_COMPLETE_TEMPLATE, context,
                   argument(arg, value));
}

void px_subscribe_cb(const mcpd_request *req, int subscribed) {
  px_cmd *cmd = calloc(1, sizeof(*cmd));
  if (cmd == NULL || (cmd->name = strdup(req->name)) == NULL) {
    free(cmd);
    return;
  }
  cmd->kind = PX_CMD_SUBSCRIBE;
  cmd->up = req->data;
  cmd->flag = subscribed;
  px_post(req->state, cmd);
}
