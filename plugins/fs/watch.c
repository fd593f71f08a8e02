/* SPDX-License-Identifier: MIT */
/* watch.c -- resource subscriptions through inotify, or, in the portable
 * build (MCPD_PORTABLE), by looking at the files every 250 ms.
 *
 * The first subscription starts one inotify instance and one thread per
 * plugin instance (nothing is spent while nobody subscribes).  The
 * subscribe callback runs on mcpd's loop thread: it records the URI and
 * arms a watch on the file at once, so a change made right after the
 * subscribe response is seen.  Arming is a path lookup and an
 * inotify_add_watch(), no reading.
 *
 * The thread polls the inotify descriptor and an eventfd that wakes it for
 * new subscriptions and for fini().  Events mark their subscriptions dirty;
 * 75 ms after the first one of a burst the thread checks each dirty
 * subscription's path again -- an editor that saves by renaming a new file
 * over the old one leaves the watch on the old inode, so the new file is
 * watched instead -- and sends notifications/resources/updated for each.
 * A subscription whose file is missing is retried every second and
 * reported when the file appears.
 *
 * The portable build has neither inotify nor eventfd.  Arming there is
 * remembering what fstatat(2) says of the path -- inode, type, size, and
 * the modification and change times to the nanosecond -- and the thread,
 * woken through a pipe, looks again every FS_POLL_MS: what differs marks
 * the subscription dirty, as an event would, and the rest is the same.
 * A directory's times move when its entries do, a file's when it is
 * written or its attributes change; a file replaced by a rename is
 * another inode.  (A change that keeps the size and lands within the file
 * system's timestamp granularity of the one before can go unseen.)
 *
 * Without configured roots a subscription has no roots of its own: the
 * subscribe callback has no call, so no client to ask.  Its URI is looked
 * up again, on every arming, beneath the client roots the latest call saw
 * (fs_roots_seen()), and every subscription is armed again when those
 * change (roots.c tells the listener this file registers, rearm_cb()): a
 * file outside them is not watched.
 *
 * Everything in struct fs_watch is guarded by `lock`, except the thread,
 * the descriptors (set before the thread starts) and the host calls, made
 * without the lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef MCPD_PORTABLE
#include <sys/eventfd.h>
#include <sys/inotify.h>
#endif

#include "fs.h"
#include "roots.h"
#include "watch.h"

#define FS_COALESCE_MS 75
#define FS_RETRY_MS 1000
#define FS_POLL_MS 250 /* the portable build: how often files are looked at */

#ifndef MCPD_PORTABLE
/* What changes a subscriber cares about.  A directory's listing changes
 * with its entries; what is written inside its files does not. */
