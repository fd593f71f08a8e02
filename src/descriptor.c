/* descriptor.c -- ABI and table validation of plugin descriptors. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

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

/* Copies element `i` of a table whose elements are `size` bytes into `out`
 * (the host's `out_size`): fields the plugin's size does not cover read as
 * zero. */
static void element(const void *table, size_t size, size_t i, void *out,
                    size_t out_size) {
  memset(out, 0, out_size);
  memcpy(out, (const char *)table + i * size,
         size < out_size ? size : out_size);
}

/* Whether every reserved slot is NULL. */
static int reserved_clear(void *const *reserved, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (reserved[i] != NULL)
      return 0;
  return 1;
}

#define RESERVED_CLEAR(entry)                                                  \
  reserved_clear((entry).reserved,                                             \
                 sizeof((entry).reserved) / sizeof((entry).reserved[0]))

static int check_tools(const mcpd_plugin_descriptor *d,
                       descriptor_tool_cb tool_cb, void *arg, char *err,
                       size_t errlen) {
  size_t i;

  for (i = 0; d->tools && i < DESCRIPTOR_MAX_ENTRIES; i++) {
    mcpd_tool def;
    element(d->tools, d->tool_size, i, &def, sizeof(def));
    if (def.name == NULL && def.call == NULL)
      break;
    if (tool_cb(arg, &def, err, errlen) != 0)
      return -1;
  }
  if (i == DESCRIPTOR_MAX_ENTRIES) {
    snprintf(err, errlen, "tool table has no end sentinel");
    return -1;
  }
  return 0;
}

static int check_resources(const mcpd_plugin_descriptor *d, char *err,
                           size_t errlen) {
  for (size_t i = 0; d->resources && i <= DESCRIPTOR_MAX_ENTRIES; i++) {
    if (i == DESCRIPTOR_MAX_ENTRIES) {
      snprintf(err, errlen, "resource table has no end sentinel");
      return -1;
    }
    mcpd_resource r;
    element(d->resources, d->resource_size, i, &r, sizeof(r));
    if (r.uri == NULL && r.name == NULL && r.read == NULL)
      break;
    if (r.uri == NULL || r.name == NULL || r.read == NULL) {
      snprintf(err, errlen,
               "resource %zu needs a uri, a name and a read "
               "callback",
               i);
      return -1;
    }
    if (!RESERVED_CLEAR(r)) {
      snprintf(err, errlen, "resource \"%s\" sets reserved fields", r.uri);
      return -1;
    }
  }
  for (size_t i = 0; d->resource_templates && i <= DESCRIPTOR_MAX_ENTRIES;
       i++) {
    if (i == DESCRIPTOR_MAX_ENTRIES) {
      snprintf(err, errlen, "resource template table has no end sentinel");
      return -1;
    }
    mcpd_resource_template r;
    element(d->resource_templates, d->resource_template_size, i, &r, sizeof(r));
    if (r.uri_template == NULL && r.name == NULL && r.read == NULL)
      break;
    if (r.uri_template == NULL || r.name == NULL || r.read == NULL) {
      snprintf(err, errlen,
               "resource template %zu needs a uri_template, "
               "a name and a read callback",
               i);
      return -1;
    }
    if (!RESERVED_CLEAR(r)) {
      snprintf(err, errlen, "resource template \"%s\" sets reserved fields",
               r.uri_template);
      return -1;
    }
  }
  return 0;
}

static int check_prompts(const mcpd_plugin_descriptor *d, char *err,
                         size_t errlen) {
  for (size_t i = 0; d->prompts && i <= DESCRIPTOR_MAX_ENTRIES; i++) {
    if (i == DESCRIPTOR_MAX_ENTRIES) {
      snprintf(err, errlen, "prompt table has no end sentinel");
      return -1;
    }
    mcpd_prompt pr;
    element(d->prompts, d->prompt_size, i, &pr, sizeof(pr));
    if (pr.name == NULL && pr.get == NULL)
      break;
    if (!registry_valid_name(pr.name) || pr.get == NULL) {
      snprintf(err, errlen,
               "prompt %zu needs a valid name and a get "
               "callback",
               i);
      return -1;
    }
    if (!RESERVED_CLEAR(pr)) {
      snprintf(err, errlen, "prompt \"%s\" sets reserved fields", pr.name);
      return -1;
    }
    for (size_t k = 0; pr.arguments && k <= DESCRIPTOR_MAX_ENTRIES; k++) {
      mcpd_prompt_argument a;
      if (k == DESCRIPTOR_MAX_ENTRIES) {
        snprintf(err, errlen,
                 "prompt \"%s\": argument table has no end "
                 "sentinel",
                 pr.name);
        return -1;
      }
      element(pr.arguments, d->prompt_argument_size, k, &a, sizeof(a));
      if (a.name == NULL && a.title == NULL && a.description == NULL)
        break;
      if (a.name == NULL) {
        snprintf(err, errlen, "prompt \"%s\": argument %zu has no name",
                 pr.name, k);
        return -1;
      }
      if (!RESERVED_CLEAR(a)) {
        snprintf(err, errlen,
                 "prompt \"%s\": argument \"%s\" sets reserved fields", pr.name,
                 a.name);
        return -1;
      }
    }
  }
  return 0;
}

int descriptor_check_tables(const mcpd_plugin_descriptor *d,
                            descriptor_tool_cb tool_cb, void *arg, char *err,
                            size_t errlen) {
  if (check_tools(d, tool_cb, arg, err, errlen) != 0 ||
      check_resources(d, err, errlen) != 0 ||
      check_prompts(d, err, errlen) != 0)
    return -1;
  return 0;
}
