/* SPDX-License-Identifier: MIT */
/* transport_http.c -- an HTTP endpoint on the libuv loop.
 *
 * Why libmicrohttpd and not libh2o: both are in Debian, but h2o's libuv
 * flavour wants to own the sockets and brings its own event abstractions,
 * configuration tree and HTTP/2 machinery -- a large API for one endpoint.
 * libmicrohttpd is a small C API made to be driven from someone else's
 * loop: with MHD_USE_EPOLL and no internal thread it exposes one epoll
 * descriptor, which we watch with a uv_poll, plus a timeout, which a
 * uv_timer follows, and MHD_run() does the rest on the loop thread.  MHD
 * then never starts a thread of its own (no MHD_USE_*_THREAD flag), so
 * every callback below runs on the loop, like the rest of mcpd's I/O.
 *
 * epoll is Linux's.  The portable build (MCPD_PORTABLE) drives MHD in its
 * external select mode instead, still without a thread: after every
 * MHD_run() it asks MHD_get_fdset2() which descriptors MHD waits on, and
 * for what, and keeps one uv_poll on each (the "watches" below).
 *
 * An answer that is not ready when the body has been read (a tool still
 * running) suspends the connection; answering resumes it.  An SSE stream
 * suspends itself whenever it has nothing to send. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <microhttpd.h>

#include "log.h"
#include "metrics.h"
#include "platform.h"
#include "strbuf.h"
#include "transport_http.h"

#define MAX_OUT_HEADERS 6
/* How long closing waits for answers already made to be written. */
#define DRAIN_MS 2000
/* Connections idle this long (no request in progress) are closed. */
#define CONNECTION_TIMEOUT_S 300

#ifdef MCPD_PORTABLE
/* No epoll: MHD in its external select mode. */
#define DAEMON_FLAGS MHD_ALLOW_SUSPEND_RESUME
#else
#define DAEMON_FLAGS (MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME)
#endif

enum exchange_state {
  X_RECEIVING, /* reading the body */
  X_REFUSED,   /* answered by this module (413); body being discarded */
  X_WAITING,   /* handed up, not answered yet */
  X_ANSWERED,  /* a response is queued */
  X_STREAM     /* answered with an open SSE stream */
};

struct http_exchange {
  http_transport *t;
  struct MHD_Connection *conn;
  http_method method;
  char *path;
  enum exchange_state state;
  int suspended;
  int in_handler; /* inside the access handler: queue after it returns */
  int handed_up;  /* `request` was reported: `closed` will be too */
  strbuf body;
  struct MHD_Response *response; /* made, not yet queued */
  unsigned status;
  char *headers[MAX_OUT_HEADERS][2];
  int n_headers;
  strbuf out; /* stream bytes not yet taken by MHD */
  size_t out_off;
  int stream_ended;
  int peer_gone;  /* the client hung up while the stream slept */
  uv_poll_t *hup; /* watches a sleeping stream's socket for that */
  void *data;
  http_exchange *prev, *next;
};

#ifdef MCPD_PORTABLE
/* A uv_poll on one descriptor MHD waits on, and what it polls for. */
typedef struct {
  uv_poll_t poll; /* first: the handle is the watch */
  int events;     /* UV_READABLE | UV_WRITABLE; 0 when libuv stopped it */
} fd_watch;
#endif

struct http_transport {
  uv_loop_t *loop;
  http_transport_cb cb;
  size_t max_body;
  struct MHD_Daemon *daemon;
#ifdef MCPD_PORTABLE
  /* By descriptor: select mode has MHD refuse any >= FD_SETSIZE. */
  fd_watch *watch[FD_SETSIZE];
  int watch_top;                   /* the highest descriptor watched, or -1 */
  int listen_fd;                   /* where MHD accepts */
  unsigned connections;            /* MHD's, opened and not closed */
  unsigned long connection_events; /* openings and closings counted */
#else
  uv_poll_t poll; /* on MHD's epoll descriptor */
#endif
  uv_timer_t timer;
  int open_handles; /* the handles closing waits for */
  int closing;
  int kicked;
  char address[160];
  char *unix_path; /* removed at close */
  char **hosts;    /* Host/Origin names accepted beside loopback */
  size_t n_hosts;
  http_exchange *exchanges;
  uv_timer_t drain_timer; /* bounds the wait for answers at close */
  void (*closed_cb)(void *arg);
  void *closed_arg;
};

