/* SPDX-License-Identifier: MIT */
/* plugin_api.c -- what a plugin does for itself through the host table,
 * outside any call: log lines (to stderr, and rate-limited to the clients
 * that asked), run-time tools, resources and prompts, resource updates,
 * and the roots and subscription callbacks it registered. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/linkhash.h>

#include "loader.h"
#include "log.h"
#include "plugin_api.h"
#include "registry.h"
#include "worker_link.h"

void call_exec_want_logs(call_exec *e, int level) {
  int floor = atomic_load(&e->log_floor);
  while (level < floor &&
         !atomic_compare_exchange_weak(&e->log_floor, &floor, level))
    ;
}

static void log_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  call_exec *e = ev->exec;
  request *r = ev->call ? ev->call->req : NULL;
  /* A call's line goes to its own client while that session is there,
   * even once the call was cancelled (log_cb then sends it unrelated to
   * the request): never to another session. */
  if (e->log_cb != NULL &&
      (ev->call == NULL || (r != NULL && r->session != NULL)))
    e->log_cb(e->arg, ev->value, ev->name, ev->text, r);
  call_event_free(ev);
}

static long long now_ms(void) {
  return (long long)(uv_hrtime() / 1000000);
}

/* Log lines one plugin may send to clients per second; more are dropped
 * and counted, so a chatty plugin cannot flood the client (or the queue
 * ahead of everyone's responses).  stderr gets every line. */
#define LOG_LINES_PER_SECOND 200

/* Whether `p` may send one more line now.  On the first line of a new
 * second, *dropped says how many the last window dropped.  Lock-free and
 * approximate at the window's edge, which is all a rate limit needs. */
static int log_allowed(plugin *p, long *dropped) {
  long long now = now_ms(), start = atomic_load(&p->log_window_ms);

  *dropped = 0;
  if (now - start >= 1000 &&
      atomic_compare_exchange_strong(&p->log_window_ms, &start, now)) {
    atomic_store(&p->log_sent, 0);
    *dropped = atomic_exchange(&p->log_dropped, 0);
  }
  if (atomic_fetch_add(&p->log_sent, 1) < LOG_LINES_PER_SECOND)
    return 1;
  atomic_fetch_add(&p->log_dropped, 1);
  return 0;
}

static void post_log(call_exec *e, mcpd_call *c, int level, const char *logger,
                     char *text);

/* Queues a plugin's log line for the sessions that asked for its level
 * (for the client of call `c` alone, if not NULL); consumes `text`.  The
 * level check here is a hint; sessions check their own level on the
 * loop. */
static void to_clients(plugin *p, mcpd_call *c, int level, char *text) {
  call_exec *e = p->host_data;
  long dropped;

  if (level < atomic_load(&e->log_floor)) {
    free(text);
    return;
  }
  if (!log_allowed(p, &dropped)) {
    free(text);
    return;
  }
  if (dropped > 0) {
    char *note = call_mprintf("%ld log messages dropped: more than %d "
                              "a second",
                              dropped, LOG_LINES_PER_SECOND);
    log_warn("plugin \"%s\": %ld log messages not sent to clients (more "
             "than %d a second)",
             p->name, dropped, LOG_LINES_PER_SECOND);
    if (note != NULL)
      post_log(e, NULL, MCPD_LOG_WARNING, p->name, note);
  }
  post_log(e, c, level, p->name, text);
}

/* Hands one line to the loop for the sessions; consumes `text`.  A line
 * of call `c` is queued while `c` runs, so it is handled before the
 * call's finish, which waits behind it. */
static void post_log(call_exec *e, mcpd_call *c, int level, const char *logger,
                     char *text) {
  call_event *ev = call_event_new(e, log_run);
  if (ev == NULL) {
    free(text);
    return;
  }
  ev->call = c;
  ev->value = level;
  ev->text = text;
  ev->name = strdup(logger);
  if (ev->name == NULL) {
    call_event_free(ev);
    return;
  }
  hostq_post(&e->queue, &ev->base);
}

void plugin_api_log(mcpd_self *self, mcpd_log_level level, const char *fmt,
                    ...) {
  plugin *p = self ? self->plugin : NULL;
  const char *name = p ? p->name : "?";
  log_level local;
  va_list ap;
  char *text;

  va_start(ap, fmt);
  text = call_vmprintf(fmt, ap);
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
  if (p != NULL) {
    /* Only a call of this plugin still running counts: a line logged
     * after complete() may be handled after the call is gone. */
    mcpd_call *c = call_running();
    log_fields f = {name, NULL, NULL, NULL};
    if (c != NULL && (c->plugin != p || atomic_load(&c->completed)))
      c = NULL;
    if (c != NULL) {
      f.tool = c->name;
      f.request = c->log_request;
      f.session = c->log_session[0] != '\0' ? c->log_session : NULL;
    }
    log_fields_msg(local, &f, "%s", text);
    to_clients(p, c, (int)level, text);
  } else {
    log_fields f = {name, NULL, NULL, NULL};
    log_fields_msg(local, &f, "%s", text);
    free(text);
  }
}

