/* SPDX-License-Identifier: MIT */
/* html.c -- HTML reduced to the text a reader sees.
 *
 * Not a full HTML5 parser, and it need not be: one pass, left to right,
 * that never looks back, so the work is linear in the input whatever the
 * page does.  Tags are recognized and mostly dropped; what they change is
 * where lines break.  The content of script, style and similar elements
 * and of <head> is skipped (the title is kept and put first).  Text has
 * its character references decoded and its whitespace collapsed, except
 * inside <pre>.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/utf8.h"
#include "fetch.h"

/* --- character references ------------------------------------------------ */

/* The names of U+00A0..U+00FF, in order. */
static const char *const latin1[96] = {
    "nbsp",   "iexcl",  "cent",   "pound",  "curren", "yen",    "brvbar",
    "sect",   "uml",    "copy",   "ordf",   "laquo",  "not",    "shy",
    "reg",    "macr",   "deg",    "plusmn", "sup2",   "sup3",   "acute",
    "micro",  "para",   "middot", "cedil",  "sup1",   "ordm",   "raquo",
    "frac14", "frac12", "frac34", "iquest", "Agrave", "Aacute", "Acirc",
    "Atilde", "Auml",   "Aring",  "AElig",  "Ccedil", "Egrave", "Eacute",
    "Ecirc",  "Euml",   "Igrave", "Iacute", "Icirc",  "Iuml",   "ETH",
    "Ntilde", "Ograve", "Oacute", "Ocirc",  "Otilde", "Ouml",   "times",
    "Oslash", "Ugrave", "Uacute", "Ucirc",  "Uuml",   "Yacute", "THORN",
    "szlig",  "agrave", "aacute", "acirc",  "atilde", "auml",   "aring",
    "aelig",  "ccedil", "egrave", "eacute", "ecirc",  "euml",   "igrave",
    "iacute", "icirc",  "iuml",   "eth",    "ntilde", "ograve", "oacute",
    "ocirc",  "otilde", "ouml",   "divide", "oslash", "ugrave", "uacute",
    "ucirc",  "uuml",   "yacute", "thorn",  "yuml",
};

/* The Greek letters from U+0391 (capitals) and U+03B1 (small). */
static const char *const greek[25] = {
    "alpha",   "beta", "gamma", "delta",  "epsilon", "zeta", "eta",
    "theta",   "iota", "kappa", "lambda", "mu",      "nu",   "xi",
    "omicron", "pi",   "rho",   "sigmaf", "sigma",   "tau",  "upsilon",
    "phi",     "chi",  "psi",   "omega",
};

static const struct {
  const char *name;
  unsigned cp;
} named[] = {
    {"amp", '&'},       {"lt", '<'},         {"gt", '>'},
    {"quot", '"'},      {"apos", '\''},      {"OElig", 0x152},
    {"oelig", 0x153},   {"Scaron", 0x160},   {"scaron", 0x161},
    {"Yuml", 0x178},    {"fnof", 0x192},     {"circ", 0x2c6},
    {"tilde", 0x2dc},   {"ensp", 0x2002},    {"emsp", 0x2003},
    {"thinsp", 0x2009}, {"zwnj", 0x200c},    {"zwj", 0x200d},
    {"lrm", 0x200e},    {"rlm", 0x200f},     {"ndash", 0x2013},
    {"mdash", 0x2014},  {"lsquo", 0x2018},   {"rsquo", 0x2019},
    {"sbquo", 0x201a},  {"ldquo", 0x201c},   {"rdquo", 0x201d},
    {"bdquo", 0x201e},  {"dagger", 0x2020},  {"Dagger", 0x2021},
    {"bull", 0x2022},   {"hellip", 0x2026},  {"permil", 0x2030},
    {"prime", 0x2032},  {"Prime", 0x2033},   {"lsaquo", 0x2039},
    {"rsaquo", 0x203a}, {"oline", 0x203e},   {"frasl", 0x2044},
    {"euro", 0x20ac},   {"trade", 0x2122},   {"larr", 0x2190},
    {"uarr", 0x2191},   {"rarr", 0x2192},    {"darr", 0x2193},
    {"harr", 0x2194},   {"lArr", 0x21d0},    {"rArr", 0x21d2},
    {"hArr", 0x21d4},   {"forall", 0x2200},  {"part", 0x2202},
    {"exist", 0x2203},  {"empty", 0x2205},   {"nabla", 0x2207},
    {"isin", 0x2208},   {"notin", 0x2209},   {"prod", 0x220f},
    {"sum", 0x2211},    {"minus", 0x2212},   {"radic", 0x221a},
    {"infin", 0x221e},  {"and", 0x2227},     {"or", 0x2228},
    {"cap", 0x2229},    {"cup", 0x222a},     {"int", 0x222b},
    {"sim", 0x223c},    {"asymp", 0x2248},   {"ne", 0x2260},
    {"equiv", 0x2261},  {"le", 0x2264},      {"ge", 0x2265},
    {"sub", 0x2282},    {"sup", 0x2283},     {"loz", 0x25ca},
    {"spades", 0x2660}, {"clubs", 0x2663},   {"hearts", 0x2665},
    {"diams", 0x2666},  {"thetasym", 0x3d1}, {"piv", 0x3d6},
};

