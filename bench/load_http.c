/* SPDX-License-Identifier: MIT */
/* load_http.c -- mcpd-load's Streamable HTTP transport.
 *
 * The server is started with its own listen address set to port 0; it must
 * log "listening on http://HOST:PORT/PATH" on stderr, which is where the
 * driver learns where to connect.  Its other stderr lines are passed on,
 * except those at info level, which would bury the table under startup
 * chatter from every spawn.
 *
 * Requests go out as HTTP/1.1 POSTs over W keep-alive connections, one
 * request outstanding per connection and no pipelining, which is how an
 * MCP client with W calls in flight talks to a server.  A response is
 * either a JSON body or an event stream (text/event-stream) whose data
 * events carry JSON-RPC messages until the one answering the request; the
 * body may be delimited by Content-Length, by chunked coding, or by the
 * server closing the connection.  Every JSON-RPC message goes through
 * load_handle_message(), and the response must come back on the
 * connection that carried its request.
 *
 * Sockets are non-blocking and one poll() covers all of them and the
 * server's stderr; its one-second timeout is how a server that stops
 * answering is noticed.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "load.h"

/* A response head larger than this is refused as broken. */
#define HTTP_HEAD_MAX 16384
/* What a connection carries besides a request id. */
#define HTTP_IDLE (-1)
#define HTTP_NOTIFICATION (-2)

extern char **environ;

enum http_body_kind {
  HTTP_BODY_NONE,
  HTTP_BODY_LENGTH,
  HTTP_BODY_CHUNKED,
  HTTP_BODY_UNTIL_CLOSE
};

enum http_chunk_state {
  HTTP_CHUNK_SIZE,     /* at a size line */
  HTTP_CHUNK_DATA,     /* inside a chunk, `remaining` bytes to go */
  HTTP_CHUNK_DATA_END, /* at the CRLF that closes a chunk */
  HTTP_CHUNK_TRAILER   /* after the last chunk, until an empty line */
};

typedef struct http_conn {
  int fd;
  /* The request id in flight, HTTP_NOTIFICATION, or HTTP_IDLE. */
  int64_t id;
  load_buf out;
  size_t out_off;
  load_buf in;
  size_t in_off;

  /* The response being read. */
  int in_head;
  int status;
  int keep_alive;
  int event_stream;
  int json;
  enum http_body_kind body_kind;
  enum http_chunk_state chunk_state;
  uint64_t remaining;
  /* The decoded body; for an event stream, only its unfinished line. */
  load_buf body;
  /* The data lines of the event being read. */
  load_buf data;
} http_conn;

struct load_http {
  struct sockaddr_storage addr;
  socklen_t addr_len;
  /* HOST:PORT as the server announced it, for the Host header. */
  char authority[256];
  char path[256];
  char session[256];
  /* The request head up to the Content-Length value: without the session
   * headers for initialize, with them afterwards. */
  load_buf head;
  load_buf scratch;
  int err_fd;
  load_buf err;
  int listening;
  http_conn *conns;
  int nconns;
  /* Connections with a request whose response is not complete. */
  int busy;
  struct pollfd *pfd;
  http_conn **pfd_conn;
};

static void conn_reset_response(http_conn *c) {
  c->in_head = 1;
  c->status = 0;
  c->keep_alive = 0;
  c->event_stream = 0;
  c->json = 0;
  c->body_kind = HTTP_BODY_NONE;
  c->chunk_state = HTTP_CHUNK_SIZE;
  c->remaining = 0;
  c->body.len = 0;
  c->data.len = 0;
}

static void conn_close(http_conn *c) {
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
  c->in.len = 0;
  c->in_off = 0;
  c->out.len = 0;
  c->out_off = 0;
}

/* Opens the connection without waiting: on loopback it is usually
 * established at once, and otherwise the first write waits in poll(). */
static int conn_open(load_run *r, http_conn *c) {
  load_http *h = r->http;
  int one = 1;

  c->fd =
      socket(h->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0)
    load_fatal("socket");
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(c->fd, (struct sockaddr *)&h->addr, h->addr_len) == 0 ||
      errno == EINPROGRESS || errno == EINTR)
    return 0;
  fprintf(stderr, "mcpd-load: %s: connect to %s: %s\n", load_run_name(r),
          h->authority, strerror(errno));
  conn_close(c);
  r->broken = 1;
  return -1;
}

