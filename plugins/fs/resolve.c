/* SPDX-License-Identifier: MIT */
/* resolve.c -- containment: no path leaves the roots.
 *
 * Paths are cleaned lexically first, so ".." never reaches the kernel: a
 * ".." that would climb above the root is refused, one that stays inside
 * is folded away.  Then every open starts from the root's directory
 * descriptor:
 *
 * - on Linux, openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
 *   where the kernel refuses any resolution (symlinks included, absolute
 *   ones always) that would leave the root, atomically, so a link swapped
 *   in while we resolve cannot redirect us;
 * - otherwise a walk one component at a time, each opened with
 *   openat(O_NOFOLLOW) from the directory before it.  Where openat2 is
 *   missing (ENOSYS, kernels before 5.6) or disabled by the "use_openat2"
 *   key, the walk follows no symbolic link at all.  In the portable build
 *   (MCPD_PORTABLE), which has no openat2, the walk stands in for it: a
 *   link it meets is read (readlinkat) and its target walked in the same
 *   way, from the link's directory; ".." is taken by opening the path
 *   walked so far again without its last component, never by the kernel;
 *   a target that is absolute or climbs above the root is refused, and so
 *   are more than FS_MAX_HOPS links.  Every step is a single openat() of
 *   one name that follows nothing, so a link swapped in meanwhile is seen
 *   as a link and judged like any other.  (What the walk cannot prevent:
 *   a directory it has already opened being moved out of the root
 *   meanwhile, by someone who can write there.)
 *
 * Callers then work on the descriptor (fstat, read, fdopendir) and never
 * resolve the path again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/buf.h"
#include "fs.h"

/* The most symbolic links one walk follows, as Linux's MAXSYMLINKS. */
#define FS_MAX_HOPS 40

#ifndef MCPD_PORTABLE
#include <sys/syscall.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
struct open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_BENEATH 0x08
#endif

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

/* openat2 fails with EAGAIN when a concurrent rename races a lookup; the
 * kernel asks the caller to retry. */
#define FS_OPENAT2_TRIES 8
#endif

int fs_clean_path(const char *path, int absolute, char **out) {
  size_t n = strlen(path);
  char *res = malloc(n + 3);
  size_t len = 0;
  const char *p = path;

  if (res == NULL)
    return FS_E_NOMEM;
  if (absolute)
    res[len++] = '/';
  while (*p) {
    const char *end;
    size_t clen;

    while (*p == '/')
      p++;
    end = p;
    while (*end && *end != '/')
      end++;
    clen = (size_t)(end - p);
    if (clen == 0 || (clen == 1 && p[0] == '.')) {
      /* Nothing, or ".". */
    } else if (clen == 2 && p[0] == '.' && p[1] == '.') {
      size_t base = absolute ? 1 : 0;
      if (len <= base) {
        if (!absolute) {
          free(res);
          return FS_E_OUTSIDE;
        }
      } else {
        while (len > base && res[len - 1] != '/')
          len--;
        if (len > base)
          len--; /* the separator before the component */
      }
    } else {
      if (len > (absolute ? 1u : 0u))
        res[len++] = '/';
      memcpy(res + len, p, clen);
      len += clen;
    }
    p = end;
  }
  if (len == 0)
    res[len++] = '.';
  res[len] = '\0';
  *out = res;
  return FS_OK;
}

/* Nonzero when `path` is `prefix` or lies below it. */
static int under(const char *path, const char *prefix, size_t plen) {
  if (plen == 1 && prefix[0] == '/')
    return 1;
  return strncmp(path, prefix, plen) == 0 &&
         (path[plen] == '\0' || path[plen] == '/');
}

static int make_target(const struct fs_root *root, const char *rest,
                       struct fs_target *out) {
  while (*rest == '/')
    rest++;
  out->root = root;
  out->rel = strdup(*rest ? rest : ".");
  return out->rel ? FS_OK : FS_E_NOMEM;
}

