/* SPDX-License-Identifier: MIT */
/* uritpl.c -- RFC 6570 URI templates: parse once, match many. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uritpl.h"
#include "utf8.h"

/* Bounds that keep matching cheap whatever the template or the URI.  A
 * template has at most URITPL_MAX_PARTS parts.  Matching gives up (the
 * URI then does not match) after a budget of steps, each a character
 * compared or an end tried: URITPL_STEPS_PER_BYTE per byte of the URI
 * plus URITPL_MIN_STEPS, at most URITPL_MAX_STEPS.  So a short crafted
 * URI cannot buy a long search: the work stays proportional to what the
 * client sent. */
#define URITPL_MAX_PARTS 32
#define URITPL_MAX_STEPS 1000000
#define URITPL_MIN_STEPS 10000
#define URITPL_STEPS_PER_BYTE 64

typedef struct part {
  char op;    /* 0 for literal text; ' ' simple; '+', '#', '/', '.' */
  char *text; /* the literal, or the variable's name */
  size_t len;
} part;

struct uritpl {
  part parts[URITPL_MAX_PARTS];
  size_t n;
  size_t n_vars;
};

void uritpl_free(uritpl *t) {
  if (t == NULL)
    return;
  for (size_t i = 0; i < t->n; i++)
    free(t->parts[i].text);
  free(t);
}

static int add_part(uritpl *t, char op, const char *text, size_t len) {
  char *copy;
  if (t->n == URITPL_MAX_PARTS || (copy = malloc(len + 1)) == NULL)
    return -1;
  memcpy(copy, text, len);
  copy[len] = '\0';
  t->parts[t->n].op = op;
  t->parts[t->n].text = copy;
  t->parts[t->n].len = len;
  t->n++;
  if (op != 0)
    t->n_vars++;
  return 0;
}

static int name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* Parses the expression between '{' and '}'. */
static int parse_expr(uritpl *t, const char *s, size_t len, char *err,
                      size_t errlen) {
  char op = ' ';
  if (len > 0 && strchr("+#/.", s[0]) != NULL) {
    op = s[0];
    s++;
    len--;
  } else if (len > 0 && strchr("?&;=,!@|", s[0]) != NULL) {
    snprintf(err, errlen, "the operator '%c' is not supported", s[0]);
    return -1;
  }
  if (len == 0) {
    snprintf(err, errlen, "an expression has no variable");
    return -1;
  }
  for (size_t i = 0; i < len; i++)
    if (!name_char(s[i])) {
      snprintf(err, errlen,
               s[i] == ','   ? "several variables in one expression are not "
                               "supported"
               : s[i] == ':' ? "prefix modifiers ({var:3}) are not supported"
               : s[i] == '*' ? "explode modifiers ({var*}) are not supported"
                             : "a variable name may only hold A-Z a-z 0-9 _ .");
      return -1;
    }
  if (t->n > 0 && t->parts[t->n - 1].op != 0) {
    snprintf(err, errlen,
             "two expressions need literal text between them to be matched");
    return -1;
  }
  for (size_t i = 0; i < t->n; i++)
    if (t->parts[i].op != 0 && t->parts[i].len == len &&
        memcmp(t->parts[i].text, s, len) == 0) {
      snprintf(err, errlen, "the variable \"%.*s\" appears twice", (int)len, s);
      return -1;
    }
  if (add_part(t, op, s, len) != 0) {
    snprintf(err, errlen, "too many parts (at most %d)", URITPL_MAX_PARTS);
    return -1;
  }
  return 0;
}

