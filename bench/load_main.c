/* SPDX-License-Identifier: MIT */
/* load_main.c -- mcpd-load's command line: it reads the options and the
 * one or two server commands, then hands the runs to load.c.  It sits
 * above load.c and both transports (it names them), so that load.c, which
 * the transports call, never calls them back by name. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: mcpd-load [options] -- SERVER [ARGS...] [--vs SERVER2 "
          "[ARGS...]]\n"
          "  -n N               measured requests (default 10000)\n"
          "  -w W               requests kept in flight (default 1)\n"
          "  --method M         ping or tools/call (default ping)\n"
          "  --tool NAME        tool for tools/call (default echo)\n"
          "  --tool-vs NAME     tool for the --vs server (default --tool)\n"
          "  --args JSON        tool arguments (default {\"text\":\"hello\"})\n"
          "  --expect TEXT      every result must contain TEXT\n"
          "  --warmup K         unmeasured requests first (default 1000)\n"
          "  --label L          label for the output line\n"
          "  --startup R        time spawn to initialize answered, R times\n"
          "  --chunk C          with --vs, requests per turn (default 2000)\n"
          "  --timeout S        seconds without a response before giving up"
          " (default 10)\n"
          "  --transport T      stdio or http (default stdio)\n"
          "  --transport-vs T   transport of the --vs server (default"
          " --transport)\n"
          "  --era E            legacy (initialize, then requests) or modern"
          "\n"
          "                     (2026-07-28: no handshake, _meta on every"
          " request)\n"
          "  --era-vs E         era of the --vs server (default --era)\n"
          "  -q, --quiet        send the server's stderr to /dev/null\n"
          "With --vs, both servers run interleaved, one line each.\n"
          "Over http the server must listen on port 0 and log \"listening on"
          " http://HOST:PORT/PATH\"\n"
          "on stderr; the driver connects there.\n"
          "Prints one line of key=value pairs per server; exits 1 on any "
          "error.\n");
}

static int64_t parse_count(const char *s, const char *what, int64_t min) {
  char *end;
  long long v;

  errno = 0;
  v = strtoll(s, &end, 10);
  if (errno || *end != '\0' || v < min) {
    fprintf(stderr, "mcpd-load: bad %s: %s\n", what, s);
    exit(2);
  }
  return v;
}

/* 1 for the modern era, 0 for the legacy one. */
static int parse_era(const char *name) {
  if (strcmp(name, "legacy") == 0)
    return 0;
  if (strcmp(name, "modern") == 0)
    return 1;
  fprintf(stderr, "mcpd-load: bad era: %s (legacy or modern)\n", name);
  exit(2);
}

static const load_transport *parse_transport(const char *name) {
  if (strcmp(name, load_stdio_transport.name) == 0)
    return &load_stdio_transport;
  if (strcmp(name, load_http_transport.name) == 0)
    return &load_http_transport;
  fprintf(stderr, "mcpd-load: bad transport: %s (stdio or http)\n", name);
  exit(2);
}

/* What the options choose beyond load_opt. */
typedef struct cmdline {
  const char *tool, *tool_vs, *args;
  const load_transport *tp, *tp_vs;
  int era, era_vs;
} cmdline;

/* Reads the options into load_opt and `cl`.  Returns -1 when the run goes
 * on (optind is then the first word of the server command), or the exit
 * status: 0 after --help, 2 for a bad option. */
