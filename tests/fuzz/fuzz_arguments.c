/* SPDX-License-Identifier: MIT */
/* fuzz_arguments.c -- libFuzzer harness for the path a tool call's
 * "arguments" take: JSON parsing, schema validation, the call into a
 * plugin, and the result back to the client.
 *
 * The whole input is the arguments text (corpus files are plain JSON).
 *
 * 1. It is parsed as mcpd parses a message (jsonrpc_parse: strict json-c,
 *    UTF-8, number and surrogate checks) and, when that succeeds, validated
 *    against a set of input schemas compiled at start-up the way plugin
 *    schemas are (reg_tool_new -> schema_check_root), covering every
 *    keyword mcpd enforces.  Invariants: the verdict and the message are
 *    the same twice in a row and on an uncompiled copy of the schema
 *    (the compiled and the fallback keyword lookups agree); a refusal has
 *    a message.  (The message may quote an argument name cut inside a
 *    UTF-8 sequence; the session repairs every message on its way out.)
 *
 * 2. The raw input text is embedded as "arguments" in a tools/call of the
 *    echo plugin, sent to a session initialized for 2025-11-25, and as a
 *    one-request batch to a session initialized for 2025-03-26.
 *    Invariants: exactly one reply each, valid per fuzz_check_message
 *    (strict JSON, UTF-8, one line); an object gets a result, never a
 *    protocol error (unless nested past the parser's depth limit): a
 *    refusal whose text is the schema verdict from step 1 (up to its first
 *    ill-formed byte, which must have become U+FFFD), or echo's text back
 *    byte for byte; anything else gets the matching error; the batch
 *    reply carries the same result.
 *
 * Both sessions live across inputs: only tools/call reaches them, which
 * changes no session state, echo answers inline, and nothing may be left in
 * flight (checked). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "jsonrpc.h"
#include "registry.h"
#include "schema.h"

static fuzz_server fs;
static json_tokener *tok;
static memory_transport mt_plain, mt_batch;
static session *s_plain, *s_batch;
static reg_tool **tools;
static json_object **copies; /* the same schemas, never compiled */
static size_t n_tools;
static json_object *echo_schema;

/* Input schemas as plugins would declare them.  Keep every one valid:
 * start-up fails on a schema mcpd refuses. */
static const char *const schemas[] = {
    /* echo's own */
    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","
    "\"description\":\"The text to send back.\"}},\"required\":[\"text\"],"
    "\"additionalProperties\":false}",
    /* the default for a tool without one */
    "{\"type\":\"object\"}",
    /* every keyword */
    "{\"type\":\"object\",\"properties\":{"
    "\"s\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":8},"
    "\"n\":{\"type\":\"number\",\"minimum\":-1.5,\"maximum\":1e6,"
    "\"exclusiveMinimum\":-2,\"exclusiveMaximum\":1000001},"
    "\"i\":{\"type\":\"integer\",\"minimum\":0},"
    "\"b\":{\"type\":\"boolean\"},\"z\":{\"type\":\"null\"},"
    "\"e\":{\"enum\":[\"a\",1,1.5,null,true,{\"k\":[1]},[]]},"
    "\"c\":{\"const\":{\"x\":[1,\"2\",null]}},"
    "\"a\":{\"type\":\"array\",\"items\":{\"type\":[\"string\",\"integer\"]},"
    "\"minItems\":1,\"maxItems\":4},"
    "\"o\":{\"type\":\"object\",\"properties\":{\"deep\":{\"type\":\"object\","
    "\"properties\":{\"deeper\":{\"type\":\"array\",\"items\":{\"type\":"
    "\"object\",\"required\":[\"k\"],\"additionalProperties\":{\"type\":"
    "\"string\"}}}}}},\"required\":[\"deep\"],\"additionalProperties\":false},"
    "\"t\":{\"type\":[\"string\",\"number\",\"null\"]},"
    "\"f\":false,\"T\":true},"
    "\"required\":[\"s\"],"
    "\"additionalProperties\":{\"type\":\"integer\",\"maximum\":10}}",
    /* boolean and nested item schemas, unknown keywords passed through */
    "{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"array\","
    "\"items\":{\"type\":\"array\",\"items\":false}},"
    "\"r\":{\"$ref\":\"#\",\"pattern\":\"^a\",\"format\":\"uri\"}},"
    "\"additionalProperties\":true}",
    /* required names that are not properties */
    "{\"type\":\"object\",\"properties\":{\"u\":{\"type\":\"string\","
    "\"minLength\":3,\"maxLength\":3}},\"required\":[\"u\",\"v\",\"\"],"
    "\"additionalProperties\":false}",
    /* numeric edges */
    "{\"type\":\"object\",\"properties\":{"
    "\"big\":{\"type\":\"integer\",\"minimum\":-9223372036854775808,"
    "\"maximum\":18446744073709551615},"
    "\"tiny\":{\"type\":\"number\",\"exclusiveMinimum\":-1e-308,"
    "\"exclusiveMaximum\":1e-308},"
    "\"odd\":{\"type\":\"string\",\"minLength\":0.5,\"maxLength\":-1},"
    "\"few\":{\"type\":\"array\",\"minItems\":1e300}},"
    "\"additionalProperties\":{\"enum\":[0,1.0,-0.0,9007199254740993,"
    "\"\\u0000\",\"\\ud836\\udc00\"]}}",
    /* deep property chains */
    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\","
    "\"properties\":{\"a\":{\"type\":\"object\",\"properties\":{\"a\":{"
    "\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\","
    "\"items\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
    "\"object\",\"additionalProperties\":{\"type\":\"object\","
    "\"additionalProperties\":{\"const\":\"\\u00e9\"}}}}}}}}}}}}}}",
    /* const and enum of containers, type lists with every name */
    "{\"type\":\"object\",\"additionalProperties\":{\"type\":[\"string\","
    "\"number\",\"integer\",\"boolean\",\"object\",\"array\",\"null\"],"
    "\"const\":[[],{},[{}],\"x\"]},\"properties\":{\"k\":{\"enum\":[[1,2],"
    "{\"a\":1,\"b\":2},{\"b\":2,\"a\":1}]}}}",
};

