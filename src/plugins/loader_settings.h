/* SPDX-License-Identifier: MIT */
/* loader_settings.h -- what the plugin loader reads: the directories it
 * scans, how strict it is about their owners, and the per-plugin settings
 * (isolation, configs).  Filled by settings.c. */
#ifndef MCPD_LOADER_SETTINGS_H
#define MCPD_LOADER_SETTINGS_H

#include <stddef.h>

#include "plugin_settings.h"

typedef struct loader_settings {
  char **plugin_dirs; /* owned strings */
  size_t n_plugin_dirs;
  /* 0: the default path; 1: --plugins; 2: "pluginDirs" of the config. */
  int plugin_dirs_given;
  int allow_insecure; /* load plugins that other users can write */
  const plugin_settings *plugins;
} loader_settings;

#endif
