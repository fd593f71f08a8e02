/* SPDX-License-Identifier: MIT */
/* http-floor.c -- the reference floor for the mcpd HTTP benchmarks.
 *
 * The least a libmicrohttpd MCP server has to do to answer Streamable HTTP
 * POSTs: let MHD read the request on its one epoll thread, gather the body,
 * parse it with json_tokener, check the session and protocol version
 * headers, and answer with a fixed JSON reply carrying the request's id --
 * initialize with an Mcp-Session-Id header, tools/call by echoing
 * arguments.text, anything else with an empty result, and 202 with no body
 * for notifications.  It has no event loop of its own, no plugins, no
 * registry, one fixed session and no SSE; every mcpd HTTP figure in
 * bench/run.sh is a ratio to this program measured in the same run.
 *
 * usage: http-floor [--listen HOST:PORT]   (default 127.0.0.1:0)
 *
 * It logs "listening on http://HOST:PORT/mcp" on stderr, like mcpd, and
 * leaves with status 0 on SIGTERM or SIGINT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <json-c/json.h>
#include <microhttpd.h>

#define FLOOR_PATH "/mcp"
#define FLOOR_SESSION "0123456789abcdef0123456789abcdef"
#define FLOOR_PROTOCOL_VERSION "2025-11-25"
#define FLOOR_MAX_BODY (4 * 1024 * 1024)

typedef struct {
  char *base;
  size_t len;
  size_t cap;
  int too_large;
} floor_buf;

/* MHD calls every callback on its one thread, so one tokener and one reply
 * buffer serve all requests. */
static json_tokener *tok;
static floor_buf reply;

static void die(const char *what) {
  fprintf(stderr, "http-floor: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void buf_add(floor_buf *b, const char *s, size_t n) {
  size_t cap;

  if (b->len + n > b->cap) {
    cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
      cap *= 2;
    b->base = realloc(b->base, cap);
    if (b->base == NULL)
      die("realloc");
    b->cap = cap;
  }
  memcpy(b->base + b->len, s, n);
  b->len += n;
}

static void buf_adds(floor_buf *b, const char *s) {
  buf_add(b, s, strlen(s));
}

static void add_json(floor_buf *b, json_object *v) {
  size_t n;
  const char *s;

  s = json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN, &n);
  buf_add(b, s, n);
}

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status,
                               const char *body, size_t len, int session) {
  struct MHD_Response *r;
  enum MHD_Result ret;

  r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
  if (r == NULL)
    return MHD_NO;
  if (len > 0)
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "application/json");
  if (session)
    MHD_add_response_header(r, "Mcp-Session-Id", FLOOR_SESSION);
  ret = MHD_queue_response(conn, status, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result respond_error(struct MHD_Connection *conn,
                                     unsigned status, int code,
                                     const char *message) {
  char body[256];
  int n;

  n = snprintf(body, sizeof(body),
               "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
               "{\"code\":%d,\"message\":\"%s\"}}",
               code, message);
  return respond(conn, status, body, (size_t)n, 0);
}

/* Answers one complete POST body. */
static enum MHD_Result answer(struct MHD_Connection *conn,
                              const floor_buf *body) {
  json_object *msg;
  json_object *id;
  json_object *method;
  json_object *params;
  json_object *args;
  json_object *text;
  const char *name;
  const char *sid;
  const char *version;
  enum MHD_Result ret;
  int initialize;

  json_tokener_reset(tok);
  msg =
      json_tokener_parse_ex(tok, body->base ? body->base : "", (int)body->len);
  if (msg == NULL || !json_object_is_type(msg, json_type_object)) {
    json_object_put(msg);
    return respond_error(conn, MHD_HTTP_BAD_REQUEST, -32700, "Parse error");
  }
  if (!json_object_object_get_ex(msg, "method", &method))
    method = NULL;
  name = method != NULL ? json_object_get_string(method) : "";
  initialize = strcmp(name, "initialize") == 0;

  if (!initialize) {
    sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
    version = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                          "MCP-Protocol-Version");
    if (sid == NULL) {
      ret = respond_error(conn, MHD_HTTP_BAD_REQUEST, -32600,
                          "Mcp-Session-Id header is required");
      goto out;
    }
    if (strcmp(sid, FLOOR_SESSION) != 0) {
      ret =
          respond_error(conn, MHD_HTTP_NOT_FOUND, -32600, "Session not found");
      goto out;
    }
    if (version != NULL && strcmp(version, FLOOR_PROTOCOL_VERSION) != 0) {
      ret = respond_error(conn, MHD_HTTP_BAD_REQUEST, -32600,
                          "unsupported MCP-Protocol-Version");
      goto out;
    }
  }

  /* Notifications and client responses are accepted with no body. */
  if (!json_object_object_get_ex(msg, "id", &id) || method == NULL) {
    ret = respond(conn, MHD_HTTP_ACCEPTED, "", 0, 0);
    goto out;
  }

  reply.len = 0;
  buf_adds(&reply, "{\"jsonrpc\":\"2.0\",\"id\":");
  add_json(&reply, id);
  if (initialize) {
    buf_adds(&reply,
             ",\"result\":{\"protocolVersion\":\"" FLOOR_PROTOCOL_VERSION
             "\",\"capabilities\":{\"tools\":{}},"
             "\"serverInfo\":{\"name\":\"http-floor\","
             "\"version\":\"0\"}}}");
  } else if (strcmp(name, "tools/call") == 0) {
    buf_adds(&reply, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
    if (json_object_object_get_ex(msg, "params", &params) &&
        json_object_object_get_ex(params, "arguments", &args) &&
        json_object_object_get_ex(args, "text", &text) &&
        json_object_is_type(text, json_type_string))
      add_json(&reply, text);
    else
      buf_adds(&reply, "\"\"");
    buf_adds(&reply, "}]}}");
  } else {
    buf_adds(&reply, ",\"result\":{}}");
  }
  ret = respond(conn, MHD_HTTP_OK, reply.base, reply.len, initialize);
out:
  json_object_put(msg);
  return ret;
}

/* MHD calls this once with the headers, then with each piece of the body,
 * then once more with none: only then is there something to answer. */
static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn,
                                 const char *url, const char *method,
                                 const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **req_cls) {
  floor_buf *body = *req_cls;

  (void)cls;
  (void)version;
  if (body == NULL) {
    body = calloc(1, sizeof(*body));
    if (body == NULL)
      return MHD_NO;
    *req_cls = body;
    return MHD_YES;
  }
  if (*upload_data_size > 0) {
    if (body->len + *upload_data_size > FLOOR_MAX_BODY)
      body->too_large = 1;
    else
      buf_add(body, upload_data, *upload_data_size);
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (strcmp(url, FLOOR_PATH) != 0)
    return respond_error(conn, MHD_HTTP_NOT_FOUND, -32600, "Not Found");
  if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
    return respond_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, -32600,
                         "Method Not Allowed");
  if (body->too_large)
    return respond_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, -32600,
                         "Payload Too Large");
  return answer(conn, body);
}