int fs_locate(const struct fs_roots *roots, const char *path,
              struct fs_target *out) {
  char *clean;
  int rc;

  out->rel = NULL;
  if (roots->n == 0)
    return FS_E_NOROOTS;
  if (path[0] != '/') {
    if ((rc = fs_clean_path(path, 0, &clean)) != FS_OK)
      return rc;
    out->root = &roots->v[0];
    out->rel = clean;
    return FS_OK;
  }
  if ((rc = fs_clean_path(path, 1, &clean)) != FS_OK)
    return rc;
  {
    size_t best = roots->n, best_len = 0;
    const char *rest = NULL;

    /* Roots may nest; the innermost one serves.  A root is also reachable
     * by the path it was configured as (before symlinks were resolved). */
    for (size_t i = 0; i < roots->n; i++) {
      const struct fs_root *r = &roots->v[i];
      size_t glen = r->given ? strlen(r->given) : 0;

      if (under(clean, r->path, r->len) &&
          (best == roots->n || r->len > best_len)) {
        best = i;
        best_len = r->len;
        rest = clean + (r->len == 1 ? 0 : r->len);
      }
      if (r->given && under(clean, r->given, glen) &&
          (best == roots->n || glen > best_len)) {
        best = i;
        best_len = glen;
        rest = clean + (glen == 1 ? 0 : glen);
      }
    }
    rc = best == roots->n ? FS_E_OUTSIDE
                          : make_target(&roots->v[best], rest, out);
  }
  free(clean);
  return rc;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int fs_uri_path(const char *uri, char **out) {
  const char *p;
  char *path, *w;

  if (strncasecmp(uri, "file:", 5) != 0)
    return FS_E_BADURI;
  p = uri + 5;
  if (p[0] == '/' && p[1] == '/') {
    /* An authority: empty or "localhost" (RFC 8089); other hosts are not
     * this machine. */
    const char *slash = strchr(p + 2, '/');
    size_t alen = slash ? (size_t)(slash - (p + 2)) : strlen(p + 2);

    if (slash == NULL ||
        (alen != 0 && !(alen == 9 && strncasecmp(p + 2, "localhost", 9) == 0)))
      return FS_E_BADURI;
    p = slash;
  }
  if (p[0] != '/' || strpbrk(p, "?#") != NULL)
    return FS_E_BADURI;
  if ((path = malloc(strlen(p) + 1)) == NULL)
    return FS_E_NOMEM;
  for (w = path; *p; p++) {
    if (*p == '%') {
      int hi = hex_value(p[1]), lo = hi < 0 ? -1 : hex_value(p[2]);
      if (lo < 0 || (hi == 0 && lo == 0)) {
        free(path);
        return FS_E_BADURI;
      }
      *w++ = (char)(hi * 16 + lo);
      p += 2;
    } else {
      *w++ = *p;
    }
  }
  *w = '\0';
  *out = path;
  return FS_OK;
}

int fs_locate_uri(const struct fs_roots *roots, const char *uri,
                  struct fs_target *out) {
  char *path;
  int rc;

  out->rel = NULL;
  if ((rc = fs_uri_path(uri, &path)) != FS_OK)
    return rc;
  rc = fs_locate(roots, path, out);
  free(path);
  return rc;
}

void fs_target_free(struct fs_target *t) {
  free(t->rel);
  t->rel = NULL;
}

char *fs_target_path(const struct fs_target *t) {
  const struct fs_root *r = t->root;
  struct pc_buf b = {0};

  pc_buf_puts(&b, r->path);
  if (strcmp(t->rel, ".") != 0) {
    if (r->len > 1)
      pc_buf_puts(&b, "/");
    pc_buf_puts(&b, t->rel);
  }
  if (b.failed) {
    pc_buf_free(&b);
    return NULL;
  }
  return b.data;
}

char *fs_path_uri(const char *abs_path) {
  static const char hex[] = "0123456789ABCDEF";
  struct pc_buf b = {0};

  pc_buf_puts(&b, "file://");
  for (const unsigned char *p = (const unsigned char *)abs_path; *p; p++) {
    /* RFC 3986 unreserved characters and the separator stay as they are. */
    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
        (*p >= '0' && *p <= '9') || strchr("-._~/", *p) != NULL) {
      pc_buf_append(&b, (const char *)p, 1);
    } else {
      char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
      pc_buf_append(&b, esc, 3);
    }
  }
  if (b.failed) {
    pc_buf_free(&b);
    return NULL;
  }
  return b.data;
}

