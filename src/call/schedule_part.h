/* SPDX-License-Identifier: MIT */
/* schedule_part.h -- the part of a call that schedule.c owns: its place in the
 * executor's list of deadlines and in its plugin's queue for a pool
 * thread.  Only schedule.c touches these fields; it is declared below the
 * call core so that struct mcpd_call can hold it without a circle. */
#ifndef MCPD_SCHEDULE_PART_H
#define MCPD_SCHEDULE_PART_H

#include <stdint.h>

#include <uv.h>

struct mcpd_call;

typedef struct call_sched {
  /* The deadline, in the exec's list of them (loop thread): loop time in
   * ms when it passes, 0 for none. */
  uint64_t deadline_due;
  uint64_t deadline_ms;
  struct mcpd_call *deadline_prev, *deadline_next;
  int deadline_passed;
  int pool_waiting;            /* in its plugin's queue for a thread */
  struct mcpd_call *pool_next; /* that queue */
  int status;                  /* what the callback returned on the pool */
  uv_work_t work;
} call_sched;

#endif
