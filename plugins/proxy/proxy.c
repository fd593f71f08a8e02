/* SPDX-License-Identifier: MIT */
/* proxy.c -- other MCP servers, served through mcpd.
 *
 * Configured as
 *
 *   {"plugins": {"proxy": {"servers": {
 *     "ev":  {"command": ["npx", "-y",
 * "@modelcontextprotocol/server-everything"]}, "web": {"url":
 * "https://example.com/mcp", "headers": {...}}}}}}
 *
 * each upstream's tools, resources, templates and prompts become mcpd's
 * (upstream.c, entries.c), and every call on them is forwarded.
 *
 * This file is the plugin's frame: the config, init and fini, and the
 * proxy thread's loop, which waits on every upstream's pipes and
 * libcurl's sockets in one curl_multi_poll() and is woken for commands by
 * curl_multi_wakeup().  init() waits (up to startTimeoutMs) for every
 * upstream's first listing, so a client's first tools/list already shows
 * them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/plugin_config.h"
#include "proxy.h"

#define DEFAULT_START_TIMEOUT_MS 10000
#define DEFAULT_LIST_TIMEOUT_MS 30000
#define MAX_FDS 256

/* --- the proxy thread --------------------------------------------------- */

static void run_commands(px *p) {
  px_cmd *cmd;
  pthread_mutex_lock(&p->lock);
  cmd = p->head;
  p->head = p->tail = NULL;
  pthread_mutex_unlock(&p->lock);
  while (cmd != NULL) {
    px_cmd *next = cmd->next;
    if (cmd->up != NULL) {
      up_command(cmd->up, cmd);
    } else {
      for (size_t i = 0; i < p->n_ups; i++)
        up_command(p->ups[i], cmd);
    }
    px_cmd_free(cmd);
    cmd = next;
  }
}

/* Every transfer libcurl finished goes back to the link that made it. */
static void finished_transfers(px *p) {
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(p->multi, &left)) != NULL) {
    px_easy *e = NULL;
    if (msg->msg != CURLMSG_DONE)
      continue;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&e);
    if (e != NULL)
      e->done(e, msg->data.result);
  }
}

static void *loop(void *arg) {
  px *p = arg;
  struct curl_waitfd fds[MAX_FDS];
  size_t owner_end[64];
  int running, stop = 0;

  for (size_t i = 0; i < p->n_ups; i++)
    up_start(p->ups[i]);
  while (!stop) {
    size_t n = 0;
    int64_t now = px_now_ms(), next = now + 1000;
    long curl_ms = -1;

    for (size_t i = 0; i < p->n_ups; i++) {
      int64_t d = up_deadline(p->ups[i]);
      n += up_want(p->ups[i], fds + n, MAX_FDS - n);
      if (i < 64)
        owner_end[i] = n;
      if (d > 0 && d < next)
        next = d;
    }
    if (curl_multi_timeout(p->multi, &curl_ms) == CURLM_OK && curl_ms >= 0 &&
        now + curl_ms < next)
      next = now + curl_ms;
    for (size_t i = 0; i < n; i++)
      fds[i].revents = 0;
    curl_multi_poll(p->multi, fds, (unsigned)n,
                    next > now ? (int)(next - now) : 0, NULL);
    pthread_mutex_lock(&p->lock);
    stop = p->stopping;
    pthread_mutex_unlock(&p->lock);
    if (stop)
      break;
    run_commands(p);
    for (size_t i = 0, from = 0; i < p->n_ups && i < 64; i++) {
      up_ready(p->ups[i], fds + from, owner_end[i] - from);
      from = owner_end[i];
    }
    curl_multi_perform(p->multi, &running);
    finished_transfers(p);
    now = px_now_ms();
    for (size_t i = 0; i < p->n_ups; i++) {
      int64_t d = up_deadline(p->ups[i]);
      if (d > 0 && d <= now)
        up_tick(p->ups[i], now);
    }
  }
  for (size_t i = 0; i < p->n_ups; i++)
    up_stop(p->ups[i]);
  run_commands(p); /* frees what came late; calls there were completed */
  return NULL;
}

/* --- init and fini -------------------------------------------------------- */

