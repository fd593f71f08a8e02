/* SPDX-License-Identifier: MIT */
/* test_schema.c -- the schemas plugins may declare, and the messages a
 * model reads when its arguments do not match. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "schema.h"
#include "unit.h"

static void assert_root_ok(const char *text) {
  json_object *schema = parse_json(text);
  char err[256] = "";

  ck_assert_msg(schema_check_root(schema, err, sizeof(err)) == 0, "%s: %s",
                text, err);
  json_object_put(schema);
}

/* Expects refusal with a reason containing `reason`. */
static void assert_root_refused(const char *text, const char *reason) {
  json_object *schema = parse_json(text);
  char err[256] = "";

  ck_assert_msg(schema_check_root(schema, err, sizeof(err)) == -1,
                "%s accepted", text);
  ck_assert_msg(strstr(err, reason) != NULL, "%s: \"%s\" lacks \"%s\"", text,
                err, reason);
  json_object_put(schema);
}

START_TEST(test_root_accepts_objects) {
  assert_root_ok("{\"type\":\"object\"}");
  assert_root_ok("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
                 "\"string\"},\"b\":{\"type\":[\"integer\",\"null\"]}},"
                 "\"required\":[\"a\"],\"additionalProperties\":false}");
  assert_root_ok("{\"type\":\"object\",\"properties\":{\"list\":{\"type\":"
                 "\"array\",\"items\":{\"type\":\"number\"}}},"
                 "\"additionalProperties\":{\"type\":\"string\"}}");
  /* Keywords mcpd does not enforce pass through. */
  assert_root_ok("{\"type\":\"object\",\"$schema\":\"x\",\"title\":\"t\","
                 "\"properties\":{\"s\":{\"type\":\"string\",\"format\":"
                 "\"uri\",\"pattern\":\"^a\"}}}");
}
END_TEST

START_TEST(test_root_refusals) {
  assert_root_refused("{\"type\":\"array\"}", "\"type\": \"object\"");
  assert_root_refused("{\"properties\":{}}", "\"type\": \"object\"");
  assert_root_refused("{\"type\":[\"object\"]}", "\"type\": \"object\"");
  assert_root_refused("[]", "object");
  assert_root_refused("true", "object");
  assert_root_refused("{\"type\":\"object\",\"required\":\"a\"}",
                      "\"required\"");
  assert_root_refused("{\"type\":\"object\",\"required\":[1]}", "\"required\"");
  assert_root_refused("{\"type\":\"object\",\"properties\":[]}",
                      "\"properties\"");
  assert_root_refused("{\"type\":\"object\",\"properties\":{\"a\":"
                      "{\"type\":\"strin\"}}}",
                      "strin");
  assert_root_refused("{\"type\":\"object\",\"properties\":{\"a\":"
                      "{\"type\":\"array\",\"items\":5}}}",
                      "schema");
  assert_root_refused("{\"type\":\"object\",\"properties\":{\"a\":"
                      "{\"enum\":\"x\"}}}",
                      "\"enum\"");
}
END_TEST

static void assert_valid(const char *schema_text, const char *value_text) {
  json_object *schema = parse_json(schema_text);
  json_object *value = parse_json(value_text);
  char err[512] = "";

  ck_assert_msg(schema_validate(schema, value, err, sizeof(err)) == 0,
                "%s against %s: %s", value_text, schema_text, err);
  json_object_put(schema);
  json_object_put(value);
}

/* Expects a failure whose message contains every string in `want`. */
static void assert_invalid(const char *schema_text, const char *value_text,
                           const char *want1, const char *want2) {
  json_object *schema = parse_json(schema_text);
  json_object *value = parse_json(value_text);
  char err[512] = "";

  ck_assert_msg(schema_validate(schema, value, err, sizeof(err)) == -1,
                "%s accepted by %s", value_text, schema_text);
  ck_assert_msg(strstr(err, want1) != NULL, "\"%s\" lacks \"%s\"", err, want1);
  if (want2 != NULL)
    ck_assert_msg(strstr(err, want2) != NULL, "\"%s\" lacks \"%s\"", err,
                  want2);
  json_object_put(schema);
  json_object_put(value);
}

#define TEXT_SCHEMA                                                            \
  "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"      \
  "\"required\":[\"text\"],\"additionalProperties\":false}"

START_TEST(test_type_mismatch_names_argument) {
  assert_valid(TEXT_SCHEMA, "{\"text\":\"hi\"}");
  assert_invalid(TEXT_SCHEMA, "{\"text\":5}", "argument 'text'",
                 "expected a string, got an integer");
  assert_invalid(TEXT_SCHEMA, "{\"text\":null}", "argument 'text'", "null");
  assert_invalid(TEXT_SCHEMA, "[]", "the arguments", "expected an object");
}
END_TEST