static void add_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  char err[400];
  loader_add(ev->plugin, ev->entry, err, sizeof(err));
  plugin_release(ev->plugin);
  call_event_free(ev);
}

static void remove_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  loader_remove(ev->plugin, (reg_kind)ev->kind, ev->name);
  plugin_release(ev->plugin);
  call_event_free(ev);
}

/* Registers a run-time entry built (and so validated) by the caller, or
 * NULL when it was refused with `err`: at once on the loop, else on the
 * loop's next turn. */
static int add_entry(plugin *p, reg_entry *e, const char *what,
                     const char *err) {
  call_exec *x = p->host_data;
  char why[400];
  call_event *ev;

  if (e == NULL) {
    log_error("plugin \"%s\": %s refused: %s", p->name, what, err);
    call_set_error("%s", err);
    return MCPD_ERROR;
  }
  if (hostq_on_loop(&x->queue)) {
    if (loader_add(p, e, why, sizeof(why)) == 0)
      return MCPD_OK;
    call_set_error("%s", why);
    return MCPD_ERROR;
  }
  ev = call_event_new(x, add_run);
  if (ev == NULL) {
    reg_entry_release(e);
    call_set_error("out of memory");
    return MCPD_ERROR;
  }
  plugin_ref(p);
  ev->plugin = p;
  ev->entry = e;
  hostq_post(&x->queue, &ev->base);
  return MCPD_OK;
}

static int remove_entry(mcpd_self *self, reg_kind kind, const char *key) {
  plugin *p = self ? self->plugin : NULL;
  call_exec *x;
  call_event *ev;

  if (p == NULL || key == NULL) {
    call_set_error("remove: self and the key must not be NULL");
    return MCPD_ERROR;
  }
  x = p->host_data;
  if (hostq_on_loop(&x->queue)) {
    if (loader_remove(p, kind, key) == 0)
      return MCPD_OK;
    call_set_error("plugin \"%s\" offers no %s \"%s\"", p->name,
                   reg_kind_name(kind), key);
    return MCPD_ERROR;
  }
  ev = call_event_new(x, remove_run);
  if (ev == NULL || (ev->name = strdup(key)) == NULL) {
    if (ev != NULL)
      call_event_free(ev);
    call_set_error("out of memory");
    return MCPD_ERROR;
  }
  plugin_ref(p);
  ev->plugin = p;
  ev->kind = (int)kind;
  hostq_post(&x->queue, &ev->base);
  return MCPD_OK;
}

static plugin *self_plugin(mcpd_self *self, const void *def, const char *fn) {
  if (self == NULL || self->plugin == NULL || def == NULL) {
    call_set_error("%s: self and the entry must not be NULL", fn);
    return NULL;
  }
  return self->plugin;
}

int plugin_api_add_tool(mcpd_self *self, const mcpd_tool *def) {
  plugin *p = self_plugin(self, def, "add_tool");
  mcpd_tool entry;
  char err[400];
  if (p == NULL)
    return MCPD_ERROR;
  reg_element(&entry, sizeof(entry), def, p->desc->tool_size, 0);
  return add_entry(p, reg_tool_new(&entry, p, err, sizeof(err)), "add_tool",
                   err);
}

int plugin_api_remove_tool(mcpd_self *self, const char *name) {
  return remove_entry(self, REG_TOOL, name);
}

int plugin_api_add_resource(mcpd_self *self, const mcpd_resource *def) {
  plugin *p = self_plugin(self, def, "add_resource");
  mcpd_resource entry;
  char err[400];
  if (p == NULL)
    return MCPD_ERROR;
  reg_element(&entry, sizeof(entry), def, p->desc->resource_size, 0);
  return add_entry(p, reg_resource_new(&entry, p, err, sizeof(err)),
                   "add_resource", err);
}

int plugin_api_remove_resource(mcpd_self *self, const char *uri) {
  return remove_entry(self, REG_RESOURCE, uri);
}

int plugin_api_add_resource_template(mcpd_self *self,
                                     const mcpd_resource_template *def) {
  plugin *p = self_plugin(self, def, "add_resource_template");
  mcpd_resource_template entry;
  char err[400];
  if (p == NULL)
    return MCPD_ERROR;
  reg_element(&entry, sizeof(entry), def, p->desc->resource_template_size, 0);
  return add_entry(p, reg_template_new(&entry, p, err, sizeof(err)),
                   "add_resource_template", err);
}

