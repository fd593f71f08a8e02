/* SPDX-License-Identifier: MIT */
/* robots.c -- robots.txt (RFC 9309) for the "fetch" plugin.
 *
 * A robots.txt is parsed once, when fetched, into the rules for our agent
 * only: the groups whose User-agent names our product token, or else the
 * groups for "*".  Matching is the longest rule wins, Allow on a tie, with
 * '*' and a final '$' as the only special characters.  Parsed rules are
 * cached per origin, with a time to live, for the plugin's lifetime.
 */
#include <ctype.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fetch.h"

/* Bounds on what one robots.txt can make us keep and match against. */
#define ROBOTS_MAX_RULES 4096
#define ROBOTS_MAX_PATTERN 2048
#define ROBOTS_CACHE_MAX 256

struct robots_rule {
  char *pattern;
  size_t len;
  int allow;
};

struct fetch_robots {
  atomic_int refs;
  int all; /* 1: everything allowed, 0: nothing allowed, -1: the rules */
  struct robots_rule *rules;
  size_t n;
};

struct rule_set {
  struct robots_rule *v;
  size_t n;
  int failed;
};

static void set_free(struct rule_set *set) {
  for (size_t i = 0; i < set->n; i++)
    free(set->v[i].pattern);
  free(set->v);
  memset(set, 0, sizeof(*set));
}

/* Adds a rule; bytes outside ASCII are percent-encoded, as they are in the
 * paths the rule is matched against. */
static void set_add(struct rule_set *set, const char *value, size_t len,
                    int allow) {
  static const char hex[] = "0123456789ABCDEF";
  struct robots_rule *v;
  char *p;
  size_t k = 0;

  if (set->failed || set->n >= ROBOTS_MAX_RULES || len > ROBOTS_MAX_PATTERN)
    return;
  if ((p = malloc(len * 3 + 1)) == NULL ||
      (v = realloc(set->v, (set->n + 1) * sizeof(*v))) == NULL) {
    free(p);
    set->failed = 1;
    return;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)value[i];
    if (c >= 0x80 || c <= 0x20) {
      p[k++] = '%';
      p[k++] = hex[c >> 4];
      p[k++] = hex[c & 15];
    } else {
      p[k++] = (char)c;
    }
  }
  p[k] = '\0';
  set->v = v;
  set->v[set->n++] =
      (struct robots_rule){.pattern = p, .len = k, .allow = allow};
}

/* Does a User-agent value name `agent`?  Its product token is the value
 * up to the first character that cannot be in one. */
static int names_agent(const char *value, size_t len, const char *agent) {
  size_t tok = 0;

  while (tok < len && (isalpha((unsigned char)value[tok]) ||
                       value[tok] == '-' || value[tok] == '_'))
    tok++;
  return tok > 0 && tok == strlen(agent) && strncasecmp(value, agent, tok) == 0;
}

static struct fetch_robots *robots_new(int all) {
  struct fetch_robots *r = calloc(1, sizeof(*r));

  if (r != NULL) {
    atomic_init(&r->refs, 1);
    r->all = all;
  }
  return r;
}

struct fetch_robots *fetch_robots_all(int allow) {
  return robots_new(allow ? 1 : 0);
}

struct fetch_robots *fetch_robots_parse(const char *text, size_t n,
                                        const char *agent) {
  struct rule_set mine = {0}, star = {0}, *keep;
  struct fetch_robots *r;
  int in_agents = 0, for_me = 0, for_star = 0, named_me = 0;
  size_t i = 0;

  while (i < n) {
    size_t end = i, colon, vs, ve, ks = i, ke;

    while (end < n && text[end] != '\n' && text[end] != '\r')
      end++;
    /* key ":" value, a '#' comment, blanks around both. */
    ve = end;
    for (size_t k = i; k < end; k++)
      if (text[k] == '#') {
        ve = k;
        break;
      }
    colon = ks;
    while (colon < ve && text[colon] != ':')
      colon++;
    while (ks < colon && isspace((unsigned char)text[ks]))
      ks++;
    ke = colon;
    while (ke > ks && isspace((unsigned char)text[ke - 1]))
      ke--;
    vs = colon + 1;
    while (vs < ve && isspace((unsigned char)text[vs]))
      vs++;
    while (ve > vs && isspace((unsigned char)text[ve - 1]))
      ve--;
    if (colon < end) {
      const char *key = text + ks;
      size_t klen = ke - ks;

      if (klen == 10 && strncasecmp(key, "user-agent", 10) == 0) {
        if (!in_agents)
          for_me = for_star = 0; /* a new group begins */
        in_agents = 1;
        if (ve - vs == 1 && text[vs] == '*') {
          for_star = 1;
        } else if (names_agent(text + vs, ve - vs, agent)) {
          for_me = 1;
          named_me = 1;
        }
      } else if ((klen == 5 && strncasecmp(key, "allow", 5) == 0) ||
                 (klen == 8 && strncasecmp(key, "disallow", 8) == 0)) {
        int allow = klen == 5;
        in_agents = 0;
        /* An empty Disallow allows everything: no rule. */
        if (ve > vs) {
          if (for_me)
            set_add(&mine, text + vs, ve - vs, allow);
          if (for_star)
            set_add(&star, text + vs, ve - vs, allow);
        }
      } else {
        /* Sitemap, Crawl-delay, ...: not ours, but they end the list of
         * agents all the same. */
        in_agents = 0;
      }
    }
    i = end + 1;
  }
  keep = named_me ? &mine : &star;
  if (mine.failed || star.failed || (r = robots_new(-1)) == NULL) {
    set_free(&mine);
    set_free(&star);
    return NULL;
  }
  r->rules = keep->v;
  r->n = keep->n;
  keep->v = NULL;
  keep->n = 0;
  set_free(&mine);
  set_free(&star);
  return r;
}

