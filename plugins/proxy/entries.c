/* SPDX-License-Identifier: MIT */
/* entries.c -- an upstream's tools, resources, templates and prompts, as
 * mcpd offers them.
 *
 * Each listing replaces the last: what left is removed, what came is
 * added, what changed (its listing's JSON text differs) is removed and
 * added again, so mcpd tells its clients list_changed only when something
 * did change.  Tool and prompt names get the upstream's prefix, and every
 * character a client may refuse becomes '_'; a name that is then too
 * long, or that another entry already took, is skipped with one log line.
 * URIs and templates keep their text: reads are routed by which upstream
 * offered the entry mcpd matched (its `data`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

#define MAX_NAME 64

static const char *const kind_names[PX_KINDS] = {"tool", "resource",
                                                 "resource template", "prompt"};

const char *ent_list_key(px_kind kind) {
  static const char *const keys[PX_KINDS] = {"tools", "resources",
                                             "resourceTemplates", "prompts"};
  return keys[kind];
}

const char *ent_list_method(px_kind kind) {
  static const char *const methods[PX_KINDS] = {"tools/list", "resources/list",
                                                "resources/templates/list",
                                                "prompts/list"};
  return methods[kind];
}

static const char *str(json_object *o, const char *key) {
  json_object *v;
  return json_object_object_get_ex(o, key, &v) &&
                 json_object_is_type(v, json_type_string)
             ? json_object_get_string(v)
             : NULL;
}

static json_object *member(json_object *o, const char *key) {
  json_object *v;
  return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

int ent_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* prefix + name, with what ^[A-Za-z0-9_-]$ refuses made '_'; NULL when
 * it would be longer than 64 characters. */
static char *map_name(const char *prefix, const char *name) {
  size_t lp = strlen(prefix), ln = strlen(name);
  char *out;
  if (ln == 0 || lp + ln > MAX_NAME || (out = malloc(lp + ln + 1)) == NULL)
    return NULL;
  memcpy(out, prefix, lp);
  for (size_t i = 0; i < ln; i++) {
    out[lp + i] = ent_name_char(name[i]) ? name[i] : '_';
  }
  out[lp + ln] = '\0';
  return out;
}

static void entry_free(px_entry *e) {
  free(e->key);
  free(e->upname);
  free(e->text);
}

static void entries_free(px_entries *l) {
  for (size_t i = 0; i < l->n; i++)
    entry_free(&l->v[i]);
  free(l->v);
  *l = (px_entries){0};
}

static px_entry *find(const px_entries *l, const char *key) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i].key, key) == 0)
      return &l->v[i];
  return NULL;
}

const px_entry *ent_find(const px_upstream *u, px_kind kind, const char *key) {
  return key != NULL ? find(&u->entries[kind], key) : NULL;
}

static int push(px_entries *l, px_entry e) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    px_entry *v = realloc(l->v, cap * sizeof(*v));
    if (v == NULL)
      return -1;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = e;
  return 0;
}

static signed char hint(json_object *annotations, const char *key) {
  json_object *v = annotations ? member(annotations, key) : NULL;
  if (v == NULL || !json_object_is_type(v, json_type_boolean))
    return MCPD_HINT_UNSET;
  return json_object_get_boolean(v) ? MCPD_HINT_TRUE : MCPD_HINT_FALSE;
}

static const char *schema_text(json_object *item, const char *key) {
  json_object *v = member(item, key);
  return v != NULL && json_object_is_type(v, json_type_object)
             ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN)
             : NULL;
}

static int caps_has(const px_upstream *u, const char *cap, const char *sub) {
  json_object *c = u->caps ? member(u->caps, cap) : NULL;
  if (c == NULL || !json_object_is_type(c, json_type_object))
    return 0;
  if (sub == NULL)
    return 1;
  c = member(c, sub);
  return c != NULL && json_object_get_boolean(c);
}

static int task_support(json_object *item) {
  json_object *ex = member(item, "execution");
  const char *t = ex ? str(ex, "taskSupport") : NULL;
  if (t != NULL && strcmp(t, "required") == 0)
    return MCPD_TASK_REQUIRED;
  if (t != NULL && strcmp(t, "optional") == 0)
    return MCPD_TASK_OPTIONAL;
  return MCPD_TASK_FORBIDDEN;
}