static void kick(http_transport *t);
static void watch_forget(http_transport *t, int fd);

static void free_handle_cb(uv_handle_t *handle) {
  free(handle);
}
static void kick_close(http_transport *t);
static void transport_free(http_transport *t);

/* --- addresses ---------------------------------------------------------- */

/* Whether the authority `a` (n bytes: a Host header, or the part of an
 * Origin after "://") is `name` with any port or none. */
static int authority_is(const char *a, size_t n, const char *name) {
  size_t k = strlen(name);
  if (n < k || strncasecmp(a, name, k) != 0 || (n > k && a[k] != ':'))
    return 0;
  for (size_t j = k + 1; j < n; j++)
    if (a[j] < '0' || a[j] > '9')
      return 0;
  return 1;
}

/* Whether an authority names this machine's loopback (localhost,
 * 127.0.0.1 or [::1]) or one of the names the operator allowed. */
static int authority_allowed(const http_transport *t, const char *a, size_t n) {
  static const char *const loopback[] = {"localhost", "127.0.0.1", "[::1]"};
  for (size_t i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
    if (authority_is(a, n, loopback[i]))
      return 1;
  for (size_t i = 0; i < t->n_hosts; i++)
    if (authority_is(a, n, t->hosts[i]))
      return 1;
  return 0;
}

static int origin_allowed(const http_transport *t, const char *origin) {
  const char *p;
  if (origin == NULL)
    return 1; /* not a browser: nothing to validate */
  if ((p = strstr(origin, "://")) == NULL)
    return 0;
  if (!((p - origin == 4 && strncasecmp(origin, "http", 4) == 0) ||
        (p - origin == 5 && strncasecmp(origin, "https", 5) == 0)))
    return 0;
  p += 3;
  return authority_allowed(t, p, strcspn(p, "/"));
}

/* Whether the unix socket at `un` is a leftover nobody listens on (a
 * server that was killed): a socket file that refuses connections.
 * Anything else there -- a live server, a regular file -- is kept. */
static int stale_socket(const struct sockaddr_un *un, socklen_t len) {
  struct stat st;
  int fd, refused;
  if (lstat(un->sun_path, &st) != 0 || !S_ISSOCK(st.st_mode))
    return 0;
  if ((fd = platform_socket(AF_UNIX, SOCK_STREAM, 0)) < 0)
    return 0;
  refused = connect(fd, (const struct sockaddr *)un, len) != 0 &&
            errno == ECONNREFUSED;
  close(fd);
  return refused;
}

static int open_listener(http_transport *t, const char *listen_at) {
  struct sockaddr_storage ss;
  socklen_t len;
  int fd, one = 1;

  memset(&ss, 0, sizeof(ss));
  if (strncmp(listen_at, "unix:", 5) == 0) {
    struct sockaddr_un *un = (struct sockaddr_un *)&ss;
    const char *path = listen_at + 5;
    if (*path == '\0' || strlen(path) >= sizeof(un->sun_path)) {
      log_error("--listen %s: the socket path is empty or too long", listen_at);
      return -1;
    }
    un->sun_family = AF_UNIX;
    memcpy(un->sun_path, path, strlen(path) + 1);
    len = sizeof(*un);
    fd = platform_socket(AF_UNIX, SOCK_STREAM, 1);
    if (fd < 0)
      goto unix_failed;
    if (bind(fd, (struct sockaddr *)un, len) != 0) {
      if (errno != EADDRINUSE || !stale_socket(un, len))
        goto unix_failed;
      log_info("--listen %s: removed the socket a dead server left", listen_at);
      unlink(path);
      if (bind(fd, (struct sockaddr *)un, len) != 0)
        goto unix_failed;
    }
    if (listen(fd, 128) != 0)
      goto unix_failed;
    t->unix_path = strdup(path);
    snprintf(t->address, sizeof(t->address), "unix:%s", path);
    return fd;
  unix_failed:
    log_error("--listen %s: %s", listen_at, strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  } else {
    char host[64];
    const char *colon = strrchr(listen_at, ':');
    char *end;
    long port;
    size_t hl;

    if (colon == NULL || colon == listen_at)
      goto bad;
    port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || end == colon + 1 || port < 0 || port > 65535)
      goto bad;
    hl = (size_t)(colon - listen_at);
    if (listen_at[0] == '[') {
      if (hl < 3 || listen_at[hl - 1] != ']' || hl - 2 >= sizeof(host))
        goto bad;
      memcpy(host, listen_at + 1, hl - 2);
      host[hl - 2] = '\0';
      if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)&ss) != 0)
        goto bad;
      len = sizeof(struct sockaddr_in6);
    } else {
      if (hl >= sizeof(host))
        goto bad;
      memcpy(host, listen_at, hl);
      host[hl] = '\0';
      if (strcmp(host, "localhost") == 0)
        strcpy(host, "127.0.0.1");
      if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)&ss) != 0)
        goto bad;
      len = sizeof(struct sockaddr_in);
    }
    fd = platform_socket(ss.ss_family, SOCK_STREAM, 1);
    if (fd >= 0)
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) != 0 ||
        listen(fd, 128) != 0) {
      log_error("--listen %s: %s", listen_at, strerror(errno));
      if (fd >= 0)
        close(fd);
      return -1;
    }
    len = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &len);
    if (ss.ss_family == AF_INET6) {
      char a[INET6_ADDRSTRLEN];
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
      inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
      snprintf(t->address, sizeof(t->address), "http://[%s]:%u", a,
               ntohs(s6->sin6_port));
    } else {
      char a[INET_ADDRSTRLEN];
      struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
      inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
      snprintf(t->address, sizeof(t->address), "http://%s:%u", a,
               ntohs(s4->sin_port));
    }
    return fd;
  }
