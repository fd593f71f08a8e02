/* SPDX-License-Identifier: MIT */
/* fuzz_plugin.c -- a fixture plugin for fuzz_protocol ("fuzzfix"), built
 * by build.sh into fuzzfix.so.  It reaches what echo and calc do not, and
 * stays deterministic: every callback is INLINE, or ASYNC and completed
 * before it returns, so nothing runs on another thread, and nothing is kept
 * between calls.  Everything goes through req->host.
 *
 * Tools
 *   deferred  ASYNC: builds its result and calls complete() inside the
 *             callback, so the reply comes on the next loop turn and the
 *             request is in flight meanwhile (cancellation, the in-flight
 *             cap, the by-id index, duplicate ids).  Optional progress()
 *             and log() first (notifications/progress, notifications/message);
 *             "fail": true returns MCPD_ERROR without complete().  After
 *             complete(), every result builder and a second complete() must
 *             be refused: the plugin aborts if one is not.
 *   mirror    INLINE: hands "value" back as the whole result (result_json),
 *             as structuredContent (result_structured), as text, as an
 *             error or in every other kind of content block, optionally
 *             twice, cut after "cut" bytes (inside a UTF-8 sequence, say)
 *             and returning "status" instead of MCPD_OK, so the host's
 *             checks of plugin results see arbitrary shapes and bytes.
 *   typed     INLINE, declares an output schema: returns "value" as
 *             structuredContent, which the host must check against it.
 *   misuse    INLINE: a builder no tool result can carry, chosen by "how".
 *
 * Resources (INLINE)
 *   fuzz://text          the entry's data as text; subscribable
 *   fuzz://bytes         fixed hostile bytes: NUL, invalid UTF-8, surrogates,
 *                        CR and LF, as text, as URI and MIME type, as blob
 *   fuzz://item/0/shadow an exact URI the item template also matches
 *   fuzz://empty         returns MCPD_OK having built nothing
 *
 * Resource templates, tried in this order
 *   fuzz://item/{id}/{+rest}    INLINE: echoes the variables as text and as
 *                               JSON; completion; subscribable
 *   fuzz://fail/{code}          INLINE: fail() with the number the URI
 *                               starts with, valid or not; letters after it
 *                               add text before (t) or after (T), fail a
 *                               second time (f), call result_error (r), put
 *                               invalid UTF-8 in the message (x), return
 *                               MCPD_ERROR (e)
 *   fuzz://bytes/{+hex}         INLINE: hex pairs decoded to raw bytes (NUL
 *                               and invalid UTF-8 included), handed back as
 *                               text, as a content's URI, MIME type and text,
 *                               and as a blob
 *   fuzz://misuse/{how}         INLINE: a builder a read cannot carry
 *   fuzz://async{/key}~{#frag}  ASYNC, complete() inside the callback: a
 *                               key starting with 'e' completes MCPD_ERROR
 *                               with nothing built, 'r' fails to start;
 *                               completion; subscribable
 *   fuzz://doc{/dir}/{name}~{.ext}  INLINE: echoes; no completion callback
 *
 * Prompts
 *   say      INLINE; "text" required, "role" and "style" optional.  Every
 *            argument given, declared or not, comes back as one message,
 *            the kind rotating (by the length of "style") through text,
 *            image, audio, resource link, embedded text and embedded blob;
 *            from the second message on with prompt_role(role), whatever
 *            the client sent (anything but user and assistant must be
 *            refused); completion
 *   misuse   INLINE; "how" required: a builder a prompt cannot carry
 *   later    ASYNC, no arguments: complete() inside the callback
 *
 * Completion (say, misuse, item, async): the typed value "[!]N[,T[m]]..." adds
 * N candidates, at most 300 so that the host's cap of 100 is crossed -- the
 * value cut at every length (inside UTF-8 sequences too), the argument's
 * name, the context -- and then one per context argument; ",T" calls
 * completion_total(T, m present).  A leading '!' first misuses a builder.
 *
 * Subscriptions (text, item, async): the callback reports the URI updated,
 * on the first subscriber and after the last one left; the report reaches
 * the sessions subscribed when the loop runs it.  On subscribing it also
 * reports a URI nobody subscribed to, one built from the variables, and
 * an invalid URI, NULL and no self, which must be refused.
 *
 * Whatever the host must refuse -- a builder the kind of call cannot carry,
 * an invalid role, a fail() code that is no MCPD_ERR_*, resource_updated()
 * of an invalid URI, a second complete() -- the plugin checks, and aborts
 * when it was accepted, which the fuzzer reports as a crash.  A misused
 * call must then be answered -32603; fuzz_protocol checks that no such
 * request ever gets a result.  Keep its list of names in step with this
 * file.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpd.h>

static json_object *arg(json_object *arguments, const char *key) {
  json_object *v = NULL;
  json_object_object_get_ex(arguments, key, &v);
  return v;
}

/* A string member, or "" when it is missing or no string. */
static const char *arg_string(json_object *object, const char *key) {
  json_object *v = arg(object, key);
  return json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                  : "";
}

