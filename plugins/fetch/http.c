/* SPDX-License-Identifier: MIT */
/* http.c -- the transfers of one call of the "fetch" tool.
 *
 * A call runs on a pool worker and owns one libcurl multi handle (so its
 * connections are reused from robots.txt to page to redirect) with one
 * easy handle, polled with curl_multi_poll().  Cancellation wakes the poll
 * at once: the on_cancel callback, on the loop thread, calls
 * curl_multi_wakeup() on every running transfer of the plugin (it knows
 * no per-call memory, which may be gone by the time it runs), and each
 * worker then asks cancelled() about its own call.
 *
 * libcurl follows no redirect: each hop is checked as the first URL was,
 * by scheme, host lists and robots.txt.  Every address libcurl connects
 * to passes through open_socket_cb(), which refuses private and similar
 * addresses unless the host is trusted: that is the address actually
 * connected to, after DNS, so a rebinding name cannot slip through.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "fetch.h"

/* robots.txt: how much is read (RFC 9309 asks for at least 500 KiB), how
 * many redirects are followed, and how long an answer is kept. */
#define ROBOTS_MAX_BYTES (512 * 1024)
#define ROBOTS_MAX_REDIRECTS 5
#define ROBOTS_TTL_MS (60LL * 60 * 1000)
#define ROBOTS_ERROR_TTL_MS (60LL * 1000)
/* The body of an error response kept, to quote from. */
#define ERROR_BODY_MAX (16 * 1024)
/* Progress at most this often. */
#define PROGRESS_EVERY_MS 100
/* The longest a poll sleeps without looking at the clock. */
#define POLL_MS 1000

struct fetch_job {
  struct fetch_state *st;
  mcpd_call *call;
  CURLM *multi;
  CURL *easy;
  long long deadline;
  struct fetch_job *next; /* in st->jobs, under st->lock */
  char errbuf[CURL_ERROR_SIZE];

  /* The transfer under way. */
  const struct fetch_target *target;
  int page;     /* the page (not robots.txt): types, progress */
  size_t limit; /* the most body bytes kept */
  struct pc_buf *body;
  int cut;     /* the body was longer than `limit` */
  long status; /* of the final response, once its headers are in */
  enum fetch_kind kind;
  char *refused;  /* why an address was refused (malloc) */
  int abort_code; /* set with abort_why when a callback stopped it */
  char *abort_why;
  long long length; /* Content-Length, or -1 */

  /* Progress of the page across redirects: always increasing. */
  double progress_base, progress_sent;
  long long progress_ms;
};

enum fetch_kind fetch_kind_of(const char *content_type) {
  char type[128];
  size_t n = 0;

  if (content_type == NULL)
    return FETCH_KIND_UNKNOWN;
  while (isspace((unsigned char)*content_type))
    content_type++;
  while (content_type[n] && content_type[n] != ';' &&
         !isspace((unsigned char)content_type[n]) && n < sizeof(type) - 1) {
    type[n] = (char)tolower((unsigned char)content_type[n]);
    n++;
  }
  type[n] = '\0';
#define SUFFIX(s) (n > strlen(s) && strcmp(type + n - strlen(s), s) == 0)
  if (n == 0 || strcmp(type, "application/octet-stream") == 0)
    return FETCH_KIND_UNKNOWN;
  if (strcmp(type, "text/html") == 0 ||
      strcmp(type, "application/xhtml+xml") == 0)
    return FETCH_KIND_HTML;
  if (strcmp(type, "application/json") == 0 || strcmp(type, "text/json") == 0 ||
      SUFFIX("+json"))
    return FETCH_KIND_JSON;
  if (strncmp(type, "text/", 5) == 0 || strcmp(type, "application/xml") == 0 ||
      SUFFIX("+xml") || strcmp(type, "application/javascript") == 0 ||
      strcmp(type, "application/ecmascript") == 0 ||
      strcmp(type, "application/x-ndjson") == 0 ||
      strcmp(type, "application/yaml") == 0 ||
      strcmp(type, "application/x-yaml") == 0 ||
      strcmp(type, "application/toml") == 0)
    return FETCH_KIND_TEXT;
  if (strcmp(type, "image/png") == 0 || strcmp(type, "image/jpeg") == 0 ||
      strcmp(type, "image/gif") == 0 || strcmp(type, "image/webp") == 0)
    return FETCH_KIND_IMAGE;
#undef SUFFIX
  return FETCH_KIND_NONE;
}

