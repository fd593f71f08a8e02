/* SPDX-License-Identifier: MIT */
/* plugin_file.c -- safety checks and the private copy of a plugin file. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"
#include "plugin_file.h"

void plugin_file_dir_of(const char *path, char *out, size_t len) {
  const char *slash = strrchr(path, '/');
  size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
  if (len == 0)
    return;
  if (slash == NULL)
    path = ".", n = 1;
  if (n > len - 1)
    n = len - 1;
  memcpy(out, path, n);
  out[n] = '\0';
}

static int check_safe(const char *what, const char *path, const struct stat *st,
                      int allow, char *err, size_t errlen) {
#ifdef _WIN32
  /* Who may write a file is its ACL's business there, which the C
   * runtime's mode bits and owner do not show. */
  allow = 1;
#endif
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

/* What a file that is not a regular one is, for the reason a user reads. */
static const char *file_type(mode_t mode) {
  switch (mode & S_IFMT) {
  case S_IFIFO:
    return "a FIFO";
  case S_IFDIR:
    return "a directory";
  case S_IFCHR:
    return "a character device";
  case S_IFBLK:
    return "a block device";
  case S_IFSOCK:
    return "a socket";
  case S_IFLNK:
    return "a symbolic link";
  default:
    return "of an unknown type";
  }
}

