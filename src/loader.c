/* loader.c -- finds, validates, loads, reloads and unloads plugins. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call.h"
#include "loader.h"
#include "log.h"
#include "server.h"

/* Bound on table entries, so a table missing its sentinel is refused
 * instead of read until a crash. */
#define LOADER_MAX_ENTRIES 100000

int loader_init(loader *l, server *srv) {
  memset(l, 0, sizeof(*l));
  l->srv = srv;
  return 0;
}

/* The fallback for systems without memfd_create: a private directory. */
static int make_copy_dir(loader *l) {
  const char *base = getenv("XDG_RUNTIME_DIR");
  struct stat st;
  char tmpl[4096];

  if (base == NULL || base[0] != '/' || stat(base, &st) != 0 ||
      !S_ISDIR(st.st_mode) || access(base, W_OK) != 0)
    base = getenv("TMPDIR");
  if (base == NULL || base[0] != '/')
    base = "/tmp";
  snprintf(tmpl, sizeof(tmpl), "%s/mcpd-%ld-XXXXXX", base, (long)getpid());
  if (mkdtemp(tmpl) == NULL)
    return -1;
  l->copy_dir = strdup(tmpl);
  return l->copy_dir ? 0 : -1;
}

/* Opens a private, writable copy target and names it in `copy`.  A memfd
 * is preferred: no directory to make or clean up, nothing on disk.  It
 * stays open while the plugin is loaded so its /proc/self/fd name stays
 * unique among loaded objects (glibc matches names before inodes). */
static int open_copy(loader *l, const char *base, char *copy, size_t len,
                     int *is_memfd) {
  int fd = memfd_create(base, MFD_CLOEXEC);
  if (fd >= 0) {
    snprintf(copy, len, "/proc/self/fd/%d", fd);
    if (access(copy, R_OK) == 0) {
      *is_memfd = 1;
      return fd;
    }
    close(fd);
  }
  *is_memfd = 0;
  if (l->copy_dir == NULL && make_copy_dir(l) != 0)
    return -1;
  snprintf(copy, len, "%s/%u-%s", l->copy_dir, ++l->seq, base);
  return open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
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

size_t loader_free(loader *l) {
  while (l->plugins)
    loader_unload(l, l->plugins);
  while (l->failures)
    forget_failure(l, l->failures->path);
  if (l->copy_dir) {
    rmdir(l->copy_dir);
    free(l->copy_dir);
  }
  l->copy_dir = NULL;
  return 0;
}

void plugin_ref(plugin *p) {
  p->refs++;
}

static void plugin_destroy(plugin *p) {
  if (p->init_called && p->desc->fini)
    p->desc->fini(p->state);
  p->init_called = 0;
  /* Events the plugin queued before fini returned still name it. */
  server_drain(p->srv);
  registry_free(&p->staged);
  if (p->dl)
    dlclose(p->dl);
  if (p->copy_fd >= 0)
    close(p->copy_fd);
  free(p->path);
  free(p->name);
  free(p->version);
  free(p->description);
  free(p);
}

void plugin_release(plugin *p) {
  if (--p->refs == 0)
    plugin_destroy(p);
}

/* The directory part of `path`: "." when there is none, "/" for the root. */
static void dir_of(const char *path, char *out, size_t len) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(out, len, ".");
  else
    snprintf(out, len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* Refuses files and directories other users could write, like sshd's
 * StrictModes: loading a plugin runs its code with our rights. */
static int check_safe(const char *what, const char *path, const struct stat *st,
                      int allow, char *err, size_t errlen) {
  if (allow)
    return 0;
  if (st->st_mode & (S_IWGRP | S_IWOTH)) {
    snprintf(err, errlen,
             "%s %s is writable by other users (mode %04o); run chmod go-w "
             "on it, or pass --allow-insecure-plugins",
             what, path, (unsigned)(st->st_mode & 07777));
    return -1;
  }
  if (st->st_uid != getuid() && st->st_uid != 0) {
    snprintf(err, errlen,
             "%s %s is owned by uid %u, not by you or root; pass "
             "--allow-insecure-plugins to load it anyway",
             what, path, (unsigned)st->st_uid);
    return -1;
  }
  return 0;
}

/* Copies `src` into `out`; fills *st with the identity of what was
 * actually read. */
static int copy_file(const char *src, int out, struct stat *st, char *err,
                     size_t errlen) {
  char buf[16384];
  int in;
  ssize_t n;

  in = open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    snprintf(err, errlen, "cannot open: %s", strerror(errno));
    return -1;
  }
  if (fstat(in, st) != 0 || !S_ISREG(st->st_mode)) {
    snprintf(err, errlen, "not a regular file");
    close(in);
    return -1;
  }
  while ((n = read(in, buf, sizeof(buf))) != 0) {
    if (n < 0) {
      if (errno == EINTR)
        continue;
      snprintf(err, errlen, "read failed: %s", strerror(errno));
      close(in);
      return -1;
    }
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(out, buf + off, (size_t)(n - off));
      if (w < 0) {
        if (errno == EINTR)
          continue;
        snprintf(err, errlen, "writing private copy failed: %s",
                 strerror(errno));
        close(in);
        return -1;
      }
      off += w;
    }
  }
  close(in);
  return 0;
}