static const char *plain_json(json_object *v) {
  return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                               JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* --- builders used where they do not belong ------------------------------ */

enum builder {
  B_TEXT,
  B_TEXT_LEN,
  B_IMAGE,
  B_AUDIO,
  B_LINK,
  B_RESOURCE_TEXT,
  B_RESOURCE_BLOB,
  B_STRUCTURED,
  B_ROLE,
  B_VALUE,
  B_TOTAL
};

static const enum builder wrong_for_tool[] = {B_ROLE, B_VALUE, B_TOTAL};
static const enum builder wrong_for_read[] = {
    B_IMAGE, B_AUDIO, B_LINK, B_STRUCTURED, B_ROLE, B_VALUE, B_TOTAL};
static const enum builder wrong_for_prompt[] = {B_STRUCTURED, B_VALUE, B_TOTAL};
static const enum builder wrong_for_completion[] = {
    B_TEXT,          B_TEXT_LEN,      B_IMAGE,      B_AUDIO, B_LINK,
    B_RESOURCE_TEXT, B_RESOURCE_BLOB, B_STRUCTURED, B_ROLE};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int build(const mcpd_host *host, mcpd_call *call, enum builder b,
                 const char *text) {
  switch (b) {
  case B_TEXT:
    return host->result_text(call, text);
  case B_TEXT_LEN:
    return host->result_text_len(call, text, strlen(text));
  case B_IMAGE:
    return host->result_image(call, "aW1n", "image/png");
  case B_AUDIO:
    return host->result_audio(call, "YXVk", "audio/wav");
  case B_LINK:
    return host->result_resource_link(call, "fuzz://text", text, NULL, NULL);
  case B_RESOURCE_TEXT:
    return host->result_resource_text(call, "fuzz://text", NULL, text);
  case B_RESOURCE_BLOB:
    return host->result_resource_blob(call, "fuzz://text", NULL, "AAEC");
  case B_STRUCTURED:
    return host->result_structured(call, json_object_new_object());
  case B_ROLE:
    return host->prompt_role(call, "assistant");
  case B_VALUE:
    return host->completion_value(call, text);
  case B_TOTAL:
    return host->completion_total(call, 1, 1);
  }
  return MCPD_ERROR;
}

/* Uses one of the builders the call's kind cannot carry, picked by `how`.
 * The host must refuse it; the call then fails (-32603) whatever is built
 * afterwards. */
static void misuse(const mcpd_host *host, mcpd_call *call,
                   const enum builder *wrong, size_t n, const char *how) {
  size_t h = 0;
  for (const char *p = how; *p != '\0'; p++)
    h = h * 31 + (unsigned char)*p;
  if (build(host, call, wrong[h % n], how) != MCPD_ERROR)
    abort();
}

/* --- tools ---------------------------------------------------------------- */

static int deferred(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *arguments = req->arguments;
  json_object *text = arg(arguments, "text"), *v;

  if ((v = arg(arguments, "log")) != NULL)
    host->log(host->call_self(call), MCPD_LOG_WARNING, "%s",
              json_object_get_string(v));
  if ((v = arg(arguments, "progress")) != NULL)
    host->progress(call, json_object_get_double(v), 10, "step");
  if (text != NULL)
    host->result_text_len(call, json_object_get_string(text),
                          (size_t)json_object_get_string_len(text));
  if ((v = arg(arguments, "fail")) != NULL && json_object_get_boolean(v))
    return MCPD_ERROR;
  if (text == NULL)
    host->result_text(call, "deferred");
  if (host->complete(call, MCPD_OK) != MCPD_OK)
    abort();
  /* The call is answered: the host must refuse everything now. */
  if (host->complete(call, MCPD_OK) != MCPD_ERROR ||
      host->result_text(call, "late") != MCPD_ERROR ||
      host->progress(call, 1e9, 0, NULL) != MCPD_ERROR)
    abort();
  return MCPD_OK;
}

static json_object *copy_value(json_object *arguments) {
  json_object *v = arg(arguments, "value"), *copy = NULL;
  if (v == NULL || json_object_deep_copy(v, &copy, NULL) != 0)
    return NULL;
  return copy;
}

static int mirror(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *arguments = req->arguments;
  const char *mode = json_object_get_string(arg(arguments, "mode"));
  json_object *v = arg(arguments, "value"), *n;
  const char *text = v != NULL ? json_object_get_string(v) : "null";
  size_t len = v != NULL && json_object_is_type(v, json_type_string)
                   ? (size_t)json_object_get_string_len(v)
                   : strlen(text);
  int rc = MCPD_OK;

  /* A plugin may cut text anywhere, also inside a UTF-8 sequence. */
  if ((n = arg(arguments, "cut")) != NULL &&
      (size_t)json_object_get_int64(n) < len)
    len = (size_t)json_object_get_int64(n);
  for (int i = 0; i < (arg(arguments, "twice") != NULL ? 2 : 1); i++) {
    if (strcmp(mode, "json") == 0) {
      rc = host->result_json(call, copy_value(arguments));
    } else if (strcmp(mode, "structured") == 0) {
      rc = host->result_structured(call, copy_value(arguments));
    } else if (strcmp(mode, "error") == 0) {
      rc = host->result_error(call, "%.*s", (int)len, text);
    } else if (strcmp(mode, "blocks") == 0) {
      host->result_image(call, text, "image/png");
      host->result_audio(call, text, "audio/wav");
      host->result_resource_link(call, text, text, i ? text : NULL, NULL);
      host->result_resource_text(call, text, i ? text : NULL, text);
      rc = host->result_resource_blob(call, text, "x/y", text);
    } else {
      rc = host->result_text_len(call, text, len);
    }
  }
  /* Plugins may return anything; the host must cope. */
  if ((n = arg(arguments, "status")) != NULL)
    return json_object_get_int(n);
  return rc;
}

static int typed(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_structured(call, copy_value(req->arguments));
}

static int misuse_tool(mcpd_call *call, const mcpd_request *req) {
  const char *how = arg_string(req->arguments, "how");
  misuse(req->host, call, wrong_for_tool, COUNT(wrong_for_tool), how);
  return req->host->result_text(call, how);
}

/* --- resources ------------------------------------------------------------ */

static int read_data_text(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, req->data);
}

