/* SPDX-License-Identifier: MIT */
/* worker_settings.h -- what the host side of isolation (worker_link.c) reads:
 * what it passes on to each worker process, the largest message it takes
 * from one, and the per-plugin settings (config, limits).  Filled by
 * settings.c. */
#ifndef MCPD_WORKER_SETTINGS_H
#define MCPD_WORKER_SETTINGS_H

#include <stddef.h>

#include "plugin_settings.h"

typedef struct worker_settings {
  size_t max_message; /* the largest line a worker may send */
  size_t threads;     /* --threads, passed on */
  int log_level;      /* --log-level, passed on */
  int log_json;       /* --log-format json, passed on */
  int allow_insecure; /* --allow-insecure-plugins, passed on: the worker
                         checks the file again as it opens it */
  const plugin_settings *plugins;
} worker_settings;

#endif