/* Ends the exchange on `c`, whatever became of it. */
static void conn_done(load_run *r, http_conn *c) {
  c->id = HTTP_IDLE;
  r->http->busy--;
  if (!c->keep_alive)
    conn_close(c);
  conn_reset_response(c);
}

/* The exchange on `c` cannot complete: the request counts as failed and
 * the connection is dropped. */
static void conn_fail(load_run *r, http_conn *c, const char *why) {
  if (c->id >= 0 && r->t_send[c->id] != 0)
    load_fail_request(r, c->id, load_now_ns(), why, "", 0);
  else if (c->id != HTTP_IDLE)
    load_report(r, why, "", 0);
  if (c->id != HTTP_IDLE) {
    c->keep_alive = 0;
    conn_done(r, c);
  } else {
    conn_close(c);
  }
}

static void flush_conn(load_run *r, http_conn *c) {
  ssize_t n;

  while (c->out_off < c->out.len) {
    n = write(c->fd, c->out.base + c->out_off, c->out.len - c->out_off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return;
      conn_fail(r, c, strerror(errno));
      return;
    }
    c->out_off += n;
  }
  c->out.len = c->out_off = 0;
}

/* Sends one POST with `body` on `c`, which carries `id` from now on. */
static void send_post(load_run *r, http_conn *c, int64_t id, const char *body,
                      size_t len) {
  load_http *h = r->http;

  if (c->fd < 0 && conn_open(r, c) < 0)
    return;
  c->id = id;
  h->busy++;
  conn_reset_response(c);
  load_buf_add(&c->out, h->head.base, h->head.len);
  load_buf_add_id(&c->out, (int64_t)len);
  load_buf_adds(&c->out, "\r\n\r\n");
  load_buf_add(&c->out, body, len);
  flush_conn(r, c);
}

/* Sends request `id`, the driven method, on `c`. */
static void send_request(load_run *r, http_conn *c, int64_t id) {
  load_buf *b = &r->http->scratch;

  b->len = 0;
  load_buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":");
  load_buf_add_id(b, id);
  /* The suffix ends in the newline that frames stdio; a body needs none. */
  load_buf_add(b, r->req_suffix, r->req_suffix_len - 1);
  r->t_send[id] = load_now_ns();
  send_post(r, c, id, b->base, b->len);
}

/* What a request head names besides the body's length. */
enum http_head {
  HTTP_HEAD_BARE,    /* initialize: nothing more */
  HTTP_HEAD_SESSION, /* in a legacy session: the session and version */
  HTTP_HEAD_MODERN   /* a modern request: version, method and name */
};

/* Builds the request head.  A modern request names no session but its
 * version, its method and, for tools/call, its tool (reference section
 * 6), which mcpd checks against the body: so every modern request must be
 * of `method` and `name`. */
static void build_head(load_http *h, enum http_head kind, const char *method,
                       const char *name) {
  load_buf *b = &h->head;

  b->len = 0;
  load_buf_adds(b, "POST ");
  load_buf_adds(b, h->path);
  load_buf_adds(b, " HTTP/1.1\r\nHost: ");
  load_buf_adds(b, h->authority);
  load_buf_adds(b, "\r\nContent-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\n");
  if (kind == HTTP_HEAD_SESSION) {
    load_buf_adds(b, "Mcp-Session-Id: ");
    load_buf_adds(b, h->session);
    load_buf_adds(b, "\r\nMCP-Protocol-Version: " LOAD_PROTOCOL_VERSION "\r\n");
  } else if (kind == HTTP_HEAD_MODERN) {
    load_buf_adds(b, "MCP-Protocol-Version: " LOAD_MODERN_VERSION "\r\n"
                     "Mcp-Method: ");
    load_buf_adds(b, method);
    load_buf_adds(b, "\r\n");
    if (name != NULL) {
      load_buf_adds(b, "Mcp-Name: ");
      load_buf_adds(b, name);
      load_buf_adds(b, "\r\n");
    }
  }
  load_buf_adds(b, "Content-Length: ");
}

static int header_is(const char *name, size_t len, const char *want) {
  return len == strlen(want) && strncasecmp(name, want, len) == 0;
}

