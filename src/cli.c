/* SPDX-License-Identifier: MIT */
/* cli.c -- `mcpd --list` and `mcpd --call`. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/linkhash.h>

#include "cli.h"
#include "jsonrpc.h"
#include "log.h"
#include "transport_memory.h"
#include "transport_stdio.h"

#define CLI_INITIALIZE                                                         \
  "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"       \
  "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"                    \
  "\"clientInfo\":{\"name\":\"mcpd-cli\",\"version\":\"" PACKAGE_VERSION       \
  "\"}}}"

/* Sends one request made of `method` and `params` (consumed). */
static void send_request(session *s, json_object *id, const char *method,
                         json_object *params) {
  json_object *req = jsonrpc_notification(method, params);
  const char *line;
  size_t len;

  json_object_object_add(req, "id", id);
  line = jsonrpc_to_string(req, &len);
  session_handle_line(s, line, len);
  json_object_put(req);
}

/* --- --list ------------------------------------------------------------- */

typedef struct listed {
  plugin *plugin;
  json_object *entries; /* [[label, key, description], ...] */
} listed;

/* What --list pages through, as a client would, for each kind. */
static const struct list_kind {
  reg_kind kind;
  const char *method; /* the list method */
  const char *field;  /* its array in the result */
  const char *key;    /* each entry's key */
  const char *label;  /* what --list calls it */
} list_kinds[] = {
    {REG_TOOL, "tools/list", "tools", "name", "tool"},
    {REG_RESOURCE, "resources/list", "resources", "uri", "resource"},
    {REG_TEMPLATE, "resources/templates/list", "resourceTemplates",
     "uriTemplate", "template"},
    {REG_PROMPT, "prompts/list", "prompts", "name", "prompt"},
};

/* Pages through one list and files each entry under the plugin that owns
 * it. */
static void collect(server *srv, session *s, memory_transport *mt,
                    struct lh_table *index, const struct list_kind *lk) {
  json_object *cursor = NULL;
  do {
    json_object *params = json_object_new_object(), *msg, *result, *list;
    json_object *next;
    if (cursor != NULL)
      json_object_object_add(params, "cursor", json_object_get(cursor));
    memory_transport_clear(mt);
    send_request(s, json_object_new_string("list"), lk->method, params);
    json_object_put(cursor);
    cursor = NULL;
    if (mt->n != 1 || (msg = json_tokener_parse(mt->msgs[0])) == NULL)
      break;
    if (!json_object_object_get_ex(msg, "result", &result) ||
        !json_object_object_get_ex(result, lk->field, &list)) {
      json_object_put(msg);
      break;
    }
    if (json_object_object_get_ex(result, "nextCursor", &next))
      cursor = json_object_get(next);
    for (size_t k = 0; k < json_object_array_length(list); k++) {
      json_object *item = json_object_array_get_idx(list, k), *key, *desc;
      reg_entry *e;
      void *v;
      if (!json_object_object_get_ex(item, lk->key, &key))
        continue;
      e = registry_find(&srv->registry, lk->kind, json_object_get_string(key));
      if (e != NULL && lh_table_lookup_ex(index, e->owner, &v)) {
        json_object *row = json_object_new_array();
        json_object_array_add(row, json_object_new_string(lk->label));
        json_object_array_add(row, json_object_get(key));
        json_object_array_add(
            row, json_object_object_get_ex(item, "description", &desc)
                     ? json_object_get(desc)
                     : json_object_new_string(""));
        json_object_array_add(((listed *)v)->entries, row);
      }
    }
    json_object_put(msg);
  } while (cursor != NULL);
}

/* Pages through every list, as a client would, and prints what each
 * plugin offers: one pass over each list, one over the plugins. */
static void print_list(server *srv, session *s, memory_transport *mt, int out) {
  struct lh_table *index = lh_kptr_table_new(64, NULL);
  listed *plugins;
  size_t n = 0, i;

  for (plugin *p = srv->loader.plugins; p; p = p->next)
    n++;
  plugins = calloc(n + 1, sizeof(*plugins));
  if (plugins == NULL || index == NULL) {
    log_error("out of memory");
    free(plugins);
    if (index)
      lh_table_free(index);
    return;
  }
  /* The loader's list is in file order, as the lists are. */
  i = 0;
  for (plugin *p = srv->loader.plugins; p; p = p->next, i++) {
    plugins[i].plugin = p;
    plugins[i].entries = json_object_new_array();
    lh_table_insert(index, p, &plugins[i]);
  }
  for (size_t k = 0; k < sizeof(list_kinds) / sizeof(list_kinds[0]); k++)
    collect(srv, s, mt, index, &list_kinds[k]);

  dprintf(out, "%-20s %-10s %s\n", "PLUGIN", "VERSION", "FILE");
  for (i = 0; i < n; i++) {
    plugin *p = plugins[i].plugin;
    dprintf(out, "%-20s %-10s %s\n", p->name, p->version, p->path);
    for (size_t k = 0; k < json_object_array_length(plugins[i].entries); k++) {
      json_object *row = json_object_array_get_idx(plugins[i].entries, k);
      dprintf(out, "  %-8s %-24s %s\n",
              json_object_get_string(json_object_array_get_idx(row, 0)),
              json_object_get_string(json_object_array_get_idx(row, 1)),
              json_object_get_string(json_object_array_get_idx(row, 2)));
    }
    json_object_put(plugins[i].entries);
  }
  if (n == 0)
    dprintf(out, "(no plugins loaded)\n");
  for (load_failure *f = srv->loader.failures; f; f = f->next)
    dprintf(out, "NOT LOADED %s: %s\n", f->path, f->reason);
  free(plugins);
  lh_table_free(index);
}

