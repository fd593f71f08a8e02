/* SPDX-License-Identifier: MIT */
/* calc.c -- the "calc" plugin: arithmetic for models, which are bad at it.
 *
 * The tool `calculate` evaluates one expression in IEEE doubles with a
 * recursive-descent parser over this grammar, lowest precedence first:
 *
 *   sum     := product (('+' | '-') product)*
 *   product := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '+') unary | power
 *   power   := primary ('^' unary)?     right-associative, so -2^2 is -4
 *   primary := number | 'pi' | 'e' | '(' sum ')'
 *            | function '(' sum (',' sum)* ')'
 *
 * Every error names a 1-based position so the model can fix its input, and
 * both input length and nesting depth are bounded because the expression
 * comes off the wire.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpd.h>

#define CALC_MAX_LENGTH 4096
#define CALC_MAX_DEPTH 64

enum domain { ANY, NONNEGATIVE, POSITIVE };

/* Functions with `fold` take two or more arguments combined pairwise. */
static const struct function {
  const char *name;
  enum domain domain;
  double (*apply)(double);
  double (*fold)(double, double);
} functions[] = {
    {"sqrt", NONNEGATIVE, sqrt, NULL}, {"abs", ANY, fabs, NULL},
    {"ln", POSITIVE, log, NULL},       {"log10", POSITIVE, log10, NULL},
    {"exp", ANY, exp, NULL},           {"sin", ANY, sin, NULL},
    {"cos", ANY, cos, NULL},           {"tan", ANY, tan, NULL},
    {"floor", ANY, floor, NULL},       {"ceil", ANY, ceil, NULL},
    {"round", ANY, round, NULL},       {"min", ANY, NULL, fmin},
    {"max", ANY, NULL, fmax},          {NULL, ANY, NULL, NULL},
};

struct parser {
  const char *text;
  size_t len;
  size_t pos;
  int depth;
  char error[160];
};

static int parse_sum(struct parser *p, double *out);
static int parse_unary(struct parser *p, double *out);

/* Records the error message, which names a 1-based position; returns -1. */
MCPD_PRINTF(2, 3)
static int fail(struct parser *p, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(p->error, sizeof(p->error), fmt, ap);
  va_end(ap);
  return -1;
}

static int syntax_error(struct parser *p, const char *expected) {
  char c = p->pos < p->len ? p->text[p->pos] : '\0';

  if (p->pos >= p->len)
    return fail(p, "syntax error at position %zu: expected %s, found the end",
                p->pos + 1, expected);
  return fail(p, "syntax error at position %zu: expected %s, found '%c'",
              p->pos + 1, expected, isprint((unsigned char)c) ? c : '?');
}

static char peek(struct parser *p) {
  while (p->pos < p->len && isspace((unsigned char)p->text[p->pos]))
    p->pos++;
  return p->pos < p->len ? p->text[p->pos] : '\0';
}

static int accept(struct parser *p, char c) {
  if (peek(p) != c || c == '\0')
    return 0;
  p->pos++;
  return 1;
}

/* NaN from finite operands is a domain error, infinity an overflow; checking
 * after every operation points at the one that went wrong. */
static int check(struct parser *p, size_t at, double v) {
  if (isnan(v))
    return fail(p, "domain error at position %zu", at + 1);
  if (isinf(v))
    return fail(p, "result not finite at position %zu", at + 1);
  return 0;
}

static size_t skip_digits(const struct parser *p, size_t i) {
  while (i < p->len && isdigit((unsigned char)p->text[i]))
    i++;
  return i;
}

/* Scans the number by hand because strtod() alone would also take hex,
 * "inf" and "nan", and then converts just the scanned span.  strtod() and
 * the %g formatting below assume the "C" numeric locale, which is what a
 * process has unless it calls setlocale(). */
