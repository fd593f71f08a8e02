/* SPDX-License-Identifier: MIT */
/* util.c -- charsets and the clock for the "fetch" plugin.  (Buffers,
 * UTF-8 and base64 are in ../common.) */
#include <errno.h>
#include <iconv.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../common/utf8.h"
#include "fetch.h"

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
  struct pc_buf b = {0};
  const char *from = charset;
  iconv_t cd;
  char *in = (char *)data, *res;
  size_t in_left = n;

  if (is_utf8(charset))
    return pc_utf8_clean(data, n, out_len);
  /* Browsers read Latin-1 labels as windows-1252 (WHATWG Encoding). */
  if (strcasecmp(charset, "iso-8859-1") == 0 ||
      strcasecmp(charset, "latin1") == 0)
    from = "WINDOWS-1252";
  if ((cd = iconv_open("UTF-8", from)) == (iconv_t)-1)
    return pc_utf8_clean(data, n, out_len); /* unknown: read it as UTF-8 */
  while (in_left > 0 && !b.failed) {
    char chunk[4096], *out = chunk;
    size_t out_left = sizeof(chunk);

    if (iconv(cd, &in, &in_left, &out, &out_left) == (size_t)-1 &&
        errno != E2BIG) {
      /* An invalid or cut sequence: one replacement, then on. */
      pc_buf_append(&b, chunk, sizeof(chunk) - out_left);
      pc_buf_append(&b, "\xef\xbf\xbd", 3);
      in++, in_left--;
      continue;
    }
    pc_buf_append(&b, chunk, sizeof(chunk) - out_left);
  }
  iconv_close(cd);
  if (b.failed) {
    pc_buf_free(&b);
    return NULL;
  }
  /* iconv's output is UTF-8, but may hold NULs the input had. */
  res = pc_utf8_clean(b.data ? b.data : "", b.len, out_len);
  pc_buf_free(&b);
  return res;
}

long long fetch_now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
