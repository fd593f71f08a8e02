/* SPDX-License-Identifier: MIT */
/* exec.c -- the "exec" plugin: programs as tools.
 *
 * Each tool of its config runs one fixed program.  The arguments, checked
 * by mcpd against the tool's inputSchema, reach it as named argv entries
 * appended after the fixed command, or as JSON on its stdin -- never
 * through a shell.  stdout is the result (structuredContent when the tool
 * declares an outputSchema), a non-zero exit is an isError result with the
 * tail of stderr, and output beyond a limit is cut and says so.  The
 * program runs in a process group of its own with only the configured
 * environment; a timeout or a cancellation kills the whole group.
 *
 * Config ("plugins": {"exec": {"tools": {"NAME": {...}}}}), per tool:
 *   command         ["/abs/program", "fixed", "args"] (REQUIRED)
 *   description     for the model
 *   inputSchema     JSON Schema of the arguments (default: no arguments)
 *   argv            argument names appended in order after the command
 *   stdin           "json": the arguments as JSON on stdin
 *   outputSchema    stdout must be JSON matching it: structuredContent
 *   timeoutMs       default 30000
 *   maxOutputBytes  default 1048576
 *   cwd             the working directory (default mcpd's)
 *   env             {"NAME": "value"}: the whole environment (default none)
 *
 * On Linux the program also gets SIGKILL when the thread that started it
 * goes away (PR_SET_PDEATHSIG), so a crashed mcpd leaves none behind.  The
 * portable build (MCPD_PORTABLE) has no such call: there a program that
 * outlives mcpd sees EOF on its stdin and EPIPE on its stdout.
 */
#ifndef MCPD_PORTABLE
#define _GNU_SOURCE /* pipe2 */
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__) && !defined(MCPD_PORTABLE)
#include <sys/prctl.h>
#endif

#include <mcpd.h>

#include "../common/buf.h"
#include "../common/plugin_config.h"

#define DEFAULT_TIMEOUT_MS 30000
#define DEFAULT_MAX_OUTPUT (1 << 20)
#define STDERR_TAIL 2048
#define POLL_MS 50

typedef struct exec_tool {
  char *name;
  char **argv; /* the fixed command, NULL-terminated */
  size_t n_fixed;
  char **names; /* arguments appended, in order */
  size_t n_names;
  int stdin_json;
  char *cwd;
  char **envp; /* NULL-terminated */
  int64_t timeout_ms;
  int64_t max_output;
  int structured;
} exec_tool;

typedef struct exec_state {
  const mcpd_host *host;
  exec_tool *tools;
  size_t n;
} exec_state;

/* --- running one program ---------------------------------------------- */

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Appends a copy of `s` to the NULL-terminated `*argv`. */
static void push_string(char ***argv, size_t *n, size_t *cap, const char *s) {
  if (*n + 2 > *cap) {
    char **grown = realloc(*argv, (*cap = *cap * 2 + 8) * sizeof(**argv));
    if (grown == NULL)
      return;
    *argv = grown;
  }
  if (((*argv)[*n] = strdup(s)) != NULL)
    (*n)++;
  (*argv)[*n] = NULL;
}

/* One argument's value as argv entries: a string as it is, anything else
 * as its JSON text; an array gives one entry per element. */
