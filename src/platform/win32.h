/* SPDX-License-Identifier: MIT */
/* win32.h -- the POSIX names mcpd's portable code uses, as the Windows C
 * runtime (mingw-w64, msvcrt) spells them or as windows.c supplies them.
 *
 * The config.h that tools/windows/build.sh writes includes this before
 * any system header, so the shared code reads as POSIX.  It holds
 * names only: what behaves differently on Windows is in platform.h, and
 * its Windows side in windows.c. */
#ifndef MCPD_WIN32_H
#define MCPD_WIN32_H

#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0602 /* Windows 8: what libuv 1.44 needs */
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
/* K32GetProcessMemoryInfo from kernel32, not psapi.dll. */
#ifndef PSAPI_VERSION
#define PSAPI_VERSION 2
#endif
/* C99 printf formats (%zu, %lld) rather than msvcrt's own. */
#ifndef __USE_MINGW_ANSI_STDIO
#define __USE_MINGW_ANSI_STDIO 1
#endif
/* gmtime_r and localtime_r, from time.h. */
#ifndef _POSIX_THREAD_SAFE_FUNCTIONS
#define _POSIX_THREAD_SAFE_FUNCTIONS 200112L
#endif

/* winsock2.h before windows.h, as libuv's own headers need. */
#include <winsock2.h>

/* windows.h's annotations and old pointer words, which mcpd uses as
 * names. */
#undef IN
#undef OUT
#undef OPTIONAL
#undef near
#undef far

#include <direct.h>
#include <fcntl.h>
#include <io.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

typedef int uid_t;
typedef int gid_t;

/* Open flags POSIX has and the C runtime does not: descriptors are not
 * inherited unless asked (_O_NOINHERIT); no FIFOs to block on and no
 * controlling terminal.  Symbolic links and junctions are followed: the
 * runtime cannot refuse them, and lstat() is stat(). */
#define O_CLOEXEC _O_NOINHERIT
#define O_NOFOLLOW 0
#define O_NONBLOCK 0
#define O_NOCTTY 0

/* No symbolic links or sockets in the file types the CRT reports. */
#define S_IFLNK 0120000
#define S_IFSOCK 0140000
#define S_ISLNK(m) 0
#define lstat stat

#define mkdir(path, mode) _mkdir(path)
#define fsync _commit
#define fchmod(fd, mode) 0
#define getuid() 0
/* Windows does not give a process a new parent when its own ends; the
 * job object libuv puts every child in ends workers with their host. */
#define getppid() 0

char *strndup(const char *s, size_t n);
void *memmem(const void *hay, size_t hlen, const void *needle, size_t nlen);
int dprintf(int fd, const char *fmt, ...)
    __attribute__((format(gnu_printf, 2, 3)));
char *realpath(const char *path, char *resolved);
char *mkdtemp(char *tmpl);
int setenv(const char *name, const char *value, int overwrite);
int unsetenv(const char *name);
ssize_t pread(int fd, void *buf, size_t n, off_t off);
/* rename() as POSIX has it: over an existing file too. */
int mcpd_rename(const char *from, const char *to);
#define rename mcpd_rename
const char *strsignal(int signum);
int pause(void);

#endif
