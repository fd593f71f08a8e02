/* SPDX-License-Identifier: MIT */
/* main.c -- one test program, one suite per unit.
 *
 * Tests run in fork mode (Check's default), so a crash fails one test and
 * the crash suite can expect a tool's SIGSEGV.  CK_RUN_SUITE and CK_FORK
 * select suites and the mode, as usual with Check. */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

int main(void) {
  const char *base = getenv("TMPDIR");
  char scratch[PATH_MAX];
  SRunner *sr;
  int failed;

  /* A fixture that writes to a closed pipe must fail its test, not kill
   * the runner. */
  signal(SIGPIPE, SIG_IGN);

  /* Every temporary file of the run -- plugin folders, captured logs, the
   * loader's private copies -- goes under one folder that this process
   * removes at the end, so tests that crash on purpose or fail before
   * their teardown leave nothing behind. */
  snprintf(scratch, sizeof(scratch), "%s/mcpd-unit-run-XXXXXX",
           base != NULL && base[0] == '/' ? base : "/tmp");
  if (mkdtemp(scratch) == NULL) {
    fprintf(stderr, "unit_tests: mkdtemp %s: %s\n", scratch, strerror(errno));
    return EXIT_FAILURE;
  }
  setenv("TMPDIR", scratch, 1);
  setenv("XDG_RUNTIME_DIR", scratch, 1);

  sr = srunner_create(framer_suite());
  srunner_add_suite(sr, jsonrpc_suite());
  srunner_add_suite(sr, rpc_peer_suite());
  srunner_add_suite(sr, id_table_suite());
  srunner_add_suite(sr, log_suite());
  srunner_add_suite(sr, handles_suite());
  srunner_add_suite(sr, request_state_suite());
  srunner_add_suite(sr, negotiation_suite());
  srunner_add_suite(sr, session_suite());
  srunner_add_suite(sr, schema_suite());
  srunner_add_suite(sr, uritpl_suite());
  srunner_add_suite(sr, registry_suite());
  srunner_add_suite(sr, loader_suite());
  srunner_add_suite(sr, crash_suite());
  srunner_add_suite(sr, tools_suite());
  srunner_add_suite(sr, content_suite());
  srunner_add_suite(sr, server_suite());
  srunner_add_suite(sr, watch_suite());
  srunner_add_suite(sr, auth_suite());
  srunner_add_suite(sr, settings_suite());
  srunner_add_suite(sr, era_suite());
  srunner_add_suite(sr, streamable_modern_suite());
  srunner_add_suite(sr, calls_suite());
  srunner_add_suite(sr, subscribe_suite());
  srunner_add_suite(sr, worker_suite());
  srunner_add_suite(sr, call_suite());
  srunner_add_suite(sr, schedule_suite());
  srunner_add_suite(sr, result_suite());
  srunner_add_suite(sr, ask_suite());
  srunner_add_suite(sr, remote_suite());
  srunner_add_suite(sr, plugin_api_suite());
  srunner_add_suite(sr, host_api_suite());

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