static int parse_options(int argc, char **argv, cmdline *cl) {
  static const struct option longopts[] = {
      {"method", required_argument, NULL, 'm'},
      {"tool", required_argument, NULL, 't'},
      {"tool-vs", required_argument, NULL, 'V'},
      {"args", required_argument, NULL, 'a'},
      {"expect", required_argument, NULL, 'e'},
      {"warmup", required_argument, NULL, 'k'},
      {"label", required_argument, NULL, 'l'},
      {"startup", required_argument, NULL, 's'},
      {"chunk", required_argument, NULL, 'c'},
      {"timeout", required_argument, NULL, 'T'},
      {"transport", required_argument, NULL, 'x'},
      {"transport-vs", required_argument, NULL, 'X'},
      {"era", required_argument, NULL, 'E'},
      {"era-vs", required_argument, NULL, 'F'},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int c;

  load_opt.n = 10000;
  load_opt.window = 1;
  load_opt.warmup = 1000;
  load_opt.timeout_s = 10;
  load_opt.method = "ping";
  cl->tool = "echo";
  cl->tool_vs = NULL;
  cl->tp = &load_stdio_transport;
  cl->tp_vs = NULL;
  cl->era = 0;
  cl->era_vs = -1;
  cl->args = "{\"text\":\"hello\"}";

  while ((c = getopt_long(argc, argv, "+n:w:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'n':
      load_opt.n = parse_count(optarg, "-n", 1);
      break;
    case 'w':
      load_opt.window = parse_count(optarg, "-w", 1);
      break;
    case 'm':
      load_opt.method = optarg;
      break;
    case 't':
      cl->tool = optarg;
      break;
    case 'V':
      cl->tool_vs = optarg;
      break;
    case 'a':
      cl->args = optarg;
      break;
    case 'e':
      load_opt.expect = optarg;
      break;
    case 'k':
      load_opt.warmup = parse_count(optarg, "--warmup", 0);
      break;
    case 'l':
      load_opt.label = optarg;
      break;
    case 's':
      load_opt.startup = (int)parse_count(optarg, "--startup", 1);
      break;
    case 'c':
      load_opt.chunk = parse_count(optarg, "--chunk", 1);
      break;
    case 'T':
      load_opt.timeout_s = (int)parse_count(optarg, "--timeout", 1);
      break;
    case 'x':
      cl->tp = parse_transport(optarg);
      break;
    case 'X':
      cl->tp_vs = parse_transport(optarg);
      break;
    case 'E':
      cl->era = parse_era(optarg);
      break;
    case 'F':
      cl->era_vs = parse_era(optarg);
      break;
    case 'q':
      load_opt.quiet = 1;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind >= argc) {
    usage(stderr);
    return 2;
  }
  return -1;
}

int main(int argc, char **argv) {
  load_run servers[2];
  cmdline cl;
  int count = 1;
  int status = parse_options(argc, argv, &cl);

  if (status >= 0)
    return status;
  /* The first server's command runs up to "--vs", the second's after it. */
  memset(servers, 0, sizeof(servers));
  servers[0].argv = argv + optind;
  servers[0].index = 1;
  servers[0].tp = cl.tp;
  servers[1].tp = cl.tp_vs ? cl.tp_vs : cl.tp;
  servers[0].modern = cl.era;
  servers[1].modern = cl.era_vs >= 0 ? cl.era_vs : cl.era;
  for (int i = optind; i < argc; i++) {
    if (strcmp(argv[i], "--vs") == 0) {
      argv[i] = NULL;
      if (i == optind || i + 1 >= argc) {
        usage(stderr);
        return 2;
      }
      servers[1].argv = argv + i + 1;
      servers[1].index = 2;
      count = 2;
      break;
    }
  }
  if (load_opt.chunk == 0)
    load_opt.chunk = count == 2 ? 2000 : load_opt.n;
  if ((servers[0].modern || (count == 2 && servers[1].modern)) &&
      strcmp(load_opt.method, "ping") == 0) {
    fprintf(stderr, "mcpd-load: the modern era has no ping; use --method "
                    "tools/call or a list\n");
    return 2;
  }
  load_build_request(&servers[0], cl.tool, cl.args);
  load_build_request(&servers[1], cl.tool_vs ? cl.tool_vs : cl.tool, cl.args);

  load_start();
  if (load_opt.startup > 0)
    return load_run_startup(servers, count);
  return load_run_servers(servers, count);
}
