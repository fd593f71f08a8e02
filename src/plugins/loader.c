/* SPDX-License-Identifier: MIT */
/* loader.c -- the set of live plugin instances: scanning, loading,
 * reloading, unloading, references and run-time tools. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/linkhash.h>

#include "descriptor.h"
#include "loader.h"
#include "log.h"
#include "metrics.h"
#include "platform.h"
#include "plugin_file.h"
#include "watchdog.h"

/* Lists go in the order of the files: the plugin directories in the
 * order given, and the files of each by name, whichever worker got ready
 * first. */
static int plugin_before(const struct plugin *a, const struct plugin *b) {
  if (a->dir_index != b->dir_index)
    return a->dir_index < b->dir_index;
  return strcmp(a->path, b->path) < 0;
}

/* Ends `p`'s worker, if it has one. */
static void unisolate(loader *l, plugin *p) {
  if (l->env.unisolate_cb != NULL)
    l->env.unisolate_cb(l->env.arg, p);
}

int loader_init(loader *l, const loader_env *env) {
  memset(l, 0, sizeof(*l));
  l->env = *env;
  registry_set_order(env->registry, plugin_before);
  return 0;
}

static void notify_changed(loader *l) {
  if (l->env.changed_cb)
    l->env.changed_cb(l->env.arg);
}

/* Paths are unique in the list (record_failure forgets first), and the
 * caller may pass the entry's own path, so stop at the first match. */
static void forget_failure(loader *l, const char *path) {
  for (load_failure **pp = &l->failures; *pp; pp = &(*pp)->next) {
    load_failure *f = *pp;
    if (strcmp(f->path, path) == 0) {
      *pp = f->next;
      free(f->path);
      free(f->reason);
      free(f);
      return;
    }
  }
}

void loader_free(loader *l) {
  while (l->starting)
    loader_unload(l, l->starting);
  while (l->plugins)
    loader_unload(l, l->plugins);
  while (l->failures)
    forget_failure(l, l->failures->path);
  plugin_files_free(&l->files);
  json_object_put(l->warned_configs);
  l->warned_configs = NULL;
}

/* Frees the key of an lh_table entry (keys there are strdup()ed). */
static void free_key(struct lh_entry *e) {
  free((void *)lh_entry_k(e));
}

void plugin_ref(plugin *p) {
  atomic_fetch_add(&p->refs, 1);
}

static void plugin_free(plugin *p) {
  registry_free(&p->staged);
  if (p->updates_pending != NULL) {
    lh_table_free(p->updates_pending);
    uv_mutex_destroy(&p->updates_lock);
  }
  if (p->dl)
    platform_lib_close(p->dl);
  if (p->copy_fd >= 0)
    close(p->copy_fd);
  if (p->copy_path != NULL)
    plugin_copy_remove(p->copy_path);
  free(p->copy_path);
  free(p->path);
  free(p->name);
  free(p->version);
  free(p->description);
  free(p);
}

void plugin_release(plugin *p) {
  if (atomic_fetch_sub(&p->refs, 1) != 1)
    return;
  if (p->finalizing) {
    plugin_free(p);
    return;
  }
  /* Threads that fini() joins may still queue host events, each taking a
   * reference.  Holding one while fini() runs keeps the count above zero,
   * so the last release, this one or the loop's after handling the last
   * such event, is the one that frees. */
  p->finalizing = 1;
  atomic_fetch_add(&p->refs, 1);
  if (p->init_called && p->desc->fini) {
    watchdog_enter(p->name, "fini()", NULL);
    p->desc->fini(p->state);
    watchdog_leave();
  }
  plugin_release(p);
}

static plugin *find_in(plugin *list, const char *path) {
  for (plugin *p = list; p; p = p->next)
    if (strcmp(p->path, path) == 0)
      return p;
  return NULL;
}

static plugin *find_by_path(loader *l, const char *path) {
  return find_in(l->plugins, path);
}

/* Takes `p` out of `*list`; 1 if it was there. */
static int unlink_from(plugin **list, plugin *p) {
  for (plugin **pp = list; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      p->next = NULL;
      return 1;
    }
  return 0;
}

/* Who already offers `kind` `name`, unless it is the instance being
 * replaced. */
static plugin *conflict(plugin *p, reg_kind kind, const char *name) {
  reg_entry *e = registry_find(p->loader->env.registry, kind, name);
  if (e != NULL && e->owner != p->replacing && e->owner != p)
    return e->owner;
  return NULL;
}

