/* SPDX-License-Identifier: MIT */
/* registry.c -- everything mcpd offers, by kind and key, in a stable
 * order. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/linkhash.h>

#include "registry.h"
#include "schema.h"
#include "utf8.h"

int registry_valid_name(const char *name) {
  size_t n = 0;
  if (name == NULL)
    return 0;
  for (; name[n] != '\0'; n++) {
    char c = name[n];
    if (n >= 64)
      return 0;
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
          (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
      return 0;
  }
  return n > 0;
}

int registry_valid_uri(const char *uri) {
  size_t n = 0;
  const char *colon;
  if (uri == NULL || (colon = strchr(uri, ':')) == NULL || colon == uri)
    return 0;
  /* RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
  for (const char *p = uri; p < colon; p++) {
    char c = *p;
    int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (!alpha && (p == uri || !((c >= '0' && c <= '9') || c == '+' ||
                                 c == '-' || c == '.')))
      return 0;
  }
  for (; uri[n] != '\0'; n++)
    if ((unsigned char)uri[n] <= 0x20 || uri[n] == 0x7f || n >= 8192)
      return 0;
  return utf8_valid(uri, n);
}

const char *reg_kind_name(reg_kind kind) {
  static const char *const names[REG_KINDS] = {"tool", "resource",
                                               "resource template", "prompt"};
  return kind < REG_KINDS ? names[kind] : "entry";
}

void reg_element(void *out, size_t out_size, const void *table, size_t size,
                 size_t i) {
  memset(out, 0, out_size);
  memcpy(out, (const char *)table + i * size,
         size < out_size ? size : out_size);
}

int registry_init(registry *r) {
  memset(r, 0, sizeof(*r));
  for (int k = 0; k < REG_KINDS; k++)
    if ((r->tables[k].by_name = lh_kchar_table_new(16, NULL)) == NULL) {
      registry_free(r);
      return -1;
    }
  return 0;
}

void registry_free(registry *r) {
  for (int k = 0; k < REG_KINDS; k++) {
    reg_table *t = &r->tables[k];
    for (size_t i = 0; i < t->count; i++)
      reg_entry_release(t->order[i]);
    free(t->order);
    if (t->by_name)
      lh_table_free(t->by_name);
  }
  memset(r, 0, sizeof(*r));
}

/* Whether every reserved slot of a table entry is NULL. */
static int reserved_clear(void *const *reserved, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (reserved[i] != NULL)
      return 0;
  return 1;
}

#define RESERVED_CLEAR(entry)                                                  \
  reserved_clear((entry).reserved,                                             \
                 sizeof((entry).reserved) / sizeof((entry).reserved[0]))

static reg_entry *entry_new(reg_kind kind, const char *name,
                            struct plugin *owner, void *data, int exec) {
  reg_entry *e = calloc(1, sizeof(*e));
  if (e == NULL || (e->name = strdup(name)) == NULL) {
    free(e);
    return NULL;
  }
  e->kind = kind;
  e->refs = 1;
  e->owner = owner;
  e->data = data;
  e->exec = exec;
  e->listing = json_object_new_object();
  return e;
}

/* Adds an optional string member to a listing. */
static void add_string(json_object *obj, const char *key, const char *value) {
  if (value != NULL)
    json_object_object_add(obj, key, json_object_new_string(value));
}

static int valid_exec(int exec) {
  return exec >= MCPD_EXEC_POOL && exec <= MCPD_EXEC_ASYNC;
}

/* Strings a plugin hands over become JSON text; they must be UTF-8. */
static int text_ok(const char *s) {
  return s == NULL || utf8_valid(s, strlen(s));
}

/* Parses a schema the plugin wrote as JSON text. */
static json_object *parse_schema(const char *text, const char *which, char *err,
                                 size_t errlen) {
  json_tokener *tok = json_tokener_new_ex(64);
  json_object *schema;
  char why[200];

  if (tok == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  schema = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);
  if (schema == NULL || json_tokener_get_error(tok) != json_tokener_success) {
    snprintf(err, errlen, "%s is not valid JSON (%s)", which,
             json_tokener_error_desc(json_tokener_get_error(tok)));
    json_object_put(schema);
    json_tokener_free(tok);
    return NULL;
  }
  json_tokener_free(tok);
  if (schema_check_root(schema, why, sizeof(why)) != 0) {
    snprintf(err, errlen, "%s: %s", which, why);
    json_object_put(schema);
    return NULL;
  }
  return schema;
}