/* Checks that the private copy is a complete ELF shared object before
 * dlopen maps it: a file caught half-written can have intact headers and
 * truncated segments, and touching a mapping past the end of a file is
 * SIGBUS.  ElfW() is the host's own class, which is the only one dlopen
 * accepts anyway. */
static int check_elf(const char *path, char *err, size_t errlen) {
  ElfW(Ehdr) eh;
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  int rc = -1;

  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(err, errlen, "cannot read private copy: %s", strerror(errno));
    goto out;
  }
  if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    snprintf(err, errlen, "not an ELF file (is it a shared object?)");
    goto out;
  }
  if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)) {
    snprintf(err, errlen,
             "ELF class does not match this host (built for "
             "another architecture?)");
    goto out;
  }
  if (eh.e_type != ET_DYN) {
    snprintf(err, errlen,
             "ELF file is not a shared object (build it with "
             "-shared)");
    goto out;
  }
  if (eh.e_phentsize != sizeof(ElfW(Phdr)) ||
      (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr)) >
          (uint64_t)st.st_size ||
      (eh.e_shoff != 0 &&
       (uint64_t)eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize >
           (uint64_t)st.st_size)) {
    snprintf(err, errlen, "truncated ELF file (still being written?)");
    goto out;
  }
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    ElfW(Phdr) ph;
    if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
        (ssize_t)sizeof(ph)) {
      snprintf(err, errlen, "truncated ELF file (still being written?)");
      goto out;
    }
    if (ph.p_type == PT_LOAD &&
        (uint64_t)ph.p_offset + ph.p_filesz > (uint64_t)st.st_size) {
      snprintf(err, errlen, "truncated ELF file (still being written?)");
      goto out;
    }
  }
  rc = 0;
out:
  if (fd >= 0)
    close(fd);
  return rc;
}

static plugin *find_by_path(loader *l, const char *path) {
  for (plugin *p = l->plugins; p; p = p->next)
    if (strcmp(p->path, path) == 0)
      return p;
  return NULL;
}

/* Who already offers tool `name`, unless it is the instance being
 * replaced. */
static plugin *tool_conflict(loader *l, plugin *p, const char *name) {
  reg_tool *t = registry_find(&l->srv->registry, name);
  if (t != NULL && t->owner != p->replacing && t->owner != p)
    return t->owner;
  return NULL;
}

static int stage_tool(loader *l, plugin *p, reg_tool *t, failure_kind *kind,
                      char *err, size_t errlen) {
  plugin *other = tool_conflict(l, p, t->name);
  if (other != NULL) {
    *kind = FAILURE_CONFLICT;
    snprintf(err, errlen,
             "tool \"%s\" is already offered by plugin \"%s\" (%s)", t->name,
             other->name, other->path);
    reg_tool_release(t);
    return -1;
  }
  if (registry_add(&p->staged, t) != 0) {
    snprintf(err, errlen, "tool \"%s\" is declared twice", t->name);
    reg_tool_release(t);
    return -1;
  }
  return 0;
}

