/* SPDX-License-Identifier: MIT */
/* floor.c -- the reference floor for the mcpd benchmarks.
 *
 * The floor is the least a straightforward json-c server has to do to answer
 * MCP over stdio: read newline-delimited messages with blocking read(), parse
 * each one with json_tokener, and write a fixed reply carrying the request's
 * id.  For tools/call it echoes arguments.text, so it does the same useful
 * work as the bundled echo tool.  It has no event loop, no plugins and no
 * registry; every mcpd figure in bench/run.sh is a ratio to this program
 * measured in the same run.
 *
 * Replies are buffered and flushed when the input buffer holds no further
 * complete line, which is what any server that batches its writes without
 * delaying a reply pays.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#define FLOOR_READ_CHUNK 65536

typedef struct {
  char *base;
  size_t len;
  size_t cap;
} floor_buf;

static void die(const char *what) {
  fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void buf_reserve(floor_buf *b, size_t extra) {
  size_t cap;

  if (b->len + extra <= b->cap)
    return;
  cap = b->cap ? b->cap : FLOOR_READ_CHUNK;
  while (cap < b->len + extra)
    cap *= 2;
  b->base = realloc(b->base, cap);
  if (b->base == NULL)
    die("realloc");
  b->cap = cap;
}

static void buf_add(floor_buf *b, const char *s, size_t n) {
  buf_reserve(b, n);
  memcpy(b->base + b->len, s, n);
  b->len += n;
}

static void buf_adds(floor_buf *b, const char *s) {
  buf_add(b, s, strlen(s));
}

static void flush_out(floor_buf *out) {
  size_t off;
  ssize_t n;

  for (off = 0; off < out->len; off += n) {
    n = write(STDOUT_FILENO, out->base + off, out->len - off);
    if (n < 0) {
      if (errno == EINTR) {
        n = 0;
        continue;
      }
      die("write");
    }
  }
  out->len = 0;
}

/* Appends the JSON text of a value; json-c does the escaping, as it would in
 * any json-c server. */
static void add_json(floor_buf *out, json_object *v) {
  size_t n;
  const char *s;

  s = json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN, &n);
  buf_add(out, s, n);
}

static void reply(floor_buf *out, json_object *msg) {
  json_object *id;
  json_object *method;
  json_object *params;
  json_object *args;
  json_object *text;
  const char *name;

  /* Notifications carry no id and get no reply. */
  if (!json_object_object_get_ex(msg, "id", &id))
    return;
  /* A response from the client (no method) gets no reply either. */
  if (!json_object_object_get_ex(msg, "method", &method))
    return;
  name = json_object_get_string(method);

  buf_adds(out, "{\"jsonrpc\":\"2.0\",\"id\":");
  add_json(out, id);

  if (strcmp(name, "initialize") == 0) {
    buf_adds(out, ",\"result\":{\"protocolVersion\":\"2025-11-25\","
                  "\"capabilities\":{\"tools\":{}},"
                  "\"serverInfo\":{\"name\":\"floor\",\"version\":\"0\"}}}\n");
  } else if (strcmp(name, "tools/call") == 0) {
    buf_adds(out, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
    if (json_object_object_get_ex(msg, "params", &params) &&
        json_object_object_get_ex(params, "arguments", &args) &&
        json_object_object_get_ex(args, "text", &text) &&
        json_object_is_type(text, json_type_string))
      add_json(out, text);
    else
      buf_adds(out, "\"\"");
    buf_adds(out, "}]}}\n");
  } else {
    buf_adds(out, ",\"result\":{}}\n");
  }
}

static void handle_line(json_tokener *tok, floor_buf *out, const char *line,
                        size_t len) {
  json_object *msg;

  if (len > 0 && line[len - 1] == '\r')
    len--;
  if (len == 0)
    return;

  json_tokener_reset(tok);
  msg = json_tokener_parse_ex(tok, line, (int)len);
  if (msg == NULL || json_tokener_get_parse_end(tok) != len ||
      !json_object_is_type(msg, json_type_object)) {
    buf_adds(out, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
                  "{\"code\":-32700,\"message\":\"Parse error\"}}\n");
  } else {
    reply(out, msg);
  }
  json_object_put(msg);
}

int main(void) {
  floor_buf in = {NULL, 0, 0};
  floor_buf out = {NULL, 0, 0};
  json_tokener *tok;
  size_t start;
  size_t scanned;
  char *nl;
  ssize_t n;

  tok = json_tokener_new();
  if (tok == NULL)
    die("json_tokener_new");

  /* `scanned` remembers how far a partial line has been searched for '\n',
   * so a long message costs linear time however it arrives. */
  scanned = 0;
  for (;;) {
    buf_reserve(&in, FLOOR_READ_CHUNK);
    n = read(STDIN_FILENO, in.base + in.len, in.cap - in.len);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      die("read");
    }
    if (n == 0)
      break;
    in.len += n;

    start = 0;
    while ((nl = memchr(in.base + scanned, '\n', in.len - scanned)) != NULL) {
      handle_line(tok, &out, in.base + start, nl - (in.base + start));
      start = nl - in.base + 1;
      scanned = start;
    }
    memmove(in.base, in.base + start, in.len - start);
    in.len -= start;
    scanned = in.len;

    /* Everything complete that has arrived is answered; flush before the
     * next read can block. */
    flush_out(&out);
  }

  /* A last message without a trailing newline is still a message. */
  handle_line(tok, &out, in.base, in.len);
  flush_out(&out);

  json_tokener_free(tok);
  free(in.base);
  free(out.base);
  return 0;
}
