/* SPDX-License-Identifier: MIT */
/* fuzz_uritpl.c -- libFuzzer harness for RFC 6570 URI templates
 * (src/base/uritpl.c): the parse every resource template goes through at load,
 * and the match every resources/read, resources/subscribe and
 * notification of a template URI goes through.
 *
 * Input: a template and a URI, separated by the first newline (without
 * one, the URI is empty).  Each is cut at its first NUL, as the C strings
 * mcpd hands over are.
 *
 * Invariants:
 * 1. The parse agrees with the rules in uritpl.h, restated here on their
 *    own: literal text and expressions "{" [+#/.] name "}", a name of
 *    A-Z a-z 0-9 _ ., no name twice, literal text between two
 *    expressions, at least one expression, at most 32 parts.  A refusal
 *    has a reason; an accepted template lists exactly its variables, in
 *    order.
 * 2. Matching the URI gives NULL or an object whose keys are exactly the
 *    template's variables, each value a non-empty string of valid UTF-8
 *    (checked with fuzz_common's own decoder) without NUL; the same twice.
 *    When the URI holds no '%' nothing is decoded, so putting the values
 *    back into the template must give the URI byte for byte.
 * 3. URIs the template expands to must match: values made from the URI's
 *    bytes, once as printable ASCII that the expression allows and once
 *    percent-encoded from UTF-8, are put into the template; matching the
 *    result must succeed (and round-trip, for the first).  Only where that
 *    is certain: the template is valid UTF-8 without '%', for the encoded
 *    form no literal text starts with a hex digit (it could then end a
 *    value inside an escape), and the URI is short enough for the match's
 *    step budget. */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "uritpl.h"

#define MAX_PARTS 32 /* uritpl.c's URITPL_MAX_PARTS */

/* One part of a template, found here without uritpl.c. */
typedef struct tpart {
  char op; /* 0 literal; ' ' simple; '+', '#', '/', '.' */
  const char *text;
  size_t len;
} tpart;

typedef struct tparts {
  tpart p[MAX_PARTS];
  size_t n;
  size_t n_vars;
} tparts;

static int name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.';
}

static int add(tparts *t, char op, const char *text, size_t len) {
  if (t->n == MAX_PARTS)
    return 0;
  t->p[t->n].op = op;
  t->p[t->n].text = text;
  t->p[t->n].len = len;
  t->n++;
  if (op != 0)
    t->n_vars++;
  return 1;
}

/* Splits `s` by the rules of uritpl.h; 0 when they refuse it. */
static int split(const char *s, tparts *t) {
  memset(t, 0, sizeof(*t));
  while (*s != '\0') {
    size_t lit = strcspn(s, "{}");
    const char *name, *close;
    char op = ' ';

    if (lit > 0 && !add(t, 0, s, lit))
      return 0;
    s += lit;
    if (*s == '\0')
      break;
    if (*s == '}')
      return 0; /* closes nothing */
    name = s + 1;
    close = strchr(name, '}');
    if (close == NULL || memchr(name, '{', (size_t)(close - name)) != NULL)
      return 0; /* never closed, or nested */
    if (strchr("+#/.", *name) != NULL && name < close)
      op = *name++;
    if (name == close)
      return 0; /* no variable */
    for (const char *c = name; c < close; c++)
      if (!name_char(*c))
        return 0;
    if (t->n > 0 && t->p[t->n - 1].op != 0)
      return 0; /* two expressions in a row */
    for (size_t i = 0; i < t->n; i++)
      if (t->p[i].op != 0 && t->p[i].len == (size_t)(close - name) &&
          memcmp(t->p[i].text, name, t->p[i].len) == 0)
        return 0; /* a name twice */
    if (!add(t, op, name, (size_t)(close - name)))
      return 0;
    s = close + 1;
  }
  return t->n_vars > 0;
}

/* A variable's name as a string (names have no length limit). */
static char *var_name(const tpart *p) {
  char *name = malloc(p->len + 1);
  FUZZ_CHECK(name != NULL, "out of memory");
  memcpy(name, p->text, p->len);
  name[p->len] = '\0';
  return name;
}

