/* SPDX-License-Identifier: MIT */
/* result.h -- what a call answers: the builders plugins call (through
 * host_api.c), the checks a result passes, and the answer's JSON text.
 * Every builder takes a call that host_api.c resolved from its handle and
 * holds entered; each returns MCPD_OK or MCPD_ERROR with last_error set. */
#ifndef MCPD_RESULT_H
#define MCPD_RESULT_H

#include <stdarg.h>
#include <stddef.h>

#include "call_core.h"

/* Hooks of a call's life (see call_core.h). */
void result_setup(mcpd_call *c);
void result_free(mcpd_call *c);
/* Answers the call's request with its result, or the error it chose, or
 * an internal error when the result is not one. */
void result_answer(mcpd_call *c, request *r, int status);
/* Whether the call ended in failure: an error answer, a failed status or
 * a tool result with isError. */
int result_failed(mcpd_call *c, int status);

/* The builders of mcpd_host, one for one. */
int result_add_text(mcpd_call *c, const char *text);
int result_add_text_len(mcpd_call *c, const char *text, size_t len);
int result_add_image(mcpd_call *c, const char *data, const char *mime_type);
int result_add_audio(mcpd_call *c, const char *data, const char *mime_type);
int result_add_resource_link(mcpd_call *c, const char *uri, const char *name,
                             const char *description, const char *mime_type);
int result_add_resource_text(mcpd_call *c, const char *uri,
                             const char *mime_type, const char *text);
int result_add_resource_blob(mcpd_call *c, const char *uri,
                             const char *mime_type, const char *blob);
int result_set_structured(mcpd_call *c, json_object *value);
int result_set_json(mcpd_call *c, json_object *result);
/* result_textf() and result_error(): a formatted text block, marked an
 * error when `is_error`. */
int result_add_textf(mcpd_call *c, int is_error, const char *fmt, va_list ap);
int result_set_fail(mcpd_call *c, int code, const char *fmt, va_list ap);
int result_set_role(mcpd_call *c, const char *role);
int result_add_completion(mcpd_call *c, const char *value);
int result_set_completion_total(mcpd_call *c, size_t total, int has_more);

/* What a worker answered for a forwarded call: its result (`result` as a
 * tree, or NULL, and `text`, its checked JSON text, or NULL) or its
 * JSON-RPC `error`. */
void result_from_worker(mcpd_call *c, json_object *result, const char *text,
                        size_t len, json_object *error);
/* The call fails with JSON-RPC error `code` and `message` (taken over;
 * NULL reads as out of memory). */
void result_set_failure(mcpd_call *c, int code, char *message);

#endif