static int stage(plugin *p, reg_entry *e, failure_kind *kind, char *err,
                 size_t errlen) {
  plugin *other = conflict(p, e->kind, e->name);
  if (other != NULL) {
    *kind = FAILURE_CONFLICT;
    snprintf(err, errlen, "%s \"%s\" is already offered by plugin \"%s\" (%s)",
             reg_kind_name(e->kind), e->name, other->name, other->path);
    reg_entry_release(e);
    return -1;
  }
  if (registry_add(&p->staged, e) != 0) {
    snprintf(err, errlen, "%s \"%s\" is declared twice", reg_kind_name(e->kind),
             e->name);
    reg_entry_release(e);
    return -1;
  }
  return 0;
}

/* What staging a table's entries needs beyond the entry itself. */
typedef struct staging {
  plugin *p;
  failure_kind *kind;
} staging;

static int stage_entry(staging *s, reg_entry *e, char *err, size_t errlen) {
  if (e == NULL)
    return -1;
  return stage(s->p, e, s->kind, err, errlen);
}

static int stage_tool(void *arg, const void *def, char *err, size_t errlen) {
  staging *s = arg;
  return stage_entry(s, reg_tool_new(def, s->p, err, errlen), err, errlen);
}

static int stage_resource(void *arg, const void *def, char *err,
                          size_t errlen) {
  staging *s = arg;
  return stage_entry(s, reg_resource_new(def, s->p, err, errlen), err, errlen);
}

static int stage_template(void *arg, const void *def, char *err,
                          size_t errlen) {
  staging *s = arg;
  return stage_entry(s, reg_template_new(def, s->p, err, errlen), err, errlen);
}

static int stage_prompt(void *arg, const void *def, char *err, size_t errlen) {
  staging *s = arg;
  return stage_entry(
      s,
      reg_prompt_new(def, s->p->desc->prompt_argument_size, s->p, err, errlen),
      err, errlen);
}

/* Checks the plugin's tables and stages the entries they declare. */
static int check_tables(plugin *p, failure_kind *kind, char *err,
                        size_t errlen) {
  staging s = {p, kind};
  descriptor_visitor v = {stage_tool, stage_resource, stage_template,
                          stage_prompt, &s};
  return descriptor_check_tables(p->desc, &v, err, errlen);
}

/* Another plugin, live or starting, that goes by `name`; not `p`, nor
 * the instance `p` would replace. */
static plugin *name_holder(loader *l, const plugin *p, const char *name) {
  plugin *old = find_by_path(l, p->path);
  for (int k = 0; k < 2; k++)
    for (plugin *q = k ? l->starting : l->plugins; q; q = q->next)
      if (q != p && q != old && (q->named || !q->isolated) &&
          strcmp(q->name, name) == 0)
        return q;
  return NULL;
}

/* Plugin names are unique among live instances and isolated ones that
 * said theirs, but a reload may reuse the name of the instance it
 * replaces. */
static int check_unique_name(loader *l, plugin *p, failure_kind *kind,
                             char *err, size_t errlen) {
  const char *name = p->desc->name;
  plugin *q = name_holder(l, p, name);
  if (q != NULL) {
    *kind = FAILURE_CONFLICT;
    snprintf(err, errlen, "plugin name \"%s\" is already used by %s", name,
             q->path);
    return -1;
  }
  return 0;
}

static load_failure *record_failure(loader *l, const char *path,
                                    const char *reason, failure_kind kind,
                                    const struct stat *st,
                                    const struct stat *dir) {
  load_failure *f;
  forget_failure(l, path);
  f = calloc(1, sizeof(*f));
  if (f == NULL)
    return NULL;
  f->path = strdup(path);
  f->reason = strdup(reason);
  f->kind = kind;
  f->ino = st->st_ino;
  f->size = st->st_size;
  f->mode = st->st_mode;
  f->mtime = PLATFORM_MTIM(*st);
  f->ctime = PLATFORM_CTIM(*st);
  f->dir_mode = dir->st_mode;
  f->dir_uid = dir->st_uid;
  f->generation = l->generation;
  f->next = l->failures;
  l->failures = f;
  return f;
}

/* Swaps the staged tools in: the replaced instance's tools leave and the
 * new ones arrive in the same loop turn, so no request sees neither. */