/* What browsers make of &#128; to &#159;: windows-1252 (WHATWG). */
static const unsigned short c1_remap[32] = {
    0x20ac, 0x81,   0x201a, 0x192,  0x201e, 0x2026, 0x2020, 0x2021,
    0x2c6,  0x2030, 0x160,  0x2039, 0x152,  0x8d,   0x17d,  0x8f,
    0x90,   0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
    0x2dc,  0x2122, 0x161,  0x203a, 0x153,  0x9d,   0x17e,  0x178,
};

/* The code point named `name` (len bytes), or 0. */
static unsigned named_lookup(const char *name, size_t len) {
  char key[12];

  if (len == 0 || len >= sizeof(key))
    return 0;
  memcpy(key, name, len);
  key[len] = '\0';
  for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
    if (strcmp(named[i].name, key) == 0)
      return named[i].cp;
  for (size_t i = 0; i < 96; i++)
    if (strcmp(latin1[i], key) == 0)
      return 0xa0 + (unsigned)i;
  for (size_t i = 0; i < 25; i++) {
    if (strcmp(greek[i], key) == 0)
      return 0x3b1 + (unsigned)i;
    /* Capitals: the same name with its first letter upper-cased; there is
     * no capital final sigma. */
    if (i != 17 && key[0] == toupper((unsigned char)greek[i][0]) &&
        strcmp(greek[i] + 1, key + 1) == 0)
      return 0x391 + (unsigned)i;
  }
  return 0;
}

size_t fetch_entity_decode(const char *s, size_t n, char out[8],
                           size_t *out_len) {
  size_t i = 0;
  unsigned long cp = 0;

  if (n > 0 && s[0] == '#') {
    int hex = n > 1 && (s[1] == 'x' || s[1] == 'X');
    size_t digits = 0;

    i = hex ? 2 : 1;
    while (i < n && (hex ? isxdigit((unsigned char)s[i])
                         : isdigit((unsigned char)s[i]))) {
      int d = isdigit((unsigned char)s[i])
                  ? s[i] - '0'
                  : tolower((unsigned char)s[i]) - 'a' + 10;
      if (cp <= 0x10ffff)
        cp = cp * (hex ? 16 : 10) + (unsigned long)d;
      i++, digits++;
    }
    if (digits == 0)
      return 0;
    if (i < n && s[i] == ';')
      i++;
    if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      cp = 0xfffd;
    else if (cp >= 0x80 && cp <= 0x9f)
      cp = c1_remap[cp - 0x80];
    *out_len = pc_utf8_encode((uint32_t)cp, out);
    return i;
  }
  while (i < n && i < 12 && isalnum((unsigned char)s[i]))
    i++;
  if ((cp = named_lookup(s, i)) == 0)
    return 0;
  if (i < n && s[i] == ';') {
    i++;
  } else if (cp != '&' && cp != '<' && cp != '>' && cp != '"' && cp != 0xa0 &&
             cp != 0xa9 && cp != 0xae) {
    /* Only a few legacy names work without their ';'. */
    return 0;
  }
  *out_len = pc_utf8_encode((uint32_t)cp, out);
  return i;
}

/* --- the reducer ------------------------------------------------------- */

struct reducer {
  struct pc_buf *out;
  size_t start; /* where this document's text begins in `out` */
  int space;    /* whitespace seen since the last text */
  int want_nl;  /* line breaks wanted before the next text */
  int nl;       /* line breaks at the end of the output */
  int pre;      /* inside <pre>: whitespace kept */
  int hidden;   /* inside <head>: no text */
  int cells;    /* table cells so far in this row */
  struct pc_buf title;
};

/* Before text: the line breaks or the space it is owed. */
static void flush_breaks(struct reducer *r) {
  if (r->out->len > r->start) {
    if (r->want_nl > r->nl) {
      for (int i = r->nl; i < r->want_nl; i++)
        pc_buf_putc(r->out, '\n');
      r->nl = r->want_nl;
    } else if (r->space && r->nl == 0) {
      pc_buf_putc(r->out, ' ');
    }
  }
  r->want_nl = 0;
  r->space = 0;
}

