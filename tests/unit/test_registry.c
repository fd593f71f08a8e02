/* SPDX-License-Identifier: MIT */
/* test_registry.c -- tool names, lookup, stable order, paging and the
 * reference counts that keep a removed tool alive while a call uses it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "registry.h"
#include "unit.h"

static int dummy_cb(mcpd_call *call, const mcpd_request *req) {
  (void)call, (void)req;
  return MCPD_OK;
}

/* Two distinct owners; the registry only compares the pointers. */
static char owner_a, owner_b;
#define OWNER_A ((struct plugin *)&owner_a)
#define OWNER_B ((struct plugin *)&owner_b)

static reg_tool *new_tool(const char *name, struct plugin *owner) {
  mcpd_tool def = {0};
  char err[256] = "";
  reg_tool *t;

  def.name = name;
  def.description = "a test tool";
  def.call = dummy_cb;
  t = reg_tool_new(&def, owner, err, sizeof(err));
  ck_assert_msg(t != NULL, "reg_tool_new(%s): %s", name, err);
  ck_assert_uint_eq(t->refs, 1);
  return t;
}

START_TEST(test_valid_name) {
  char name[80];

  memset(name, 'a', 64);
  name[64] = '\0';
  ck_assert(registry_valid_name(name));
  name[64] = 'a';
  name[65] = '\0';
  ck_assert(!registry_valid_name(name));
  ck_assert(registry_valid_name("a.b-c_d"));
  ck_assert(registry_valid_name("A9"));
  ck_assert(registry_valid_name("x"));
  ck_assert(!registry_valid_name(""));
  ck_assert(!registry_valid_name(NULL));
  ck_assert(!registry_valid_name("has space"));
  ck_assert(!registry_valid_name("slash/name"));
  ck_assert(!registry_valid_name("caf\xc3\xa9"));
  ck_assert(!registry_valid_name("tab\t"));
}
END_TEST

/* reg_tool_new refuses a bad table entry with a reason naming the tool. */
static void assert_refused(const mcpd_tool *def, const char *reason) {
  char err[256] = "";
  reg_tool *t = reg_tool_new(def, NULL, err, sizeof(err));

  ck_assert_ptr_null(t);
  ck_assert_msg(strstr(err, reason) != NULL, "\"%s\" lacks \"%s\"", err,
                reason);
}

START_TEST(test_tool_new_refusals) {
  mcpd_tool def = {0};

  def.call = dummy_cb;
  assert_refused(&def, "no name");
  def.name = "has space";
  assert_refused(&def, "\"has space\" is invalid");
  def.name = "ok";
  def.call = NULL;
  assert_refused(&def, "no callback");
  def.call = dummy_cb;
  def.exec = 3;
  assert_refused(&def, "exec mode 3");
  def.exec = MCPD_EXEC_ASYNC;
  def.read_only_hint = 2;
  assert_refused(&def, "hint");
  def.read_only_hint = MCPD_HINT_FALSE;
  def.reserved[2] = &def;
  assert_refused(&def, "reserved");
  def.reserved[2] = NULL;
  def.input_schema = "{not json";
  assert_refused(&def, "not valid JSON");
  def.input_schema = "{\"type\":\"object\"} trailing";
  assert_refused(&def, "not valid JSON");
  def.input_schema = "{\"type\":\"array\"}";
  assert_refused(&def, "\"type\": \"object\"");
  def.input_schema = NULL;
  def.output_schema = "[]";
  assert_refused(&def, "output schema");
  def.output_schema = NULL;
  def.task_support = 3;
  assert_refused(&def, "unknown task_support 3");
  def.task_support = MCPD_TASK_OPTIONAL;
  def.task_start = -1;
  assert_refused(&def, "task_start -1");
}
END_TEST

/* Task support is listed as execution.taskSupport, and an isolated
 * plugin's host reads it back from the listing, start included. */