static void push_value(char ***argv, size_t *n, size_t *cap, json_object *v) {
  if (json_object_is_type(v, json_type_array)) {
    for (size_t i = 0; i < json_object_array_length(v); i++)
      push_value(argv, n, cap, json_object_array_get_idx(v, i));
    return;
  }
  push_string(argv, n, cap,
              json_object_is_type(v, json_type_string)
                  ? json_object_get_string(v)
                  : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

typedef struct run {
  struct pc_buf out;
  char err[STDERR_TAIL];
  size_t err_len;  /* bytes in err (a ring once full) */
  size_t err_seen; /* bytes of stderr in all */
  int truncated;
  int timed_out, cancelled;
  int status; /* waitpid's */
  int exec_errno;
} run;

static void keep_stderr(run *r, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    r->err[(r->err_seen + i) % STDERR_TAIL] = p[i];
  r->err_seen += n;
}

/* The last bytes of stderr, in order, into `out` (NUL-terminated). */
static void stderr_tail(const run *r, char *out, size_t size) {
  size_t n = r->err_seen < STDERR_TAIL ? r->err_seen : STDERR_TAIL;
  size_t start = r->err_seen < STDERR_TAIL ? 0 : r->err_seen % STDERR_TAIL;
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < size; i++)
    out[o++] = r->err[(start + i) % STDERR_TAIL];
  while (o > 0 && (out[o - 1] == '\n' || out[o - 1] == ' '))
    o--;
  out[o] = '\0';
}

#ifdef MCPD_PORTABLE
/* Without pipe2(), a pipe becomes close-on-exec a moment after it is made,
 * and a program forked by another call in that moment would keep its
 * ends, so this call would see EOF only when that program ends.  The calls
 * of this plugin make their pipes and fork one at a time. */
static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;
#endif

/* pipe(2) with both ends close-on-exec. */
static int cloexec_pipe(int fd[2]) {
#ifndef MCPD_PORTABLE
  return pipe2(fd, O_CLOEXEC);
#else
  if (pipe(fd) != 0)
    return -1;
  if (fcntl(fd[0], F_SETFD, FD_CLOEXEC) != 0 ||
      fcntl(fd[1], F_SETFD, FD_CLOEXEC) != 0) {
    int e = errno;
    close(fd[0]);
    close(fd[1]);
    fd[0] = fd[1] = -1;
    errno = e;
    return -1;
  }
  return 0;
#endif
}

/* Makes the four pipes of a run and forks: fork()'s result, or -1 with
 * errno when a pipe or the fork failed. */
static pid_t pipes_and_fork(int *ends[4]) {
  pid_t pid = -1;

#ifdef MCPD_PORTABLE
  pthread_mutex_lock(&spawn_lock);
#endif
  for (int i = 0; i < 4; i++)
    if (cloexec_pipe(ends[i]) != 0)
      goto out;
  pid = fork();
out:
#ifdef MCPD_PORTABLE
  if (pid != 0) { /* the child leaves the lock alone: it runs execve */
    int e = errno;
    pthread_mutex_unlock(&spawn_lock);
    errno = e;
  }
#endif
  return pid;
}

/* Forks and runs `argv`; fills `r`.  Returns 0, or -1 with errno when the
 * pipes or the fork failed. */
static int spawn_and_wait(const mcpd_host *host, mcpd_call *call,
                          const exec_tool *t, char **argv, const char *input,
                          run *r) {
  int in[2], out[2], err[2], report[2];
  int64_t deadline = now_ms() + t->timeout_ms;
  size_t in_len = input ? strlen(input) : 0, in_off = 0;
  pid_t pid;
  char buf[16384];

  int *ends[] = {in, out, err, report};
  for (int i = 0; i < 4; i++)
    ends[i][0] = ends[i][1] = -1;
  if ((pid = pipes_and_fork(ends)) < 0)
    goto fail;
  if (pid == 0) {
    /* Only async-signal-safe calls from here on: this is a copy of a
     * threaded process. */
    int e;
    setpgid(0, 0);
#if defined(__linux__) && !defined(MCPD_PORTABLE)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (t->cwd != NULL && chdir(t->cwd) != 0) {
      e = errno;
      (void)!write(report[1], &e, sizeof(e));
      _exit(126);
    }
    execve(argv[0], argv, t->envp);
    e = errno;
    (void)!write(report[1], &e, sizeof(e));
    _exit(127);
  }
  setpgid(pid, pid);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  close(report[1]);
  if (read(report[0], &r->exec_errno, sizeof(r->exec_errno)) !=
      sizeof(r->exec_errno))
    r->exec_errno = 0;
  close(report[0]);
  if (in_len == 0) {
    close(in[1]);
    in[1] = -1;
  } else {
    fcntl(in[1], F_SETFL, O_NONBLOCK);
  }

  for (int open_fds = 2; open_fds > 0;) {
    struct pollfd fds[3] = {
        {out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
    int64_t left = deadline - now_ms();

    if (!r->cancelled && host->cancelled(call)) {
      r->cancelled = 1;
      kill(-pid, SIGKILL);
    } else if (!r->timed_out && !r->cancelled && left <= 0) {
      r->timed_out = 1;
      kill(-pid, SIGKILL);
    }
    if (poll(fds, in[1] >= 0 ? 3 : 2, POLL_MS) < 0 && errno != EINTR)
      break;
    for (int k = 0; k < 2; k++) {
      ssize_t n;
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      n = read(fds[k].fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        close(fds[k].fd);
        if (k == 0)
          out[0] = -1;
        else
          err[0] = -1;
        open_fds--;
        continue;
      }
      if (k == 1) {
        keep_stderr(r, buf, (size_t)n);
      } else if ((int64_t)(r->out.len + (size_t)n) > t->max_output) {
        /* Enough: what came is the answer, and the program stops. */
        size_t room = (size_t)(t->max_output - (int64_t)r->out.len);
        pc_buf_append(&r->out, buf, room);
        if (!r->truncated)
          kill(-pid, SIGKILL);
        r->truncated = 1;
      } else if (r->truncated) {
        continue;
      } else {
        pc_buf_append(&r->out, buf, (size_t)n);
      }
    }
    if (in[1] >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in[1], input + in_off, in_len - in_off);
      if (n > 0)
        in_off += (size_t)n;
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || in_off == in_len) {
        close(in[1]);
        in[1] = -1;
      }
    }
    /* An empty pollfd slot is skipped by poll; keep the indexes. */
    fds[0].fd = out[0];
    fds[1].fd = err[0];
  }
  if (in[1] >= 0)
    close(in[1]);
  while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
    ;
  /* Nothing the program started outlives its call. */
  kill(-pid, SIGKILL);
  return 0;

fail : {
  int e = errno;
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 2; k++)
      if (ends[i][k] >= 0)
        close(ends[i][k]);
  errno = e;
}
  return -1;
}

