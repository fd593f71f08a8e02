/* server.c -- the top of the host: wiring, sessions, signals and orderly
 * shutdown. */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_PRCTL
#include <sys/prctl.h>
#endif

#include "jsonrpc.h"
#include "log.h"
#include "server.h"
#include "strbuf.h"

/* How long calls in flight may run after input ended, then how long they
 * get to notice cancellation.  The flush of replies already owed is not
 * bounded: a client that reads gets every one.  A second SIGTERM or SIGINT
 * (or the parent's death) ends the wait for a client that stopped
 * reading. */
#define SHUTDOWN_GRACE_MS 600
#define SHUTDOWN_CANCEL_MS 150

/* --- what comes up from below ------------------------------------------- */

static void announce_cb(uv_timer_t *timer) {
  static const char *const methods[REG_KINDS] = {
      "notifications/tools/list_changed",
      "notifications/resources/list_changed",
      "notifications/resources/list_changed",
      "notifications/prompts/list_changed"};
  server *srv = timer->data;
  unsigned changed = srv->registry.changed;

  srv->registry.changed = 0;
  if (srv->shutting_down || changed == 0)
    return;
  /* Subscriptions follow their URIs to the entries that serve them now. */
  if (changed &
      (REGISTRY_CHANGED(REG_RESOURCE) | REGISTRY_CHANGED(REG_TEMPLATE)))
    methods_registry_changed(&srv->methods);
  /* Templates and resources share one notification; send it once. */
  if (changed & REGISTRY_CHANGED(REG_TEMPLATE))
    changed = (changed & ~REGISTRY_CHANGED(REG_TEMPLATE)) |
              REGISTRY_CHANGED(REG_RESOURCE);
  for (int k = 0; k < REG_KINDS; k++) {
    if (!(changed & REGISTRY_CHANGED(k)))
      continue;
    for (size_t i = 0; i < srv->n_sessions; i++)
      session_notify(srv->sessions[i], methods[k], NULL);
  }
}

/* loader_env.changed_cb */
static void registry_changed_cb(void *arg) {
  server *srv = arg;
  if (srv->shutting_down || uv_is_active((uv_handle_t *)&srv->announce_timer))
    return;
  /* A zero timeout fires on the next loop turn: every change made in this
   * turn (a whole directory scan, say) is announced once. */
  uv_timer_start(&srv->announce_timer, announce_cb, 0, 0);
}

/* call_exec.log_cb: each session hears the levels it asked for. */
static void plugin_log_cb(void *arg, int level, const char *logger,
                          const char *text) {
  server *srv = arg;
  json_object *params = NULL;

  for (size_t i = 0; i < srv->n_sessions; i++) {
    session *s = srv->sessions[i];
    if (s->log_level < 0 || level < s->log_level)
      continue;
    /* Built once, for the first session that wants it, and shared. */
    if (params == NULL) {
      params = json_object_new_object();
      json_object_object_add(
          params, "level",
          json_object_new_string(methods_log_level_name(level)));
      json_object_object_add(params, "logger", json_object_new_string(logger));
      json_object_object_add(params, "data", json_object_new_string(text));
    }
    session_notify(s, "notifications/message", json_object_get(params));
  }
  json_object_put(params);
}

/* call_exec.updated_cb: only sessions subscribed to that URI hear. */
static void resource_updated_cb(void *arg, const char *uri) {
  server *srv = arg;
  for (size_t i = 0; i < srv->n_sessions; i++) {
    session *s = srv->sessions[i];
    json_object *params;
    if (!methods_subscribed(s, uri))
      continue;
    params = json_object_new_object();
    json_object_object_add(params, "uri", json_object_new_string(uri));
    session_notify(s, "notifications/resources/updated", params);
  }
}

/* methods_ctx.roots_changed_cb: every plugin that asked hears of it. */
static void roots_changed_cb(void *arg) {
  server *srv = arg;
  for (plugin *p = srv->loader.plugins; p; p = p->next)
    call_roots_changed(p);
}

static void calls_drained_cb(void *arg);

/* watch_cb */
static void dirs_changed_cb(void *arg) {
  server *srv = arg;
  if (!srv->shutting_down)
    loader_scan(&srv->loader);
}