static int add_tool(px_upstream *u, const px_entry *e, json_object *item) {
  const mcpd_host *host = u->px->host;
  json_object *ann = member(item, "annotations");
  mcpd_tool t = {0};

  if (ann != NULL && !json_object_is_type(ann, json_type_object))
    ann = NULL;
  t.name = e->key;
  t.title = str(item, "title");
  if (t.title == NULL && ann != NULL)
    t.title = str(ann, "title");
  t.description = str(item, "description");
  t.input_schema = schema_text(item, "inputSchema");
  t.output_schema = schema_text(item, "outputSchema");
  t.call = px_tool_cb;
  t.exec = MCPD_EXEC_ASYNC;
  t.read_only_hint = hint(ann, "readOnlyHint");
  t.destructive_hint = hint(ann, "destructiveHint");
  t.idempotent_hint = hint(ann, "idempotentHint");
  t.open_world_hint = hint(ann, "openWorldHint");
  t.task_support = e->task_support;
  t.data = u;
  return host->add_tool(u->px->self, &t);
}

static int add_resource(px_upstream *u, const px_entry *e, json_object *item) {
  mcpd_resource r = {0};
  r.uri = e->key;
  r.name = str(item, "name") ? str(item, "name") : e->key;
  r.title = str(item, "title");
  r.description = str(item, "description");
  r.mime_type = str(item, "mimeType");
  r.read = px_read_cb;
  if (caps_has(u, "resources", "subscribe"))
    r.subscribe = px_subscribe_cb;
  r.exec = MCPD_EXEC_ASYNC;
  r.data = u;
  return u->px->host->add_resource(u->px->self, &r);
}

static int add_template(px_upstream *u, const px_entry *e, json_object *item) {
  mcpd_resource_template r = {0};
  r.uri_template = e->key;
  r.name = str(item, "name") ? str(item, "name") : e->key;
  r.title = str(item, "title");
  r.description = str(item, "description");
  r.mime_type = str(item, "mimeType");
  r.read = px_read_cb;
  if (caps_has(u, "completions", NULL))
    r.complete = px_complete_template_cb;
  if (caps_has(u, "resources", "subscribe"))
    r.subscribe = px_subscribe_cb;
  r.exec = MCPD_EXEC_ASYNC;
  r.data = u;
  return u->px->host->add_resource_template(u->px->self, &r);
}

static int add_prompt(px_upstream *u, const px_entry *e, json_object *item) {
  json_object *args = member(item, "arguments");
  size_t n = args != NULL && json_object_is_type(args, json_type_array)
                 ? json_object_array_length(args)
                 : 0;
  mcpd_prompt_argument *a = calloc(n + 1, sizeof(*a));
  mcpd_prompt p = {0};
  size_t k = 0;
  int rc;

  if (a == NULL)
    return MCPD_ERROR;
  for (size_t i = 0; i < n; i++) {
    json_object *arg = json_object_array_get_idx(args, i);
    json_object *req;
    if (!json_object_is_type(arg, json_type_object) || !str(arg, "name"))
      continue;
    a[k].name = str(arg, "name");
    a[k].title = str(arg, "title");
    a[k].description = str(arg, "description");
    a[k].required =
        (req = member(arg, "required")) != NULL && json_object_get_boolean(req);
    k++;
  }
  p.name = e->key;
  p.title = str(item, "title");
  p.description = str(item, "description");
  p.arguments = a;
  p.get = px_prompt_cb;
  if (caps_has(u, "completions", NULL))
    p.complete = px_complete_prompt_cb;
  p.exec = MCPD_EXEC_ASYNC;
  p.data = u;
  rc = u->px->host->add_prompt(u->px->self, &p);
  free(a);
  return rc;
}

static int add(px_upstream *u, px_kind kind, const px_entry *e) {
  switch (kind) {
  case PX_TOOLS:
    return add_tool(u, e, e->item);
  case PX_RESOURCES:
    return add_resource(u, e, e->item);
  case PX_TEMPLATES:
    return add_template(u, e, e->item);
  case PX_PROMPTS:
    return add_prompt(u, e, e->item);
  default:
    return MCPD_ERROR;
  }
}

static void remove_entry(px_upstream *u, px_kind kind, const px_entry *e) {
  const mcpd_host *host = u->px->host;
  mcpd_self *self = u->px->self;
  if (!e->added)
    return;
  switch (kind) {
  case PX_TOOLS:
    host->remove_tool(self, e->key);
    break;
  case PX_RESOURCES:
    host->remove_resource(self, e->key);
    break;
  case PX_TEMPLATES:
    host->remove_resource_template(self, e->key);
    break;
  case PX_PROMPTS:
    host->remove_prompt(self, e->key);
    break;
  default:
    break;
  }
}