static void proxy_fini(void *state) {
  px *p = state;
  if (p == NULL)
    return;
  px_instance_remove(p);
  if (p->thread_started) {
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_mutex_unlock(&p->lock);
    curl_multi_wakeup(p->multi);
    pthread_join(p->thread, NULL);
  }
  for (size_t i = 0; i < p->n_ups; i++)
    up_free(p->ups[i]);
  free(p->ups);
  free(p->log_level);
  if (p->multi != NULL)
    curl_multi_cleanup(p->multi);
  pthread_cond_destroy(&p->cond);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

static int read_config(px *p, json_object *config, char **errmsg) {
  const mcpd_host *host = p->host;
  json_object *servers = NULL, *v;
  int64_t ms = DEFAULT_START_TIMEOUT_MS;

  if (config != NULL &&
      json_object_object_get_ex(config, "startTimeoutMs", &v) &&
      config_int(host, errmsg, "startTimeoutMs", v, 0, 600000, &ms) != MCPD_OK)
    return MCPD_ERROR;
  p->start_timeout_ms = ms;
  ms = DEFAULT_LIST_TIMEOUT_MS;
  if (config != NULL &&
      json_object_object_get_ex(config, "listTimeoutMs", &v) &&
      config_int(host, errmsg, "listTimeoutMs", v, 1, 600000, &ms) != MCPD_OK)
    return MCPD_ERROR;
  p->list_timeout_ms = ms;
  p->log_level = strdup("info");
  if (config != NULL && json_object_object_get_ex(config, "logLevel", &v)) {
    if (!json_object_is_type(v, json_type_string) ||
        px_log_level(json_object_get_string(v)) < 0)
      return config_error(host, errmsg,
                          "logLevel must be one of debug, info, notice, "
                          "warning, error, critical, alert, emergency");
    free(p->log_level);
    p->log_level = strdup(json_object_get_string(v));
  }
  if (p->log_level == NULL)
    return config_error(host, errmsg, "out of memory");
  if (config == NULL || !json_object_object_get_ex(config, "servers", &servers))
    return MCPD_OK;
  if (!json_object_is_type(servers, json_type_object))
    return config_error(host, errmsg, "servers must be an object");
  if ((p->ups = calloc((size_t)json_object_object_length(servers) + 1,
                       sizeof(*p->ups))) == NULL)
    return config_error(host, errmsg, "out of memory");
  json_object_object_foreach(servers, name, def) {
    if (p->n_ups == 64)
      return config_error(host, errmsg, "at most 64 servers");
    if ((p->ups[p->n_ups] = up_new(p, name, def, errmsg)) == NULL)
      return MCPD_ERROR;
    p->n_ups++;
  }
  return MCPD_OK;
}

static int proxy_init(const mcpd_host *host, mcpd_self *self,
                      json_object *config, void **state, char **errmsg) {
  px *p = calloc(1, sizeof(*p));
  struct timespec until;
  int64_t deadline;
  int rc;

  if (p == NULL)
    return config_error(host, errmsg, "out of memory");
  p->host = host;
  p->self = self;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->cond, NULL);
  *state = p;
  px_instance_add(p);
  if (read_config(p, config, errmsg) != MCPD_OK)
    return MCPD_ERROR;
  if (p->n_ups == 0) {
    host->log(self, MCPD_LOG_INFO,
              "no servers configured (\"plugins\": {\"proxy\": {\"servers\": "
              "{...}}})");
    return MCPD_OK;
  }
  if ((p->multi = curl_multi_init()) == NULL)
    return config_error(host, errmsg, "curl_multi_init failed");
  p->starting = p->n_ups;
  if ((rc = pthread_create(&p->thread, NULL, loop, p)) != 0)
    return config_error(host, errmsg, "cannot start the proxy thread: %s",
                        strerror(rc));
  p->thread_started = 1;
  /* Wait for the first listings, bounded: a slow upstream joins later
   * with list_changed. */
  deadline = px_now_ms() + p->start_timeout_ms;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += (time_t)(p->start_timeout_ms / 1000);
  until.tv_nsec += (long)(p->start_timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&p->lock);
  while (p->starting > 0 && px_now_ms() < deadline)
    if (pthread_cond_timedwait(&p->cond, &p->lock, &until) == ETIMEDOUT)
      break;
  if (p->starting > 0)
    host->log(self, MCPD_LOG_WARNING,
              "%zu server(s) not ready after %lld ms; their entries come "
              "when they are",
              p->starting, (long long)p->start_timeout_ms);
  pthread_mutex_unlock(&p->lock);
  return MCPD_OK;
}

MCPD_PLUGIN_DEFINE(.name = "proxy", .version = "1.0",
                   .description = "Other MCP servers (stdio or HTTP), served "
                                  "through mcpd under a prefix",
                   .init = proxy_init, .fini = proxy_fini);