static void commit(loader *l, plugin *p) {
  registry *reg = l->env.registry;
  plugin *old = p->replacing;

  if (old != NULL) {
    /* Which instance went and what replaces it, in one line; the plain
     * "unloaded plugin" line stays for unloads that nothing replaces. */
    if (strcmp(old->name, p->name) == 0)
      log_info("plugin \"%s\" %s (%s) unloaded; %s replaces it", old->name,
               old->version, old->path, p->version);
    else
      log_info("plugin \"%s\" %s (%s) unloaded; plugin \"%s\" %s replaces it",
               old->name, old->version, old->path, p->name, p->version);
    registry_remove_owner(reg, old);
    old->live = 0;
    if (old->isolated)
      unisolate(l, old);
    for (plugin **pp = &l->plugins; *pp; pp = &(*pp)->next)
      if (*pp == old) {
        *pp = old->next;
        break;
      }
  }
  for (int k = 0; k < REG_KINDS; k++)
    for (size_t i = 0; i < registry_count(&p->staged, k); i++) {
      reg_entry *e = registry_at(&p->staged, k, i);
      if (registry_add(reg, reg_entry_ref(e)) != 0) {
        log_error("plugin \"%s\": %s \"%s\" could not be registered", p->path,
                  reg_kind_name(k), e->name);
        reg_entry_release(e);
      }
    }
  registry_free(&p->staged);
  registry_init(&p->staged);
  p->live = 1;
  p->replacing = NULL;
  {
    /* The live list is in file order, as the lists are. */
    plugin **pp = &l->plugins;
    while (*pp != NULL && !plugin_before(p, *pp))
      pp = &(*pp)->next;
    p->next = *pp;
    *pp = p;
  }
  l->generation++;
  notify_changed(l);
  if (old != NULL)
    plugin_release(old);
}

/* Runs the plugin's init(), if it has one, under the watchdog; fini() is
 * owed from here on either way.  -1 with the reason in `err` when init()
 * refused. */
static int call_init(loader *l, plugin *p, char *err, size_t errlen) {
  char *errmsg = NULL;
  int rc;

  p->init_called = 1;
  if (p->desc->init == NULL)
    return 0;
  p->initing = 1;
  watchdog_enter(p->name, "init()", NULL);
  rc = p->desc->init(l->env.host, &p->self,
                     plugin_settings_config(l->env.opts->plugins, p->name),
                     &p->state, &errmsg);
  watchdog_leave();
  p->initing = 0;
  if (rc != MCPD_OK)
    snprintf(err, errlen, "init failed: %s",
             errmsg ? errmsg : "no reason given");
  free(errmsg);
  return rc == MCPD_OK ? 0 : -1;
}

/* Makes an in-process plugin live and says what it brought, counted
 * before commit() empties its staging registry. */
static void commit_and_log(loader *l, plugin *p, const char *path) {
  size_t n_tools = registry_count(&p->staged, REG_TOOL);
  size_t n_resources = registry_count(&p->staged, REG_RESOURCE) +
                       registry_count(&p->staged, REG_TEMPLATE);
  size_t n_prompts = registry_count(&p->staged, REG_PROMPT);

  /* A worker's host says it, once the worker listed them. */
  log_level level = l->env.quiet ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO;

  const char *where = p->isolated ? ", isolated in a worker process" : "";

  commit(l, p);
  if (n_resources + n_prompts == 0)
    log_msg(level, "loaded plugin \"%s\" %s from %s (%zu tools)%s", p->name,
            p->version, path, n_tools, where);
  else
    log_msg(level,
            "loaded plugin \"%s\" %s from %s (%zu tools, %zu resources "
            "and templates, %zu prompts)%s",
            p->name, p->version, path, n_tools, n_resources, n_prompts, where);
}

/* A new instance of `path`, holding the loader's reference, or NULL. */
static plugin *plugin_new(loader *l, const char *path, unsigned dir_index) {
  plugin *p = calloc(1, sizeof(*p));

  if (p == NULL || registry_init(&p->staged) != 0 ||
      (p->path = strdup(path)) == NULL) {
    if (p != NULL)
      registry_free(&p->staged);
    free(p);
    log_error("plugin \"%s\": out of memory; not loaded", path);
    return NULL;
  }
  p->loader = l;
  p->host_data = l->env.host_data;
  p->self.plugin = p;
  atomic_init(&p->refs, 1);
  p->copy_fd = -1;
  p->dir_index = dir_index;
  p->scan = l->scans;
  if ((p->updates_pending = lh_kchar_table_new(16, free_key)) != NULL &&
      uv_mutex_init(&p->updates_lock) != 0) {
    lh_table_free(p->updates_pending);
    p->updates_pending = NULL;
  }
  return p;
}

