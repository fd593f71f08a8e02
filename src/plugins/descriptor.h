/* SPDX-License-Identifier: MIT */
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

/* What descriptor_check_tables() hands each entry to, in table order:
 * the entry copied at the host's size (fields the plugin's size does not
 * cover read as zero).  A visitor validates and keeps the entry, or
 * returns -1 with a reason in `err` to refuse the plugin.  Each `def`
 * points to the matching mcpd_* struct. */
typedef struct descriptor_visitor {
  int (*tool)(void *arg, const void *def, char *err, size_t errlen);
  int (*resource)(void *arg, const void *def, char *err, size_t errlen);
  int (*resource_template)(void *arg, const void *def, char *err,
                           size_t errlen);
  int (*prompt)(void *arg, const void *def, char *err, size_t errlen);
  void *arg;
} descriptor_visitor;

/* Walks the tool, resource, resource template and prompt tables through
 * `v`, each up to its sentinel within a bound.  Call only after
 * descriptor_check() accepted `d`.  Returns -1 with a reason in `err`. */
int descriptor_check_tables(const mcpd_plugin_descriptor *d,
                            const descriptor_visitor *v, char *err,
                            size_t errlen);

#endif