bad:
  log_error("--listen %s: expected HOST:PORT, [IPV6]:PORT or unix:PATH",
            listen_at);
  return -1;
}

/* --- exchanges ---------------------------------------------------------- */

static http_exchange *exchange_new(http_transport *t,
                                   struct MHD_Connection *conn,
                                   http_method method, const char *path) {
  http_exchange *x = calloc(1, sizeof(*x));
  if (x == NULL)
    return NULL;
  if ((x->path = strdup(path)) == NULL) {
    free(x);
    return NULL;
  }
  x->t = t;
  x->conn = conn;
  x->method = method;
  x->next = t->exchanges;
  if (t->exchanges)
    t->exchanges->prev = x;
  t->exchanges = x;
  return x;
}

static void exchange_free(http_exchange *x) {
  http_transport *t = x->t;
  if (x->prev)
    x->prev->next = x->next;
  else
    t->exchanges = x->next;
  if (x->next)
    x->next->prev = x->prev;
  if (x->response)
    MHD_destroy_response(x->response);
  for (int i = 0; i < x->n_headers; i++) {
    free(x->headers[i][0]);
    free(x->headers[i][1]);
  }
  strbuf_free(&x->body);
  strbuf_free(&x->out);
  free(x->path);
  if (x->hup != NULL)
    uv_close((uv_handle_t *)x->hup, free_handle_cb);
  free(x);
  if (t->exchanges == NULL && t->closing && t->daemon != NULL)
    kick_close(t);
}

static void add_headers(http_exchange *x, struct MHD_Response *r) {
  for (int i = 0; i < x->n_headers; i++)
    MHD_add_response_header(r, x->headers[i][0], x->headers[i][1]);
}

/* Hands a suspended connection back to MHD, which runs it on the next
 * loop turn.  The hang-up watch goes first: MHD watches the socket again,
 * in select mode through a uv_poll of ours, and libuv wants one poll per
 * descriptor -- even stopping or closing a second one unregisters the
 * descriptor for both. */
static void resume(http_exchange *x) {
  if (x->hup != NULL) {
    uv_close((uv_handle_t *)x->hup, free_handle_cb);
    x->hup = NULL;
  }
  x->suspended = 0;
  MHD_resume_connection(x->conn);
  kick(x->t);
}

/* Queues the prepared response, now if MHD allows it. */
static void deliver(http_exchange *x) {
  if (x->in_handler)
    return; /* the handler queues it when the callback returns */
  if (x->response != NULL) {
    MHD_queue_response(x->conn, x->status, x->response);
    MHD_destroy_response(x->response);
    x->response = NULL;
  }
  if (x->suspended)
    resume(x);
}