/* Stops the transfer from a callback with a reason for the user. */
MCPD_PRINTF(3, 4)
static void job_abort(struct fetch_job *job, int code, const char *fmt, ...) {
  struct pc_buf b = {0};
  va_list ap;
  int n;

  if (job->abort_code != 0)
    return;
  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n >= 0 && (b.data = malloc((size_t)n + 1)) != NULL) {
    va_start(ap, fmt);
    vsnprintf(b.data, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  job->abort_code = code;
  job->abort_why = b.data;
}

/* --- libcurl callbacks ---------------------------------------------------- */

static curl_socket_t open_socket_cb(void *clientp, curlsocktype purpose,
                                    struct curl_sockaddr *address) {
  struct fetch_job *job = clientp;
  const char *class;

  if (purpose != CURLSOCKTYPE_IPCXN)
    return CURL_SOCKET_BAD;
  if (!job->target->trusted &&
      (class = fetch_address_class(&address->addr)) != NULL) {
    char text[INET6_ADDRSTRLEN] = "?";
    const void *a =
        address->family == AF_INET6
            ? (const void *)&((struct sockaddr_in6 *)&address->addr)->sin6_addr
            : (const void *)&((struct sockaddr_in *)&address->addr)->sin_addr;

    inet_ntop(address->family, a, text, sizeof(text));
    /* libcurl tries the host's other addresses; if none is left, the
     * transfer fails with this reason. */
    if (job->refused == NULL) {
      struct pc_buf b = {0};
      pc_buf_printf(&b,
                    "refused: %s is at %s, a %s address; this server "
                    "fetches such addresses only for hosts in its "
                    "allowHosts or with allowPrivate",
                    job->target->host, text, class);
      job->refused = b.data;
    }
    return CURL_SOCKET_BAD;
  }
#ifndef MCPD_PORTABLE
  return socket(address->family, address->socktype | SOCK_CLOEXEC,
                address->protocol);
#else
  {
    /* No SOCK_CLOEXEC: the flag is set just after, so a program another
     * thread starts in between may inherit the connection. */
    int fd = socket(address->family, address->socktype, address->protocol);

    if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
      close(fd);
      return CURL_SOCKET_BAD;
    }
    return fd >= 0 ? (curl_socket_t)fd : CURL_SOCKET_BAD;
  }
#endif
}