#ifndef MCPD_PORTABLE
int fs_have_openat2(int dirfd) {
  struct open_how how;
  int fd;

  memset(&how, 0, sizeof(how));
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  fd = (int)syscall(SYS_openat2, dirfd, ".", &how, sizeof(how));
  if (fd >= 0)
    close(fd);
  return fd >= 0 || errno != ENOSYS;
}

static int open_openat2(int dirfd, const char *rel, int flags) {
  struct open_how how;
  int fd = -1;

  memset(&how, 0, sizeof(how));
  how.flags = (uint64_t)flags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (int i = 0; i < FS_OPENAT2_TRIES; i++) {
    fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
    if (fd >= 0 || errno != EAGAIN)
      break;
  }
  if (fd >= 0)
    return fd;
  if (errno == EXDEV)
    return FS_E_ESCAPE;
  if (errno == ELOOP)
    return FS_E_SYMLINK;
  return -errno;
}
#endif

/* --- the walk ------------------------------------------------------------ */

/* Refuses a symbolic link by name after an open with O_NOFOLLOW failed
 * with `err`: Linux says ELOOP (ENOTDIR with O_DIRECTORY), FreeBSD EMLINK,
 * NetBSD EFTYPE.  Returns the code to report. */
static int why_not(int dirfd, const char *name, int err) {
  struct stat sb;

  if ((err == ENOTDIR || err == ELOOP || err == EMLINK
#ifdef EFTYPE
       || err == EFTYPE
#endif
       ) &&
      fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(sb.st_mode))
    return FS_E_SYMLINK;
  return -err;
}

/* One walk from a root to what `rel` names.  `done` is the path of `cur`
 * beneath the root, made of directories opened without following a link,
 * so ".." is taken by opening that path again without its last component:
 * no ".." ever reaches the kernel. */
struct walk {
  const struct fs_root *root;
  int follow;         /* follow links that stay beneath the root */
  int nofollow;       /* but never a link as the last component */
  int cur;            /* the directory reached: root->fd, or our own */
  struct pc_buf done; /* its path beneath the root; "" is the root */
  char *todo;         /* what is left to walk (malloc'ed), from `next` */
  char *next;
  int hops; /* links followed so far */
};

/* What the walk does with the last component. */
enum walk_op {
  WALK_OPEN, /* openat(2) it with the caller's flags */
  WALK_LOOK  /* fstatat(2) it, opening nothing */
};

static void walk_set_cur(struct walk *w, int fd) {
  if (w->cur != w->root->fd)
    close(w->cur);
  w->cur = fd;
}

/* Takes the next component of `todo` (NUL-terminated in place), or NULL
 * at the end; *last says whether another one follows. */
static char *walk_take(struct walk *w, int *last) {
  char *comp = w->next, *end;

  while (*comp == '/')
    comp++;
  if (*comp == '\0')
    return NULL;
  end = comp + strcspn(comp, "/");
  w->next = end;
  if (*end) {
    *end = '\0';
    w->next = end + 1;
  }
  *last = w->next[strspn(w->next, "/")] == '\0';
  return comp;
}

/* ".." after a followed link: back to the parent of `cur`, or out of the
 * root.  The parent is opened again from the root, one component at a
 * time; if something there was swapped for a link meanwhile, the walk
 * fails rather than follow it. */
