/* SPDX-License-Identifier: MIT */
/* registry.h -- everything mcpd offers, by kind and key, in a stable order.
 *
 * The registry is the single source of truth for the four lists a client
 * can ask for -- tools, resources, resource templates, prompts -- and the
 * O(1) lookup behind tools/call, resources/read and prompts/get.  It lives
 * on the loop thread.  Entries are reference counted: the registry holds
 * one reference and every call in flight holds another, so an entry
 * removed while it serves a call stays valid until that call ends.
 *
 * An entry copies everything it needs from the plugin's table entry (its
 * listing, names, schemas), so a run-time entry may come from the stack. */
#ifndef MCPD_REGISTRY_H
#define MCPD_REGISTRY_H

#include <stddef.h>

#include <json-c/json.h>

#include "mcpd.h"
#include "uritpl.h"

struct plugin;

typedef enum reg_kind {
  REG_TOOL = 0,
  REG_RESOURCE,
  REG_TEMPLATE,
  REG_PROMPT,
  REG_KINDS
} reg_kind;

/* The bit of registry.changed that says the list of `kind` changed. */
#define REGISTRY_CHANGED(kind) (1u << (kind))
#define REGISTRY_TOOLS REGISTRY_CHANGED(REG_TOOL)

typedef struct reg_entry {
  reg_kind kind;
  /* The key: a tool or prompt name, a resource URI, a URI template. */
  char *name;
  json_object *listing; /* the entry of its list, owned */
  struct plugin *owner;
  void *data; /* the entry's, for mcpd_request.data */
  /* A tool's latency series (metrics.h), found at its first call. */
  struct metrics_series *metrics;
  int exec;   /* mcpd_exec of its callbacks */
  int remote; /* served by a worker process: no callbacks in this one */
  unsigned refs;
  size_t index; /* position in its table while registered */

  /* tools */
  mcpd_tool_cb cb;
  json_object *input_schema;  /* owned */
  json_object *output_schema; /* owned, may be NULL */
  int task_support;           /* mcpd_task_support */
  int task_start;             /* mcpd_task_start */
  /* resources and templates */
  mcpd_read_cb read;
  mcpd_subscribe_cb subscribe;
  char *mime_type; /* may be NULL */
  uritpl *tpl;     /* templates */
  /* templates and prompts */
  mcpd_complete_cb complete;
  /* prompts */
  mcpd_prompt_cb get;
  char *description;  /* for prompts/get, may be NULL */
  char **arguments;   /* argument names, in order */
  char *required;     /* per argument: nonzero when required */
  size_t n_arguments; /* template variables are in `tpl` */
} reg_entry;

typedef reg_entry reg_tool;

/* A tool listing's _meta key that says it becomes a task only when its
 * callback asks (MCPD_TASK_ON_REQUEST), so an isolated plugin's host
 * knows it too; a client may read it as a hint. */
#define REG_TASK_START_META "io.mcpd/taskStart"

/* One kind's entries. */
typedef struct reg_table {
  struct lh_table *by_name;
  reg_entry **order;
  size_t count;
  size_t cap;
} reg_table;

/* Whether entries of owner `a` are listed before those of `b`. */
typedef int (*reg_order_fn)(const struct plugin *a, const struct plugin *b);

typedef struct registry {
  reg_table tables[REG_KINDS];
  unsigned changed;    /* REGISTRY_CHANGED bits since the last announcement */
  reg_order_fn before; /* NULL: in the order added */
} registry;

/* Whether a name matches ^[A-Za-z0-9_.-]{1,64}$. */
int registry_valid_name(const char *name);
/* Whether `uri` is an absolute URI: scheme ":" and more, no spaces or
 * control characters, at most 8 KiB. */
int registry_valid_uri(const char *uri);

/* Copies element `i` of a plugin's table, whose elements are `size` bytes
 * (the size the plugin recorded), into the host's `out` of `out_size`
 * bytes: fields the plugin's size does not cover read as zero.  How every
 * table entry, run-time entry and prompt argument is read. */
void reg_element(void *out, size_t out_size, const void *table, size_t size,
                 size_t i);

int registry_init(registry *r);
void registry_free(registry *r);

/* Each validates a table entry and builds an unregistered entry (refs =
 * 1).  Pure: safe on any thread.  NULL with a reason in `err`. */
reg_entry *reg_tool_new(const mcpd_tool *def, struct plugin *owner, char *err,
                        size_t errlen);
reg_entry *reg_resource_new(const mcpd_resource *def, struct plugin *owner,
                            char *err, size_t errlen);
reg_entry *reg_template_new(const mcpd_resource_template *def,
                            struct plugin *owner, char *err, size_t errlen);
/* `arg_size` is the plugin's sizeof(mcpd_prompt_argument). */
reg_entry *reg_prompt_new(const mcpd_prompt *def, size_t arg_size,
                          struct plugin *owner, char *err, size_t errlen);
/* An entry served by a worker process, from its list item (a tool, a
 * resource, a template or a prompt as tools/list etc. list it); it has
 * no callbacks and `remote` set. */
reg_entry *reg_entry_remote(reg_kind kind, json_object *item,
                            struct plugin *owner, char *err, size_t errlen);
reg_entry *reg_entry_ref(reg_entry *e);
void reg_entry_release(reg_entry *e);
/* "tool", "resource", "resource template", "prompt". */
const char *reg_kind_name(reg_kind kind);

reg_entry *registry_find(registry *r, reg_kind kind, const char *name);
size_t registry_count(registry *r, reg_kind kind);
reg_entry *registry_at(registry *r, reg_kind kind, size_t i);
/* Takes over the caller's reference.  Returns -1 (and keeps nothing) when
 * the key is taken. */
int registry_add(registry *r, reg_entry *e);
/* Lists each kind by owner in `before`'s order (entries of one owner in
 * the order added), whenever they were added.  Set it while empty. */
void registry_set_order(registry *r, reg_order_fn before);
/* Drops the registry's reference.  Returns -1 when absent. */
int registry_remove(registry *r, reg_entry *e);
/* Removes every entry `owner` registered; returns how many. */
size_t registry_remove_owner(registry *r, struct plugin *owner);

/* A page of `kind`'s list entries starting at `offset`; *next is the
 * offset of the next page or 0 when this was the last. */
json_object *registry_list(registry *r, reg_kind kind, size_t offset,
                           size_t limit, size_t *next);

/* The first template, in listing order, that `uri` matches; *vars gets
 * the matched variables (a new object).  NULL when none does. */
reg_entry *registry_match(registry *r, const char *uri, json_object **vars);

#endif
