/* SPDX-License-Identifier: MIT */
/* elf.c -- the plugin-file check of the systems whose shared objects are
 * ELF (Linux, the BSDs). */
#include "config.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"

/* A file caught half-written can have intact headers and truncated
 * segments, so the headers are checked against the size: every segment
 * the loader maps must lie inside the file.  ElfW() is the host's own
 * class, which is the only one dlopen accepts anyway. */
int platform_check_object(int fd, off_t size, char *err, size_t errlen) {
  ElfW(Ehdr) eh;

  if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    snprintf(err, errlen, "not an ELF file (is it a shared object?)");
    return -1;
  }
  if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)) {
    snprintf(err, errlen,
             "ELF class does not match this host (built for "
             "another architecture?)");
    return -1;
  }
  if (eh.e_type != ET_DYN) {
    snprintf(err, errlen,
             "ELF file is not a shared object (build it with "
             "-shared)");
    return -1;
  }
  if (eh.e_phentsize != sizeof(ElfW(Phdr)) ||
      (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr)) >
          (uint64_t)size ||
      (eh.e_shoff != 0 &&
       (uint64_t)eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize >
           (uint64_t)size)) {
    snprintf(err, errlen, "truncated ELF file (still being written?)");
    return -1;
  }
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    ElfW(Phdr) ph;
    if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
        (ssize_t)sizeof(ph)) {
      snprintf(err, errlen, "truncated ELF file (still being written?)");
      return -1;
    }
    if (ph.p_type == PT_LOAD &&
        (uint64_t)ph.p_offset + ph.p_filesz > (uint64_t)size) {
      snprintf(err, errlen, "truncated ELF file (still being written?)");
      return -1;
    }
  }
  return 0;
}