START_TEST(test_task_support_listed) {
  mcpd_tool def = {0};
  char err[256] = "";
  reg_tool *t, *copy;
  json_object *listed;

  def.name = "job";
  def.call = dummy_cb;
  def.task_support = MCPD_TASK_REQUIRED;
  def.task_start = MCPD_TASK_ON_REQUEST;
  t = reg_tool_new(&def, NULL, err, sizeof(err));
  ck_assert_ptr_nonnull(t);
  ck_assert_str_eq(plain(t->listing),
                   "{\"name\":\"job\",\"inputSchema\":{\"type\":"
                   "\"object\"},\"execution\":{\"taskSupport\":"
                   "\"required\"},\"_meta\":{\"io.mcpd/taskStart\":"
                   "\"on-request\"}}");
  /* As a worker's tools/list brings it: parsed from text. */
  listed = json_tokener_parse(plain(t->listing));
  copy = reg_entry_remote(REG_TOOL, listed, NULL, err, sizeof(err));
  json_object_put(listed);
  ck_assert_msg(copy != NULL, "%s", err);
  ck_assert_int_eq(copy->task_support, MCPD_TASK_REQUIRED);
  ck_assert_int_eq(copy->task_start, MCPD_TASK_ON_REQUEST);
  reg_entry_release(copy);
  reg_entry_release(t);

  /* Forbidden, the default, is not listed; a start without support means
   * nothing. */
  def.task_support = MCPD_TASK_FORBIDDEN;
  t = reg_tool_new(&def, NULL, err, sizeof(err));
  ck_assert_ptr_nonnull(t);
  ck_assert_str_eq(plain(t->listing), "{\"name\":\"job\",\"inputSchema\":"
                                      "{\"type\":\"object\"}}");
  ck_assert_int_eq(t->task_start, MCPD_TASK_AT_START);
  reg_entry_release(t);
}
END_TEST

START_TEST(test_listing) {
  mcpd_tool def = {0};
  char err[256] = "";
  reg_tool *t;

  def.name = "echo";
  def.title = "Echo";
  def.description = "Returns the text.";
  def.call = dummy_cb;
  def.read_only_hint = MCPD_HINT_TRUE;
  def.destructive_hint = MCPD_HINT_FALSE;
  t = reg_tool_new(&def, NULL, err, sizeof(err));
  ck_assert_ptr_nonnull(t);
  /* No schema means an empty object schema; unset hints are left out. */
  ck_assert_str_eq(plain(t->listing),
                   "{\"name\":\"echo\",\"title\":\"Echo\",\"description\":"
                   "\"Returns the text.\",\"inputSchema\":{\"type\":"
                   "\"object\"},\"annotations\":{\"title\":\"Echo\","
                   "\"readOnlyHint\":true,\"destructiveHint\":false}}");
  reg_entry_release(t);

  def.title = NULL;
  def.read_only_hint = def.destructive_hint = MCPD_HINT_UNSET;
  def.input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{}}}";
  def.output_schema = "{\"type\":\"object\"}";
  t = reg_tool_new(&def, NULL, err, sizeof(err));
  ck_assert_ptr_nonnull(t);
  ck_assert_str_eq(plain(t->listing),
                   "{\"name\":\"echo\",\"description\":\"Returns the text.\","
                   "\"inputSchema\":{\"type\":\"object\",\"properties\":"
                   "{\"a\":{}}},\"outputSchema\":{\"type\":\"object\"}}");
  reg_entry_release(t);
}
END_TEST

START_TEST(test_add_find_remove) {
  registry r;
  reg_tool *a, *b;

  ck_assert_int_eq(registry_init(&r), 0);
  ck_assert_ptr_null(registry_find(&r, REG_TOOL, "a"));
  a = new_tool("a", OWNER_A);
  b = new_tool("b", OWNER_A);
  ck_assert_int_eq(registry_add(&r, a), 0);
  ck_assert_int_eq(registry_add(&r, b), 0);
  ck_assert_uint_eq(registry_count(&r, REG_TOOL), 2);
  ck_assert(r.changed & REGISTRY_TOOLS);
  ck_assert_ptr_eq(registry_find(&r, REG_TOOL, "a"), a);
  ck_assert_ptr_eq(registry_find(&r, REG_TOOL, "b"), b);
  ck_assert_ptr_null(registry_find(&r, REG_TOOL, "c"));
  ck_assert_ptr_null(registry_find(&r, REG_TOOL, "A"));

  r.changed = 0;
  ck_assert_int_eq(registry_remove(&r, a), 0);
  ck_assert(r.changed & REGISTRY_TOOLS);
  ck_assert_ptr_null(registry_find(&r, REG_TOOL, "a"));
  ck_assert_ptr_eq(registry_find(&r, REG_TOOL, "b"), b);
  ck_assert_uint_eq(registry_count(&r, REG_TOOL), 1);
  ck_assert_ptr_eq(registry_at(&r, REG_TOOL, 0), b);
  ck_assert_uint_eq(b->index, 0);
  registry_free(&r);
}
END_TEST

