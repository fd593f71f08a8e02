/* SPDX-License-Identifier: MIT */
/* cli.h -- `mcpd --list` and `mcpd --call`: one-shot commands for a person
 * at a shell.  Both talk to the server through a session on an in-memory
 * transport, so they exercise exactly the path a client's request takes. */
#ifndef MCPD_CLI_H
#define MCPD_CLI_H

#include "server.h"

/* Each runs the loop to the end and returns the process exit status. */
int cli_list(server *srv);
int cli_call(server *srv, const char *tool, const char *args);

#endif
