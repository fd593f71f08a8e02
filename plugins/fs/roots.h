/* SPDX-License-Identifier: MIT */
/* roots.h -- the roots of the "fs" plugin (roots.c): opening them, the
 * roots a call serves, and the client roots the latest call saw. */
#ifndef MCPD_PLUGIN_FS_ROOTS_H
#define MCPD_PLUGIN_FS_ROOTS_H

#include "fs.h"

/* Opens the directory at the absolute path `abs` as a root into *r:
 * symbolic links in its path are resolved now, once.  Returns FS_OK or a
 * negative code (-ENOTDIR: not a directory). */
int fs_root_open(const char *abs, struct fs_root *r);
void fs_root_close(struct fs_root *r);

/* The roots `call` serves: the configured ones, or else the client's
 * (call_roots(): its file:// URIs of directories that exist, each opened
 * now).  FS_E_NOROOTS when there are none.  Release them with
 * fs_roots_release() once the call is done with every target. */
int fs_roots_get(const mcpd_request *req, mcpd_call *call,
                 struct fs_roots *out);
/* Without configured roots: the client roots the latest call saw, opened
 * now, for subscriptions; FS_E_NOROOTS when none were seen. */
int fs_roots_seen(struct fs_state *st, struct fs_roots *out);
void fs_roots_release(struct fs_roots *roots);

/* The on_roots_changed callback (`arg` is the struct fs_state): forgets
 * the roots seen, since the client may have taken them back. */
void fs_roots_changed_cb(void *arg);
/* Sets the one listener told, from any thread, whenever the roots seen
 * change (NULL: none).  It is called with st->seen_lock held and must not
 * take that lock itself. */
void fs_roots_listen(struct fs_state *st, void (*cb)(void *arg), void *arg);

#endif
