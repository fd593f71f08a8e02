/* SPDX-License-Identifier: MIT */
/* schema.c -- the JSON Schema subset mcpd checks tool arguments against. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

/* Bound on schema nesting walked while validating; schemas come from
 * plugins and are parsed with a depth limit already, this is a backstop. */
#define SCHEMA_MAX_DEPTH 64

/* What validation needs from one schema object, found once at load and
 * attached to it as json-c userdata, so a call costs lookups only for the
 * keywords a schema uses. */
typedef struct schema_node {
  json_object *type;       /* string or array, or NULL */
  json_object *properties; /* object or NULL */
  json_object *required;   /* array or NULL */
  json_object *additional; /* boolean or schema, or NULL */
  json_object *enum_kw;
  json_object *const_kw;
  json_object *items;
  int has_bounds; /* any of minimum ... maxItems */
} schema_node;

static void node_free(json_object *jso, void *userdata) {
  (void)jso;
  free(userdata);
}

static void node_fill(json_object *schema, schema_node *n) {
  static const char *const bounds[] = {
      "minimum",   "maximum",   "exclusiveMinimum", "exclusiveMaximum",
      "minLength", "maxLength", "minItems",         "maxItems"};
  memset(n, 0, sizeof(*n));
  json_object_object_get_ex(schema, "type", &n->type);
  if (json_object_object_get_ex(schema, "properties", &n->properties) &&
      !json_object_is_type(n->properties, json_type_object))
    n->properties = NULL;
  if (json_object_object_get_ex(schema, "required", &n->required) &&
      !json_object_is_type(n->required, json_type_array))
    n->required = NULL;
  json_object_object_get_ex(schema, "additionalProperties", &n->additional);
  if (json_object_object_get_ex(schema, "enum", &n->enum_kw) &&
      !json_object_is_type(n->enum_kw, json_type_array))
    n->enum_kw = NULL;
  json_object_object_get_ex(schema, "const", &n->const_kw);
  if (json_object_object_get_ex(schema, "items", &n->items) &&
      !json_object_is_type(n->items, json_type_object) &&
      !json_object_is_type(n->items, json_type_boolean))
    n->items = NULL;
  for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
    if (json_object_object_get_ex(schema, bounds[i], NULL))
      n->has_bounds = 1;
}

/* The compiled node of an object schema; `tmp` holds one for schemas that
 * were never checked (and so never compiled). */
static const schema_node *node_of(json_object *schema, schema_node *tmp) {
  const schema_node *n = json_object_get_userdata(schema);
  if (n != NULL)
    return n;
  node_fill(schema, tmp);
  return tmp;
}

static void node_attach(json_object *schema) {
  schema_node *n = malloc(sizeof(*n));
  if (n == NULL)
    return; /* validation falls back to looking keywords up */
  node_fill(schema, n);
  json_object_set_userdata(schema, n, node_free);
}

static const char *type_name(json_object *v) {
  switch (json_object_get_type(v)) {
  case json_type_null:
    return "null";
  case json_type_boolean:
    return "a boolean";
  case json_type_int:
    return "an integer";
  case json_type_double:
    return "a number";
  case json_type_string:
    return "a string";
  case json_type_array:
    return "an array";
  case json_type_object:
    return "an object";
  }
  return "a value";
}

static int is_integral(json_object *v) {
  if (json_object_is_type(v, json_type_int))
    return 1;
  if (json_object_is_type(v, json_type_double)) {
    double d = json_object_get_double(v);
    return isfinite(d) && floor(d) == d;
  }
  return 0;
}

/* The first letter picks the one name to compare: this runs for every
 * argument of every call. */
static int matches_type(const char *t, json_object *v) {
  enum json_type jt = json_object_get_type(v);
  switch (t[0]) {
  case 's':
    return strcmp(t, "string") == 0 && jt == json_type_string;
  case 'n':
    if (strcmp(t, "number") == 0)
      return jt == json_type_int || jt == json_type_double;
    return strcmp(t, "null") == 0 && jt == json_type_null;
  case 'i':
    return strcmp(t, "integer") == 0 && is_integral(v);
  case 'b':
    return strcmp(t, "boolean") == 0 && jt == json_type_boolean;
  case 'o':
    return strcmp(t, "object") == 0 && jt == json_type_object;
  case 'a':
    return strcmp(t, "array") == 0 && jt == json_type_array;
  default:
    return 0;
  }
}

