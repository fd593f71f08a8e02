/* descriptor.c -- ABI and table validation of plugin descriptors. */
#include "config.h"

#include <stdio.h>

#include "descriptor.h"
#include "registry.h"

/* Bound on table entries, so a table missing its sentinel is refused
 * instead of read until a crash. */
#define DESCRIPTOR_MAX_ENTRIES 100000

int descriptor_check(const mcpd_plugin_descriptor *d, char *err,
                     size_t errlen) {
  if (d->abi_major != MCPD_ABI_MAJOR || d->abi_minor > MCPD_ABI_MINOR) {
    snprintf(err, errlen, "ABI %u.%u, host supports %u.0..%u.%u",
             (unsigned)d->abi_major, (unsigned)d->abi_minor, MCPD_ABI_MAJOR,
             MCPD_ABI_MAJOR, MCPD_ABI_MINOR);
    return -1;
  }
  if (d->size < offsetof(mcpd_plugin_descriptor, flags)) {
    snprintf(err, errlen,
             "descriptor size %u is smaller than ABI %u.%u "
             "allows",
             (unsigned)d->size, (unsigned)d->abi_major, (unsigned)d->abi_minor);
    return -1;
  }
  if (d->size >= offsetof(mcpd_plugin_descriptor, reserved) && d->flags != 0) {
    snprintf(err, errlen, "descriptor sets reserved flags 0x%x",
             (unsigned)d->flags);
    return -1;
  }
  for (size_t i = 0; i < sizeof(d->reserved) / sizeof(d->reserved[0]); i++)
    if (d->size >= offsetof(mcpd_plugin_descriptor, reserved) +
                       (i + 1) * sizeof(d->reserved[0]) &&
        d->reserved[i] != NULL) {
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

static int check_tools(const mcpd_plugin_descriptor *d,
                       descriptor_tool_cb tool_cb, void *arg, char *err,
                       size_t errlen) {
  size_t i;

  for (i = 0; d->tools && i < DESCRIPTOR_MAX_ENTRIES; i++) {
    const mcpd_tool *def = &d->tools[i];
    if (def->name == NULL && def->call == NULL)
      break;
    if (tool_cb(arg, def, err, errlen) != 0)
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
  for (size_t i = 0; d->resources && i < DESCRIPTOR_MAX_ENTRIES; i++) {
    const mcpd_resource *r = &d->resources[i];
    if (r->uri == NULL && r->name == NULL && r->read == NULL)
      break;
    if (r->uri == NULL || r->name == NULL || r->read == NULL) {
      snprintf(err, errlen,
               "resource %zu needs a uri, a name and a read "
               "callback",
               i);
      return -1;
    }
  }
  for (size_t i = 0; d->resource_templates && i < DESCRIPTOR_MAX_ENTRIES; i++) {
    const mcpd_resource_template *r = &d->resource_templates[i];
    if (r->uri_template == NULL && r->name == NULL && r->read == NULL)
      break;
    if (r->uri_template == NULL || r->name == NULL || r->read == NULL) {
      snprintf(err, errlen,
               "resource template %zu needs a uri_template, "
               "a name and a read callback",
               i);
      return -1;
    }
  }
  return 0;
}

static int check_prompts(const mcpd_plugin_descriptor *d, char *err,
                         size_t errlen) {
  for (size_t i = 0; d->prompts && i < DESCRIPTOR_MAX_ENTRIES; i++) {
    const mcpd_prompt *pr = &d->prompts[i];
    if (pr->name == NULL && pr->get == NULL)
      break;
    if (!registry_valid_name(pr->name) || pr->get == NULL) {
      snprintf(err, errlen,
               "prompt %zu needs a valid name and a get "
               "callback",
               i);
      return -1;
    }
    for (size_t k = 0; pr->arguments && k <= DESCRIPTOR_MAX_ENTRIES; k++) {
      const mcpd_prompt_argument *a = &pr->arguments[k];
      if (k == DESCRIPTOR_MAX_ENTRIES) {
        snprintf(err, errlen,
                 "prompt \"%s\": argument table has no end "
                 "sentinel",
                 pr->name);
        return -1;
      }
      if (a->name == NULL && a->title == NULL && a->description == NULL)
        break;
      if (a->name == NULL) {
        snprintf(err, errlen, "prompt \"%s\": argument %zu has no name",
                 pr->name, k);
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