/* Does `p` (len bytes, '*' and a final '$' special) match the start of
 * `s`?  Each piece between stars is found at its leftmost place, which is
 * enough for patterns with '*' only; memmem keeps this linear. */
static int rule_match(const char *p, size_t plen, const char *s, size_t slen) {
  int anchored = plen > 0 && p[plen - 1] == '$';
  const char *star;
  size_t seg, pos;

  if (anchored)
    plen--;
  star = memchr(p, '*', plen);
  seg = star ? (size_t)(star - p) : plen;
  if (seg > slen || memcmp(p, s, seg) != 0)
    return 0;
  if (star == NULL)
    return !anchored || seg == slen;
  pos = seg;
  p += seg + 1;
  plen -= seg + 1;
  for (;;) {
    star = memchr(p, '*', plen);
    seg = star ? (size_t)(star - p) : plen;
    if (star == NULL) {
      if (anchored)
        return slen - pos >= seg && memcmp(s + slen - seg, p, seg) == 0;
      return seg == 0 || memmem(s + pos, slen - pos, p, seg) != NULL;
    }
    if (seg > 0) {
      const char *found = memmem(s + pos, slen - pos, p, seg);
      if (found == NULL)
        return 0;
      pos = (size_t)(found - s) + seg;
    }
    p += seg + 1;
    plen -= seg + 1;
  }
}

int fetch_robots_allowed(const struct fetch_robots *r, const char *path) {
  size_t slen = strlen(path), best = 0;
  int allowed = 1, matched = 0;

  if (r->all >= 0)
    return r->all;
  /* The robots.txt itself is always allowed. */
  if (strcmp(path, "/robots.txt") == 0)
    return 1;
  for (size_t i = 0; i < r->n; i++) {
    const struct robots_rule *rule = &r->rules[i];
    if (rule_match(rule->pattern, rule->len, path, slen) &&
        (!matched || rule->len > best ||
         (rule->len == best && rule->allow && !allowed))) {
      matched = 1;
      best = rule->len;
      allowed = rule->allow;
    }
  }
  return allowed;
}

void fetch_robots_free(struct fetch_robots *r) {
  if (r == NULL || atomic_fetch_sub(&r->refs, 1) != 1)
    return;
  for (size_t i = 0; i < r->n; i++)
    free(r->rules[i].pattern);
  free(r->rules);
  free(r);
}

/* --- the cache ----------------------------------------------------------- */

struct cache_entry {
  char *origin;
  struct fetch_robots *robots;
  long long expires; /* fetch_now_ms() */
  struct cache_entry *next;
};

struct fetch_robots_cache {
  struct cache_entry *head; /* the newest first */
  size_t n;
};

static void entry_free(struct cache_entry *e) {
  free(e->origin);
  fetch_robots_free(e->robots);
  free(e);
}

struct fetch_robots *fetch_robots_lookup(struct fetch_state *st,
                                         const char *origin) {
  struct fetch_robots *r = NULL;
  long long now = fetch_now_ms();

  pthread_mutex_lock(&st->lock);
  if (st->robots_cache != NULL) {
    for (struct cache_entry **link = &st->robots_cache->head, *e;
         (e = *link) != NULL; link = &e->next) {
      if (strcmp(e->origin, origin) != 0)
        continue;
      if (e->expires > now) {
        r = e->robots;
        atomic_fetch_add(&r->refs, 1);
      } else {
        *link = e->next;
        st->robots_cache->n--;
        entry_free(e);
      }
      break;
    }
  }
  pthread_mutex_unlock(&st->lock);
  return r;
}

void fetch_robots_store(struct fetch_state *st, const char *origin,
                        struct fetch_robots *r, long long ttl_ms) {
  struct cache_entry *e = calloc(1, sizeof(*e)), *old = NULL;

  if (e == NULL || (e->origin = strdup(origin)) == NULL) {
    free(e);
    return; /* not cached: fetched again next time */
  }
  e->robots = r;
  atomic_fetch_add(&r->refs, 1);
  e->expires = fetch_now_ms() + ttl_ms;
  pthread_mutex_lock(&st->lock);
  if (st->robots_cache == NULL)
    st->robots_cache = calloc(1, sizeof(*st->robots_cache));
  if (st->robots_cache == NULL) {
    pthread_mutex_unlock(&st->lock);
    entry_free(e);
    return;
  }
  /* A fetch of the same origin that raced us may have stored it first;
   * the newer one wins, first in the list. */
  for (struct cache_entry **link = &st->robots_cache->head, *x;
       (x = *link) != NULL; link = &x->next) {
    if (strcmp(x->origin, origin) == 0) {
      *link = x->next;
      st->robots_cache->n--;
      old = x;
      break;
    }
  }
  e->next = st->robots_cache->head;
  st->robots_cache->head = e;
  if (++st->robots_cache->n > ROBOTS_CACHE_MAX && old == NULL) {
    /* Drop the oldest, at the end. */
    struct cache_entry **link = &st->robots_cache->head;
    while ((*link)->next != NULL)
      link = &(*link)->next;
    old = *link;
    *link = NULL;
    st->robots_cache->n--;
  }
  pthread_mutex_unlock(&st->lock);
  if (old != NULL)
    entry_free(old);
}

void fetch_robots_cache_free(struct fetch_robots_cache *c) {
  if (c == NULL)
    return;
  while (c->head != NULL) {
    struct cache_entry *e = c->head;
    c->head = e->next;
    entry_free(e);
  }
  free(c);
}
