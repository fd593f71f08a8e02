/* SPDX-License-Identifier: MIT */
/* policy.c -- which URLs the "fetch" plugin may fetch, and where it may
 * connect.
 *
 * Names are checked before anything is sent: http and https only, then
 * allowHosts (allowed, at any address) and denyHosts (refused).  Addresses
 * are checked where the connection is made (http.c hands every address
 * libcurl is about to connect to to fetch_address_class()), so a name
 * that resolves to a public address when looked at and to 127.0.0.1 when
 * connected to is refused all the same.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "fetch.h"

/* --- host lists ---------------------------------------------------------- */

char *fetch_host_normalize(const char *host) {
  size_t n = strlen(host);
  char *out;

  if (n >= 2 && host[0] == '[' && host[n - 1] == ']')
    host++, n -= 2;
  if (n > 1 && host[n - 1] == '.')
    n--;
  if ((out = malloc(n + 1)) == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++)
    out[i] = (char)tolower((unsigned char)host[i]);
  out[n] = '\0';
  return out;
}

int fetch_hosts_add(struct fetch_hosts *list, const char *entry,
                    const char **why) {
  const char *name = entry;
  char *norm, **v;

  if (strcmp(entry, "*") != 0) {
    if (strncmp(name, "*.", 2) == 0)
      name += 2;
    if (*name == '\0' || strlen(name) > 255) {
      *why = "is empty or too long";
      return -1;
    }
    /* Letters, digits and the punctuation of names and IPv6 literals:
     * no scheme, port, path or inner wildcard. */
    for (const char *p = name; *p; p++) {
      if (!isalnum((unsigned char)*p) && strchr("-._:[]", *p) == NULL) {
        *why = "is not a host name, an address or \"*.suffix\" (write "
               "hosts without scheme, port or path)";
        return -1;
      }
    }
  }
  if ((norm = fetch_host_normalize(entry)) == NULL ||
      (v = realloc(list->v, (list->n + 1) * sizeof(*v))) == NULL) {
    free(norm);
    *why = "out of memory";
    return -1;
  }
  list->v = v;
  list->v[list->n++] = norm;
  return 0;
}

int fetch_hosts_match(const struct fetch_hosts *list, const char *host) {
  size_t hl = strlen(host);

  for (size_t i = 0; i < list->n; i++) {
    const char *e = list->v[i];

    if (strcmp(e, "*") == 0 || strcmp(e, host) == 0)
      return 1;
    /* "*.example.com" covers the names below example.com, not
     * example.com itself. */
    if (e[0] == '*' && e[1] == '.') {
      size_t sl = strlen(e + 1); /* ".example.com" */
      if (hl > sl && strcmp(host + hl - sl, e + 1) == 0)
        return 1;
    }
  }
  return 0;
}

void fetch_hosts_free(struct fetch_hosts *list) {
  for (size_t i = 0; i < list->n; i++)
    free(list->v[i]);
  free(list->v);
  list->v = NULL;
  list->n = 0;
}

/* --- address classes ----------------------------------------------------- */

struct v4_range {
  uint32_t net;
  int bits;
  const char *what;
};

/* Every IPv4 range no public web server is at (RFC 6890 and friends). */
static const struct v4_range v4_refused[] = {
    {0x00000000, 8, "unspecified (\"this network\")"},
    {0x0a000000, 8, "private"},
    {0x64400000, 10, "shared (CGNAT)"},
    {0x7f000000, 8, "loopback"},
    {0xa9fe0000, 16, "link-local"},
    {0xac100000, 12, "private"},
    {0xc0000000, 24, "reserved (IETF protocol assignments)"},
    {0xc0000200, 24, "reserved (documentation)"},
    {0xc0a80000, 16, "private"},
    {0xc6120000, 15, "reserved (benchmarking)"},
    {0xc6336400, 24, "reserved (documentation)"},
    {0xcb007100, 24, "reserved (documentation)"},
    {0xe0000000, 4, "multicast"},
    {0xf0000000, 4, "reserved"}, /* and 255.255.255.255, broadcast */
    {0, 0, NULL},
};

static const char *v4_class(uint32_t a) {
  for (const struct v4_range *r = v4_refused; r->what != NULL; r++) {
    uint32_t mask = r->bits == 0 ? 0 : ~(uint32_t)0 << (32 - r->bits);
    if ((a & mask) == r->net)
      return r->what;
  }
  return NULL;
}

static uint32_t v4_at(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static const char *v6_class(const unsigned char *a) {
  static const unsigned char zero[16];
  static const unsigned char mapped[12] = {0, 0, 0, 0, 0,    0,
                                           0, 0, 0, 0, 0xff, 0xff};
  static const unsigned char nat64[12] = {0x00, 0x64, 0xff, 0x9b};

  if (memcmp(a, zero, 15) == 0 && (a[15] == 0 || a[15] == 1))
    return a[15] == 0 ? "unspecified" : "loopback";
  /* IPv4 inside IPv6 counts as that IPv4: ::ffff:127.0.0.1 is loopback. */
  if (memcmp(a, mapped, 12) == 0 || memcmp(a, zero, 12) == 0 ||
      memcmp(a, nat64, 12) == 0)
    return v4_class(v4_at(a + 12));
  if (a[0] == 0x20 && a[1] == 0x02) /* 6to4: 2002:V4ADDR::/48 */
    return v4_class(v4_at(a + 2));
  if (a[0] == 0xff)
    return "multicast";
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
    return "link-local";
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
    return "private (site-local)";
  if ((a[0] & 0xfe) == 0xfc)
    return "private (unique local)";
  if (a[0] == 0x01 && a[1] == 0x00 && memcmp(a + 2, zero, 6) == 0)
    return "reserved (discard)";
  if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8)
    return "reserved (documentation)";
  return NULL;
}

