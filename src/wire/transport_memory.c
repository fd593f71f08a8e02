/* SPDX-License-Identifier: MIT */
/* transport_memory.c -- a transport that keeps messages in memory. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "transport_memory.h"

void memory_transport_init(memory_transport *t,
                           void (*written)(void *arg, const char *text,
                                           size_t len),
                           void *arg) {
  memset(t, 0, sizeof(*t));
  t->written = written;
  t->arg = arg;
}

void memory_transport_write(void *ctx, json_object *related, int answer,
                            int code, const char *const *parts,
                            const size_t *lens, int n) {
  memory_transport *t = ctx;
  size_t total = 0, off = 0;
  char *text;

  (void)related, (void)answer, (void)code;
  for (int i = 0; i < n; i++)
    total += lens[i];
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    char **msgs = realloc(t->msgs, cap * sizeof(*msgs));
    if (msgs == NULL)
      goto oom;
    t->msgs = msgs;
    t->cap = cap;
  }
  if ((text = malloc(total + 1)) == NULL)
    goto oom;
  for (int i = 0; i < n; i++) {
    memcpy(text + off, parts[i], lens[i]);
    off += lens[i];
  }
  text[total] = '\0';
  t->msgs[t->n++] = text;
  if (t->written != NULL)
    t->written(t->arg, text, total);
  return;
oom:
  log_error("out of memory keeping a %zu-byte message; dropped", total);
}

void memory_transport_clear(memory_transport *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->msgs[i]);
  t->n = 0;
}

void memory_transport_free(memory_transport *t) {
  memory_transport_clear(t);
  free(t->msgs);
  t->msgs = NULL;
  t->cap = 0;
}
