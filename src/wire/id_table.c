/* SPDX-License-Identifier: MIT */
/* id_table.c -- values by JSON-RPC request id.  See id_table.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "id_table.h"

uint64_t id_hash(json_object *id) {
  uint64_t h = 1469598103934665603ull;
  if (json_object_is_type(id, json_type_int)) {
    h ^= (uint64_t)json_object_get_int64(id);
    h *= 1099511628211ull;
  } else {
    const char *s = json_object_get_string(id);
    int n = json_object_get_string_len(id);
    h ^= 's';
    for (int i = 0; i < n; i++) {
      h ^= (unsigned char)s[i];
      h *= 1099511628211ull;
    }
  }
  return h ^ (h >> 29);
}

int id_same(json_object *a, json_object *b) {
  json_type ta = json_object_get_type(a);
  if (ta != json_object_get_type(b))
    return 0;
  if (ta == json_type_int)
    return json_object_get_int64(a) == json_object_get_int64(b);
  if (ta == json_type_string)
    return json_object_get_string_len(a) == json_object_get_string_len(b) &&
           memcmp(json_object_get_string(a), json_object_get_string(b),
                  (size_t)json_object_get_string_len(a)) == 0;
  return json_object_equal(a, b);
}

void id_table_free(id_table *t) {
  free(t->slots);
  memset(t, 0, sizeof(*t));
}

/* The slot holding `id`, or the empty one where it would go. */
static id_slot *find(const id_table *t, json_object *id, uint64_t h) {
  size_t mask = t->cap - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    id_slot *s = &t->slots[i];
    if (s->id == NULL || (s->hash == h && id_same(s->id, id)))
      return s;
  }
}

void *id_table_get(const id_table *t, json_object *id) {
  id_slot *s;
  if (t->count == 0)
    return NULL;
  s = find(t, id, id_hash(id));
  return s->id != NULL ? s->value : NULL;
}

static int grow(id_table *t) {
  size_t cap = t->cap ? t->cap * 2 : 16;
  id_slot *old = t->slots, *slots = calloc(cap, sizeof(*slots));
  size_t n = t->cap;

  if (slots == NULL)
    return -1;
  t->slots = slots;
  t->cap = cap;
  for (size_t i = 0; i < n; i++)
    if (old[i].id != NULL)
      *find(t, old[i].id, old[i].hash) = old[i];
  free(old);
  return 0;
}

int id_table_put(id_table *t, json_object *id, void *value) {
  uint64_t h = id_hash(id);
  id_slot *s;

  /* At most half full: probes stay short. */
  if ((t->count + 1) * 2 > t->cap && grow(t) != 0)
    return -1;
  s = find(t, id, h);
  s->hash = h;
  s->id = id;
  s->value = value;
  t->count++;
  return 0;
}

void id_table_remove(id_table *t, json_object *id) {
  size_t mask = t->cap - 1, i, j;
  id_slot *s;

  if (t->count == 0)
    return;
  s = find(t, id, id_hash(id));
  if (s->id == NULL)
    return;
  /* Shift back each following entry that may take the freed slot: one
   * whose home is not cyclically within (i, j]. */
  i = (size_t)(s - t->slots);
  for (j = (i + 1) & mask; t->slots[j].id != NULL; j = (j + 1) & mask) {
    size_t home = (size_t)t->slots[j].hash & mask;
    if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
      continue;
    t->slots[i] = t->slots[j];
    i = j;
  }
  t->slots[i].id = NULL;
  t->count--;
}