static int known_type(const char *t) {
  static const char *const names[] = {"string", "number", "integer", "boolean",
                                      "object", "array",  "null"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(t, names[i]) == 0)
      return 1;
  return 0;
}

/* Deep equality for enum and const. */
static int json_equal(json_object *a, json_object *b) {
  enum json_type ta = json_object_get_type(a), tb = json_object_get_type(b);
  if ((ta == json_type_int || ta == json_type_double) &&
      (tb == json_type_int || tb == json_type_double)) {
    if (ta == json_type_int && tb == json_type_int)
      return json_object_get_int64(a) == json_object_get_int64(b);
    return json_object_get_double(a) == json_object_get_double(b);
  }
  return json_object_equal(a, b);
}

/* "argument 'a.b'" or "the arguments" for the root. */
static void describe(const char *path, char *out, size_t outlen) {
  if (path[0] == '\0')
    snprintf(out, outlen, "the arguments");
  else
    snprintf(out, outlen, "argument '%s'", path);
}

static int fail(char *err, size_t errlen, const char *path, const char *what,
                const char *detail) {
  char who[300];
  describe(path, who, sizeof(who));
  snprintf(err, errlen, "%s: %s%s", who, what, detail ? detail : "");
  return -1;
}

static int validate(json_object *schema, json_object *value, const char *path,
                    int depth, char *err, size_t errlen);

static int check_type(const schema_node *n, json_object *value,
                      const char *path, char *err, size_t errlen) {
  json_object *type = n->type;
  char msg[200];

  if (type == NULL)
    return 0;
  if (json_object_is_type(type, json_type_string)) {
    const char *t = json_object_get_string(type);
    if (matches_type(t, value))
      return 0;
    snprintf(msg, sizeof(msg), "expected %s%s, got %s",
             (t[0] == 'a' || t[0] == 'i' || t[0] == 'o') ? "an " : "a ", t,
             type_name(value));
    return fail(err, errlen, path, msg, NULL);
  }
  if (json_object_is_type(type, json_type_array)) {
    size_t count = json_object_array_length(type);
    for (size_t i = 0; i < count; i++) {
      json_object *t = json_object_array_get_idx(type, i);
      if (json_object_is_type(t, json_type_string) &&
          matches_type(json_object_get_string(t), value))
        return 0;
    }
    snprintf(msg, sizeof(msg), "expected one of %s, got %s",
             json_object_to_json_string_ext(type, JSON_C_TO_STRING_PLAIN),
             type_name(value));
    return fail(err, errlen, path, msg, NULL);
  }
  return 0;
}

/* `a` `b` `c` into `out`, cut to fit as snprintf would cut them: the path
 * of every member is built, and snprintf cost more than the rest of a
 * small tool's argument check (and, at start-up, pages of libc that a
 * quiet server never needs otherwise). */
static void join3(char *out, size_t size, const char *a, const char *b,
                  const char *c) {
  const char *parts[3] = {a, b, c};
  size_t n = 0;

  for (size_t i = 0; i < 3; i++) {
    size_t len = strlen(parts[i]);
    if (len > size - 1 - n)
      len = size - 1 - n;
    memcpy(out + n, parts[i], len);
    n += len;
  }
  out[n] = '\0';
}

/* `path`.`key`, or `key` at the root. */
static void join_path(char *out, size_t size, const char *path,
                      const char *key) {
  join3(out, size, path, path[0] ? "." : "", key);
}

static int check_object(const schema_node *n, json_object *value,
                        const char *path, int depth, char *err, size_t errlen) {
  json_object *props = n->properties, *required = n->required;
  json_object *additional = n->additional;
  char sub[256];

  if (required != NULL) {
    size_t count = json_object_array_length(required);
    for (size_t i = 0; i < count; i++) {
      const char *name =
          json_object_get_string(json_object_array_get_idx(required, i));
      if (name && !json_object_object_get_ex(value, name, NULL)) {
        join_path(sub, sizeof(sub), path, name);
        return fail(err, errlen, sub, "is required but missing", NULL);
      }
    }
  }
  if (props == NULL && additional == NULL)
    return 0;
  json_object_object_foreach(value, key, child) {
    json_object *ps = NULL;
    join_path(sub, sizeof(sub), path, key);
    if (props && json_object_object_get_ex(props, key, &ps)) {
      if (validate(ps, child, sub, depth + 1, err, errlen) != 0)
        return -1;
    } else if (additional) {
      if (json_object_is_type(additional, json_type_boolean)) {
        if (!json_object_get_boolean(additional))
          return fail(err, errlen, sub, "is not an accepted argument", NULL);
      } else if (json_object_is_type(additional, json_type_object)) {
        if (validate(additional, child, sub, depth + 1, err, errlen) != 0)
          return -1;
      }
    }
  }
  return 0;
}