static int run_tool(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const exec_tool *t = req->data;
  char **argv = NULL, tail[STDERR_TAIL + 1];
  size_t n = 0, cap = 0;
  const char *input = NULL;
  run r;
  int rc;

  memset(&r, 0, sizeof(r));
  for (size_t i = 0; i < t->n_fixed; i++)
    push_string(&argv, &n, &cap, t->argv[i]);
  for (size_t i = 0; i < t->n_names; i++) {
    json_object *v;
    if (json_object_object_get_ex(req->arguments, t->names[i], &v) &&
        !json_object_is_type(v, json_type_null))
      push_value(&argv, &n, &cap, v);
  }
  if (t->stdin_json)
    input =
        json_object_to_json_string_ext(req->arguments, JSON_C_TO_STRING_PLAIN);
  if (argv == NULL || spawn_and_wait(host, call, t, argv, input, &r) != 0) {
    rc = host->result_error(call, "%s: cannot start %s: %s", t->name,
                            t->argv[0], strerror(errno));
  } else if (r.exec_errno != 0) {
    rc = host->result_error(call, "%s: cannot run %s: %s", t->name, t->argv[0],
                            strerror(r.exec_errno));
  } else if (r.cancelled) {
    rc = host->result_error(call, "%s: cancelled; its processes were killed",
                            t->name);
  } else if (r.timed_out) {
    stderr_tail(&r, tail, sizeof(tail));
    rc = host->result_error(call,
                            "%s: timed out after %lld ms; its processes were "
                            "killed%s%s",
                            t->name, (long long)t->timeout_ms,
                            tail[0] ? "; stderr: " : "", tail);
  } else if (r.truncated && !t->structured) {
    rc = host->result_text_len(call, r.out.data ? r.out.data : "", r.out.len);
    if (rc == MCPD_OK)
      rc = host->result_textf(call,
                              "[output cut at %lld bytes (maxOutputBytes); "
                              "the program was stopped]",
                              (long long)t->max_output);
  } else if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
    stderr_tail(&r, tail, sizeof(tail));
    if (WIFSIGNALED(r.status))
      rc = host->result_error(call, "%s: killed by signal %d%s%s", t->name,
                              WTERMSIG(r.status), tail[0] ? "; stderr: " : "",
                              tail);
    else
      rc = host->result_error(call, "%s: exited with status %d%s%s", t->name,
                              WEXITSTATUS(r.status),
                              tail[0] ? "; stderr: " : "", tail);
  } else if (t->structured) {
    json_object *obj =
        r.truncated ? NULL
                    : json_tokener_parse(r.out.data != NULL ? r.out.data : "");
    if (!json_object_is_type(obj, json_type_object)) {
      json_object_put(obj);
      rc = host->result_error(call,
                              "%s: its output is not a JSON object%s, which "
                              "its outputSchema requires",
                              t->name,
                              r.truncated ? " (cut at maxOutputBytes)" : "");
    } else {
      rc = host->result_structured(call, obj);
    }
  } else {
    rc = host->result_text_len(call, r.out.data ? r.out.data : "", r.out.len);
  }
  for (size_t i = 0; i < n; i++)
    free(argv[i]);
  free(argv);
  pc_buf_free(&r.out);
  return rc;
}

