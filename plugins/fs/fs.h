/* SPDX-License-Identifier: MIT */
/* fs.h -- what the modules of the "fs" plugin share.
 *
 * resolve.c  maps user paths and file:// URIs to (root, relative path) and
 *            opens them without ever leaving the root (the containment).
 * util.c     MIME types, timestamps, reading files and directories.
 *            (Buffers, UTF-8 and base64 are in ../common.)
 * roots.c    opening roots; the roots a call serves; the client roots
 *            the latest call saw (roots.h).
 * watch.c    resource subscriptions: inotify (the portable build: a stat(2)
 *            poll) and the thread that watches (watch.h).
 * tools.c    the tools.
 * fs.c       configuration, init/fini, resources and the template.
 *
 * Calls go down that list's dependencies, never back up: fs.c uses tools.c,
 * watch.c and roots.c; tools.c and watch.c use roots.c; all use resolve.c
 * and util.c.  The watcher hears that the roots seen changed through a
 * listener (fs_roots_listen()).
 *
 * Everything in struct fs_state except the roots last seen and their
 * listener (behind seen_lock) and the watcher (the loop thread's) is
 * written by init() only and then read by any thread without locks.
 */
#ifndef MCPD_PLUGIN_FS_H
#define MCPD_PLUGIN_FS_H

#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <mcpd.h>

/* How a directory is opened only to start *at() calls from it: on Linux
 * O_PATH, which opens nothing and needs no read permission; in the
 * portable build (MCPD_PORTABLE: macOS, the BSDs, --enable-portable)
 * POSIX's O_SEARCH where the system has it, else O_RDONLY. */
#ifndef MCPD_PORTABLE
#define FS_O_DIR (O_PATH | O_DIRECTORY)
#elif defined(O_SEARCH)
#define FS_O_DIR (O_SEARCH | O_DIRECTORY)
#else
#define FS_O_DIR (O_RDONLY | O_DIRECTORY)
#endif

/* The modification and change times of a struct stat, which macOS names
 * its own way. */
#ifdef __APPLE__
#define FS_MTIM(sb) ((sb)->st_mtimespec)
#define FS_CTIM(sb) ((sb)->st_ctimespec)
#else
#define FS_MTIM(sb) ((sb)->st_mtim)
#define FS_CTIM(sb) ((sb)->st_ctim)
#endif

/* A configured directory, or one of the client's roots.  `fd` is a
 * directory descriptor (FS_O_DIR) every open starts from, so renaming or
 * replacing the directory later cannot redirect us. */
struct fs_root {
  char *path;  /* realpath(3) of the configured (or client's) path */
  size_t len;  /* strlen(path) */
  char *given; /* that path, made absolute and cleaned, when it
                * differs from `path`; else NULL */
  int fd;
};

/* The roots one call serves: the configured ones (borrowed from struct
 * fs_state), or, when none are configured, the roots of the client that
 * made the call, opened for that call only (`owned`: fs_roots_release()
 * closes and frees them). */
struct fs_roots {
  struct fs_root *v;
  size_t n;
  int owned;
};

struct fs_watch;

struct fs_state {
  const mcpd_host *host;
  mcpd_self *self;
  struct fs_root *roots; /* configured; none: the clients' roots serve */
  size_t n_roots;
  int write;             /* write_file offered */
  int use_openat2;       /* 1: links that stay beneath the root are followed --
                          * by openat2(2) on Linux, by the walk itself in the
                          * portable build; 0: the walk follows no link */
  size_t max_read_bytes; /* largest file content returned */
  size_t max_results;    /* search matches, listed entries, completions */
  size_t max_listed;     /* files registered as resources at init */
  /* Guards `seen` and its listener, which the pool reads (lock order: a
   * watcher's lock, then this one). */
  pthread_mutex_t seen_lock;
  /* Without configured roots: the client roots of the latest call (JSON
   * text of call_roots()), or NULL.  Subscriptions are watched beneath
   * them, since a subscribe callback has no call to ask. */
  char *seen;
  /* Told when `seen` changes (fs_roots_listen()). */
  void (*seen_changed)(void *arg);
  void *seen_changed_arg;
  /* The watcher, started by the first subscription; used on the loop
   * thread only (subscribe, unsubscribe, fini). */
  struct fs_watch *watch;
};

/* A path resolved against some roots: `rel` is relative to `root` (one
 * of those roots, so valid while they are), lexically cleaned (no "", "."
 * or ".." components), "." for the root itself. */
struct fs_target {
  const struct fs_root *root;
  char *rel;
};

/* Result codes of the functions below that can fail for a reason the user
 * should read.  The other failures are -errno, so these stay clear of
 * every errno value. */
enum {
  FS_OK = 0,
  FS_E_OUTSIDE = -1001, /* not under any root, or ".." leaves the root */
  FS_E_SPECIAL = -1002, /* a FIFO, socket or device: never opened */
  FS_E_SYMLINK = -1003, /* a symbolic link where none is followed */
  FS_E_CHANGED = -1004, /* replaced while we opened it */
  FS_E_BADURI = -1005,  /* not a file:// URI we serve */
  FS_E_NOMEM = -1006,
  FS_E_ESCAPE = -1007, /* a symbolic link on the way leads out of the root */
  FS_E_NOROOTS = -1008 /* nothing configured and the client offers no root */
};

