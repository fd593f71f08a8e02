/* SPDX-License-Identifier: MIT */
/* fetch_tests.c -- the pure parts of the fetch plugin, with Check: the
 * HTML reducer and character references, robots.txt groups and matching,
 * address classes and host patterns.  The transfers themselves are tested
 * end to end (tests/e2e/fetch.test.mjs), against a real server.
 *
 * Built from the plugin's own sources, so no symbol need be exported. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/common/base64.h"
#include "../../plugins/common/utf8.h"
#include "fetch.h"

/* The text of `html`, malloc'ed. */
static char *reduce(const char *html) {
  struct pc_buf out = {0};

  fetch_html_to_text(html, strlen(html), &out);
  ck_assert(!out.failed);
  return out.data ? out.data : strdup("");
}

static void assert_reduces(const char *html, const char *want) {
  char *got = reduce(html);

  ck_assert_msg(strcmp(got, want) == 0, "%s\n  gave \"%s\"\n  want \"%s\"",
                html, got, want);
  free(got);
}

START_TEST(html_blocks_and_whitespace) {
  assert_reduces("<p>one   two\n three</p><p>four</p>",
                 "one two three\n\nfour");
  assert_reduces("<div>a</div><div>b</div>text<br>after", "a\nb\ntext\nafter");
  assert_reduces("<h2>Title</h2>body", "## Title\n\nbody");
  assert_reduces("<ul><li>x</li><li>y</li></ul>", "- x\n- y");
  assert_reduces("<table><tr><td>1</td><td>2</td></tr><tr><th>3</th></tr>"
                 "</table>",
                 "1 | 2\n3");
  assert_reduces("<pre>  a\n   b</pre>", "  a\n   b");
  assert_reduces("a <b>bold</b> and <a href=\"/x\">link</a>.",
                 "a bold and link.");
}
END_TEST

START_TEST(html_dropped) {
  assert_reduces("<head><title>T</title><meta charset=utf-8>"
                 "<style>p{}</style></head><body>x</body>",
                 "T\n\nx");
  assert_reduces("a<script>if (a < b) document.write('<p>no</p>')"
                 "</script>b",
                 "ab");
  assert_reduces("a<SCRIPT type=x>no</SCRIPT >b<noscript>no</noscript>c",
                 "abc");
  assert_reduces("a<!-- <p>no</p> -->b<!doctype html>c<?xml?>d", "abcd");
  /* A '>' inside a quoted attribute does not end the tag. */
  assert_reduces("<a title=\"x > y\">link</a>", "link");
  /* No end tag: the rest is dropped, and the work still ends. */
  assert_reduces("a<script>never closed", "a");
  assert_reduces("a<!-- never closed", "a");
  assert_reduces("1 < 2 and 3 > 2", "1 < 2 and 3 > 2");
}
END_TEST

START_TEST(html_entities) {
  assert_reduces("&lt;&gt;&amp;&quot;&apos;", "<>&\"'");
  assert_reduces("caf&eacute; &euro;&#8364;&#x20ac;&#X20AC;", "café €€€€");
  assert_reduces("&Omega;&omega;&sigmaf;&mdash;&hellip;", "Ωως—…");
  assert_reduces("a&nbsp;b &copy 2026", "a b © 2026");
  /* Unknown names stay; no ';' only works for the legacy few. */
  assert_reduces("&bogus; &eacute &amp", "&bogus; &eacute &");
  /* Numbers browsers remap or refuse. */
  assert_reduces("&#150;&#0;&#xD800;&#x110000;", "–\xef\xbf\xbd\xef\xbf\xbd"
                                                 "\xef\xbf\xbd");
}
END_TEST

START_TEST(html_is_linear) {
  /* Deeply nested and unclosed markup of 4 MiB reduces quickly. */
  size_t n = 4 * 1024 * 1024;
  char *html = malloc(n + 1), *text;

  for (size_t i = 0; i < n; i += 4)
    memcpy(html + i, "<p><", 4);
  html[n] = '\0';
  text = reduce(html);
  free(text);
  free(html);
}
END_TEST

START_TEST(utf8_helpers) {
  size_t n;
  char *s = fetch_to_utf8("caf\xe9", 4, "ISO-8859-1", &n);

  ck_assert_str_eq(s, "café");
  free(s);
  s = fetch_to_utf8("a\xff"
                    "b\0c",
                    5, NULL, &n);
  ck_assert_uint_eq(n, 9);
  ck_assert(memcmp(s,
                   "a\xef\xbf\xbd"
                   "b\xef\xbf\xbd"
                   "c",
                   9) == 0);
  free(s);
  ck_assert_uint_eq(pc_utf8_cut_loose("ab\xe2\x82", 4), 2);
  ck_assert_uint_eq(pc_utf8_cut_loose("ab\xe2\x82\xac", 5), 5);
  s = pc_base64_encode((const unsigned char *)"hello", 5);
  ck_assert_str_eq(s, "aGVsbG8=");
  free(s);
}
END_TEST

static int allowed(const char *robots, const char *path) {
  struct fetch_robots *r =
      fetch_robots_parse(robots, strlen(robots), "mcpd-fetch");
  int ok;

  ck_assert_ptr_nonnull(r);
  ok = fetch_robots_allowed(r, path);
  fetch_robots_free(r);
  return ok;
}