/* --- the config ---------------------------------------------------------- */

static char *copy_string(json_object *v) {
  return json_object_is_type(v, json_type_string)
             ? strdup(json_object_get_string(v))
             : NULL;
}

/* A NULL-terminated copy of an array of strings; NULL when `v` is not one
 * (an empty array gives an empty list). */
static char **string_list(json_object *v, size_t *n) {
  size_t len =
      json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
  char **list;

  if (!json_object_is_type(v, json_type_array) ||
      (list = calloc(len + 1, sizeof(*list))) == NULL)
    return NULL;
  for (size_t i = 0; i < len; i++) {
    json_object *e = json_object_array_get_idx(v, i);
    if (!json_object_is_type(e, json_type_string) ||
        (list[i] = strdup(json_object_get_string(e))) == NULL) {
      for (size_t k = 0; k < i; k++)
        free(list[k]);
      free(list);
      return NULL;
    }
  }
  *n = len;
  return list;
}

static void free_list(char **list) {
  if (list == NULL)
    return;
  for (char **p = list; *p; p++)
    free(*p);
  free(list);
}

/* Reads tool `name` from `def` into `t` and registers it. */
static int add_one(const mcpd_host *host, mcpd_self *self, const char *name,
                   json_object *def, exec_tool *t, char **errmsg) {
  json_object *v;
  mcpd_tool tool = {0};
  const char *schema = "{\"type\":\"object\",\"properties\":{},"
                       "\"additionalProperties\":false}";
  size_t n_env = 0;

  v = NULL;
  t->name = strdup(name);
  t->timeout_ms = DEFAULT_TIMEOUT_MS;
  t->max_output = DEFAULT_MAX_OUTPUT;
  if (!json_object_is_type(def, json_type_object))
    return config_error(host, errmsg, "tools.%s must be an object", name);
  if (!json_object_object_get_ex(def, "command", &v) ||
      (t->argv = string_list(v, &t->n_fixed)) == NULL || t->n_fixed == 0 ||
      t->argv[0][0] != '/')
    return config_error(host, errmsg,
                        "tools.%s.command must be a non-empty array of "
                        "strings starting with an absolute path (no $PATH "
                        "lookup, no shell)",
                        name);
  if (json_object_object_get_ex(def, "argv", &v) &&
      (t->names = string_list(v, &t->n_names)) == NULL)
    return config_error(
        host, errmsg, "tools.%s.argv must be an array of argument names", name);
  if (json_object_object_get_ex(def, "stdin", &v)) {
    if (!json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), "json") != 0)
      return config_error(host, errmsg, "tools.%s.stdin must be \"json\"",
                          name);
    t->stdin_json = 1;
  }
  if (json_object_object_get_ex(def, "timeoutMs", &v) &&
      config_int(host, errmsg, "timeoutMs", v, 1, 86400000, &t->timeout_ms) !=
          MCPD_OK)
    return MCPD_ERROR;
  if (json_object_object_get_ex(def, "maxOutputBytes", &v) &&
      config_int(host, errmsg, "maxOutputBytes", v, 1024, 64 << 20,
                 &t->max_output) != MCPD_OK)
    return MCPD_ERROR;
  if (json_object_object_get_ex(def, "cwd", &v) &&
      (t->cwd = copy_string(v)) == NULL)
    return config_error(host, errmsg, "tools.%s.cwd must be a string", name);
  /* The environment is what the config gives, and nothing else. */
  v = NULL;
  if (json_object_object_get_ex(def, "env", &v) &&
      !json_object_is_type(v, json_type_object))
    return config_error(host, errmsg, "tools.%s.env must be an object", name);
  t->envp = calloc((v != NULL && json_object_is_type(v, json_type_object)
                        ? (size_t)json_object_object_length(v)
                        : 0) +
                       1,
                   sizeof(*t->envp));
  if (t->envp == NULL)
    return config_error(host, errmsg, "out of memory");
  if (json_object_object_get_ex(def, "env", &v)) {
    json_object_object_foreach(v, key, val) {
      if (!json_object_is_type(val, json_type_string) || strchr(key, '=') ||
          (t->envp[n_env] = host->mprintf("%s=%s", key,
                                          json_object_get_string(val))) == NULL)
        return config_error(host, errmsg,
                            "tools.%s.env.%s must be a string (and the name "
                            "hold no '=')",
                            name, key);
      n_env++;
    }
  }
  tool.name = name;
  if (json_object_object_get_ex(def, "description", &v))
    tool.description = json_object_get_string(v);
  if (json_object_object_get_ex(def, "inputSchema", &v))
    schema = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
  tool.input_schema = schema;
  if (json_object_object_get_ex(def, "outputSchema", &v)) {
    tool.output_schema =
        json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    t->structured = 1;
  }
  tool.call = run_tool;
  tool.exec = MCPD_EXEC_POOL;
  tool.open_world_hint = MCPD_HINT_TRUE;
  tool.data = t;
  if (host->add_tool(self, &tool) != MCPD_OK)
    return config_error(host, errmsg, "tools.%s: %s", name, host->last_error());
  return MCPD_OK;
}