/* Logs why `p` was not loaded, keeps the refusal for --list and for
 * retrying, and lets go of `p`.  `st` and `dir` are the file's and its
 * directory's, or NULL to stat them now. */
static void refuse(loader *l, plugin *p, const char *err, failure_kind kind,
                   const struct stat *st, const struct stat *dir) {
  struct stat fst, dst;
  char buf[4096];
  plugin *live = find_by_path(l, p->path);

  metrics_count(METRICS_LOAD_FAILURES);
  /* A worker's host says it, with the reason the worker gave. */
  log_msg(l->env.quiet ? LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR,
          "plugin \"%s\": %s; %s", p->path, err,
          live != NULL && live != p ? "keeping the version already loaded"
                                    : "not loaded");
  if (st == NULL) {
    if (stat(p->path, &fst) != 0)
      memset(&fst, 0, sizeof(fst));
    plugin_file_dir_of(p->path, buf, sizeof(buf));
    if (stat(buf, &dst) != 0)
      memset(&dst, 0, sizeof(dst));
    st = &fst;
    dir = &dst;
  }
  record_failure(l, p->path, err, kind, st, dir);
  p->replacing = NULL;
  plugin_release(p);
}

/* `p`, starting, is refused: its worker ends, the refusal is kept. */
static void refuse_starting(loader *l, plugin *p, const char *err,
                            failure_kind kind) {
  unisolate(l, p);
  refuse(l, p, err, kind, NULL, NULL);
}

/* Whether `p` takes what `q` holds (a name, an entry): of two files the
 * same scan found, the first in file order does; an older plugin keeps
 * what it has. */
static int takes_from(const plugin *p, const plugin *q) {
  return q->scan == p->scan && plugin_before(p, q);
}

/* `q` lost what it held to another file: unloaded, and refused with
 * `err` until the set of plugins changes. */
static void evict(loader *l, plugin *q, const char *err) {
  /* refuse() lets go of the reference taken here; the loader's goes with
   * the unload. */
  plugin_ref(q);
  loader_unload(l, q);
  refuse(l, q, err, FAILURE_CONFLICT, NULL, NULL);
}

/* The name an isolated plugin goes by until its worker says: its file's,
 * without the directory and its suffix (".so", ".dll"). */
static char *provisional_name(const char *path) {
  const char *base = strrchr(path, '/');
  char *name = strdup(base ? base + 1 : path);
  size_t n = name ? strlen(name) : 0, k = strlen(PLATFORM_PLUGIN_SUFFIX);
  if (n > k && strcmp(name + n - k, PLATFORM_PLUGIN_SUFFIX) == 0)
    name[n - k] = '\0';
  return name;
}

/* Starts the worker of `p`, whose file passed the checks: mcpd loads
 * nothing of it.  Returns `p`, starting, or NULL. */
static plugin *start_isolated(loader *l, plugin *p, const struct stat *st,
                              const struct stat *dst) {
  p->isolated = 1;
  if ((p->name = provisional_name(p->path)) == NULL ||
      (p->version = strdup("")) == NULL) {
    refuse(l, p, "out of memory", FAILURE_FILE, st, dst);
    return NULL;
  }
  p->next = l->starting;
  l->starting = p;
  if (l->env.isolate_cb(l->env.arg, p) != 0) {
    unlink_from(&l->starting, p);
    p->isolated = 0; /* nothing to stop */
    refuse(l, p, "its worker process could not be started", FAILURE_FILE, st,
           dst);
    return NULL;
  }
  return p;
}

/* Where load() runs the plugin: as the options say (in a worker unless
 * every plugin runs in-process), or in-process, because the worker said
 * a name the options keep in-process. */
typedef enum placement { PLACE_BY_OPTIONS, PLACE_IN_PROCESS } placement;

/* Whether nothing is at `path` any more (not even a dangling link). */
static int vanished(const char *path) {
  struct stat lst;
  return lstat(path, &lst) != 0 && errno == ENOENT;
}

/* `scanned`: found by a scan of a plugin directory, where a file may go
 * between the scan and the load; a file named by itself must be there. */