static void completed_cb(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode why) {
  floor_buf *body = *req_cls;

  (void)cls;
  (void)conn;
  (void)why;
  if (body != NULL) {
    free(body->base);
    free(body);
  }
  *req_cls = NULL;
}

/* Parses HOST:PORT, an IPv4 address and a port. */
static int parse_listen(const char *s, struct sockaddr_in *sin) {
  char host[64];
  const char *colon = strrchr(s, ':');
  char *end;
  long port;

  if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
    return -1;
  memcpy(host, s, colon - s);
  host[colon - s] = '\0';
  port = strtol(colon + 1, &end, 10);
  if (*end != '\0' || end == colon + 1 || port < 0 || port > 65535)
    return -1;
  memset(sin, 0, sizeof(*sin));
  sin->sin_family = AF_INET;
  sin->sin_port = htons((unsigned short)port);
  return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv) {
  struct sockaddr_in sin;
  struct MHD_Daemon *d;
  const union MHD_DaemonInfo *info;
  const char *listen_at = "127.0.0.1:0";
  char host[INET_ADDRSTRLEN];
  sigset_t stop;
  int sig;

  if (argc == 3 && strcmp(argv[1], "--listen") == 0)
    listen_at = argv[2];
  else if (argc != 1) {
    fprintf(stderr, "usage: http-floor [--listen HOST:PORT]\n");
    return 2;
  }
  if (parse_listen(listen_at, &sin) < 0) {
    fprintf(stderr, "http-floor: --listen %s: expected IPV4:PORT\n", listen_at);
    return 2;
  }
  tok = json_tokener_new();
  if (tok == NULL)
    die("json_tokener_new");

  /* Blocked before MHD starts its thread, so that thread inherits the mask
   * and the signals wait for sigwait() below. */
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, NULL);

  d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD, 0, NULL, NULL, access_cb,
                       NULL, MHD_OPTION_SOCK_ADDR, &sin,
                       MHD_OPTION_NOTIFY_COMPLETED, completed_cb, NULL,
                       MHD_OPTION_END);
  if (d == NULL) {
    fprintf(stderr, "http-floor: cannot listen on %s\n", listen_at);
    return 1;
  }
  info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  inet_ntop(AF_INET, &sin.sin_addr, host, sizeof(host));
  fprintf(stderr, "http-floor: info: listening on http://%s:%u" FLOOR_PATH "\n",
          host, info ? (unsigned)info->port : 0u);

  while (sigwait(&stop, &sig) != 0)
    ;
  MHD_stop_daemon(d);
  json_tokener_free(tok);
  free(reply.base);
  return 0;
}