static int parse_number(struct parser *p, double *out) {
  size_t start = p->pos, i = skip_digits(p, p->pos), e;
  char buf[64];

  if (i < p->len && p->text[i] == '.')
    i = skip_digits(p, i + 1);
  if (i == start + 1 && p->text[start] == '.')
    return fail(p, "syntax error at position %zu: '.' without digits",
                start + 1);
  if (i < p->len && (p->text[i] == 'e' || p->text[i] == 'E')) {
    e = i + 1;
    if (e < p->len && (p->text[e] == '+' || p->text[e] == '-'))
      e++;
    if (skip_digits(p, e) == e)
      return fail(p, "syntax error at position %zu: exponent without digits",
                  e + 1);
    i = skip_digits(p, e);
  }
  if (i - start >= sizeof(buf))
    return fail(p, "number too long at position %zu", start + 1);
  memcpy(buf, p->text + start, i - start);
  buf[i - start] = '\0';
  p->pos = i;
  *out = strtod(buf, NULL);
  return check(p, start, *out);
}

static int parse_call(struct parser *p, const struct function *f, size_t at,
                      double *out) {
  double arg;
  int n = 1;

  if (!accept(p, '('))
    return syntax_error(p, "'(' after a function name");
  if (parse_sum(p, out))
    return -1;
  for (; accept(p, ','); n++) {
    if (parse_sum(p, &arg))
      return -1;
    if (f->fold != NULL)
      *out = f->fold(*out, arg);
  }
  if (!accept(p, ')'))
    return syntax_error(p, "',' or ')'");
  if (f->fold == NULL && n != 1)
    return fail(p, "%s() at position %zu takes 1 argument, not %d", f->name,
                at + 1, n);
  if (f->fold != NULL && n < 2)
    return fail(p, "%s() at position %zu takes 2 or more arguments", f->name,
                at + 1);
  if ((f->domain == NONNEGATIVE && *out < 0) ||
      (f->domain == POSITIVE && *out <= 0))
    return fail(p, "domain error at position %zu: %s(%.17g) is undefined",
                at + 1, f->name, *out);
  if (f->apply != NULL)
    *out = f->apply(*out);
  return check(p, at, *out);
}

static int parse_primary(struct parser *p, double *out) {
  const struct function *f;
  size_t start, n;
  char c = peek(p);

  start = p->pos;
  if (accept(p, '(')) {
    if (parse_sum(p, out))
      return -1;
    return accept(p, ')') ? 0 : syntax_error(p, "')'");
  }
  if (isdigit((unsigned char)c) || c == '.')
    return parse_number(p, out);
  if (!isalpha((unsigned char)c) && c != '_')
    return syntax_error(p, "a number, name or '('");

  while (p->pos < p->len &&
         (isalnum((unsigned char)p->text[p->pos]) || p->text[p->pos] == '_'))
    p->pos++;
  n = p->pos - start;
  if (peek(p) != '(' && n == 2 && memcmp(p->text + start, "pi", 2) == 0)
    return *out = 3.14159265358979323846, 0;
  if (peek(p) != '(' && n == 1 && p->text[start] == 'e')
    return *out = 2.71828182845904523536, 0;
  for (f = functions; f->name != NULL; f++)
    if (strlen(f->name) == n && memcmp(f->name, p->text + start, n) == 0)
      return parse_call(p, f, start, out);
  return fail(p, "unknown %s '%.*s' at position %zu",
              peek(p) == '(' ? "function" : "name", (int)(n > 32 ? 32 : n),
              p->text + start, start + 1);
}

/* Every recursive path passes through here, so depth is counted here. */
static int parse_unary(struct parser *p, double *out) {
  double rhs;
  size_t at;
  int r;

  peek(p);
  if (++p->depth > CALC_MAX_DEPTH)
    return fail(p, "nesting deeper than %d levels at position %zu",
                CALC_MAX_DEPTH, p->pos + 1);
  if (accept(p, '-')) {
    if ((r = parse_unary(p, out)) == 0)
      *out = -*out;
  } else if (accept(p, '+')) {
    r = parse_unary(p, out);
  } else if ((r = parse_primary(p, out)) == 0 && peek(p) == '^') {
    /* The exponent is a unary, which recurses back here: a^b^c is
     * a^(b^c), and 2^-1 needs no parentheses. */
    at = p->pos++;
    r = parse_unary(p, &rhs);
    if (r == 0)
      r = check(p, at, *out = pow(*out, rhs));
  }
  p->depth--;
  return r;
}