/* Whether the comma-separated header value holds `token`. */
static int value_has(const char *v, size_t len, const char *token) {
  size_t tlen = strlen(token);
  size_t i;

  for (i = 0; i + tlen <= len; i++)
    if (strncasecmp(v + i, token, tlen) == 0 &&
        (i == 0 || v[i - 1] == ' ' || v[i - 1] == ',') &&
        (i + tlen == len || v[i + tlen] == ' ' || v[i + tlen] == ',' ||
         v[i + tlen] == ';'))
      return 1;
  return 0;
}

/* Parses the status line and headers in [p, end), which ends before the
 * empty line.  Returns -1 if they are not HTTP. */
static int parse_head(load_run *r, http_conn *c, const char *p,
                      const char *end) {
  const char *eol;
  const char *colon;
  const char *v;
  size_t vlen;
  int minor;
  int have_length;
  char *num_end;

  if (end - p < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ')
    return -1;
  minor = p[7] - '0';
  c->status = atoi(p + 9);
  c->keep_alive = minor >= 1;
  have_length = 0;
  c->body_kind = HTTP_BODY_UNTIL_CLOSE;

  for (p = memchr(p, '\n', end - p); p != NULL && p + 1 < end;
       p = memchr(p, '\n', end - p)) {
    p++;
    eol = memchr(p, '\n', end - p);
    if (eol == NULL)
      eol = end;
    colon = memchr(p, ':', eol - p);
    if (colon == NULL)
      continue;
    v = colon + 1;
    while (v < eol && (*v == ' ' || *v == '\t'))
      v++;
    vlen = eol - v;
    while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == ' '))
      vlen--;

    if (header_is(p, colon - p, "Content-Length")) {
      c->remaining = strtoull(v, &num_end, 10);
      if (num_end == v)
        return -1;
      have_length = 1;
    } else if (header_is(p, colon - p, "Transfer-Encoding")) {
      if (value_has(v, vlen, "chunked"))
        c->body_kind = HTTP_BODY_CHUNKED;
    } else if (header_is(p, colon - p, "Connection")) {
      if (value_has(v, vlen, "close"))
        c->keep_alive = 0;
      else if (value_has(v, vlen, "keep-alive"))
        c->keep_alive = 1;
    } else if (header_is(p, colon - p, "Content-Type")) {
      c->event_stream =
          vlen >= 17 && strncasecmp(v, "text/event-stream", 17) == 0;
      c->json = vlen >= 16 && strncasecmp(v, "application/json", 16) == 0;
    } else if (header_is(p, colon - p, "Mcp-Session-Id") && c->id == 0) {
      if (vlen == 0 || vlen >= sizeof(r->http->session))
        return -1;
      memcpy(r->http->session, v, vlen);
      r->http->session[vlen] = '\0';
    }
  }

  if (c->body_kind != HTTP_BODY_CHUNKED && have_length)
    c->body_kind = HTTP_BODY_LENGTH;
  if (c->status == 204 || c->status == 304 ||
      (c->body_kind == HTTP_BODY_LENGTH && c->remaining == 0))
    c->body_kind = HTTP_BODY_NONE;
  if (c->body_kind == HTTP_BODY_UNTIL_CLOSE)
    c->keep_alive = 0;
  return 0;
}

/* Handles one complete line of an event stream: data lines gather, an
 * empty line dispatches the event, anything else (event:, id:, retry:,
 * comments) does not matter here. */
static void event_line(load_run *r, http_conn *c, const char *line, size_t len,
                       uint64_t now) {
  if (len > 0 && line[len - 1] == '\r')
    len--;
  if (len == 0) {
    if (c->data.len > 0)
      load_handle_message(r, c->data.base, c->data.len, now);
    c->data.len = 0;
    return;
  }
  if (len >= 5 && memcmp(line, "data:", 5) == 0) {
    line += 5;
    len -= 5;
    if (len > 0 && *line == ' ') {
      line++;
      len--;
    }
    if (c->data.len > 0)
      load_buf_add(&c->data, "\n", 1);
    load_buf_add(&c->data, line, len);
  }
}

/* Takes `n` decoded body bytes.  An event stream is handled as its lines
 * arrive, so a response is timed when its event comes, not when the stream
 * ends; a JSON body waits for its end. */
