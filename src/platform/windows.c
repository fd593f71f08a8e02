/* SPDX-License-Identifier: MIT */
/* windows.c -- the platform layer on Windows (mingw-w64, msvcrt), and the
 * few POSIX functions win32.h names that its C runtime lacks.
 *
 * Plugins are DLLs, loaded with LoadLibrary from a private copy in a
 * directory of the loader's (Windows has no anonymous files), so the
 * original can be replaced while the copy is in use.  Workers need no
 * parent-death signal: libuv puts every process it starts in a job object
 * that ends them with mcpd, and a worker also ends when its host's pipe
 * closes.  Paths are UTF-8 throughout: mcpd.exe's manifest makes UTF-8
 * the C runtime's code page, as it is libuv's, and this file converts to
 * UTF-16 where it calls Windows itself.  Paths handed back use '/', which
 * Windows accepts, so the rest of mcpd splits them as it does elsewhere. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>
#include <windows.h>

#include <psapi.h>

#include "platform.h"

/* A crash ends the process at once, its exception code the exit status
 * its host reports (0xC0000005 for an access violation): no error report,
 * and no debugger attached first, as wine would. */
static LONG WINAPI crash_filter(EXCEPTION_POINTERS *info) {
  TerminateProcess(GetCurrentProcess(), info->ExceptionRecord->ExceptionCode);
  return EXCEPTION_EXECUTE_HANDLER;
}

/* A stack overflow cannot wait for the unhandled-exception filter: what
 * is left of the stack may not hold the unwinding before it.  A vectored
 * handler runs first, on the guaranteed reserve. */
static LONG WINAPI overflow_handler(EXCEPTION_POINTERS *info) {
  if (info->ExceptionRecord->ExceptionCode == EXCEPTION_STACK_OVERFLOW)
    TerminateProcess(GetCurrentProcess(), EXCEPTION_STACK_OVERFLOW);
  return EXCEPTION_CONTINUE_SEARCH;
}

/* Mistakes of a plugin must not stop the process for a dialog nobody
 * sees: no error boxes for a missing DLL or a crash. */
void platform_init(const char *argv0) {
  (void)argv0;
  SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX |
               SEM_NOOPENFILEERRORBOX);
  SetUnhandledExceptionFilter(crash_filter);
  AddVectoredExceptionHandler(1, overflow_handler);
  {
    ULONG reserve = 64 * 1024;
    SetThreadStackGuarantee(&reserve);
  }
  /* Bytes are bytes: no "\r\n" for "\n" in the protocol, the copies of
   * plugins or anything else the C runtime opens. */
  _fmode = _O_BINARY;
  for (int fd = 0; fd <= 2; fd++)
    _setmode(fd, _O_BINARY);
}

static void slashes(char *s) {
  for (; *s; s++)
    if (*s == '\\')
      *s = '/';
}

/* `utf8` as UTF-16 in a new buffer, or NULL. */
static wchar_t *widen(const char *utf8) {
  int n = MultiByteToWideChar(CP_UTF8, 0, utf8, -1, NULL, 0);
  wchar_t *w;
  if (n <= 0 || (w = malloc((size_t)n * sizeof(*w))) == NULL)
    return NULL;
  MultiByteToWideChar(CP_UTF8, 0, utf8, -1, w, n);
  return w;
}

int platform_self_exe(char *out, size_t size) {
  wchar_t w[32768];
  DWORD n = GetModuleFileNameW(NULL, w, sizeof(w) / sizeof(w[0]));
  if (n == 0 || n >= sizeof(w) / sizeof(w[0]))
    return -1;
  if (WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)size, NULL, NULL) <= 0)
    return -1;
  slashes(out);
  return 0;
}

/* --- the PE check -------------------------------------------------------- */

static uint16_t le16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* Reads exactly `n` bytes at `off`: 0, or -1 when the file is shorter. */
static int read_at(int fd, void *buf, size_t n, off_t off) {
  return pread(fd, buf, n, off) == (ssize_t)n ? 0 : -1;
}

