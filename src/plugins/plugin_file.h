/* SPDX-License-Identifier: MIT */
/* plugin_file.h -- gets a plugin file ready for dlopen() without trusting
 * it more than necessary.
 *
 * Loading a plugin runs its code with our rights, so a file or directory
 * that other users could write is refused, the way sshd's StrictModes
 * refuses such a home directory.  The path is resolved and opened once,
 * without blocking (a FIFO named x.so must not hang the loop) and without
 * following a link swapped in after resolving it; every check after that,
 * and the copy, use the open descriptor, so what was checked is what is
 * loaded.  An accepted file is copied to a private place (a memfd when the
 * system has one, otherwise a directory of our own), so that overwriting
 * the original in place can never change a mapped image and so that a
 * reload gets a fresh handle from dlopen().  The ELF header is checked
 * before copying and the copy is checked to be a complete ELF shared
 * object before anything maps it. */
#ifndef MCPD_PLUGIN_FILE_H
#define MCPD_PLUGIN_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/* The largest plugin file accepted.  The copy is made on the event loop,
 * which serves nothing while it runs, and it takes memory (a memfd) for as
 * long as the plugin stays loaded.  Real plugins are far smaller (the
 * bundled ones are tens of KiB; a plugin with a large static library is a
 * few MiB), so the limit only refuses files dropped in by mistake -- a
 * core dump, an image, a huge sparse file -- before they cost anything.
 * It also bounds the stall: copying 256 MiB takes 50 ms from the page
 * cache and up to about 200 ms from disk on a current machine. */
#define MCPD_PLUGIN_MAX_SIZE ((off_t)256 * 1024 * 1024)

/* State for the fallback copies; zero-initialise it. */
typedef struct plugin_files {
  char *copy_dir; /* made when first needed, removed by plugin_files_free */
  unsigned seq;   /* keeps copy names unique within copy_dir */
} plugin_files;

/* A private copy between plugin_file_copy() and plugin_copy_done(). */
typedef struct plugin_copy {
  char path[4096]; /* what to hand to dlopen() */
  int fd;
  int is_memfd;
} plugin_copy;

/* Why plugin_file_open() refused decides when a retry is worthwhile. */
typedef enum plugin_file_verdict {
  PLUGIN_FILE_OK,
  PLUGIN_FILE_REFUSED,    /* the file itself */
  PLUGIN_FILE_DIR_REFUSED /* the owner or mode of its directory */
} plugin_file_verdict;

/* The directory part of `path`: "." when there is none, "/" for the
 * root. */
void plugin_file_dir_of(const char *path, char *out, size_t len);

/* Why stat() failed with `error` on `path`, as the reason a user reads
 * ("cannot stat: ..."). */
void plugin_file_stat_reason(const char *path, int error, char *err,
                             size_t errlen);

/* Resolves `path` (a symbolic link to a plugin is fine), opens what it
 * names without blocking and without following a link there, and refuses
 * what is not a regular file, what is empty or larger than
 * MCPD_PLUGIN_MAX_SIZE, and what other users could write unless
 * `allow_insecure`.  On PLUGIN_FILE_OK, *fd is the open file (the caller
 * closes it) and *st its identity, taken from the descriptor.  Otherwise
 * *fd is -1 and *st is what could be learnt of the file, for telling later
 * whether the refusal still holds.  *dir_st is the directory `path` is
 * in. */
plugin_file_verdict plugin_file_open(const char *path, int allow_insecure,
                                     int *fd, struct stat *st,
                                     struct stat *dir_st, char *err,
                                     size_t errlen);

/* Checks that `fd`, from plugin_file_open() with identity `st`, has the
 * header of a shared object (ELF, Mach-O, PE) for this host and all the
 * segments it declares, copies it privately (named after `name`, the file's
 * name) and checks the copy again, since the file may change while it is read.
 * On failure nothing is left behind. */
int plugin_file_copy(plugin_files *f, int fd, const struct stat *st,
                     const char *name, plugin_copy *c, char *err,
                     size_t errlen);

/* To call once dlopen() has had the copy, whether it succeeded or not.
 * Returns the memfd, which must stay open while the image is loaded:
 * glibc matches loaded objects by name before inode, so the copy's
 * /proc/self/fd name must stay unique.  A copy in the directory is
 * removed instead, and -1 returned.  Where a loaded file cannot be
 * removed (Windows), *leftover gets its path, for plugin_copy_remove()
 * once the image is unloaded; elsewhere it is set to NULL. */
int plugin_copy_done(plugin_copy *c, char **leftover);

/* Removes a copy plugin_copy_done() left behind. */
void plugin_copy_remove(const char *path);

/* Removes what process `pid`, ended, left of its copy directory, where a
 * loaded file cannot be removed (Windows): a worker that crashed leaves
 * its copy.  Nothing elsewhere. */
void plugin_files_sweep(long pid);

/* Removes the copy directory, if one was made. */
void plugin_files_free(plugin_files *f);

#endif
