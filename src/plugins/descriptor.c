/* SPDX-License-Identifier: MIT */
/* descriptor.c -- ABI and table validation of plugin descriptors. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>

#include "descriptor.h"
#include "registry.h"

/* Bound on table entries: a table missing its sentinel is refused with a
 * clear reason when memory past it happens to be readable (often it is
 * not, and the read crashes first; nothing can tell the end of an array
 * the plugin did not mark). */
#define DESCRIPTOR_MAX_ENTRIES 100000

/* The size of a table element (or the descriptor) in ABI 1.0: everything
 * up to the end of its reserved slots.  Fields a later minor appends come
 * after them, so these stay the 1.0 sizes for good. */
#define SIZE_1_0(type)                                                         \
  (offsetof(type, reserved) + sizeof(((type *)0)->reserved))

/* Checks one recorded element size against what ABI 1.0 requires and what
 * this host knows. */
static int check_size(const char *what, size_t size, size_t min, size_t max,
                      char *err, size_t errlen) {
  if (size < min || size > max) {
    snprintf(err, errlen,
             "%s size %zu is not what ABI %u.x allows (%zu..%zu); rebuild "
             "the plugin against this mcpd.h",
             what, size, MCPD_ABI_MAJOR, min, max);
    return -1;
  }
  return 0;
}

int descriptor_check(const mcpd_plugin_descriptor *d, char *err,
                     size_t errlen) {
  if (d->abi_major != MCPD_ABI_MAJOR || d->abi_minor > MCPD_ABI_MINOR) {
    snprintf(err, errlen, "ABI %u.%u, host supports %u.0..%u.%u",
             (unsigned)d->abi_major, (unsigned)d->abi_minor, MCPD_ABI_MAJOR,
             MCPD_ABI_MAJOR, MCPD_ABI_MINOR);
    return -1;
  }
  if (check_size("descriptor", d->size, SIZE_1_0(mcpd_plugin_descriptor),
                 sizeof(*d), err, errlen) != 0 ||
      check_size("tool", d->tool_size, SIZE_1_0(mcpd_tool), sizeof(mcpd_tool),
                 err, errlen) != 0 ||
      check_size("resource", d->resource_size, SIZE_1_0(mcpd_resource),
                 sizeof(mcpd_resource), err, errlen) != 0 ||
      check_size("resource template", d->resource_template_size,
                 SIZE_1_0(mcpd_resource_template),
                 sizeof(mcpd_resource_template), err, errlen) != 0 ||
      check_size("prompt", d->prompt_size, SIZE_1_0(mcpd_prompt),
                 sizeof(mcpd_prompt), err, errlen) != 0 ||
      check_size("prompt argument", d->prompt_argument_size,
                 SIZE_1_0(mcpd_prompt_argument), sizeof(mcpd_prompt_argument),
                 err, errlen) != 0)
    return -1;
  if (d->flags != 0) {
    snprintf(err, errlen, "descriptor sets reserved flags 0x%x",
             (unsigned)d->flags);
    return -1;
  }
  for (size_t i = 0; i < 3; i++)
    if (d->reserved_size[i] != 0) {
      snprintf(err, errlen, "descriptor sets reserved size field %zu", i);
      return -1;
    }
  for (size_t i = 0; i < sizeof(d->reserved) / sizeof(d->reserved[0]); i++)
    if (d->reserved[i] != NULL) {
      snprintf(err, errlen, "descriptor sets reserved field %zu", i);
      return -1;
    }
  if (!registry_valid_name(d->name)) {
    snprintf(err, errlen,
             "plugin name is missing or invalid (1-64 "
             "characters of A-Z a-z 0-9 _ . -)");
    return -1;
  }
  if (d->version == NULL) {
    snprintf(err, errlen, "plugin \"%s\" has no version", d->name);
    return -1;
  }
  return 0;
}

/* Walks one table: copies each element (of the plugin's size) into `out`
 * and hands it to `visit` until the sentinel.  `is_end` tells the
 * sentinel from an entry. */
static int walk(const char *what, const void *table, size_t size, void *out,
                size_t out_size, int (*is_end)(const void *),
                int (*visit)(void *arg, const void *def, char *err,
                             size_t errlen),
                void *arg, char *err, size_t errlen) {
  for (size_t i = 0; table != NULL; i++) {
    if (i == DESCRIPTOR_MAX_ENTRIES) {
      snprintf(err, errlen, "%s table has no end sentinel", what);
      return -1;
    }
    reg_element(out, out_size, table, size, i);
    if (is_end(out))
      return 0;
    if (visit(arg, out, err, errlen) != 0)
      return -1;
  }
  return 0;
}

/* An entry ends its table only when the fields every entry needs are all
 * NULL; one of them missing is an error the visitor reports. */
static int tool_end(const void *p) {
  const mcpd_tool *t = p;
  return t->name == NULL && t->call == NULL;
}

static int resource_end(const void *p) {
  const mcpd_resource *r = p;
  return r->uri == NULL && r->name == NULL && r->read == NULL;
}

static int template_end(const void *p) {
  const mcpd_resource_template *r = p;
  return r->uri_template == NULL && r->name == NULL && r->read == NULL;
}

static int prompt_end(const void *p) {
  const mcpd_prompt *r = p;
  return r->name == NULL && r->get == NULL;
}

int descriptor_check_tables(const mcpd_plugin_descriptor *d,
                            const descriptor_visitor *v, char *err,
                            size_t errlen) {
  mcpd_tool tool;
  mcpd_resource resource;
  mcpd_resource_template tmpl;
  mcpd_prompt prompt;

  if (walk("tool", d->tools, d->tool_size, &tool, sizeof(tool), tool_end,
           v->tool, v->arg, err, errlen) != 0 ||
      walk("resource", d->resources, d->resource_size, &resource,
           sizeof(resource), resource_end, v->resource, v->arg, err,
           errlen) != 0 ||
      walk("resource template", d->resource_templates,
           d->resource_template_size, &tmpl, sizeof(tmpl), template_end,
           v->resource_template, v->arg, err, errlen) != 0 ||
      walk("prompt", d->prompts, d->prompt_size, &prompt, sizeof(prompt),
           prompt_end, v->prompt, v->arg, err, errlen) != 0)
    return -1;
  return 0;
}
