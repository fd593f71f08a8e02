/* jsonrpc.c -- JSON-RPC 2.0 parsing, classification and replies. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <json-c/json_visit.h>

#include "jsonrpc.h"

const char *jsonrpc_strerror(int code) {
  switch (code) {
#define JSONRPC_CASE(name, value, text)                                        \
  case value:                                                                  \
    return text;
    JSONRPC_ERRORS(JSONRPC_CASE)
#undef JSONRPC_CASE
  default:
    return "Server error";
  }
}

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing past
 * U+10FFFF.  json-c's own check lets overlong forms through. */
static int utf8_valid(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c;
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    /* ASCII eight bytes at a time: most messages are all ASCII. */
    while (n - i >= 8) {
      uint64_t w;
      memcpy(&w, s + i, 8);
      if (w & 0x8080808080808080ull)
        break;
      i += 8;
    }
    if (i >= n)
      break;
    c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF)
      need = 1;
    else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0)
        lo = 0xA0; /* overlong */
      else if (c == 0xED)
        hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0)
        lo = 0x90; /* overlong */
      else if (c == 0xF4)
        hi = 0x8F; /* past U+10FFFF */
    } else
      return 0;
    if (n - i <= need)
      return 0;
    if (s[i + 1] < lo || s[i + 1] > hi)
      return 0;
    for (size_t k = 2; k <= need; k++)
      if ((s[i + k] & 0xC0) != 0x80)
        return 0;
    i += need + 1;
  }
  return 1;
}

/* Whether the text could hold a non-finite number: json-c's strict mode
 * only lets NaN, Infinity and overflowing literals through, and those need
 * an 'N', an 'I', an exponent or a very long run of digits.  A false
 * positive only costs the full check. */
static int digit_before(const char *s, const char *p) {
  return p > s && p[-1] >= '0' && p[-1] <= '9';
}

static int may_hold_nonfinite(const char *s, size_t n) {
  const char *end = s + n, *p;
  if (memchr(s, 'N', n) != NULL || memchr(s, 'I', n) != NULL)
    return 1;
  /* An exponent is a digit followed by e or E. */
  for (p = s; (p = memchr(p, 'e', (size_t)(end - p))) != NULL; p++)
    if (digit_before(s, p))
      return 1;
  for (p = s; (p = memchr(p, 'E', (size_t)(end - p))) != NULL; p++)
    if (digit_before(s, p))
      return 1;
  /* Without one, overflowing to infinity takes 309 digits before a '.'. */
  for (p = s; (p = memchr(p, '.', (size_t)(end - p))) != NULL; p++) {
    const char *q = p;
    while (q > s && q[-1] >= '0' && q[-1] <= '9')
      q--;
    if (p - q >= 300)
      return 1;
  }
  return 0;
}

int jsonrpc_parse(json_tokener *tok, const char *line, size_t len,
                  json_object **out, const char **why) {
  json_object *obj;
  enum json_tokener_error err;
  int finished_early = 0;

  *out = NULL;
  if (memchr(line, '\0', len) != NULL) {
    *why = "message contains a NUL byte";
    return JSONRPC_PARSE_ERROR;
  }
  if (!utf8_valid((const unsigned char *)line, len)) {
    *why = "message is not valid UTF-8";
    return JSONRPC_PARSE_ERROR;
  }
  if (len > INT32_MAX) {
    *why = "message too large to parse";
    return JSONRPC_PARSE_ERROR;
  }
  json_tokener_reset(tok);
  obj = json_tokener_parse_ex(tok, line, (int)len);
  err = json_tokener_get_error(tok);
  if (err == json_tokener_continue && obj == NULL) {
    /* A bare number or literal may still be waiting for a delimiter: end
     * the input explicitly. */
    obj = json_tokener_parse_ex(tok, "", 1);
    err = json_tokener_get_error(tok);
    finished_early = 1;
  }
  if (err == json_tokener_continue) {
    /* The line ended inside a value: truncated JSON. */
    json_object_put(obj);
    *why = "unexpected end of JSON input";
    return JSONRPC_PARSE_ERROR;
  }
  if (err != json_tokener_success) {
    json_object_put(obj);
    *why = json_tokener_error_desc(err);
    return JSONRPC_PARSE_ERROR;
  }
  if (may_hold_nonfinite(line, len) && !jsonrpc_all_finite(obj)) {
    json_object_put(obj);
    *why = "numbers must be finite (no NaN, Infinity or out-of-range "
           "values)";
    return JSONRPC_PARSE_ERROR;
  }
  /* Only whitespace may follow the value. */
  for (size_t i = finished_early ? len : json_tokener_get_parse_end(tok);
       i < len; i++) {
    char c = line[i];
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      json_object_put(obj);
      *why = "unexpected data after the JSON value";
      return JSONRPC_PARSE_ERROR;
    }
  }
  *out = obj;
  return 0;
}