/* At the end of each response's headers: what the body will be. */
static size_t header_cb(char *line, size_t size, size_t n, void *userdata) {
  struct fetch_job *job = userdata;
  curl_off_t length = -1;
  char *ip = NULL, *ctype = NULL;
  const char *class;
  long code = 0;

  (void)size;
  if (!(n == 2 && line[0] == '\r') && !(n == 1 && line[0] == '\n'))
    return n;
  curl_easy_getinfo(job->easy, CURLINFO_RESPONSE_CODE, &code);
  if (code < 200)
    return n; /* an interim response; the real one follows */
  job->status = code;
  /* open_socket_cb() saw every address; this looks again at the one the
   * response came from, before any of its body is taken. */
  if (!job->target->trusted &&
      curl_easy_getinfo(job->easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK &&
      ip != NULL && (class = fetch_address_text_class(ip)) != NULL) {
    job_abort(job, FETCH_E_REFUSED, "refused: %s is at %s, a %s address",
              job->target->host, ip, class);
    return 0;
  }
  if (code >= 300 && code < 400)
    return n; /* a redirect: its body is dropped */
  curl_easy_getinfo(job->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  curl_easy_getinfo(job->easy, CURLINFO_CONTENT_TYPE, &ctype);
  job->length = length;
  if (!job->page)
    return n;
  if (code >= 400) {
    job->limit = job->limit < ERROR_BODY_MAX ? job->limit : ERROR_BODY_MAX;
    return n;
  }
  job->kind = fetch_kind_of(ctype);
  if (job->kind == FETCH_KIND_NONE) {
    job_abort(job, FETCH_E_TYPE,
              "refused: %s is %s; fetch returns HTML, JSON and other text, "
              "and PNG, JPEG, GIF and WebP images",
              job->target->url, ctype);
    return 0;
  }
  /* Text is returned cut at the limit; an image cut is no image. */
  if (job->kind == FETCH_KIND_IMAGE && length > (curl_off_t)job->limit) {
    job_abort(job, FETCH_E_TOO_BIG,
              "refused: %s is an image of %lld bytes, more than this "
              "server's maxBytes (%zu)",
              job->target->url, (long long)length, job->limit);
    return 0;
  }
  return n;
}

static size_t write_cb(char *data, size_t size, size_t n, void *userdata) {
  struct fetch_job *job = userdata;
  size_t room = job->limit - job->body->len;

  (void)size;
  if (job->status >= 300 && job->status < 400)
    return n;
  if (n > room) {
    pc_buf_append(job->body, data, room);
    job->cut = 1;
    if (job->page && job->kind == FETCH_KIND_IMAGE)
      job_abort(job, FETCH_E_TOO_BIG,
                "refused: the image at %s is larger than this server's "
                "maxBytes (%zu)",
                job->target->url, job->limit);
    return 0; /* stops the download: what we have is all we keep */
  }
  pc_buf_append(job->body, data, n);
  if (job->body->failed) {
    job_abort(job, FETCH_E_NOMEM, "out of memory");
    return 0;
  }
  return n;
}

static int xferinfo_cb(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow) {
  struct fetch_job *job = clientp;
  const mcpd_host *host = job->st->host;
  double value = job->progress_base + (double)dlnow;
  long long now;

  (void)ultotal, (void)ulnow;
  if (host->cancelled(job->call))
    return 1; /* CURLE_ABORTED_BY_CALLBACK */
  if (!job->page || job->status < 200 || job->status >= 300 ||
      value <= job->progress_sent)
    return 0;
  now = fetch_now_ms();
  if (now - job->progress_ms >= PROGRESS_EVERY_MS ||
      (dltotal > 0 && dlnow >= dltotal)) {
    char message[96];

    if (dltotal > 0)
      snprintf(message, sizeof(message), "%lld of %lld bytes", (long long)dlnow,
               (long long)dltotal);
    else
      snprintf(message, sizeof(message), "%lld bytes", (long long)dlnow);
    host->progress(job->call, value,
                   dltotal > 0 ? job->progress_base + (double)dltotal : 0,
                   message);
    job->progress_sent = value;
    job->progress_ms = now;
  }
  return 0;
}

/* --- one request ---------------------------------------------------------- */

static void setup(struct fetch_job *job, const struct fetch_target *t,
                  struct curl_slist *headers, long remaining) {
  const struct fetch_state *st = job->st;
  CURL *e = job->easy;

  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, t->url);
  curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85 */
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(e, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
  /* A proxy would connect for us, past the address check. */
  curl_easy_setopt(e, CURLOPT_PROXY, "");
  curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(e, CURLOPT_USERAGENT, st->user_agent);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  /* Decoded bytes are what the limit counts, so a small compressed body
   * cannot expand past it. */
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, remaining);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, job->errbuf);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket_cb);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, job);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, job);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, job);
  curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
  curl_easy_setopt(e, CURLOPT_XFERINFODATA, job);
}