int server_init(server *srv, uv_loop_t *loop, options *opts) {
  loader_env env;

  memset(srv, 0, sizeof(*srv));
  srv->loop = loop;
  srv->opts = opts;
  if (registry_init(&srv->registry) != 0)
    return -1;
  if (call_exec_init(&srv->exec, loop) != 0)
    return -1;
  srv->exec.drained_cb = calls_drained_cb;
  srv->exec.log_cb = plugin_log_cb;
  srv->exec.updated_cb = resource_updated_cb;
  srv->exec.arg = srv;
  srv->exec.request_timeout_ms = opts->request_timeout_ms;
  if (methods_init(&srv->methods, &srv->registry, opts, &srv->exec) != 0)
    return -1;
  srv->methods.roots_changed_cb = roots_changed_cb;
  srv->methods.arg = srv;

  uv_timer_init(loop, &srv->announce_timer);
  srv->announce_timer.data = srv;
  uv_timer_init(loop, &srv->shutdown_timer);
  srv->shutdown_timer.data = srv;
  uv_timer_init(loop, &srv->parent_timer);
  srv->parent_timer.data = srv;
  uv_signal_init(loop, &srv->sig_term);
  uv_signal_init(loop, &srv->sig_int);
  uv_signal_init(loop, &srv->sig_hup);
  srv->sig_term.data = srv->sig_int.data = srv->sig_hup.data = srv;

  memset(&env, 0, sizeof(env));
  env.registry = &srv->registry;
  env.opts = opts;
  env.host = &call_host_api;
  env.host_data = &srv->exec;
  env.changed_cb = registry_changed_cb;
  env.arg = srv;
  return loader_init(&srv->loader, &env);
}

/* --- sessions ----------------------------------------------------------- */

session *server_open_session(server *srv, session_write_fn write, void *ctx) {
  session_io io = {write, ctx};
  session_handler handler = {methods_request, methods_notification,
                             &srv->methods};
  session *s;

  if (srv->n_sessions == srv->cap_sessions) {
    size_t cap = srv->cap_sessions ? srv->cap_sessions * 2 : 4;
    session **all = realloc(srv->sessions, cap * sizeof(*all));
    if (all == NULL)
      return NULL;
    srv->sessions = all;
    srv->cap_sessions = cap;
  }
  if ((s = session_new(&io, &handler)) == NULL)
    return NULL;
  s->data = srv;
  s->max_in_flight = srv->opts->max_in_flight;
  srv->sessions[srv->n_sessions++] = s;
  return s;
}

void server_close_session(server *srv, session *s) {
  for (size_t i = 0; i < srv->n_sessions; i++)
    if (srv->sessions[i] == s) {
      srv->sessions[i] = srv->sessions[--srv->n_sessions];
      break;
    }
  if (srv->stdio_session == s)
    srv->stdio_session = NULL;
  methods_session_closed(&srv->methods, s);
  session_free(s);
}

size_t server_rescan(server *srv) {
  return loader_scan(&srv->loader);
}

/* --- stdio -------------------------------------------------------------- */

static void stdio_message_cb(void *arg, const char *line, size_t len) {
  server *srv = arg;
  if (srv->stdio_session != NULL)
    session_handle_line(srv->stdio_session, line, len);
}

static void stdio_oversize_cb(void *arg, size_t max) {
  server *srv = arg;
  if (srv->stdio_session != NULL)
    session_oversize(srv->stdio_session, max);
}

static void stdio_end_cb(void *arg, const char *why) {
  server_shutdown(arg, why);
}

int server_serve_stdio(server *srv) {
  stdio_transport_cb cb = {stdio_message_cb, stdio_oversize_cb, stdio_end_cb,
                           srv};
  srv->stdio = stdio_transport_new(srv->loop, srv->opts->max_message, &cb);
  if (srv->stdio == NULL)
    return -1;
  srv->stdio_session =
      server_open_session(srv, stdio_transport_write, srv->stdio);
  if (srv->stdio_session == NULL) {
    log_error("out of memory");
    return -1;
  }
  return stdio_transport_start(srv->stdio);
}

/* --- Streamable HTTP ---------------------------------------------------- */