static plugin *load(loader *l, const char *path, plugin *replacing,
                    unsigned dir_index, placement where, int scanned) {
  char err[1024] = "";
  struct stat st, dst;
  failure_kind kind = FAILURE_FILE;
  plugin_file_verdict verdict;
  plugin_copy copy;
  const char *base;
  plugin *p;
  void *sym;
  int fd;

  if ((p = plugin_new(l, path, dir_index)) == NULL)
    return NULL;
  p->replacing = replacing;
  /* The checks of the file run here, whoever loads it. */
  verdict = plugin_file_open(path, l->env.opts->allow_insecure, &fd, &st, &dst,
                             err, sizeof(err));
  if (verdict != PLUGIN_FILE_OK && scanned && vanished(path)) {
    /* Removed or renamed over since the scan saw it: no failure of the
     * plugin's, and the next scan sees what is there now. */
    log_info("plugin file %s vanished before it could be %s", path,
             replacing != NULL ? "reloaded" : "loaded");
    p->replacing = NULL;
    plugin_release(p);
    return NULL;
  }
  if (verdict != PLUGIN_FILE_OK) {
    if (verdict == PLUGIN_FILE_DIR_REFUSED)
      kind = FAILURE_DIR;
    goto fail;
  }
  p->dev = st.st_dev;
  p->ino = st.st_ino;
  p->size = st.st_size;
  p->mtime = PLATFORM_MTIM(st);
  if (where == PLACE_BY_OPTIONS && l->env.isolate_cb != NULL &&
      !plugin_settings_all_in_process(l->env.opts->plugins)) {
    close(fd);
    p->replacing = NULL; /* decided when it is ready */
    return start_isolated(l, p, &st, &dst);
  }
  /* Everything from here on reads the open file, never the path again. */
  base = strrchr(path, '/');
  if (plugin_file_copy(&l->files, fd, &st, base ? base + 1 : path, &copy, err,
                       sizeof(err)) != 0) {
    close(fd);
    goto fail;
  }
  close(fd);
  {
    char why[512];
    p->dl = platform_lib_open(copy.path, why, sizeof(why));
    p->copy_fd = plugin_copy_done(&copy, &p->copy_path);
    if (p->dl == NULL) {
      snprintf(err, sizeof(err), "%s; " PLATFORM_LIB_HINT, why);
      goto fail;
    }
  }
  sym = platform_lib_symbol(p->dl, MCPD_PLUGIN_SYMBOL);
  if (sym == NULL) {
    snprintf(err, sizeof(err),
             "does not export the symbol \"" MCPD_PLUGIN_SYMBOL
             "\" (not an mcpd plugin, or built without MCPD_PLUGIN_DEFINE)");
    goto fail;
  }
  p->desc = sym;
  if (descriptor_check(p->desc, err, sizeof(err)) != 0 ||
      check_unique_name(l, p, &kind, err, sizeof(err)) != 0)
    goto fail;
  p->name = strdup(p->desc->name);
  p->version = strdup(p->desc->version);
  p->description = p->desc->description ? strdup(p->desc->description) : NULL;
  if (check_tables(p, &kind, err, sizeof(err)) != 0)
    goto fail;
  if (l->env.configure_cb != NULL &&
      l->env.configure_cb(l->env.arg, p, err, sizeof(err)) != 0)
    goto fail;
  if (call_init(l, p, err, sizeof(err)) != 0)
    goto fail;
  forget_failure(l, path);
  commit_and_log(l, p, path);
  return p;

fail:
  refuse(l, p, err, kind, &st, &dst);
  return NULL;
}

plugin *loader_load_file(loader *l, const char *path) {
  return load(l, path, find_by_path(l, path), 0, PLACE_BY_OPTIONS, 0);
}

static int set_string(char **field, const char *value) {
  char *copy = value ? strdup(value) : NULL;
  if (value != NULL && copy == NULL)
    return -1;
  free(*field);
  *field = copy;
  return 0;
}

