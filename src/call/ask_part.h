/* SPDX-License-Identifier: MIT */
/* ask_part.h -- the part of a call that ask.c owns: what the call asked
 * of its client, and what a modern call still needs answered.  Only ask.c
 * touches these fields; it is declared below the call core so that struct
 * mcpd_call can hold it without a circle. */
#ifndef MCPD_ASK_PART_H
#define MCPD_ASK_PART_H

#include <json-c/json.h>

struct client_ask;

typedef struct call_ask {
  /* CLIENT_* bits the call asked the client for and the modern request
   * did not declare: a call that then fails answers -32021 naming them.
   * Written with the handle's slot locked or on the loop. */
  unsigned missing_caps;
  struct client_ask *asks; /* requests to the client in flight (loop) */
  /* Input required (modern tools/call, resources/read, prompts/get): the
   * requests the run made that had no answer yet (key -> {method,
   * params}) and the keys of the answers it used, for the input_required
   * result and its requestState; how often each request was made (key ->
   * count).  Written with the handle's slot locked and read on the loop
   * once the call completed. */
  json_object *inputs;
  json_object *used;
  json_object *asked;
  double last_progress; /* progress() must increase */
} call_ask;

#endif