static int check_tables(loader *l, plugin *p, failure_kind *kind, char *err,
                        size_t errlen) {
  const mcpd_plugin_descriptor *d = p->desc;
  size_t i;

  for (i = 0; d->tools && i < LOADER_MAX_ENTRIES; i++) {
    const mcpd_tool *def = &d->tools[i];
    reg_tool *t;
    if (def->name == NULL && def->call == NULL)
      break;
    t = reg_tool_new(def, p, err, errlen);
    if (t == NULL || stage_tool(l, p, t, kind, err, errlen) != 0)
      return -1;
  }
  if (i == LOADER_MAX_ENTRIES) {
    snprintf(err, errlen, "tool table has no end sentinel");
    return -1;
  }
  for (i = 0; d->resources && i < LOADER_MAX_ENTRIES; i++) {
    const mcpd_resource *r = &d->resources[i];
    if (r->uri == NULL && r->name == NULL && r->read == NULL)
      break;
    if (r->uri == NULL || r->name == NULL || r->read == NULL) {
      snprintf(err, errlen,
               "resource %zu needs a uri, a name and a read "
               "callback",
               i);
      return -1;
    }
  }
  for (i = 0; d->resource_templates && i < LOADER_MAX_ENTRIES; i++) {
    const mcpd_resource_template *r = &d->resource_templates[i];
    if (r->uri_template == NULL && r->name == NULL && r->read == NULL)
      break;
    if (r->uri_template == NULL || r->name == NULL || r->read == NULL) {
      snprintf(err, errlen,
               "resource template %zu needs a uri_template, "
               "a name and a read callback",
               i);
      return -1;
    }
  }
  for (i = 0; d->prompts && i < LOADER_MAX_ENTRIES; i++) {
    const mcpd_prompt *pr = &d->prompts[i];
    if (pr->name == NULL && pr->get == NULL)
      break;
    if (!registry_valid_name(pr->name) || pr->get == NULL) {
      snprintf(err, errlen,
               "prompt %zu needs a valid name and a get "
               "callback",
               i);
      return -1;
    }
    for (size_t k = 0; pr->arguments && k <= LOADER_MAX_ENTRIES; k++) {
      const mcpd_prompt_argument *a = &pr->arguments[k];
      if (k == LOADER_MAX_ENTRIES) {
        snprintf(err, errlen,
                 "prompt \"%s\": argument table has no end "
                 "sentinel",
                 pr->name);
        return -1;
      }
      if (a->name == NULL && a->title == NULL && a->description == NULL)
        break;
      if (a->name == NULL) {
        snprintf(err, errlen, "prompt \"%s\": argument %zu has no name",
                 pr->name, k);
        return -1;
      }
    }
  }
  return 0;
}

static int check_descriptor(loader *l, plugin *p, failure_kind *kind, char *err,
                            size_t errlen) {
  const mcpd_plugin_descriptor *d = p->desc;

  if (d->abi_major != MCPD_ABI_MAJOR || d->abi_minor > MCPD_ABI_MINOR) {
    snprintf(err, errlen, "ABI %u.%u, host supports %u.0..%u.%u",
             (unsigned)d->abi_major, (unsigned)d->abi_minor, MCPD_ABI_MAJOR,
             MCPD_ABI_MAJOR, MCPD_ABI_MINOR);
    return -1;
  }
  if (d->size < offsetof(mcpd_plugin_descriptor, flags)) {
    snprintf(err, errlen,
             "descriptor size %u is smaller than ABI %u.%u "
             "allows",
             (unsigned)d->size, (unsigned)d->abi_major, (unsigned)d->abi_minor);
    return -1;
  }
  if (d->size >= offsetof(mcpd_plugin_descriptor, reserved) && d->flags != 0) {
    snprintf(err, errlen, "descriptor sets reserved flags 0x%x",
             (unsigned)d->flags);
    return -1;
  }
  for (size_t i = 0; i < sizeof(d->reserved) / sizeof(d->reserved[0]); i++)
    if (d->size >= offsetof(mcpd_plugin_descriptor, reserved) +
                       (i + 1) * sizeof(d->reserved[0]) &&
        d->reserved[i] != NULL) {
      snprintf(err, errlen, "descriptor sets reserved field %zu", i);
      return -1;
    }
  if (!registry_valid_name(d->name)) {
    snprintf(err, errlen,
             "plugin name is missing or invalid (1-64 "
             "characters of A-Z a-z 0-9 _ . -)");
    return -1;
  }
  if (d->version == NULL) {
    snprintf(err, errlen, "plugin \"%s\" has no version", d->name);
    return -1;
  }
  for (plugin *q = l->plugins; q; q = q->next)
    if (q != p->replacing && strcmp(q->name, d->name) == 0) {
      *kind = FAILURE_CONFLICT;
      snprintf(err, errlen, "plugin name \"%s\" is already used by %s", d->name,
               q->path);
      return -1;
    }
  return 0;
}

