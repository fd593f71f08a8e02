/* SPDX-License-Identifier: MIT */
/* util.c -- small helpers of the "fs" plugin: MIME types, timestamps,
 * reading whole files and directories. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"

/* Sorted by extension only for the reader; the lookup is linear. */
static const struct {
  const char *ext;
  const char *type;
} mime_types[] = {
    {"7z", "application/x-7z-compressed"},
    {"avif", "image/avif"},
    {"bmp", "image/bmp"},
    {"c", "text/x-c"},
    {"cc", "text/x-c++"},
    {"conf", "text/plain"},
    {"cpp", "text/x-c++"},
    {"css", "text/css"},
    {"csv", "text/csv"},
    {"diff", "text/x-diff"},
    {"doc", "application/msword"},
    {"docx", "application/"
             "vnd.openxmlformats-officedocument.wordprocessingml.document"},
    {"flac", "audio/flac"},
    {"gif", "image/gif"},
    {"go", "text/x-go"},
    {"gz", "application/gzip"},
    {"h", "text/x-c"},
    {"hpp", "text/x-c++"},
    {"htm", "text/html"},
    {"html", "text/html"},
    {"ico", "image/vnd.microsoft.icon"},
    {"ini", "text/plain"},
    {"java", "text/x-java"},
    {"jpeg", "image/jpeg"},
    {"jpg", "image/jpeg"},
    {"js", "text/javascript"},
    {"json", "application/json"},
    {"jsonl", "application/jsonl"},
    {"log", "text/plain"},
    {"md", "text/markdown"},
    {"mjs", "text/javascript"},
    {"mp3", "audio/mpeg"},
    {"mp4", "video/mp4"},
    {"ogg", "audio/ogg"},
    {"patch", "text/x-diff"},
    {"pdf", "application/pdf"},
    {"png", "image/png"},
    {"py", "text/x-python"},
    {"rs", "text/x-rust"},
    {"sh", "text/x-shellscript"},
    {"sql", "application/sql"},
    {"svg", "image/svg+xml"},
    {"tar", "application/x-tar"},
    {"toml", "application/toml"},
    {"ts", "text/x-typescript"},
    {"tsv", "text/tab-separated-values"},
    {"txt", "text/plain"},
    {"wasm", "application/wasm"},
    {"wav", "audio/wav"},
    {"webm", "video/webm"},
    {"webp", "image/webp"},
    {"xml", "application/xml"},
    {"yaml", "application/yaml"},
    {"yml", "application/yaml"},
    {"zip", "application/zip"},
    {NULL, NULL},
};

const char *fs_mime_type(const char *name) {
  const char *slash = strrchr(name, '/');
  const char *dot;

  if (slash)
    name = slash + 1;
  dot = strrchr(name, '.');
  if (dot == NULL || dot == name)
    return "text/plain";
  for (size_t i = 0; mime_types[i].ext; i++) {
    if (strcasecmp(dot + 1, mime_types[i].ext) == 0)
      return mime_types[i].type;
  }
  return "text/plain";
}

void fs_iso8601(const struct timespec *ts, char buf[32]) {
  struct tm tm;
  time_t t = ts->tv_sec;

  if (gmtime_r(&t, &tm) == NULL ||
      strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    snprintf(buf, 32, "1970-01-01T00:00:00Z");
}

int fs_read_all(int fd, off_t offset, size_t max, char **out, size_t *len) {
  size_t cap = max < 65536 ? max : 65536, n = 0;
  char *data = malloc(cap + 1);

  if (data == NULL)
    return -ENOMEM;
  while (n < max) {
    ssize_t r;

    if (n == cap) {
      size_t ncap = cap > max / 2 ? max : cap * 2;
      char *p = realloc(data, ncap + 1);
      if (p == NULL) {
        free(data);
        return -ENOMEM;
      }
      data = p;
      cap = ncap;
    }
    r = pread(fd, data + n, cap - n, offset + (off_t)n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int err = -errno;
      free(data);
      return err;
    }
    if (r == 0)
      break;
    n += (size_t)r;
  }
  data[n] = '\0';
  *out = data;
  *len = n;
  return 0;
}

long long fs_now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int fs_strcmp_p(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int entry_cmp(const void *a, const void *b) {
  return strcmp(((const struct fs_entry *)a)->name,
                ((const struct fs_entry *)b)->name);
}

void fs_entries_free(struct fs_entry *e, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(e[i].name);
    free(e[i].target);
  }
  free(e);
}

int fs_read_entries(int fd, const char *prefix, size_t max,
                    struct fs_entry **out, size_t *n_out, int *more) {
  size_t plen = prefix ? strlen(prefix) : 0;
  DIR *dir = fdopendir(fd);
  struct fs_entry *e = NULL;
  size_t n = 0, cap = 0;
  struct dirent *d;
  int err = 0;

  *more = 0;
  if (dir == NULL) {
    err = -errno;
    close(fd);
    return err;
  }
  while ((errno = 0, d = readdir(dir)) != NULL) {
    struct stat sb;

    if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0 ||
        (plen && strncmp(d->d_name, prefix, plen) != 0))
      continue;
    if (n == max) {
      *more = 1;
      break;
    }
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 32;
      struct fs_entry *p = realloc(e, ncap * sizeof(*p));
      if (p == NULL) {
        err = -ENOMEM;
        break;
      }
      e = p;
      cap = ncap;
    }
    memset(&e[n], 0, sizeof(e[n]));
    if ((e[n].name = strdup(d->d_name)) == NULL) {
      err = -ENOMEM;
      break;
    }
    if (fstatat(dirfd(dir), d->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
      e[n].mode = sb.st_mode;
      e[n].size = sb.st_size;
      if (S_ISLNK(sb.st_mode)) {
        char target[4096];
        ssize_t len =
            readlinkat(dirfd(dir), d->d_name, target, sizeof(target) - 1);
        if (len >= 0) {
          target[len] = '\0';
          e[n].target = strdup(target);
        }
      }
    }
    n++;
  }
  if (d == NULL && errno != 0 && err == 0)
    err = -errno;
  closedir(dir);
  if (err != 0) {
    fs_entries_free(e, n);
    return err;
  }
  if (n > 1)
    qsort(e, n, sizeof(*e), entry_cmp);
  *out = e;
  *n_out = n;
  return 0;
}