static int walk_up(struct walk *w) {
  char *slash, *path, *comp, *save = NULL;
  int rc = FS_OK;

  if (w->done.len == 0)
    return w->hops > 0 ? FS_E_ESCAPE : FS_E_OUTSIDE;
  slash = strrchr(w->done.data, '/');
  w->done.len = slash ? (size_t)(slash - w->done.data) : 0;
  w->done.data[w->done.len] = '\0';
  walk_set_cur(w, w->root->fd);
  if (w->done.len == 0)
    return FS_OK;
  if ((path = strdup(w->done.data)) == NULL)
    return FS_E_NOMEM;
  for (comp = strtok_r(path, "/", &save); comp != NULL && rc == FS_OK;
       comp = strtok_r(NULL, "/", &save)) {
    int fd = openat(w->cur, comp, FS_O_DIR | O_NOFOLLOW | O_CLOEXEC);

    if (fd >= 0)
      walk_set_cur(w, fd);
    else if ((rc = why_not(w->cur, comp, errno)) == FS_E_SYMLINK)
      rc = FS_E_CHANGED;
  }
  free(path);
  return rc;
}

/* The component `comp` of the walk is a symbolic link to follow: what is
 * left to walk becomes its target and then the rest.  An absolute target
 * always leaves the root (as openat2's RESOLVE_BENEATH has it), and too
 * many links are a loop. */
static int walk_splice(struct walk *w, const char *comp) {
  char target[4096], *todo;
  size_t rest;
  ssize_t len;

  if (++w->hops > FS_MAX_HOPS)
    return FS_E_SYMLINK;
  len = readlinkat(w->cur, comp, target, sizeof(target));
  if (len < 0)
    return errno == EINVAL ? FS_E_CHANGED : -errno;
  if ((size_t)len == sizeof(target))
    return -ENAMETOOLONG;
  if (len == 0)
    return -ENOENT;
  if (target[0] == '/')
    return FS_E_ESCAPE;
  rest = strlen(w->next);
  if ((todo = malloc((size_t)len + 1 + rest + 1)) == NULL)
    return FS_E_NOMEM;
  memcpy(todo, target, (size_t)len);
  todo[len] = '/';
  memcpy(todo + len + 1, w->next, rest + 1);
  free(w->todo);
  w->todo = w->next = todo;
  return FS_OK;
}

/* Walks `rel` from the root and does `op` on what it names: returns the
 * descriptor WALK_OPEN opened, or FS_OK after WALK_LOOK filled *sb (and
 * `target`, for a link), or a negative code. */
static int walk_run(struct walk *w, const char *rel, enum walk_op op, int flags,
                    struct stat *sb, char *target, size_t size) {
  char *comp;
  int last = 0;

  if ((w->todo = w->next = strdup(rel)) == NULL)
    return FS_E_NOMEM;
  for (;;) {
    int fd, rc, err;

    if ((comp = walk_take(w, &last)) == NULL) {
      /* Nothing left: what was reached is the answer ("." or a link to a
       * directory, "sub/.."). */
      if (op == WALK_OPEN) {
        fd = openat(w->cur, ".", flags);
        return fd >= 0 ? fd : -errno;
      }
      return fstat(w->cur, sb) == 0 ? FS_OK : -errno;
    }
    if (strcmp(comp, ".") == 0)
      continue;
    if (strcmp(comp, "..") == 0) {
      if ((rc = walk_up(w)) != FS_OK)
        return rc;
      continue;
    }
    if (!last) {
      fd = openat(w->cur, comp, FS_O_DIR | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) {
        if (w->done.len > 0)
          pc_buf_putc(&w->done, '/');
        pc_buf_puts(&w->done, comp);
        walk_set_cur(w, fd);
        if (w->done.failed)
          return FS_E_NOMEM;
        continue;
      }
      err = errno;
    } else if (op == WALK_OPEN) {
      fd = openat(w->cur, comp, flags | O_NOFOLLOW);
      if (fd >= 0)
        return fd;
      err = errno;
    } else {
      if (fstatat(w->cur, comp, sb, AT_SYMLINK_NOFOLLOW) != 0)
        return -errno;
      if (!S_ISLNK(sb->st_mode) || !w->follow || w->nofollow) {
        if (S_ISLNK(sb->st_mode) && target != NULL && size > 0) {
          ssize_t len = readlinkat(w->cur, comp, target, size - 1);
          target[len > 0 ? len : 0] = '\0';
        }
        return FS_OK;
      }
      err = ELOOP;
    }
    /* It failed: a link where none is followed, one to follow, or another
     * reason. */
    if ((rc = why_not(w->cur, comp, err)) != FS_E_SYMLINK)
      return rc;
    if (!w->follow || (last && w->nofollow))
      return FS_E_SYMLINK;
    if ((rc = walk_splice(w, comp)) != FS_OK)
      return rc;
  }
}

