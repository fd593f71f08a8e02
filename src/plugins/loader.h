/* SPDX-License-Identifier: MIT */
/* loader.h -- scans plugin directories and keeps the set of live plugin
 * instances: load, reload, unload, and the references that keep an
 * instance mapped while calls into it run.
 *
 * Order, with one exit: open without blocking and refuse unsafe, odd or
 * oversized files -> check the ELF header -> copy privately
 * (plugin_file.c) -> dlopen -> dlsym the one symbol -> ABI, size and
 * tables (descriptor.c) -> duplicates -> init -> register.  Every failure
 * undoes what was done and is one log line naming the file and the reason.
 *
 * The loader knows nothing above it.  Its owner hands it the registry to
 * fill, the options, the host table for init(), and a callback that runs
 * (on the loop thread) whenever the registry changed. */
#ifndef MCPD_LOADER_H
#define MCPD_LOADER_H

#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <json-c/json.h>
#include <uv.h>

#include "loader_settings.h"
#include "mcpd.h"
#include "plugin_file.h"
#include "registry.h"

struct loader;

struct mcpd_self {
  struct plugin *plugin;
};

typedef struct plugin {
  struct mcpd_self self;
  struct loader *loader;
  char *path; /* as found in the plugin directory */
  char *name;
  char *version;
  char *description;
  void *dl;
  int copy_fd;     /* the private memfd copy, open while loaded, or -1 */
  char *copy_path; /* a copy to remove once unloaded (Windows), or NULL */
  const mcpd_plugin_descriptor *desc;
  void *state;
  void *host_data; /* the loader_env's, for the host table's use */
  /* 1 while loaded + 1 per call in flight + 1 per queued host event.
   * Atomic: a plugin thread takes one when it queues an event. */
  atomic_uint refs;
  int finalizing; /* fini() is running or has run */
  /* The host table's per-plugin rate limit on log messages to clients
   * (plugin_api.c); the loader only zeroes it. */
  atomic_llong log_window_ms;
  atomic_int log_sent;
  atomic_long log_dropped;
  /* URIs with a notifications/resources/updated still queued, so that a
   * plugin reporting the same change in a loop queues it once
   * (plugin_api.c). */
  uv_mutex_t updates_lock;
  struct lh_table *updates_pending;
  /* POOL calls on a worker thread now, and those waiting for one
   * (schedule.c; loop thread only). */
  unsigned pool_running;
  struct mcpd_call *pool_head, *pool_tail;
  /* mcpd_host.on_roots_changed(); loop thread only. */
  void (*roots_cb)(void *arg);
  void *roots_arg;
  int live;                 /* its tools are registered */
  int isolated;             /* runs in a worker process */
  int named;                /* isolated: its worker said its name */
  unsigned dir_index;       /* which plugin directory: lists go in the */
  unsigned scan;            /* order of the files; and the scan that found
                               it, which settles a name two new files claim */
  struct worker *worker;    /* then: worker_link.c's state, while it runs */
  int initing;              /* inside init(): add_tool stages */
  int init_called;          /* fini() is owed */
  registry staged;          /* entries validated but not yet registered */
  struct plugin *replacing; /* the instance a reload replaces */
  /* Identity of the file that was loaded, to notice replacement. */
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
  struct plugin *next;
} plugin;

/* Why a file was refused decides when it is worth trying again. */
typedef enum failure_kind {
  FAILURE_FILE,     /* its content or mode: retry when the file changes */
  FAILURE_DIR,      /* its directory's mode: retry when that changes */
  FAILURE_CONFLICT, /* another plugin holds a name: retry when the set of
                       loaded plugins changes */
  FAILURE_STAT      /* stat() fails on it (a symbolic link loop, a link to
                       nothing): retry when stat() succeeds, report again
                       when it fails differently */
} failure_kind;

/* A file that could not be loaded, kept for --list and for retrying when
 * it changes. */
typedef struct load_failure {
  char *path;
  char *reason;
  failure_kind kind;
  ino_t ino;
  off_t size;
  mode_t mode;
  struct timespec mtime;
  struct timespec ctime;
  mode_t dir_mode;
  uid_t dir_uid;
  unsigned generation;
  int error; /* FAILURE_STAT: the errno of stat() */
  struct load_failure *next;
} load_failure;