static int parse_product(struct parser *p, double *out) {
  double rhs;
  size_t at;
  char op;

  if (parse_unary(p, out))
    return -1;
  while ((op = peek(p)) == '*' || op == '/' || op == '%') {
    at = p->pos++;
    if (parse_unary(p, &rhs))
      return -1;
    if (op != '*' && rhs == 0)
      return fail(p, "division by zero at position %zu", at + 1);
    *out = op == '*' ? *out * rhs : op == '/' ? *out / rhs : fmod(*out, rhs);
    if (check(p, at, *out))
      return -1;
  }
  return 0;
}

static int parse_sum(struct parser *p, double *out) {
  double rhs;
  size_t at;
  char op;

  if (parse_product(p, out))
    return -1;
  while ((op = peek(p)) == '+' || op == '-') {
    at = p->pos++;
    if (parse_product(p, &rhs))
      return -1;
    *out = op == '+' ? *out + rhs : *out - rhs;
    if (check(p, at, *out))
      return -1;
  }
  return 0;
}

/* Integers print exactly ("42", not "42.0"); anything else prints with the
 * fewest digits that read back as the same double. */
static void format_number(double v, char *buf, size_t size) {
  int prec;

  if (v == 0)
    v = 0; /* Turns -0 into 0. */
  if (v == trunc(v) && fabs(v) < 1e15) {
    snprintf(buf, size, "%.0f", v);
    return;
  }
  for (prec = 1; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, v);
    if (strtod(buf, NULL) == v)
      return;
  }
}

static int calculate(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *arguments = req->arguments;
  struct parser p = {0};
  json_object *expression, *structured;
  char text[32];
  double v;

  if (!json_object_object_get_ex(arguments, "expression", &expression))
    return host->result_error(call, "missing argument 'expression'");
  p.text = json_object_get_string(expression);
  p.len = (size_t)json_object_get_string_len(expression);
  if (p.len > CALC_MAX_LENGTH)
    return host->result_error(call, "expression longer than %d characters",
                              CALC_MAX_LENGTH);
  /* Comparing positions, not peek() against NUL, also catches a NUL byte
   * inside the string. */
  if (parse_sum(&p, &v) == 0 && (peek(&p), p.pos < p.len))
    syntax_error(&p, "an operator or the end");
  if (p.error[0] != '\0')
    return host->result_error(call, "%s", p.error);

  format_number(v, text, sizeof(text));
  structured = json_object_new_object();
  if (structured == NULL || host->result_text(call, text) != MCPD_OK) {
    json_object_put(structured);
    return MCPD_ERROR;
  }
  /* The _s form makes json-c print our shortest text rather than %.17g. */
  json_object_object_add(structured, "result",
                         json_object_new_double_s(v, text));
  return host->result_structured(call, structured);
}

static const mcpd_tool tools[] = {
    {
        .name = "calculate",
        .title = "Calculator",
        .description =
            "Evaluates an arithmetic expression in double precision; use it "
            "instead of doing arithmetic yourself. Operators: + - * / % and ^ "
            "(power, right-associative), unary minus, parentheses. Numbers "
            "like 12, 3.5, 1e-9; constants pi and e. Functions: sqrt abs ln "
            "log10 exp sin cos tan (radians) floor ceil round, and min max "
            "(2 or more arguments). Example: sqrt(2) * (3 + 4)^2",
        .input_schema = "{\"type\":\"object\","
                        "\"properties\":{\"expression\":{\"type\":\"string\","
                        "\"description\":\"The expression, at most 4096 "
                        "characters.\"}},"
                        "\"required\":[\"expression\"],"
                        "\"additionalProperties\":false}",
        .output_schema = "{\"type\":\"object\","
                         "\"properties\":{\"result\":{\"type\":\"number\"}},"
                         "\"required\":[\"result\"]}",
        .call = calculate,
        .exec = MCPD_EXEC_INLINE,
        .read_only_hint = MCPD_HINT_TRUE,
        .destructive_hint = MCPD_HINT_FALSE,
        .idempotent_hint = MCPD_HINT_TRUE,
        .open_world_hint = MCPD_HINT_FALSE,
    },
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "calc", .version = "1.0",
                   .description = "A calculator for arithmetic expressions.",
                   .tools = tools);
