/* SPDX-License-Identifier: MIT */
/* platform.h -- what mcpd asks of the system beyond POSIX and libuv, in
 * one small interface with one file per system:
 *
 *   linux.c  Linux: memfd, /proc, prctl, pipe2, SOCK_CLOEXEC
 *   posix.c  only POSIX (--enable-portable, macOS, the BSDs)
 *   macos.c  what macOS does its own way: Mach-O, the executable's path,
 *            a kqueue watch on the parent
 *   elf.c    the plugin-file check of the ELF systems
 *   unix.c   what every POSIX system shares: dlopen, descriptors
 *   windows.c  Windows (mingw-w64): LoadLibrary, PE files, the process's
 *            figures; win32.h gives its C runtime the POSIX names
 *
 * Directory watching is libuv's (uv_fs_event: inotify, kqueue, ...), so
 * it has no entry here.  Every function may be called from any thread
 * unless it says otherwise, and none logs: each says why it failed through
 * errno or an `err` buffer. */
#ifndef MCPD_PLATFORM_H
#define MCPD_PLATFORM_H

#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#ifdef _WIN32
#define PLATFORM_PLUGIN_SUFFIX ".dll"
#define PLATFORM_DEV_NULL "NUL"
#else
#define PLATFORM_PLUGIN_SUFFIX ".so"
#define PLATFORM_DEV_NULL "/dev/null"
#endif

/* Whether `name`, a file in a plugin directory, is one to load: not
 * hidden, and more than PLATFORM_PLUGIN_SUFFIX, which it ends in.  The
 * directory scan and its watch ask the same question. */
static inline int platform_plugin_name(const char *name) {
  size_t n = strlen(name), k = sizeof(PLATFORM_PLUGIN_SUFFIX) - 1;
  return name[0] != '.' && n > k &&
         strcmp(name + n - k, PLATFORM_PLUGIN_SUFFIX) == 0;
}

/* What to check when the system's loader refuses a plugin file. */
#ifdef _WIN32
#define PLATFORM_LIB_HINT                                                      \
  "check that it is a DLL built for this machine and that the DLLs it "        \
  "needs are beside mcpd.exe"
#else
#define PLATFORM_LIB_HINT                                                      \
  "check that it is a shared object built for this machine and its "           \
  "dependencies with ldd"
#endif

/* A struct stat's modification and change times as struct timespecs
 * (Windows: whole seconds). */
#if defined(_WIN32)
#define PLATFORM_MTIM(st) ((struct timespec){.tv_sec = (st).st_mtime})
#define PLATFORM_CTIM(st) ((struct timespec){.tv_sec = (st).st_ctime})
#elif defined(__APPLE__)
#define PLATFORM_MTIM(st) ((st).st_mtimespec)
#define PLATFORM_CTIM(st) ((st).st_ctimespec)
#else
#define PLATFORM_MTIM(st) ((st).st_mtim)
#define PLATFORM_CTIM(st) ((st).st_ctim)
#endif

/* Remembers how the program was started (argv[0]), before anything
 * changes the directory: where the system cannot name the running
 * executable, it is found from this. */
void platform_init(const char *argv0);

/* The absolute path of the running executable, into `out`.  0, or -1
 * when it cannot be told. */
int platform_self_exe(char *out, size_t size);

/* Whether the `size` bytes of `fd` hold a whole shared object this system
 * can load, of this program's own kind (class, byte order).  A file caught
 * half-written is refused, as touching a mapping past a file's end is
 * SIGBUS.  0, or -1 with the reason in `err`. */
int platform_check_object(int fd, off_t size, char *err, size_t errlen);

/* A private, anonymous file for a plugin's copy, which the dynamic loader
 * can open through `path` (Linux: a memfd, as /proc/self/fd/N).  Its
 * descriptor, or -1 when the system has none: the caller then copies into
 * a private directory of its own. */
int platform_anon_file(const char *name, char *path, size_t pathlen);

/* Copies up to `want` bytes of `in` from *off to `out`'s position with the
 * kernel's help, advancing *off: what was copied, 0 at the end, -1 with
 * errno on an error, or -2 when it cannot be done this way (the caller
 * then reads and writes). */
ssize_t platform_copy_range(int in, int out, off_t *off, size_t want);

/* Arranges for this process to get `sig` when its parent dies.  1 when
 * the system does so; 0 when it cannot, and the caller must notice by
 * itself (EOF on the parent's pipe, getppid() changing). */
int platform_die_with_parent(int sig);

/* From now on exit(), from any thread, ends the process at once with its
 * status and runs no destructor: a worker's plugin that calls exit()
 * from one of its threads must not run them under the feet of the others.
 * 1 when the system can do it, 0 when it cannot. */
int platform_exit_fast(void);

/* pipe() with both ends close-on-exec. */
int platform_pipe(int fd[2]);

/* socket() that is close-on-exec, and non-blocking when asked. */
int platform_socket(int domain, int type, int nonblocking);

/* This process's resident memory in bytes and open descriptors, for
 * /metrics; -1 for what the system cannot say.  On systems without a
 * current figure, the resident size is the peak (getrusage). */
void platform_process_stats(long long *rss, long long *fds);

/* Loads the shared object at `path` with all its symbols bound now and
 * kept to itself (dlopen RTLD_NOW | RTLD_LOCAL, LoadLibrary).  Its handle,
 * or NULL with the system's reason in `err` ("dlopen failed: ..."). */
void *platform_lib_open(const char *path, char *err, size_t errlen);

/* The address `name` has in `lib`, or NULL. */
void *platform_lib_symbol(void *lib, const char *name);

void platform_lib_close(void *lib);

/* A private copy of descriptor `fd`, numbered 3 or above and not passed
 * on to programs mcpd starts; -1 with errno. */
int platform_dup_private(int fd);

/* Whether the writer of `fd`, an input pipe, has closed it: 1, else 0
 * (also when the system cannot tell without reading, or could only by
 * waiting for a read another thread is blocked in: Windows). */
int platform_input_closed(int fd);

/* An errno value as the libuv error that means it (libuv's own
 * uv_translate_sys_error takes Windows' error codes on Windows, not the C
 * runtime's errno). */
int platform_uv_error(int errnum);

#ifdef _WIN32
/* Whether `path` is a directory itself, not a junction or a link to
 * one. */
int platform_plain_dir(const char *path);
#endif

#endif
