/* SPDX-License-Identifier: MIT */
/* methods_settings.h -- what the MCP methods (methods.c) read from the
 * settings.  Filled by settings.c. */
#ifndef MCPD_METHODS_SETTINGS_H
#define MCPD_METHODS_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

typedef struct methods_settings {
  const char *instructions; /* borrowed from the config; may be NULL */
  size_t page_size;         /* items per list page */
  /* Tasks: how many are kept at once, in all and per identity; the
   * longest TTL a client may ask for (and the one it gets when it asks
   * for none); the prefix of task ids (--session-prefix). */
  size_t max_tasks;
  size_t max_tasks_each;
  uint64_t task_ttl_ms;
  const char *task_prefix;
} methods_settings;

#endif