static void record_failure(loader *l, const char *path, const char *reason,
                           failure_kind kind, const struct stat *st,
                           const struct stat *dir) {
  load_failure *f;
  forget_failure(l, path);
  f = calloc(1, sizeof(*f));
  if (f == NULL)
    return;
  f->path = strdup(path);
  f->reason = strdup(reason);
  f->kind = kind;
  f->ino = st->st_ino;
  f->size = st->st_size;
  f->mode = st->st_mode;
  f->mtime = st->st_mtim;
  f->ctime = st->st_ctim;
  f->dir_mode = dir->st_mode;
  f->dir_uid = dir->st_uid;
  f->generation = l->generation;
  f->next = l->failures;
  l->failures = f;
}

/* Swaps the staged tools in: the replaced instance's tools leave and the
 * new ones arrive in the same loop turn, so no request sees neither. */
static void commit(loader *l, plugin *p) {
  registry *reg = &l->srv->registry;
  plugin *old = p->replacing;

  if (old != NULL) {
    registry_remove_owner(reg, old);
    old->live = 0;
    for (plugin **pp = &l->plugins; *pp; pp = &(*pp)->next)
      if (*pp == old) {
        *pp = old->next;
        break;
      }
  }
  for (size_t i = 0; i < p->staged.count; i++) {
    reg_tool *t = p->staged.order[i];
    if (registry_add(reg, reg_tool_ref(t)) != 0) {
      log_error("plugin \"%s\": tool \"%s\" could not be registered", p->path,
                t->name);
      reg_tool_release(t);
    }
  }
  registry_free(&p->staged);
  registry_init(&p->staged);
  p->live = 1;
  p->replacing = NULL;
  p->next = l->plugins;
  l->plugins = p;
  l->generation++;
  server_registry_changed(l->srv);
  if (old != NULL)
    plugin_release(old);
}