void http_exchange_add_header(http_exchange *x, const char *name,
                              const char *value) {
  if (x->n_headers == MAX_OUT_HEADERS)
    return;
  x->headers[x->n_headers][0] = strdup(name);
  x->headers[x->n_headers][1] = strdup(value);
  if (x->headers[x->n_headers][0] == NULL ||
      x->headers[x->n_headers][1] == NULL) {
    free(x->headers[x->n_headers][0]);
    free(x->headers[x->n_headers][1]);
    return;
  }
  x->n_headers++;
}

void http_exchange_respond(http_exchange *x, unsigned status,
                           const char *content_type, const char *body,
                           size_t len) {
  struct MHD_Response *r;
  if (x->state != X_WAITING && x->state != X_RECEIVING)
    return;
  metrics_http_status(status);
  r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
  if (r == NULL) {
    log_error("out of memory answering an HTTP request");
    return;
  }
  if (content_type != NULL)
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  add_headers(x, r);
  x->response = r;
  x->status = status;
  x->state = x->state == X_RECEIVING ? X_REFUSED : X_ANSWERED;
  deliver(x);
}

/* The socket of a sleeping stream hung up: wake the stream so that MHD
 * ends it now, not at the next write into a dead socket. */
static void hup_cb(uv_poll_t *poll, int status, int events) {
  http_exchange *x = poll->data;
  (void)status;
  (void)events;
  uv_poll_stop(poll);
  x->peer_gone = 1;
  if (x->suspended)
    resume(x);
}

/* MHD does not watch a suspended connection; we do, for a hang-up only. */
static void hup_watch(http_exchange *x) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (ci == NULL)
    return;
  watch_forget(x->t, ci->connect_fd); /* the socket left MHD's set */
  if (x->hup == NULL) {
    if ((x->hup = malloc(sizeof(*x->hup))) == NULL)
      return;
    if (uv_poll_init_socket(x->t->loop, x->hup, ci->connect_fd) != 0) {
      free(x->hup);
      x->hup = NULL;
      return;
    }
    x->hup->data = x;
  }
  uv_poll_start(x->hup, UV_DISCONNECT, hup_cb);
}

static ssize_t stream_read_cb(void *cls, uint64_t pos, char *buf, size_t max) {
  http_exchange *x = cls;
  size_t n = x->out.len - x->out_off;
  (void)pos;
  if (x->peer_gone)
    return MHD_CONTENT_READER_END_WITH_ERROR;
  if (n == 0) {
    if (x->stream_ended || x->t->closing)
      return MHD_CONTENT_READER_END_OF_STREAM;
    /* Nothing to send: sleep until http_exchange_stream_write(), or until
     * the client hangs up. */
    x->suspended = 1;
    MHD_suspend_connection(x->conn);
    hup_watch(x);
    return 0;
  }
  if (n > max)
    n = max;
  memcpy(buf, x->out.data + x->out_off, n);
  x->out_off += n;
  if (x->out_off == x->out.len)
    x->out.len = x->out_off = 0;
  return (ssize_t)n;
}

void http_exchange_stream_open(http_exchange *x) {
  struct MHD_Response *r;
  if (x->state != X_WAITING)
    return;
  metrics_http_status(200);
  r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
                                        stream_read_cb, x, NULL);
  if (r == NULL) {
    log_error("out of memory opening an SSE stream");
    return;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  /* nginx and friends must not hold events back. */
  MHD_add_response_header(r, "X-Accel-Buffering", "no");
  add_headers(x, r);
  x->response = r;
  x->status = MHD_HTTP_OK;
  x->state = X_STREAM;
  deliver(x);
}

int http_exchange_is_stream(const http_exchange *x) {
  return x->state == X_STREAM;
}

static void stream_wake(http_exchange *x) {
  /* A stream that is not queued yet, or reading, needs no wake-up. */
  if (x->suspended && x->response == NULL && !x->in_handler)
    resume(x);
}

