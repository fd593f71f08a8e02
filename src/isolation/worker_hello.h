/* SPDX-License-Identifier: MIT */
/* worker_hello.h -- the first words between mcpd and the worker process of
 * an isolated plugin, before they speak MCP.  mcpd never loads an isolated
 * plugin itself, so it learns the plugin's name from the worker, and only
 * then knows which config and limits are the plugin's.
 *
 *   worker -> host  {"jsonrpc":"2.0","method":"io.mcpd/hello","params":
 *                    {"name":..., "version":..., "description":...}}
 *                   once the file is open, its descriptor and tables
 *                   checked, and before init();
 *   host -> worker  {"jsonrpc":"2.0","method":"io.mcpd/config","params":
 *                    {"config": {...} or null, "limits": {...}}}
 *                   the plugin's config and plugins.NAME.mcpd.limits;
 *                   EOF instead means the host will not use this worker
 *                   (the plugin runs in-process, or its name is taken),
 *                   and the worker exits 0 without a word;
 *   worker -> host  {"jsonrpc":"2.0","method":"io.mcpd/refused","params":
 *                    {"reason":...}} when the plugin cannot be served
 *                   (the file, its descriptor, init()), then exit 3.
 *
 * Then the host sends initialize and both speak MCP.  Every message is one
 * line, as on the MCP stream. */
#ifndef MCPD_WORKER_HELLO_H
#define MCPD_WORKER_HELLO_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define WORKER_HELLO "io.mcpd/hello"
#define WORKER_CONFIG "io.mcpd/config"
#define WORKER_REFUSED "io.mcpd/refused"

/* plugins.NAME.mcpd.limits, as the worker sets them on itself: 0 for
 * none. */
typedef struct worker_limits {
  uint64_t address_space_mib;
  uint64_t cpu_seconds;
  uint64_t open_files;
} worker_limits;

/* The worker's side, on blocking or non-blocking descriptors alike. */

/* Writes the hello line to `fd`.  Returns 0 or -1. */
int worker_hello_send(int fd, const char *name, const char *version,
                      const char *description);
/* Writes the refused line to `fd`, as well as it can. */
void worker_refused_send(int fd, const char *reason);
/* Reads the host's config line from `fd`, a byte at a time so that what
 * follows it stays for the MCP stream.  Returns 0 with `*config` (a new
 * reference, or NULL for none) and `*limits`; 1 at EOF (the host does not
 * want this worker); -1 with the reason in `err`. */
int worker_config_read(int fd, size_t max, json_object **config,
                       worker_limits *limits, char *err, size_t errlen);

#endif
