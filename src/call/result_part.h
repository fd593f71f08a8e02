/* SPDX-License-Identifier: MIT */
/* result_part.h -- the part of a call that result.c owns: the result the
 * plugin builds (or its worker wrote) and the error it chose.  Only
 * result.c touches these fields; it is declared below the call core so
 * that struct mcpd_call can hold it without a circle. */
#ifndef MCPD_RESULT_PART_H
#define MCPD_RESULT_PART_H

#include <stddef.h>

#include <json-c/json.h>

#include "strbuf.h"

typedef struct call_result {
  strbuf content; /* content blocks (or contents, or messages, or
                     completion values) as JSON text, comma-joined */
  size_t n_blocks;
  json_object *structured;  /* structuredContent */
  json_object *replacement; /* result_json(), or the worker's result */
  /* The worker's result as it wrote it, until build_text() takes it, and
   * whether `replacement` came from a worker: parsed by jsonrpc_parse(),
   * so JSON that needs no second check. */
  strbuf remote_text;
  int remote_checked;
  int is_error;
  int bad_result;         /* a builder was misused */
  const char *role;       /* prompts: of the next message */
  size_t total;           /* completion_total() */
  int has_more;           /* completion_total() */
  int fail_code;          /* fail(): answer this JSON-RPC error */
  char *fail_message;     /* fail() */
  json_object *fail_data; /* fail(): the error's data, owned, may be NULL */
} call_result;

#endif