static void body_bytes(load_run *r, http_conn *c, const char *p, size_t n,
                       uint64_t now) {
  const char *nl;
  size_t start;

  load_buf_add(&c->body, p, n);
  if (!c->event_stream || c->status != 200)
    return;
  start = 0;
  while ((nl = memchr(c->body.base + start, '\n', c->body.len - start)) !=
         NULL) {
    event_line(r, c, c->body.base + start, nl - (c->body.base + start), now);
    start = nl - c->body.base + 1;
  }
  memmove(c->body.base, c->body.base + start, c->body.len - start);
  c->body.len -= start;
}

/* The response on `c` is complete: check that it answered its request. */
static void response_done(load_run *r, http_conn *c, uint64_t now) {
  char why[64];
  int64_t id = c->id;

  if (id == HTTP_NOTIFICATION) {
    if (c->status != 202) {
      snprintf(why, sizeof(why), "notification answered with HTTP %d",
               c->status);
      load_report(r, why, c->body.base, c->body.len);
    }
  } else if (r->t_send[id] == 0) {
    /* Answered by an event already. */
  } else if (c->status != 200) {
    snprintf(why, sizeof(why), "HTTP %d", c->status);
    load_fail_request(r, id, now, why, c->body.base, c->body.len);
  } else if (c->json) {
    load_handle_message(r, c->body.base, c->body.len, now);
    if (r->t_send[id] != 0)
      load_fail_request(r, id, now,
                        "a JSON body that does not answer its request",
                        c->body.base, c->body.len);
  } else if (c->event_stream) {
    load_fail_request(r, id, now, "the event stream ended without the response",
                      c->body.base, c->body.len);
  } else {
    load_fail_request(r, id, now,
                      "a 200 response that is neither JSON nor an event stream",
                      c->body.base, c->body.len);
  }
  conn_done(r, c);
}

/* Decodes what has arrived on `c`.  Returns 1 when the response is
 * complete, 0 when more input is needed, -1 when the input is not HTTP. */
static int decode(load_run *r, http_conn *c, uint64_t now) {
  const char *p;
  const char *end;
  const char *nl;
  size_t n;
  char *num_end;

  for (;;) {
    p = c->in.base + c->in_off;
    end = c->in.base + c->in.len;
    if (c->in_head) {
      const char *blank = memmem(p, end - p, "\r\n\r\n", 4);
      if (blank == NULL)
        return end - p > HTTP_HEAD_MAX ? -1 : 0;
      if (parse_head(r, c, p, blank + 2) < 0)
        return -1;
      c->in_off = blank + 4 - c->in.base;
      /* An interim response (100 Continue) precedes the real one. */
      if (c->status >= 100 && c->status < 200) {
        conn_reset_response(c);
        continue;
      }
      c->in_head = 0;
      if (c->body_kind == HTTP_BODY_NONE)
        return 1;
      continue;
    }
    if (p == end)
      return 0;
    switch (c->body_kind) {
    case HTTP_BODY_NONE:
      return 1;
    case HTTP_BODY_UNTIL_CLOSE:
      body_bytes(r, c, p, end - p, now);
      c->in_off = c->in.len;
      return 0;
    case HTTP_BODY_LENGTH:
      n = (size_t)(end - p) < c->remaining ? (size_t)(end - p) : c->remaining;
      body_bytes(r, c, p, n, now);
      c->in_off += n;
      c->remaining -= n;
      if (c->remaining == 0)
        return 1;
      continue;
    case HTTP_BODY_CHUNKED:
      break;
    }

    switch (c->chunk_state) {
    case HTTP_CHUNK_SIZE:
      if ((nl = memchr(p, '\n', end - p)) == NULL)
        return end - p > 1024 ? -1 : 0;
      c->remaining = strtoull(p, &num_end, 16);
      if (num_end == p)
        return -1;
      c->in_off = nl + 1 - c->in.base;
      c->chunk_state = c->remaining == 0 ? HTTP_CHUNK_TRAILER : HTTP_CHUNK_DATA;
      break;
    case HTTP_CHUNK_DATA:
      n = (size_t)(end - p) < c->remaining ? (size_t)(end - p) : c->remaining;
      body_bytes(r, c, p, n, now);
      c->in_off += n;
      c->remaining -= n;
      if (c->remaining == 0)
        c->chunk_state = HTTP_CHUNK_DATA_END;
      break;
    case HTTP_CHUNK_DATA_END:
      if ((nl = memchr(p, '\n', end - p)) == NULL)
        return end - p > 2 ? -1 : 0;
      c->in_off = nl + 1 - c->in.base;
      c->chunk_state = HTTP_CHUNK_SIZE;
      break;
    case HTTP_CHUNK_TRAILER:
      if ((nl = memchr(p, '\n', end - p)) == NULL)
        return end - p > HTTP_HEAD_MAX ? -1 : 0;
      c->in_off = nl + 1 - c->in.base;
      if (nl == p || (nl == p + 1 && *p == '\r'))
        return 1;
      break;
    }
  }
}