/* Checks a match result against the template; returns it. */
static json_object *check_match(const uritpl *tpl, const tparts *t,
                                const char *uri) {
  json_object *vars = uritpl_match(tpl, uri), *again;

  again = uritpl_match(tpl, uri);
  FUZZ_CHECK((vars == NULL) == (again == NULL) &&
                 (vars == NULL || json_object_equal(vars, again)),
             "matching \"%.200s\" twice differs", uri);
  json_object_put(again);
  if (vars == NULL)
    return NULL;
  FUZZ_CHECK(json_object_is_type(vars, json_type_object),
             "a match is no object");
  FUZZ_CHECK((size_t)json_object_object_length(vars) == t->n_vars,
             "a match has %d keys for %zu variables",
             json_object_object_length(vars), t->n_vars);
  for (size_t i = 0; i < t->n; i++) {
    char *name;
    json_object *v;
    size_t len;

    if (t->p[i].op == 0)
      continue;
    name = var_name(&t->p[i]);
    FUZZ_CHECK(json_object_object_get_ex(vars, name, &v),
               "variable %s missing from the match of \"%.200s\"", name, uri);
    FUZZ_CHECK(json_object_is_type(v, json_type_string),
               "variable %s is no string", name);
    len = (size_t)json_object_get_string_len(v);
    FUZZ_CHECK(len > 0, "variable %s is empty in \"%.200s\"", name, uri);
    FUZZ_CHECK(memchr(json_object_get_string(v), '\0', len) == NULL,
               "variable %s holds NUL in \"%.200s\"", name, uri);
    FUZZ_CHECK(fuzz_utf8_valid(json_object_get_string(v), len),
               "variable %s is not UTF-8 in \"%.200s\"", name, uri);
    free(name);
  }
  return vars;
}

/* Appends to a bounded buffer; 0 when it is full. */
typedef struct buf {
  char data[1024];
  size_t len;
} buf;

static int put(buf *b, const char *s, size_t n) {
  if (b->len + n >= sizeof(b->data))
    return 0;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 1;
}

/* The template with `values` (or the matched object `vars`) put in as
 * they are. */
static int expand(const tparts *t, const char *const *values, json_object *vars,
                  buf *out) {
  size_t k = 0;
  out->len = 0;
  out->data[0] = '\0';
  for (size_t i = 0; i < t->n; i++) {
    const tpart *p = &t->p[i];
    const char *v;
    if (p->op == 0) {
      if (!put(out, p->text, p->len))
        return 0;
      continue;
    }
    if (p->op != ' ' && p->op != '+' && !put(out, &p->op, 1))
      return 0;
    if (vars != NULL) {
      char *name = var_name(p);
      json_object *o = NULL;
      json_object_object_get_ex(vars, name, &o);
      v = json_object_get_string(o);
      free(name);
    } else {
      v = values[k++];
    }
    if (v == NULL || !put(out, v, strlen(v)))
      return 0;
  }
  return 1;
}

/* Whether a URI of `len` bytes stays well inside the match's budget of a
 * million steps: about (len + 1) ends tried per variable, nested. */
static int cheap(const tparts *t, size_t len) {
  double work = (double)(len + t->n + 1);
  for (size_t i = 0; i < t->n_vars; i++)
    work *= (double)(len + 1);
  return work < 2e5;
}

