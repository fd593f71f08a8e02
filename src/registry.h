/* registry.h -- everything mcpd offers, by name, in a stable order.
 *
 * The registry is the single source of truth for tools/list and the O(1)
 * lookup behind tools/call.  It lives on the loop thread.  Entries are
 * reference counted: the registry holds one reference and every call in
 * flight holds another, so a tool removed while it runs stays valid until
 * its call ends. */
#ifndef MCPD_REGISTRY_H
#define MCPD_REGISTRY_H

#include <stddef.h>

#include <json-c/json.h>

#include "mcpd.h"

struct plugin;

/* The bit of registry.changed that says the tool list changed. */
#define REGISTRY_TOOLS 0x1u

typedef struct reg_tool {
  char *name;
  mcpd_tool_cb cb;
  void *data; /* the entry's, for mcpd_request.data */
  int exec;
  json_object *input_schema;  /* owned */
  json_object *output_schema; /* owned, may be NULL */
  json_object *listing;       /* the tools/list entry, owned */
  struct plugin *owner;
  unsigned refs;
  size_t index; /* position in registry.order while registered */
} reg_tool;

typedef struct registry {
  struct lh_table *by_name;
  reg_tool **order;
  size_t count;
  size_t cap;
  unsigned changed; /* REGISTRY_* bits since the last announcement */
} registry;

/* Whether a name matches ^[A-Za-z0-9_.-]{1,64}$. */
int registry_valid_name(const char *name);

int registry_init(registry *r);
void registry_free(registry *r);

/* Validates a table entry and builds an unregistered tool (refs = 1).
 * Pure: safe on any thread.  Returns NULL with a reason in `err`. */
reg_tool *reg_tool_new(const mcpd_tool *def, struct plugin *owner, char *err,
                       size_t errlen);
reg_tool *reg_tool_ref(reg_tool *t);
void reg_tool_release(reg_tool *t);

reg_tool *registry_find(registry *r, const char *name);
/* Takes over the caller's reference.  Returns -1 (and keeps nothing) when
 * the name is taken. */
int registry_add(registry *r, reg_tool *t);
/* Drops the registry's reference.  Returns -1 when absent. */
int registry_remove(registry *r, reg_tool *t);
/* Removes every tool `owner` registered; returns how many. */
size_t registry_remove_owner(registry *r, struct plugin *owner);

/* A page of tools/list entries starting at `offset`; *next is the offset
 * of the next page or 0 when this was the last. */
json_object *registry_list_tools(registry *r, size_t offset, size_t limit,
                                 size_t *next);

#endif