int cli_list(server *srv) {
  int out = stdio_take_stdout(), failed;
  memory_transport mt;
  session *s;

  memory_transport_init(&mt, NULL, NULL);
  server_start(srv, 0);
  server_wait_plugins(srv);
  s = server_open_session(srv, memory_transport_write, &mt);
  if (s != NULL) {
    session_handle_line(s, CLI_INITIALIZE, strlen(CLI_INITIALIZE));
    print_list(srv, s, &mt, out >= 0 ? out : 2);
  } else {
    log_error("out of memory");
  }
  /* A plugin that failed to load is an error a script should see. */
  failed = srv->loader.failures != NULL;
  if (out >= 0)
    close(out);
  server_shutdown(srv, "--list done");
  uv_run(srv->loop, UV_RUN_DEFAULT);
  memory_transport_free(&mt);
  return s != NULL && !failed ? 0 : 1;
}

/* --- --call ------------------------------------------------------------- */

typedef struct call_state {
  server *srv;
  int out;
  int status;
  int answered;
} call_state;

/* memory_transport.written: waits for the answer to the request "call". */
static void call_written(void *arg, const char *text, size_t len) {
  call_state *cs = arg;
  json_object *msg = json_tokener_parse(text), *id, *result, *error, *flag;
  (void)len;

  if (msg == NULL || !json_object_object_get_ex(msg, "id", &id) ||
      !json_object_is_type(id, json_type_string) ||
      strcmp(json_object_get_string(id), "call") != 0) {
    json_object_put(msg);
    return;
  }
  cs->answered = 1;
  if (json_object_object_get_ex(msg, "result", &result)) {
    dprintf(cs->out, "%s\n",
            json_object_to_json_string_ext(result,
                                           JSON_C_TO_STRING_PRETTY |
                                               JSON_C_TO_STRING_NOSLASHESCAPE));
    cs->status = json_object_object_get_ex(result, "isError", &flag) &&
                         json_object_get_boolean(flag)
                     ? 1
                     : 0;
  } else if (json_object_object_get_ex(msg, "error", &error)) {
    json_object *m;
    json_object_object_get_ex(error, "message", &m);
    log_error("--call %s", m ? json_object_get_string(m) : "failed");
    cs->status = 1;
  }
  json_object_put(msg);
  server_shutdown(cs->srv, "call answered");
}

int cli_call(server *srv, const char *tool, const char *args) {
  call_state cs = {.srv = srv, .out = stdio_take_stdout(), .status = 1};
  memory_transport mt;
  json_object *arguments, *params;
  session *s;

  memory_transport_init(&mt, call_written, &cs);
  arguments = json_tokener_parse(args ? args : "{}");
  if (arguments == NULL || !json_object_is_type(arguments, json_type_object)) {
    log_error("--args must be a JSON object, e.g. '{\"text\":\"hi\"}'");
    json_object_put(arguments);
    cs.status = 2;
    goto done;
  }
  server_start(srv, 0);
  server_wait_plugins(srv);
  s = server_open_session(srv, memory_transport_write, &mt);
  if (s == NULL) {
    log_error("out of memory");
    json_object_put(arguments);
    goto done;
  }
  session_handle_line(s, CLI_INITIALIZE, strlen(CLI_INITIALIZE));
  params = json_object_new_object();
  json_object_object_add(params, "name", json_object_new_string(tool));
  json_object_object_add(params, "arguments", arguments);
  send_request(s, json_object_new_string("call"), "tools/call", params);
  uv_run(srv->loop, UV_RUN_DEFAULT);
  if (!cs.answered)
    log_error("--call %s: no answer", tool);
done:
  if (!srv->shutting_down) {
    server_shutdown(srv, "--call done");
    uv_run(srv->loop, UV_RUN_DEFAULT);
  }
  memory_transport_free(&mt);
  if (cs.out >= 0)
    close(cs.out);
  return cs.status;
}