static int get_number(json_object *schema, const char *key, double *out) {
  json_object *v;
  if (!json_object_object_get_ex(schema, key, &v))
    return 0;
  if (!json_object_is_type(v, json_type_int) &&
      !json_object_is_type(v, json_type_double))
    return 0;
  *out = json_object_get_double(v);
  return 1;
}

static int check_bounds(json_object *schema, json_object *value,
                        const char *path, char *err, size_t errlen) {
  char msg[128];
  double bound;

  if (json_object_is_type(value, json_type_int) ||
      json_object_is_type(value, json_type_double)) {
    double d = json_object_get_double(value);
    if (get_number(schema, "minimum", &bound) && d < bound) {
      snprintf(msg, sizeof(msg), "must be >= %g", bound);
      return fail(err, errlen, path, msg, NULL);
    }
    if (get_number(schema, "maximum", &bound) && d > bound) {
      snprintf(msg, sizeof(msg), "must be <= %g", bound);
      return fail(err, errlen, path, msg, NULL);
    }
    if (get_number(schema, "exclusiveMinimum", &bound) && d <= bound) {
      snprintf(msg, sizeof(msg), "must be > %g", bound);
      return fail(err, errlen, path, msg, NULL);
    }
    if (get_number(schema, "exclusiveMaximum", &bound) && d >= bound) {
      snprintf(msg, sizeof(msg), "must be < %g", bound);
      return fail(err, errlen, path, msg, NULL);
    }
  } else if (json_object_is_type(value, json_type_string)) {
    /* Lengths count code points, as JSON Schema says. */
    const unsigned char *s =
        (const unsigned char *)json_object_get_string(value);
    size_t n = (size_t)json_object_get_string_len(value), points = 0;
    for (size_t i = 0; i < n; i++)
      if ((s[i] & 0xC0) != 0x80)
        points++;
    if (get_number(schema, "minLength", &bound) && (double)points < bound) {
      snprintf(msg, sizeof(msg), "must be at least %g characters", bound);
      return fail(err, errlen, path, msg, NULL);
    }
    if (get_number(schema, "maxLength", &bound) && (double)points > bound) {
      snprintf(msg, sizeof(msg), "must be at most %g characters", bound);
      return fail(err, errlen, path, msg, NULL);
    }
  } else if (json_object_is_type(value, json_type_array)) {
    double n = (double)json_object_array_length(value);
    if (get_number(schema, "minItems", &bound) && n < bound) {
      snprintf(msg, sizeof(msg), "must have at least %g items", bound);
      return fail(err, errlen, path, msg, NULL);
    }
    if (get_number(schema, "maxItems", &bound) && n > bound) {
      snprintf(msg, sizeof(msg), "must have at most %g items", bound);
      return fail(err, errlen, path, msg, NULL);
    }
  }
  return 0;
}

static int validate(json_object *schema, json_object *value, const char *path,
                    int depth, char *err, size_t errlen) {
  json_object *kw;
  const schema_node *n;
  schema_node tmp;

  if (depth > SCHEMA_MAX_DEPTH)
    return fail(err, errlen, path, "is nested too deeply", NULL);
  if (json_object_is_type(schema, json_type_boolean)) {
    if (json_object_get_boolean(schema))
      return 0;
    return fail(err, errlen, path, "is not allowed", NULL);
  }
  if (!json_object_is_type(schema, json_type_object))
    return 0;
  n = node_of(schema, &tmp);
  if (check_type(n, value, path, err, errlen) != 0)
    return -1;
  if ((kw = n->const_kw) != NULL && !json_equal(kw, value))
    return fail(err, errlen, path, "must equal ",
                json_object_to_json_string_ext(kw, JSON_C_TO_STRING_PLAIN));
  if ((kw = n->enum_kw) != NULL) {
    size_t count = json_object_array_length(kw), i;
    for (i = 0; i < count; i++)
      if (json_equal(json_object_array_get_idx(kw, i), value))
        break;
    if (i == count)
      return fail(err, errlen, path, "must be one of ",
                  json_object_to_json_string_ext(kw, JSON_C_TO_STRING_PLAIN));
  }
  if (n->has_bounds && check_bounds(schema, value, path, err, errlen) != 0)
    return -1;
  if (json_object_is_type(value, json_type_object))
    return check_object(n, value, path, depth, err, errlen);
  if (json_object_is_type(value, json_type_array) && (kw = n->items) != NULL) {
    size_t count = json_object_array_length(value);
    char sub[256];
    for (size_t i = 0; i < count; i++) {
      snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
      if (validate(kw, json_object_array_get_idx(value, i), sub, depth + 1, err,
                   errlen) != 0)
        return -1;
    }
  }
  return 0;
}

