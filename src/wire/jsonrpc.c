/* SPDX-License-Identifier: MIT */
/* jsonrpc.c -- JSON-RPC 2.0 parsing, classification and replies. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json_visit.h>

#include "jsonrpc.h"
#include "utf8.h"

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

/* Bytes that need no attention inside a string: not a quote, not a
 * backslash, not a control character. */
static const unsigned char plain_in_string[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(0), R16(0), 1,      1,      0,      1,
    1,      1,      1,      1,      1,      1,
    1,      1,      1,      1,      1,      1, /* 0x20: '"' */
    R16(1), R16(1), 1,      1,      1,      1,
    1,      1,      1,      1,      1,      1,
    1,      1,      0,      1,      1,      1, /* 0x50: '\\' */
    R16(1), R16(1), R16(1), R16(1), R16(1), R16(1),
    R16(1), R16(1), R16(1), R16(1),
#undef R16
};

/* Steps over the plain bytes of a string from u[i], four at a time while
 * it can; returns the index of the first byte that is not plain (or n). */
static size_t skip_plain(const unsigned char *u, size_t i, size_t n) {
  while (n - i >= 4 && plain_in_string[u[i]] & plain_in_string[u[i + 1]] &
                           plain_in_string[u[i + 2]] &
                           plain_in_string[u[i + 3]])
    i += 4;
  while (i < n && plain_in_string[u[i]])
    i++;
  return i;
}

static int hex4(const char *s, unsigned *v) {
  unsigned x = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    x <<= 4;
    if (c >= '0' && c <= '9')
      x |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      x |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      x |= (unsigned)(c - 'A' + 10);
    else
      return -1;
  }
  *v = x;
  return 0;
}

/* Whether the integer literal s[0..n) (an optional '-' and digits) fits
 * what json-c keeps exactly: int64, or uint64 for positive values. */
static int integer_fits(const char *s, size_t n) {
  static const char max_u64[] = "18446744073709551615";
  static const char min_i64[] = "9223372036854775808";
  int neg = s[0] == '-';
  const char *limit = neg ? min_i64 : max_u64;
  size_t digits = n - (size_t)neg, lim = strlen(limit);
  if (digits != lim)
    return digits < lim;
  return memcmp(s + neg, limit, lim) <= 0;
}

/* What json-c's strict mode still lets through, checked in one pass:
 * numbers that are not JSON ("1.", "01", "-") and raw control characters
 * inside strings.  It also notes what json-c would not read as JSON
 * means it, for rewrite_text() to fix first: escaped surrogates, paired
 * (json-c 0.16 decodes some of them wrongly) or lone, and integers beyond
 * 64 bits (which json-c clamps).  *rewrite is set for any of these. */
static int scan_text(const char *s, size_t n, int *rewrite, int *nonfinite,
                     const char **why) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  *rewrite = 0;
  *nonfinite = 0;
  while (i < n) {
    char c = s[i];
    if (c == '"') {
      for (i++; i < n && s[i] != '"'; i++) {
        unsigned char b;
        unsigned hi;
        i = skip_plain(u, i, n);
        if (i >= n || s[i] == '"')
          break;
        b = u[i];
        if (b < 0x20) {
          *why = "control character inside a string (escape it)";
          return -1;
        }
        if (b != '\\')
          continue;
        if (++i >= n)
          break;
        if (s[i] != 'u')
          continue;
        if (n - i < 5 || hex4(s + i + 1, &hi) != 0)
          break; /* json-c reports the bad escape */
        i += 4;
        if (hi >= 0xD800 && hi <= 0xDFFF)
          *rewrite = 1;
      }
      i++;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t start = i, int_end;
      if (c == '-')
        i++;
      if (i >= n || s[i] < '0' || s[i] > '9')
        goto bad_number;
      if (s[i] == '0' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9')
        goto bad_number;
      while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
      int_end = i;
      if (i < n && s[i] == '.') {
        if (++i >= n || s[i] < '0' || s[i] > '9')
          goto bad_number;
        while (i < n && s[i] >= '0' && s[i] <= '9')
          i++;
      }
      /* Only an exponent or a very long number can overflow to
       * infinity; then the parsed value is checked. */
      if (int_end - start >= 300)
        *nonfinite |= 1;
      if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        *nonfinite |= 1;
        if (++i < n && (s[i] == '+' || s[i] == '-'))
          i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
          goto bad_number;
        while (i < n && s[i] >= '0' && s[i] <= '9')
          i++;
      }
      if (int_end == i && int_end - start >= 19 &&
          !integer_fits(s + start, int_end - start))
        *rewrite = 1;
    } else {
      /* json-c's strict mode still reads NaN and Infinity, which are
       * no JSON at all. */
      if (c == 'N' || c == 'I')
        *nonfinite |= 2;
      i++;
    }
  }
  return 0;
