/* SPDX-License-Identifier: MIT */
/* client_config.h -- `mcpd install CLIENT` and `mcpd uninstall CLIENT`:
 * mcpd's entry in an MCP client's JSON config (Claude Desktop, Cursor,
 * VS Code, Claude Code, Gemini CLI), added or removed with every other
 * key kept, written atomically beside a backup of the previous file. */
#ifndef MCPD_CLIENT_CONFIG_H
#define MCPD_CLIENT_CONFIG_H

/* Runs the subcommand; argv[0] is "install" or "uninstall".  `self` is
 * the absolute path of the running mcpd, which the entry runs.  Returns
 * the exit status (0, 1 when something failed, 2 for a usage error),
 * with the reason on stderr. */
int client_config_main(int argc, char **argv, const char *self);

#endif
