/* plugin_file.h -- gets a plugin file ready for dlopen() without trusting
 * it more than necessary.
 *
 * Loading a plugin runs its code with our rights, so a file or directory
 * that other users could write is refused, the way sshd's StrictModes
 * refuses such a home directory.  An accepted file is then copied to a
 * private place (a memfd when the system has one, otherwise a directory
 * of our own), so that overwriting the original in place can never change
 * a mapped image and so that a reload gets a fresh handle from dlopen().
 * The copy is checked to be a complete ELF shared object before anything
 * maps it. */
#ifndef MCPD_PLUGIN_FILE_H
#define MCPD_PLUGIN_FILE_H

#include <stddef.h>
#include <sys/stat.h>

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

/* Why plugin_file_check() refused decides when a retry is worthwhile. */
typedef enum plugin_file_verdict {
  PLUGIN_FILE_OK,
  PLUGIN_FILE_REFUSED,    /* the file itself */
  PLUGIN_FILE_DIR_REFUSED /* the owner or mode of its directory */
} plugin_file_verdict;

/* The directory part of `path`: "." when there is none, "/" for the
 * root. */
void plugin_file_dir_of(const char *path, char *out, size_t len);

/* Refuses what is not a non-empty regular file, or what other users could
 * write, unless `allow_insecure`.  Fills *st and *dir_st with what it
 * could stat, for telling later whether the refusal still holds. */
plugin_file_verdict plugin_file_check(const char *path, int allow_insecure,
                                      struct stat *st, struct stat *dir_st,
                                      char *err, size_t errlen);

/* Copies `path` privately and checks the copy is a whole ELF shared
 * object.  *st becomes the identity of what was actually read, which may
 * differ from what plugin_file_check() saw if the file was replaced in
 * between.  On failure nothing is left behind. */
int plugin_file_copy(plugin_files *f, const char *path, plugin_copy *c,
                     struct stat *st, char *err, size_t errlen);

/* To call once dlopen() has had the copy, whether it succeeded or not.
 * Returns the memfd, which must stay open while the image is loaded:
 * glibc matches loaded objects by name before inode, so the copy's
 * /proc/self/fd name must stay unique.  A copy in the directory is
 * removed instead, and -1 returned. */
int plugin_copy_done(plugin_copy *c);

/* Removes the copy directory, if one was made. */
void plugin_files_free(plugin_files *f);

#endif