/* `n` bytes of text, entities already decoded. */
static void put_text(struct reducer *r, const char *s, size_t n) {
  if (r->hidden)
    return;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];

    if (r->pre) {
      if (c == '\r')
        continue;
      if (r->want_nl || r->space)
        flush_breaks(r);
      pc_buf_putc(r->out, c);
      r->nl = c == '\n' ? r->nl + 1 : 0;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      r->space = 1;
    } else {
      if (r->want_nl || r->space)
        flush_breaks(r);
      pc_buf_putc(r->out, c);
      r->nl = 0;
    }
  }
}

/* Text that is not collapsed (a list bullet, a cell separator). */
static void put_mark(struct reducer *r, const char *mark) {
  if (r->hidden)
    return;
  flush_breaks(r);
  pc_buf_puts(r->out, mark);
  r->nl = 0;
}

static void want_lines(struct reducer *r, int n) {
  if (r->want_nl < n)
    r->want_nl = n;
}

/* Case-insensitive: does `s` (n bytes) start with "</name" and then a
 * character that ends a tag name? */
static int is_end_tag(const char *s, size_t n, const char *name) {
  size_t len = strlen(name);

  return n >= len + 2 && s[0] == '<' && s[1] == '/' &&
         strncasecmp(s + 2, name, len) == 0 &&
         (n == len + 2 || strchr(" \t\n\r\f/>", s[len + 2]) != NULL);
}

/* Where the raw text of element `name` ends: the '<' of its end tag, or
 * `n`. */
static size_t raw_end(const char *s, size_t i, size_t n, const char *name) {
  for (; i < n; i++)
    if (s[i] == '<' && is_end_tag(s + i, n - i, name))
      return i;
  return n;
}

/* Text with references decoded, handed to `put` (the reducer, or the
 * title). */
static void decode_text(struct reducer *r, const char *s, size_t n,
                        int to_title) {
  size_t i = 0;

  while (i < n) {
    size_t run = i;
    while (run < n && s[run] != '&')
      run++;
    if (to_title)
      pc_buf_append(&r->title, s + i, run - i);
    else
      put_text(r, s + i, run - i);
    if (run < n) {
      char ch[8];
      size_t ch_len = 0,
             used = fetch_entity_decode(s + run + 1, n - run - 1, ch, &ch_len);
      if (used == 0)
        ch[0] = '&', ch_len = 1;
      else if (ch_len == 2 && (unsigned char)ch[0] == 0xc2 &&
               (unsigned char)ch[1] == 0xa0)
        ch[0] = ' ', ch_len = 1; /* &nbsp; reads as a space */
      if (to_title)
        pc_buf_append(&r->title, ch, ch_len);
      else
        put_text(r, ch, ch_len);
      run += 1 + used;
    }
    i = run;
  }
}

/* Elements whose content is never shown as text. */
static const char *const raw_skipped[] = {
    "script", "style",  "noscript", "template", "svg", "math",
    "iframe", "object", "textarea", "select",   NULL,
};
/* Elements on lines of their own, with a blank line around them. */
static const char *const paragraphs[] = {
    "p",       "blockquote", "pre",  "table",    "ul",      "ol",
    "dl",      "figure",     "form", "fieldset", "section", "article",
    "header",  "footer",     "nav",  "aside",    "main",    "address",
    "details", "hr",         "h1",   "h2",       "h3",      "h4",
    "h5",      "h6",         "body", "html",     NULL,
};
/* Elements on lines of their own. */
static const char *const lines[] = {
    "div",        "li",      "tr",     "dt",     "dd",     "summary",
    "figcaption", "caption", "option", "legend", "center", "br",
    "thead",      "tbody",   "tfoot",  "menu",   "dialog", NULL,
};

static int in_list(const char *const *list, const char *name) {
  for (; *list != NULL; list++)
    if (strcmp(*list, name) == 0)
      return 1;
  return 0;
}

/* Acts on a start tag (`end` 0) or an end tag. */
static void on_tag(struct reducer *r, const char *name, int end) {
  if (strcmp(name, "head") == 0) {
    r->hidden = !end;
    return;
  }
  if (strcmp(name, "body") == 0)
    r->hidden = 0; /* a page that never closed its <head> */
  if (strcmp(name, "pre") == 0)
    r->pre += end ? (r->pre > 0 ? -1 : 0) : 1;
  if (in_list(paragraphs, name))
    want_lines(r, 2);
  else if (in_list(lines, name))
    want_lines(r, 1);
  if (end)
    return;
  if (name[0] == 'h' && name[1] >= '1' && name[1] <= '6' && name[2] == '\0') {
    char mark[8] = "#######";
    mark[name[1] - '0'] = '\0';
    put_mark(r, mark);
    r->space = 1;
  } else if (strcmp(name, "li") == 0) {
    put_mark(r, "-");
    r->space = 1;
  } else if (strcmp(name, "tr") == 0) {
    r->cells = 0;
  } else if (strcmp(name, "td") == 0 || strcmp(name, "th") == 0) {
    if (r->cells++ > 0)
      put_mark(r, " |");
    r->space = 1;
  }
}

