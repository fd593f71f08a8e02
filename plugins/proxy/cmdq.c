/* SPDX-License-Identifier: MIT */
/* cmdq.c -- the one place mcpd's threads and the proxy thread share: the
 * queue of commands, and the count init() waits on; and the one table
 * both sides read, MCP's log level names. */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

void px_cmd_free(px_cmd *cmd) {
  if (cmd == NULL)
    return;
  free(cmd->name);
  json_object_put(cmd->params);
  json_object_put(cmd->extra);
  json_object_put(cmd->id);
  free(cmd);
}

void px_post(px *p, px_cmd *cmd) {
  pthread_mutex_lock(&p->lock);
  if (p->stopping) {
    pthread_mutex_unlock(&p->lock);
    if (cmd->kind == PX_CMD_CALL)
      p->host->complete(cmd->call, MCPD_ERROR);
    px_cmd_free(cmd);
    return;
  }
  if (p->tail != NULL)
    p->tail->next = cmd;
  else
    p->head = cmd;
  p->tail = cmd;
  pthread_mutex_unlock(&p->lock);
  curl_multi_wakeup(p->multi);
}

void px_started(px *p) {
  pthread_mutex_lock(&p->lock);
  if (p->starting > 0 && --p->starting == 0)
    pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
}

int px_log_level(const char *name) {
  static const char *const names[] = {"debug",   "info",     "notice",
                                      "warning", "error",    "critical",
                                      "alert",   "emergency"};
  for (int i = 0; name != NULL && i < 8; i++)
    if (strcmp(name, names[i]) == 0)
      return i;
  return -1;
}
