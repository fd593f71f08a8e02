/* loader.h -- finds, validates, loads, reloads and unloads plugins.
 *
 * Order, with one exit: refuse unsafe paths -> copy privately -> dlopen ->
 * dlsym the one symbol -> ABI and size -> tables -> duplicates -> init ->
 * register.  Every failure undoes what was done and is one log line naming
 * the file and the reason. */
#ifndef MCPD_LOADER_H
#define MCPD_LOADER_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <json-c/json.h>

#include "mcpd.h"
#include "registry.h"

struct server;

struct mcpd_self {
  struct plugin *plugin;
};

typedef struct plugin {
  struct mcpd_self self;
  struct server *srv;
  char *path; /* as found in the plugin directory */
  char *name;
  char *version;
  char *description;
  void *dl;
  int copy_fd; /* the private memfd copy, open while loaded, or -1 */
  const mcpd_plugin_descriptor *desc;
  void *state;
  unsigned refs;            /* 1 while loaded + 1 per call in flight */
  int live;                 /* its tools are registered */
  int initing;              /* inside init(): add_tool stages */
  int init_called;          /* fini() is owed */
  registry staged;          /* tools validated but not yet registered */
  struct plugin *replacing; /* the instance a reload replaces */
  /* Identity of the file that was loaded, to notice replacement. */
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
  struct plugin *next;
} plugin;

/* A file that could not be loaded, kept for --list and for retrying when
 * it changes. */
/* Why a file was refused decides when it is worth trying again. */
typedef enum failure_kind {
  FAILURE_FILE,    /* its content or mode: retry when the file changes */
  FAILURE_DIR,     /* its directory's mode: retry when that changes */
  FAILURE_CONFLICT /* another plugin holds a name: retry when the set of
                      loaded plugins changes */
} failure_kind;

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
  struct load_failure *next;
} load_failure;

typedef struct loader {
  struct server *srv;
  char *copy_dir; /* fallback directory for copies, made when first needed */
  unsigned seq;
  unsigned generation; /* bumped whenever the live set changes */
  plugin *plugins;     /* live instances */
  load_failure *failures;
} loader;

int loader_init(loader *l, struct server *srv);
/* Unloads everything that is idle; returns how many instances remain. */
size_t loader_free(loader *l);

/* Brings the live set in line with the plugin directories: loads new
 * files, reloads replaced ones, unloads removed ones.  Returns the number
 * of changes. */
size_t loader_scan(loader *l);

/* Loads one file (used by scan and by tests).  Returns the live plugin or
 * NULL after logging why. */
plugin *loader_load_file(loader *l, const char *path);
/* Unregisters and drops the loader's reference; fini and dlclose run when
 * the last call ends. */
void loader_unload(loader *l, plugin *p);

void plugin_ref(plugin *p);
void plugin_release(plugin *p);

/* Host API helpers for run-time tools (loop thread). */
int loader_add_tool(plugin *p, reg_tool *t);
int loader_remove_tool(plugin *p, const char *name);

#endif
