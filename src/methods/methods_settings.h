/* methods_settings.h -- what the MCP methods (methods.c) read from the
 * settings.  Filled by settings.c. */
#ifndef MCPD_METHODS_SETTINGS_H
#define MCPD_METHODS_SETTINGS_H

#include <stddef.h>

typedef struct methods_settings {
  const char *instructions; /* borrowed from the config; may be NULL */
  size_t page_size;         /* items per list page */
} methods_settings;

#endif
