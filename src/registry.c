/* registry.c -- everything mcpd offers, by name, in a stable order. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/linkhash.h>

#include "registry.h"
#include "schema.h"

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

int registry_init(registry *r) {
  memset(r, 0, sizeof(*r));
  r->by_name = lh_kchar_table_new(64, NULL);
  return r->by_name ? 0 : -1;
}

void registry_free(registry *r) {
  for (size_t i = 0; i < r->count; i++)
    reg_tool_release(r->order[i]);
  free(r->order);
  if (r->by_name)
    lh_table_free(r->by_name);
  memset(r, 0, sizeof(*r));
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
  for (size_t i = 0; i < sizeof(def->reserved) / sizeof(def->reserved[0]); i++)
    if (def->reserved[i] != NULL) {
      snprintf(err, errlen, "tool \"%s\" sets reserved fields", def->name);
      return NULL;
    }

  t = calloc(1, sizeof(*t));
  if (t == NULL || (t->name = strdup(def->name)) == NULL) {
    free(t);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  t->refs = 1;
  t->cb = def->call;
  t->data = def->data;
  t->exec = def->exec;
  t->owner = owner;
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

  t->listing = json_object_new_object();
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
  return t;

fail:
  reg_tool_release(t);
  return NULL;
}

reg_tool *reg_tool_ref(reg_tool *t) {
  t->refs++;
  return t;
}

void reg_tool_release(reg_tool *t) {
  if (t == NULL || --t->refs > 0)
    return;
  json_object_put(t->input_schema);
  json_object_put(t->output_schema);
  json_object_put(t->listing);
  free(t->name);
  free(t);
}

reg_tool *registry_find(registry *r, const char *name) {
  void *v;
  if (lh_table_lookup_ex(r->by_name, name, &v))
    return v;
  return NULL;
}

int registry_add(registry *r, reg_tool *t) {
  if (registry_find(r, t->name) != NULL)
    return -1;
  if (r->count == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 64;
    reg_tool **order = realloc(r->order, cap * sizeof(*order));
    if (order == NULL)
      return -1;
    r->order = order;
    r->cap = cap;
  }
  if (lh_table_insert(r->by_name, t->name, t) != 0)
    return -1;
  t->index = r->count;
  r->order[r->count++] = t;
  r->changed |= REGISTRY_TOOLS;
  return 0;
}

static void compact(registry *r) {
  size_t j = 0;
  for (size_t i = 0; i < r->count; i++) {
    if (r->order[i] != NULL) {
      r->order[j] = r->order[i];
      r->order[j]->index = j;
      j++;
    }
  }
  r->count = j;
}

int registry_remove(registry *r, reg_tool *t) {
  if (registry_find(r, t->name) != t)
    return -1;
  lh_table_delete(r->by_name, t->name);
  r->order[t->index] = NULL;
  compact(r);
  r->changed |= REGISTRY_TOOLS;
  reg_tool_release(t);
  return 0;
}

size_t registry_remove_owner(registry *r, struct plugin *owner) {
  size_t removed = 0;
  for (size_t i = 0; i < r->count; i++) {
    reg_tool *t = r->order[i];
    if (t->owner != owner)
      continue;
    lh_table_delete(r->by_name, t->name);
    r->order[i] = NULL;
    reg_tool_release(t);
    removed++;
  }
  if (removed > 0) {
    compact(r);
    r->changed |= REGISTRY_TOOLS;
  }
  return removed;
}

json_object *registry_list_tools(registry *r, size_t offset, size_t limit,
                                 size_t *next) {
  json_object *tools =
      json_object_new_array_ext((int)(limit < r->count ? limit : r->count));
  size_t end = offset + limit;

  if (end > r->count || end < offset)
    end = r->count;
  for (size_t i = offset; i < end; i++)
    json_object_array_add(tools, json_object_get(r->order[i]->listing));
  *next = end < r->count ? end : 0;
  return tools;
}