static void read_conn(load_run *r, http_conn *c) {
  uint64_t now;
  ssize_t n;
  int done;

  load_buf_reserve(&c->in, LOAD_READ_CHUNK);
  n = read(c->fd, c->in.base + c->in.len, c->in.cap - c->in.len);
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
      return;
    conn_fail(r, c, strerror(errno));
    return;
  }
  now = load_now_ns();
  if (n == 0) {
    /* A body that runs until the connection closes ends here; any other
     * exchange was cut short. */
    if (c->id != HTTP_IDLE && !c->in_head &&
        c->body_kind == HTTP_BODY_UNTIL_CLOSE) {
      r->last_progress = now;
      response_done(r, c, now);
    } else {
      conn_fail(r, c, "the server closed the connection mid-exchange");
    }
    return;
  }
  r->last_progress = now;
  c->in.len += n;
  if (c->id == HTTP_IDLE) {
    load_report(r, "bytes on a connection with no request",
                c->in.base + c->in_off, c->in.len - c->in_off);
    conn_close(c);
    return;
  }
  done = decode(r, c, now);
  if (done < 0) {
    conn_fail(r, c, "a response that is not HTTP/1.1");
    return;
  }
  if (done) {
    if (c->in_off < c->in.len)
      load_report(r, "bytes after a complete response", c->in.base + c->in_off,
                  c->in.len - c->in_off);
    c->in.len = c->in_off = 0;
    response_done(r, c, now);
    return;
  }
  if (c->in_off == c->in.len)
    c->in.len = c->in_off = 0;
}

/* Reads the announced address from a "listening on http://HOST:PORT/PATH"
 * line. */
static int parse_listening(load_http *h, const char *line) {
  struct addrinfo hints;
  struct addrinfo *ai;
  const char *url = strstr(line, "listening on http://");
  const char *host;
  const char *port;
  const char *path;
  char host_part[256];
  char port_part[16];
  size_t n;

  if (url == NULL)
    return 0;
  host = url + strlen("listening on http://");
  path = host + strcspn(host, "/ \t\r\n");
  n = path - host;
  if (n == 0 || n >= sizeof(h->authority))
    return -1;
  memcpy(h->authority, host, n);
  h->authority[n] = '\0';
  n = strcspn(path, " \t\r\n");
  if (n == 0) {
    strcpy(h->path, "/");
  } else {
    if (n >= sizeof(h->path))
      return -1;
    memcpy(h->path, path, n);
    h->path[n] = '\0';
  }

  port = strrchr(h->authority, ':');
  if (port == NULL || strlen(port + 1) >= sizeof(port_part))
    return -1;
  strcpy(port_part, port + 1);
  n = port - h->authority;
  host = h->authority;
  if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
    host++;
    n -= 2;
  }
  if (n >= sizeof(host_part))
    return -1;
  memcpy(host_part, host, n);
  host_part[n] = '\0';

  memset(&hints, 0, sizeof(hints));
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host_part, port_part, &hints, &ai) != 0)
    return -1;
  memcpy(&h->addr, ai->ai_addr, ai->ai_addrlen);
  h->addr_len = ai->ai_addrlen;
  freeaddrinfo(ai);
  return 1;
}

/* Reads what the server wrote on stderr, looks for the listening line and
 * passes the rest on.  Returns 0 at EOF. */