/* Bytes no client may see raw: the host must escape or repair them. */
#define BYTES(s)                                                               \
  { s, sizeof(s) - 1 }
static const struct {
  const char *bytes;
  size_t len;
} hostile[] = {
    BYTES("nul\0inside"),
    BYTES("\xff\xfe"),             /* never UTF-8 */
    BYTES("\xc0\xaf"),             /* overlong '/' */
    BYTES("\xed\xa0\x80"),         /* a surrogate */
    BYTES("\xf4\x90\x80\x80"),     /* past U+10FFFF */
    BYTES("\xe2\x82"),             /* cut short */
    BYTES("cr\rlf\nend"),          /* a forged line break */
    BYTES("\x01\x1f\x7f\"\\"),     /* controls, quote, backslash */
    BYTES("\xf0\x9f\x98\x80 ok"),  /* fine */
    BYTES("\\u0000\\ud800\"}\n{"), /* escapes as text */
};

static int read_bytes(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  for (size_t i = 0; i < COUNT(hostile); i++)
    if (host->result_text_len(call, hostile[i].bytes, hostile[i].len) !=
        MCPD_OK)
      abort();
  host->result_resource_text(call, "fuzz://bytes/\xff\n", "text/\xc0\xaf",
                             "\xed\xa0\x80");
  return host->result_resource_blob(call, NULL, "\x7f", "\xe2\x82\r\n");
}