int platform_check_object(int fd, off_t size, char *err, size_t errlen) {
  unsigned char dos[64], pe[24], sec[40];
  uint32_t at;
  uint16_t machine, sections, optional, flags;
#if defined(__x86_64__)
  const uint16_t ours = IMAGE_FILE_MACHINE_AMD64;
#elif defined(__aarch64__)
  const uint16_t ours = IMAGE_FILE_MACHINE_ARM64;
#else
  const uint16_t ours = IMAGE_FILE_MACHINE_I386;
#endif

  if (size < (off_t)sizeof(dos) || read_at(fd, dos, sizeof(dos), 0) != 0 ||
      dos[0] != 'M' || dos[1] != 'Z') {
    snprintf(err, errlen, "not a DLL (no MZ header)");
    return -1;
  }
  at = le32(dos + 0x3c);
  if ((off_t)at + (off_t)sizeof(pe) > size ||
      read_at(fd, pe, sizeof(pe), (off_t)at) != 0 ||
      memcmp(pe, "PE\0\0", 4) != 0) {
    snprintf(err, errlen, "not a DLL (no PE header; cut short?)");
    return -1;
  }
  machine = le16(pe + 4);
  sections = le16(pe + 6);
  optional = le16(pe + 20);
  flags = le16(pe + 22);
  if (machine != ours) {
    snprintf(err, errlen,
             "built for another machine (PE machine 0x%04x, mcpd is 0x%04x)",
             machine, ours);
    return -1;
  }
  if (!(flags & IMAGE_FILE_DLL)) {
    snprintf(err, errlen, "not a DLL (a program?)");
    return -1;
  }
  /* Every section's bytes must be in the file: one caught half-written
   * is refused, as on the ELF systems. */
  at += (uint32_t)sizeof(pe) + optional;
  for (uint16_t i = 0; i < sections; i++, at += (uint32_t)sizeof(sec)) {
    uint32_t raw_size, raw_at;
    if (read_at(fd, sec, sizeof(sec), (off_t)at) != 0) {
      snprintf(err, errlen, "truncated DLL (section table cut short)");
      return -1;
    }
    raw_size = le32(sec + 16);
    raw_at = le32(sec + 20);
    if ((off_t)raw_at + (off_t)raw_size > size) {
      snprintf(err, errlen,
               "truncated DLL (%lld bytes; a section ends at %lld)",
               (long long)size, (long long)raw_at + raw_size);
      return -1;
    }
  }
  return 0;
}

/* --- files, pipes, processes -------------------------------------------- */

int platform_anon_file(const char *name, char *path, size_t pathlen) {
  (void)name;
  (void)path;
  (void)pathlen;
  errno = ENOSYS;
  return -1;
}

ssize_t platform_copy_range(int in, int out, off_t *off, size_t want) {
  (void)in;
  (void)out;
  (void)off;
  (void)want;
  return -2;
}

/* libuv puts every process it starts in a job object that ends them when
 * their host ends.  A worker also sees its host's pipe close, and one
 * stuck in plugin code is ended by its watchdog then. */
int platform_die_with_parent(int sig) {
  (void)sig;
  return 1;
}

int platform_exit_fast(void) {
  return 0;
}

int platform_pipe(int fd[2]) {
  return _pipe(fd, 65536, _O_BINARY | _O_NOINHERIT);
}

int platform_socket(int domain, int type, int nonblocking) {
  (void)domain;
  (void)type;
  (void)nonblocking;
  errno = ENOSYS;
  return -1;
}

void platform_process_stats(long long *rss, long long *fds) {
  PROCESS_MEMORY_COUNTERS pmc;
  DWORD handles;

  *rss = *fds = -1;
  if (K32GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof(pmc)))
    *rss = (long long)pmc.WorkingSetSize;
  if (GetProcessHandleCount(GetCurrentProcess(), &handles))
    *fds = (long long)handles;
}

/* The system's message for `code`, without its line break. */
static void system_message(DWORD code, char *err, size_t errlen) {
  char buf[512];
  DWORD n =
      FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                     NULL, code, 0, buf, sizeof(buf), NULL);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
                   buf[n - 1] == ' ' || buf[n - 1] == '.'))
    n--;
  if (n == 0)
    snprintf(err, errlen, "error %lu", (unsigned long)code);
  else
    snprintf(err, errlen, "%.*s (error %lu)", (int)n, buf, (unsigned long)code);
}

void *platform_lib_open(const char *path, char *err, size_t errlen) {
  wchar_t *w = widen(path);
  HMODULE lib;

  if (w == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  lib = LoadLibraryW(w);
  free(w);
  if (lib == NULL) {
    char why[512];
    system_message(GetLastError(), why, sizeof(why));
    snprintf(err, errlen, "LoadLibrary failed: %s", why);
  }
  return (void *)lib;
}

void *platform_lib_symbol(void *lib, const char *name) {
  return (void *)(uintptr_t)GetProcAddress((HMODULE)lib, name);
}

void platform_lib_close(void *lib) {
  FreeLibrary((HMODULE)lib);
}

int platform_dup_private(int fd) {
  int copy = _dup(fd);
  if (copy >= 0)
    SetHandleInformation((HANDLE)_get_osfhandle(copy), HANDLE_FLAG_INHERIT, 0);
  return copy;
}

/* Asking the pipe (PeekNamedPipe) would wait for the read the input
 * thread is blocked in, as I/O on a synchronous handle is serialised: the
 * input thread tells the watchdog of the end instead. */
int platform_input_closed(int fd) {
  (void)fd;
  return 0;
}

int platform_uv_error(int errnum) {
  switch (errnum) {
  case ENOENT:
    return UV_ENOENT;
  case EACCES:
    return UV_EACCES;
  case EEXIST:
    return UV_EEXIST;
  case ENOTDIR:
    return UV_ENOTDIR;
  case EINVAL:
    return UV_EINVAL;
  case EBADF:
    return UV_EBADF;
  case ENOMEM:
    return UV_ENOMEM;
  case ENOSPC:
    return UV_ENOSPC;
  case EPIPE:
    return UV_EPIPE;
  default:
    return UV_EIO;
  }
}

int platform_plain_dir(const char *path) {
  DWORD a = GetFileAttributesA(path);
  return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY) &&
         !(a & FILE_ATTRIBUTE_REPARSE_POINT);
}