static plugin *load(loader *l, const char *path, plugin *replacing) {
  server *srv = l->srv;
  char err[1024] = "";
  char copy[4096];
  struct stat st, dst;
  failure_kind kind = FAILURE_FILE;
  const char *base = strrchr(path, '/');
  plugin *p;
  void *sym;

  p = calloc(1, sizeof(*p));
  if (p == NULL || registry_init(&p->staged) != 0) {
    free(p);
    log_error("plugin \"%s\": out of memory; not loaded", path);
    return NULL;
  }
  p->srv = srv;
  p->self.plugin = p;
  p->refs = 1;
  p->copy_fd = -1;
  p->replacing = replacing;
  p->path = strdup(path);
  base = base ? base + 1 : path;
  memset(&st, 0, sizeof(st));
  memset(&dst, 0, sizeof(dst));

  /* Refuse unsafe paths. */
  {
    char dir[4096];
    dir_of(path, dir, sizeof(dir));
    if (stat(dir, &dst) != 0) {
      snprintf(err, sizeof(err), "cannot stat its directory: %s",
               strerror(errno));
      goto fail;
    }
    if (check_safe("directory", dir, &dst, srv->opts->allow_insecure, err,
                   sizeof(err)) != 0) {
      kind = FAILURE_DIR;
      stat(path, &st);
      goto fail;
    }
  }
  if (stat(path, &st) != 0) {
    snprintf(err, sizeof(err), "cannot stat: %s", strerror(errno));
    goto fail;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, sizeof(err), "not a regular file");
    goto fail;
  }
  if (check_safe("file", path, &st, srv->opts->allow_insecure, err,
                 sizeof(err)) != 0)
    goto fail;
  if (st.st_size == 0) {
    snprintf(err, sizeof(err), "empty file (still being written?)");
    goto fail;
  }

  /* Copy privately, so overwriting the original in place can never change
   * a mapped image, and so a reload gets a fresh handle from dlopen. */
  {
    int fd, is_memfd;
    fd = open_copy(l, base, copy, sizeof(copy), &is_memfd);
    if (fd < 0) {
      snprintf(err, sizeof(err), "cannot make a private copy: %s",
               strerror(errno));
      goto fail;
    }
    if (copy_file(path, fd, &st, err, sizeof(err)) != 0 ||
        check_elf(copy, err, sizeof(err)) != 0) {
      if (!is_memfd)
        unlink(copy);
      close(fd);
      goto fail;
    }
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    p->size = st.st_size;
    p->mtime = st.st_mtim;
    p->dl = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
    if (is_memfd) {
      p->copy_fd = fd;
    } else {
      unlink(copy);
      close(fd);
    }
  }
  if (p->dl == NULL) {
    const char *why = dlerror();
    size_t cl = strlen(copy);
    /* dlerror names our private copy; the user knows the original. */
    if (why && strncmp(why, copy, cl) == 0 && why[cl] == ':')
      why += cl + 2;
    snprintf(err, sizeof(err),
             "dlopen failed: %s; check that it is a shared object built for "
             "this machine and its dependencies with ldd",
             why ? why : "unknown error");
    goto fail;
  }
  sym = dlsym(p->dl, MCPD_PLUGIN_SYMBOL);
  if (sym == NULL) {
    snprintf(err, sizeof(err),
             "does not export the symbol \"" MCPD_PLUGIN_SYMBOL
             "\" (not an mcpd plugin, or built without MCPD_PLUGIN_DEFINE)");
    goto fail;
  }
  p->desc = sym;
  if (check_descriptor(l, p, &kind, err, sizeof(err)) != 0)
    goto fail;
  p->name = strdup(p->desc->name);
  p->version = strdup(p->desc->version);
  p->description = p->desc->description ? strdup(p->desc->description) : NULL;
  if (check_tables(l, p, &kind, err, sizeof(err)) != 0)
    goto fail;

  if (p->desc->init) {
    char *errmsg = NULL;
    int rc;
    p->initing = 1;
    p->init_called = 1;
    rc = p->desc->init(&call_host_api, &p->self,
                       options_plugin_config(srv->opts, p->name), &p->state,
                       &errmsg);
    p->initing = 0;
    if (rc != MCPD_OK) {
      snprintf(err, sizeof(err), "init failed: %s",
               errmsg ? errmsg : "no reason given");
      free(errmsg);
      goto fail;
    }
    free(errmsg);
  } else {
    p->init_called = 1;
  }

  forget_failure(l, path);
  {
    size_t n_tools = p->staged.count;
    commit(l, p);
    log_info("loaded plugin \"%s\" %s from %s (%zu tools)", p->name, p->version,
             path, n_tools);
  }
  return p;

fail:
  log_error("plugin \"%s\": %s; %s", path, err,
            replacing ? "keeping the version already loaded" : "not loaded");
  record_failure(l, path, err, kind, &st, &dst);
  p->replacing = NULL;
  plugin_release(p);
  return NULL;
}

plugin *loader_load_file(loader *l, const char *path) {
  return load(l, path, find_by_path(l, path));
}