static int read_empty(mcpd_call *call, const mcpd_request *req) {
  (void)call, (void)req;
  return MCPD_OK; /* nothing built: -32603 */
}

/* --- subscriptions ------------------------------------------------------ */

static void on_subscribe(const mcpd_request *req, int subscribed) {
  const mcpd_host *host = req->host;
  json_object *id = arg(req->variables, "id");
  char uri[300];

  /* Subscribed URIs are valid: the host checked them. */
  if (host->resource_updated(req->self, req->name) != MCPD_OK)
    abort();
  if (!subscribed)
    return;
  if (host->resource_updated(req->self, "no scheme") != MCPD_ERROR ||
      host->resource_updated(req->self, "fuzz://a b") != MCPD_ERROR ||
      host->resource_updated(req->self, "fuzz://\xff") != MCPD_ERROR ||
      host->resource_updated(req->self, ":empty-scheme") != MCPD_ERROR ||
      host->resource_updated(req->self, NULL) != MCPD_ERROR ||
      host->resource_updated(NULL, req->name) != MCPD_ERROR)
    abort();
  if (host->resource_updated(req->self, "fuzz://nobody") != MCPD_OK)
    abort();
  /* Valid or not, depending on what the variable decoded to. */
  if (id != NULL) {
    snprintf(uri, sizeof(uri), "fuzz://item/%s/changed",
             json_object_get_string(id));
    host->resource_updated(req->self, uri);
  }
}

/* --- completion ------------------------------------------------------------
 */

/* Reads decimal digits at *p, saturating at `max`. */
static size_t digits(const char **p, size_t max) {
  size_t n = 0;
  for (; **p >= '0' && **p <= '9'; (*p)++)
    n = n > (max - (size_t)(**p - '0')) / 10 ? max
                                             : n * 10 + (size_t)(**p - '0');
  return n;
}

static int add_value(const mcpd_host *host, mcpd_call *call,
                     const char *value) {
  if (host->completion_value(call, value) != MCPD_OK)
    abort();
  return MCPD_OK;
}

static int complete_cb(mcpd_call *call, const mcpd_request *req,
                       const char *argument, const char *value,
                       json_object *context) {
  const mcpd_host *host = req->host;
  const char *p = value;
  size_t len = strlen(value), n, total = 0, n_context;
  int has_total = 0, has_more = 0;
  char *cut = malloc(len + 1), text[256];

  if (cut == NULL)
    return MCPD_ERROR;
  if (*p == '!')
    misuse(host, call, wrong_for_completion, COUNT(wrong_for_completion), ++p);
  n = digits(&p, 300);
  if (*p == ',') {
    p++;
    has_total = 1;
    total = digits(&p, SIZE_MAX);
    if (*p == 'm')
      has_more = 1, p++;
  }
  if (host->completion_value(call, NULL) != MCPD_ERROR)
    abort();
  n_context = (size_t)json_object_object_length(context);
  for (size_t i = 0; i < n; i++) {
    switch (i % 3) {
    case 0: /* the value cut anywhere, inside a UTF-8 sequence too */
      memcpy(cut, value, len + 1);
      cut[i % (len + 1)] = '\0';
      add_value(host, call, cut);
      break;
    case 1: /* snprintf may cut inside a UTF-8 sequence too */
      snprintf(text, sizeof(text), "%s-%zu", argument, i);
      add_value(host, call, text);
      break;
    default: {
      size_t k = 0, want = n_context ? (i / 3) % n_context : 0;
      json_object_object_foreach(context, key, v) {
        if (k++ == want) {
          snprintf(text, sizeof(text), "%s=%s", key, json_object_get_string(v));
          add_value(host, call, text);
        }
      }
      if (n_context == 0)
        add_value(host, call, p);
    }
    }
  }
  json_object_object_foreach(context, key, v) {
    snprintf(text, sizeof(text), "context %s=%s", key,
             json_object_get_string(v));
    add_value(host, call, text);
  }
  free(cut);
  if (has_total && host->completion_total(call, total, has_more) != MCPD_OK)
    abort();
  return MCPD_OK;
}

