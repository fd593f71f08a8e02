/* SPDX-License-Identifier: MIT */
/* schedule.h -- where and until when a call runs: POOL calls share the
 * worker threads fairly among plugins, and every call that does not run
 * inline has a deadline.  The core hears nothing of this module by name:
 * host_api.c registers these hooks (see call_core.h). */
#ifndef MCPD_SCHEDULE_H
#define MCPD_SCHEDULE_H

#include "call_core.h"

/* The exec's deadline timer: set up with the exec, closed with it. */
void sched_init(call_exec *e);
void sched_close(call_exec *e);

/* Hooks of a call's life. */
void sched_setup(mcpd_call *c);
int sched_start_deadline(mcpd_call *c); /* never takes the call over */
int sched_start_pool(mcpd_call *c);     /* takes over POOL calls */
void sched_cancel(mcpd_call *c);        /* a call still waiting never runs */
void sched_end(mcpd_call *c);           /* its deadline is off */

/* Whether the call was cancelled because its deadline passed. */
int sched_deadline_passed(const mcpd_call *c);

#endif
