/* SPDX-License-Identifier: MIT */
/* scaffold.h -- `mcpd new NAME [--dir DIR]`: a plugin project that builds
 * and passes its own test against the installed mcpd with no edits. */
#ifndef MCPD_SCAFFOLD_H
#define MCPD_SCAFFOLD_H

/* Runs the subcommand; argv[0] is "new".  Returns the exit status (0, 1
 * when something failed, 2 for a usage error), with the reason on
 * stderr. */
int scaffold_main(int argc, char **argv);

/* Whether `name` is a C identifier of at most 64 characters: what a
 * plugin, its tool and its files may all be called. */
int scaffold_valid_name(const char *name);

#endif
