/* plugin_file.c -- safety checks and the private copy of a plugin file. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "plugin_file.h"

void plugin_file_dir_of(const char *path, char *out, size_t len) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(out, len, ".");
  else
    snprintf(out, len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

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

plugin_file_verdict plugin_file_check(const char *path, int allow_insecure,
                                      struct stat *st, struct stat *dir_st,
                                      char *err, size_t errlen) {
  char dir[4096];

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
  if (stat(path, st) != 0) {
    snprintf(err, errlen, "cannot stat: %s", strerror(errno));
    return PLUGIN_FILE_REFUSED;
  }
  if (!S_ISREG(st->st_mode)) {
    snprintf(err, errlen, "not a regular file");
    return PLUGIN_FILE_REFUSED;
  }
  if (check_safe("file", path, st, allow_insecure, err, errlen) != 0)
    return PLUGIN_FILE_REFUSED;
  if (st->st_size == 0) {
    snprintf(err, errlen, "empty file (still being written?)");
    return PLUGIN_FILE_REFUSED;
  }
  return PLUGIN_FILE_OK;
}

/* The fallback for systems without memfd_create: a private directory. */
static int make_copy_dir(plugin_files *f) {
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
  f->copy_dir = strdup(tmpl);
  return f->copy_dir ? 0 : -1;
}

/* Opens a private, writable copy target.  A memfd is preferred: no
 * directory to make or clean up, nothing on disk. */
static int open_copy(plugin_files *f, const char *base, plugin_copy *c) {
  c->fd = memfd_create(base, MFD_CLOEXEC);
  if (c->fd >= 0) {
    snprintf(c->path, sizeof(c->path), "/proc/self/fd/%d", c->fd);
    /* Without /proc, dlopen() could not reach the memfd. */
    if (access(c->path, R_OK) == 0) {
      c->is_memfd = 1;
      return 0;
    }
    close(c->fd);
  }
  c->is_memfd = 0;
  if (f->copy_dir == NULL && make_copy_dir(f) != 0)
    return -1;
  snprintf(c->path, sizeof(c->path), "%s/%u-%s", f->copy_dir, ++f->seq, base);
  c->fd = open(c->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
  return c->fd >= 0 ? 0 : -1;
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

/* A file caught half-written can have intact headers and truncated
 * segments, and touching a mapping past the end of a file is SIGBUS, so
 * the copy is checked before dlopen maps it.  ElfW() is the host's own
 * class, which is the only one dlopen accepts anyway. */
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

int plugin_file_copy(plugin_files *f, const char *path, plugin_copy *c,
                     struct stat *st, char *err, size_t errlen) {
  const char *base = strrchr(path, '/');

  base = base ? base + 1 : path;
  if (open_copy(f, base, c) != 0) {
    snprintf(err, errlen, "cannot make a private copy: %s", strerror(errno));
    return -1;
  }
  if (copy_file(path, c->fd, st, err, errlen) != 0 ||
      check_elf(c->path, err, errlen) != 0) {
    if (!c->is_memfd)
      unlink(c->path);
    close(c->fd);
    return -1;
  }
  return 0;
}

int plugin_copy_done(plugin_copy *c) {
  if (c->is_memfd)
    return c->fd;
  unlink(c->path);
  close(c->fd);
  return -1;
}

void plugin_files_free(plugin_files *f) {
  if (f->copy_dir) {
    rmdir(f->copy_dir);
    free(f->copy_dir);
  }
  f->copy_dir = NULL;
}
