/* SPDX-License-Identifier: MIT */
/* tasks.h -- the everything fixture's task tools (tasks.c), listed in
 * everything.c's table. */
#ifndef EVERYTHING_TASKS_H
#define EVERYTHING_TASKS_H

#include <mcpd.h>

int tasks_greet(mcpd_call *call, const mcpd_request *req);
int tasks_slow_compute(mcpd_call *call, const mcpd_request *req);
int tasks_failing_job(mcpd_call *call, const mcpd_request *req);
int tasks_protocol_error_job(mcpd_call *call, const mcpd_request *req);
int tasks_confirm_delete(mcpd_call *call, const mcpd_request *req);
int tasks_multi_input(mcpd_call *call, const mcpd_request *req);
int tasks_tool_with_task(mcpd_call *call, const mcpd_request *req);

#endif
