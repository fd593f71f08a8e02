/* descriptor.h -- decides whether the descriptor a plugin exports is one
 * this host can use.
 *
 * A descriptor is read straight out of a freshly mapped image, so nothing
 * in it is trusted: its ABI version and size say which fields exist at
 * all, reserved fields must be empty so that a later minor can give them
 * a meaning, and every table must end with its sentinel within a bound,
 * so that a table missing one is refused instead of read until a crash.
 * Nothing here knows which other plugins are loaded; names that must be
 * unique among them are the loader's business. */
#ifndef MCPD_DESCRIPTOR_H
#define MCPD_DESCRIPTOR_H

#include <stddef.h>

#include "mcpd.h"

/* Checks the ABI version, the size, the reserved fields, the name and the
 * version.  Returns -1 with a reason in `err`. */
int descriptor_check(const mcpd_plugin_descriptor *d, char *err, size_t errlen);

/* Gets each entry of the tool table in order; returns -1 with a reason in
 * `err` to refuse the plugin. */
typedef int (*descriptor_tool_cb)(void *arg, const mcpd_tool *def, char *err,
                                  size_t errlen);

/* Walks the tool table through `tool_cb`, which validates and keeps each
 * entry, then checks the resource, resource template and prompt tables.
 * Call only after descriptor_check() accepted `d`.  Returns -1 with a
 * reason in `err`. */
int descriptor_check_tables(const mcpd_plugin_descriptor *d,
                            descriptor_tool_cb tool_cb, void *arg, char *err,
                            size_t errlen);

#endif
