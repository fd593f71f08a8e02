/* SPDX-License-Identifier: MIT */
/* watch.c -- subscriptions as streams: a client subscribed to a database's
 * resources (its schema, a table's schema or rows) hears
 * notifications/resources/updated within a second of any change, whoever
 * made it -- this plugin's `execute`, the sqlite3 shell, another program.
 *
 * One thread watches, with inotify, the directories of the databases that
 * have subscribers, for writes to the database file and its -wal and
 * -journal files.  A burst of writes is one notification: the thread
 * waits for a short quiet (or a longest delay), then asks the database
 * whether it changed (PRAGMA data_version, which moves when any other
 * connection commits) and tells the host of every subscribed URI of it.
 *
 * The portable build (MCPD_PORTABLE) has no inotify: while a database has
 * subscribers, the thread stat()s its file, -wal and -journal every
 * POLL_MS (and more often while a burst is on) and takes a difference --
 * another inode, size, or modification or change time -- as a write.  The
 * rest is the same.  It asks no SQLite lock for that, so a writer that
 * sets no busy timeout is never made to fail by it. */
#ifndef MCPD_PORTABLE
#define _GNU_SOURCE /* pipe2 */
#elif defined(__APPLE__)
#define _DARWIN_C_SOURCE /* st_mtimespec, beside _POSIX_C_SOURCE */
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifndef MCPD_PORTABLE
#include <sys/inotify.h>
#endif

#include "sqlite.h"

#define QUIET_MS 100   /* a burst is over after this long without a write */
#define LONGEST_MS 500 /* and is reported after this long at the latest */

#ifdef MCPD_PORTABLE
/* How often the files of a subscribed database are looked at. */
#define POLL_MS 250

/* The files whose writes are a database's: itself and its journals. */
static const char *const db_files[] = {"", "-wal", "-journal"};
#define N_DB_FILES (sizeof(db_files) / sizeof(db_files[0]))

/* What stat(2) said of one of them; all zero when it was missing. */
typedef struct file_look {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
} file_look;

#ifdef __APPLE__
#define MTIM(sb) ((sb).st_mtimespec)
#define CTIM(sb) ((sb).st_ctimespec)
#else
#define MTIM(sb) ((sb).st_mtim)
#define CTIM(sb) ((sb).st_ctim)
#endif
#endif

typedef struct sub {
  char *uri;
  size_t db; /* index in st->dbs */
  struct sub *next;
} sub;

typedef struct db_watch {
#ifndef MCPD_PORTABLE
  int wd; /* inotify watch on its directory, or -1 */
#else
  file_look files[N_DB_FILES]; /* as last looked at */
#endif
  size_t subscribers;
  int dirty;
  long long first_ms; /* when the burst began */
  long long last_ms;  /* its latest write */
  sqlite3 *db;        /* the thread's own connection, for data_version */
  int version;
} db_watch;

struct sq_watch {
  struct sq_state *st;
  pthread_mutex_t lock; /* guards subs and dbs[].subscribers/wd/files */
  sub *subs;
  db_watch *dbs;
#ifndef MCPD_PORTABLE
  int inotify;
#endif
  int wake[2]; /* "x": stop; (portable) "s": a database got subscribers */
  pthread_t thread;
  int running;
};

static long long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#ifndef MCPD_PORTABLE
static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Whether a directory entry named `name` is database `path`'s file or one
 * of its journals. */
static int is_db_file(const char *path, const char *name) {
  const char *base = base_name(path);
  size_t n = strlen(base);
  return strncmp(name, base, n) == 0 &&
         (name[n] == '\0' || strcmp(name + n, "-wal") == 0 ||
          strcmp(name + n, "-journal") == 0);
}
#else
/* Looks at database `path`'s files into `out`. */
static void look_files(const char *path, file_look out[N_DB_FILES]) {
  char name[PATH_MAX];
  struct stat sb;

  memset(out, 0, N_DB_FILES * sizeof(*out));
  for (size_t k = 0; k < N_DB_FILES; k++) {
    if ((size_t)snprintf(name, sizeof(name), "%s%s", path, db_files[k]) >=
            sizeof(name) ||
        stat(name, &sb) != 0)
      continue;
    out[k].dev = sb.st_dev;
    out[k].ino = sb.st_ino;
    out[k].size = sb.st_size;
    out[k].mtime = MTIM(sb);
    out[k].ctime = CTIM(sb);
  }
}