START_TEST(test_required_missing) {
  assert_invalid(TEXT_SCHEMA, "{}", "argument 'text'", "required");
}
END_TEST

START_TEST(test_additional_properties) {
  assert_invalid(TEXT_SCHEMA, "{\"text\":\"a\",\"extra\":1}",
                 "argument 'extra'", "not an accepted argument");
  /* Allowed by default. */
  assert_valid("{\"type\":\"object\"}", "{\"anything\":[1,{}]}");
  /* A schema for the others. */
  assert_valid("{\"type\":\"object\",\"additionalProperties\":{\"type\":"
               "\"integer\"}}",
               "{\"a\":1,\"b\":2}");
  assert_invalid("{\"type\":\"object\",\"additionalProperties\":{\"type\":"
                 "\"integer\"}}",
                 "{\"a\":1,\"b\":\"2\"}", "argument 'b'", "integer");
}
END_TEST

START_TEST(test_enum_and_const) {
  const char *schema = "{\"type\":\"object\",\"properties\":{\"mode\":"
                       "{\"enum\":[\"fast\",\"slow\",3]}}}";

  assert_valid(schema, "{\"mode\":\"slow\"}");
  assert_valid(schema, "{\"mode\":3}");
  /* 3.0 is the number 3. */
  assert_valid(schema, "{\"mode\":3.0}");
  assert_invalid(schema, "{\"mode\":\"medium\"}", "argument 'mode'",
                 "one of [\"fast\",\"slow\",3]");
  assert_invalid(schema, "{\"mode\":\"3\"}", "argument 'mode'", NULL);
  assert_valid("{\"type\":\"object\",\"properties\":{\"k\":{\"const\":"
               "{\"a\":[1]}}}}",
               "{\"k\":{\"a\":[1]}}");
  assert_invalid("{\"type\":\"object\",\"properties\":{\"k\":{\"const\":"
                 "true}}}",
                 "{\"k\":false}", "argument 'k'", "must equal true");
}
END_TEST

START_TEST(test_nested_paths) {
  const char *schema =
      "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\","
      "\"properties\":{\"b\":{\"type\":\"integer\"}},\"required\":[\"c\"]}}}";

  assert_valid(schema, "{\"a\":{\"b\":1,\"c\":0}}");
  assert_invalid(schema, "{\"a\":{\"b\":\"x\",\"c\":0}}", "argument 'a.b'",
                 "expected an integer, got a string");
  assert_invalid(schema, "{\"a\":{\"b\":1}}", "argument 'a.c'", "required");
}
END_TEST

/* A path longer than 255 bytes is cut there, the rest of the message
 * kept. */
START_TEST(test_long_paths_are_cut) {
  char outer[201], inner[101], schema[800], value[800], want[300];

  memset(outer, 'o', sizeof(outer) - 1);
  outer[sizeof(outer) - 1] = '\0';
  memset(inner, 'i', sizeof(inner) - 1);
  inner[sizeof(inner) - 1] = '\0';
  snprintf(schema, sizeof(schema),
           "{\"type\":\"object\",\"properties\":{\"%s\":{\"type\":"
           "\"object\",\"properties\":{\"%s\":{\"type\":\"integer\"}}}}}",
           outer, inner);
  snprintf(value, sizeof(value), "{\"%s\":{\"%s\":\"x\"}}", outer, inner);
  /* 200 + '.' + the first 54 bytes of the inner key. */
  snprintf(want, sizeof(want), "argument '%s.%.54s': expected an integer",
           outer, inner);
  assert_invalid(schema, value, want, NULL);
  snprintf(value, sizeof(value), "{\"%s\":{}}", outer);
  assert_valid(schema, value);
}
END_TEST

START_TEST(test_array_items) {
  const char *schema =
      "{\"type\":\"object\",\"properties\":{\"list\":{\"type\":\"array\","
      "\"items\":{\"type\":\"string\"},\"minItems\":1,\"maxItems\":3}}}";

  assert_valid(schema, "{\"list\":[\"a\",\"b\"]}");
  assert_invalid(schema, "{\"list\":[\"a\",2]}", "argument 'list[1]'",
                 "expected a string");
  assert_invalid(schema, "{\"list\":[]}", "argument 'list'", "at least 1");
  assert_invalid(schema, "{\"list\":[\"a\",\"b\",\"c\",\"d\"]}",
                 "argument 'list'", "at most 3");
  assert_invalid("{\"type\":\"object\",\"properties\":{\"m\":{\"type\":"
                 "\"array\",\"items\":{\"type\":\"object\",\"properties\":"
                 "{\"x\":{\"type\":\"boolean\"}}}}}}",
                 "{\"m\":[{\"x\":true},{\"x\":1}]}", "argument 'm[1].x'",
                 "boolean");
}
END_TEST

