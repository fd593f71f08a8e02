/* util.c -- growable buffers, base64, UTF-8 and charsets for the "fetch"
 * plugin. */
#include <errno.h>
#include <iconv.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fetch.h"

/* --- buffers ------------------------------------------------------------- */

static int buf_reserve(struct fetch_buf *b, size_t more) {
  size_t cap;
  char *p;

  if (b->failed)
    return -1;
  if (b->len + more + 1 <= b->cap)
    return 0;
  cap = b->cap ? b->cap : 256;
  while (cap < b->len + more + 1) {
    if (cap > SIZE_MAX / 2) {
      b->failed = 1;
      return -1;
    }
    cap *= 2;
  }
  if ((p = realloc(b->data, cap)) == NULL) {
    b->failed = 1;
    return -1;
  }
  b->data = p;
  b->cap = cap;
  return 0;
}

void fetch_buf_append(struct fetch_buf *b, const char *s, size_t n) {
  if (buf_reserve(b, n) != 0)
    return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void fetch_buf_putc(struct fetch_buf *b, char c) {
  fetch_buf_append(b, &c, 1);
}

void fetch_buf_puts(struct fetch_buf *b, const char *s) {
  fetch_buf_append(b, s, strlen(s));
}

void fetch_buf_printf(struct fetch_buf *b, const char *fmt, ...) {
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || buf_reserve(b, (size_t)n) != 0)
    return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void fetch_buf_free(struct fetch_buf *b) {
  free(b->data);
  memset(b, 0, sizeof(*b));
}

/* --- base64 -------------------------------------------------------------- */

char *fetch_base64(const unsigned char *data, size_t n) {
  static const char digits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t out_len = (n + 2) / 3 * 4, j = 0;
  char *out;

  if (n > SIZE_MAX / 2 || (out = malloc(out_len + 1)) == NULL)
    return NULL;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)data[i] << 16;
    if (i + 1 < n)
      v |= (uint32_t)data[i + 1] << 8;
    if (i + 2 < n)
      v |= data[i + 2];
    out[j++] = digits[v >> 18 & 63];
    out[j++] = digits[v >> 12 & 63];
    out[j++] = i + 1 < n ? digits[v >> 6 & 63] : '=';
    out[j++] = i + 2 < n ? digits[v & 63] : '=';
  }
  out[j] = '\0';
  return out;
}

/* --- UTF-8 --------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at `s` (n bytes left), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  size_t len;
  uint32_t cp;

  if (s[0] < 0x80)
    return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    len = 2, cp = s[0] & 0x1f;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    len = 3, cp = s[0] & 0x0f;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    len = 4, cp = s[0] & 0x07;
  else
    return 0;
  if (n < len)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  /* Overlong forms, surrogates and code points past U+10FFFF. */
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
    return 0;
  return len;
}

size_t fetch_utf8_cut(const char *s, size_t n) {
  size_t i = n;

  /* Step back over at most three continuation bytes to a lead byte, and
   * keep the sequence only if it is complete. */
  while (i > 0 && n - i < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
    i--;
  if (i > 0 && (unsigned char)s[i - 1] >= 0xc0) {
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (n - (i - 1) < need)
      return i - 1;
  }
  return n;
}

/* Valid UTF-8 with invalid bytes and NULs replaced by U+FFFD. */
static char *utf8_clean(const char *data, size_t n, size_t *out_len) {
  struct fetch_buf b = {0};
  const unsigned char *s = (const unsigned char *)data;
  size_t i = 0;

  fetch_buf_append(&b, "", 0);
  while (i < n) {
    size_t run = i, len;
    /* Copy runs of valid text at once. */
    while (run < n && s[run] != 0 && (len = utf8_seq(s + run, n - run)) > 0)
      run += len;
    fetch_buf_append(&b, data + i, run - i);
    if (run < n) {
      fetch_buf_append(&b, "\xef\xbf\xbd", 3);
      run++;
    }
    i = run;
  }
  if (b.failed) {
    fetch_buf_free(&b);
    return NULL;
  }
  *out_len = b.len;
  return b.data;
}

/* Nonzero when `charset` names UTF-8 or a subset of it. */
static int is_utf8(const char *charset) {
  return charset == NULL || charset[0] == '\0' ||
         strcasecmp(charset, "utf-8") == 0 ||
         strcasecmp(charset, "utf8") == 0 ||
         strcasecmp(charset, "us-ascii") == 0 ||
         strcasecmp(charset, "ascii") == 0;
}

char *fetch_to_utf8(const char *data, size_t n, const char *charset,
                    size_t *out_len) {
  struct fetch_buf b = {0};
  const char *from = charset;
  iconv_t cd;
  char *in = (char *)data, *res;
  size_t in_left = n;

  if (is_utf8(charset))
    return utf8_clean(data, n, out_len);
  /* Browsers read Latin-1 labels as windows-1252 (WHATWG Encoding). */
  if (strcasecmp(charset, "iso-8859-1") == 0 ||
      strcasecmp(charset, "latin1") == 0)
    from = "WINDOWS-1252";
  if ((cd = iconv_open("UTF-8", from)) == (iconv_t)-1)
    return utf8_clean(data, n, out_len); /* unknown: read it as UTF-8 */
  while (in_left > 0 && !b.failed) {
    char chunk[4096], *out = chunk;
    size_t out_left = sizeof(chunk);

    if (iconv(cd, &in, &in_left, &out, &out_left) == (size_t)-1 &&
        errno != E2BIG) {
      /* An invalid or cut sequence: one replacement, then on. */
      fetch_buf_append(&b, chunk, sizeof(chunk) - out_left);
      fetch_buf_append(&b, "\xef\xbf\xbd", 3);
      in++, in_left--;
      continue;
    }
    fetch_buf_append(&b, chunk, sizeof(chunk) - out_left);
  }
  iconv_close(cd);
  if (b.failed) {
    fetch_buf_free(&b);
    return NULL;
  }
  /* iconv's output is UTF-8, but may hold NULs the input had. */
  res = utf8_clean(b.data ? b.data : "", b.len, out_len);
  fetch_buf_free(&b);
  return res;
}

long long fetch_now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
