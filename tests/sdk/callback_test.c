/* callback_test.c -- the guide's "Testing a callback outside mcpd", built
 * and run by tests/sdk/build-flags.sh so that the guide cannot rot: it
 * calls examples/hello's tool callback with a hand-made mcpd_request and a
 * test host table, without mcpd. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plugin's source, included whole, so its static callbacks are in
 * reach. */
#include "hello.c"

/* mcpd_call is opaque to plugins, so a test may give it any body: here,
 * where the fake host keeps the result. */
struct mcpd_call {
  char text[256];
};

static char *test_mprintf(const char *fmt, ...) {
  va_list ap;
  char *out = malloc(256);

  if (out == NULL)
    return NULL;
  va_start(ap, fmt);
  vsnprintf(out, 256, fmt, ap);
  va_end(ap);
  return out;
}

static void test_free(void *ptr) {
  free(ptr);
}

static int test_result_text(mcpd_call *call, const char *text) {
  snprintf(call->text, sizeof(call->text), "%s", text);
  return MCPD_OK;
}

int main(void) {
  /* Only the functions the callback uses; a NULL one it calls crashes the
   * test, which is what a test should do. */
  static const mcpd_host host = {
      .size = sizeof(mcpd_host),
      .abi_major = MCPD_ABI_MAJOR,
      .abi_minor = MCPD_ABI_MINOR,
      .mprintf = test_mprintf,
      .free = test_free,
      .result_text = test_result_text,
  };
  json_object *args = json_tokener_parse("{\"name\":\"World\"}");
  mcpd_request req = {
      .size = sizeof(req),
      .host = &host,
      .name = "hello",
      .arguments = args,
  };
  mcpd_call call = {{0}};
  int rc = hello(&call, &req);

  json_object_put(args);
  if (rc != MCPD_OK || strcmp(call.text, "Hello, World!") != 0) {
    fprintf(stderr, "hello answered %d, \"%s\"\n", rc, call.text);
    return 1;
  }
  return 0;
}