int loader_named(plugin *p, const char *name, const char *version,
                 const char *description) {
  loader *l = p->loader;
  char err[1024];
  plugin *q;

  if (!unlink_from(&l->starting, p))
    return -1;
  if (set_string(&p->name, name) != 0 || set_string(&p->version, version) ||
      set_string(&p->description, description) != 0) {
    refuse(l, p, "out of memory", FAILURE_FILE, NULL, NULL);
    return -1;
  }
  p->named = 1;
  /* Two new files claiming one name: the first in file order has it,
   * whichever worker spoke first.  A name already in use stays so. */
  if ((q = name_holder(l, p, name)) != NULL) {
    int won = takes_from(p, q);
    snprintf(err, sizeof(err), "plugin name \"%s\" is already used by %s", name,
             won ? p->path : q->path);
    if (!won) {
      refuse_starting(l, p, err, FAILURE_CONFLICT);
      return -1;
    }
    evict(l, q, err);
  }
  if (!plugin_settings_isolated(l->env.opts->plugins, name)) {
    /* Configured to run in mcpd: its worker only told its name. */
    char *path = strdup(p->path);
    unsigned dir_index = p->dir_index;
    unisolate(l, p);
    plugin_release(p);
    if (path != NULL)
      load(l, path, find_by_path(l, path), dir_index, PLACE_IN_PROCESS, 0);
    free(path);
    return -1;
  }
  p->next = l->starting;
  l->starting = p;
  return 0;
}

/* The first entry of `p`'s staging registry that another plugin offers
 * (not the instance `p` replaces): its owner, with the entry in `*mine`. */
static plugin *entry_holder(plugin *p, reg_entry **mine) {
  registry *reg = p->loader->env.registry;
  for (int k = 0; k < REG_KINDS; k++)
    for (size_t i = 0; i < registry_count(&p->staged, k); i++) {
      reg_entry *e = registry_at(&p->staged, k, i);
      reg_entry *other = registry_find(reg, k, e->name);
      if (other != NULL && other->owner != p && other->owner != p->replacing) {
        *mine = e;
        return other->owner;
      }
    }
  return NULL;
}

int loader_ready(plugin *p) {
  loader *l = p->loader;
  char err[1024];
  reg_entry *e;
  plugin *q;

  if (!unlink_from(&l->starting, p))
    return -1;
  p->replacing = find_by_path(l, p->path);
  /* An entry another plugin offers: as with names, the first of two new
   * files in file order keeps it, and an older plugin keeps its own. */
  while ((q = entry_holder(p, &e)) != NULL) {
    const plugin *holder = takes_from(p, q) ? p : q;
    snprintf(err, sizeof(err),
             "%s \"%s\" is already offered by plugin \"%s\" (%s)",
             reg_kind_name(e->kind), e->name, holder->name, holder->path);
    if (holder == q) {
      refuse_starting(l, p, err, FAILURE_CONFLICT);
      return -1;
    }
    evict(l, q, err);
  }
  forget_failure(l, p->path);
  commit_and_log(l, p, p->path);
  return 0;
}

void loader_start_failed(plugin *p, const char *reason) {
  loader *l = p->loader;

  if (unlink_from(&l->starting, p))
    refuse_starting(l, p, reason, FAILURE_FILE);
}

void loader_unload(loader *l, plugin *p) {
  if (unlink_from(&l->starting, p)) {
    /* Its worker had not listed anything yet. */
    unisolate(l, p);
    log_debug("plugin file %s: no longer loading it", p->path);
    plugin_release(p);
    return;
  }
  unlink_from(&l->plugins, p);
  if (p->live) {
    registry_remove_owner(l->env.registry, p);
    p->live = 0;
    notify_changed(l);
  }
  if (p->isolated)
    unisolate(l, p);
  l->generation++;
  log_msg(l->env.quiet ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
          "unloaded plugin \"%s\" (%s)", p->name, p->path);
  plugin_release(p);
}

int loader_add(plugin *p, reg_entry *e, char *err, size_t errlen) {
  registry *reg = p->loader->env.registry;
  const char *what = reg_kind_name(e->kind);

  if (p->initing) {
    failure_kind kind;
    if (stage(p, e, &kind, err, errlen) != 0) {
      log_error("plugin \"%s\": adding a %s refused: %s", p->name, what, err);
      return -1;
    }
    return 0;
  }
  if (!p->live) {
    snprintf(err, errlen, "plugin \"%s\" is being unloaded", p->name);
    reg_entry_release(e);
    return -1;
  }
  {
    plugin *other = conflict(p, e->kind, e->name);
    if (other != NULL || registry_find(reg, e->kind, e->name)) {
      snprintf(err, errlen, "%s \"%s\" is already offered by plugin \"%s\"",
               what, e->name, other ? other->name : p->name);
      log_error("plugin \"%s\": adding a %s refused: %s", p->name, what, err);
      reg_entry_release(e);
      return -1;
    }
  }
  if (registry_add(reg, e) != 0) {
    snprintf(err, errlen, "out of memory");
    reg_entry_release(e);
    return -1;
  }
  notify_changed(p->loader);
  return 0;
}