static void skipped(px_upstream *u, px_kind kind, const char *name,
                    const char *why) {
  u->px->host->log(u->px->self, MCPD_LOG_WARNING, "%s: %s \"%s\" skipped: %s",
                   u->name, kind_names[kind], name, why);
}

/* The entries a listing names, not yet registered. */
static void parse_listing(px_upstream *u, px_kind kind, json_object *items,
                          px_entries *out) {
  static const char *const name_keys[PX_KINDS] = {"name", "uri", "uriTemplate",
                                                  "name"};
  size_t n = json_object_array_length(items);
  for (size_t i = 0; i < n; i++) {
    json_object *item = json_object_array_get_idx(items, i);
    const char *upname;
    px_entry e = {0};

    if (!json_object_is_type(item, json_type_object))
      continue;
    if ((upname = str(item, name_keys[kind])) == NULL || *upname == '\0') {
      skipped(u, kind, "?", "it has no name");
      continue;
    }
    if (kind == PX_TOOLS || kind == PX_PROMPTS) {
      if ((e.key = map_name(u->prefix, upname)) == NULL) {
        skipped(u, kind, upname,
                "with its prefix, the name is longer than 64 characters");
        continue;
      }
    } else if ((e.key = strdup(upname)) == NULL) {
      continue;
    }
    if (find(out, e.key) != NULL) {
      skipped(u, kind, upname,
              "another entry of this server maps to the "
              "same name");
      free(e.key);
      continue;
    }
    e.upname = strdup(upname);
    e.text =
        strdup(json_object_to_json_string_ext(item, JSON_C_TO_STRING_PLAIN));
    e.task_support = kind == PX_TOOLS ? task_support(item) : 0;
    e.item = item;
    if (e.upname == NULL || e.text == NULL || push(out, e) != 0)
      entry_free(&e);
  }
}

/* The other server of this instance that holds `key` in mcpd, or NULL.
 * mcpd would refuse the second add on its loop, after add_*() returned:
 * the proxy must not believe it holds the entry (its restart would then
 * remove the first server's). */
static const char *held_by(const px_upstream *u, px_kind kind,
                           const char *key) {
  for (size_t i = 0; i < u->px->n_ups; i++) {
    const px_upstream *o = u->px->ups[i];
    const px_entry *e;
    if (o != u && (e = find(&o->entries[kind], key)) != NULL && e->added)
      return o->name;
  }
  return NULL;
}

void ent_apply(px_upstream *u, px_kind kind, json_object *items) {
  px_entries fresh = {0}, *old = &u->entries[kind];
  char *kept;

  if (items != NULL && json_object_is_type(items, json_type_array))
    parse_listing(u, kind, items, &fresh);
  if ((kept = calloc(fresh.n + 1, 1)) == NULL) {
    entries_free(&fresh);
    return;
  }
  for (size_t i = 0; i < old->n; i++) {
    px_entry *now = find(&fresh, old->v[i].key);
    if (now != NULL && strcmp(now->text, old->v[i].text) == 0) {
      now->added = old->v[i].added;
      kept[now - fresh.v] = 1;
    } else {
      remove_entry(u, kind, &old->v[i]);
    }
  }
  for (size_t i = 0; i < fresh.n; i++) {
    const char *other;
    if (kept[i])
      continue;
    if ((other = held_by(u, kind, fresh.v[i].key)) != NULL) {
      char why[200];
      snprintf(why, sizeof(why), "server \"%s\" offers it already", other);
      skipped(u, kind, fresh.v[i].upname, why);
      fresh.v[i].added = 0;
      continue;
    }
    fresh.v[i].added = add(u, kind, &fresh.v[i]) == MCPD_OK;
    if (!fresh.v[i].added)
      skipped(u, kind, fresh.v[i].upname, u->px->host->last_error());
  }
  for (size_t i = 0; i < fresh.n; i++)
    fresh.v[i].item = NULL; /* `items` is the caller's */
  free(kept);
  entries_free(old);
  *old = fresh;
}

void ent_clear(px_upstream *u) {
  for (int k = 0; k < PX_KINDS; k++)
    for (size_t i = 0; i < u->entries[k].n; i++)
      remove_entry(u, (px_kind)k, &u->entries[k].v[i]);
  ent_forget(u);
}

void ent_forget(px_upstream *u) {
  for (int k = 0; k < PX_KINDS; k++)
    entries_free(&u->entries[k]);
}