/* --- resolve.c ---------------------------------------------------------- */

/* Maps a tool's path argument: relative paths are relative to the first
 * root, absolute ones must lie under a root (the longest match wins). */
int fs_locate(const struct fs_roots *roots, const char *path,
              struct fs_target *out);
/* Maps a file:// URI ("file:///abs/path", percent-encoded, optionally with
 * "localhost" as the authority) the same way. */
int fs_locate_uri(const struct fs_roots *roots, const char *uri,
                  struct fs_target *out);
/* The absolute path a file:// URI names, percent-decoded (malloc), or
 * FS_E_BADURI. */
int fs_uri_path(const char *uri, char **path);
void fs_target_free(struct fs_target *t);
/* Cleans `path` lexically into a malloc'ed string: single '/' separators,
 * no "." components, ".." folded into its parent.  An absolute path keeps
 * its leading '/' and ".." stops there; a relative one whose ".." climbs
 * above its start is FS_E_OUTSIDE, and one that cleans to nothing is ".". */
int fs_clean_path(const char *path, int absolute, char **out);
#ifndef MCPD_PORTABLE
/* Nonzero when openat2(2) is available (probed on `dirfd`). */
int fs_have_openat2(int dirfd);
#endif
/* Absolute path of a target (malloc), for messages and URIs. */
char *fs_target_path(const struct fs_target *t);
/* "file://" and the percent-encoded absolute path (malloc). */
char *fs_path_uri(const char *abs_path);

/* Opens `rel` beneath root `root` with open(2) `flags` (O_CLOEXEC and
 * O_NOCTTY are added).  `nofollow` refuses a symbolic link as the last
 * component; links before it stay followed while they stay beneath the
 * root (use_openat2), or are refused.  Returns a descriptor, or a negative
 * FS_E_* / -errno. */
int fs_open_beneath(const struct fs_state *st, const struct fs_root *root,
                    const char *rel, int flags, int nofollow);
/* Describes `rel` beneath the root without opening it, so a FIFO or a
 * device can be looked at: *sb is what a link as the last component leads
 * to, beneath the root, as fs_open_beneath() would follow it, or the link
 * itself with `nofollow`.  When *sb is a link and `target` is not NULL,
 * its target goes there, NUL-terminated and cut at `size`.  Returns FS_OK
 * or a negative code as above. */
int fs_stat_beneath(const struct fs_state *st, const struct fs_root *root,
                    const char *rel, int nofollow, struct stat *sb,
                    char *target, size_t size);
/* Opens a regular file or directory for reading and fstat()s it.  Special
 * files are refused without being opened (fs_stat_beneath() first), and
 * the real open is O_NONBLOCK and checked to be the same inode.  Returns a
 * descriptor or a negative code as above. */
int fs_open_read(const struct fs_state *st, const struct fs_target *t,
                 struct stat *sb);
/* Creates the missing directories of `rel` (all of it) beneath the root. */
int fs_mkdirs(const struct fs_state *st, const struct fs_root *root,
              const char *rel);
/* A sentence for a code of the functions above ("no such file or
 * directory"). */
const char *fs_strerror(int code);

/* --- util.c ------------------------------------------------------------- */

/* The MIME type for a file name, guessed from its extension ("text/plain"
 * when unknown). */
const char *fs_mime_type(const char *name);
/* "2026-01-02T03:04:05Z" (UTC) into buf[32]. */
void fs_iso8601(const struct timespec *ts, char buf[32]);
/* Reads up to `max` bytes from `fd` at `offset` into a malloc'ed buffer
 * (NUL-terminated); *len gets the count.  Returns 0 or -errno. */
int fs_read_all(int fd, off_t offset, size_t max, char **out, size_t *len);
/* One directory entry, lstat()ed: a link is described, not followed. */
struct fs_entry {
  char *name;
  mode_t mode; /* 0 when lstat failed */
  off_t size;
  char *target; /* the target of a symbolic link, or NULL */
};

/* The most entries of one directory read at once.  Listings show the
 * first max_results of them by name. */
#define FS_DIR_MAX 100000

/* Reads up to `max` entries of the open directory `fd` (consumed; "." and
 * ".." left out) whose names begin with `prefix` (NULL: all), sorted by
 * name.  *more is set when entries were left out.  Returns 0 or -errno. */
int fs_read_entries(int fd, const char *prefix, size_t max,
                    struct fs_entry **out, size_t *n_out, int *more);
void fs_entries_free(struct fs_entry *e, size_t n);
/* Monotonic milliseconds. */
long long fs_now_ms(void);
/* Compares two C strings for qsort. */
int fs_strcmp_p(const void *a, const void *b);

/* --- tools.c ------------------------------------------------------------ */

extern const mcpd_tool fs_tools[];
extern const mcpd_tool fs_write_tool;

#endif