int plugin_api_remove_resource_template(mcpd_self *self,
                                        const char *uri_template) {
  return remove_entry(self, REG_TEMPLATE, uri_template);
}

int plugin_api_add_prompt(mcpd_self *self, const mcpd_prompt *def) {
  plugin *p = self_plugin(self, def, "add_prompt");
  mcpd_prompt entry;
  char err[400];
  if (p == NULL)
    return MCPD_ERROR;
  reg_element(&entry, sizeof(entry), def, p->desc->prompt_size, 0);
  return add_entry(p,
                   reg_prompt_new(&entry, p->desc->prompt_argument_size, p, err,
                                  sizeof(err)),
                   "add_prompt", err);
}

int plugin_api_remove_prompt(mcpd_self *self, const char *name) {
  return remove_entry(self, REG_PROMPT, name);
}

static void updated_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  plugin *p = ev->plugin;
  /* From here on a new report of the URI queues a new notification. */
  uv_mutex_lock(&p->updates_lock);
  lh_table_delete(p->updates_pending, ev->name);
  uv_mutex_unlock(&p->updates_lock);
  if (ev->exec->updated_cb != NULL)
    ev->exec->updated_cb(ev->exec->arg, ev->name);
  plugin_release(p);
  call_event_free(ev);
}

int plugin_api_resource_updated(mcpd_self *self, const char *uri) {
  plugin *p = self ? self->plugin : NULL;
  call_event *ev;

  if (p == NULL || uri == NULL || !registry_valid_uri(uri)) {
    call_set_error("resource_updated: self must not be NULL and uri must be an "
                   "absolute URI");
    return MCPD_ERROR;
  }
  if (p->updates_pending == NULL) {
    call_set_error("out of memory");
    return MCPD_ERROR;
  }
  /* A change already queued for the URI covers this one too: a plugin
   * reporting in a loop queues one notification per URI, not one per
   * report. */
  uv_mutex_lock(&p->updates_lock);
  if (lh_table_lookup_entry(p->updates_pending, uri) != NULL) {
    uv_mutex_unlock(&p->updates_lock);
    return MCPD_OK;
  }
  ev = call_event_new(p->host_data, updated_run);
  if (ev == NULL || (ev->name = strdup(uri)) == NULL) {
    uv_mutex_unlock(&p->updates_lock);
    if (ev != NULL)
      call_event_free(ev);
    call_set_error("out of memory");
    return MCPD_ERROR;
  }
  {
    char *key = strdup(uri);
    if (key == NULL || lh_table_insert(p->updates_pending, key, NULL) != 0)
      free(key); /* not coalesced, still sent */
  }
  plugin_ref(p);
  ev->plugin = p;
  hostq_post(&ev->exec->queue, &ev->base);
  uv_mutex_unlock(&p->updates_lock);
  return MCPD_OK;
}

int plugin_api_on_roots_changed(mcpd_self *self, void (*cb)(void *arg),
                                void *arg) {
  plugin *p = self ? self->plugin : NULL;
  if (p == NULL) {
    call_set_error("on_roots_changed: self must not be NULL");
    return MCPD_ERROR;
  }
  if (!hostq_on_loop(&((call_exec *)p->host_data)->queue)) {
    call_set_error("on_roots_changed: call it on the loop thread (init(), "
                   "INLINE callbacks)");
    return MCPD_ERROR;
  }
  p->roots_cb = cb;
  p->roots_arg = arg;
  return MCPD_OK;
}

int call_subscribe_settled(reg_entry *e, void (*cb)(void *arg), void *arg) {
  return e->remote ? worker_barrier(e->owner, cb, arg) : -1;
}

void call_subscribe(reg_entry *e, const char *uri, int subscribed) {
  plugin *p = e->owner;
  mcpd_request req;

  if (e->remote) {
    worker_subscribe(p, uri, subscribed);
    return;
  }
  if (e->subscribe == NULL)
    return;
  memset(&req, 0, sizeof(req));
  req.size = sizeof(req);
  req.host = ((call_exec *)p->host_data)->host;
  req.self = &p->self;
  req.state = p->state;
  req.data = e->data;
  req.name = uri;
  if (e->tpl != NULL)
    req.variables = uritpl_match(e->tpl, uri);
  e->subscribe(&req, subscribed);
  json_object_put(req.variables);
}

void call_roots_changed(plugin *p) {
  if (p->isolated) {
    worker_roots_changed(p);
    return;
  }
  if (p->roots_cb != NULL && !p->finalizing)
    p->roots_cb(p->roots_arg);
}
