/* SPDX-License-Identifier: MIT */
/* remote.h -- calls into isolated plugins: forwarded to the plugin's
 * worker process, whose answer ends the call like any other, and whose
 * requests, progress and logs reach the call's client. */
#ifndef MCPD_REMOTE_H
#define MCPD_REMOTE_H

#include "call_core.h"

/* Hooks of a call's life (see call_core.h): a call of an isolated plugin
 * goes to its worker, which hears when the call is cancelled. */
int remote_start(mcpd_call *c);
void remote_cancel(mcpd_call *c);

#endif