START_TEST(robots_groups) {
  const char *txt = "User-agent: *\nDisallow: /\n\n"
                    "User-agent: other\nUser-Agent: MCPD-Fetch/2.0\n"
                    "Disallow: /private # comment\n"
                    "Allow: /private/open$\n";

  ck_assert(allowed(txt, "/"));
  ck_assert(!allowed(txt, "/private"));
  ck_assert(!allowed(txt, "/private/x"));
  ck_assert(allowed(txt, "/private/open"));
  ck_assert(!allowed(txt, "/private/open/more"));
  /* Without a group of ours, the "*" groups, merged. */
  ck_assert(!allowed("User-agent: *\nDisallow: /a\n"
                     "User-agent: x\nDisallow: /\n"
                     "User-agent: *\nDisallow: /b\n",
                     "/b"));
  ck_assert(allowed("User-agent: x\nDisallow: /\n", "/anything"));
  ck_assert(allowed("User-agent: *\nDisallow:\n", "/anything"));
  ck_assert(allowed("User-agent: *\nDisallow: /\n", "/robots.txt"));
  /* Rules before any User-agent belong to no group. */
  ck_assert(allowed("Disallow: /\n", "/x"));
}
END_TEST

START_TEST(robots_matching) {
  const char *txt = "user-agent: *\n"
                    "disallow: /*.pdf$\n"
                    "disallow: /a*b*c\n"
                    "allow: /tie\n"
                    "disallow: /tie\n"
                    "disallow: /caf\xc3\xa9\n";

  ck_assert(!allowed(txt, "/docs/x.pdf"));
  ck_assert(allowed(txt, "/docs/x.pdf?download=1"));
  ck_assert(!allowed(txt, "/a/xx/b/yy/c"));
  ck_assert(allowed(txt, "/a/c/b"));
  ck_assert(allowed(txt, "/tie")); /* Allow wins a tie */
  ck_assert(!allowed(txt, "/caf%C3%A9/menu"));
  /* The longest rule wins, whatever the order. */
  ck_assert(allowed("user-agent: *\nallow: /p/public\ndisallow: /p\n",
                    "/p/public/x"));
  ck_assert(
      !allowed("user-agent: *\nallow: /p\ndisallow: /p/secret\n", "/p/secret"));
}
END_TEST

static const char *class_of(const char *text) {
  return fetch_address_text_class(text);
}

START_TEST(address_classes) {
  static const char *const refused[] = {
      "0.0.0.0",
      "127.0.0.1",
      "127.255.0.9",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "224.0.0.1",
      "255.255.255.255",
      "::",
      "::1",
      "fe80::1",
      "fc00::1",
      "fd12:3456::1",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "::127.0.0.1",
      "64:ff9b::a9fe:a9fe",
      "2002:7f00:1::",
      "2001:db8::1",
  };
  static const char *const public[] = {
      "1.1.1.1",         "8.8.8.8",        "172.32.0.1",     "100.128.0.1",
      "2606:4700::1111", "::ffff:8.8.8.8", "2002:808:808::",
  };

  for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
    ck_assert_msg(class_of(refused[i]) != NULL, "%s is not refused",
                  refused[i]);
  for (size_t i = 0; i < sizeof(public) / sizeof(public[0]); i++)
    ck_assert_msg(class_of(public[i]) == NULL, "%s is refused as %s", public[i],
                  class_of(public[i]));
  ck_assert_str_eq(class_of("::ffff:127.0.0.1"), "loopback");
  ck_assert_str_eq(class_of("169.254.169.254"), "link-local");
}
END_TEST

START_TEST(host_patterns) {
  struct fetch_hosts list = {0};
  const char *why = NULL;
  char *norm;

  ck_assert_int_eq(fetch_hosts_add(&list, "Example.COM.", &why), 0);
  ck_assert_int_eq(fetch_hosts_add(&list, "*.corp.example", &why), 0);
  ck_assert_int_eq(fetch_hosts_add(&list, "[::1]", &why), 0);
  ck_assert_int_eq(fetch_hosts_add(&list, "http://x/", &why), -1);
  ck_assert_int_eq(fetch_hosts_add(&list, "a.*.b", &why), -1);
  ck_assert(fetch_hosts_match(&list, "example.com"));
  ck_assert(!fetch_hosts_match(&list, "www.example.com"));
  ck_assert(fetch_hosts_match(&list, "a.b.corp.example"));
  ck_assert(!fetch_hosts_match(&list, "corp.example"));
  ck_assert(!fetch_hosts_match(&list, "evilcorp.example"));
  ck_assert(fetch_hosts_match(&list, "::1"));
  norm = fetch_host_normalize("[FE80::1]");
  ck_assert_str_eq(norm, "fe80::1");
  free(norm);
  fetch_hosts_free(&list);
  ck_assert_int_eq(fetch_hosts_add(&list, "*", &why), 0);
  ck_assert(fetch_hosts_match(&list, "anything.at.all"));
  fetch_hosts_free(&list);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fetch");
  TCase *html = tcase_create("html"), *robots = tcase_create("robots"),
        *policy = tcase_create("policy");
  SRunner *sr;
  int failed;

  tcase_add_test(html, html_blocks_and_whitespace);
  tcase_add_test(html, html_dropped);
  tcase_add_test(html, html_entities);
  /* A quadratic reducer would take minutes on the 4 MiB page; a linear
   * one takes well under a second, but sanitized builds on a busy machine
   * need room. */
  tcase_set_timeout(html, 60);
  tcase_add_test(html, html_is_linear);
  tcase_add_test(html, utf8_helpers);
  tcase_add_test(robots, robots_groups);
  tcase_add_test(robots, robots_matching);
  tcase_add_test(policy, address_classes);
  tcase_add_test(policy, host_patterns);
  suite_add_tcase(s, html);
  suite_add_tcase(s, robots);
  suite_add_tcase(s, policy);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
