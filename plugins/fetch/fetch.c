/* SPDX-License-Identifier: MIT */
/* fetch.c -- the "fetch" plugin: fetches a URL and returns what a model
 * can read: HTML reduced to text, JSON pretty-printed, other text as it
 * is, and PNG, JPEG, GIF and WebP images as image content.
 *
 * What may be fetched is decided in policy.c (schemes, host lists, address
 * classes), robots.c (robots.txt) and http.c (the transfers, which check
 * every redirect hop and every address connected to).  This file holds
 * the configuration, init/fini and the tool, which turns a response into
 * content blocks.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "config.h"

#include "../common/base64.h"
#include "../common/plugin_config.h"
#include "../common/utf8.h"
#include "fetch.h"

#define FETCH_DEFAULT_MAX_BYTES (5 * 1024 * 1024)
#define FETCH_DEFAULT_TIMEOUT_MS 30000
#define FETCH_DEFAULT_MAX_REDIRECTS 5
#define FETCH_DEFAULT_USER_AGENT                                               \
  "mcpd-fetch/" PACKAGE_VERSION " (+https://modelcontextprotocol.io)"
/* How much text one call returns unless its maxBytes says otherwise. */
#define FETCH_DEFAULT_RETURN_BYTES (100 * 1024)
/* How much of an error response's text is quoted. */
#define FETCH_ERROR_QUOTE 1000

/* --- rendering a response ------------------------------------------------- */

/* The charset parameter of a Content-Type into buf[40], or "". */
static void charset_of(const char *content_type, char buf[40]) {
  const char *p = content_type;

  buf[0] = '\0';
  while (p != NULL && (p = strchr(p, ';')) != NULL) {
    p++;
    while (*p == ' ' || *p == '\t')
      p++;
    if (strncasecmp(p, "charset=", 8) == 0) {
      size_t k = 0;
      p += 8;
      if (*p == '"')
        p++;
      while (*p && *p != '"' && *p != ';' && !isspace((unsigned char)*p) &&
             k < 39)
        buf[k++] = *p++;
      buf[k] = '\0';
      return;
    }
  }
}

/* The image type the bytes are, by their signature, or NULL. */
static const char *image_signature(const unsigned char *d, size_t n) {
  if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0)
    return "image/png";
  if (n >= 3 && memcmp(d, "\xff\xd8\xff", 3) == 0)
    return "image/jpeg";
  if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0))
    return "image/gif";
  if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0)
    return "image/webp";
  return NULL;
}

/* Decides what a body without a usable Content-Type is. */
static enum fetch_kind sniff(const struct pc_buf *body, const char **mime) {
  const char *d = body->data ? body->data : "";
  size_t n = body->len, i = 0;

  if ((*mime = image_signature((const unsigned char *)d, n)) != NULL)
    return FETCH_KIND_IMAGE;
  while (i < n && isspace((unsigned char)d[i]))
    i++;
  if ((n - i >= 14 && strncasecmp(d + i, "<!doctype html", 14) == 0) ||
      (n - i >= 5 && strncasecmp(d + i, "<html", 5) == 0))
    return FETCH_KIND_HTML;
  if (memchr(d, '\0', n) != NULL)
    return FETCH_KIND_NONE;
  return FETCH_KIND_TEXT; /* invalid UTF-8 is replaced, not refused */
}

/* JSON re-indented by json-c, or NULL when it does not parse (then it is
 * returned as it came). */
