/* main.c -- one test program, one suite per unit.
 *
 * Tests run in fork mode (Check's default), so a crash fails one test and
 * the crash suite can expect a tool's SIGSEGV.  CK_RUN_SUITE and CK_FORK
 * select suites and the mode, as usual with Check. */
#include "config.h"

#include <signal.h>
#include <stdlib.h>

#include "unit.h"

int main(void) {
  SRunner *sr;
  int failed;

  /* A fixture that writes to a closed pipe must fail its test, not kill
   * the runner. */
  signal(SIGPIPE, SIG_IGN);

  sr = srunner_create(framer_suite());
  srunner_add_suite(sr, jsonrpc_suite());
  srunner_add_suite(sr, negotiation_suite());
  srunner_add_suite(sr, session_suite());
  srunner_add_suite(sr, schema_suite());
  srunner_add_suite(sr, registry_suite());
  srunner_add_suite(sr, loader_suite());
  srunner_add_suite(sr, crash_suite());
  srunner_add_suite(sr, tools_suite());

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