int loader_remove(plugin *p, reg_kind kind, const char *name) {
  registry *reg = p->loader->env.registry;
  reg_entry *e;
  if (p->initing) {
    e = registry_find(&p->staged, kind, name);
    return e ? registry_remove(&p->staged, e) : -1;
  }
  e = registry_find(reg, kind, name);
  if (e == NULL || e->owner != p)
    return -1;
  registry_remove(reg, e);
  notify_changed(p->loader);
  return 0;
}

/* `dir`/`name` into `out`, cut to fit as snprintf would cut it.  This runs
 * for every plugin at start-up; keeping printf out of start-up keeps its
 * pages of libc out of a quiet server's memory. */
static void path_join(char *out, size_t size, const char *dir,
                      const char *name) {
  size_t a = strlen(dir), b = strlen(name);

  if (a > size - 1)
    a = size - 1;
  memcpy(out, dir, a);
  if (a < size - 1)
    out[a++] = '/';
  if (b > size - 1 - a)
    b = size - 1 - a;
  memcpy(out + a, name, b);
  out[a + b] = '\0';
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int same_time(struct timespec a, struct timespec b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Whether `p` was loaded from the file `st` describes, as it is now. */
static int same_file(const plugin *p, const struct stat *st) {
  return p->dev == st->st_dev && p->ino == st->st_ino &&
         p->size == st->st_size && same_time(p->mtime, PLATFORM_MTIM(*st));
}

/* Whether `path` was already refused for a reason that still holds, so it
 * is not tried (and reported) again on every scan. */
static int failed_before(loader *l, const char *path, const struct stat *st) {
  for (load_failure *f = l->failures; f; f = f->next) {
    if (strcmp(f->path, path) != 0)
      continue;
    /* stat() works again, so what was reported no longer holds. */
    if (f->kind == FAILURE_STAT)
      return 0;
    /* chmod and chown change ctime only, so it is part of the identity. */
    if (f->ino != st->st_ino || f->size != st->st_size ||
        f->mode != st->st_mode || !same_time(f->mtime, PLATFORM_MTIM(*st)) ||
        !same_time(f->ctime, PLATFORM_CTIM(*st)))
      return 0;
    switch (f->kind) {
    case FAILURE_CONFLICT:
      return f->generation == l->generation;
    case FAILURE_DIR: {
      struct stat dir;
      char buf[4096];
      plugin_file_dir_of(path, buf, sizeof(buf));
      return stat(buf, &dir) == 0 && dir.st_mode == f->dir_mode &&
             dir.st_uid == f->dir_uid;
    }
    default:
      return 1;
    }
  }
  return 0;
}

/* stat() failed with `error` on `path`, found in a plugin directory: a
 * symbolic link loop, a link to nothing, a folder on the way that may not
 * be searched.  Reported once, and kept for --list, while the entry and
 * the error stay the same; an entry gone since readdir() is not worth a
 * word. */
static void refuse_unstatable(loader *l, const char *path, int error) {
  char err[1024], dir[4096];
  struct stat lst, dst;
  load_failure *f;
  plugin *p;

  if (lstat(path, &lst) != 0)
    return;
  for (f = l->failures; f; f = f->next)
    if (strcmp(f->path, path) == 0)
      break;
  if (f != NULL && f->kind == FAILURE_STAT && f->error == error &&
      f->ino == lst.st_ino && same_time(f->mtime, PLATFORM_MTIM(lst)) &&
      same_time(f->ctime, PLATFORM_CTIM(lst)))
    return;
  plugin_file_stat_reason(path, error, err, sizeof(err));
  p = find_by_path(l, path);
  log_error("plugin \"%s\": %s; %s", path, err,
            p ? "keeping the version already loaded" : "not loaded");
  plugin_file_dir_of(path, dir, sizeof(dir));
  if (stat(dir, &dst) != 0)
    memset(&dst, 0, sizeof(dst));
  f = record_failure(l, path, err, FAILURE_STAT, &lst, &dst);
  if (f != NULL)
    f->error = error;
}

static size_t scan_dir(loader *l, const char *dir, unsigned dir_index,
                       int explicit_dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char **names = NULL;
  size_t n = 0, cap = 0, changes = 0;

  if (d == NULL) {
    if (explicit_dir || errno != ENOENT)
      log_warn("plugin directory %s: %s", dir, strerror(errno));
    else
      log_debug("plugin directory %s does not exist", dir);
    return 0;
  }
  while ((e = readdir(d)) != NULL) {
    if (!platform_plugin_name(e->d_name))
      continue;
    if (n == cap) {
      char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*nn));
      if (nn == NULL)
        break;
      names = nn;
    }
    if ((names[n] = strdup(e->d_name)) != NULL)
      n++;
  }
  closedir(d);
  if (n > 1)
    qsort(names, n, sizeof(*names), cmp_names);

  for (size_t i = 0; i < n; i++) {
    char path[4096];
    struct stat st;
    plugin *p;
    path_join(path, sizeof(path), dir, names[i]);
    free(names[i]);
    if (stat(path, &st) != 0) {
      refuse_unstatable(l, path, errno);
      continue;
    }
    if ((p = find_in(l->starting, path)) != NULL) {
      if (same_file(p, &st))
        continue;
      /* Changed while its worker was starting: start over. */
      loader_unload(l, p);
    }
    p = find_by_path(l, path);
    if (p != NULL) {
      if (same_file(p, &st))
        continue;
      if (failed_before(l, path, &st))
        continue;
      log_info("plugin file %s changed; reloading", path);
      if (load(l, path, p, dir_index, PLACE_BY_OPTIONS, 1) != NULL)
        changes++;
      continue;
    }
    if (failed_before(l, path, &st))
      continue;
    if (load(l, path, NULL, dir_index, PLACE_BY_OPTIONS, 1) != NULL)
      changes++;
  }
  free(names);
  return changes;
}