START_TEST(test_remove_absent) {
  registry r;
  reg_tool *a = new_tool("a", OWNER_A), *other = new_tool("a", OWNER_B);

  ck_assert_int_eq(registry_init(&r), 0);
  ck_assert_int_eq(registry_remove(&r, a), -1);
  ck_assert_int_eq(registry_add(&r, a), 0);
  /* Same name, different entry: not what is registered. */
  ck_assert_int_eq(registry_remove(&r, other), -1);
  ck_assert_ptr_eq(registry_find(&r, REG_TOOL, "a"), a);
  reg_entry_release(other);
  registry_free(&r);
}
END_TEST

START_TEST(test_duplicate_refused) {
  registry r;
  reg_tool *first = new_tool("same", OWNER_A);
  reg_tool *second = new_tool("same", OWNER_B);

  ck_assert_int_eq(registry_init(&r), 0);
  ck_assert_int_eq(registry_add(&r, first), 0);
  ck_assert_int_eq(registry_add(&r, second), -1);
  /* The first one stays; the second is still the caller's. */
  ck_assert_ptr_eq(registry_find(&r, REG_TOOL, "same"), first);
  ck_assert_uint_eq(registry_count(&r, REG_TOOL), 1);
  ck_assert_uint_eq(second->refs, 1);
  reg_entry_release(second);
  registry_free(&r);
}
END_TEST

START_TEST(test_remove_owner) {
  registry r;
  char name[16];

  ck_assert_int_eq(registry_init(&r), 0);
  for (int i = 0; i < 10; i++) {
    snprintf(name, sizeof(name), "t%d", i);
    ck_assert_int_eq(
        registry_add(&r, new_tool(name, i % 2 ? OWNER_B : OWNER_A)), 0);
  }
  ck_assert_uint_eq(registry_remove_owner(&r, OWNER_A), 5);
  ck_assert_uint_eq(registry_count(&r, REG_TOOL), 5);
  for (size_t i = 0; i < registry_count(&r, REG_TOOL); i++) {
    snprintf(name, sizeof(name), "t%zu", 2 * i + 1);
    ck_assert_str_eq(registry_at(&r, REG_TOOL, i)->name, name);
    ck_assert_uint_eq(registry_at(&r, REG_TOOL, i)->index, i);
    ck_assert_ptr_eq(registry_find(&r, REG_TOOL, name),
                     registry_at(&r, REG_TOOL, i));
  }
  ck_assert_ptr_null(registry_find(&r, REG_TOOL, "t0"));
  ck_assert_uint_eq(registry_remove_owner(&r, OWNER_A), 0);
  registry_free(&r);
}
END_TEST

/* The names on one page, joined with commas. */
static void page(registry *r, size_t offset, size_t limit, char *out,
                 size_t outlen, size_t *next) {
  json_object *tools = registry_list(r, REG_TOOL, offset, limit, next);
  size_t n = json_object_array_length(tools), used = 0;

  out[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    json_object *name;
    ck_assert(json_object_object_get_ex(json_object_array_get_idx(tools, i),
                                        "name", &name));
    used += (size_t)snprintf(out + used, outlen - used, "%s%s", i ? "," : "",
                             json_object_get_string(name));
    ck_assert_uint_lt(used, outlen);
  }
  json_object_put(tools);
}

START_TEST(test_pagination) {
  registry r;
  char names[512], name[16];
  size_t next;

  ck_assert_int_eq(registry_init(&r), 0);
  for (int i = 0; i < 7; i++) {
    snprintf(name, sizeof(name), "t%d", i);
    ck_assert_int_eq(registry_add(&r, new_tool(name, OWNER_A)), 0);
  }
  page(&r, 0, 3, names, sizeof(names), &next);
  ck_assert_str_eq(names, "t0,t1,t2");
  ck_assert_uint_eq(next, 3);
  page(&r, next, 3, names, sizeof(names), &next);
  ck_assert_str_eq(names, "t3,t4,t5");
  ck_assert_uint_eq(next, 6);
  page(&r, next, 3, names, sizeof(names), &next);
  ck_assert_str_eq(names, "t6");
  ck_assert_uint_eq(next, 0);
  /* A page that ends exactly at the end is the last one. */
  page(&r, 4, 3, names, sizeof(names), &next);
  ck_assert_str_eq(names, "t4,t5,t6");
  ck_assert_uint_eq(next, 0);
  page(&r, 0, 100, names, sizeof(names), &next);
  ck_assert_str_eq(names, "t0,t1,t2,t3,t4,t5,t6");
  ck_assert_uint_eq(next, 0);
  /* Past the end: empty, last. */
  page(&r, 7, 3, names, sizeof(names), &next);
  ck_assert_str_eq(names, "");
  ck_assert_uint_eq(next, 0);
  page(&r, 50, 3, names, sizeof(names), &next);
  ck_assert_str_eq(names, "");
  ck_assert_uint_eq(next, 0);
  page(&r, 1, (size_t)-1, names, sizeof(names), &next);
  ck_assert_str_eq(names, "t1,t2,t3,t4,t5,t6");
  ck_assert_uint_eq(next, 0);

  /* Order is registration order and survives removals. */
  ck_assert_int_eq(registry_remove(&r, registry_find(&r, REG_TOOL, "t1")), 0);
  ck_assert_int_eq(registry_add(&r, new_tool("t1", OWNER_A)), 0);
  page(&r, 0, 100, names, sizeof(names), &next);
  ck_assert_str_eq(names, "t0,t2,t3,t4,t5,t6,t1");
  registry_free(&r);
}
END_TEST