static char *json_pretty(const char *text, size_t n) {
  struct json_tokener *tok = json_tokener_new_ex(64);
  json_object *v;
  char *out = NULL;

  if (tok == NULL || n > (size_t)INT32_MAX) {
    json_tokener_free(tok);
    return NULL;
  }
  v = json_tokener_parse_ex(tok, text, (int)n);
  if (v != NULL && json_tokener_get_error(tok) == json_tokener_success) {
    /* One value and nothing after it but blanks. */
    for (size_t i = json_tokener_get_parse_end(tok); i < n && v != NULL; i++)
      if (!isspace((unsigned char)text[i])) {
        json_object_put(v);
        v = NULL;
      }
  }
  if (v != NULL)
    out = strdup(json_object_to_json_string_ext(
        v, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
               JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(v);
  json_tokener_free(tok);
  return out;
}

/* The text of a body, as the tool returns it (malloc; NULL: no memory). */
static char *render_text(const struct fetch_response *resp,
                         enum fetch_kind kind, int raw, size_t *len) {
  char charset[40];
  char *text, *pretty;
  size_t n;

  charset_of(resp->content_type, charset);
  if (charset[0] == '\0' && kind == FETCH_KIND_HTML)
    fetch_html_meta_charset(resp->body.data ? resp->body.data : "",
                            resp->body.len, charset);
  /* A cut download may end inside a character: leave that one out. */
  n = resp->cut ? pc_utf8_cut_loose(resp->body.data, resp->body.len)
                : resp->body.len;
  if ((text = fetch_to_utf8(resp->body.data ? resp->body.data : "", n, charset,
                            &n)) == NULL)
    return NULL;
  if (raw)
    ;
  else if (kind == FETCH_KIND_HTML) {
    struct pc_buf out = {0};

    fetch_html_to_text(text, n, &out);
    free(text);
    if (out.failed) {
      pc_buf_free(&out);
      return NULL;
    }
    n = out.len;
    text = out.data ? out.data : strdup("");
  } else if (kind == FETCH_KIND_JSON && !resp->cut &&
             (pretty = json_pretty(text, n)) != NULL) {
    free(text);
    text = pretty;
    n = strlen(text);
  }
  *len = n;
  return text;
}

/* Returns the image in the response, after checking that its bytes are
 * the image its Content-Type says. */
static int return_image(mcpd_call *call, const mcpd_request *req,
                        const struct fetch_response *resp, const char *mime) {
  const mcpd_host *host = req->host;
  const unsigned char *d = (const unsigned char *)resp->body.data;
  const char *real = image_signature(d, resp->body.len);
  char *b64;
  int rc;

  if (real == NULL || (mime != NULL && strcmp(real, mime) != 0))
    return host->result_error(call,
                              "refused: %s says it is %s, but its bytes are "
                              "%s",
                              resp->final_url, mime ? mime : "an image",
                              real ? real : "no PNG, JPEG, GIF or WebP image");
  if ((b64 = pc_base64_encode(d, resp->body.len)) == NULL)
    return host->result_error(call, "out of memory");
  rc = host->result_image(call, b64, real);
  free(b64);
  return rc;
}

static int return_error_status(mcpd_call *call, const mcpd_request *req,
                               const struct fetch_response *resp) {
  const mcpd_host *host = req->host;
  enum fetch_kind kind = fetch_kind_of(resp->content_type);
  size_t n = 0;
  char *text = NULL;
  int rc;

  if (kind == FETCH_KIND_HTML || kind == FETCH_KIND_JSON ||
      kind == FETCH_KIND_TEXT)
    text = render_text(resp, kind, 0, &n);
  if (text != NULL && n > 0) {
    size_t cut =
        pc_utf8_cut_loose(text, n < FETCH_ERROR_QUOTE ? n : FETCH_ERROR_QUOTE);
    rc = host->result_error(call, "%s answered HTTP %ld:\n\n%.*s%s",
                            resp->final_url, resp->status, (int)cut, text,
                            cut < n ? "\n[...]" : "");
  } else {
    rc = host->result_error(call, "%s answered HTTP %ld", resp->final_url,
                            resp->status);
  }
  free(text);
  return rc;
}

/* The window [start, start + max) of the text, cut on UTF-8 boundaries,
 * with a note when there is more. */
static int return_text(mcpd_call *call, const mcpd_request *req,
                       const struct fetch_response *resp, const char *text,
                       size_t n, size_t start, size_t max) {
  const struct fetch_state *st = req->state;
  const mcpd_host *host = req->host;
  struct pc_buf b = {0};
  size_t end;
  int rc;

  if (start > 0 && start >= n)
    return host->result_error(call,
                              "startIndex %zu is past the end: the content "
                              "of %s is %zu bytes",
                              start, resp->final_url, n);
  /* A start inside a character moves on to the next one. */
  while (start < n && ((unsigned char)text[start] & 0xc0) == 0x80)
    start++;
  end = n - start > max ? start + pc_utf8_cut_loose(text + start, max) : n;
  if (n == 0)
    pc_buf_puts(&b, "(the response has no content)");
  pc_buf_append(&b, text + start, end - start);
  if (end < n)
    pc_buf_printf(&b,
                  "\n\n[Content truncated: this is bytes %zu to %zu of "
                  "%zu. Call fetch again with startIndex %zu to read "
                  "on.]",
                  start, end, n, end);
  if (resp->cut)
    pc_buf_printf(&b,
                  "\n\n[The download stopped at this server's maxBytes "
                  "(%zu bytes): the rest of the document was not "
                  "fetched.]",
                  st->max_bytes);
  rc = b.failed ? host->result_error(call, "out of memory")
                : host->result_text_len(call, b.data ? b.data : "", b.len);
  pc_buf_free(&b);
  return rc;
}

static int fetch_cb(mcpd_call *call, const mcpd_request *req) {
  struct fetch_state *st = req->state;
  const mcpd_host *host = req->host;
  json_object *v;
  const char *url, *mime = NULL;
  size_t max = FETCH_DEFAULT_RETURN_BYTES, start = 0, n = 0;
  struct fetch_response resp;
  enum fetch_kind kind;
  int raw = 0, rc;
  char *why = NULL, *text;

  url = json_object_get_string(json_object_object_get(req->arguments, "url"));
  if (json_object_object_get_ex(req->arguments, "maxBytes", &v))
    max = (size_t)json_object_get_int64(v);
  if (json_object_object_get_ex(req->arguments, "startIndex", &v))
    start = (size_t)json_object_get_int64(v);
  if (json_object_object_get_ex(req->arguments, "raw", &v))
    raw = json_object_get_boolean(v);
  if (max > st->max_bytes)
    max = st->max_bytes;
  if (url == NULL ||
      strlen(url) != (size_t)json_object_get_string_len(
                         json_object_object_get(req->arguments, "url")))
    return host->result_error(call, "argument 'url' must be a URL");

  if ((rc = fetch_url(st, call, url, &resp, &why)) != FETCH_OK) {
    rc = host->result_error(call, "%s", why ? why : "out of memory");
    free(why);
    return rc;
  }
  if (resp.status < 200 || resp.status >= 300) {
    rc = return_error_status(call, req, &resp);
    fetch_response_free(&resp);
    return rc;
  }
  kind = fetch_kind_of(resp.content_type);
  if (kind == FETCH_KIND_UNKNOWN)
    kind = sniff(&resp.body, &mime);
  if (kind == FETCH_KIND_IMAGE) {
    if (mime == NULL) {
      /* The declared type, without parameters, to compare. */
      static const char *const types[] = {"image/png", "image/jpeg",
                                          "image/gif", "image/webp", NULL};
      for (size_t i = 0; types[i] != NULL; i++)
        if (strncasecmp(resp.content_type, types[i], strlen(types[i])) == 0)
          mime = types[i];
    }
    rc = return_image(call, req, &resp, mime);
  } else if (kind == FETCH_KIND_NONE) {
    rc = host->result_error(call,
                            "refused: %s is binary content of no type this "
                            "tool returns (HTML, JSON, text, or PNG, JPEG, "
                            "GIF and WebP images)",
                            resp.final_url);
  } else if ((text = render_text(&resp, kind, raw, &n)) == NULL) {
    rc = host->result_error(call, "out of memory");
  } else {
    rc = return_text(call, req, &resp, text, n, start, max);
    free(text);
  }
  fetch_response_free(&resp);
  return rc;
}

static const mcpd_tool tools[] = {
    {.name = "fetch",
     .title = "Fetch a web page",
     .description =
         "Fetches a URL from the internet and returns its content: an HTML "
         "page as readable text, JSON pretty-printed, other text as it is, "
         "and PNG, JPEG, GIF and WebP images as images. Long text comes in "
         "parts: the answer says which startIndex reads on. Private and "
         "local addresses, and pages robots.txt disallows, are refused.",
     .input_schema =
         "{\"type\":\"object\",\"required\":[\"url\"],"
         "\"additionalProperties\":false,\"properties\":{"
         "\"url\":{\"type\":\"string\",\"description\":\"The http or https "
         "URL to fetch.\"},"
         "\"maxBytes\":{\"type\":\"integer\",\"minimum\":1,"
         "\"description\":\"The most bytes of text to return (default "
         "102400).\"},"
         "\"startIndex\":{\"type\":\"integer\",\"minimum\":0,"
         "\"description\":\"Where in the text to start, in bytes: the "
         "value an earlier, truncated answer gave (default 0).\"},"
         "\"raw\":{\"type\":\"boolean\",\"description\":\"Return HTML and "
         "JSON as the server sent them, not simplified (default "
         "false).\"}}}",
     .call = fetch_cb,
     .exec = MCPD_EXEC_POOL,
     .read_only_hint = MCPD_HINT_TRUE,
     .open_world_hint = MCPD_HINT_TRUE},
    MCPD_TOOL_END,
};

/* --- configuration ------------------------------------------------------- */

static int config_hosts(const mcpd_host *host, char **errmsg, const char *key,
                        json_object *v, struct fetch_hosts *list) {
  size_t n;

  if (!json_object_is_type(v, json_type_array))
    return config_error(host, errmsg,
                        "\"%s\" must be an array of host names, e.g. "
                        "[\"example.com\", \"*.example.org\"]",
                        key);
  n = json_object_array_length(v);
  for (size_t i = 0; i < n; i++) {
    json_object *item = json_object_array_get_idx(v, i);
    const char *why = NULL;

    if (!json_object_is_type(item, json_type_string))
      return config_error(host, errmsg, "%s[%zu] must be a string", key, i);
    if (fetch_hosts_add(list, json_object_get_string(item), &why) != 0)
      return config_error(host, errmsg, "%s[%zu] \"%s\" %s", key, i,
                          json_object_get_string(item), why);
  }
  return MCPD_OK;
}

static int config_agent(struct fetch_state *st, char **errmsg, json_object *v) {
  const char *s = json_object_get_string(v);
  size_t n = 0;

  if (!json_object_is_type(v, json_type_string) || s[0] == '\0' ||
      strlen(s) > 256)
    return config_error(st->host, errmsg,
                        "\"userAgent\" must be a string of 1 to 256 "
                        "characters");
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
      return config_error(st->host, errmsg,
                          "\"userAgent\" must be printable ASCII");
  while (isalpha((unsigned char)s[n]) || s[n] == '-' || s[n] == '_')
    n++;
  if (n == 0)
    return config_error(st->host, errmsg,
                        "\"userAgent\" must begin with a product name, as "
                        "in \"my-fetcher/1.0\": robots.txt rules are "
                        "matched against it");
  free(st->user_agent);
  st->user_agent = strdup(s);
  return st->user_agent ? MCPD_OK
                        : config_error(st->host, errmsg, "out of memory");
}

static int parse_config(struct fetch_state *st, json_object *config,
                        char **errmsg) {
  const mcpd_host *host = st->host;

  if (config == NULL)
    return MCPD_OK;
  if (!json_object_is_type(config, json_type_object))
    return config_error(host, errmsg,
                        "the config must be an object, e.g. {\"plugins\": "
                        "{\"fetch\": {\"denyHosts\": [\"*.internal\"]}}}");
  json_object_object_foreach(config, key, v) {
    int64_t n = 0;
    int rc;

    if (strcmp(key, "maxBytes") == 0) {
      if ((rc = config_int(host, errmsg, key, v, 1, (int64_t)1 << 30, &n)) ==
          MCPD_OK)
        st->max_bytes = (size_t)n;
    } else if (strcmp(key, "timeoutMs") == 0) {
      if ((rc = config_int(host, errmsg, key, v, 1, 3600000, &n)) == MCPD_OK)
        st->timeout_ms = (long)n;
    } else if (strcmp(key, "maxRedirects") == 0) {
      if ((rc = config_int(host, errmsg, key, v, 0, 50, &n)) == MCPD_OK)
        st->max_redirects = (long)n;
    } else if (strcmp(key, "userAgent") == 0) {
      rc = config_agent(st, errmsg, v);
    } else if (strcmp(key, "allowHosts") == 0) {
      rc = config_hosts(host, errmsg, key, v, &st->allow_hosts);
    } else if (strcmp(key, "denyHosts") == 0) {
      rc = config_hosts(host, errmsg, key, v, &st->deny_hosts);
    } else if (strcmp(key, "allowPrivate") == 0) {
      rc = config_bool(host, errmsg, key, v, &st->allow_private);
    } else if (strcmp(key, "robots") == 0) {
      rc = config_bool(host, errmsg, key, v, &st->robots);
    } else {
      rc = config_error(host, errmsg,
                        "unknown key \"%s\" (known: maxBytes, timeoutMs, "
                        "maxRedirects, userAgent, allowHosts, denyHosts, "
                        "allowPrivate, robots)",
                        key);
    }
    if (rc != MCPD_OK)
      return rc;
  }
  return MCPD_OK;
}

/* --- init and fini ------------------------------------------------------- */

/* Keeps libcurl mapped for the life of the process.  A transfer cancelled
 * while its name is being resolved leaves libcurl's resolver thread to
 * finish on its own, detached; were libcurl unmapped with this plugin
 * (an unload, a reload), that thread would run in unmapped code. */
static void pin_libcurl(const mcpd_host *host, mcpd_self *self) {
  Dl_info info;
  const char *why;
  void *handle;

  if (dladdr((void *)curl_easy_init, &info) == 0 || info.dli_fname == NULL ||
      (handle = dlopen(info.dli_fname,
                       RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) == NULL) {
    why = dlerror();
    host->log(self, MCPD_LOG_WARNING,
              "cannot keep libcurl loaded (%s); unloading this plugin "
              "while a name is being resolved may crash mcpd",
              why ? why : "dladdr found no file");
    return;
  }
  /* The reference dlopen() took goes; RTLD_NODELETE stays. */
  dlclose(handle);
}

static void fetch_fini(void *state) {
  struct fetch_state *st = state;

  if (st == NULL)
    return;
  fetch_robots_cache_free(st->robots_cache);
  fetch_hosts_free(&st->allow_hosts);
  fetch_hosts_free(&st->deny_hosts);
  free(st->user_agent);
  free(st->robots_agent);
  pthread_mutex_destroy(&st->lock);
  if (st->curl_ready)
    curl_global_cleanup();
  free(st);
}

static int fetch_init(const mcpd_host *host, mcpd_self *self,
                      json_object *config, void **state, char **errmsg) {
  struct fetch_state *st = calloc(1, sizeof(*st));
  size_t n = 0;

  if (st == NULL || pthread_mutex_init(&st->lock, NULL) != 0) {
    free(st);
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  *state = st; /* fini() frees it, also when init fails */
  st->host = host;
  st->self = self;
  st->max_bytes = FETCH_DEFAULT_MAX_BYTES;
  st->timeout_ms = FETCH_DEFAULT_TIMEOUT_MS;
  st->max_redirects = FETCH_DEFAULT_MAX_REDIRECTS;
  st->robots = 1;
  if ((st->user_agent = strdup(FETCH_DEFAULT_USER_AGENT)) == NULL) {
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  if (parse_config(st, config, errmsg) != MCPD_OK)
    return MCPD_ERROR;
  /* The product token robots.txt groups are matched against. */
  while (isalpha((unsigned char)st->user_agent[n]) ||
         st->user_agent[n] == '-' || st->user_agent[n] == '_')
    n++;
  if ((st->robots_agent = strndup(st->user_agent, n)) == NULL) {
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  /* On the loop thread, before any call: curl_global_init() is not
   * thread-safe in every libcurl we support. */
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    *errmsg = host->mprintf("curl_global_init failed");
    return MCPD_ERROR;
  }
  st->curl_ready = 1;
  pin_libcurl(host, self);
  host->log(self, MCPD_LOG_INFO,
            "fetching as \"%s\": at most %zu bytes and %ld ms a call, %ld "
            "redirects; robots.txt %s; private addresses %s",
            st->user_agent, st->max_bytes, st->timeout_ms, st->max_redirects,
            st->robots ? "honoured" : "ignored",
            st->allow_private ? "allowed" : "refused");
  return MCPD_OK;
}

MCPD_PLUGIN_DEFINE(.name = "fetch", .version = "1.0",
                   .description = "Fetches web pages, JSON and images over "
                                  "http and https, with limits, host lists, "
                                  "robots.txt and no private addresses.",
                   .init = fetch_init, .fini = fetch_fini, .tools = tools);
