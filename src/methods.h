/* methods.h -- the MCP methods mcpd answers, from one static table. */
#ifndef MCPD_METHODS_H
#define MCPD_METHODS_H

#include <json-c/json.h>

#include "session.h"

/* Answers `r` exactly once, now or when its work completes. */
void methods_dispatch(request *r);
/* Handles a notification from the client; unknown ones are ignored. */
void methods_notify(session *s, const char *method, json_object *params);

/* Parses an MCP log level name ("warning"); -1 when unknown. */
int methods_log_level(const char *name);
const char *methods_log_level_name(int level);

#endif