void http_exchange_stream_write(http_exchange *x, const char *const *parts,
                                const size_t *lens, int n) {
  if (x->state != X_STREAM || x->stream_ended)
    return;
  for (int i = 0; i < n; i++)
    strbuf_append(&x->out, parts[i], lens[i]);
  if (x->out.failed) {
    log_error("out of memory queueing SSE bytes; the stream ends");
    x->out.failed = 0;
    x->out.len = x->out_off = 0;
    x->stream_ended = 1;
  }
  stream_wake(x);
}

void http_exchange_stream_end(http_exchange *x) {
  if (x->state != X_STREAM || x->stream_ended)
    return;
  x->stream_ended = 1;
  stream_wake(x);
}

const char *http_exchange_header(http_exchange *x, const char *name) {
  return MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, name);
}

const char *http_exchange_query(http_exchange *x, const char *name) {
  return MHD_lookup_connection_value(x->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *http_exchange_path(const http_exchange *x) {
  return x->path;
}

void http_exchange_set_data(http_exchange *x, void *data) {
  x->data = data;
}

void *http_exchange_data(http_exchange *x) {
  return x->data;
}

/* --- MHD callbacks ------------------------------------------------------ */

/* An answer of this module's own; the body is a JSON-RPC error without
 * an id, as the spec allows. */
static const char too_large[] =
    "Payload Too Large: the body exceeds --max-message-size";

static int error_body(char *buf, size_t size, const char *why) {
  return snprintf(buf, size,
                  "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
                  "-32000,\"message\":\"%s\"}}",
                  why);
}

static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status,
                              const char *why) {
  char body[256];
  int n = error_body(body, sizeof(body), why);
  struct MHD_Response *r =
      MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
  enum MHD_Result rc;
  if (r == NULL)
    return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  rc = MHD_queue_response(conn, status, r);
  MHD_destroy_response(r);
  return rc;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn,
                                 const char *url, const char *method,
                                 const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls) {
  http_transport *t = cls;
  http_exchange *x = *con_cls;
  (void)version;

  if (x == NULL) {
    http_method m;
    const char *host, *length;
    if (t->closing)
      return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "shutting down");
    host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
    if (host == NULL || !authority_allowed(t, host, strlen(host)) ||
        !origin_allowed(
            t, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin")))
      return refuse(conn, MHD_HTTP_FORBIDDEN,
                    "Forbidden: Host and Origin must name this server");
    if (strcmp(method, "POST") == 0)
      m = HTTP_METHOD_POST;
    else if (strcmp(method, "GET") == 0)
      m = HTTP_METHOD_GET;
    else if (strcmp(method, "DELETE") == 0)
      m = HTTP_METHOD_DELETE;
    else
      m = HTTP_METHOD_OTHER;
    length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                         MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length != NULL && strtoull(length, NULL, 10) > t->max_body)
      return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, too_large);
    if ((x = exchange_new(t, conn, m, url)) == NULL)
      return MHD_NO;
    *con_cls = x;
    return MHD_YES;
  }

  if (x->peer_gone && x->state == X_WAITING)
    return MHD_NO; /* hung up before its answer: the connection ends */
  if (*upload_data_size > 0) {
    /* A chunked body has no Content-Length to refuse up front. */
    if (x->state == X_RECEIVING &&
        x->body.len + *upload_data_size > t->max_body) {
      strbuf_free(&x->body);
      x->in_handler = 1;
      char body[256];
      int n = error_body(body, sizeof(body), too_large);
      http_exchange_respond(x, MHD_HTTP_CONTENT_TOO_LARGE, "application/json",
                            body, (size_t)n);
      x->in_handler = 0;
    } else if (x->state == X_RECEIVING) {
      strbuf_append(&x->body, upload_data, *upload_data_size);
    }
    *upload_data_size = 0;
    return MHD_YES;
  }

  if (x->state == X_RECEIVING) {
    x->state = X_WAITING;
    x->handed_up = 1;
    x->in_handler = 1;
    strbuf_append(&x->body, "", 1);
    if (x->body.failed) {
      x->in_handler = 0;
      return refuse(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    t->cb.request(t->cb.arg, x, x->method, x->body.data, x->body.len - 1);
    x->in_handler = 0;
    strbuf_free(&x->body);
    if (x->state == X_WAITING) {
      /* The answer comes later; a client that hangs up meanwhile is
       * reported (`closed`) at once, which cancels its request. */
      x->suspended = 1;
      MHD_suspend_connection(conn);
      hup_watch(x);
      return MHD_YES;
    }
  }
  if (x->response != NULL) {
    enum MHD_Result rc = MHD_queue_response(conn, x->status, x->response);
    MHD_destroy_response(x->response);
    x->response = NULL;
    return rc;
  }
  return MHD_YES;
}

static void completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  http_transport *t = cls;
  http_exchange *x = *con_cls;
  (void)conn;
  (void)toe;
  if (x == NULL)
    return;
  *con_cls = NULL;
  if (x->handed_up && t->cb.closed != NULL)
    t->cb.closed(t->cb.arg, x);
  exchange_free(x);
}

/* --- driving MHD from the loop ------------------------------------------ */

static void timer_cb(uv_timer_t *timer);
static void handle_closed_cb(uv_handle_t *handle);
static void watch_sync(http_transport *t);

static void run(http_transport *t) {
  MHD_UNSIGNED_LONG_LONG ms;
  if (t->daemon == NULL)
    return;
  t->kicked = 0;
  MHD_run(t->daemon);
  if (t->daemon == NULL)
    return; /* closed from a callback */
  watch_sync(t);
  if (t->kicked)
    uv_timer_start(&t->timer, timer_cb, 0, 0);
  else if (MHD_get_timeout(t->daemon, &ms) == MHD_YES)
    uv_timer_start(&t->timer, timer_cb, ms, 0);
  else
    uv_timer_stop(&t->timer);
}

static void timer_cb(uv_timer_t *timer) {
  run(timer->data);
}

/* MHD_run() on the next loop turn: never from inside an MHD callback. */
static void kick(http_transport *t) {
  if (t->daemon != NULL) {
    t->kicked = 1;
    uv_timer_start(&t->timer, timer_cb, 0, 0);
  }
}

/* The descriptors MHD waits on are watched through four functions, one
 * implementation of them per mode: watch_start() once MHD runs,
 * watch_sync() after every MHD_run(), watch_forget() before a descriptor
 * is polled or closed elsewhere, watch_close() before MHD stops. */
#ifdef MCPD_PORTABLE

static void watch_closed_cb(uv_handle_t *handle) {
  handle_closed_cb(handle);
  free(handle); /* the fd_watch */
}

static int readable(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

static void watch_cb(uv_poll_t *poll, int status, int events) {
  http_transport *t = poll->data;
  unsigned long seen = t->connection_events;
  uv_os_fd_t fd = -1;

  (void)events;
  uv_fileno((uv_handle_t *)poll, &fd);
  /* On an error libuv has stopped the poll; the next sync starts it again
   * if MHD still waits on the socket, and MHD's select() sees the error. */
  if (status < 0)
    ((fd_watch *)poll)->events = 0;
  run(t);
  /* Out of descriptors, or at its connection limit, MHD stops accepting
   * until one of its connections closes, and the clients left waiting keep
   * the listening socket readable: polled, it would wake us in a loop.  So
   * after a run for it that opened and closed no connection, it waits for
   * the next run, which another socket or MHD's timer starts (a connection
   * closes in a run).  With no connection open MHD keeps trying, as we do. */
  if (fd == t->listen_fd && t->daemon != NULL && t->connection_events == seen &&
      t->connections > 0 && readable(fd))
    watch_forget(t, fd);
}

/* Counts MHD's connections for watch_cb(). */
static void connection_cb(void *cls, struct MHD_Connection *conn,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
  http_transport *t = cls;
  (void)conn;
  (void)socket_context;
  if (code == MHD_CONNECTION_NOTIFY_STARTED)
    t->connections++;
  else
    t->connections--;
  t->connection_events++;
}

/* Polls `fd` for `events`, or no longer (0).  A poll that cannot be made
 * is tried again at the next sync. */
static void watch_set(http_transport *t, int fd, int events) {
  fd_watch *w = t->watch[fd];
  int err;

  if (events == 0) {
    if (w != NULL) {
      t->watch[fd] = NULL;
      uv_close((uv_handle_t *)&w->poll, watch_closed_cb);
    }
    return;
  }
  if (w == NULL) {
    if ((w = malloc(sizeof(*w))) == NULL) {
      log_error("out of memory polling an HTTP socket");
      return;
    }
    if ((err = uv_poll_init_socket(t->loop, &w->poll, fd)) != 0) {
      log_error("HTTP: cannot poll descriptor %d: %s", fd, uv_strerror(err));
      free(w);
      return;
    }
    w->poll.data = t;
    w->events = 0;
    t->watch[fd] = w;
    t->open_handles++;
  }
  if (w->events != events) {
    uv_poll_start(&w->poll, events, watch_cb);
    w->events = events;
  }
}

/* Makes the polls match what MHD waits on now: MHD_run() accepts and
 * closes sockets, and a connection waits to read, to write, or (when
 * suspended) not at all.  The except set is left out: select() reports
 * only out-of-band data there, which HTTP does not use. */
static void watch_sync(http_transport *t) {
  fd_set rs, ws, es;
  MHD_socket max = MHD_INVALID_SOCKET;
  int top;

  FD_ZERO(&rs);
  FD_ZERO(&ws);
  FD_ZERO(&es);
  /* MHD_NO means that some descriptor did not fit; the others are set. */
  (void)MHD_get_fdset2(t->daemon, &rs, &ws, &es, &max, FD_SETSIZE);
  top = max > t->watch_top ? max : t->watch_top;
  t->watch_top = -1;
  for (int fd = 0; fd <= top; fd++) {
    watch_set(t, fd,
              (FD_ISSET(fd, &rs) ? UV_READABLE : 0) |
                  (FD_ISSET(fd, &ws) ? UV_WRITABLE : 0));
    if (t->watch[fd] != NULL)
      t->watch_top = fd;
  }
}

/* libuv allows one active poll per descriptor, and a closed descriptor's
 * number is soon another's. */
static void watch_forget(http_transport *t, int fd) {
  if (fd >= 0 && fd < FD_SETSIZE)
    watch_set(t, fd, 0);
}

static int watch_start(http_transport *t) {
  const union MHD_DaemonInfo *info =
      MHD_get_daemon_info(t->daemon, MHD_DAEMON_INFO_LISTEN_FD);
  t->listen_fd = info != NULL ? info->listen_fd : -1;
  t->watch_top = -1; /* the first run makes the polls */
  return 0;
}

static void watch_close(http_transport *t) {
  for (int fd = 0; fd <= t->watch_top; fd++)
    watch_set(t, fd, 0);
  t->watch_top = -1;
}

#else /* epoll */

static void poll_cb(uv_poll_t *poll, int status, int events) {
  (void)status;
  (void)events;
  run(poll->data);
}

/* One poll on MHD's epoll descriptor, which stands for all its sockets. */
static int watch_start(http_transport *t) {
  const union MHD_DaemonInfo *info =
      MHD_get_daemon_info(t->daemon, MHD_DAEMON_INFO_EPOLL_FD);
  if (info == NULL)
    return -1;
  uv_poll_init(t->loop, &t->poll, info->epoll_fd);
  t->poll.data = t;
  t->open_handles++;
  uv_poll_start(&t->poll, UV_READABLE, poll_cb);
  return 0;
}

/* MHD keeps its epoll set itself. */
static void watch_sync(http_transport *t) {
  (void)t;
}

static void watch_forget(http_transport *t, int fd) {
  (void)t;
  (void)fd;
}

static void watch_close(http_transport *t) {
  uv_close((uv_handle_t *)&t->poll, handle_closed_cb);
}

#endif

http_transport *http_transport_new(uv_loop_t *loop, const char *listen_at,
                                   size_t max_body, const char *const *hosts,
                                   size_t n_hosts,
                                   const http_transport_cb *cb) {
  http_transport *t = calloc(1, sizeof(*t));
  int fd;

  if (t == NULL || (n_hosts > 0 &&
                    (t->hosts = calloc(n_hosts, sizeof(*t->hosts))) == NULL)) {
    log_error("out of memory");
    free(t);
    return NULL;
  }
  for (; t->n_hosts < n_hosts; t->n_hosts++)
    if ((t->hosts[t->n_hosts] = strdup(hosts[t->n_hosts])) == NULL) {
      log_error("out of memory");
      transport_free(t);
      return NULL;
    }
  t->loop = loop;
  t->cb = *cb;
  t->max_body = max_body;
  if ((fd = open_listener(t, listen_at)) < 0) {
    transport_free(t);
    return NULL;
  }
  /* External polling (DAEMON_FLAGS), no threads of its own; suspend/resume
   * for answers that come later. */
  t->daemon = MHD_start_daemon(
      DAEMON_FLAGS, 0, NULL, NULL, access_cb, t, MHD_OPTION_LISTEN_SOCKET, fd,
      MHD_OPTION_NOTIFY_COMPLETED, completed_cb, t,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
#ifdef MCPD_PORTABLE
      MHD_OPTION_NOTIFY_CONNECTION, connection_cb, t,
#endif
      MHD_OPTION_END);
  if (t->daemon == NULL || watch_start(t) != 0) {
    log_error("cannot start the HTTP server on %s", listen_at);
    if (t->daemon)
      MHD_stop_daemon(t->daemon);
    else
      close(fd);
    if (t->unix_path)
      unlink(t->unix_path);
    transport_free(t);
    return NULL;
  }
  uv_timer_init(loop, &t->timer);
  t->timer.data = t;
  uv_timer_init(loop, &t->drain_timer);
  t->drain_timer.data = t;
  t->open_handles += 2;
  kick(t);
  return t;
}

const char *http_transport_address(const http_transport *t) {
  return t->address;
}

static void transport_free(http_transport *t) {
  for (size_t i = 0; i < t->n_hosts; i++)
    free(t->hosts[i]);
  free(t->hosts);
  free(t->unix_path);
  free(t);
}

static void handle_closed_cb(uv_handle_t *handle) {
  http_transport *t = handle->data;
  if (--t->open_handles == 0) {
    void (*done)(void *) = t->closed_cb;
    void *arg = t->closed_arg;
    transport_free(t);
    if (done != NULL)
      done(arg);
  }
}

/* Stops MHD and closes the handles; the last one frees the transport. */
static void finish_close(http_transport *t) {
  if (t->daemon == NULL)
    return;
  /* MHD_stop_daemon() must find no suspended connection. */
  for (http_exchange *x = t->exchanges; x; x = x->next)
    if (x->suspended) {
      x->suspended = 0;
      MHD_resume_connection(x->conn);
    }
  watch_close(t);             /* before MHD closes what they poll */
  MHD_stop_daemon(t->daemon); /* reports `closed` for each exchange left */
  t->daemon = NULL;
  if (t->unix_path)
    unlink(t->unix_path);
  uv_close((uv_handle_t *)&t->timer, handle_closed_cb);
  uv_close((uv_handle_t *)&t->drain_timer, handle_closed_cb);
}

static void drain_timeout_cb(uv_timer_t *timer) {
  http_transport *t = timer->data;
  if (t->exchanges != NULL)
    log_warn("HTTP: closing with answers still unsent");
  finish_close(t);
}

/* The last exchange is over while closing: stop on the next loop turn,
 * outside MHD's callback. */
static void kick_close(http_transport *t) {
  uv_timer_start(&t->drain_timer, drain_timeout_cb, 0, 0);
}

void http_transport_close(http_transport *t, void (*closed_cb)(void *arg),
                          void *arg, int now) {
  if (t == NULL)
    return;
  if (t->closing) {
    if (now)
      finish_close(t);
    return;
  }
  t->closing = 1;
  t->closed_cb = closed_cb;
  t->closed_arg = arg;
  /* Stop accepting; what was answered gets written, streams end (their
   * reader sees `closing`), unanswered requests get 503. */
  if (t->daemon != NULL) {
    MHD_socket fd = MHD_quiesce_daemon(t->daemon);
    if (fd != MHD_INVALID_SOCKET) {
      watch_forget(t, fd);
      close(fd);
    }
  }
  for (http_exchange *x = t->exchanges; x; x = x->next) {
    if (x->state == X_WAITING) {
      x->in_handler = 0;
      http_exchange_respond(x, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "", 0);
    } else if (x->state == X_STREAM) {
      x->stream_ended = 1;
    }
    if (x->suspended && x->response == NULL)
      resume(x);
  }
  if (now)
    finish_close(t);
  else if (t->exchanges == NULL)
    kick_close(t);
  else
    uv_timer_start(&t->drain_timer, drain_timeout_cb, DRAIN_MS, 0);
  kick(t); /* MHD keeps running on the loop until then */
}