static int timeout_error(const struct fetch_job *job, char **why) {
  struct pc_buf b = {0};

  pc_buf_printf(&b, "timed out after %ld ms (this server's timeoutMs)",
                job->st->timeout_ms);
  *why = b.data;
  return FETCH_E_TIMEOUT;
}

static int cancelled_error(char **why) {
  *why = strdup("cancelled");
  return FETCH_E_CANCELLED;
}

/* One GET of `t` into `body` (at most `limit` bytes kept).  Returns
 * FETCH_OK once a response came (job->status says which; a cut body is
 * not an error here), or an error with *why. */
static int request(struct fetch_job *job, const struct fetch_target *t,
                   int page, size_t limit, struct pc_buf *body, char **why) {
  struct curl_slist *headers = NULL;
  struct pc_buf b = {0};
  CURLcode result = CURLE_OK;
  CURLMsg *msg;
  int running = 1, left, rc;
  long long remaining = job->deadline - fetch_now_ms();

  *why = NULL;
  if (remaining <= 0)
    return timeout_error(job, why);
  if (job->st->host->cancelled(job->call))
    return cancelled_error(why);
  job->target = t;
  job->page = page;
  job->limit = limit;
  job->body = body;
  job->cut = 0;
  job->status = 0;
  job->kind = FETCH_KIND_UNKNOWN;
  job->length = -1;
  job->abort_code = 0;
  free(job->abort_why);
  job->abort_why = NULL;
  free(job->refused);
  job->refused = NULL;
  job->errbuf[0] = '\0';
  headers = curl_slist_append(
      NULL, page ? "Accept: text/html,application/xhtml+xml,application/"
                   "json;q=0.9,text/*;q=0.8,image/png,image/jpeg,image/gif,"
                   "image/webp;q=0.7,*/*;q=0.1"
                 : "Accept: text/plain,*/*;q=0.1");
  if (headers == NULL) {
    *why = strdup("out of memory");
    return FETCH_E_NOMEM;
  }
  setup(job, t, headers, (long)remaining);
  if (curl_multi_add_handle(job->multi, job->easy) != CURLM_OK) {
    curl_slist_free_all(headers);
    *why = strdup("cannot start the transfer");
    return FETCH_E_FAILED;
  }
  while (running) {
    if (curl_multi_perform(job->multi, &running) != CURLM_OK)
      break;
    if (!running)
      break;
    if (job->st->host->cancelled(job->call)) {
      result = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    remaining = job->deadline - fetch_now_ms();
    if (remaining <= 0) {
      result = CURLE_OPERATION_TIMEDOUT;
      break;
    }
    curl_multi_poll(job->multi, NULL, 0,
                    remaining < POLL_MS ? (int)remaining + 1 : POLL_MS, NULL);
  }
  while ((msg = curl_multi_info_read(job->multi, &left)) != NULL)
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == job->easy &&
        result == CURLE_OK)
      result = msg->data.result;
  curl_multi_remove_handle(job->multi, job->easy);
  curl_slist_free_all(headers);

  if (job->abort_code != 0) {
    rc = job->abort_code;
    *why = job->abort_why ? job->abort_why : strdup("out of memory");
    job->abort_why = NULL;
    return rc;
  }
  if (result == CURLE_OK || (result == CURLE_WRITE_ERROR && job->cut))
    return FETCH_OK;
  switch (result) {
  case CURLE_ABORTED_BY_CALLBACK:
    return cancelled_error(why);
  case CURLE_OPERATION_TIMEDOUT:
    return timeout_error(job, why);
  case CURLE_COULDNT_CONNECT:
    if (job->refused != NULL) {
      *why = job->refused;
      job->refused = NULL;
      return FETCH_E_REFUSED;
    }
    break;
  case CURLE_COULDNT_RESOLVE_HOST:
    pc_buf_printf(&b, "cannot resolve the host %s", t->host);
    *why = b.data;
    return FETCH_E_FAILED;
  default:
    break;
  }
  pc_buf_printf(&b, "fetching %s failed: %s%s%s", t->url,
                curl_easy_strerror(result), job->errbuf[0] ? ": " : "",
                job->errbuf);
  *why = b.data;
  return FETCH_E_FAILED;
}