bad_number:
  *why = "invalid number";
  return -1;
}

/* Copies the number at s[i] to out[*o] and returns where it ends: an
 * optional minus, digits, a fraction and an exponent, as JSON spells a
 * number, so that what follows ("+1" in "18+1", say) is left to json-c
 * to refuse.  An integer beyond 64 bits gets a ".0", so that json-c reads
 * it as the double JavaScript would make of it. */
static size_t copy_number(const char *s, size_t i, size_t n, char *out,
                          size_t *o) {
  size_t start = i, int_end;
  if (s[i] == '-')
    i++;
  while (i < n && s[i] >= '0' && s[i] <= '9')
    i++;
  int_end = i;
  if (i < n && s[i] == '.')
    for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
      ;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    if (++i < n && (s[i] == '+' || s[i] == '-'))
      i++;
    while (i < n && s[i] >= '0' && s[i] <= '9')
      i++;
  }
  memcpy(out + *o, s + start, i - start);
  *o += i - start;
  if (int_end == i && int_end - start >= 19 &&
      !integer_fits(s + start, int_end - start)) {
    memcpy(out + *o, ".0", 2);
    *o += 2;
  }
  return i;
}

/* Writes code point `cp` as UTF-8; returns its length. */
static size_t put_utf8(char *out, unsigned cp) {
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Rewrites, into a new buffer, what scan_text() found json-c would
 * misread: every escaped surrogate pair becomes the UTF-8 bytes it stands
 * for (json-c 0.16 turns a pair whose code point has low 16 bits in
 * D800-DFFF, U+1D800 say, into U+FFFD; raw UTF-8 it keeps as is), a lone
 * surrogate escape becomes U+FFFD (as a decoder replaces what it cannot
 * decode), and an integer beyond 64 bits becomes a double.  Only called
 * on text scan_text() accepted. */
static char *rewrite_text(const char *s, size_t n, size_t *out_len) {
  /* Rewritten escapes only shrink; each ".0" follows an integer of 19
   * characters or more, so there are at most n / 19 + 1 of them.  The
   * bound does not trust scan_text()'s count: on text json-c will refuse
   * (a bad \u escape) the two may disagree on where strings end. */
  char *out = malloc(n + 2 * (n / 19 + 1) + 1);
  size_t o = 0;
  int in_string = 0;

  if (out == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    unsigned hi, lo;
    if (!in_string) {
      if (s[i] == '-' || (s[i] >= '0' && s[i] <= '9')) {
        i = copy_number(s, i, n, out, &o) - 1;
        continue;
      }
      in_string = s[i] == '"';
      out[o++] = s[i];
      continue;
    }
    if (s[i] == '"') {
      in_string = 0;
      out[o++] = s[i];
      continue;
    }
    if (s[i] != '\\' || i + 1 >= n) {
      out[o++] = s[i];
      continue;
    }
    if (s[i + 1] != 'u' || n - i < 6 || hex4(s + i + 2, &hi) != 0 ||
        hi < 0xD800 || hi > 0xDFFF) {
      out[o++] = s[i];
      out[o++] = s[++i];
      continue;
    }
    if (hi <= 0xDBFF && n - i >= 12 && s[i + 6] == '\\' && s[i + 7] == 'u' &&
        hex4(s + i + 8, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
      o += put_utf8(out + o, 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
      i += 11;
    } else {
      o += put_utf8(out + o, 0xFFFD);
      i += 5;
    }
  }
  out[o] = '\0';
  *out_len = o;
  return out;
}

static int parse_value(json_tokener *tok, const char *line, size_t len,
                       json_object **out, const char **why);
static json_object *fast_parse(const char *line, size_t len);

/* --- checking text without building it --------------------------------- */

/* What the short escape \c stands for ('\n' for "\n"), or -1 when `c`
 * starts no short escape; \u escapes are handled apart. */
static int short_escape(int c) {
  switch (c) {
  case '"':
  case '\\':
  case '/':
    return c;
  case 'b':
    return '\b';
  case 'f':
    return '\f';
  case 'n':
    return '\n';
  case 'r':
    return '\r';
  case 't':
    return '\t';
  default:
    return -1;
  }
}

static const char *skip_string(const char *s, const char *end) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 1, n = (size_t)(end - s);
  unsigned v;

  for (;;) {
    i = skip_plain(u, i, n);
    if (i >= n || u[i] < 0x20)
      return NULL;
    if (u[i] == '"')
      return s + i + 1;
    /* A backslash. */
    if (++i >= n)
      return NULL;
    if (s[i] != 'u') {
      if (short_escape(u[i]) < 0)
        return NULL;
      i++;
      continue;
    }
    if (n - i < 5 || hex4(s + i + 1, &v) != 0 || v == 0 ||
        (v >= 0xD800 && v <= 0xDFFF))
      return NULL;
    i += 5;
  }
}

static const char *skip_number(const char *s, const char *end) {
  const char *digits;
  if (s < end && *s == '-')
    s++;
  if (s < end && *s == '0') {
    s++;
  } else {
    for (digits = s; s < end && *s >= '0' && *s <= '9'; s++)
      ;
    if (s == digits || s - digits > 15)
      return NULL;
  }
  if (s < end && *s == '.') {
    for (digits = ++s; s < end && *s >= '0' && *s <= '9'; s++)
      ;
    if (s == digits)
      return NULL;
  }
  if (s < end && (*s == 'e' || *s == 'E'))
    return NULL;
  return s;
}

static const char *skip_literal(const char *s, const char *end,
                                const char *word, size_t n) {
  return (size_t)(end - s) >= n && memcmp(s, word, n) == 0 ? s + n : NULL;
}

const char *jsonrpc_skip_value(const char *s, const char *end, int depth) {
  char close;

  if (s >= end)
    return NULL;
  switch (*s) {
  case '{':
  case '[':
    if (depth >= JSONRPC_MAX_DEPTH)
      return NULL;
    close = *s == '{' ? '}' : ']';
    if (++s < end && *s == close)
      return s + 1;
    for (;;) {
      if (close == '}') {
        const char *key = s;
        /* A key with an escape is left to the parser: readers of the
         * text (jsonrpc_member, the splice of modern results) compare
         * keys byte for byte. */
        if (s >= end || *s != '"' || (s = skip_string(s, end)) == NULL ||
            memchr(key, '\\', (size_t)(s - key)) != NULL || s >= end ||
            *s++ != ':')
          return NULL;
      }
      if ((s = jsonrpc_skip_value(s, end, depth + 1)) == NULL || s >= end)
        return NULL;
      if (*s == close)
        return s + 1;
      if (*s++ != ',')
        return NULL;
    }
  case '"':
    return skip_string(s, end);
  case 't':
    return skip_literal(s, end, "true", 4);
  case 'f':
    return skip_literal(s, end, "false", 5);
  case 'n':
    return skip_literal(s, end, "null", 4);
  default:
    return skip_number(s, end);
  }
}

const char *jsonrpc_member(const char *s, const char *end, const char *key) {
  size_t n = strlen(key);
  const char *found = NULL, *k, *v;

  if (s >= end || *s != '{' || ++s >= end || *s == '}')
    return NULL;
  for (;;) {
    k = s;
    if ((s = skip_string(s, end)) == NULL || s >= end || *s != ':')
      return NULL;
    v = ++s;
    if ((size_t)(s - k) == n + 3 && memcmp(k + 1, key, n) == 0)
      found = v;
    if ((s = jsonrpc_skip_value(s, end, 1)) == NULL || s >= end || *s != ',')
      return found;
    s++;
  }
}

/* jsonrpc_parse() and jsonrpc_parse_unservable() in one: with `keep`,
 * a tree whose numbers overflowed a double is handed back too. */
/* --- messages nested deeper than the tokener reads --------------------
 *
 * json-c stops at JSONRPC_MAX_DEPTH levels.  A message nested deeper is
 * still JSON: it cannot be served, but its id can be read, and it is
 * answered under that id.  This checks the whole text as JSON at any depth
 * (an explicit stack, no recursion) and notes where the top-level
 * "jsonrpc", "id" and "method" values are. */

typedef struct text_span {
  const char *s;
  size_t n;
} text_span;

static const char *skip_ws(const char *s, const char *end) {
  while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
    s++;
  return s;
}

static const char *deep_string(const char *s, const char *end) {
  for (s++; s < end; s++) {
    unsigned char c = (unsigned char)*s;
    unsigned v;
    if (c == '"')
      return s + 1;
    if (c < 0x20)
      return NULL;
    if (c != '\\')
      continue;
    if (++s >= end)
      return NULL;
    if (*s == 'u') {
      if (end - s < 5 || hex4(s + 1, &v) != 0)
        return NULL;
      s += 4;
    } else if (short_escape((unsigned char)*s) < 0) {
      return NULL;
    }
  }
  return NULL;
}

static const char *deep_digits(const char *s, const char *end) {
  const char *d = s;
  while (s < end && *s >= '0' && *s <= '9')
    s++;
  return s == d ? NULL : s;
}

static const char *deep_number(const char *s, const char *end) {
  if (s < end && *s == '-')
    s++;
  if (s < end && *s == '0')
    s++;
  else if ((s = deep_digits(s, end)) == NULL)
    return NULL;
  if (s < end && *s == '.' && (s = deep_digits(s + 1, end)) == NULL)
    return NULL;
  if (s < end && (*s == 'e' || *s == 'E')) {
    if (++s < end && (*s == '+' || *s == '-'))
      s++;
    s = deep_digits(s, end);
  }
  return s;
}

static const char *deep_scalar(const char *s, const char *end) {
  switch (*s) {
  case '"':
    return deep_string(s, end);
  case 't':
    return skip_literal(s, end, "true", 4);
  case 'f':
    return skip_literal(s, end, "false", 5);
  case 'n':
    return skip_literal(s, end, "null", 4);
  default:
    return deep_number(s, end);
  }
}

/* Whether [s, end) is one JSON value, however deep; top[] gets the spans
 * of the top-level object's "jsonrpc", "id" and "method" values. */
static int deep_check(const char *s, const char *end, text_span top[3]) {
  static const char *const keys[3] = {"\"jsonrpc\"", "\"id\"", "\"method\""};
  char *stack = NULL;
  size_t depth = 0, cap = 0;
  const char *key = NULL, *v;
  size_t key_n = 0;
  int ok = 0;

  memset(top, 0, 3 * sizeof(*top));
  s = skip_ws(s, end);
  for (;;) {
    if (s >= end)
      goto out;
    if (*s == '{' || *s == '[') {
      if (depth == cap) {
        char *grown = realloc(stack, cap = cap ? cap * 2 : 1024);
        if (grown == NULL)
          goto out;
        stack = grown;
      }
      stack[depth++] = *s == '{' ? '}' : ']';
      s = skip_ws(s + 1, end);
      if (s < end && *s == stack[depth - 1]) {
        depth--;
        s++;
      } else if (stack[depth - 1] == '}') {
        goto member;
      } else {
        continue;
      }
    } else {
      v = s;
      if ((s = deep_scalar(s, end)) == NULL)
        goto out;
      if (depth == 1 && stack[0] == '}')
        for (int i = 0; i < 3; i++)
          if (key_n == strlen(keys[i]) && memcmp(key, keys[i], key_n) == 0)
            top[i] = (text_span){v, (size_t)(s - v)};
    }
    /* After a value: the end, a comma or a closing bracket. */
    for (;;) {
      s = skip_ws(s, end);
      if (depth == 0) {
        ok = s == end;
        goto out;
      }
      if (s < end && *s == stack[depth - 1]) {
        depth--;
        s++;
        continue;
      }
      break;
    }
    if (s >= end || *s != ',')
      goto out;
    s = skip_ws(s + 1, end);
    if (stack[depth - 1] == ']')
      continue;
  member:
    key = s;
    if (s >= end || *s != '"' || (s = deep_string(s, end)) == NULL)
      goto out;
    key_n = (size_t)(s - key);
    s = skip_ws(s, end);
    if (s >= end || *s != ':')
      goto out;
    s = skip_ws(s + 1, end);
  }
out:
  free(stack);
  return ok;
}

/* A stand-in for a message too deep to build: its top-level "jsonrpc",
 * "id" and "method", enough to refuse it under its id. */
static json_object *deep_stub(const text_span top[3]) {
  static const char *const names[3] = {"jsonrpc", "id", "method"};
  json_object *stub = json_object_new_object();

  for (int i = 0; stub != NULL && i < 3; i++) {
    char *text;
    json_object *v;
    if (top[i].s == NULL || (text = strndup(top[i].s, top[i].n)) == NULL)
      continue;
    v = json_tokener_parse(text);
    free(text);
    if (v != NULL || strncmp(top[i].s, "null", 4) == 0)
      json_object_object_add(stub, names[i], v);
  }
  return stub;
}

static int parse_text(json_tokener *tok, const char *line, size_t len,
                      json_object **out, const char **why, int keep) {
  int rewrite, nonfinite, rc;
  char *copy = NULL;
  const char *orig;
  size_t orig_len;

  *out = NULL;
  if (memchr(line, '\0', len) != NULL) {
    *why = "message contains a NUL byte";
    return JSONRPC_PARSE_ERROR;
  }
  if (!utf8_valid(line, len)) {
    *why = "message is not valid UTF-8";
    return JSONRPC_PARSE_ERROR;
  }
  if (len > INT32_MAX) {
    *why = "message too large to parse";
    return JSONRPC_PARSE_ERROR;
  }
  /* What fast_parse() builds passes scan_text() with neither surrogate
   * pairs nor numbers that could overflow: only strings without control
   * characters or \u escapes, integers of up to 18 digits without a
   * leading zero, and literals.  So the scan is left to the rest. */
  if ((*out = fast_parse(line, len)) != NULL)
    return 0;
  if (scan_text(line, len, &rewrite, &nonfinite, why) != 0)
    return JSONRPC_PARSE_ERROR;
  orig = line;
  orig_len = len;
  if (rewrite) {
    if ((copy = rewrite_text(line, len, &len)) == NULL) {
      *why = "out of memory";
      return JSONRPC_PARSE_ERROR;
    }
    line = copy;
  }
  rc = parse_value(tok, line, len, out, why);
  free(copy);
  if (rc == JSONRPC_PARSE_ERROR &&
      *why == json_tokener_error_desc(json_tokener_error_depth)) {
    text_span top[3];
    if (deep_check(orig, orig + orig_len, top)) {
      *why = "nesting deeper than " JSONRPC_MAX_DEPTH_TEXT " levels";
      if (keep)
        *out = deep_stub(top);
      return JSONRPC_INVALID_REQUEST;
    }
    return rc;
  }
  if (rc == 0 && nonfinite && !jsonrpc_all_finite(*out)) {
    /* A number too large for a double is valid JSON that cannot be
     * served; NaN and Infinity are no JSON. */
    rc = nonfinite & 2 ? JSONRPC_PARSE_ERROR : JSONRPC_INVALID_REQUEST;
    *why = rc == JSONRPC_PARSE_ERROR
               ? "numbers must be finite (no NaN, Infinity or out-of-range "
                 "values)"
               : "a number is beyond the range of a double";
    if (!keep || rc == JSONRPC_PARSE_ERROR) {
      json_object_put(*out);
      *out = NULL;
    }
  }
  return rc;
}

int jsonrpc_parse(json_tokener *tok, const char *line, size_t len,
                  json_object **out, const char **why) {
  return parse_text(tok, line, len, out, why, 0);
}

json_object *jsonrpc_parse_unservable(json_tokener *tok, const char *line,
                                      size_t len) {
  json_object *obj;
  const char *why;
  if (parse_text(tok, line, len, &obj, &why, 1) != JSONRPC_INVALID_REQUEST) {
    json_object_put(obj);
    return NULL;
  }
  return obj;
}

int jsonrpc_unservable_code(json_object *msg, json_object **id) {
  jsonrpc_msg m;

  *id = NULL;
  /* A batch as a whole: its members are looked at one by one. */
  if (json_object_is_type(msg, json_type_array))
    return JSONRPC_INVALID_REQUEST;
  jsonrpc_classify(msg, &m);
  *id = m.id;
  switch (m.kind) {
  case JSONRPC_KIND_NOTIFICATION:
  case JSONRPC_KIND_RESPONSE:
    return 0;
  case JSONRPC_KIND_REQUEST:
    return jsonrpc_all_finite(m.params) ? JSONRPC_INVALID_REQUEST
                                        : JSONRPC_INVALID_PARAMS;
  default:
    return JSONRPC_INVALID_REQUEST;
  }
}

/* --- the common message without json-c's tokener -----------------------
 *
 * json-c 0.16's json_tokener_parse_ex() duplicates and builds a locale on
 * every call (about 2000 instructions) before it walks its state machine
 * byte by byte.  Most messages are objects and arrays of strings with at
 * most the short escapes, integers of up to 18 digits, and literals: those
 * are built here with the constructors the tokener calls, in its order
 * (json_object_object_add per member, json_object_array_shrink at each
 * ']'), so the tree is the one json-c would build.  Anything else -- a
 * fraction or exponent, a longer integer, a \u escape, nesting deeper than
 * FAST_MAX_DEPTH, or text that is not valid JSON -- makes fast_parse()
 * give up, and the text is scanned and parsed by the tokener as before,
 * errors and all.  Text reaching it is valid UTF-8 without a NUL byte. */

/* Well below the depth of the tokeners jsonrpc_parse() is given
 * (JSONRPC_MAX_DEPTH), so the tokener reports every depth error. */
#define FAST_MAX_DEPTH 32

typedef struct fast_text {
  const char *s, *end;
  char buf[256]; /* an escaped string value, when it fits */
} fast_text;

static void fast_ws(fast_text *t) {
  while (t->s < t->end &&
         (*t->s == ' ' || *t->s == '\t' || *t->s == '\n' || *t->s == '\r'))
    t->s++;
}

/* Reads the string at t->s (its opening quote).  Plain text stays where
 * it is, unless `terminate` asks for a NUL after it (keys); text that is
 * copied goes into `buf` or, when longer than `size`, into a buffer the
 * caller frees (*heap). */
static int fast_string(fast_text *t, char *buf, size_t size, int terminate,
                       const char **out, size_t *len, char **heap) {
  const unsigned char *u = (const unsigned char *)t->s + 1;
  size_t n = (size_t)(t->end - t->s) - 1, i = skip_plain(u, 0, n), o;
  const char *close;
  char *dst;

  *heap = NULL;
  if (i >= n || u[i] < 0x20)
    return -1;
  if (u[i] == '"' && (!terminate || i < size)) {
    /* Plain text: used where it is, or copied with its NUL (a key). */
    if (terminate) {
      memcpy(buf, u, i);
      buf[i] = '\0';
    }
    *out = terminate ? buf : t->s + 1;
    *len = i;
    t->s += i + 2;
    return 0;
  }
  /* skip_string checks every escape and finds the real end; decoded text
   * is never longer than its source. */
  if ((close = skip_string(t->s, t->end)) == NULL)
    return -1;
  n = (size_t)(close - t->s) - 2;
  dst = n < size ? buf : (*heap = malloc(n + 1));
  if (dst == NULL)
    return -1;
  memcpy(dst, u, i);
  for (o = i; i < n;) {
    size_t j;
    /* A backslash: only the short escapes are decoded here. */
    int c = short_escape(u[++i]);
    if (c < 0) {
      free(*heap);
      *heap = NULL;
      return -1;
    }
    dst[o++] = (char)c;
    j = skip_plain(u, ++i, n);
    memcpy(dst + o, u + i, j - i);
    o += j - i;
    i = j;
  }
  if (terminate)
    dst[o] = '\0';
  *out = dst;
  *len = o;
  t->s = close;
  return 0;
}

static int fast_value(fast_text *t, int depth, json_object **out);

static int fast_object(fast_text *t, int depth, json_object *obj) {
  t->s++;
  fast_ws(t);
  if (t->s < t->end && *t->s == '}') {
    t->s++;
    return 0;
  }
  for (;;) {
    /* The key stays here while its value is built. */
    char buf[128], *heap = NULL;
    const char *key;
    size_t len;
    json_object *value;
    int rc = -1;

    if (t->s < t->end && *t->s == '"' &&
        fast_string(t, buf, sizeof(buf), 1, &key, &len, &heap) == 0) {
      fast_ws(t);
      if (t->s < t->end && *t->s == ':') {
        t->s++;
        fast_ws(t);
        if ((rc = fast_value(t, depth + 1, &value)) == 0)
          json_object_object_add(obj, key, value);
      }
    }
    free(heap);
    if (rc != 0)
      return -1;
    fast_ws(t);
    if (t->s < t->end && *t->s == ',') {
      t->s++;
      fast_ws(t);
      continue;
    }
    if (t->s < t->end && *t->s == '}') {
      t->s++;
      return 0;
    }
    return -1;
  }
}

static int fast_array(fast_text *t, int depth, json_object *arr) {
  t->s++;
  fast_ws(t);
  if (t->s < t->end && *t->s == ']') {
    json_object_array_shrink(arr, 0);
    t->s++;
    return 0;
  }
  for (;;) {
    json_object *value;
    if (fast_value(t, depth + 1, &value) != 0)
      return -1;
    if (json_object_array_add(arr, value) != 0) {
      json_object_put(value);
      return -1;
    }
    fast_ws(t);
    if (t->s < t->end && *t->s == ',') {
      t->s++;
      fast_ws(t);
      continue;
    }
    if (t->s < t->end && *t->s == ']') {
      json_object_array_shrink(arr, 0);
      t->s++;
      return 0;
    }
    return -1;
  }
}

/* An integer of 1 to 18 digits, which int64 holds whatever its sign; the
 * tokener takes a longer one (json_parse_int64 / json_parse_uint64). */
static int fast_integer(fast_text *t, json_object **out) {
  const char *s = t->s, *digits;
  uint64_t v = 0;
  int neg = 0;

  if (*s == '-') {
    neg = 1;
    s++;
  }
  for (digits = s; s < t->end && *s >= '0' && *s <= '9'; s++)
    v = v * 10 + (*s - '0');
  if (s == digits || s - digits > 18 || (*digits == '0' && s - digits > 1) ||
      (s < t->end && (*s == '.' || *s == 'e' || *s == 'E')))
    return -1;
  t->s = s;
  *out = json_object_new_int64(neg ? -(int64_t)v : (int64_t)v);
  return *out != NULL ? 0 : -1;
}

static int fast_literal(fast_text *t, const char *word, size_t n) {
  if ((size_t)(t->end - t->s) < n || memcmp(t->s, word, n) != 0)
    return -1;
  t->s += n;
  return 0;
}

/* Builds the value at t->s into *out (NULL for null); -1 to give up. */
static int fast_value(fast_text *t, int depth, json_object **out) {
  const char *text;
  size_t len;
  char *heap;
  int rc;

  *out = NULL;
  if (t->s >= t->end || depth > FAST_MAX_DEPTH)
    return -1;
  switch (*t->s) {
  case '{':
  case '[':
    *out = *t->s == '{' ? json_object_new_object() : json_object_new_array();
    if (*out == NULL)
      return -1;
    rc =
        *t->s == '{' ? fast_object(t, depth, *out) : fast_array(t, depth, *out);
    if (rc != 0) {
      json_object_put(*out);
      *out = NULL;
    }
    return rc;
  case '"':
    rc = fast_string(t, t->buf, sizeof(t->buf), 0, &text, &len, &heap);
    if (rc == 0 && (*out = json_object_new_string_len(text, (int)len)) == NULL)
      rc = -1;
    free(heap);
    return rc;
  case 't':
    return fast_literal(t, "true", 4) == 0 &&
                   (*out = json_object_new_boolean(1)) != NULL
               ? 0
               : -1;
  case 'f':
    return fast_literal(t, "false", 5) == 0 &&
                   (*out = json_object_new_boolean(0)) != NULL
               ? 0
               : -1;
  case 'n':
    return fast_literal(t, "null", 4);
  default:
    return fast_integer(t, out);
  }
}

/* The object or array `line` holds, built without the tokener, or NULL
 * when the tokener is to parse it. */
static json_object *fast_parse(const char *line, size_t len) {
  fast_text t;
  json_object *obj;

  t.s = line;
  t.end = line + len;
  fast_ws(&t);
  if (t.s >= t.end || (*t.s != '{' && *t.s != '['))
    return NULL;
  if (fast_value(&t, 0, &obj) != 0)
    return NULL;
  fast_ws(&t);
  if (t.s != t.end) {
    json_object_put(obj);
    return NULL;
  }
  return obj;
}

/* Parses text that passed the checks above. */
static int parse_value(json_tokener *tok, const char *line, size_t len,
                       json_object **out, const char **why) {
  json_object *obj;
  enum json_tokener_error err;
  int finished_early = 0;

  /* Each message starts from a fresh state: nothing a failed parse left
   * (a pending surrogate, say) reaches the next one.  Strict, whatever
   * the caller's tokener was made with: no comments, single quotes,
   * trailing commas, NaN or literals in other cases. */
  json_tokener_reset(tok);
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
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
  /* The parser refuses integers json-c would clamp, but it keeps values
   * above INT64_MAX as uint64, which get_int64 clamps: those are no
   * int64 ids. */
  v = json_object_get_int64(id);
  return v != INT64_MAX || json_object_get_uint64(id) == (uint64_t)INT64_MAX;
}

const char *jsonrpc_name(json_object *v) {
  const char *s;
  if (!json_object_is_type(v, json_type_string))
    return NULL;
  s = json_object_get_string(v);
  return memchr(s, '\0', (size_t)json_object_get_string_len(v)) == NULL ? s
                                                                        : NULL;
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
  /* A response is dropped whatever it holds, also with a null id: a
   * client says so when it could not read one of our messages, and
   * answering it would start an endless exchange. */
  if (!has_method && has_id && has_result != has_error &&
      (out->id != NULL || json_object_is_type(id, json_type_null))) {
    out->kind = JSONRPC_KIND_RESPONSE;
    return;
  }
  /* Compared with its length: "2.0" and a NUL and more is not 2.0.  (The
   * length of anything but a string is 0.) */
  if (!has_version || json_object_get_string_len(version) != 3 ||
      memcmp(json_object_get_string(version), "2.0", 3) != 0) {
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
    /* As jsonrpc_name() reads it, without checking the type again. */
    out->method = json_object_get_string(method);
    if (strlen(out->method) != (size_t)json_object_get_string_len(method))
      out->method = JSONRPC_NUL_METHOD;
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

json_object *jsonrpc_meta_take(json_object *params, const char *key) {
  json_object *meta, *value;

  if (!json_object_object_get_ex(params, "_meta", &meta) ||
      !json_object_object_get_ex(meta, key, &value))
    return NULL;
  json_object_get(value);
  json_object_object_del(meta, key);
  if (json_object_object_length(meta) == 0)
    json_object_object_del(params, "_meta");
  return value;
}

const char *jsonrpc_to_string(json_object *msg, size_t *len) {
  return json_object_to_json_string_length(
      msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
}