static int dummy_call(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_ERROR;
}

static session *open_session(memory_transport *mt, const char *version) {
  char line[512];
  session *s;

  memory_transport_init(mt, NULL, NULL);
  s = server_open_session(&fs.srv, memory_transport_write, mt);
  FUZZ_CHECK(s != NULL, "server_open_session failed");
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
           "\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"0\"}}}",
           version);
  session_handle_line(s, line, strlen(line));
  FUZZ_CHECK(mt->n == 1 && strstr(mt->msgs[0], "\"result\"") != NULL,
             "initialize failed");
  memory_transport_clear(mt);
  return s;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  size_t n = sizeof(schemas) / sizeof(schemas[0]);
  reg_tool *echo;
  (void)argc, (void)argv;

  static const char *const plugins[] = {"echo.so", NULL};
  static const char *const want[] = {"echo", NULL};
  fuzz_server_init(&fs, plugins, want, NULL);
  tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH);
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  tools = calloc(n, sizeof(*tools));
  copies = calloc(n, sizeof(*copies));
  for (size_t i = 0; i < n; i++) {
    mcpd_tool def;
    char name[16], err[400];
    memset(&def, 0, sizeof(def));
    snprintf(name, sizeof(name), "schema%zu", i);
    def.name = name;
    def.input_schema = schemas[i];
    def.call = dummy_call;
    def.exec = MCPD_EXEC_INLINE;
    tools[i] = reg_tool_new(&def, NULL, err, sizeof(err));
    if (tools[i] == NULL) {
      fprintf(stderr, "fuzz: schema %zu refused: %s\n", i, err);
      exit(1);
    }
    /* json_object_deep_copy refuses objects with userdata, which compiled
     * schemas carry; a text round trip copies without it. */
    copies[i] = json_tokener_parse(json_object_to_json_string_ext(
        tools[i]->input_schema, JSON_C_TO_STRING_PLAIN));
    FUZZ_CHECK(copies[i] != NULL &&
                   json_object_equal(copies[i], tools[i]->input_schema),
               "schema %zu does not survive a text round trip", i);
  }
  n_tools = n;
  echo = registry_find(&fs.srv.registry, REG_TOOL, "echo");
  echo_schema = echo->input_schema;
  s_plain = open_session(&mt_plain, "2025-11-25");
  s_batch = open_session(&mt_batch, "2025-03-26");
  return 0;
}