/* Sessions nobody used for this long end (clients often just go away). */
#define HTTP_SESSION_IDLE_MS (30 * 60 * 1000)
#define HTTP_SWEEP_MS (30 * 1000)
/* Unrelated messages kept for a session until its GET stream opens. */
#define HTTP_BACKLOG_MAX (1u << 20)

/* One exchange the glue answers: a POST (waiting for the response to
 * `id`, or for nothing when it carried no request) or a GET stream. */
typedef struct http_post {
  http_exchange *x;
  struct http_session *hs; /* NULL once the session ended */
  json_object *id;         /* the request whose response answers it */
  int is_get;
  int answered;
  struct http_post *prev, *next;
} http_post;

typedef struct http_session {
  server *srv;
  session *session;
  char id[33];       /* 128 random bits in hex: visible ASCII */
  http_post *stream; /* the GET stream, or NULL */
  http_post *posts;  /* POSTs waiting for their answer */
  strbuf backlog;    /* SSE events for a GET stream not open yet */
  uint64_t last_used;
  struct http_session *next;
} http_session;

static const char json_content[] = "application/json";

static void http_error(http_exchange *x, unsigned status, int code,
                       const char *message) {
  json_object *e = jsonrpc_error(NULL, code, message, NULL);
  size_t len;
  const char *text = jsonrpc_to_string(e, &len);
  http_exchange_respond(x, status, json_content, text, len);
  json_object_put(e);
}

static void post_unlink(http_post *p) {
  if (p->hs == NULL)
    return;
  if (p->is_get) {
    if (p->hs->stream == p)
      p->hs->stream = NULL;
  } else {
    if (p->prev)
      p->prev->next = p->next;
    else if (p->hs->posts == p)
      p->hs->posts = p->next;
    if (p->next)
      p->next->prev = p->prev;
  }
  p->prev = p->next = NULL;
  p->hs = NULL;
}

/* Whether a message mcpd wrote is a response (or a batch of them) rather
 * than a request or notification of its own: those are built by
 * jsonrpc_notification(), whose text starts so. */
static void post_answer(http_post *p, const char *const *parts,
                        const size_t *lens, int n) {
  p->answered = 1;
  if (http_exchange_is_stream(p->x)) {
    http_exchange_stream_send(p->x, parts, lens, n);
    http_exchange_stream_end(p->x);
  } else {
    strbuf b = {0};
    for (int i = 0; i < n; i++)
      strbuf_append(&b, parts[i], lens[i]);
    if (b.failed)
      http_error(p->x, 500, JSONRPC_INTERNAL_ERROR, "out of memory");
    else
      http_exchange_respond(p->x, 200, json_content, b.data ? b.data : "",
                            b.len);
    strbuf_free(&b);
  }
}

/* session_write_fn for HTTP sessions: a response goes on its request's
 * POST, as JSON -- or, when the call sent something first (progress, a
 * request to the client), the POST turned into an SSE stream and the
 * response ends it.  Anything else goes on the session's GET stream. */
static void http_session_write(void *ctx, json_object *related, int final,
                               const char *const *parts, const size_t *lens,
                               int n) {
  http_session *hs = ctx;
  server *srv = hs->srv;
  http_post *p = NULL;

  if (related != NULL) {
    for (p = hs->posts; p; p = p->next)
      if (!p->answered && p->id != NULL && json_object_equal(p->id, related))
        break;
  } else if (final && srv->http_current != NULL &&
             srv->http_current->hs == hs && !srv->http_current->answered) {
    p = srv->http_current;
  }
  if (p != NULL) {
    if (final) {
      post_answer(p, parts, lens, n);
      return;
    }
    if (!http_exchange_is_stream(p->x))
      http_exchange_stream_open(p->x);
    http_exchange_stream_send(p->x, parts, lens, n);
    return;
  }
  if (final && related != NULL) {
    /* Its POST is gone (the client went away): a response never goes on
     * the GET stream. */
    log_debug("HTTP session %.8s: dropped a response whose POST closed",
              hs->id);
    return;
  }
  if (hs->stream != NULL) {
    http_exchange_stream_send(hs->stream->x, parts, lens, n);
    return;
  }
  {
    size_t total = 0;
    for (int i = 0; i < n; i++)
      total += lens[i];
    if (hs->backlog.len + total + 24 > HTTP_BACKLOG_MAX) {
      log_debug("HTTP session %.8s: no GET stream; dropped a message", hs->id);
      return;
    }
    for (int i = 0; i < n; i++)
      strbuf_append(&hs->backlog, parts[i], lens[i]);
    strbuf_append(&hs->backlog, "\n", 1);
  }
}