#define FS_FILE_MASK                                                           \
  (IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
#define FS_DIR_MASK                                                            \
  (IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_CREATE | IN_DELETE |         \
   IN_MOVED_FROM | IN_MOVED_TO)
#endif

struct subscription {
  char *uri;
  /* Beneath the configured roots; target.root is NULL without them. */
  struct fs_target target;
  unsigned count; /* the host says subscribe once per URI; be safe anyway */
#ifndef MCPD_PORTABLE
  int wd;    /* -1 while not armed: the file is missing */
  dev_t dev; /* the inode the watch is on */
  ino_t ino;
#else
  int armed;         /* 0: the file is missing */
  struct stat sb;    /* what it was when last looked at */
#endif
  int dirty;
};

struct fs_watch {
  struct fs_state *st;
  pthread_mutex_t lock;
  pthread_t thread;
#ifndef MCPD_PORTABLE
  int ifd; /* inotify */
  int efd; /* eventfd: wakes the thread */
#else
  int wake[2];       /* a pipe that wakes the thread */
  long long poll_at; /* when to look at the files again */
#endif
  int stop;
  atomic_int rearm; /* the roots seen changed: arm everything again */
  struct subscription *subs;
  size_t n_subs, cap_subs;
  long long flush_at; /* when to send what is dirty; 0: nothing is */
  long long retry_at; /* when to look for missing files again */
};

static void wake(struct fs_watch *w) {
  ssize_t r;
#ifndef MCPD_PORTABLE
  uint64_t one = 1;

  do
    r = write(w->efd, &one, sizeof(one));
  while (r < 0 && errno == EINTR);
  /* EAGAIN: the counter is already nonzero, so the thread wakes anyway. */
#else
  do
    r = write(w->wake[1], "", 1);
  while (r < 0 && errno == EINTR);
  /* EAGAIN: the pipe is full, so the thread wakes anyway. */
#endif
}

/* Whether the subscription's file is being watched: it was found when
 * last armed. */
static int is_armed(const struct subscription *s) {
#ifndef MCPD_PORTABLE
  return s->wd >= 0;
#else
  return s->armed;
#endif
}

/* The listener of the roots seen (fs_roots_listen()): they changed, so the
 * thread arms every subscription again.  Any thread; takes no lock. */
static void rearm_cb(void *arg) {
  struct fs_watch *w = arg;

  atomic_store(&w->rearm, 1);
  wake(w);
}

#ifndef MCPD_PORTABLE
/* Removes the kernel watch `wd` unless another subscription still uses
 * it: inotify gives every watch on one inode the same descriptor. */
static void release_wd(struct fs_watch *w, int wd) {
  if (wd < 0)
    return;
  for (size_t i = 0; i < w->n_subs; i++) {
    if (w->subs[i].wd == wd)
      return;
  }
  inotify_rm_watch(w->ifd, wd); /* EINVAL: the kernel already dropped it */
}

/* Opens (O_PATH) what the subscription's URI names now, beneath its
 * roots, and sets *path to its absolute path (malloc; may be NULL). */
static int open_subscribed(struct fs_watch *w, struct subscription *s,
                           char **path) {
  struct fs_state *st = w->st;
  struct fs_roots roots;
  struct fs_target t = {0};
  int fd;

  *path = NULL;
  if (s->target.root != NULL) {
    fd = fs_open_beneath(st, s->target.root, s->target.rel, O_PATH, 0);
    if (fd >= 0)
      *path = fs_target_path(&s->target);
    return fd;
  }
  if ((fd = fs_roots_seen(st, &roots)) != FS_OK)
    return fd;
  if ((fd = fs_locate_uri(&roots, s->uri, &t)) == FS_OK) {
    fd = fs_open_beneath(st, t.root, t.rel, O_PATH, 0);
    if (fd >= 0)
      *path = fs_target_path(&t);
  }
  fs_target_free(&t);
  fs_roots_release(&roots);
  return fd;
}

/* Puts a watch on whatever is now at the subscription's path, replacing
 * the one it had when that was another inode.  Returns 1 when the
 * subscription has a watch afterwards.  Lock held. */
static int arm(struct fs_watch *w, struct subscription *s) {
  struct fs_state *st = w->st;
  struct stat sb;
  char proc[64], *path;
  int fd, wd, err, old = s->wd;
  uint32_t mask;

  fd = open_subscribed(w, s, &path);
  if (fd < 0 || fstat(fd, &sb) != 0) {
    if (fd >= 0)
      close(fd);
    free(path);
    s->wd = -1;
    release_wd(w, old);
    return 0;
  }
  if (old >= 0 && sb.st_dev == s->dev && sb.st_ino == s->ino) {
    close(fd);
    free(path);
    return 1;
  }
  mask = (S_ISDIR(sb.st_mode) ? FS_DIR_MASK : FS_FILE_MASK) | IN_MASK_ADD;
  /* The path through /proc names the inode we opened beneath the root, so
   * nothing is resolved again outside our control. */
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  wd = inotify_add_watch(w->ifd, proc, mask);
  err = errno;
  if (wd < 0 && err == ENOENT && path != NULL) {
    /* No /proc.  The absolute path is the best left; IN_DONT_FOLLOW keeps
     * a link swapped in as the last component from being followed. */
    wd = inotify_add_watch(w->ifd, path, mask | IN_DONT_FOLLOW);
    err = errno;
  }
  free(path);
  close(fd);
  s->wd = wd < 0 ? -1 : wd;
  s->dev = sb.st_dev;
  s->ino = sb.st_ino;
  if (old != s->wd)
    release_wd(w, old);
  if (wd < 0) {
    st->host->log(st->self, MCPD_LOG_WARNING,
                  "cannot watch %s for its subscribers: %s%s", s->uri,
                  fs_strerror(-err),
                  err == ENOSPC ? " (raise fs.inotify.max_user_watches?)" : "");
    return 0;
  }
  return 1;
}

static void handle_events(struct fs_watch *w, const char *buf, size_t len) {
  const char *p = buf;
  int any = 0;

  while (p + sizeof(struct inotify_event) <= buf + len) {
    const struct inotify_event *ev = (const struct inotify_event *)p;

    for (size_t i = 0; i < w->n_subs; i++) {
      struct subscription *s = &w->subs[i];

      if ((ev->mask & IN_Q_OVERFLOW) || s->wd == ev->wd) {
        s->dirty = 1;
        any = 1;
        /* The kernel dropped the watch: its inode is gone. */
        if ((ev->mask & IN_IGNORED) && s->wd == ev->wd)
          s->wd = -1;
      }
    }
    p += sizeof(struct inotify_event) + ev->len;
  }
  if (any && w->flush_at == 0)
    w->flush_at = fs_now_ms() + FS_COALESCE_MS;
}

#else /* MCPD_PORTABLE */

/* Looks at what the subscription's URI names now, beneath its roots: the
 * configured ones, or `seen`, the client roots the latest call saw (NULL
 * when there are none). */
static int look(struct fs_watch *w, const struct subscription *s,
                const struct fs_roots *seen, struct stat *sb) {
  struct fs_target t = {0};
  int rc;

  if (s->target.root != NULL)
    return fs_stat_beneath(w->st, s->target.root, s->target.rel, 0, sb, NULL,
                           0);
  if (seen == NULL)
    return FS_E_NOROOTS;
  if ((rc = fs_locate_uri(seen, s->uri, &t)) == FS_OK)
    rc = fs_stat_beneath(w->st, t.root, t.rel, 0, sb, NULL, 0);
  fs_target_free(&t);
  return rc;
}

/* Whether two looks at a path tell of a change: another inode, or a write
 * or an attribute change of the same one. */
static int differs(const struct stat *a, const struct stat *b) {
  return a->st_dev != b->st_dev || a->st_ino != b->st_ino ||
         a->st_mode != b->st_mode || a->st_size != b->st_size ||
         FS_MTIM(a).tv_sec != FS_MTIM(b).tv_sec ||
         FS_MTIM(a).tv_nsec != FS_MTIM(b).tv_nsec ||
         FS_CTIM(a).tv_sec != FS_CTIM(b).tv_sec ||
         FS_CTIM(a).tv_nsec != FS_CTIM(b).tv_nsec;
}

/* Remembers what is now at the subscription's path.  Returns 1 when
 * something is there.  Lock held. */
static int arm(struct fs_watch *w, struct subscription *s) {
  struct fs_roots seen;
  struct stat sb;
  int have = s->target.root == NULL && fs_roots_seen(w->st, &seen) == FS_OK;

  s->armed = look(w, s, have ? &seen : NULL, &sb) == FS_OK;
  if (s->armed)
    s->sb = sb;
  if (have)
    fs_roots_release(&seen);
  return s->armed;
}

/* Looks at every watched path again: what changed is dirty, as after an
 * inotify event, and the next flush arms it again.  Lock held. */
static void look_again(struct fs_watch *w) {
  struct fs_roots seen;
  int have = 0, any = 0;

  if (w->n_subs == 0)
    return;
  /* Without configured roots, every subscription is looked up beneath the
   * roots seen: open them once for all. */
  if (w->st->n_roots == 0)
    have = fs_roots_seen(w->st, &seen) == FS_OK;
  for (size_t i = 0; i < w->n_subs; i++) {
    struct subscription *s = &w->subs[i];
    struct stat sb;

    if (!s->armed || s->dirty)
      continue;
    if (look(w, s, have ? &seen : NULL, &sb) != FS_OK || differs(&sb, &s->sb))
      s->dirty = any = 1;
  }
  if (have)
    fs_roots_release(&seen);
  if (any && w->flush_at == 0)
    w->flush_at = fs_now_ms() + FS_COALESCE_MS;
}
#endif

/* Re-arms what needs it and takes the URIs to announce.  Lock held. */
static char **collect(struct fs_watch *w, long long now, size_t *n_out) {
  char **uris = NULL;
  size_t n = 0;
  int flush = w->flush_at != 0 && now >= w->flush_at;
  int retry = now >= w->retry_at;
  int rearm = atomic_exchange(&w->rearm, 0);
  int appeared = 0;

  for (size_t i = 0; i < w->n_subs; i++) {
    struct subscription *s = &w->subs[i];

    if (rearm || (flush && s->dirty) || (retry && !is_armed(s))) {
      int was_armed = is_armed(s);
      /* A file that appeared where none was is a change too; one that
       * came within the roots because they changed is not. */
      if (arm(w, s) && !was_armed && !rearm)
        s->dirty = appeared = 1;
    }
  }
  if (retry)
    w->retry_at = now + FS_RETRY_MS;
  if (!flush && !appeared)
    return NULL;
  w->flush_at = 0;
  for (size_t i = 0; i < w->n_subs; i++) {
    if (w->subs[i].dirty) {
      if (uris == NULL && (uris = calloc(w->n_subs, sizeof(*uris))) == NULL)
        break; /* Out of memory: they stay dirty for the next round. */
      if ((uris[n] = strdup(w->subs[i].uri)) == NULL)
        break;
      w->subs[i].dirty = 0;
      n++;
    }
  }
  *n_out = n;
  return uris;
}

static int poll_timeout(struct fs_watch *w, long long now) {
  long long until = -1;
  int missing = 0;

  for (size_t i = 0; i < w->n_subs && !missing; i++)
    missing = !is_armed(&w->subs[i]);
  if (missing)
    until = w->retry_at;
  if (w->flush_at != 0 && (until < 0 || w->flush_at < until))
    until = w->flush_at;
#ifdef MCPD_PORTABLE
  if (w->n_subs > 0 && (until < 0 || w->poll_at < until))
    until = w->poll_at;
#endif
  if (until < 0)
    return -1;
  return until <= now ? 0 : (int)(until - now);
}

static void *watch_main(void *arg) {
  struct fs_watch *w = arg;
  const mcpd_host *host = w->st->host;
#ifndef MCPD_PORTABLE
  /* Aligned for struct inotify_event, as inotify(7) asks. */
  _Alignas(struct inotify_event) char buf[4096];
#else
  char buf[64];
#endif

  pthread_mutex_lock(&w->lock);
  while (!w->stop) {
#ifndef MCPD_PORTABLE
    struct pollfd fds[2] = {{.fd = w->ifd, .events = POLLIN},
                            {.fd = w->efd, .events = POLLIN}};
#else
    /* No events to read: poll() skips a negative descriptor. */
    struct pollfd fds[2] = {{.fd = -1}, {.fd = w->wake[0], .events = POLLIN}};
#endif
    int timeout = poll_timeout(w, fs_now_ms());
    char **uris;
    size_t n = 0;

    pthread_mutex_unlock(&w->lock);
    if (poll(fds, 2, timeout) < 0 && errno != EINTR) {
      host->log(w->st->self, MCPD_LOG_ERROR,
                "watching subscribed files failed: poll: %s",
                fs_strerror(-errno));
      pthread_mutex_lock(&w->lock);
      break;
    }
    if (fds[1].revents & POLLIN) {
#ifndef MCPD_PORTABLE
      uint64_t count;
      if (read(w->efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
        host->log(w->st->self, MCPD_LOG_WARNING, "eventfd: %s",
                  fs_strerror(-errno));
#else
      while (read(w->wake[0], buf, sizeof(buf)) > 0)
        ;
#endif
    }
    pthread_mutex_lock(&w->lock);
#ifndef MCPD_PORTABLE
    if (fds[0].revents & POLLIN) {
      ssize_t len;
      while ((len = read(w->ifd, buf, sizeof(buf))) > 0)
        handle_events(w, buf, (size_t)len);
    }
#else
    if (fs_now_ms() >= w->poll_at) {
      look_again(w);
      w->poll_at = fs_now_ms() + FS_POLL_MS;
    }
#endif
    uris = collect(w, fs_now_ms(), &n);
    if (uris) {
      pthread_mutex_unlock(&w->lock);
      for (size_t i = 0; i < n; i++) {
        host->resource_updated(w->st->self, uris[i]);
        free(uris[i]);
      }
      free(uris);
      pthread_mutex_lock(&w->lock);
    }
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

static struct fs_watch *watch_start(struct fs_state *st) {
  struct fs_watch *w = calloc(1, sizeof(*w));
  int err;

  if (w == NULL)
    return NULL;
  w->st = st;
#ifndef MCPD_PORTABLE
  w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (w->ifd < 0 || w->efd < 0) {
    err = errno;
    goto fail;
  }
#else
  w->wake[0] = w->wake[1] = -1;
  if (pipe(w->wake) != 0) {
    err = errno;
    goto fail;
  }
  for (int i = 0; i < 2; i++) {
    if (fcntl(w->wake[i], F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(w->wake[i], F_SETFL, O_NONBLOCK) != 0) {
      err = errno;
      goto fail;
    }
  }
#endif
  if ((err = pthread_mutex_init(&w->lock, NULL)) != 0)
    goto fail;
  if ((err = pthread_create(&w->thread, NULL, watch_main, w)) != 0) {
    pthread_mutex_destroy(&w->lock);
    goto fail;
  }
  return w;
fail:
#ifndef MCPD_PORTABLE
  st->host->log(st->self, MCPD_LOG_ERROR,
                "cannot watch files for subscriptions: %s%s", fs_strerror(-err),
                err == EMFILE ? " (raise fs.inotify.max_user_instances?)" : "");
  if (w->ifd >= 0)
    close(w->ifd);
  if (w->efd >= 0)
    close(w->efd);
#else
  st->host->log(st->self, MCPD_LOG_ERROR,
                "cannot watch files for subscriptions: %s", fs_strerror(-err));
  for (int i = 0; i < 2; i++) {
    if (w->wake[i] >= 0)
      close(w->wake[i]);
  }
#endif
  free(w);
  return NULL;
}

static void subscription_free(struct subscription *s) {
  free(s->uri);
  fs_target_free(&s->target);
}

static void subscribe(struct fs_state *st, const char *uri) {
  struct fs_roots roots = {.v = st->roots, .n = st->n_roots};
  struct fs_watch *w;
  struct fs_target t = {0};
  struct subscription *s = NULL;
  char *path;
  int rc;

  if (st->n_roots > 0) {
    rc = fs_locate_uri(&roots, uri, &t);
  } else if ((rc = fs_uri_path(uri, &path)) == FS_OK) {
    free(path); /* found beneath the client's roots when armed */
  }
  if (rc != FS_OK) {
    st->host->log(st->self, MCPD_LOG_WARNING,
                  "subscription to %s is not watched: %s", uri,
                  fs_strerror(rc));
    return;
  }
  /* From now on a change of the roots seen, from any thread, re-arms
   * every subscription. */
  if (st->watch == NULL && (st->watch = watch_start(st)) != NULL)
    fs_roots_listen(st, rearm_cb, st->watch);
  if ((w = st->watch) == NULL) {
    fs_target_free(&t);
    return;
  }
  pthread_mutex_lock(&w->lock);
  for (size_t i = 0; i < w->n_subs && s == NULL; i++) {
    if (strcmp(w->subs[i].uri, uri) == 0)
      s = &w->subs[i];
  }
  if (s) {
    s->count++;
    fs_target_free(&t);
    goto out;
  }
  if (w->n_subs == w->cap_subs) {
    size_t cap = w->cap_subs ? w->cap_subs * 2 : 8;
    struct subscription *p = realloc(w->subs, cap * sizeof(*p));
    if (p == NULL)
      goto nomem;
    w->subs = p;
    w->cap_subs = cap;
  }
  s = &w->subs[w->n_subs];
  memset(s, 0, sizeof(*s));
  if ((s->uri = strdup(uri)) == NULL)
    goto nomem;
  s->target = t;
  s->count = 1;
#ifndef MCPD_PORTABLE
  s->wd = -1;
#endif
  w->n_subs++;
  arm(w, s); /* a missing file is retried by the thread */
out:
  pthread_mutex_unlock(&w->lock);
  wake(w);
  return;
nomem:
  pthread_mutex_unlock(&w->lock);
  fs_target_free(&t);
  st->host->log(st->self, MCPD_LOG_ERROR,
                "subscription to %s is not watched: out of memory", uri);
}

static void unsubscribe(struct fs_state *st, const char *uri) {
  struct fs_watch *w = st->watch;

  if (w == NULL)
    return;
  pthread_mutex_lock(&w->lock);
  for (size_t i = 0; i < w->n_subs; i++) {
    struct subscription *s = &w->subs[i], gone;

    if (strcmp(s->uri, uri) != 0 || --s->count > 0)
      continue;
    gone = *s;
    *s = w->subs[--w->n_subs];
#ifndef MCPD_PORTABLE
    release_wd(w, gone.wd);
#endif
    subscription_free(&gone);
    break;
  }
  pthread_mutex_unlock(&w->lock);
}

void fs_subscribe_cb(const mcpd_request *req, int subscribed) {
  struct fs_state *st = req->state;

  if (st == NULL || req->name == NULL)
    return;
  if (subscribed)
    subscribe(st, req->name);
  else
    unsubscribe(st, req->name);
}

void fs_watch_free(struct fs_watch *w) {
  if (w == NULL)
    return;
  pthread_mutex_lock(&w->lock);
  w->stop = 1;
  pthread_mutex_unlock(&w->lock);
  wake(w);
  pthread_join(w->thread, NULL);
  pthread_mutex_destroy(&w->lock);
  for (size_t i = 0; i < w->n_subs; i++)
    subscription_free(&w->subs[i]);
  free(w->subs);
#ifndef MCPD_PORTABLE
  close(w->ifd);
  close(w->efd);
#else
  close(w->wake[0]);
  close(w->wake[1]);
#endif
  free(w);
}
