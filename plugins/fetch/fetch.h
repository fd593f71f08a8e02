/* SPDX-License-Identifier: MIT */
/* fetch.h -- what the modules of the "fetch" plugin share.
 *
 * policy.c  which URLs may be fetched: schemes, the host lists, and the
 *           classes of addresses refused unless allowed (private, loopback,
 *           ...), checked on every address a connection is opened to.
 * http.c    one call's transfers with libcurl: a multi handle polled on
 *           the pool thread, redirects followed by hand with every hop
 *           checked again, limits, progress and cancellation.
 * robots.c  robots.txt: parsing, matching, and the per-origin cache.
 * html.c    HTML reduced to readable text; entities; charsets; UTF-8.
 * util.c    charsets converted to UTF-8; the clock.
 * fetch.c   configuration, init/fini and the tool.
 *
 * Everything in struct fetch_state except the robots cache and the list of
 * running transfers (both behind `lock`) is written by init() only and then
 * read by any thread without locks.
 */
#ifndef MCPD_PLUGIN_FETCH_H
#define MCPD_PLUGIN_FETCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <mcpd.h>

#include "../common/buf.h"

/* A list of host names and "*.suffix" patterns ("*" alone: every host),
 * lower-case, without a trailing dot or IPv6 brackets. */
struct fetch_hosts {
  char **v;
  size_t n;
};

struct fetch_robots_cache;
struct fetch_job;

struct fetch_state {
  const mcpd_host *host;
  mcpd_self *self;
  size_t max_bytes;   /* download cap of one response */
  long timeout_ms;    /* the whole call, robots.txt and redirects included */
  long max_redirects; /* hops after the first request */
  char *user_agent;   /* the User-Agent header */
  char *robots_agent; /* its product token, matched in robots.txt */
  int allow_private;  /* connect to any address class */
  int robots;         /* honour robots.txt */
  int curl_ready;     /* curl_global_init() succeeded */
  struct fetch_hosts allow_hosts, deny_hosts;
  pthread_mutex_t lock; /* guards `robots_cache` and `jobs` */
  struct fetch_robots_cache *robots_cache;
  struct fetch_job *jobs; /* transfers running, woken on cancellation */
};

/* --- policy.c ----------------------------------------------------------- */

/* Nonzero when `host` (normalized as in struct fetch_hosts) matches an
 * entry of `list`. */
int fetch_hosts_match(const struct fetch_hosts *list, const char *host);
/* Lower-cases `host` into a new string without IPv6 brackets or a
 * trailing dot (malloc; NULL when out of memory). */
char *fetch_host_normalize(const char *host);
/* Adds a config entry to `list`; returns 0, or -1 for an entry that is not
 * a host name, an address or a "*.suffix" pattern (*why says what). */
int fetch_hosts_add(struct fetch_hosts *list, const char *entry,
                    const char **why);
void fetch_hosts_free(struct fetch_hosts *list);

/* The class of an address that is refused unless allowed ("loopback",
 * "private", "link-local", ...), or NULL for a public address.  An IPv4
 * address inside IPv6 (mapped, compatible, NAT64, 6to4) counts as that
 * IPv4 address. */
const char *fetch_address_class(const struct sockaddr *sa);
/* The same for a numeric address in text; NULL also for text that is not
 * an address. */
const char *fetch_address_text_class(const char *text);

/* Where a URL may go.  The parts are malloc'ed; free with
 * fetch_target_free(). */
struct fetch_target {
  char *url;    /* as curl normalized it */
  char *scheme; /* "http" or "https" */
  char *host;   /* normalized as in struct fetch_hosts */
  char *origin; /* scheme://host:port, the robots.txt cache key */
  char *path;   /* path and query, what robots.txt rules match */
  int trusted;  /* in allowHosts, or allowPrivate: any address will do */
};

/* Checks `url` against the scheme rule and the host lists.  Returns 0 with
 * *t filled, or -1 with *why set to a sentence (malloc) the user reads. */
int fetch_target_check(const struct fetch_state *st, const char *url,
                       struct fetch_target *t, char **why);
void fetch_target_free(struct fetch_target *t);

/* --- html.c ------------------------------------------------------------- */

/* Appends the readable text of `n` bytes of HTML (UTF-8) to `out`: script,
 * style, noscript, template and head dropped (the title kept, first),
 * block elements on lines of their own, entities decoded, whitespace
 * collapsed except inside <pre>.  Linear in `n`. */