/* The absolute URL a 3xx response points to, or NULL. */
static char *redirect_url(struct fetch_job *job) {
  char *location = NULL;

  if (job->status < 300 || job->status >= 400 || job->status == 304 ||
      curl_easy_getinfo(job->easy, CURLINFO_REDIRECT_URL, &location) !=
          CURLE_OK ||
      location == NULL)
    return NULL;
  return strdup(location);
}

/* --- robots.txt ----------------------------------------------------------- */

/* Fetches and parses the robots.txt of `page`'s origin, following its
 * redirects (each checked like any URL).  A refusal or failure on the
 * first hop is the page's own, returned as the page's error. */
static int robots_fetch(struct fetch_job *job, const struct fetch_target *page,
                        struct fetch_robots **out, long long *ttl, char **why) {
  struct fetch_state *st = job->st;
  struct pc_buf body = {0};
  struct fetch_target t = *page, hop = {0};
  char *url = NULL;
  int rc = FETCH_OK;

  *out = NULL;
  *ttl = ROBOTS_TTL_MS;
  t.path = (char *)"/robots.txt";
  t.url = url = malloc(strlen(page->origin) + sizeof("/robots.txt"));
  if (url == NULL)
    return FETCH_E_NOMEM;
  strcpy(url, page->origin);
  strcat(url, "/robots.txt");
  for (int hops = 0;; hops++) {
    char *next;

    pc_buf_free(&body);
    if ((rc = request(job, hops == 0 ? &t : &hop, 0, ROBOTS_MAX_BYTES, &body,
                      why)) != FETCH_OK) {
      if (hops > 0 && rc != FETCH_E_CANCELLED && rc != FETCH_E_TIMEOUT) {
        /* A robots.txt that redirects to where we cannot go is
         * unavailable, as one that is not there. */
        free(*why);
        *why = NULL;
        rc = FETCH_OK;
        *out = fetch_robots_all(1);
      }
      goto done;
    }
    if ((next = redirect_url(job)) == NULL)
      break;
    fetch_target_free(&hop);
    if (hops >= ROBOTS_MAX_REDIRECTS ||
        fetch_target_check(st, next, &hop, why) != 0) {
      free(next);
      free(*why);
      *why = NULL;
      *out = fetch_robots_all(1);
      goto done;
    }
    free(next);
  }
  if (job->status >= 200 && job->status < 300) {
    *out = fetch_robots_parse(body.data ? body.data : "", body.len,
                              st->robots_agent);
  } else if (job->status >= 500) {
    /* RFC 9309: a server error means everything is disallowed, for now. */
    *out = fetch_robots_all(0);
    *ttl = ROBOTS_ERROR_TTL_MS;
  } else {
    *out = fetch_robots_all(1); /* 4xx: there are no rules */
  }
done:
  if (rc == FETCH_OK && *out == NULL) {
    rc = FETCH_E_NOMEM;
    *why = strdup("out of memory");
  }
  pc_buf_free(&body);
  fetch_target_free(&hop);
  free(url);
  return rc;
}

/* FETCH_OK when robots.txt lets us fetch `t`. */
static int robots_check(struct fetch_job *job, const struct fetch_target *t,
                        char **why) {
  struct fetch_robots *r = fetch_robots_lookup(job->st, t->origin);
  struct pc_buf b = {0};
  long long ttl;
  int rc, allowed;

  if (r == NULL) {
    if ((rc = robots_fetch(job, t, &r, &ttl, why)) != FETCH_OK)
      return rc;
    fetch_robots_store(job->st, t->origin, r, ttl);
  }
  allowed = fetch_robots_allowed(r, t->path);
  fetch_robots_free(r);
  if (allowed)
    return FETCH_OK;
  pc_buf_printf(&b,
                "refused: %s/robots.txt does not allow %s to fetch %s "
                "(this server honours robots.txt; its config can set "
                "\"robots\": false)",
                t->origin, job->st->robots_agent, t->path);
  *why = b.data;
  return FETCH_E_REFUSED;
}