static http_session *http_session_find(server *srv, const char *id) {
  for (http_session *hs = srv->http_sessions; hs; hs = hs->next)
    if (strcmp(hs->id, id) == 0)
      return hs;
  return NULL;
}

static http_session *http_session_new(server *srv) {
  unsigned char raw[16];
  http_session *hs;

  if (uv_random(NULL, NULL, raw, sizeof(raw), 0, NULL) != 0)
    return NULL;
  if ((hs = calloc(1, sizeof(*hs))) == NULL)
    return NULL;
  for (size_t i = 0; i < sizeof(raw); i++)
    snprintf(hs->id + 2 * i, 3, "%02x", raw[i]);
  hs->srv = srv;
  hs->session = server_open_session(srv, http_session_write, hs);
  if (hs->session == NULL) {
    free(hs);
    return NULL;
  }
  hs->last_used = uv_now(srv->loop);
  hs->next = srv->http_sessions;
  srv->http_sessions = hs;
  return hs;
}

/* Ends a session: its streams end, its unanswered POSTs get 404. */
static void http_session_end(server *srv, http_session *hs) {
  http_session **pp = &srv->http_sessions;
  while (*pp != hs)
    pp = &(*pp)->next;
  *pp = hs->next;
  while (hs->posts != NULL) {
    http_post *p = hs->posts;
    post_unlink(p);
    if (http_exchange_is_stream(p->x))
      http_exchange_stream_end(p->x);
    else if (!p->answered)
      http_error(p->x, 404, JSONRPC_CONNECTION_CLOSED, "the session ended");
  }
  if (hs->stream != NULL) {
    http_post *g = hs->stream;
    post_unlink(g);
    http_exchange_stream_end(g->x);
  }
  server_close_session(srv, hs->session);
  strbuf_free(&hs->backlog);
  free(hs);
}

static http_post *post_new(http_session *hs, http_exchange *x) {
  http_post *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return NULL;
  p->x = x;
  p->hs = hs;
  http_exchange_set_data(x, p);
  return p;
}

/* What a POST body holds, as far as routing cares. */
typedef struct body_info {
  json_object *obj; /* the parsed body, owned */
  json_object *id;  /* the first request's id, borrowed, or NULL */
  int initialize;   /* it is an initialize request */
} body_info;

static void scan_message(json_object *m, body_info *bi) {
  json_object *method, *id;
  if (!json_object_is_type(m, json_type_object) ||
      !json_object_object_get_ex(m, "method", &method) ||
      !json_object_object_get_ex(m, "id", &id))
    return;
  if (bi->id == NULL && jsonrpc_valid_id(id))
    bi->id = id;
  if (json_object_is_type(method, json_type_string) &&
      strcmp(json_object_get_string(method), "initialize") == 0)
    bi->initialize = 1;
}