START_TEST(test_integer_and_number) {
  const char *schema = "{\"type\":\"object\",\"properties\":{\"i\":{\"type\":"
                       "\"integer\"},\"n\":{\"type\":\"number\"}}}";

  assert_valid(schema, "{\"i\":3,\"n\":3}");
  assert_valid(schema, "{\"i\":-7,\"n\":2.5}");
  assert_valid(schema, "{\"n\":1e300}");
  assert_invalid(schema, "{\"i\":1.5}", "argument 'i'",
                 "expected an integer, got a number");
  assert_invalid(schema, "{\"i\":\"1\"}", "argument 'i'", NULL);
  assert_invalid(schema, "{\"n\":\"1\"}", "argument 'n'",
                 "expected a number, got a string");
  assert_invalid(schema, "{\"n\":true}", "argument 'n'", "boolean");
  /* A list of types. */
  assert_valid("{\"type\":\"object\",\"properties\":{\"v\":{\"type\":"
               "[\"string\",\"null\"]}}}",
               "{\"v\":null}");
  assert_invalid("{\"type\":\"object\",\"properties\":{\"v\":{\"type\":"
                 "[\"string\",\"null\"]}}}",
                 "{\"v\":1}", "argument 'v'", "one of");
}
END_TEST

START_TEST(test_bounds) {
  const char *schema =
      "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\","
      "\"minimum\":0,\"maximum\":10},\"x\":{\"exclusiveMinimum\":0,"
      "\"exclusiveMaximum\":1}}}";

  assert_valid(schema, "{\"n\":0}");
  assert_valid(schema, "{\"n\":10}");
  assert_valid(schema, "{\"n\":9.5,\"x\":0.5}");
  assert_invalid(schema, "{\"n\":-1}", "argument 'n'", ">= 0");
  assert_invalid(schema, "{\"n\":10.01}", "argument 'n'", "<= 10");
  assert_invalid(schema, "{\"x\":0}", "argument 'x'", "> 0");
  assert_invalid(schema, "{\"x\":1}", "argument 'x'", "< 1");
}
END_TEST

START_TEST(test_string_length_code_points) {
  const char *schema =
      "{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\","
      "\"minLength\":2,\"maxLength\":3}}}";

  /* "é" is two bytes and one character. */
  assert_invalid(schema, "{\"s\":\"\xc3\xa9\"}", "argument 's'",
                 "at least 2 characters");
  assert_valid(schema, "{\"s\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}");
  assert_valid(schema, "{\"s\":\"\\u00e9a\"}");
  /* One astral character (4 bytes, a surrogate pair when escaped). */
  assert_valid(schema, "{\"s\":\"\xf0\x9f\x98\x80x\"}");
  assert_invalid(schema, "{\"s\":\"abcd\"}", "argument 's'",
                 "at most 3 characters");
}
END_TEST

START_TEST(test_err_buffer_bounded) {
  json_object *schema = parse_json(TEXT_SCHEMA);
  json_object *value = parse_json("{\"text\":5}");
  char err[16];

  memset(err, 'X', sizeof(err));
  ck_assert_int_eq(schema_validate(schema, value, err, 8), -1);
  /* Truncated within the size given, and terminated. */
  ck_assert_uint_eq(strlen(err), 7);
  ck_assert_int_eq(err[8], 'X');
  json_object_put(schema);
  json_object_put(value);
}
END_TEST

Suite *schema_suite(void) {
  Suite *s = suite_create("schema");
  TCase *tc;

  tc = tcase_create("root");
  tcase_add_test(tc, test_root_accepts_objects);
  tcase_add_test(tc, test_root_refusals);
  suite_add_tcase(s, tc);

  tc = tcase_create("validate");
  tcase_add_test(tc, test_type_mismatch_names_argument);
  tcase_add_test(tc, test_required_missing);
  tcase_add_test(tc, test_additional_properties);
  tcase_add_test(tc, test_enum_and_const);
  tcase_add_test(tc, test_nested_paths);
  tcase_add_test(tc, test_long_paths_are_cut);
  tcase_add_test(tc, test_array_items);
  tcase_add_test(tc, test_integer_and_number);
  tcase_add_test(tc, test_bounds);
  tcase_add_test(tc, test_string_length_code_points);
  tcase_add_test(tc, test_err_buffer_bounded);
  suite_add_tcase(s, tc);
  return s;
}