/* --- the call ------------------------------------------------------------- */

void fetch_wake_all(void *state) {
  struct fetch_state *st = state;

  pthread_mutex_lock(&st->lock);
  for (struct fetch_job *j = st->jobs; j != NULL; j = j->next)
    curl_multi_wakeup(j->multi);
  pthread_mutex_unlock(&st->lock);
}

void fetch_response_free(struct fetch_response *resp) {
  free(resp->content_type);
  free(resp->final_url);
  pc_buf_free(&resp->body);
  memset(resp, 0, sizeof(*resp));
}

int fetch_url(struct fetch_state *st, mcpd_call *call, const char *first,
              struct fetch_response *resp, char **why) {
  struct fetch_job job = {.st = st, .call = call};
  struct fetch_target t = {0};
  char *url = strdup(first), *ctype = NULL;
  int rc = FETCH_E_NOMEM;

  memset(resp, 0, sizeof(*resp));
  *why = NULL;
  job.deadline = fetch_now_ms() + st->timeout_ms;
  if (url == NULL || (job.multi = curl_multi_init()) == NULL ||
      (job.easy = curl_easy_init()) == NULL) {
    *why = strdup("out of memory");
    goto out;
  }
  pthread_mutex_lock(&st->lock);
  job.next = st->jobs;
  st->jobs = &job;
  pthread_mutex_unlock(&st->lock);
  st->host->on_cancel(call, fetch_wake_all, st);

  for (long hops = 0;; hops++) {
    char *next;

    fetch_target_free(&t);
    if (fetch_target_check(st, url, &t, why) != 0) {
      rc = FETCH_E_REFUSED;
      break;
    }
    if (st->robots && (rc = robots_check(&job, &t, why)) != FETCH_OK)
      break;
    pc_buf_free(&resp->body);
    if ((rc = request(&job, &t, 1, st->max_bytes, &resp->body, why)) !=
        FETCH_OK)
      break;
    if ((next = redirect_url(&job)) == NULL)
      break;
    if (hops >= st->max_redirects) {
      struct pc_buf b = {0};
      pc_buf_printf(&b,
                    "refused: too many redirects (more than %ld, this "
                    "server's maxRedirects); the last pointed to %s",
                    st->max_redirects, next);
      free(next);
      *why = b.data;
      rc = FETCH_E_REFUSED;
      break;
    }
    free(url);
    url = next;
    job.progress_base = job.progress_sent;
  }
  if (rc == FETCH_OK) {
    resp->status = job.status;
    resp->cut = job.cut;
    resp->length = job.length;
    curl_easy_getinfo(job.easy, CURLINFO_CONTENT_TYPE, &ctype);
    resp->content_type = ctype ? strdup(ctype) : NULL;
    resp->final_url = strdup(t.url);
    if (resp->final_url == NULL || (ctype && resp->content_type == NULL)) {
      rc = FETCH_E_NOMEM;
      *why = strdup("out of memory");
    }
  }
  /* Out of the list before the multi handle goes: the on_cancel callback
   * may be walking it right now. */
  pthread_mutex_lock(&st->lock);
  for (struct fetch_job **link = &st->jobs; *link != NULL;
       link = &(*link)->next) {
    if (*link == &job) {
      *link = job.next;
      break;
    }
  }
  pthread_mutex_unlock(&st->lock);
out:
  if (rc != FETCH_OK)
    fetch_response_free(resp);
  fetch_target_free(&t);
  free(url);
  free(job.refused);
  free(job.abort_why);
  if (job.easy)
    curl_easy_cleanup(job.easy);
  if (job.multi)
    curl_multi_cleanup(job.multi);
  return rc;
}