static int read_stderr(load_run *r) {
  load_http *h = r->http;
  char *nl;
  char *line;
  size_t start;
  ssize_t n;

  load_buf_reserve(&h->err, 4096);
  n = read(h->err_fd, h->err.base + h->err.len, h->err.cap - h->err.len - 1);
  if (n < 0)
    return errno == EINTR || errno == EAGAIN ? 1 : 0;
  if (n == 0) {
    /* A last line without a newline still deserves to be seen. */
    if (h->err.len > 0 && !load_opt.quiet)
      fprintf(stderr, "%.*s\n", (int)h->err.len, h->err.base);
    h->err.len = 0;
    return 0;
  }
  h->err.len += n;
  start = 0;
  while ((nl = memchr(h->err.base + start, '\n', h->err.len - start)) != NULL) {
    line = h->err.base + start;
    *nl = '\0';
    if (!h->listening) {
      switch (parse_listening(h, line)) {
      case 1:
        h->listening = 1;
        break;
      case -1:
        fprintf(stderr, "mcpd-load: %s: cannot use the address in: %s\n",
                load_run_name(r), line);
        r->broken = 1;
        break;
      }
    }
    if (!load_opt.quiet && strstr(line, ": info: ") == NULL)
      fprintf(stderr, "%s\n", line);
    start = nl - h->err.base + 1;
  }
  memmove(h->err.base, h->err.base + start, h->err.len - start);
  h->err.len -= start;
  return 1;
}

static void spawn_server(load_run *r) {
  posix_spawn_file_actions_t fa;
  load_http *h;
  int err_pipe[2];
  int err;
  int i;

  h = calloc(1, sizeof(*h));
  if (h == NULL)
    load_fatal("calloc");
  r->http = h;
  h->nconns = (int)load_opt.window;
  h->conns = calloc(h->nconns, sizeof(*h->conns));
  h->pfd = calloc(h->nconns + 1, sizeof(*h->pfd));
  h->pfd_conn = calloc(h->nconns + 1, sizeof(*h->pfd_conn));
  if (h->conns == NULL || h->pfd == NULL || h->pfd_conn == NULL)
    load_fatal("calloc");
  for (i = 0; i < h->nconns; i++) {
    h->conns[i].fd = -1;
    h->conns[i].id = HTTP_IDLE;
  }

  if (pipe2(err_pipe, O_CLOEXEC))
    load_fatal("pipe2");
  /* The server's stdout goes to our stderr: our stdout carries the
   * figures. */
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], STDERR_FILENO);
  err = posix_spawnp(&r->pid, r->argv[0], &fa, NULL, r->argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) {
    fprintf(stderr, "mcpd-load: cannot run %s: %s\n", r->argv[0],
            strerror(err));
    exit(2);
  }
  close(err_pipe[1]);
  h->err_fd = err_pipe[0];
  if (fcntl(h->err_fd, F_SETFL, O_NONBLOCK))
    load_fatal("fcntl");
}

/* Waits for the server to say where it listens. */
static void wait_listening(load_run *r) {
  load_http *h = r->http;
  struct pollfd pfd;
  int n;

  pfd.fd = h->err_fd;
  pfd.events = POLLIN;
  while (!h->listening && !r->broken) {
    n = poll(&pfd, 1, 1000);
    if (n <= 0) {
      if (n < 0 && errno != EINTR)
        load_fatal("poll");
      load_check_timeout(r);
      continue;
    }
    if (!read_stderr(r)) {
      fprintf(stderr,
              "mcpd-load: %s: stderr closed before a \"listening on "
              "http://\" line\n",
              load_run_name(r));
      r->broken = 1;
    }
  }
}

/* Gives every idle connection its next request. */
static void fill(load_run *r) {
  load_http *h = r->http;
  http_conn *c;
  int i;

  if (!r->init_done)
    return;
  for (i = 0; i < h->nconns && r->issued < r->phase_total; i++) {
    c = &h->conns[i];
    if (c->id != HTTP_IDLE)
      continue;
    r->issued++;
    r->outstanding++;
    send_request(r, c, r->next_id++);
    if (r->recording && r->first_send == 0)
      r->first_send = r->t_send[r->next_id - 1];
    if (r->broken)
      return;
  }
}

/* Runs until the phase is answered and every exchange has ended: an event
 * stream may go on a little after its response. */