/* --- POSIX functions the C runtime lacks (win32.h) ---------------------- */

char *strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *copy = malloc(len + 1);
  if (copy == NULL)
    return NULL;
  memcpy(copy, s, len);
  copy[len] = '\0';
  return copy;
}

void *memmem(const void *hay, size_t hlen, const void *needle, size_t nlen) {
  const char *h = hay, *end;
  if (nlen == 0)
    return (void *)hay;
  if (hlen < nlen)
    return NULL;
  end = h + (hlen - nlen);
  for (; h <= end; h++)
    if (*h == *(const char *)needle && memcmp(h, needle, nlen) == 0)
      return (void *)h;
  return NULL;
}

int dprintf(int fd, const char *fmt, ...) {
  char small[1024], *buf = small;
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  if (n < 0)
    return -1;
  if ((size_t)n >= sizeof(small)) {
    if ((buf = malloc((size_t)n + 1)) == NULL)
      return -1;
    va_start(ap, fmt);
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  for (int off = 0; off < n;) {
    int w = _write(fd, buf + off, (unsigned)(n - off));
    if (w <= 0) {
      n = -1;
      break;
    }
    off += w;
  }
  if (buf != small)
    free(buf);
  return n;
}

/* An absolute path with '/' for an existing file; NULL with errno. */
char *realpath(const char *path, char *resolved) {
  struct stat st;
  char *full;

  if (stat(path, &st) != 0)
    return NULL;
  full = _fullpath(resolved, path, PATH_MAX);
  if (full == NULL) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  slashes(full);
  return full;
}

/* Tries names until one is new; the Xs get letters from the clock, the
 * process id and a counter. */
char *mkdtemp(char *tmpl) {
  static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  size_t len = strlen(tmpl);
  uint64_t seed = GetTickCount64() ^ ((uint64_t)GetCurrentProcessId() << 32);

  if (len < 6 || strcmp(tmpl + len - 6, "XXXXXX") != 0) {
    errno = EINVAL;
    return NULL;
  }
  for (unsigned attempt = 0; attempt < 1000; attempt++) {
    uint64_t v = seed + attempt * 0x9E3779B97F4A7C15ull;
    for (size_t i = len - 6; i < len; i++, v /= 36)
      tmpl[i] = chars[v % 36];
    if (_mkdir(tmpl) == 0)
      return tmpl;
    if (errno != EEXIST)
      return NULL;
  }
  errno = EEXIST;
  return NULL;
}

int setenv(const char *name, const char *value, int overwrite) {
  if (!overwrite && getenv(name) != NULL)
    return 0;
  return _putenv_s(name, value) == 0 ? 0 : -1;
}

int unsetenv(const char *name) {
  return _putenv_s(name, "") == 0 ? 0 : -1;
}

/* Moves the descriptor's offset: callers use it on their own descriptors
 * only, one thread at a time. */
ssize_t pread(int fd, void *buf, size_t n, off_t off) {
  if (_lseeki64(fd, (long long)off, SEEK_SET) < 0)
    return -1;
  return _read(fd, buf, n > INT_MAX ? INT_MAX : (unsigned)n);
}

int mcpd_rename(const char *from, const char *to) {
  wchar_t *wfrom = widen(from), *wto = widen(to);
  int rc = -1;

  if (wfrom == NULL || wto == NULL)
    errno = ENOMEM;
  else if (MoveFileExW(wfrom, wto,
                       MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
    rc = 0;
  else
    errno = GetLastError() == ERROR_FILE_NOT_FOUND ||
                    GetLastError() == ERROR_PATH_NOT_FOUND
                ? ENOENT
                : EACCES;
  free(wfrom);
  free(wto);
  return rc;
}

const char *strsignal(int signum) {
  switch (signum) {
  case SIGINT:
    return "Interrupt";
  case SIGILL:
    return "Illegal instruction";
  case SIGFPE:
    return "Floating point exception";
  case SIGSEGV:
    return "Segmentation fault";
  case SIGTERM:
    return "Terminated";
  case SIGABRT:
    return "Aborted";
  case 9:
    return "Killed";
  default:
    return "Unknown signal";
  }
}

int pause(void) {
  Sleep(INFINITE);
  return -1;
}