const char *fetch_address_class(const struct sockaddr *sa) {
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    return v4_class(ntohl(in->sin_addr.s_addr));
  }
  if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
    return v6_class(in6->sin6_addr.s6_addr);
  }
  return "not an internet address";
}

const char *fetch_address_text_class(const char *text) {
  struct sockaddr_in in = {.sin_family = AF_INET};
  struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};

  if (inet_pton(AF_INET, text, &in.sin_addr) == 1)
    return fetch_address_class((struct sockaddr *)&in);
  if (inet_pton(AF_INET6, text, &in6.sin6_addr) == 1)
    return fetch_address_class((struct sockaddr *)&in6);
  return NULL;
}

/* --- URLs ---------------------------------------------------------------- */

void fetch_target_free(struct fetch_target *t) {
  free(t->url);
  free(t->scheme);
  free(t->host);
  free(t->origin);
  free(t->path);
  memset(t, 0, sizeof(*t));
}

/* The scheme of `url` lower-cased into buf[16], or "" when it has none. */
static void scheme_of(const char *url, char buf[16]) {
  size_t i = 0;

  buf[0] = '\0';
  if (!isalpha((unsigned char)url[0]))
    return;
  while (url[i] && url[i] != ':' && i < 15) {
    if (!isalnum((unsigned char)url[i]) && strchr("+.-", url[i]) == NULL) {
      buf[0] = '\0';
      return;
    }
    buf[i] = (char)tolower((unsigned char)url[i]);
    i++;
  }
  if (url[i] != ':')
    i = 0;
  buf[i] = '\0';
}

/* curl's copy of a part as a malloc'ed string (curl_free() is not free()). */
static char *url_part(CURLU *u, CURLUPart what, unsigned flags) {
  char *part = NULL, *copy;

  if (curl_url_get(u, what, &part, flags) != CURLUE_OK)
    return NULL;
  copy = strdup(part);
  curl_free(part);
  return copy;
}

int fetch_target_check(const struct fetch_state *st, const char *url,
                       struct fetch_target *t, char **why) {
  struct pc_buf b = {0};
  char scheme[16], *port = NULL, *host = NULL, *path = NULL, *query = NULL;
  CURLU *u = NULL;
  int rc = -1;

  memset(t, 0, sizeof(*t));
  *why = NULL;
  scheme_of(url, scheme);
  if (strlen(url) > 8192) {
    pc_buf_puts(&b, "the URL is longer than 8192 bytes");
    goto out;
  }
  if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
    if (scheme[0] == '\0')
      pc_buf_printf(&b, "\"%.200s\" is not an absolute http or https URL", url);
    else
      pc_buf_printf(&b,
                    "refused: only http and https URLs are fetched, "
                    "not %s:",
                    scheme);
    goto out;
  }
  if ((u = curl_url()) == NULL)
    goto nomem;
  if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
      (host = url_part(u, CURLUPART_HOST, 0)) == NULL || host[0] == '\0') {
    pc_buf_printf(&b, "\"%.200s\" is not a valid URL", url);
    goto out;
  }
  if ((t->host = fetch_host_normalize(host)) == NULL ||
      (t->url = url_part(u, CURLUPART_URL, 0)) == NULL ||
      (port = url_part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT)) == NULL ||
      (path = url_part(u, CURLUPART_PATH, 0)) == NULL ||
      (t->scheme = strdup(scheme)) == NULL)
    goto nomem;
  query = url_part(u, CURLUPART_QUERY, 0); /* NULL: none */
  {
    struct pc_buf o = {0}, p = {0};
    int v6 = strchr(t->host, ':') != NULL;

    pc_buf_printf(&o, "%s://%s%s%s:%s", scheme, v6 ? "[" : "", t->host,
                  v6 ? "]" : "", port);
    pc_buf_printf(&p, "%s%s%s", path, query ? "?" : "", query ? query : "");
    t->origin = o.data;
    t->path = p.data;
    if (o.failed || p.failed)
      goto nomem;
  }
  if (fetch_hosts_match(&st->allow_hosts, t->host)) {
    t->trusted = 1;
  } else if (fetch_hosts_match(&st->deny_hosts, t->host)) {
    pc_buf_printf(&b, "refused: the host %s is in this server's denyHosts",
                  t->host);
    goto out;
  } else {
    t->trusted = st->allow_private;
  }
  rc = 0;
  goto out;
nomem:
  pc_buf_free(&b);
  pc_buf_puts(&b, "out of memory");
out:
  if (rc != 0) {
    fetch_target_free(t);
    *why = b.failed ? strdup("out of memory") : b.data;
  } else {
    pc_buf_free(&b);
  }
  curl_url_cleanup(u);
  free(host);
  free(port);
  free(path);
  free(query);
  return rc;
}