static void pump(load_run *r) {
  load_http *h = r->http;
  http_conn *c;
  short ev;
  int n;
  int i;

  while (!r->broken &&
         !(r->init_done && r->answered >= r->phase_total && h->busy == 0)) {
    fill(r);
    n = 0;
    for (i = 0; i < h->nconns; i++) {
      c = &h->conns[i];
      if (c->fd < 0 || c->id == HTTP_IDLE)
        continue;
      h->pfd[n].fd = c->fd;
      h->pfd[n].events = c->out_off < c->out.len ? POLLOUT : POLLIN;
      h->pfd_conn[n++] = c;
    }
    h->pfd[n].fd = h->err_fd;
    h->pfd[n].events = POLLIN;
    h->pfd_conn[n] = NULL;
    /* A negative fd, once stderr has closed, is ignored by poll(). */
    i = poll(h->pfd, n + 1, 1000);
    if (i <= 0) {
      if (i < 0 && errno != EINTR)
        load_fatal("poll");
      load_check_timeout(r);
      continue;
    }
    for (i = 0; i <= n; i++) {
      ev = h->pfd[i].revents;
      if (ev == 0)
        continue;
      c = h->pfd_conn[i];
      if (c == NULL) {
        if (!read_stderr(r)) {
          close(h->err_fd);
          h->err_fd = -1;
        }
      } else if (c->out_off < c->out.len) {
        flush_conn(r, c);
      } else {
        read_conn(r, c);
      }
    }
  }
}

/* The modern era's start: server/discover, then every request with the
 * headers of the driven method, and no session. */
static void discover(load_run *r) {
  static const char request[] = LOAD_DISCOVER_REQUEST;
  load_http *h = r->http;

  build_head(h, HTTP_HEAD_MODERN, "server/discover", NULL);
  r->t_send[0] = load_now_ns();
  send_post(r, &h->conns[0], 0, request, sizeof(request) - 1);
  pump(r);
  if (r->broken)
    return;
  build_head(h, HTTP_HEAD_MODERN, load_opt.method,
             strcmp(load_opt.method, "tools/call") == 0 ? r->tool : NULL);
}

static void initialize(load_run *r) {
  static const char request[] =
      "{\"jsonrpc\":\"2.0\",\"id\":0,"
      "\"method\":\"initialize\"," LOAD_INITIALIZE_PARAMS "}";
  static const char initialized[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  load_http *h = r->http;

  r->next_id = 1;
  r->phase_total = 0;
  wait_listening(r);
  if (r->broken)
    return;
  if (r->modern) {
    discover(r);
    return;
  }

  build_head(h, HTTP_HEAD_BARE, NULL, NULL);
  r->t_send[0] = load_now_ns();
  send_post(r, &h->conns[0], 0, request, sizeof(request) - 1);
  pump(r);
  if (r->broken)
    return;
  if (h->session[0] == '\0') {
    fprintf(stderr,
            "mcpd-load: %s: initialize answered without "
            "Mcp-Session-Id\n",
            load_run_name(r));
    r->errors++;
    r->broken = 1;
    return;
  }
  build_head(h, HTTP_HEAD_SESSION, NULL, NULL);
  send_post(r, &h->conns[0], HTTP_NOTIFICATION, initialized,
            sizeof(initialized) - 1);
  pump(r);
}

/* Closes every connection, asks the server to leave with SIGTERM (SIGKILL
 * if the run broke), reads its stderr to the end and reaps it. */
static long finish(load_run *r) {
  load_http *h = r->http;
  struct pollfd pfd;
  uint64_t deadline;
  int i;

  for (i = 0; i < h->nconns; i++) {
    conn_close(&h->conns[i]);
    free(h->conns[i].in.base);
    free(h->conns[i].out.base);
    free(h->conns[i].body.base);
    free(h->conns[i].data.base);
  }
  kill(r->pid, r->broken ? SIGKILL : SIGTERM);
  deadline = load_now_ns() + (uint64_t)load_opt.timeout_s * 1000000000u;
  pfd.fd = h->err_fd;
  pfd.events = POLLIN;
  while (h->err_fd >= 0) {
    if (load_now_ns() > deadline) {
      fprintf(stderr, "mcpd-load: %s: still running %d s after SIGTERM\n",
              load_run_name(r), load_opt.timeout_s);
      kill(r->pid, SIGKILL);
      r->errors++;
      break;
    }
    if (poll(&pfd, 1, 1000) > 0 && !read_stderr(r))
      break;
  }
  if (h->err_fd >= 0)
    close(h->err_fd);

  free(h->conns);
  free(h->pfd);
  free(h->pfd_conn);
  free(h->head.base);
  free(h->scratch.base);
  free(h->err.base);
  free(h);
  r->http = NULL;
  return load_reap(r);
}

const load_transport load_http_transport = {
    "http", spawn_server, initialize, pump, NULL, finish,
};
