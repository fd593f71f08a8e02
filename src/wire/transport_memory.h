/* SPDX-License-Identifier: MIT */
/* transport_memory.h -- a transport that keeps messages in memory.
 *
 * `mcpd --list` and `--call` talk to the server through it, as the unit
 * tests do: the owner hands whole messages to the session it opened, and
 * every message the session writes back is kept as text, in order, and
 * announced through an optional callback. */
#ifndef MCPD_TRANSPORT_MEMORY_H
#define MCPD_TRANSPORT_MEMORY_H

#include <stddef.h>

#include <json-c/json.h>

typedef struct memory_transport {
  char **msgs; /* every message written, NUL-terminated, oldest first */
  size_t n;
  size_t cap;
  /* Runs after each message is kept; may be NULL. */
  void (*written)(void *arg, const char *text, size_t len);
  void *arg;
} memory_transport;

void memory_transport_init(memory_transport *t,
                           void (*written)(void *arg, const char *text,
                                           size_t len),
                           void *arg);
/* A session_write_fn; `ctx` is the transport.  Out of memory, the message
 * is dropped with a log line. */
void memory_transport_write(void *ctx, json_object *related, int answer,
                            int code, const char *const *parts,
                            const size_t *lens, int n);
/* Forgets every kept message. */
void memory_transport_clear(memory_transport *t);
void memory_transport_free(memory_transport *t);

#endif