void loader_unload(loader *l, plugin *p) {
  for (plugin **pp = &l->plugins; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  if (p->live) {
    registry_remove_owner(&l->srv->registry, p);
    p->live = 0;
    server_registry_changed(l->srv);
  }
  l->generation++;
  log_info("unloaded plugin \"%s\" (%s)", p->name, p->path);
  plugin_release(p);
}

int loader_add_tool(plugin *p, reg_tool *t) {
  loader *l = &p->srv->loader;
  char err[600];

  if (p->initing) {
    failure_kind kind;
    if (stage_tool(l, p, t, &kind, err, sizeof(err)) != 0) {
      log_error("plugin \"%s\": add_tool refused: %s", p->name, err);
      return -1;
    }
    return 0;
  }
  if (!p->live) {
    reg_tool_release(t);
    return -1;
  }
  {
    plugin *other = tool_conflict(l, p, t->name);
    if (other != NULL || registry_find(&p->srv->registry, t->name)) {
      log_error("plugin \"%s\": add_tool refused: tool \"%s\" is already "
                "offered by plugin \"%s\"",
                p->name, t->name, other ? other->name : p->name);
      reg_tool_release(t);
      return -1;
    }
  }
  if (registry_add(&p->srv->registry, t) != 0) {
    reg_tool_release(t);
    return -1;
  }
  server_registry_changed(p->srv);
  return 0;
}

int loader_remove_tool(plugin *p, const char *name) {
  reg_tool *t;
  if (p->initing) {
    t = registry_find(&p->staged, name);
    return t ? registry_remove(&p->staged, t) : -1;
  }
  t = registry_find(&p->srv->registry, name);
  if (t == NULL || t->owner != p)
    return -1;
  registry_remove(&p->srv->registry, t);
  server_registry_changed(p->srv);
  return 0;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && strcmp(s + n - m, suffix) == 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int same_time(struct timespec a, struct timespec b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Whether `path` was already refused for a reason that still holds, so it
 * is not tried (and reported) again on every scan. */
static int failed_before(loader *l, const char *path, const struct stat *st) {
  for (load_failure *f = l->failures; f; f = f->next) {
    if (strcmp(f->path, path) != 0)
      continue;
    /* chmod and chown change ctime only, so it is part of the identity. */
    if (f->ino != st->st_ino || f->size != st->st_size ||
        f->mode != st->st_mode || !same_time(f->mtime, st->st_mtim) ||
        !same_time(f->ctime, st->st_ctim))
      return 0;
    switch (f->kind) {
    case FAILURE_CONFLICT:
      return f->generation == l->generation;
    case FAILURE_DIR: {
      struct stat dir;
      char buf[4096];
      dir_of(path, buf, sizeof(buf));
      return stat(buf, &dir) == 0 && dir.st_mode == f->dir_mode &&
             dir.st_uid == f->dir_uid;
    }
    default:
      return 1;
    }
  }
  return 0;
}

static size_t scan_dir(loader *l, const char *dir, int explicit_dir) {
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
    if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".so"))
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
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    free(names[i]);
    if (stat(path, &st) != 0)
      continue;
    p = find_by_path(l, path);
    if (p != NULL) {
      if (p->dev == st.st_dev && p->ino == st.st_ino && p->size == st.st_size &&
          p->mtime.tv_sec == st.st_mtim.tv_sec &&
          p->mtime.tv_nsec == st.st_mtim.tv_nsec)
        continue;
      if (failed_before(l, path, &st))
        continue;
      log_info("plugin file %s changed; reloading", path);
      if (load(l, path, p) != NULL)
        changes++;
      continue;
    }
    if (failed_before(l, path, &st))
      continue;
    if (load(l, path, NULL) != NULL)
      changes++;
  }
  free(names);
  return changes;
}

size_t loader_scan(loader *l) {
  options *o = l->srv->opts;
  size_t changes = 0;
  plugin *p, *next;

  /* Unload what disappeared first, so a file renamed within the folders
   * does not collide with its own earlier instance. */
  for (p = l->plugins; p; p = next) {
    struct stat st;
    next = p->next;
    if (stat(p->path, &st) != 0 && errno == ENOENT) {
      loader_unload(l, p);
      changes++;
    }
  }
  for (size_t k = 0; k < o->n_plugin_dirs; k++)
    changes += scan_dir(l, o->plugin_dirs[k], o->plugin_dirs_given);
  /* Forget refusals of files that are gone. */
  for (load_failure *f = l->failures, *fn; f; f = fn) {
    struct stat st;
    fn = f->next;
    if (stat(f->path, &st) != 0 && errno == ENOENT)
      forget_failure(l, f->path);
  }
  return changes;
}