static void walk_free(struct walk *w) {
  walk_set_cur(w, w->root->fd);
  pc_buf_free(&w->done);
  free(w->todo);
}

/* Opens or looks at `rel` by the walk (see the top of the file). */
static int walk(const struct fs_root *root, const char *rel, int follow,
                int nofollow, enum walk_op op, int flags, struct stat *sb,
                char *target, size_t size) {
  struct walk w = {
      .root = root, .follow = follow, .nofollow = nofollow, .cur = root->fd};
  int rc = walk_run(&w, rel, op, flags, sb, target, size);

  walk_free(&w);
  return rc;
}

int fs_open_beneath(const struct fs_state *st, const struct fs_root *root,
                    const char *rel, int flags, int nofollow) {
#ifndef MCPD_PORTABLE
  /* openat2 is strict: with O_PATH only O_DIRECTORY, O_NOFOLLOW and
   * O_CLOEXEC are allowed. */
  flags |= O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOCTTY);
  if (st->use_openat2) {
    int fd = open_openat2(root->fd, rel, flags | (nofollow ? O_NOFOLLOW : 0));
    if (fd != -ENOSYS)
      return fd;
  }
  /* The walk follows no link here: where openat2 is missing, links that
   * stay inside are refused too. */
  return walk(root, rel, 0, nofollow, WALK_OPEN, flags, NULL, NULL, 0);
#else
  flags |= O_CLOEXEC | O_NOCTTY;
  return walk(root, rel, st->use_openat2, nofollow, WALK_OPEN, flags, NULL,
              NULL, 0);
#endif
}

int fs_stat_beneath(const struct fs_state *st, const struct fs_root *root,
                    const char *rel, int nofollow, struct stat *sb,
                    char *target, size_t size) {
#ifndef MCPD_PORTABLE
  /* An O_PATH descriptor opens nothing; a link opened with O_NOFOLLOW is
   * the link itself. */
  int fd = fs_open_beneath(st, root, rel, O_PATH, nofollow), rc = FS_OK;

  if (fd < 0)
    return fd;
  if (fstat(fd, sb) != 0) {
    rc = -errno;
  } else if (target != NULL && size > 0) {
    target[0] = '\0';
    if (S_ISLNK(sb->st_mode)) {
      ssize_t len = readlinkat(fd, "", target, size - 1);
      target[len > 0 ? len : 0] = '\0';
    }
  }
  close(fd);
  return rc;
#else
  if (target != NULL && size > 0)
    target[0] = '\0';
  return walk(root, rel, st->use_openat2, nofollow, WALK_LOOK, 0, sb, target,
              size);
#endif
}

