/* SPDX-License-Identifier: MIT */
/* handles.c -- handles that stay safe to use after what they name is gone. */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "handles.h"

/* A slot is 80 bytes and every slot of a chunk is written when the chunk
 * is added: small chunks keep a server with a few calls in flight at a few
 * pages (64 in flight fill one or two). */
#define CHUNK_SLOTS 64
/* Chunks are never moved or freed, so a handle resolves without the table
 * lock.  Their addresses sit in blocks of BLOCK_CHUNKS, reached from a
 * short static directory: 16384 chunks, about a million calls in flight at
 * once, while a small server touches one block and a few words of static
 * data (a flat array of 16384 pointers would spread the statics that
 * follow it over pages of their own). */
#define BLOCK_CHUNKS 128
#define MAX_BLOCKS 128
#define MAX_CHUNKS (BLOCK_CHUNKS * MAX_BLOCKS)
/* Slot numbers take the low half of a handle, generations the high half. */
#define HALF_BITS (sizeof(uintptr_t) * 4)
#define LOW_MASK (((uintptr_t)1 << HALF_BITS) - 1)

struct handle_slot {
  uv_mutex_t lock;
  uintptr_t generation; /* bumped on every remove */
  void *object;         /* NULL while free */
  const char *owner;    /* an owner_name's, or "" */
  size_t index;
  handle_slot *next_free;
};

/* An owner's name, kept for good: a stale handle of a plugin long gone
 * still finds it, and a slot holds a pointer rather than a copy (80 bytes
 * a slot instead of 144).  There are as many as distinct names were ever
 * given, which is about the number of plugins. */
typedef struct owner_name {
  struct owner_name *next;
  char name[];
} owner_name;

typedef _Atomic(handle_slot *) chunk_ref;

/* Growth and the free list belong to the one thread that adds and removes
 * handles (the loop); other threads only resolve them. */
static struct {
  size_t n_chunks;
  handle_slot *free_head, *free_tail; /* oldest first */
  owner_name *names, *last;           /* last: the one added last */
  _Atomic(chunk_ref *) blocks[MAX_BLOCKS];
} table;

/* Adds a chunk of free slots. */
static int grow(void) {
  size_t base = table.n_chunks * CHUNK_SLOTS;
  chunk_ref *block;
  handle_slot *chunk;

  if (table.n_chunks == MAX_CHUNKS || base + CHUNK_SLOTS > LOW_MASK)
    return -1;
  block = atomic_load(&table.blocks[table.n_chunks / BLOCK_CHUNKS]);
  if (block == NULL) {
    if ((block = calloc(BLOCK_CHUNKS, sizeof(*block))) == NULL)
      return -1;
    atomic_store(&table.blocks[table.n_chunks / BLOCK_CHUNKS], block);
  }
  if ((chunk = calloc(CHUNK_SLOTS, sizeof(*chunk))) == NULL)
    return -1;
  for (size_t i = 0; i < CHUNK_SLOTS; i++) {
    if (uv_mutex_init(&chunk[i].lock) != 0)
      abort();
    chunk[i].index = base + i;
    chunk[i].generation = 1;
    chunk[i].owner = "";
    if (table.free_tail != NULL)
      table.free_tail->next_free = &chunk[i];
    else
      table.free_head = &chunk[i];
    table.free_tail = &chunk[i];
  }
  atomic_store(&block[table.n_chunks % BLOCK_CHUNKS], chunk);
  table.n_chunks++;
  return 0;
}

static uintptr_t handle_of(const handle_slot *s) {
  return ((s->generation & LOW_MASK) << HALF_BITS) | (s->index + 1);
}

/* The kept copy of the first `len` bytes of `owner`, or NULL when out of
 * memory.  The same plugin adds handle after handle, so the last name
 * comes first.  A kept name may be shorter than `len`: strncmp() stops at
 * its end, where memcmp() would read past it. */
static const char *owner_of(const char *owner, size_t len) {
  owner_name *n = table.last;

  if (len == 0)
    return "";
  if (n == NULL || strncmp(n->name, owner, len) != 0 || n->name[len] != '\0')
    for (n = table.names; n != NULL; n = n->next)
      if (strncmp(n->name, owner, len) == 0 && n->name[len] == '\0')
        break;
  if (n == NULL) {
    if ((n = malloc(sizeof(*n) + len + 1)) == NULL)
      return NULL;
    memcpy(n->name, owner, len);
    n->name[len] = '\0';
    n->next = table.names;
    table.names = n;
  }
  table.last = n;
  return n->name;
}

uintptr_t handles_add(void *object, const char *owner) {
  size_t len = owner != NULL ? strnlen(owner, HANDLES_OWNER_MAX) : 0;
  const char *name = owner_of(owner, len);
  handle_slot *s;

  if (name == NULL || (table.free_head == NULL && grow() != 0))
    return 0;
  s = table.free_head;
  table.free_head = s->next_free;
  if (table.free_head == NULL)
    table.free_tail = NULL;

  uv_mutex_lock(&s->lock);
  s->object = object;
  s->next_free = NULL;
  s->owner = name;
  uv_mutex_unlock(&s->lock);
  return handle_of(s);
}

/* The slot a handle names, or NULL; nothing locked. */
static handle_slot *slot_of(uintptr_t h) {
  size_t index = (size_t)(h & LOW_MASK);
  size_t n;
  chunk_ref *block;
  handle_slot *chunk;

  if (index == 0 || (index - 1) / CHUNK_SLOTS >= MAX_CHUNKS)
    return NULL;
  index--;
  n = index / CHUNK_SLOTS;
  block = atomic_load(&table.blocks[n / BLOCK_CHUNKS]);
  if (block == NULL)
    return NULL;
  chunk = atomic_load(&block[n % BLOCK_CHUNKS]);
  return chunk != NULL ? &chunk[index % CHUNK_SLOTS] : NULL;
}

void *handles_enter(uintptr_t h, handle_slot **slot,
                    char owner[HANDLES_OWNER_MAX + 1]) {
  handle_slot *s = slot_of(h);
  uintptr_t generation = h >> HALF_BITS;

  owner[0] = '\0';
  *slot = NULL;
  if (s == NULL)
    return NULL;
  uv_mutex_lock(&s->lock);
  if (s->object != NULL && (s->generation & LOW_MASK) == generation) {
    *slot = s;
    return s->object;
  }
  /* Stale: the owner's name is still there unless the slot was reused. */
  if (s->object == NULL && ((s->generation - 1) & LOW_MASK) == generation)
    memcpy(owner, s->owner, strlen(s->owner) + 1);
  uv_mutex_unlock(&s->lock);
  return NULL;
}

void handles_leave(handle_slot *slot) {
  if (slot != NULL)
    uv_mutex_unlock(&slot->lock);
}

void handles_remove(uintptr_t h) {
  handle_slot *s = slot_of(h);

  if (s == NULL)
    return;
  uv_mutex_lock(&s->lock);
  if (s->object == NULL || (s->generation & LOW_MASK) != h >> HALF_BITS) {
    uv_mutex_unlock(&s->lock);
    return;
  }
  s->object = NULL;
  s->generation++;
  uv_mutex_unlock(&s->lock);

  if (table.free_tail != NULL)
    table.free_tail->next_free = s;
  else
    table.free_head = s;
  table.free_tail = s;
}