/* Invariant 3. */
static void check_expansions(const uritpl *tpl, const tparts *t,
                             const char *tpl_text, const uint8_t *bytes,
                             size_t n_bytes) {
  static const char hexdigits[] = "0123456789ABCDEF";
  char plain[MAX_PARTS][16], encoded[MAX_PARTS][64];
  const char *plain_v[MAX_PARTS], *encoded_v[MAX_PARTS];
  size_t at = 0, k = 0;
  int hex_start = 0;
  json_object *vars;
  buf uri;

  if (!fuzz_utf8_valid(tpl_text, strlen(tpl_text)) ||
      strchr(tpl_text, '%') != NULL)
    return;
  for (size_t i = 0; i < t->n; i++)
    if (t->p[i].op == 0 && isxdigit((unsigned char)t->p[i].text[0]))
      hex_start = 1;

  for (size_t i = 0; i < t->n; i++) {
    const tpart *p = &t->p[i];
    size_t len, n = 0, e = 0;
    if (p->op == 0)
      continue;
    /* 1 to 8 characters from the next input bytes (or fixed ones). */
    len = 1 + (n_bytes ? bytes[at++ % n_bytes] % 8 : 0);
    for (size_t j = 0; j < len; j++) {
      uint8_t b = n_bytes ? bytes[at++ % n_bytes] : 'v';
      char c = (char)(0x20 + b % 95);
      /* What the expression takes (uritpl.h): no '%' (nothing is to be
       * decoded); all but {+var} and {#var} stop at '/', '?', '#' and
       * ','. */
      if (c == '%' || ((p->op == ' ' || p->op == '/' || p->op == '.') &&
                       strchr("/?#,", c) != NULL))
        c = 'x';
      plain[k][n++] = c;
      /* The encoded form: the same byte when it is ASCII and not NUL, a
       * two-byte sequence otherwise, every byte escaped. */
      if (b >= 0x01 && b < 0x80) {
        encoded[k][e++] = '%';
        encoded[k][e++] = hexdigits[b >> 4];
        encoded[k][e++] = hexdigits[b & 15];
      } else {
        uint8_t seq[2] = {(uint8_t)(0xc0 | (b >> 6)),
                          (uint8_t)(0x80 | (b & 0x3f))};
        if (b == 0)
          seq[0] = 0xc2, seq[1] = 0x80; /* U+0080 rather than NUL */
        for (int s = 0; s < 2; s++) {
          encoded[k][e++] = '%';
          encoded[k][e++] = hexdigits[seq[s] >> 4];
          encoded[k][e++] = hexdigits[seq[s] & 15];
        }
      }
    }
    plain[k][n] = '\0';
    encoded[k][e] = '\0';
    plain_v[k] = plain[k];
    encoded_v[k] = encoded[k];
    k++;
  }

  if (expand(t, plain_v, NULL, &uri) && cheap(t, uri.len)) {
    buf back;
    vars = check_match(tpl, t, uri.data);
    FUZZ_CHECK(vars != NULL, "\"%s\" does not match its expansion \"%s\"",
               tpl_text, uri.data);
    FUZZ_CHECK(expand(t, NULL, vars, &back) && strcmp(back.data, uri.data) == 0,
               "\"%s\" matched \"%s\" as %s", tpl_text, uri.data,
               json_object_to_json_string(vars));
    json_object_put(vars);
  }
  if (!hex_start && expand(t, encoded_v, NULL, &uri) && cheap(t, uri.len)) {
    vars = check_match(tpl, t, uri.data);
    FUZZ_CHECK(vars != NULL,
               "\"%s\" does not match its encoded expansion \"%s\"", tpl_text,
               uri.data);
    json_object_put(vars);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nl = memchr(data, '\n', size);
  size_t tlen = nl ? (size_t)(nl - data) : size;
  size_t ulen = nl ? size - tlen - 1 : 0;
  char *tpl_text = malloc(tlen + 1), *uri = malloc(ulen + 1);
  char err[200];
  uritpl *tpl;
  tparts t;
  int ok;

  FUZZ_CHECK(tpl_text != NULL && uri != NULL, "out of memory");
  memcpy(tpl_text, data, tlen);
  tpl_text[tlen] = '\0';
  memcpy(uri, nl ? nl + 1 : data, ulen);
  uri[ulen] = '\0';

  err[0] = '\0';
  tpl = uritpl_parse(tpl_text, err, sizeof(err));
  ok = split(tpl_text, &t);
  if (tpl == NULL) {
    /* uritpl.c also refuses when out of memory; libFuzzer's malloc limit
     * is far above anything a template needs. */
    FUZZ_CHECK(!ok, "\"%.300s\" was refused (%s) though it follows the rules",
               tpl_text, err);
    FUZZ_CHECK(err[0] != '\0' && memchr(err, '\0', sizeof(err)) != NULL,
               "a refusal without a reason: \"%.300s\"", tpl_text);
    goto done;
  }
  FUZZ_CHECK(ok, "\"%.300s\" was accepted though the rules refuse it",
             tpl_text);
  FUZZ_CHECK(uritpl_vars(tpl) == t.n_vars, "%zu variables listed for %zu",
             uritpl_vars(tpl), t.n_vars);
  for (size_t i = 0, k = 0; i < t.n; i++) {
    const char *name;
    if (t.p[i].op == 0)
      continue;
    name = uritpl_var(tpl, k++);
    FUZZ_CHECK(name != NULL && strlen(name) == t.p[i].len &&
                   memcmp(name, t.p[i].text, t.p[i].len) == 0,
               "variable %zu is \"%s\", not \"%.*s\"", k - 1,
               name ? name : "(null)", (int)t.p[i].len, t.p[i].text);
  }
  FUZZ_CHECK(uritpl_var(tpl, t.n_vars) == NULL, "a variable past the last one");

  {
    json_object *vars = check_match(tpl, &t, uri);
    buf back;
    if (vars != NULL && strchr(uri, '%') == NULL)
      FUZZ_CHECK(expand(&t, NULL, vars, &back) == 0 ||
                     strcmp(back.data, uri) == 0,
                 "\"%s\" matched \"%.300s\" as %s, which puts back as "
                 "\"%.300s\"",
                 tpl_text, uri, json_object_to_json_string(vars), back.data);
    json_object_put(vars);
  }
  check_expansions(tpl, &t, tpl_text, (const uint8_t *)uri, strlen(uri));

done:
  uritpl_free(tpl);
  free(tpl_text);
  free(uri);
  return 0;
}