START_TEST(test_many_tools) {
  registry r;
  char name[16];

  ck_assert_int_eq(registry_init(&r), 0);
  for (int i = 0; i < 5000; i++) {
    snprintf(name, sizeof(name), "tool%d", i);
    ck_assert_int_eq(registry_add(&r, new_tool(name, OWNER_A)), 0);
  }
  ck_assert_uint_eq(registry_count(&r, REG_TOOL), 5000);
  for (int i = 0; i < 5000; i += 97) {
    snprintf(name, sizeof(name), "tool%d", i);
    ck_assert_ptr_nonnull(registry_find(&r, REG_TOOL, name));
    ck_assert_str_eq(registry_find(&r, REG_TOOL, name)->name, name);
  }
  registry_free(&r);
}
END_TEST

/* A call in flight holds a reference: removing the tool from the registry
 * must not free it.  Under valgrind or ASan a premature free shows here. */
START_TEST(test_removed_while_referenced) {
  registry r;
  reg_tool *t, *held;

  ck_assert_int_eq(registry_init(&r), 0);
  t = new_tool("busy", OWNER_A);
  ck_assert_int_eq(registry_add(&r, t), 0);
  held = reg_entry_ref(registry_find(&r, REG_TOOL, "busy"));
  ck_assert_uint_eq(held->refs, 2);
  ck_assert_int_eq(registry_remove(&r, held), 0);
  ck_assert_ptr_null(registry_find(&r, REG_TOOL, "busy"));
  ck_assert_uint_eq(held->refs, 1);
  /* Still whole. */
  ck_assert_str_eq(held->name, "busy");
  ck_assert(held->cb == dummy_cb);
  ck_assert_str_eq(plain(held->input_schema), "{\"type\":\"object\"}");
  /* A new tool may take the name meanwhile. */
  ck_assert_int_eq(registry_add(&r, new_tool("busy", OWNER_B)), 0);
  ck_assert_ptr_ne(registry_find(&r, REG_TOOL, "busy"), held);
  reg_entry_release(held);
  registry_free(&r);
}
END_TEST

START_TEST(test_registry_free_with_refs) {
  registry r;
  reg_tool *held;

  ck_assert_int_eq(registry_init(&r), 0);
  ck_assert_int_eq(registry_add(&r, new_tool("x", OWNER_A)), 0);
  held = reg_entry_ref(registry_find(&r, REG_TOOL, "x"));
  registry_free(&r);
  ck_assert_str_eq(held->name, "x");
  reg_entry_release(held);
  /* Release of NULL is a no-op. */
  reg_entry_release(NULL);
}
END_TEST

Suite *registry_suite(void) {
  Suite *s = suite_create("registry");
  TCase *tc;

  tc = tcase_create("names");
  tcase_add_test(tc, test_valid_name);
  tcase_add_test(tc, test_tool_new_refusals);
  tcase_add_test(tc, test_listing);
  tcase_add_test(tc, test_task_support_listed);
  suite_add_tcase(s, tc);

  tc = tcase_create("core");
  tcase_add_test(tc, test_add_find_remove);
  tcase_add_test(tc, test_remove_absent);
  tcase_add_test(tc, test_duplicate_refused);
  tcase_add_test(tc, test_remove_owner);
  tcase_add_test(tc, test_pagination);
  tcase_add_test(tc, test_many_tools);
  suite_add_tcase(s, tc);

  tc = tcase_create("refcount");
  tcase_add_test(tc, test_removed_while_referenced);
  tcase_add_test(tc, test_registry_free_with_refs);
  suite_add_tcase(s, tc);
  return s;
}