int fs_open_read(const struct fs_state *st, const struct fs_target *t,
                 struct stat *sb) {
  struct stat first;
  int rc, fd;

  /* Looked at before anything is opened, so a FIFO or a device is refused
   * without being opened. */
  if ((rc = fs_stat_beneath(st, t->root, t->rel, 0, &first, NULL, 0)) != FS_OK)
    return rc;
  if (S_ISLNK(first.st_mode))
    return FS_E_SYMLINK;
  if (!S_ISREG(first.st_mode) && !S_ISDIR(first.st_mode))
    return FS_E_SPECIAL;
  /* O_NONBLOCK: if a FIFO is swapped in now, opening it cannot hang; the
   * inode check below then refuses it. */
  fd = fs_open_beneath(
      st, t->root, t->rel,
      O_RDONLY | O_NONBLOCK | (S_ISDIR(first.st_mode) ? O_DIRECTORY : 0), 0);
  if (fd < 0)
    return fd;
  if (fstat(fd, sb) != 0) {
    int err = -errno;
    close(fd);
    return err;
  }
  if (sb->st_dev != first.st_dev || sb->st_ino != first.st_ino ||
      (!S_ISREG(sb->st_mode) && !S_ISDIR(sb->st_mode))) {
    close(fd);
    return FS_E_CHANGED;
  }
  return fd;
}

int fs_mkdirs(const struct fs_state *st, const struct fs_root *root,
              const char *rel) {
  char *prefix;
  size_t n = strlen(rel);
  int rc = FS_OK;

  if (strcmp(rel, ".") == 0)
    return FS_OK;
  if ((prefix = malloc(n + 1)) == NULL)
    return FS_E_NOMEM;
  /* One prefix at a time: "a", "a/b", "a/b/c". */
  for (size_t i = 1; i <= n && rc == FS_OK; i++) {
    int fd, parent;
    const char *name;

    if (i < n && rel[i] != '/')
      continue;
    memcpy(prefix, rel, i);
    prefix[i] = '\0';
    fd = fs_open_beneath(st, root, prefix, FS_O_DIR, 0);
    if (fd >= 0) {
      close(fd);
      continue;
    }
    if (fd != -ENOENT) {
      rc = fd;
      break;
    }
    name = strrchr(prefix, '/');
    if (name) {
      prefix[name - prefix] = '\0';
      name++;
      parent = fs_open_beneath(st, root, prefix, FS_O_DIR, 0);
    } else {
      name = prefix;
      parent = fs_open_beneath(st, root, ".", FS_O_DIR, 0);
    }
    if (parent < 0) {
      rc = parent;
      break;
    }
    if (mkdirat(parent, name, 0777) != 0 && errno != EEXIST)
      rc = -errno;
    close(parent);
  }
  free(prefix);
  return rc;
}

const char *fs_strerror(int code) {
  switch (code) {
  case FS_OK:
    return "success";
  case FS_E_OUTSIDE:
    return "it is outside the allowed roots";
  case FS_E_ESCAPE:
    return "a symbolic link on the way leads outside the allowed roots "
           "(absolute links always count as leaving)";
  case FS_E_SPECIAL:
    return "it is not a regular file or directory (a FIFO, socket or "
           "device), which this server never opens";
  case FS_E_SYMLINK:
    return "it is or goes through a symbolic link that is not followed here "
           "(or a link loop)";
  case FS_E_CHANGED:
    return "it was replaced while being opened; try again";
  case FS_E_NOROOTS:
    return "no roots: configure plugins.fs.roots or use a client that offers "
           "roots";
  case FS_E_BADURI:
    return "it is not a file:// URI of a local absolute path (no query, "
           "fragment, other host or %00)";
  case FS_E_NOMEM:
  case -ENOMEM:
    return "out of memory";
  /* strerror() may format into a static buffer; these are the usual ones,
   * and the rest are rare enough to risk it. */
  case -ENOENT:
    return "no such file or directory";
  case -EACCES:
  case -EPERM:
    return "permission denied";
  case -ENOTDIR:
    return "a component of the path is not a directory";
  case -EISDIR:
    return "it is a directory";
  case -EEXIST:
    return "it already exists";
  case -ENAMETOOLONG:
    return "the name is too long";
  case -ENOSPC:
    return "no space left on the device";
  case -EROFS:
    return "the file system is read-only";
  case -EMFILE:
  case -ENFILE:
    return "too many open files";
  default:
    return code < 0 ? strerror(-code) : "unknown error";
  }
}