static void add_hint(json_object *annotations, const char *key, int hint) {
  if (hint == MCPD_HINT_TRUE)
    json_object_object_add(annotations, key, json_object_new_boolean(1));
  else if (hint == MCPD_HINT_FALSE)
    json_object_object_add(annotations, key, json_object_new_boolean(0));
}

/* execution.taskSupport, when not the default "forbidden", and the
 * start that is not the default. */
static void add_task_support(json_object *listing, int support, int start) {
  static const char *const names[] = {"forbidden", "optional", "required"};
  json_object *v;

  if (support == MCPD_TASK_FORBIDDEN)
    return;
  v = json_object_new_object();
  json_object_object_add(v, "taskSupport",
                         json_object_new_string(names[support]));
  json_object_object_add(listing, "execution", v);
  if (start == MCPD_TASK_ON_REQUEST) {
    v = json_object_new_object();
    json_object_object_add(v, REG_TASK_START_META,
                           json_object_new_string("on-request"));
    json_object_object_add(listing, "_meta", v);
  }
}

/* What a listing says of its tool's tasks (reg_entry_remote). */
static void read_task_support(reg_entry *e, json_object *item) {
  json_object *v, *w;
  const char *s;

  if (json_object_object_get_ex(item, "execution", &v) &&
      json_object_object_get_ex(v, "taskSupport", &w) &&
      (s = json_object_get_string(w)) != NULL &&
      json_object_is_type(w, json_type_string))
    e->task_support = strcmp(s, "required") == 0   ? MCPD_TASK_REQUIRED
                      : strcmp(s, "optional") == 0 ? MCPD_TASK_OPTIONAL
                                                   : MCPD_TASK_FORBIDDEN;
  if (e->task_support != MCPD_TASK_FORBIDDEN &&
      json_object_object_get_ex(item, "_meta", &v) &&
      json_object_object_get_ex(v, REG_TASK_START_META, &w) &&
      json_object_is_type(w, json_type_string) &&
      strcmp(json_object_get_string(w), "on-request") == 0)
    e->task_start = MCPD_TASK_ON_REQUEST;
}

static int valid_hint(int hint) {
  return hint >= MCPD_HINT_FALSE && hint <= MCPD_HINT_TRUE;
}