/* Parses the tag at s[i] == '<' and returns the index after it.  Start
 * tags of skipped elements skip their content too. */
static size_t tag(struct reducer *r, const char *s, size_t i, size_t n) {
  char name[16];
  size_t len = 0, j = i + 1;
  int end = 0;

  if (j < n && s[j] == '/')
    end = 1, j++;
  while (j < n && !strchr(" \t\n\r\f/>", s[j])) {
    if (len < sizeof(name) - 1)
      name[len] = (char)tolower((unsigned char)s[j]);
    len++, j++;
  }
  name[len < sizeof(name) ? len : 0] = '\0';
  /* Attributes: only quotes after '=' quote, as in HTML. */
  while (j < n && s[j] != '>') {
    if (s[j] == '=') {
      j++;
      while (j < n && strchr(" \t\n\r\f", s[j]))
        j++;
      if (j < n && (s[j] == '"' || s[j] == '\'')) {
        const char *q = memchr(s + j + 1, s[j], n - j - 1);
        j = q ? (size_t)(q - s) + 1 : n;
      }
      continue;
    }
    j++;
  }
  j = j < n ? j + 1 : n;
  if (name[0] == '\0')
    return j;
  if (!end && strcmp(name, "title") == 0) {
    size_t stop = raw_end(s, j, n, "title");
    if (r->title.len == 0)
      decode_text(r, s + j, stop - j > 2048 ? 2048 : stop - j, 1);
    return stop;
  }
  if (!end && in_list(raw_skipped, name)) {
    /* The end tag, when found, is parsed as a tag next. */
    return raw_end(s, j, n, name);
  }
  on_tag(r, name, end);
  return j;
}

void fetch_html_to_text(const char *s, size_t n, struct pc_buf *out) {
  struct reducer r = {.out = out, .start = out->len};
  size_t i = 0, body_at;

  while (i < n) {
    size_t run = i;

    while (run < n && s[run] != '<')
      run++;
    decode_text(&r, s + i, run - i, 0);
    if (run >= n)
      break;
    i = run;
    if (n - i >= 4 && memcmp(s + i, "<!--", 4) == 0) {
      const char *close = NULL;
      for (size_t k = i + 4; k + 3 <= n && close == NULL; k++)
        if (s[k] == '-' && s[k + 1] == '-' && s[k + 2] == '>')
          close = s + k;
      i = close ? (size_t)(close - s) + 3 : n;
    } else if (i + 1 < n && (s[i + 1] == '!' || s[i + 1] == '?' ||
                             (s[i + 1] == '/' && i + 2 < n &&
                              !isalpha((unsigned char)s[i + 2])))) {
      /* A doctype, a processing instruction or a bogus end tag. */
      const char *close = memchr(s + i, '>', n - i);
      i = close ? (size_t)(close - s) + 1 : n;
    } else if (i + 1 < n &&
               (isalpha((unsigned char)s[i + 1]) || s[i + 1] == '/')) {
      i = tag(&r, s, i, n);
    } else {
      put_text(&r, "<", 1);
      i++;
    }
  }
  /* The title first, on its own, when the page has one. */
  body_at = r.start;
  if (r.title.len > 0 && !r.title.failed) {
    struct pc_buf t = {0};
    struct reducer tr = {.out = &t};

    put_text(&tr, r.title.data, r.title.len);
    if (t.len > 0 && !t.failed) {
      size_t body_len = out->len - body_at;
      /* Room at the end, then the body moves behind the title. */
      pc_buf_append(out, t.data, t.len);
      pc_buf_append(out, "\n\n", 2);
      if (!out->failed) {
        memmove(out->data + body_at + t.len + 2, out->data + body_at, body_len);
        memcpy(out->data + body_at, t.data, t.len);
        memcpy(out->data + body_at + t.len, "\n\n", 2);
        if (body_len == 0)
          out->len -= 2;
        out->data[out->len] = '\0';
      }
    }
    pc_buf_free(&t);
  }
  pc_buf_free(&r.title);
}

void fetch_html_meta_charset(const char *html, size_t n, char buf[40]) {
  size_t lim = n < 1024 ? n : 1024;

  buf[0] = '\0';
  for (size_t i = 0; i + 8 <= lim; i++) {
    if (strncasecmp(html + i, "charset=", 8) == 0) {
      size_t j = i + 8, k = 0;
      if (j < lim && (html[j] == '"' || html[j] == '\''))
        j++;
      while (j < lim && k < 39 &&
             (isalnum((unsigned char)html[j]) || strchr("-_:.", html[j])))
        buf[k++] = html[j++];
      buf[k] = '\0';
      return;
    }
  }
}