static void http_post_request(server *srv, http_exchange *x, const char *body,
                              size_t len) {
  const char *sid = http_exchange_header(x, "Mcp-Session-Id");
  const char *version = http_exchange_header(x, "MCP-Protocol-Version");
  json_tokener *tok;
  body_info bi = {0};
  http_session *hs;
  http_post *p;

  if (version != NULL && strcmp(session_negotiate(version), version) != 0) {
    http_error(x, 400, JSONRPC_INVALID_REQUEST,
               "Bad Request: unsupported MCP-Protocol-Version");
    return;
  }
  tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH);
  bi.obj = tok ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
  if (bi.obj == NULL || json_tokener_get_error(tok) != json_tokener_success) {
    json_tokener_free(tok);
    json_object_put(bi.obj);
    http_error(x, 400, JSONRPC_PARSE_ERROR, "Parse error: invalid JSON");
    return;
  }
  json_tokener_free(tok);
  if (json_object_is_type(bi.obj, json_type_array)) {
    for (size_t i = 0; i < json_object_array_length(bi.obj); i++)
      scan_message(json_object_array_get_idx(bi.obj, i), &bi);
    bi.initialize = 0; /* refused by the session inside a batch */
  } else {
    scan_message(bi.obj, &bi);
  }

  if (sid == NULL) {
    if (!bi.initialize) {
      http_error(x, 400, JSONRPC_INVALID_REQUEST,
                 "Bad Request: Mcp-Session-Id header is required");
      goto out;
    }
    if ((hs = http_session_new(srv)) == NULL) {
      http_error(x, 500, JSONRPC_INTERNAL_ERROR, "cannot open a session");
      goto out;
    }
    http_exchange_add_header(x, "Mcp-Session-Id", hs->id);
  } else if ((hs = http_session_find(srv, sid)) == NULL) {
    http_error(x, 404, JSONRPC_INVALID_REQUEST, "Session not found");
    goto out;
  }
  hs->last_used = uv_now(srv->loop);
  if ((p = post_new(hs, x)) == NULL) {
    http_error(x, 500, JSONRPC_INTERNAL_ERROR, "out of memory");
    goto out;
  }
  if (bi.id != NULL) {
    p->id = json_object_get(bi.id);
    p->next = hs->posts;
    if (hs->posts)
      hs->posts->prev = p;
    hs->posts = p;
  }
  srv->http_current = p;
  session_handle_line(hs->session, body, len);
  srv->http_current = NULL;
  if (bi.id == NULL) {
    /* Notifications and responses only: accepted, unless the session
     * answered with an error (bad JSON-RPC). */
    p->hs = NULL;
    if (!p->answered)
      http_exchange_respond(x, 202, NULL, "", 0);
  }
out:
  json_object_put(bi.obj);
}

static void http_get_request(server *srv, http_exchange *x) {
  const char *sid = http_exchange_header(x, "Mcp-Session-Id");
  const char *accept = http_exchange_header(x, "Accept");
  http_session *hs;
  http_post *g;

  if (accept == NULL || strstr(accept, "text/event-stream") == NULL) {
    http_error(x, 406, JSONRPC_INVALID_REQUEST,
               "Not Acceptable: GET needs Accept: text/event-stream");
    return;
  }
  if (sid == NULL) {
    http_error(x, 400, JSONRPC_INVALID_REQUEST,
               "Bad Request: Mcp-Session-Id header is required");
    return;
  }
  if ((hs = http_session_find(srv, sid)) == NULL) {
    http_error(x, 404, JSONRPC_INVALID_REQUEST, "Session not found");
    return;
  }
  if (hs->stream != NULL) {
    /* One standalone stream per session: each message on one stream. */
    http_error(x, 409, JSONRPC_INVALID_REQUEST,
               "Conflict: this session already has a GET stream");
    return;
  }
  if ((g = post_new(hs, x)) == NULL) {
    http_error(x, 500, JSONRPC_INTERNAL_ERROR, "out of memory");
    return;
  }
  g->is_get = 1;
  hs->stream = g;
  hs->last_used = uv_now(srv->loop);
  http_exchange_stream_open(x);
  /* What was said before the stream opened, oldest first. */
  if (hs->backlog.len > 0) {
    size_t off = 0;
    while (off < hs->backlog.len) {
      const char *line = hs->backlog.data + off;
      size_t n = strcspn(line, "\n");
      http_exchange_stream_send(x, &line, &n, 1);
      off += n + 1;
    }
    hs->backlog.len = 0;
  }
}

static void http_delete_request(server *srv, http_exchange *x) {
  const char *sid = http_exchange_header(x, "Mcp-Session-Id");
  http_session *hs;
  if (sid == NULL) {
    http_error(x, 400, JSONRPC_INVALID_REQUEST,
               "Bad Request: Mcp-Session-Id header is required");
    return;
  }
  if ((hs = http_session_find(srv, sid)) == NULL) {
    http_error(x, 404, JSONRPC_INVALID_REQUEST, "Session not found");
    return;
  }
  http_session_end(srv, hs);
  http_exchange_respond(x, 200, NULL, "", 0);
}