uritpl *uritpl_parse(const char *text, char *err, size_t errlen) {
  uritpl *t = calloc(1, sizeof(*t));
  const char *p = text;

  if (t == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  while (*p != '\0') {
    const char *open = strchr(p, '{');
    const char *close_brace = strchr(p, '}');
    size_t lit = open ? (size_t)(open - p) : strlen(p);

    if (close_brace != NULL && (open == NULL || close_brace < open)) {
      snprintf(err, errlen, "a '}' closes nothing");
      goto fail;
    }
    if (lit > 0 && add_part(t, 0, p, lit) != 0) {
      snprintf(err, errlen, "too many parts (at most %d)", URITPL_MAX_PARTS);
      goto fail;
    }
    if (open == NULL)
      break;
    close_brace = strchr(open, '}');
    if (close_brace == NULL) {
      snprintf(err, errlen, "a '{' is never closed");
      goto fail;
    }
    if (memchr(open + 1, '{', (size_t)(close_brace - open - 1)) != NULL) {
      snprintf(err, errlen, "expressions cannot nest");
      goto fail;
    }
    if (parse_expr(t, open + 1, (size_t)(close_brace - open - 1), err,
                   errlen) != 0)
      goto fail;
    p = close_brace + 1;
  }
  if (t->n_vars == 0) {
    snprintf(err, errlen, "it has no {variable}; declare a resource instead");
    goto fail;
  }
  return t;

fail:
  uritpl_free(t);
  return NULL;
}

size_t uritpl_vars(const uritpl *t) {
  return t->n_vars;
}

const char *uritpl_var(const uritpl *t, size_t i) {
  for (size_t k = 0; k < t->n; k++)
    if (t->parts[k].op != 0 && i-- == 0)
      return t->parts[k].text;
  return NULL;
}

/* A value found in the URI, before decoding. */
typedef struct span {
  const char *at;
  size_t len;
} span;

static int hex(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Percent-decodes a value into a new string; NULL when it is malformed,
 * holds NUL or is not UTF-8. */
static json_object *decode(const char *s, size_t len) {
  char *out = malloc(len + 1);
  json_object *str = NULL;
  size_t n = 0;

  if (out == NULL)
    return NULL;
  for (size_t i = 0; i < len; i++) {
    if (s[i] != '%') {
      out[n++] = s[i];
      continue;
    }
    if (i + 2 >= len || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0)
      goto done;
    out[n] = (char)(hex(s[i + 1]) * 16 + hex(s[i + 2]));
    if (out[n] == '\0')
      goto done;
    n++;
    i += 2;
  }
  if (utf8_valid(out, n))
    str = json_object_new_string_len(out, (int)n);
done:
  free(out);
  return str;
}

/* Whether `c` may appear in the value of an expression with `op`. */
static int allowed(char op, char c) {
  if (op == '+' || op == '#')
    return 1;
  /* Simple expansion percent-encodes these, ',' included (it would
   * separate values). */
  return c != '/' && c != '?' && c != '#' && c != ',';
}

typedef struct matcher {
  const uritpl *t;
  const char *uri;
  size_t uri_len;
  span *values;
  long steps;
  long budget;
} matcher;

/* Matches parts [k..] at uri offset `at`; backtracks over where each
 * value ends. */
static int match_from(matcher *m, size_t k, size_t at) {
  const part *p;

  if (++m->steps > m->budget)
    return 0;
  if (k == m->t->n)
    return at == m->uri_len;
  p = &m->t->parts[k];
  if (p->op == 0) {
    if (m->uri_len - at < p->len || memcmp(m->uri + at, p->text, p->len) != 0)
      return 0;
    return match_from(m, k + 1, at + p->len);
  }
  if (p->op == '#' || p->op == '/' || p->op == '.') {
    if (at >= m->uri_len || m->uri[at] != p->op)
      return 0;
    at++;
  }
  /* The value runs to some end; it is never empty. */
  for (size_t end = at + 1; end <= m->uri_len; end++) {
    if (++m->steps > m->budget || !allowed(p->op, m->uri[end - 1]))
      return 0;
    if (k + 1 < m->t->n) {
      const part *next = &m->t->parts[k + 1];
      /* Only where the literal that follows starts. */
      if (m->uri_len - end < next->len ||
          memcmp(m->uri + end, next->text, next->len) != 0)
        continue;
    } else if (end != m->uri_len) {
      continue;
    }
    m->values[k].at = m->uri + at;
    m->values[k].len = end - at;
    if (match_from(m, k + 1, end))
      return 1;
    if (m->steps > m->budget)
      return 0;
  }
  return 0;
}

json_object *uritpl_match(const uritpl *t, const char *uri) {
  span values[URITPL_MAX_PARTS];
  size_t len = strlen(uri);
  matcher m = {t, uri, len, values, 0, URITPL_MAX_STEPS};
  json_object *vars;

  if (len < (URITPL_MAX_STEPS - URITPL_MIN_STEPS) / URITPL_STEPS_PER_BYTE)
    m.budget = URITPL_MIN_STEPS + (long)len * URITPL_STEPS_PER_BYTE;

  if (!match_from(&m, 0, 0))
    return NULL;
  vars = json_object_new_object();
  for (size_t k = 0; k < t->n; k++) {
    json_object *v;
    if (t->parts[k].op == 0)
      continue;
    v = decode(values[k].at, values[k].len);
    if (v == NULL) {
      json_object_put(vars);
      return NULL;
    }
    json_object_object_add(vars, t->parts[k].text, v);
  }
  return vars;
}