/* The same, for ASYNC entries: completed before the callback returns. */
static int complete_async(mcpd_call *call, const mcpd_request *req,
                          const char *argument, const char *value,
                          json_object *context) {
  int rc = complete_cb(call, req, argument, value, context);
  if (req->host->complete(call, rc) != MCPD_OK ||
      req->host->complete(call, rc) != MCPD_ERROR)
    abort();
  return MCPD_OK;
}

/* --- templates ------------------------------------------------------------ */

static int read_item(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  if (host->result_textf(call, "id=%s rest=%s",
                         arg_string(req->variables, "id"),
                         arg_string(req->variables, "rest")) != MCPD_OK)
    abort();
  return host->result_resource_text(call, NULL, "application/json",
                                    plain_json(req->variables));
}

static int read_fail(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *spec = arg_string(req->variables, "code");
  char *end;
  long code = strtol(spec, &end, 10);
  int valid, rc;

  if (code < INT_MIN || code > INT_MAX)
    code = 0;
  valid = code == MCPD_ERR_NOT_FOUND || code == MCPD_ERR_INVALID_PARAMS ||
          code == MCPD_ERR_INTERNAL;
  if (strchr(end, 't') != NULL)
    host->result_text(call, "before");
  if (strchr(end, 'x') != NULL)
    rc = host->fail(call, (int)code, "bad \xff\xc0 %s", spec);
  else
    rc = host->fail(call, (int)code, "failed: %s", spec);
  if (rc != (valid ? MCPD_OK : MCPD_ERROR))
    abort();
  if (strchr(end, 'f') != NULL &&
      host->fail(call, MCPD_ERR_INVALID_PARAMS, "again") != MCPD_OK)
    abort();
  if (strchr(end, 'r') != NULL &&
      host->result_error(call, "an error result on a read") != MCPD_OK)
    abort();
  if (strchr(end, 'T') != NULL)
    host->result_text(call, "after");
  return strchr(end, 'e') != NULL ? MCPD_ERROR : MCPD_OK;
}

static int hex(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static int read_hex(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *in = arg_string(req->variables, "hex");
  char *out = malloc(strlen(in) + 1);
  size_t n = 0;
  int rc;

  if (out == NULL)
    return MCPD_ERROR;
  /* Hex pairs become bytes; anything else passes through. */
  for (size_t i = 0; in[i] != '\0'; i++) {
    if (hex(in[i]) >= 0 && hex(in[i + 1]) >= 0) {
      out[n++] = (char)(hex(in[i]) * 16 + hex(in[i + 1]));
      i++;
    } else {
      out[n++] = in[i];
    }
  }
  out[n] = '\0';
  host->result_text_len(call, out, n);
  host->result_resource_text(call, out, out, out);
  rc = host->result_resource_blob(call, NULL, out, out);
  free(out);
  return rc;
}

static int read_misuse(mcpd_call *call, const mcpd_request *req) {
  const char *how = arg_string(req->variables, "how");
  misuse(req->host, call, wrong_for_read, COUNT(wrong_for_read), how);
  return req->host->result_text(call, how);
}

static int read_async(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *key = arg_string(req->variables, "key");
  int status = MCPD_OK;

  if (key[0] == 'r')
    return MCPD_ERROR; /* did not start: complete() must not follow */
  if (key[0] == 'e')
    status = MCPD_ERROR;
  else
    host->result_textf(call, "async %s", plain_json(req->variables));
  if (host->complete(call, status) != MCPD_OK ||
      host->complete(call, status) != MCPD_ERROR ||
      host->result_text(call, "late") != MCPD_ERROR)
    abort();
  return MCPD_OK;
}

static int read_doc(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, plain_json(req->variables));
}