void plugin_file_stat_reason(const char *path, int error, char *err,
                             size_t errlen) {
  const char *hint = "";
  struct stat lst;

  /* What stat() says of a bad link names no link: say it. */
  if (error == ELOOP)
    hint = " (a symbolic link loop?)";
  else if (error == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
    hint = " (a symbolic link whose target is missing)";
  snprintf(err, errlen, "cannot stat: %s%s", strerror(error), hint);
}

/* What the refusals after the file was opened have in common: close it,
 * and leave its identity for the retry test. */
static plugin_file_verdict refuse_open(int *fd) {
  close(*fd);
  *fd = -1;
  return PLUGIN_FILE_REFUSED;
}

plugin_file_verdict plugin_file_open(const char *path, int allow_insecure,
                                     int *fd, struct stat *st,
                                     struct stat *dir_st, char *err,
                                     size_t errlen) {
  char dir[4096];
  char *real;
  int saved;

  *fd = -1;
  memset(st, 0, sizeof(*st));
  memset(dir_st, 0, sizeof(*dir_st));
  plugin_file_dir_of(path, dir, sizeof(dir));
  if (stat(dir, dir_st) != 0) {
    snprintf(err, errlen, "cannot stat its directory: %s", strerror(errno));
    return PLUGIN_FILE_REFUSED;
  }
  if (check_safe("directory", dir, dir_st, allow_insecure, err, errlen) != 0) {
    /* Best effort: the file's identity only sharpens the retry test. */
    stat(path, st);
    return PLUGIN_FILE_DIR_REFUSED;
  }
  /* Links are resolved here, once, so that a plugin may be a symbolic
   * link; the open below then follows none. */
  real = realpath(path, NULL);
  if (real == NULL) {
    saved = errno;
    stat(path, st);
    plugin_file_stat_reason(path, saved, err, errlen);
    return PLUGIN_FILE_REFUSED;
  }
  /* Opening a device can do things (a tty becomes ours, a watchdog arms),
   * so what is plainly not a regular file is refused without opening it.
   * This is only a shortcut: the check that counts is on the descriptor,
   * since the file may be swapped between the two. */
  if (stat(real, st) == 0 && !S_ISREG(st->st_mode)) {
    snprintf(err, errlen, "not a regular file (it is %s)",
             file_type(st->st_mode));
    free(real);
    return PLUGIN_FILE_REFUSED;
  }
  /* O_NONBLOCK: a FIFO swapped in would otherwise block until a writer
   * comes, and the loop with it.  O_NOFOLLOW: a link swapped in after
   * realpath() is refused rather than followed. */
  *fd = open(real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  saved = errno;
  free(real);
  if (*fd < 0) {
    stat(path, st);
    snprintf(err, errlen, "cannot open: %s%s", strerror(saved),
             saved == ELOOP ? " (it was replaced by a symbolic link while "
                              "being opened)"
                            : "");
    return PLUGIN_FILE_REFUSED;
  }
  if (fstat(*fd, st) != 0) {
    snprintf(err, errlen, "cannot stat: %s", strerror(errno));
    return refuse_open(fd);
  }
  if (!S_ISREG(st->st_mode)) {
    snprintf(err, errlen, "not a regular file (it is %s)",
             file_type(st->st_mode));
    return refuse_open(fd);
  }
  if (check_safe("file", path, st, allow_insecure, err, errlen) != 0)
    return refuse_open(fd);
  if (st->st_size == 0) {
    snprintf(err, errlen, "empty file (still being written?)");
    return refuse_open(fd);
  }
  if (st->st_size > MCPD_PLUGIN_MAX_SIZE) {
    snprintf(err, errlen,
             "file too large: %lld bytes, more than the %lld (%lld MiB) a "
             "plugin may have",
             (long long)st->st_size, (long long)MCPD_PLUGIN_MAX_SIZE,
             (long long)(MCPD_PLUGIN_MAX_SIZE >> 20));
    return refuse_open(fd);
  }
  return PLUGIN_FILE_OK;
}

/* Where copy directories go, the fallback for systems without memfd: a
 * private runtime directory or the temporary one. */
static void copy_base(char *out, size_t len) {
#ifdef _WIN32
  const char *base = getenv("TEMP");
  if (base == NULL && (base = getenv("TMP")) == NULL)
    base = ".";
#else
  const char *base = getenv("XDG_RUNTIME_DIR");
  struct stat st;

  if (base == NULL || base[0] != '/' || stat(base, &st) != 0 ||
      !S_ISDIR(st.st_mode) || access(base, W_OK) != 0)
    base = getenv("TMPDIR");
  if (base == NULL || base[0] != '/')
    base = "/tmp";
#endif
  snprintf(out, len, "%s", base);
}

static int make_copy_dir(plugin_files *f) {
  char base[4096], tmpl[4200];

  copy_base(base, sizeof(base));
  snprintf(tmpl, sizeof(tmpl), "%s/mcpd-%ld-XXXXXX", base, (long)getpid());
  if (mkdtemp(tmpl) == NULL)
    return -1;
  f->copy_dir = strdup(tmpl);
  return f->copy_dir ? 0 : -1;
}

/* Removes the files in `dir`, then `dir`. */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[4400];

  if (d != NULL) {
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

#ifdef _WIN32
/* Only real directories are emptied: a junction of that name would lead
 * elsewhere.  A process id is not reused while its host holds the
 * process's handle, as it does until after this. */
void plugin_files_sweep(long pid) {
  char base[4096], prefix[48], dir[4400];
  size_t n;
  struct dirent *e;
  DIR *d;

  copy_base(base, sizeof(base));
  n = (size_t)snprintf(prefix, sizeof(prefix), "mcpd-%ld-", pid);
  if ((d = opendir(base)) == NULL)
    return;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, n) == 0 && strlen(e->d_name) == n + 6) {
      snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
      if (platform_plain_dir(dir))
        remove_dir(dir);
    }
  closedir(d);
}
#else
/* Elsewhere a copy is removed once loaded, or never was a file: a worker
 * that crashed leaves at most an empty directory.  That is not swept, as
 * a directory of that name in a shared /tmp may be a live process's of
 * another PID namespace. */
void plugin_files_sweep(long pid) {
  (void)pid;
}
#endif

/* Opens a private, writable copy target.  An anonymous file is preferred
 * where the system has one: no directory to make or clean up, nothing on
 * disk. */
static int open_copy(plugin_files *f, const char *base, plugin_copy *c) {
  c->fd = platform_anon_file(base, c->path, sizeof(c->path));
  if (c->fd >= 0) {
    c->is_memfd = 1;
    return 0;
  }
  c->is_memfd = 0;
  if (f->copy_dir == NULL && make_copy_dir(f) != 0)
    return -1;
  snprintf(c->path, sizeof(c->path), "%s/%u-%s", f->copy_dir, ++f->seq, base);
  c->fd = open(c->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
  return c->fd >= 0 ? 0 : -1;
}

/* Writes all of `buf` to `out` at its current offset. */
static int write_all(int out, const char *buf, size_t n) {
  for (size_t off = 0; off < n;) {
    ssize_t w = write(out, buf + off, n - off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    off += (size_t)w;
  }
  return 0;
}

/* One pread() of up to `want` bytes at `off` and its write to `out`:
 * returns what was copied, 0 at the end, -1 when the read failed (errno
 * set) or -2 when the write failed (err set).  The buffer lives in this
 * frame of its own, so the usual kernel copy never pushes the stack 64 KiB
 * deeper (a page that, once touched, stays resident). */
static __attribute__((noinline)) ssize_t
copy_read(int in, int out, off_t off, size_t want, char *err, size_t errlen) {
  char buf[65536];
  ssize_t n = pread(in, buf, want < sizeof(buf) ? want : sizeof(buf), off);

  if (n > 0 && write_all(out, buf, (size_t)n) != 0) {
    snprintf(err, errlen, "writing private copy failed: %s", strerror(errno));
    return -2;
  }
  return n;
}

/* Copies `in` from its start into `out` at its current offset, and sets
 * *copied to how much that was.  The kernel copies without passing the
 * bytes through us where it can.  `in` is read at explicit offsets, so its
 * own offset does not matter; a file that grows past the limit while it
 * is read is refused. */
static int copy_fd(int in, int out, off_t *copied, char *err, size_t errlen) {
  int kernel = 1; /* platform_copy_range() until it says it cannot */
  off_t off = 0;

  for (;;) {
    size_t want = (size_t)(MCPD_PLUGIN_MAX_SIZE + 1 - off);
    ssize_t n;

    if (want == 0) {
      snprintf(err, errlen,
               "file grew past %lld bytes (%lld MiB) while being copied",
               (long long)MCPD_PLUGIN_MAX_SIZE,
               (long long)(MCPD_PLUGIN_MAX_SIZE >> 20));
      return -1;
    }
    if (kernel) {
      n = platform_copy_range(in, out, &off, want);
      if (n == -2) {
        kernel = 0;
        continue;
      }
    } else {
      n = copy_read(in, out, off, want, err, errlen);
      if (n == -2)
        return -1;
      if (n > 0)
        off += n;
    }
    if (n < 0) {
      if (errno == EINTR)
        continue;
      snprintf(err, errlen, "%s failed: %s", kernel ? "copying" : "read",
               strerror(errno));
      return -1;
    }
    if (n == 0)
      break;
  }
  *copied = off;
  return 0;
}

int plugin_file_copy(plugin_files *f, int fd, const struct stat *st,
                     const char *name, plugin_copy *c, char *err,
                     size_t errlen) {
  off_t copied = 0;

  /* What is not a whole shared object now is refused before a byte of it
   * is copied. */
  if (platform_check_object(fd, st->st_size, err, errlen) != 0)
    return -1;
  if (open_copy(f, name, c) != 0) {
    snprintf(err, errlen, "cannot make a private copy: %s", strerror(errno));
    return -1;
  }
  /* The file may have changed while it was read: the copy is what
   * counts. */
  if (copy_fd(fd, c->fd, &copied, err, errlen) != 0 ||
      platform_check_object(c->fd, copied, err, errlen) != 0) {
    close(c->fd);
    if (!c->is_memfd)
      unlink(c->path);
    return -1;
  }
#ifdef _WIN32
  /* LoadLibrary cannot open a file someone holds open for writing. */
  close(c->fd);
  c->fd = -1;
#endif
  return 0;
}

int plugin_copy_done(plugin_copy *c, char **leftover) {
  *leftover = NULL;
  if (c->is_memfd)
    return c->fd;
#ifdef _WIN32
  /* Closed before LoadLibrary already; a loaded DLL cannot be removed. */
  if (unlink(c->path) != 0)
    *leftover = strdup(c->path);
#else
  unlink(c->path);
  close(c->fd);
#endif
  return -1;
}

void plugin_copy_remove(const char *path) {
  unlink(path);
}

void plugin_files_free(plugin_files *f) {
  if (f->copy_dir) {
    remove_dir(f->copy_dir);
    free(f->copy_dir);
  }
  f->copy_dir = NULL;
}