reg_tool *reg_tool_new(const mcpd_tool *def, struct plugin *owner, char *err,
                       size_t errlen) {
  reg_tool *t;
  json_object *annotations;

  if (def->name == NULL) {
    snprintf(err, errlen, "a tool has no name");
    return NULL;
  }
  if (!registry_valid_name(def->name)) {
    snprintf(err, errlen,
             "tool name \"%.80s\" is invalid (1-64 characters of "
             "A-Z a-z 0-9 _ . -)",
             def->name);
    return NULL;
  }
  if (def->call == NULL) {
    snprintf(err, errlen, "tool \"%s\" has no callback", def->name);
    return NULL;
  }
  if (def->exec < MCPD_EXEC_POOL || def->exec > MCPD_EXEC_ASYNC) {
    snprintf(err, errlen, "tool \"%s\" has an unknown exec mode %d", def->name,
             def->exec);
    return NULL;
  }
  if (!valid_hint(def->read_only_hint) || !valid_hint(def->destructive_hint) ||
      !valid_hint(def->idempotent_hint) || !valid_hint(def->open_world_hint)) {
    snprintf(err, errlen, "tool \"%s\" has a hint that is not -1, 0 or 1",
             def->name);
    return NULL;
  }
  if (!RESERVED_CLEAR(*def)) {
    snprintf(err, errlen, "tool \"%s\" sets reserved fields", def->name);
    return NULL;
  }
  if (def->task_support < MCPD_TASK_FORBIDDEN ||
      def->task_support > MCPD_TASK_REQUIRED ||
      def->task_start < MCPD_TASK_AT_START ||
      def->task_start > MCPD_TASK_ON_REQUEST) {
    snprintf(err, errlen,
             "tool \"%s\" has an unknown task_support %d or task_start %d",
             def->name, def->task_support, def->task_start);
    return NULL;
  }

  t = entry_new(REG_TOOL, def->name, owner, def->data, def->exec);
  if (t == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  t->cb = def->call;
  t->task_support = def->task_support;
  t->task_start = def->task_support != MCPD_TASK_FORBIDDEN ? def->task_start
                                                           : MCPD_TASK_AT_START;
  {
    char why[300];
    const char *text =
        def->input_schema ? def->input_schema : "{\"type\":\"object\"}";
    t->input_schema = parse_schema(text, "input schema", why, sizeof(why));
    if (t->input_schema == NULL) {
      snprintf(err, errlen, "tool \"%s\": %s", def->name, why);
      goto fail;
    }
    if (def->output_schema) {
      t->output_schema =
          parse_schema(def->output_schema, "output schema", why, sizeof(why));
      if (t->output_schema == NULL) {
        snprintf(err, errlen, "tool \"%s\": %s", def->name, why);
        goto fail;
      }
    }
  }

  json_object_object_add(t->listing, "name", json_object_new_string(t->name));
  if (def->title)
    json_object_object_add(t->listing, "title",
                           json_object_new_string(def->title));
  if (def->description)
    json_object_object_add(t->listing, "description",
                           json_object_new_string(def->description));
  json_object_object_add(t->listing, "inputSchema",
                         json_object_get(t->input_schema));
  if (t->output_schema)
    json_object_object_add(t->listing, "outputSchema",
                           json_object_get(t->output_schema));
  annotations = json_object_new_object();
  if (def->title)
    json_object_object_add(annotations, "title",
                           json_object_new_string(def->title));
  add_hint(annotations, "readOnlyHint", def->read_only_hint);
  add_hint(annotations, "destructiveHint", def->destructive_hint);
  add_hint(annotations, "idempotentHint", def->idempotent_hint);
  add_hint(annotations, "openWorldHint", def->open_world_hint);
  if (json_object_object_length(annotations) > 0)
    json_object_object_add(t->listing, "annotations", annotations);
  else
    json_object_put(annotations);
  add_task_support(t->listing, t->task_support, t->task_start);
  return t;

fail:
  reg_entry_release(t);
  return NULL;
}

reg_entry *reg_resource_new(const mcpd_resource *def, struct plugin *owner,
                            char *err, size_t errlen) {
  reg_entry *e;

  if (def->uri == NULL || def->name == NULL || def->read == NULL) {
    snprintf(err, errlen,
             "resource \"%.200s\" needs a uri, a name and a read callback",
             def->uri    ? def->uri
             : def->name ? def->name
                         : "?");
    return NULL;
  }
  if (!registry_valid_uri(def->uri)) {
    snprintf(err, errlen,
             "resource URI \"%.200s\" is not an absolute URI (scheme:...)",
             def->uri);
    return NULL;
  }
  if (!valid_exec(def->exec) || !RESERVED_CLEAR(*def) || !text_ok(def->name) ||
      !text_ok(def->title) || !text_ok(def->description) ||
      !text_ok(def->mime_type)) {
    snprintf(err, errlen,
             "resource \"%.200s\" has an unknown exec mode, reserved fields "
             "set or text that is not UTF-8",
             def->uri);
    return NULL;
  }
  e = entry_new(REG_RESOURCE, def->uri, owner, def->data, def->exec);
  if (e == NULL || e->listing == NULL ||
      (def->mime_type && (e->mime_type = strdup(def->mime_type)) == NULL)) {
    reg_entry_release(e);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  e->read = def->read;
  e->subscribe = def->subscribe;
  add_string(e->listing, "uri", def->uri);
  add_string(e->listing, "name", def->name);
  add_string(e->listing, "title", def->title);
  add_string(e->listing, "description", def->description);
  add_string(e->listing, "mimeType", def->mime_type);
  return e;
}

reg_entry *reg_template_new(const mcpd_resource_template *def,
                            struct plugin *owner, char *err, size_t errlen) {
  reg_entry *e;
  char why[200];

  if (def->uri_template == NULL || def->name == NULL || def->read == NULL) {
    snprintf(err, errlen,
             "resource template \"%.200s\" needs a uri_template, a name and "
             "a read callback",
             def->uri_template ? def->uri_template
             : def->name       ? def->name
                               : "?");
    return NULL;
  }
  if (!valid_exec(def->exec) || !RESERVED_CLEAR(*def) ||
      !text_ok(def->uri_template) || !text_ok(def->name) ||
      !text_ok(def->title) || !text_ok(def->description) ||
      !text_ok(def->mime_type)) {
    snprintf(err, errlen,
             "resource template \"%.200s\" has an unknown exec mode, reserved "
             "fields set or text that is not UTF-8",
             def->uri_template);
    return NULL;
  }
  e = entry_new(REG_TEMPLATE, def->uri_template, owner, def->data, def->exec);
  if (e == NULL || e->listing == NULL ||
      (def->mime_type && (e->mime_type = strdup(def->mime_type)) == NULL)) {
    reg_entry_release(e);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  e->tpl = uritpl_parse(def->uri_template, why, sizeof(why));
  if (e->tpl == NULL) {
    snprintf(err, errlen, "resource template \"%.200s\": %s", def->uri_template,
             why);
    reg_entry_release(e);
    return NULL;
  }
  e->read = def->read;
  e->complete = def->complete;
  e->subscribe = def->subscribe;
  add_string(e->listing, "uriTemplate", def->uri_template);
  add_string(e->listing, "name", def->name);
  add_string(e->listing, "title", def->title);
  add_string(e->listing, "description", def->description);
  add_string(e->listing, "mimeType", def->mime_type);
  return e;
}

/* Copies a prompt's argument table (elements of the plugin's size) into
 * the entry and its listing. */
static int prompt_arguments(reg_entry *e, const mcpd_prompt *def,
                            size_t arg_size, char *err, size_t errlen) {
  json_object *list;
  size_t n = 0;

  if (def->arguments == NULL)
    return 0;
  for (;; n++) {
    mcpd_prompt_argument a;
    if (n == 1000) {
      snprintf(err, errlen,
               "prompt \"%s\": its argument table has no end sentinel (or "
               "more than 1000 arguments)",
               def->name);
      return -1;
    }
    reg_element(&a, sizeof(a), def->arguments, arg_size, n);
    if (a.name == NULL && a.title == NULL && a.description == NULL)
      break;
    if (a.name == NULL || !text_ok(a.name) || !text_ok(a.title) ||
        !text_ok(a.description)) {
      snprintf(err, errlen,
               "prompt \"%s\": argument %zu has no name or text that is not "
               "UTF-8",
               def->name, n);
      return -1;
    }
    if (!RESERVED_CLEAR(a)) {
      snprintf(err, errlen,
               "prompt \"%s\": argument \"%s\" sets reserved fields", def->name,
               a.name);
      return -1;
    }
  }
  if (n == 0)
    return 0;
  e->arguments = calloc(n, sizeof(*e->arguments));
  e->required = calloc(n, 1);
  list = json_object_new_array_ext((int)n);
  if (e->arguments == NULL || e->required == NULL || list == NULL) {
    json_object_put(list);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  json_object_object_add(e->listing, "arguments", list);
  for (size_t i = 0; i < n; i++) {
    mcpd_prompt_argument a;
    json_object *item = json_object_new_object();
    reg_element(&a, sizeof(a), def->arguments, arg_size, i);
    for (size_t k = 0; k < i; k++)
      if (strcmp(e->arguments[k], a.name) == 0) {
        snprintf(err, errlen, "prompt \"%s\": argument \"%s\" appears twice",
                 def->name, a.name);
        json_object_put(item);
        return -1;
      }
    if ((e->arguments[i] = strdup(a.name)) == NULL) {
      json_object_put(item);
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    e->n_arguments = i + 1;
    e->required[i] = a.required != 0;
    add_string(item, "name", a.name);
    add_string(item, "title", a.title);
    add_string(item, "description", a.description);
    if (a.required)
      json_object_object_add(item, "required", json_object_new_boolean(1));
    json_object_array_add(list, item);
  }
  return 0;
}

reg_entry *reg_prompt_new(const mcpd_prompt *def, size_t arg_size,
                          struct plugin *owner, char *err, size_t errlen) {
  reg_entry *e;

  if (!registry_valid_name(def->name) || def->get == NULL) {
    snprintf(err, errlen,
             "prompt \"%.80s\" needs a valid name (1-64 characters of "
             "A-Z a-z 0-9 _ . -) and a get callback",
             def->name ? def->name : "?");
    return NULL;
  }
  if (!valid_exec(def->exec) || !RESERVED_CLEAR(*def) || !text_ok(def->title) ||
      !text_ok(def->description)) {
    snprintf(err, errlen,
             "prompt \"%s\" has an unknown exec mode, reserved fields set or "
             "text that is not UTF-8",
             def->name);
    return NULL;
  }
  e = entry_new(REG_PROMPT, def->name, owner, def->data, def->exec);
  if (e == NULL || e->listing == NULL ||
      (def->description &&
       (e->description = strdup(def->description)) == NULL)) {
    reg_entry_release(e);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  e->get = def->get;
  e->complete = def->complete;
  add_string(e->listing, "name", def->name);
  add_string(e->listing, "title", def->title);
  add_string(e->listing, "description", def->description);
  if (prompt_arguments(e, def, arg_size, err, errlen) != 0) {
    reg_entry_release(e);
    return NULL;
  }
  return e;
}

reg_entry *reg_entry_ref(reg_entry *e) {
  e->refs++;
  return e;
}

/* A string member of a listing, or NULL.  Text holding a NUL character
 * is refused too: cut at the NUL, it would name another entry. */
static const char *listed(json_object *item, const char *key) {
  json_object *v;
  const char *s;
  if (!json_object_object_get_ex(item, key, &v) ||
      !json_object_is_type(v, json_type_string))
    return NULL;
  s = json_object_get_string(v);
  return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
}

reg_entry *reg_entry_remote(reg_kind kind, json_object *item,
                            struct plugin *owner, char *err, size_t errlen) {
  static const char *const keys[REG_KINDS] = {"name", "uri", "uriTemplate",
                                              "name"};
  const char *key = json_object_is_type(item, json_type_object)
                        ? listed(item, keys[kind])
                        : NULL;
  reg_entry *e;
  json_object *v;

  if (key == NULL || !text_ok(key) ||
      (kind == REG_TOOL || kind == REG_PROMPT ? !registry_valid_name(key)
       : kind == REG_RESOURCE                 ? !registry_valid_uri(key)
                                              : 0)) {
    snprintf(err, errlen, "a %s listed without a valid \"%s\"",
             reg_kind_name(kind), keys[kind]);
    return NULL;
  }
  if ((e = entry_new(kind, key, owner, NULL, MCPD_EXEC_ASYNC)) == NULL ||
      e->listing == NULL)
    goto oom;
  e->remote = 1;
  json_object_put(e->listing);
  e->listing = NULL;
  if (json_object_deep_copy(item, &e->listing, NULL) != 0) {
    e->listing = NULL;
    goto oom;
  }
  switch (kind) {
  case REG_TOOL:
    if (!json_object_object_get_ex(item, "inputSchema", &v) ||
        !json_object_is_type(v, json_type_object)) {
      snprintf(err, errlen, "tool \"%.200s\" listed without an inputSchema",
               key);
      reg_entry_release(e);
      return NULL;
    }
    if (json_object_deep_copy(v, &e->input_schema, NULL) != 0)
      goto oom;
    /* Checked as a plugin's own schema is, which also compiles it: each
     * call's arguments are validated here before they are forwarded. */
    {
      char why[200];
      if (schema_check_root(e->input_schema, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "tool \"%.200s\": input schema: %s", key, why);
        reg_entry_release(e);
        return NULL;
      }
    }
    if (json_object_object_get_ex(item, "outputSchema", &v) &&
        json_object_is_type(v, json_type_object) &&
        json_object_deep_copy(v, &e->output_schema, NULL) != 0)
      goto oom;
    read_task_support(e, item);
    break;
  case REG_RESOURCE:
  case REG_TEMPLATE:
    if (listed(item, "mimeType") != NULL &&
        (e->mime_type = strdup(listed(item, "mimeType"))) == NULL)
      goto oom;
    if (kind == REG_TEMPLATE) {
      char why[200];
      if ((e->tpl = uritpl_parse(key, why, sizeof(why))) == NULL) {
        snprintf(err, errlen, "resource template \"%.200s\": %s", key, why);
        reg_entry_release(e);
        return NULL;
      }
    }
    break;
  case REG_PROMPT: {
    size_t n = 0;
    if (listed(item, "description") != NULL &&
        (e->description = strdup(listed(item, "description"))) == NULL)
      goto oom;
    if (json_object_object_get_ex(item, "arguments", &v) &&
        json_object_is_type(v, json_type_array))
      n = json_object_array_length(v);
    if (n > 0) {
      e->arguments = calloc(n, sizeof(*e->arguments));
      e->required = calloc(n, 1);
      if (e->arguments == NULL || e->required == NULL)
        goto oom;
    }
    for (size_t i = 0; i < n; i++) {
      json_object *a = json_object_array_get_idx(v, i), *req;
      const char *name = listed(a, "name");
      if (name == NULL) {
        snprintf(err, errlen, "prompt \"%.200s\" lists an unnamed argument",
                 key);
        reg_entry_release(e);
        return NULL;
      }
      if ((e->arguments[i] = strdup(name)) == NULL)
        goto oom;
      e->n_arguments = i + 1;
      e->required[i] = json_object_object_get_ex(a, "required", &req) &&
                       json_object_get_boolean(req);
    }
    break;
  }
  default:
    break;
  }
  return e;
oom:
  reg_entry_release(e);
  snprintf(err, errlen, "out of memory");
  return NULL;
}

void reg_entry_release(reg_entry *e) {
  if (e == NULL || --e->refs > 0)
    return;
  json_object_put(e->input_schema);
  json_object_put(e->output_schema);
  json_object_put(e->listing);
  uritpl_free(e->tpl);
  for (size_t i = 0; i < e->n_arguments; i++)
    free(e->arguments[i]);
  free(e->arguments);
  free(e->required);
  free(e->mime_type);
  free(e->description);
  free(e->name);
  free(e);
}

reg_entry *registry_find(registry *r, reg_kind kind, const char *name) {
  void *v;
  if (name != NULL && lh_table_lookup_ex(r->tables[kind].by_name, name, &v))
    return v;
  return NULL;
}

size_t registry_count(registry *r, reg_kind kind) {
  return r->tables[kind].count;
}

reg_entry *registry_at(registry *r, reg_kind kind, size_t i) {
  return i < r->tables[kind].count ? r->tables[kind].order[i] : NULL;
}

int registry_add(registry *r, reg_entry *e) {
  reg_table *t = &r->tables[e->kind];
  size_t pos;
  if (registry_find(r, e->kind, e->name) != NULL)
    return -1;
  if (t->count == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    reg_entry **order = realloc(t->order, cap * sizeof(*order));
    if (order == NULL)
      return -1;
    t->order = order;
    t->cap = cap;
  }
  if (lh_table_insert(t->by_name, e->name, e) != 0)
    return -1;
  pos = t->count;
  /* After every entry of an owner listed no later than this one's. */
  if (r->before != NULL)
    while (pos > 0 && r->before(e->owner, t->order[pos - 1]->owner))
      pos--;
  memmove(t->order + pos + 1, t->order + pos,
          (t->count - pos) * sizeof(*t->order));
  t->order[pos] = e;
  t->count++;
  for (size_t i = pos; i < t->count; i++)
    t->order[i]->index = i;
  r->changed |= REGISTRY_CHANGED(e->kind);
  return 0;
}

void registry_set_order(registry *r, reg_order_fn before) {
  r->before = before;
}

static void compact(reg_table *t) {
  size_t j = 0;
  for (size_t i = 0; i < t->count; i++) {
    if (t->order[i] != NULL) {
      t->order[j] = t->order[i];
      t->order[j]->index = j;
      j++;
    }
  }
  t->count = j;
}

int registry_remove(registry *r, reg_entry *e) {
  reg_table *t = &r->tables[e->kind];
  if (registry_find(r, e->kind, e->name) != e)
    return -1;
  lh_table_delete(t->by_name, e->name);
  t->order[e->index] = NULL;
  compact(t);
  r->changed |= REGISTRY_CHANGED(e->kind);
  reg_entry_release(e);
  return 0;
}

size_t registry_remove_owner(registry *r, struct plugin *owner) {
  size_t removed = 0;
  for (int k = 0; k < REG_KINDS; k++) {
    reg_table *t = &r->tables[k];
    size_t here = 0;
    for (size_t i = 0; i < t->count; i++) {
      reg_entry *e = t->order[i];
      if (e->owner != owner)
        continue;
      lh_table_delete(t->by_name, e->name);
      t->order[i] = NULL;
      reg_entry_release(e);
      here++;
    }
    if (here > 0) {
      compact(t);
      r->changed |= REGISTRY_CHANGED(k);
      removed += here;
    }
  }
  return removed;
}

json_object *registry_list(registry *r, reg_kind kind, size_t offset,
                           size_t limit, size_t *next) {
  reg_table *t = &r->tables[kind];
  size_t end = offset + limit;
  json_object *list;

  if (end > t->count || end < offset)
    end = t->count;
  list = json_object_new_array_ext(end > offset ? (int)(end - offset) : 0);
  for (size_t i = offset; i < end; i++)
    json_object_array_add(list, json_object_get(t->order[i]->listing));
  *next = end < t->count ? end : 0;
  return list;
}

reg_entry *registry_match(registry *r, const char *uri, json_object **vars) {
  reg_table *t = &r->tables[REG_TEMPLATE];
  for (size_t i = 0; i < t->count; i++) {
    *vars = uritpl_match(t->order[i]->tpl, uri);
    if (*vars != NULL)
      return t->order[i];
  }
  return NULL;
}
