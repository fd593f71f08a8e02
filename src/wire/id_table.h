/* SPDX-License-Identifier: MIT */
/* id_table.h -- values by JSON-RPC request id (an integer or a string).
 *
 * Open addressing with the hash stored beside each key and deletions that
 * shift the following entries back, so no tombstone is left.  json-c's
 * lh_table leaves one per deletion and compares keys without their hash:
 * under a steady stream of requests in flight, a lookup of an absent id
 * came to compare every live one. */
#ifndef MCPD_ID_TABLE_H
#define MCPD_ID_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

typedef struct id_slot {
  uint64_t hash;
  json_object *id; /* borrowed; NULL: empty */
  void *value;
} id_slot;

typedef struct id_table {
  id_slot *slots;
  size_t cap; /* a power of two, or 0 */
  size_t count;
} id_table;

/* The hash of an id, the same for equal ids. */
uint64_t id_hash(json_object *id);
/* Whether two ids are the same: the same type and value. */
int id_same(json_object *a, json_object *b);

/* Zeroed, a table is empty and ready. */
void id_table_free(id_table *t);
/* The value for `id`, or NULL. */
void *id_table_get(const id_table *t, json_object *id);
/* Adds `id` (the caller keeps it alive while it is in the table), which
 * must not be there yet.  0, or -1 when out of memory. */
int id_table_put(id_table *t, json_object *id, void *value);
/* Removes `id`, if it is there. */
void id_table_remove(id_table *t, json_object *id);

#endif