/* What the owner gives the loader; copied by loader_init(). */
typedef struct loader_env {
  registry *registry;          /* where live plugins' tools are registered */
  const loader_settings *opts; /* directories, plugin configs, safety */
  const mcpd_host *host;       /* handed to every init() */
  void *host_data;             /* copied into each plugin's `host_data` */
  /* Runs on the loop thread after the registry changed. */
  void (*changed_cb)(void *arg);
  /* A plugin that may run isolated: start its worker process (0 or -1),
   * and end it when the plugin is unloaded.  The worker reports the
   * plugin's name (loader_named()) and, once it listed what the plugin
   * offers, that it is ready (loader_ready()), or that it failed
   * (loader_start_failed()).  NULL: every plugin runs in-process. */
  int (*isolate_cb)(void *arg, struct plugin *p);
  void (*unisolate_cb)(void *arg, struct plugin *p);
  /* Worker mode: runs once the descriptor and tables passed, before
   * init(), to tell the host the plugin's name and learn its config.
   * 0 to go on, or -1 with the reason in `err`.  NULL: nothing to do. */
  int (*configure_cb)(void *arg, struct plugin *p, char *err, size_t errlen);
  /* Worker mode: its host reports loads and refusals, so they are logged
   * here at debug level only. */
  int quiet;
  void *arg;
} loader_env;

typedef struct loader {
  loader_env env;
  plugin_files files;  /* where private copies go without memfd_create */
  unsigned generation; /* bumped whenever the live set changes */
  plugin *plugins;     /* live instances, in file order */
  plugin *starting;    /* isolated instances whose worker is starting */
  unsigned scans;      /* loader_scan() calls so far */
  load_failure *failures;
  json_object *warned_configs; /* names loader_warn_unused_configs() gave */
} loader;

int loader_init(loader *l, const loader_env *env);
/* Unloads every plugin and forgets every refusal; an instance with calls
 * in flight is freed when its last call ends. */
void loader_free(loader *l);

/* Brings the live set in line with the plugin directories: loads new
 * files, reloads replaced ones, unloads removed ones.  Returns the number
 * of changes. */
size_t loader_scan(loader *l);

/* Warns, once per name however often it is called, of each entry of the
 * config's "plugins" object that names no loaded plugin: most likely a
 * typo, or a plugin that failed to load.  The owner calls it after the
 * first scan. */
void loader_warn_unused_configs(loader *l);

/* Loads one file (used by scan and by tests).  Returns the live plugin,
 * or an isolated one whose worker is starting, or NULL after logging
 * why. */
plugin *loader_load_file(loader *l, const char *path);

/* What the worker of an isolated plugin that is starting reports (loop
 * thread).  loader_named(): the name, version and description the worker
 * read from the descriptor.  Returns 0 when the worker goes on: the
 * plugin's config is plugin_settings_config(..., p->name).  Returns -1
 * when the loader let go of the worker: the name is taken, or the plugin
 * is configured to run in-process and was loaded so.  loader_ready(): it
 * listed what the plugin offers into p->staged; the entries are checked
 * against the other plugins', and the instance it replaces leaves and
 * this one goes live with them (0), or it is refused and its worker
 * stopped (-1).
 * loader_start_failed(): the worker died or refused before it was ready;
 * the file is marked failed with `reason` until it changes. */
int loader_named(plugin *p, const char *name, const char *version,
                 const char *description);
int loader_ready(plugin *p);
void loader_start_failed(plugin *p, const char *reason);
/* Unregisters and drops the loader's reference; fini and dlclose run when
 * the last call ends. */
void loader_unload(loader *l, plugin *p);

/* Any thread may take a reference on a plugin it already holds one on
 * (directly, or through a call in flight).  Release only on the loop
 * thread: the last release runs fini() and dlclose().  References taken
 * while fini() runs (by plugin threads it joins) delay the free, not
 * fini(), which runs once. */
void plugin_ref(plugin *p);
void plugin_release(plugin *p);

/* Host API helpers for run-time entries of every kind (loop thread).
 * loader_add consumes `e`; on failure it says why in `err`.
 * loader_remove takes the entry's key and refuses another plugin's. */
int loader_add(plugin *p, reg_entry *e, char *err, size_t errlen);
int loader_remove(plugin *p, reg_kind kind, const char *name);

#endif