/* --- prompts ----------------------------------------------------------------
 */

static int get_say(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *role = arg(req->arguments, "role");
  size_t i = 0, shift = strlen(arg_string(req->arguments, "style"));

  if (host->prompt_role(call, NULL) != MCPD_ERROR)
    abort();
  json_object_object_foreach(req->arguments, key, v) {
    const char *text = json_object_get_string(v);
    int rc = MCPD_ERROR;

    if (i == 1 && role != NULL) {
      const char *r = json_object_get_string(role);
      int ok = strcmp(r, "user") == 0 || strcmp(r, "assistant") == 0;
      if (host->prompt_role(call, r) != (ok ? MCPD_OK : MCPD_ERROR))
        abort();
    }
    switch ((i + shift) % 6) {
    case 0:
      rc = host->result_textf(call, "%s=%s", key, text);
      break;
    case 1:
      rc = host->result_image(call, text, "image/png");
      break;
    case 2:
      rc = host->result_audio(call, text, "audio/wav");
      break;
    case 3:
      rc = host->result_resource_link(call, text, key, text, NULL);
      break;
    case 4:
      rc = host->result_resource_text(call, "fuzz://text", "text/plain", text);
      break;
    default:
      rc = host->result_resource_blob(call, text, NULL, text);
      break;
    }
    if (rc != MCPD_OK)
      abort();
    i++;
  }
  if (host->prompt_role(call, "assistant") != MCPD_OK)
    abort();
  return host->result_textf(call, "%zu arguments", i);
}

static int get_misuse(mcpd_call *call, const mcpd_request *req) {
  const char *how = arg_string(req->arguments, "how");
  misuse(req->host, call, wrong_for_prompt, COUNT(wrong_for_prompt), how);
  return req->host->result_text(call, how);
}

static int get_later(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  host->result_text(call, "later");
  if (host->complete(call, MCPD_OK) != MCPD_OK ||
      host->prompt_role(call, "user") != MCPD_ERROR)
    abort();
  return MCPD_OK;
}

/* --- tables ------------------------------------------------------------------
 */

static const mcpd_tool tools[] = {
    {
        .name = "deferred",
        .description = "Answers on the next loop turn.",
        .input_schema = "{\"type\":\"object\",\"properties\":{"
                        "\"text\":{\"type\":\"string\"},"
                        "\"log\":{\"type\":\"string\"},"
                        "\"progress\":{\"type\":\"number\"},"
                        "\"fail\":{\"type\":\"boolean\"}},"
                        "\"additionalProperties\":false}",
        .call = deferred,
        .exec = MCPD_EXEC_ASYNC,
    },
    {
        .name = "mirror",
        .description = "Returns its value in the form asked for.",
        .input_schema = "{\"type\":\"object\",\"properties\":{"
                        "\"mode\":{\"enum\":[\"json\",\"structured\","
                        "\"text\",\"error\",\"blocks\"]},\"value\":{},"
                        "\"cut\":{\"type\":\"integer\",\"minimum\":0},"
                        "\"status\":{\"type\":\"integer\"},"
                        "\"twice\":{\"type\":\"boolean\"}},"
                        "\"required\":[\"mode\"]}",
        .call = mirror,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "typed",
        .description = "Returns its value as structured content.",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"value\":{}}}",
        .output_schema = "{\"type\":\"object\",\"properties\":{"
                         "\"n\":{\"type\":\"integer\",\"minimum\":0},"
                         "\"s\":{\"type\":\"string\",\"maxLength\":4}},"
                         "\"required\":[\"n\"],"
                         "\"additionalProperties\":false}",
        .call = typed,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        /* Any arguments: a schema refusal would be a result. */
        .name = "misuse",
        .description = "Uses a builder no tool result can carry.",
        .call = misuse_tool,
        .exec = MCPD_EXEC_INLINE,
    },
    MCPD_TOOL_END,
};

