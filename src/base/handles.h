/* SPDX-License-Identifier: MIT */
/* handles.h -- handles that stay safe to use after what they name is gone.
 *
 * A plugin holds an `mcpd_call *` for a call in flight and may, by mistake,
 * use it after the call finished: complete() twice, or progress() from a
 * thread that outlived its call.  What the plugin holds is therefore not a
 * pointer but a handle: a slot number and a generation.  A slot is reused
 * only with a new generation, so a stale handle resolves to nothing, and
 * every use happens with the slot locked, so the object cannot be freed
 * while a thread is inside a host function with it.
 *
 * Slots live in chunks that never move; the table grows a chunk at a time
 * and reuses freed slots oldest first, so a stale handle usually still
 * finds the name of the plugin that misused it.  One thread (the loop)
 * adds and removes handles; any thread may enter and leave them. */
#ifndef MCPD_HANDLES_H
#define MCPD_HANDLES_H

#include <stddef.h>
#include <stdint.h>

#define HANDLES_OWNER_MAX 64

typedef struct handle_slot handle_slot;

/* Registers `object` for `owner` (a name, copied, for messages); returns
 * its handle, never 0, or 0 when out of memory.  Loop thread only. */
uintptr_t handles_add(void *object, const char *owner);
/* Resolves `h` and locks its slot: returns the object, with *slot set for
 * handles_leave().  For a stale or bogus handle returns NULL with nothing
 * locked, and copies the owner's name into `owner` when it is still known
 * (else ""). */
void *handles_enter(uintptr_t h, handle_slot **slot,
                    char owner[HANDLES_OWNER_MAX + 1]);
void handles_leave(handle_slot *slot);
/* Makes `h` stale; waits for a thread inside enter/leave on it to leave.
 * Loop thread only. */
void handles_remove(uintptr_t h);

#endif