int schema_validate(json_object *schema, json_object *value, char *err,
                    size_t errlen) {
  return validate(schema, value, "", 0, err, errlen);
}

/* Load-time shape checks, recursive over properties and items. */
static int check_shape(json_object *schema, const char *where, int depth,
                       char *err, size_t errlen) {
  json_object *kw;

  if (depth > SCHEMA_MAX_DEPTH) {
    snprintf(err, errlen, "%s: nested too deeply", where);
    return -1;
  }
  if (json_object_is_type(schema, json_type_boolean))
    return 0;
  if (!json_object_is_type(schema, json_type_object)) {
    snprintf(err, errlen, "%s: a schema must be an object", where);
    return -1;
  }
  if (json_object_object_get_ex(schema, "type", &kw)) {
    if (json_object_is_type(kw, json_type_string)) {
      if (!known_type(json_object_get_string(kw))) {
        snprintf(err, errlen, "%s: unknown type \"%s\"", where,
                 json_object_get_string(kw));
        return -1;
      }
    } else if (json_object_is_type(kw, json_type_array)) {
      size_t n = json_object_array_length(kw);
      for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(kw, i);
        if (!json_object_is_type(t, json_type_string) ||
            !known_type(json_object_get_string(t))) {
          snprintf(err, errlen, "%s: \"type\" lists an unknown type", where);
          return -1;
        }
      }
    } else {
      snprintf(err, errlen, "%s: \"type\" must be a string or an array", where);
      return -1;
    }
  }
  if (json_object_object_get_ex(schema, "required", &kw)) {
    size_t n;
    if (!json_object_is_type(kw, json_type_array)) {
      snprintf(err, errlen, "%s: \"required\" must be an array", where);
      return -1;
    }
    n = json_object_array_length(kw);
    for (size_t i = 0; i < n; i++)
      if (!json_object_is_type(json_object_array_get_idx(kw, i),
                               json_type_string)) {
        snprintf(err, errlen, "%s: \"required\" must list strings", where);
        return -1;
      }
  }
  if (json_object_object_get_ex(schema, "enum", &kw) &&
      !json_object_is_type(kw, json_type_array)) {
    snprintf(err, errlen, "%s: \"enum\" must be an array", where);
    return -1;
  }
  if (json_object_object_get_ex(schema, "properties", &kw)) {
    if (!json_object_is_type(kw, json_type_object)) {
      snprintf(err, errlen, "%s: \"properties\" must be an object", where);
      return -1;
    }
    json_object_object_foreach(kw, name, sub) {
      char sub_where[256];
      join3(sub_where, sizeof(sub_where), where, ".", name);
      if (check_shape(sub, sub_where, depth + 1, err, errlen) != 0)
        return -1;
    }
  }
  if (json_object_object_get_ex(schema, "items", &kw)) {
    char sub_where[256];
    join3(sub_where, sizeof(sub_where), where, "[]", "");
    if (check_shape(kw, sub_where, depth + 1, err, errlen) != 0)
      return -1;
  }
  if (json_object_object_get_ex(schema, "additionalProperties", &kw) &&
      !json_object_is_type(kw, json_type_boolean)) {
    if (check_shape(kw, where, depth + 1, err, errlen) != 0)
      return -1;
  }
  node_attach(schema);
  return 0;
}

int schema_check_root(json_object *schema, char *err, size_t errlen) {
  json_object *type;

  if (!json_object_is_type(schema, json_type_object)) {
    snprintf(err, errlen, "schema root must be a JSON object");
    return -1;
  }
  if (!json_object_object_get_ex(schema, "type", &type) ||
      !json_object_is_type(type, json_type_string) ||
      strcmp(json_object_get_string(type), "object") != 0) {
    snprintf(err, errlen, "schema root must have \"type\": \"object\"");
    return -1;
  }
  return check_shape(schema, "schema", 0, err, errlen);
}