/* Step 1: one schema, twice, and on an uncompiled copy. */
static void check_schema(json_object *schema, json_object *copy,
                         json_object *value) {
  char err1[512], err2[512], err3[512];
  int rc1, rc2, rc3;

  memset(err1, 'x', sizeof(err1));
  rc1 = schema_validate(schema, value, err1, sizeof(err1));
  FUZZ_CHECK(rc1 == 0 || rc1 == -1, "schema_validate returned %d", rc1);
  if (rc1 != 0) {
    FUZZ_CHECK(memchr(err1, '\0', sizeof(err1)) != NULL && err1[0] != '\0',
               "refusal without a message");
  }
  rc2 = schema_validate(schema, value, err2, sizeof(err2));
  FUZZ_CHECK(rc1 == rc2 && (rc1 == 0 || strcmp(err1, err2) == 0),
             "validation is not repeatable: %d %d", rc1, rc2);
  rc3 = schema_validate(copy, value, err3, sizeof(err3));
  FUZZ_CHECK(rc1 == rc3 && (rc1 == 0 || strcmp(err1, err3) == 0),
             "compiled and uncompiled schema disagree: %d (%s) vs %d (%s)", rc1,
             rc1 ? err1 : "", rc3, rc3 ? err3 : "");
  FUZZ_CHECK(json_object_get_userdata(copy) == NULL,
             "validation compiled the copy");
}

static int depth_of(json_object *v) {
  int deepest = 0;
  if (json_object_is_type(v, json_type_object)) {
    json_object_object_foreach(v, key, child) {
      int d = depth_of(child);
      (void)key;
      if (d > deepest)
        deepest = d;
    }
    return deepest + 1;
  }
  if (json_object_is_type(v, json_type_array)) {
    size_t n = json_object_array_length(v);
    for (size_t i = 0; i < n; i++) {
      int d = depth_of(json_object_array_get_idx(v, i));
      if (d > deepest)
        deepest = d;
    }
    return deepest + 1;
  }
  return 0;
}

/* Sends `line` and returns its one reply, checked and parsed. */
static json_object *call(session *s, memory_transport *mt, const char *line,
                         size_t len) {
  json_object *msg;

  memory_transport_clear(mt);
  session_handle_line(s, line, len);
  FUZZ_CHECK(mt->n == 1, "tools/call got %zu replies", mt->n);
  FUZZ_CHECK(s->requests_in_flight == 0, "a request is still in flight");
  msg = fuzz_check_message(mt->msgs[0], strlen(mt->msgs[0]));
  memory_transport_clear(mt);
  return msg;
}

static int code_of(json_object *msg) {
  json_object *v;
  if (!json_object_object_get_ex(msg, "error", &v) ||
      !json_object_object_get_ex(v, "code", &v))
    return 0;
  return json_object_get_int(v);
}

/* Whether `got` is `want` as it must reach the client: equal up to the
 * first ill-formed UTF-8 byte of `want`, which must have become U+FFFD
 * (how many U+FFFD a bad sequence becomes is the repair's business). */
static int same_text(const char *got, size_t got_len, const char *want) {
  size_t n = strlen(want), ok = fuzz_utf8_prefix(want, n);

  if (ok == n)
    return got_len == n && memcmp(got, want, n) == 0;
  return got_len >= ok + 3 && memcmp(got, want, ok) == 0 &&
         memcmp(got + ok, "\xEF\xBF\xBD", 3) == 0;
}