static const mcpd_resource resources[] = {
    {.uri = "fuzz://text",
     .name = "text",
     .title = "Text",
     .description = "The entry's data as text.",
     .mime_type = "text/plain",
     .read = read_data_text,
     .subscribe = on_subscribe,
     .exec = MCPD_EXEC_INLINE,
     .data = (void *)"fuzzfix text \xc3\xa9"},
    {.uri = "fuzz://bytes",
     .name = "bytes",
     .description = "Bytes the host must escape or repair.",
     .read = read_bytes,
     .exec = MCPD_EXEC_INLINE},
    {.uri = "fuzz://item/0/shadow",
     .name = "shadow",
     .description = "An exact URI that the item template also matches.",
     .read = read_data_text,
     .exec = MCPD_EXEC_INLINE,
     .data = (void *)"exact, not the template"},
    {.uri = "fuzz://empty",
     .name = "empty",
     .read = read_empty,
     .exec = MCPD_EXEC_INLINE},
    MCPD_RESOURCE_END,
};

static const mcpd_resource_template templates[] = {
    {.uri_template = "fuzz://item/{id}/{+rest}",
     .name = "item",
     .description = "Echoes its variables.",
     .mime_type = "text/plain",
     .read = read_item,
     .complete = complete_cb,
     .subscribe = on_subscribe,
     .exec = MCPD_EXEC_INLINE},
    {.uri_template = "fuzz://fail/{code}",
     .name = "fail",
     .read = read_fail,
     .exec = MCPD_EXEC_INLINE},
    {.uri_template = "fuzz://bytes/{+hex}",
     .name = "hex",
     .read = read_hex,
     .exec = MCPD_EXEC_INLINE},
    {.uri_template = "fuzz://misuse/{how}",
     .name = "misuse",
     .read = read_misuse,
     .exec = MCPD_EXEC_INLINE},
    {.uri_template = "fuzz://async{/key}~{#frag}",
     .name = "async",
     .read = read_async,
     .complete = complete_async,
     .subscribe = on_subscribe,
     .exec = MCPD_EXEC_ASYNC},
    {.uri_template = "fuzz://doc{/dir}/{name}~{.ext}",
     .name = "doc",
     .read = read_doc,
     .exec = MCPD_EXEC_INLINE},
    MCPD_RESOURCE_TEMPLATE_END,
};

static const mcpd_prompt_argument say_arguments[] = {
    {.name = "text", .description = "Said back.", .required = 1},
    {.name = "role", .description = "user, assistant or anything else."},
    {.name = "style", .title = "Style \xe2\x80\x94 its length picks kinds"},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt_argument misuse_arguments[] = {
    {.name = "how", .required = 1},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt prompts[] = {
    {.name = "say",
     .title = "Say",
     .description = "Every argument back, one message each \xf0\x9f\x97\xa3.",
     .arguments = say_arguments,
     .get = get_say,
     .complete = complete_cb,
     .exec = MCPD_EXEC_INLINE},
    {.name = "misuse",
     .arguments = misuse_arguments,
     .get = get_misuse,
     .complete = complete_cb,
     .exec = MCPD_EXEC_INLINE},
    {.name = "later", .get = get_later, .exec = MCPD_EXEC_ASYNC},
    MCPD_PROMPT_END,
};

MCPD_PLUGIN_DEFINE(.name = "fuzzfix", .version = "1.0",
                   .description = "Fixture entries for fuzz_protocol.",
                   .tools = tools, .resources = resources,
                   .resource_templates = templates, .prompts = prompts);