void fetch_html_to_text(const char *html, size_t n, struct pc_buf *out);
/* Decodes one character reference at `s` (just after '&', `n` bytes left):
 * writes its UTF-8 into out[8] and returns how many input bytes it used,
 * or 0 when `s` starts no reference we know. */
size_t fetch_entity_decode(const char *s, size_t n, char out[8],
                           size_t *out_len);
/* Converts `n` bytes in `charset` (NULL or "": UTF-8) to valid UTF-8 with
 * no NUL byte: invalid sequences and NULs become U+FFFD.  Returns a new
 * buffer (malloc) and its length in *out_len, or NULL when out of memory. */
char *fetch_to_utf8(const char *data, size_t n, const char *charset,
                    size_t *out_len);
/* The charset an HTML document declares in a <meta> within its first
 * 1024 bytes, into buf[40]; "" when none. */
void fetch_html_meta_charset(const char *html, size_t n, char buf[40]);

/* --- robots.c ----------------------------------------------------------- */

/* The rules a robots.txt gives to `agent` (its own groups, else "*"), or
 * NULL when out of memory.  At most `n` bytes are read. */
struct fetch_robots *fetch_robots_parse(const char *text, size_t n,
                                        const char *agent);
/* Nonzero when `path` (path and query) may be fetched under `r`. */
int fetch_robots_allowed(const struct fetch_robots *r, const char *path);
void fetch_robots_free(struct fetch_robots *r);
/* Rules that allow everything, or nothing (robots.txt unreachable). */
struct fetch_robots *fetch_robots_all(int allow);

/* The cache, per origin.  fetch_robots_lookup() returns a reference to
 * drop with fetch_robots_free(), or NULL when none is fresh. */
struct fetch_robots *fetch_robots_lookup(struct fetch_state *st,
                                         const char *origin);
void fetch_robots_store(struct fetch_state *st, const char *origin,
                        struct fetch_robots *r, long long ttl_ms);
void fetch_robots_cache_free(struct fetch_robots_cache *c);

/* --- http.c ------------------------------------------------------------- */

/* What a fetch produced: the final response, before it is rendered. */
struct fetch_response {
  long status;        /* HTTP status of the final response */
  char *content_type; /* its Content-Type, or NULL (malloc) */
  char *final_url;    /* after redirects (malloc) */
  struct pc_buf body; /* at most max_bytes */
  int cut;            /* the body was longer: the download stopped */
  long long length;   /* Content-Length, or -1 */
};

/* How a fetch went: FETCH_OK with a response, or a refusal or failure
 * whose sentence (malloc) is in *why. */
enum {
  FETCH_OK = 0,
  FETCH_E_REFUSED = -1,   /* policy: scheme, host lists, address, robots */
  FETCH_E_FAILED = -2,    /* the network or the server */
  FETCH_E_TIMEOUT = -3,   /* timeoutMs */
  FETCH_E_CANCELLED = -4, /* the client cancelled, or mcpd is stopping */
  FETCH_E_TOO_BIG = -5,   /* over max_bytes where a cut will not do */
  FETCH_E_TYPE = -6,      /* a content type we do not return */
  FETCH_E_NOMEM = -7
};

/* The kinds of content the tool returns. */
enum fetch_kind {
  FETCH_KIND_NONE = 0, /* refused */
  FETCH_KIND_HTML,
  FETCH_KIND_JSON,
  FETCH_KIND_TEXT,
  FETCH_KIND_IMAGE,
  FETCH_KIND_UNKNOWN /* no Content-Type: decided by looking at the body */
};

/* The kind for a Content-Type header value (NULL: FETCH_KIND_UNKNOWN). */
enum fetch_kind fetch_kind_of(const char *content_type);

/* Fetches `url` for a call of the tool: robots.txt first (unless off),
 * every redirect checked as the first URL was.  Blocks the calling thread
 * (a pool worker) until done, cancelled or out of time. */
int fetch_url(struct fetch_state *st, mcpd_call *call, const char *url,
              struct fetch_response *resp, char **why);
void fetch_response_free(struct fetch_response *resp);
/* on_cancel callback: wakes every running transfer so each looks at its
 * own call. */
void fetch_wake_all(void *state);

/* Monotonic milliseconds. */
long long fetch_now_ms(void);

#endif