static int same_look(const file_look *a, const file_look *b) {
  return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
         a->mtime.tv_sec == b->mtime.tv_sec &&
         a->mtime.tv_nsec == b->mtime.tv_nsec &&
         a->ctime.tv_sec == b->ctime.tv_sec &&
         a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* Looks at the files of every subscribed database: one that changed since
 * the last look is written to, as an inotify event would say.  Returns
 * whether any database has subscribers. */
static int look_again(struct sq_watch *w) {
  long long now = mono_ms();
  int watching = 0;

  pthread_mutex_lock(&w->lock);
  for (size_t i = 0; i < w->st->n_dbs; i++) {
    db_watch *dw = &w->dbs[i];
    file_look now_files[N_DB_FILES];
    int changed = 0;

    if (dw->subscribers == 0)
      continue;
    watching = 1;
    look_files(w->st->dbs[i].path, now_files);
    for (size_t k = 0; k < N_DB_FILES; k++)
      changed |= !same_look(&now_files[k], &dw->files[k]);
    if (!changed)
      continue;
    memcpy(dw->files, now_files, sizeof(now_files));
    if (!dw->dirty)
      dw->first_ms = now;
    dw->dirty = 1;
    dw->last_ms = now;
  }
  pthread_mutex_unlock(&w->lock);
  return watching;
}
#endif

/* data_version of database `i` on the thread's connection; -1 when it
 * cannot be read. */
static int data_version(struct sq_watch *w, size_t i) {
  db_watch *dw = &w->dbs[i];
  sqlite3_stmt *stmt = NULL;
  int v = -1;

  if (dw->db == NULL &&
      sqlite3_open_v2(w->st->dbs[i].path, &dw->db, SQLITE_OPEN_READONLY,
                      NULL) != SQLITE_OK) {
    sqlite3_close(dw->db);
    dw->db = NULL;
    return -1;
  }
  if (sqlite3_prepare_v2(dw->db, "PRAGMA data_version", -1, &stmt, NULL) ==
          SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW)
    v = sqlite3_column_int(stmt, 0);
  sqlite3_finalize(stmt);
  return v;
}

/* A burst on database `i` is over: tell the host of its subscribed URIs
 * when the database says it changed. */
static void settle(struct sq_watch *w, size_t i) {
  db_watch *dw = &w->dbs[i];
  int v = data_version(w, i);
  char **uris = NULL;
  size_t n = 0;

  dw->dirty = 0;
  pthread_mutex_lock(&w->lock);
  if (v >= 0 && v == dw->version) {
    /* Written, but nothing committed (a reader's journal, say). */
    pthread_mutex_unlock(&w->lock);
    return;
  }
  dw->version = v;
  for (const sub *s = w->subs; s; s = s->next)
    if (s->db == i) {
      char **grown = realloc(uris, (n + 1) * sizeof(*uris));
      if (grown == NULL)
        break;
      uris = grown;
      if ((uris[n] = strdup(s->uri)) != NULL)
        n++;
    }
  pthread_mutex_unlock(&w->lock);
  /* Outside the lock: the host may call back into subscribe. */
  for (size_t k = 0; k < n; k++) {
    w->st->host->resource_updated(w->st->self, uris[k]);
    free(uris[k]);
  }
  free(uris);
}

static void *watch_thread(void *arg) {
  struct sq_watch *w = arg;
#ifndef MCPD_PORTABLE
  char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
#else
  int watching = 0;
#endif

  for (;;) {
#ifndef MCPD_PORTABLE
    struct pollfd fds[2] = {{w->inotify, POLLIN, 0}, {w->wake[0], POLLIN, 0}};
#else
    /* No events to read: poll() skips a negative descriptor. */
    struct pollfd fds[2] = {{-1, 0, 0}, {w->wake[0], POLLIN, 0}};
#endif
    long long now = mono_ms(), wait = -1;

    /* The soonest burst to settle decides how long to sleep. */
    for (size_t i = 0; i < w->st->n_dbs; i++) {
      const db_watch *dw = &w->dbs[i];
      long long due;
      if (!dw->dirty)
        continue;
      due = dw->last_ms + QUIET_MS;
      if (due > dw->first_ms + LONGEST_MS)
        due = dw->first_ms + LONGEST_MS;
      if (wait < 0 || due - now < wait)
        wait = due > now ? due - now : 0;
    }
#ifdef MCPD_PORTABLE
    if (watching && (wait < 0 || wait > POLL_MS))
      wait = POLL_MS;
#endif
    if (poll(fds, 2, (int)wait) < 0 && errno != EINTR)
      break;
#ifndef MCPD_PORTABLE
    if (fds[1].revents & POLLIN)
      break; /* stop */
    if (fds[0].revents & POLLIN) {
      ssize_t len = read(w->inotify, buf, sizeof(buf));
      now = mono_ms();
      for (char *p = buf; len > 0 && p < buf + len;) {
        const struct inotify_event *ev = (const struct inotify_event *)p;
        pthread_mutex_lock(&w->lock);
        for (size_t i = 0; i < w->st->n_dbs; i++) {
          db_watch *dw = &w->dbs[i];
          if (dw->wd == ev->wd && dw->subscribers > 0 && ev->len > 0 &&
              is_db_file(w->st->dbs[i].path, ev->name)) {
            if (!dw->dirty)
              dw->first_ms = now;
            dw->dirty = 1;
            dw->last_ms = now;
          }
        }
        pthread_mutex_unlock(&w->lock);
        p += sizeof(*ev) + ev->len;
      }
    }
#else
    if (fds[1].revents & POLLIN) {
      char cmd[64];
      ssize_t len;
      int stop = 0;

      while ((len = read(w->wake[0], cmd, sizeof(cmd))) > 0)
        stop |= memchr(cmd, 'x', (size_t)len) != NULL;
      if (stop)
        break;
    }
    watching = look_again(w);
#endif
    now = mono_ms();
    for (size_t i = 0; i < w->st->n_dbs; i++) {
      db_watch *dw = &w->dbs[i];
      if (dw->dirty &&
          (now - dw->last_ms >= QUIET_MS || now - dw->first_ms >= LONGEST_MS))
        settle(w, i);
    }
  }
  return NULL;
}

int sq_watch_start(struct sq_state *st) {
  struct sq_watch *w = calloc(1, sizeof(*w));

  if (w == NULL || (w->dbs = calloc(st->n_dbs + 1, sizeof(*w->dbs))) == NULL) {
    free(w);
    return -1;
  }
  w->st = st;
  pthread_mutex_init(&w->lock, NULL);
#ifndef MCPD_PORTABLE
  for (size_t i = 0; i < st->n_dbs; i++)
    w->dbs[i].wd = -1;
  w->inotify = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (w->inotify < 0 || pipe2(w->wake, O_CLOEXEC) != 0 ||
      pthread_create(&w->thread, NULL, watch_thread, w) != 0) {
    if (w->inotify >= 0)
      close(w->inotify);
    pthread_mutex_destroy(&w->lock);
    free(w->dbs);
    free(w);
    return -1;
  }
#else
  /* Only the thread's end is non-blocking: "x" must always get through. */
  w->wake[0] = w->wake[1] = -1;
  if (pipe(w->wake) != 0 || fcntl(w->wake[0], F_SETFD, FD_CLOEXEC) != 0 ||
      fcntl(w->wake[1], F_SETFD, FD_CLOEXEC) != 0 ||
      fcntl(w->wake[0], F_SETFL, O_NONBLOCK) != 0 ||
      pthread_create(&w->thread, NULL, watch_thread, w) != 0) {
    for (int k = 0; k < 2; k++) {
      if (w->wake[k] >= 0)
        close(w->wake[k]);
    }
    pthread_mutex_destroy(&w->lock);
    free(w->dbs);
    free(w);
    return -1;
  }
#endif
  w->running = 1;
  st->watch = w;
  return 0;
}

void sq_watch_stop(struct sq_state *st) {
  struct sq_watch *w = st->watch;

  if (w == NULL)
    return;
  (void)!write(w->wake[1], "x", 1);
  pthread_join(w->thread, NULL);
  close(w->wake[0]);
  close(w->wake[1]);
#ifndef MCPD_PORTABLE
  close(w->inotify);
#endif
  while (w->subs != NULL) {
    sub *s = w->subs;
    w->subs = s->next;
    free(s->uri);
    free(s);
  }
  for (size_t i = 0; i < st->n_dbs; i++)
    sqlite3_close(w->dbs[i].db);
  pthread_mutex_destroy(&w->lock);
  free(w->dbs);
  free(w);
  st->watch = NULL;
}

#ifndef MCPD_PORTABLE
/* The directory of database `i`, into `dir`. */
static void dir_of(const char *path, char *dir, size_t size) {
  size_t n = (size_t)(base_name(path) - path);
  if (n == 0 || n >= size)
    n = 1;
  memcpy(dir, n == 1 && path[0] != '/' ? "." : path, n);
  dir[n > 1 ? n - 1 : n] = '\0';
}
#endif

void sq_subscribe_cb(const mcpd_request *req, int subscribed) {
  struct sq_state *st = req->state;
  struct sq_watch *w = st->watch;
  const struct sq_database *d =
      req->variables != NULL
          ? sq_find_database(st, sq_arg_string(req->variables, "database"))
          : req->data;
  size_t i;

  if (w == NULL || d == NULL)
    return;
  i = (size_t)(d - st->dbs);
  pthread_mutex_lock(&w->lock);
  if (subscribed) {
    sub *s = calloc(1, sizeof(*s));
    if (s != NULL && (s->uri = strdup(req->name)) != NULL) {
      s->db = i;
      s->next = w->subs;
      w->subs = s;
      if (w->dbs[i].subscribers++ == 0) {
#ifndef MCPD_PORTABLE
        char dir[PATH_MAX];
        dir_of(d->path, dir, sizeof(dir));
        w->dbs[i].wd = inotify_add_watch(w->inotify, dir,
                                         IN_MODIFY | IN_CLOSE_WRITE |
                                             IN_MOVED_TO | IN_CREATE);
#else
        /* Looked at now, so a write right after the subscription is a
         * change; then the thread, woken, looks every POLL_MS. */
        look_files(d->path, w->dbs[i].files);
        (void)!write(w->wake[1], "s", 1);
#endif
        /* What the database says now is the start. */
        w->dbs[i].version = -2;
      }
    } else {
      free(s);
    }
  } else {
    for (sub **pp = &w->subs; *pp; pp = &(*pp)->next)
      if ((*pp)->db == i && strcmp((*pp)->uri, req->name) == 0) {
        sub *s = *pp;
        *pp = s->next;
        free(s->uri);
        free(s);
#ifndef MCPD_PORTABLE
        if (--w->dbs[i].subscribers == 0) {
          int shared = 0;
          for (size_t k = 0; k < st->n_dbs; k++)
            shared |= k != i && w->dbs[k].subscribers > 0 &&
                      w->dbs[k].wd == w->dbs[i].wd;
          if (!shared && w->dbs[i].wd >= 0)
            inotify_rm_watch(w->inotify, w->dbs[i].wd);
          w->dbs[i].wd = -1;
        }
#else
        w->dbs[i].subscribers--; /* the thread stops looking at none */
#endif
        break;
      }
  }
  pthread_mutex_unlock(&w->lock);
}