/* Step 2's expectations for an object that parsed as `args`. */
static void check_result(json_object *msg, json_object *args, int deep,
                         const char *input) {
  json_object *result, *content, *block, *v, *want;
  char err[512], text[700];
  int valid;

  if (!json_object_object_get_ex(msg, "result", &result)) {
    FUZZ_CHECK(deep && code_of(msg) == JSONRPC_PARSE_ERROR,
               "arguments object got an error: %.300s -> %.300s", input,
               json_object_to_json_string(msg));
    return;
  }
  FUZZ_CHECK(json_object_object_get_ex(result, "content", &content) &&
                 json_object_is_type(content, json_type_array) &&
                 json_object_array_length(content) == 1,
             "result without one content block: %.300s",
             json_object_to_json_string(msg));
  block = json_object_array_get_idx(content, 0);
  FUZZ_CHECK(json_object_object_get_ex(block, "type", &v) &&
                 strcmp(json_object_get_string(v), "text") == 0 &&
                 json_object_object_get_ex(block, "text", &v) &&
                 json_object_is_type(v, json_type_string),
             "content block is no text block: %.300s",
             json_object_to_json_string(msg));
  valid = schema_validate(echo_schema, args, err, sizeof(err)) == 0;
  if (!valid) {
    snprintf(text, sizeof(text), "Invalid arguments for tool echo: %s", err);
    FUZZ_CHECK(same_text(json_object_get_string(v),
                         (size_t)json_object_get_string_len(v), text),
               "refusal text %s, want %s", json_object_get_string(v), text);
    FUZZ_CHECK(json_object_object_get_ex(result, "isError", &v) &&
                   json_object_get_boolean(v),
               "refusal without isError");
    return;
  }
  FUZZ_CHECK(json_object_object_get_ex(args, "text", &want), "no text");
  FUZZ_CHECK(json_object_get_string_len(v) ==
                     json_object_get_string_len(want) &&
                 memcmp(json_object_get_string(v), json_object_get_string(want),
                        (size_t)json_object_get_string_len(want)) == 0,
             "echo changed the text: %.300s -> %.300s", input,
             json_object_to_json_string(msg));
  FUZZ_CHECK(!json_object_object_get_ex(result, "isError", &v) ||
                 !json_object_get_boolean(v),
             "echo's answer is marked isError");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
                             "\"tools/call\",\"params\":{\"name\":\"echo\","
                             "\"arguments\":";
  static const char tail[] = "}}";
  const char *input = (const char *)data, *why;
  json_object *args = NULL, *plain, *batch, *v;
  char *line;
  size_t len;
  int deep = 0, parsed = 0;

  if (size > 1 << 20)
    return 0;
  if (jsonrpc_parse(tok, input, size, &args, &why) == 0) {
    parsed = 1;
    for (size_t i = 0; i < n_tools; i++)
      check_schema(tools[i]->input_schema, copies[i], args);
    deep = depth_of(args) >= JSONRPC_MAX_DEPTH - 8;
  }

  /* [ head input tail ] */
  len = 1 + (sizeof(head) - 1) + size + (sizeof(tail) - 1) + 1;
  line = malloc(len + 1);
  FUZZ_CHECK(line != NULL, "out of memory");
  line[0] = '[';
  memcpy(line + 1, head, sizeof(head) - 1);
  memcpy(line + 1 + sizeof(head) - 1, data, size);
  memcpy(line + 1 + sizeof(head) - 1 + size, tail, sizeof(tail) - 1);
  line[len - 1] = ']';
  line[len] = '\0';

  plain = call(s_plain, &mt_plain, line + 1, len - 2);
  batch = call(s_batch, &mt_batch, line, len);
  free(line);

  if (json_object_object_get_ex(plain, "id", &v) && v != NULL)
    FUZZ_CHECK(json_object_get_int(v) == 7, "reply id is not 7");
  /* Text that is no JSON value of its own may still complete the message
   * into something valid (`{}},"x":{`): only the checks above apply. */
  if (!parsed)
    goto done;
  if (json_object_is_type(args, json_type_object)) {
    check_result(plain, args, deep, input);
  } else {
    /* null means no arguments (refused by echo's schema), anything else
     * is invalid params. */
    int code = code_of(plain);
    FUZZ_CHECK((deep && code == JSONRPC_PARSE_ERROR) ||
                   (args == NULL ? code == 0 : code == JSONRPC_INVALID_PARAMS),
               "non-object arguments got code %d: %.300s", code, input);
  }
  /* The batch of one says the same, as an array. */
  if (!(deep && code_of(batch) == JSONRPC_PARSE_ERROR)) {
    json_object *item;
    FUZZ_CHECK(json_object_is_type(batch, json_type_array) &&
                   json_object_array_length(batch) == 1,
               "batch reply is not one response: %.300s",
               json_object_to_json_string(batch));
    item = json_object_array_get_idx(batch, 0);
    FUZZ_CHECK(json_object_equal(item, plain),
               "batch and plain replies differ:\n%s\n%s",
               json_object_to_json_string(item),
               json_object_to_json_string(plain));
  }
done:
  json_object_put(plain);
  json_object_put(batch);
  json_object_put(args);
  fuzz_server_turn(&fs);
  return 0;
}