/* http_transport_cb.request */
static void http_request_cb(void *arg, http_exchange *x, http_method method,
                            const char *body, size_t len) {
  server *srv = arg;
  const char *version = http_exchange_header(x, "MCP-Protocol-Version");

  if (srv->shutting_down) {
    http_error(x, 503, JSONRPC_CONNECTION_CLOSED, "shutting down");
    return;
  }
  if (method != HTTP_METHOD_POST && version != NULL &&
      strcmp(session_negotiate(version), version) != 0) {
    http_error(x, 400, JSONRPC_INVALID_REQUEST,
               "Bad Request: unsupported MCP-Protocol-Version");
    return;
  }
  switch (method) {
  case HTTP_METHOD_POST:
    http_post_request(srv, x, body, len);
    break;
  case HTTP_METHOD_GET:
    http_get_request(srv, x);
    break;
  case HTTP_METHOD_DELETE:
    http_delete_request(srv, x);
    break;
  }
}

/* http_transport_cb.closed */
static void http_closed_cb(void *arg, http_exchange *x) {
  http_post *p = http_exchange_data(x);
  (void)arg;
  if (p == NULL)
    return;
  post_unlink(p);
  json_object_put(p->id);
  free(p);
}

static void http_sweep_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  uint64_t now = uv_now(srv->loop);
  http_session *hs = srv->http_sessions, *next;

  for (; hs; hs = next) {
    next = hs->next;
    if (hs->posts != NULL || hs->session->requests_in_flight > 0)
      continue;
    if (hs->stream != NULL)
      continue; /* a client is listening */
    if (now - hs->last_used >= HTTP_SESSION_IDLE_MS) {
      log_debug("HTTP session %.8s expired", hs->id);
      http_session_end(srv, hs);
    }
  }
}

int server_serve_http(server *srv) {
  http_transport_cb cb = {http_request_cb, http_closed_cb, srv};
  int fd;

  /* No stdio protocol here, but plugins still must not print into fd 1
   * unnoticed: it goes to stderr like the rest of the log. */
  if ((fd = stdio_take_stdout()) >= 0)
    close(fd);
  srv->http = http_transport_new(srv->loop, srv->opts->listen,
                                 srv->opts->max_message, &cb);
  if (srv->http == NULL)
    return -1;
  uv_timer_init(srv->loop, &srv->http_sweep_timer);
  srv->http_sweep_timer.data = srv;
  uv_timer_start(&srv->http_sweep_timer, http_sweep_cb, HTTP_SWEEP_MS,
                 HTTP_SWEEP_MS);
  uv_unref((uv_handle_t *)&srv->http_sweep_timer);
  return 0;
}

/* Ends every HTTP session and stops listening. */
static void http_stop(server *srv) {
  while (srv->http_sessions != NULL)
    http_session_end(srv, srv->http_sessions);
  if (srv->http != NULL) {
    http_transport_close(srv->http);
    srv->http = NULL;
    uv_timer_stop(&srv->http_sweep_timer);
  }
}

/* --- signals and the parent --------------------------------------------- */

static void finish_shutdown(server *srv);

