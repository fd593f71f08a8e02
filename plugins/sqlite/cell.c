/* SPDX-License-Identifier: MIT */
/* cell.c -- a column of a result row of the "sqlite" plugin, as JSON and
 * as text: numbers as numbers, text cut on a character boundary at
 * maxCellBytes, blobs as base64. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/base64.h"
#include "../common/utf8.h"
#include "sqlite.h"

/* Column `i` of the current row as JSON; text and blobs longer than
 * max_cell_bytes are cut (*cut set).  Text goes to `text` as well. */
json_object *sq_cell_json(const struct sq_state *st, sqlite3_stmt *stmt, int i,
                          struct printbuf *text, int *cut) {
  switch (sqlite3_column_type(stmt, i)) {
  case SQLITE_INTEGER: {
    sqlite3_int64 v = sqlite3_column_int64(stmt, i);
    sprintbuf(text, "%lld", (long long)v);
    return json_object_new_int64(v);
  }
  case SQLITE_FLOAT: {
    double v = sqlite3_column_double(stmt, i);
    /* JSON has no infinities: say them as text. */
    if (!isfinite(v)) {
      const char *s = v > 0 ? "Infinity" : "-Infinity";
      sprintbuf(text, "%s", s);
      return json_object_new_string(s);
    }
    {
      char num[32];
      snprintf(num, sizeof(num), "%.15g", v);
      if (strtod(num, NULL) != v)
        snprintf(num, sizeof(num), "%.17g", v);
      sprintbuf(text, "%s", num);
    }
    return json_object_new_double(v);
  }
  case SQLITE_TEXT: {
    const unsigned char *s = sqlite3_column_text(stmt, i);
    size_t n = (size_t)sqlite3_column_bytes(stmt, i);
    if (n > st->max_cell_bytes) {
      n = pc_utf8_cut_loose((const char *)s, st->max_cell_bytes);
      (*cut)++;
    }
    printbuf_memappend(text, (const char *)s, (int)n);
    return json_object_new_string_len((const char *)s, (int)n);
  }
  case SQLITE_BLOB: {
    const unsigned char *p = sqlite3_column_blob(stmt, i);
    size_t n = (size_t)sqlite3_column_bytes(stmt, i), shown = n;
    json_object *o = json_object_new_object();
    char *b64;
    if (shown > st->max_cell_bytes) {
      shown = st->max_cell_bytes;
      (*cut)++;
    }
    b64 = pc_base64_encode(p ? p : (const unsigned char *)"", shown);
    json_object_object_add(o, "base64", json_object_new_string(b64 ? b64 : ""));
    json_object_object_add(o, "bytes", json_object_new_int64((int64_t)n));
    free(b64);
    sprintbuf(text, "<blob, %zu bytes>", n);
    return o;
  }
  default:
    sprintbuf(text, "NULL");
    return NULL;
  }
}
