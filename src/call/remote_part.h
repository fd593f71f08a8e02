/* SPDX-License-Identifier: MIT */
/* remote_part.h -- the part of a call that remote.c owns: the id of the
 * request that forwarded it to its plugin's worker.  Only remote.c
 * touches it; it is declared below the call core so that struct mcpd_call
 * can hold it without a circle. */
#ifndef MCPD_REMOTE_PART_H
#define MCPD_REMOTE_PART_H

#include <stdint.h>

typedef struct call_remote {
  uint64_t id; /* forwarded to its plugin's worker, until answered */
} call_remote;

#endif