size_t loader_scan(loader *l) {
  const loader_settings *o = l->env.opts;
  size_t changes = 0;
  plugin *p, *next;

  l->scans++;
  /* Unload what disappeared first, so a file renamed within the folders
   * does not collide with its own earlier instance. */
  for (int list = 0; list < 2; list++)
    for (p = list ? l->starting : l->plugins; p; p = next) {
      struct stat st;
      next = p->next;
      if (stat(p->path, &st) != 0 && errno == ENOENT) {
        loader_unload(l, p);
        changes++;
      }
    }
  for (size_t k = 0; k < o->n_plugin_dirs; k++)
    changes +=
        scan_dir(l, o->plugin_dirs[k], (unsigned)k, o->plugin_dirs_given);
  /* Forget refusals of files that are gone.  lstat: a link to nothing is
   * still there, and its refusal stands. */
  for (load_failure *f = l->failures, *fn; f; f = fn) {
    struct stat st;
    fn = f->next;
    if (lstat(f->path, &st) != 0 && errno == ENOENT)
      forget_failure(l, f->path);
  }
  return changes;
}

static int find_by_name(loader *l, const char *name) {
  for (plugin *p = l->plugins; p; p = p->next)
    if (strcmp(p->name, name) == 0)
      return 1;
  for (plugin *p = l->starting; p; p = p->next)
    if (p->named && strcmp(p->name, name) == 0)
      return 1;
  return 0;
}

/* The edit distance of `a` and `b`, for suggesting the name a config entry
 * was probably meant to have; names longer than a plugin name may be are
 * never near. */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  size_t row[65];

  if (la > 64 || lb > 64)
    return (size_t)-1;
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[lb];
}

void loader_warn_unused_configs(loader *l) {
  json_object *configs = l->env.opts->plugins->configs;

  if (configs == NULL || !json_object_is_type(configs, json_type_object))
    return;
  if (l->warned_configs == NULL &&
      (l->warned_configs = json_object_new_object()) == NULL)
    return;
  json_object_object_foreach(configs, name, value) {
    const plugin *near = NULL;
    size_t best = (size_t)-1;
    (void)value;
    if (find_by_name(l, name) ||
        json_object_object_get_ex(l->warned_configs, name, NULL))
      continue;
    json_object_object_add(l->warned_configs, name, NULL);
    for (const plugin *p = l->plugins; p; p = p->next) {
      /* A typo or two, not another name: one edit in a short name. */
      size_t most = strlen(p->name) <= 4 ? 1 : 2;
      size_t d = edit_distance(name, p->name);
      if (d <= most && d < best) {
        best = d;
        near = p;
      }
    }
    if (near != NULL)
      log_warn("config names plugin \"%s\", but no plugin of that name is "
               "loaded (did you mean \"%s\"?)",
               name, near->name);
    else
      log_warn("config names plugin \"%s\", but no plugin of that name is "
               "loaded",
               name);
  }
}