static int finite_cb(json_object *value, int flags, json_object *parent,
                     const char *key, size_t *index, void *arg) {
  (void)flags;
  (void)parent;
  (void)key;
  (void)index;
  (void)arg;
  if (json_object_is_type(value, json_type_double) &&
      !isfinite(json_object_get_double(value)))
    return JSON_C_VISIT_RETURN_ERROR;
  return JSON_C_VISIT_RETURN_CONTINUE;
}

int jsonrpc_all_finite(json_object *value) {
  return value == NULL || json_c_visit(value, 0, finite_cb, NULL) == 0;
}

int jsonrpc_valid_id(json_object *id) {
  int64_t v;
  if (id == NULL)
    return 0;
  if (json_object_is_type(id, json_type_string))
    return 1;
  /* json-c keeps 12 and 12.0 apart: only a literal integer is an id. */
  if (!json_object_is_type(id, json_type_int))
    return 0;
  /* Beyond 64 bits json-c clamps silently; answering with the clamped
   * value would give the client an id it never sent. */
  v = json_object_get_int64(id);
  return v != INT64_MAX && v != INT64_MIN;
}

void jsonrpc_classify(json_object *msg, jsonrpc_msg *out) {
  json_object *version = NULL, *id = NULL, *method = NULL, *params = NULL;
  int has_version = 0, has_id = 0, has_method = 0, has_params = 0;
  int has_result = 0, has_error = 0;

  memset(out, 0, sizeof(*out));
  out->kind = JSONRPC_KIND_INVALID;
  if (!json_object_is_type(msg, json_type_object)) {
    out->error = "message is not a JSON object";
    return;
  }
  /* One pass over the members is cheaper than a hash lookup per name. */
  json_object_object_foreach(msg, key, val) {
    switch (key[0]) {
    case 'j':
      if (strcmp(key, "jsonrpc") == 0)
        has_version = 1, version = val;
      break;
    case 'i':
      if (strcmp(key, "id") == 0)
        has_id = 1, id = val;
      break;
    case 'm':
      if (strcmp(key, "method") == 0)
        has_method = 1, method = val;
      break;
    case 'p':
      if (strcmp(key, "params") == 0)
        has_params = 1, params = val;
      break;
    case 'r':
      if (strcmp(key, "result") == 0)
        has_result = 1;
      break;
    case 'e':
      if (strcmp(key, "error") == 0)
        has_error = 1;
      break;
    default:
      break;
    }
  }
  if (has_id && jsonrpc_valid_id(id))
    out->id = id;
  if (!has_version || !json_object_is_type(version, json_type_string) ||
      strcmp(json_object_get_string(version), "2.0") != 0) {
    out->error = "\"jsonrpc\" must be \"2.0\"";
    return;
  }
  if (has_id && !jsonrpc_valid_id(id)) {
    out->error = "\"id\" must be a string or an integer";
    return;
  }
  if (has_method) {
    if (!json_object_is_type(method, json_type_string)) {
      out->error = "\"method\" must be a string";
      return;
    }
    if (has_result || has_error) {
      out->error = "a request cannot carry \"result\" or \"error\"";
      return;
    }
    if (has_params && !json_object_is_type(params, json_type_object) &&
        !json_object_is_type(params, json_type_array)) {
      out->error = "\"params\" must be an object or an array";
      return;
    }
    out->method = json_object_get_string(method);
    out->params = params;
    out->kind = has_id ? JSONRPC_KIND_REQUEST : JSONRPC_KIND_NOTIFICATION;
    return;
  }
  if (has_id && (has_result != has_error)) {
    out->kind = JSONRPC_KIND_RESPONSE;
    return;
  }
  out->error = has_id ? "a response needs exactly one of result or error"
                      : "\"method\" is missing";
}

json_object *jsonrpc_result(json_object *id, json_object *result) {
  json_object *msg = json_object_new_object();
  json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(msg, "id", json_object_get(id));
  json_object_object_add(msg, "result",
                         result ? result : json_object_new_object());
  return msg;
}

json_object *jsonrpc_error(json_object *id, int code, const char *message,
                           json_object *data) {
  json_object *msg = json_object_new_object();
  json_object *err = json_object_new_object();
  json_object_object_add(err, "code", json_object_new_int(code));
  json_object_object_add(
      err, "message",
      json_object_new_string(message ? message : jsonrpc_strerror(code)));
  if (data)
    json_object_object_add(err, "data", data);
  json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(msg, "id", json_object_get(id));
  json_object_object_add(msg, "error", err);
  return msg;
}

json_object *jsonrpc_notification(const char *method, json_object *params) {
  json_object *msg = json_object_new_object();
  json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(msg, "method", json_object_new_string(method));
  if (params)
    json_object_object_add(msg, "params", params);
  return msg;
}

const char *jsonrpc_to_string(json_object *msg, size_t *len) {
  return json_object_to_json_string_length(
      msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
}