static void signal_cb(uv_signal_t *handle, int signum) {
  server *srv = handle->data;
  if (signum == SIGHUP) {
    if (srv->shutting_down)
      return;
    log_info("SIGHUP: rescanning plugin directories");
    loader_scan(&srv->loader);
    return;
  }
  if (srv->shutting_down && srv->shutdown_stage < 3) {
    log_warn("%s during shutdown: exiting without waiting any longer",
             signum == SIGTERM ? "SIGTERM" : "SIGINT");
    finish_shutdown(srv);
    return;
  }
  server_shutdown(srv, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

static void parent_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  if (getppid() == srv->parent_pid)
    return;
  if (srv->shutting_down && srv->shutdown_stage < 3) {
    /* Nobody is left to read what waits to be flushed. */
    uv_timer_stop(timer);
    finish_shutdown(srv);
    return;
  }
  server_shutdown(srv, "the process that started mcpd exited");
}

int server_start(server *srv, int serve) {
  options *o = srv->opts;
  if (serve) {
    uv_signal_start(&srv->sig_term, signal_cb, SIGTERM);
    uv_signal_start(&srv->sig_int, signal_cb, SIGINT);
    uv_signal_start(&srv->sig_hup, signal_cb, SIGHUP);
    /* Orphaned servers pile up when a client dies without closing our
     * stdin; notice the parent going away. */
    srv->parent_pid = (int)getppid();
    if (srv->parent_pid > 1) {
#ifdef HAVE_PRCTL
      prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
      uv_timer_start(&srv->parent_timer, parent_cb, 500, 500);
      uv_unref((uv_handle_t *)&srv->parent_timer);
    }
  }
  loader_scan(&srv->loader);
  /* Once, after the first scan: a config entry that names no loaded
   * plugin is most likely a typo. */
  loader_warn_unused_configs(&srv->loader);
  if (serve && o->watch)
    srv->watch = watch_start(srv->loop, o->plugin_dirs, o->n_plugin_dirs,
                             o->plugin_dirs_given, dirs_changed_cb, srv);
  return 0;
}

/* --- shutdown ----------------------------------------------------------- */

static void close_walk_cb(uv_handle_t *handle, void *arg) {
  (void)arg;
  if (!uv_is_closing(handle))
    uv_close(handle, NULL);
}

/* Stage 3: unload plugins and close every handle; uv_run then returns. */
static void finish_shutdown(server *srv) {
  srv->shutdown_stage = 3;
  uv_timer_stop(&srv->shutdown_timer);
  if (srv->exec.in_flight > 0) {
    /* Their code is still running on threads: it must stay mapped. */
    log_warn("exiting with %u calls still running", srv->exec.in_flight);
    srv->exit_hard = 1;
    uv_stop(srv->loop);
    return;
  }
  if (srv->watch) {
    watch_stop(srv->watch);
    srv->watch = NULL;
  }
  if (srv->stdio) {
    stdio_transport_close(srv->stdio, NULL, NULL, 1);
    srv->stdio = NULL;
  }
  http_stop(srv);
  while (srv->n_sessions > 0)
    server_close_session(srv, srv->sessions[0]);
  /* fini() joins the plugins' threads; what they queued runs after. */
  loader_free(&srv->loader);
  call_exec_close(&srv->exec);
  uv_walk(srv->loop, close_walk_cb, NULL);
}

static void flushed_cb(void *arg) {
  server *srv = arg;
  srv->stdio = NULL;
  if (srv->shutdown_stage == 2)
    finish_shutdown(srv);
}

/* Stage 2: flush stdout (without a time limit), then stage 3.  The stdio
 * session goes first: nothing may write into a transport that is closing. */
static void flush_output(server *srv) {
  srv->shutdown_stage = 2;
  uv_timer_stop(&srv->shutdown_timer);
  if (srv->stdio_session != NULL)
    server_close_session(srv, srv->stdio_session);
  http_stop(srv);
  if (srv->stdio)
    stdio_transport_close(srv->stdio, flushed_cb, srv, 0);
  else
    finish_shutdown(srv);
}

static void cancel_timeout_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  log_warn("%u calls did not finish in time", srv->exec.in_flight);
  flush_output(srv);
}

static void grace_timeout_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  for (size_t i = 0; i < srv->n_sessions; i++)
    for (request *r = srv->sessions[i]->in_flight; r; r = r->next)
      if (r->call)
        call_cancel(r->call);
  uv_timer_start(&srv->shutdown_timer, cancel_timeout_cb, SHUTDOWN_CANCEL_MS,
                 0);
}

static void drained_stage_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  if (srv->shutdown_stage == 1 && srv->exec.in_flight == 0)
    flush_output(srv);
}

/* call_exec.drained_cb: the last call in flight ended.  The next stage
 * runs on the next loop turn, never from inside the completion (or the
 * session handler) that got us here: it frees sessions. */
static void calls_drained_cb(void *arg) {
  server *srv = arg;
  if (srv->shutdown_stage == 1)
    uv_timer_start(&srv->shutdown_timer, drained_stage_cb, 0, 0);
}

void server_shutdown(server *srv, const char *why) {
  if (srv->shutting_down)
    return;
  srv->shutting_down = 1;
  srv->shutdown_stage = 1;
  log_debug("shutting down: %s", why);
  if (srv->stdio)
    stdio_transport_stop_reading(srv->stdio);
  if (srv->exec.in_flight == 0)
    calls_drained_cb(srv);
  else
    uv_timer_start(&srv->shutdown_timer, grace_timeout_cb, SHUTDOWN_GRACE_MS,
                   0);
}

void server_free(server *srv) {
  methods_free(&srv->methods);
  registry_free(&srv->registry);
  free(srv->sessions);
  srv->sessions = NULL;
}