static void exec_fini(void *state) {
  exec_state *st = state;
  if (st == NULL)
    return;
  for (size_t i = 0; i < st->n; i++) {
    exec_tool *t = &st->tools[i];
    free(t->name);
    free_list(t->argv);
    free_list(t->names);
    free(t->cwd);
    if (t->envp != NULL)
      for (char **p = t->envp; *p; p++)
        st->host->free(*p);
    free(t->envp);
  }
  free(st->tools);
  free(st);
}

static int exec_init(const mcpd_host *host, mcpd_self *self,
                     json_object *config, void **state, char **errmsg) {
  exec_state *st = calloc(1, sizeof(*st));
  json_object *tools = NULL;
  size_t n;

  if (st == NULL)
    return config_error(host, errmsg, "out of memory");
  st->host = host;
  *state = st;
  if (config == NULL || !json_object_object_get_ex(config, "tools", &tools)) {
    host->log(self, MCPD_LOG_INFO,
              "no tools configured (\"plugins\": {\"exec\": {\"tools\": "
              "{...}}})");
    return MCPD_OK;
  }
  if (!json_object_is_type(tools, json_type_object))
    return config_error(host, errmsg, "tools must be an object");
  n = (size_t)json_object_object_length(tools);
  if ((st->tools = calloc(n ? n : 1, sizeof(*st->tools))) == NULL)
    return config_error(host, errmsg, "out of memory");
  json_object_object_foreach(tools, name, def) {
    if (add_one(host, self, name, def, &st->tools[st->n++], errmsg) != MCPD_OK)
      return MCPD_ERROR;
  }
  return MCPD_OK;
}

MCPD_PLUGIN_DEFINE(.name = "exec", .version = "1.0",
                   .description = "Programs as tools: each configured tool "
                                  "runs one fixed program, never a shell",
                   .init = exec_init, .fini = exec_fini);
