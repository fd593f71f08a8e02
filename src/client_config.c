/* SPDX-License-Identifier: MIT */
/* client_config.c -- `mcpd install` and `mcpd uninstall` (see
 * client_config.h).  Each client keeps its servers under one key of a JSON
 * object, in a file at a place it documents:
 *
 *   claude-desktop  mcpServers  ~/.config/Claude/claude_desktop_config.json
 *                               (macOS: ~/Library/Application Support/Claude/)
 *   cursor          mcpServers  ~/.cursor/mcp.json
 *   vscode          servers     ~/.config/Code/User/mcp.json
 *                               (macOS: ~/Library/Application
 * Support/Code/User/) claude-code     mcpServers  ~/.claude.json (user scope)
 *   gemini          mcpServers  ~/.gemini/settings.json
 *
 * ($XDG_CONFIG_HOME replaces ~/.config.)  The file is parsed, the one
 * entry set or deleted, and the whole written back: json-c keeps the other
 * members in their order and every number as it was written.  Comments,
 * which VS Code allows, cannot be kept; the backup keeps them, and mcpd
 * says so. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "client_config.h"
#include "strbuf.h"

/* Larger configs than this are not what these clients write. */
#define CONFIG_MAX (16u << 20)

typedef struct client {
  const char *id;    /* on the command line */
  const char *title; /* in messages */
  const char *key;   /* the member that holds the servers */
  int typed;         /* the entry says "type": "stdio" */
  int with_env;      /* the entry has an "env" object */
  /* Under $HOME, or under $XDG_CONFIG_HOME (default ~/.config) when
   * `xdg`; on macOS, `mac` under $HOME when set. */
  const char *path;
  int xdg;
  const char *mac;
} client;

static const client clients[] = {
    {"claude-desktop", "Claude Desktop", "mcpServers", 0, 0,
     "Claude/claude_desktop_config.json", 1,
     "Library/Application Support/Claude/claude_desktop_config.json"},
    {"cursor", "Cursor", "mcpServers", 0, 0, ".cursor/mcp.json", 0, NULL},
    {"vscode", "VS Code", "servers", 1, 0, "Code/User/mcp.json", 1,
     "Library/Application Support/Code/User/mcp.json"},
    {"claude-code", "Claude Code", "mcpServers", 1, 1, ".claude.json", 0, NULL},
    {"gemini", "Gemini CLI", "mcpServers", 0, 0, ".gemini/settings.json", 0,
     NULL},
};

static const client *find_client(const char *id) {
  for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++)
    if (strcmp(clients[i].id, id) == 0)
      return &clients[i];
  return NULL;
}

/* The client's config file by its documented place, into `out`; -1 after
 * saying why when the folder it is under is not known.  Windows: %APPDATA%
 * where the others have ~/.config (Claude Desktop, VS Code), else the
 * user's profile folder. */
#ifdef _WIN32
static int default_path(const client *c, strbuf *out) {
  const char *var = c->xdg ? "APPDATA" : "USERPROFILE";
  const char *base = getenv(var);

  if (base == NULL || base[0] == '\0') {
    fprintf(stderr, "mcpd: %%%s%% is not set; name the file with --config\n",
            var);
    return -1;
  }
  strbuf_puts(out, base);
  strbuf_puts(out, "/");
  strbuf_puts(out, c->path);
  /* One separator throughout, as the rest of mcpd writes paths. */
  for (size_t i = 0; !out->failed && i < out->len; i++)
    if (out->data[i] == '\\')
      out->data[i] = '/';
  return 0;
}
#else
static int default_path(const client *c, strbuf *out) {
  const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");

  if (home == NULL || home[0] == '\0') {
    fprintf(stderr, "mcpd: $HOME is not set; name the file with --config\n");
    return -1;
  }
#ifdef __APPLE__
  if (c->mac != NULL) {
    strbuf_puts(out, home);
    strbuf_puts(out, "/");
    strbuf_puts(out, c->mac);
    return 0;
  }
#endif
  if (c->xdg && xdg != NULL && xdg[0] == '/') {
    strbuf_puts(out, xdg);
  } else {
    strbuf_puts(out, home);
    if (c->xdg)
      strbuf_puts(out, "/.config");
  }
  strbuf_puts(out, "/");
  strbuf_puts(out, c->path);
  return 0;
}
#endif

/* --- reading ------------------------------------------------------------ */

/* Reads all of `path` into `out`.  Returns 1 when read, 0 when there is
 * no such file, -1 after saying why. */
static int read_file(const char *path, strbuf *out, struct stat *st) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  char buf[65536];
  ssize_t n;

  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    fprintf(stderr, "mcpd: cannot open %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    fprintf(stderr, "mcpd: %s is not a regular file\n", path);
    close(fd);
    return -1;
  }
  while ((n = read(fd, buf, sizeof(buf))) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || out->len + (size_t)n > CONFIG_MAX) {
      fprintf(stderr, "mcpd: cannot read %s: %s\n", path,
              n < 0 ? strerror(errno) : "larger than 16 MiB");
      close(fd);
      return -1;
    }
    strbuf_append(out, buf, (size_t)n);
  }
  close(fd);
  if (out->failed) {
    fprintf(stderr, "mcpd: out of memory reading %s\n", path);
    return -1;
  }
  return 1;
}

/* Whether JSON text has a // or block comment outside its strings. */
static int has_comments(const char *s, size_t len) {
  int in_string = 0;

  for (size_t i = 0; i < len; i++) {
    if (in_string) {
      if (s[i] == '\\')
        i++;
      else if (s[i] == '"')
        in_string = 0;
    } else if (s[i] == '"') {
      in_string = 1;
    } else if (s[i] == '/' && i + 1 < len &&
               (s[i + 1] == '/' || s[i + 1] == '*')) {
      return 1;
    }
  }
  return 0;
}

/* The JSON object in `text`, or NULL after saying where it is broken. */
static json_object *parse_config(const char *path, const strbuf *text) {
  json_tokener *tok = json_tokener_new_ex(512);
  json_object *obj = NULL;
  enum json_tokener_error err = json_tokener_success;
  size_t end = 0, line = 1, col = 1;

  if (tok == NULL) {
    fprintf(stderr, "mcpd: out of memory\n");
    return NULL;
  }
  obj =
      json_tokener_parse_ex(tok, text->data ? text->data : "", (int)text->len);
  err = json_tokener_get_error(tok);
  end = json_tokener_get_parse_end(tok);
  if (obj != NULL && err == json_tokener_success) {
    /* Nothing but white space may follow the value. */
    while (end < text->len && strchr(" \t\r\n", text->data[end]) != NULL)
      end++;
    if (end < text->len) {
      json_object_put(obj);
      obj = NULL;
      err = json_tokener_error_parse_unexpected;
    }
  } else if (obj == NULL && err == json_tokener_continue) {
    err = json_tokener_error_parse_eof;
  }
  json_tokener_free(tok);
  if (obj == NULL) {
    for (size_t i = 0; i < end && i < text->len; i++) {
      if (text->data[i] == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    fprintf(stderr,
            "mcpd: %s is not valid JSON: line %zu, column %zu: %s; the file "
            "was left as it is\n",
            path, line, col,
            text->len == 0 ? "the file is empty"
                           : json_tokener_error_desc(err));
    return NULL;
  }
  if (!json_object_is_type(obj, json_type_object)) {
    fprintf(stderr,
            "mcpd: %s holds JSON but not an object; the file was left as "
            "it is\n",
            path);
    json_object_put(obj);
    return NULL;
  }
  return obj;
}

/* --- writing ------------------------------------------------------------ */

static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Makes the directories above `path` that are missing (0755). */
static void make_parents(const char *path) {
  char dir[PATH_MAX];
  size_t n = strlen(path);

  if (n >= sizeof(dir))
    return;
  memcpy(dir, path, n + 1);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    mkdir(dir, 0755);
    *p = '/';
  }
}

/* Replaces `path` with `data` atomically: a temporary file beside it with
 * mode `mode`, flushed, then renamed over it.  Returns 0, or -1 after
 * saying why (the file is then untouched). */
static int replace_file(const char *path, const char *data, size_t len,
                        mode_t mode) {
  strbuf tmp = {0};
  int fd, rc = -1;

  strbuf_puts(&tmp, path);
  strbuf_puts(&tmp, ".mcpd-XXXXXX");
  if (tmp.failed) {
    fprintf(stderr, "mcpd: out of memory\n");
    return -1;
  }
  if ((fd = mkstemp(tmp.data)) < 0) {
    fprintf(stderr, "mcpd: cannot write beside %s: %s\n", path,
            strerror(errno));
    strbuf_free(&tmp);
    return -1;
  }
  if (fchmod(fd, mode) != 0 || write_all(fd, data, len) != 0 ||
      fsync(fd) != 0) {
    fprintf(stderr, "mcpd: cannot write %s: %s\n", tmp.data, strerror(errno));
    close(fd);
  } else if (close(fd) != 0 || rename(tmp.data, path) != 0) {
    fprintf(stderr, "mcpd: cannot replace %s: %s\n", path, strerror(errno));
  } else {
    rc = 0;
  }
  if (rc != 0)
    unlink(tmp.data);
  strbuf_free(&tmp);
  return rc;
}

/* `v` as people write these files: two spaces a level, "key": value, and
 * [] and {} when empty.  Scalars are json-c's own text (a number as it was
 * read, a string escaped, "/" left alone). */
static void indent(strbuf *out, int depth) {
  for (int i = 0; i < depth; i++)
    strbuf_append(out, "  ", 2);
}

static void pretty(strbuf *out, json_object *v, int depth) {
  size_t n;

  switch (json_object_get_type(v)) {
  case json_type_object:
    if (json_object_object_length(v) == 0) {
      strbuf_puts(out, "{}");
      break;
    }
    strbuf_puts(out, "{\n");
    n = 0;
    json_object_object_foreach(v, key, val) {
      json_object *k = json_object_new_string(key);
      indent(out, depth + 1);
      strbuf_puts(out, json_object_to_json_string_ext(
                           k, JSON_C_TO_STRING_NOSLASHESCAPE));
      json_object_put(k);
      strbuf_puts(out, ": ");
      pretty(out, val, depth + 1);
      strbuf_puts(out,
                  ++n < (size_t)json_object_object_length(v) ? ",\n" : "\n");
    }
    indent(out, depth);
    strbuf_puts(out, "}");
    break;
  case json_type_array:
    if ((n = json_object_array_length(v)) == 0) {
      strbuf_puts(out, "[]");
      break;
    }
    strbuf_puts(out, "[\n");
    for (size_t i = 0; i < n; i++) {
      indent(out, depth + 1);
      pretty(out, json_object_array_get_idx(v, i), depth + 1);
      strbuf_puts(out, i + 1 < n ? ",\n" : "\n");
    }
    indent(out, depth);
    strbuf_puts(out, "]");
    break;
  default:
    strbuf_puts(
        out, json_object_to_json_string_ext(v, JSON_C_TO_STRING_NOSLASHESCAPE));
  }
}

/* --- the entry ------------------------------------------------------------ */

static json_object *new_entry(const client *c, const char *self, char **args,
                              int n_args) {
  json_object *entry = json_object_new_object();
  json_object *argv = json_object_new_array();

  if (c->typed)
    json_object_object_add(entry, "type", json_object_new_string("stdio"));
  json_object_object_add(entry, "command", json_object_new_string(self));
  for (int i = 0; i < n_args; i++)
    json_object_array_add(argv, json_object_new_string(args[i]));
  json_object_object_add(entry, "args", argv);
  if (c->with_env)
    json_object_object_add(entry, "env", json_object_new_object());
  return entry;
}

static int usage(const char *cmd) {
  fprintf(stderr,
          "usage: mcpd %s CLIENT [--name NAME] [--config FILE]%s%s\n"
          "  CLIENT: claude-desktop, cursor, vscode, claude-code or "
          "gemini\n",
          cmd, strcmp(cmd, "install") == 0 ? " [--dry-run]" : "",
          strcmp(cmd, "install") == 0 ? " [-- ARGS...]" : "");
  return 2;
}

int client_config_main(int argc, char **argv, const char *self) {
  const char *cmd = argv[0], *id = NULL, *name = "mcpd", *file = NULL;
  int install = strcmp(cmd, "install") == 0, dry_run = 0, n_args = 0;
  char **args = NULL, real[PATH_MAX];
  const client *c;
  strbuf path = {0}, text = {0}, backup = {0};
  json_object *root = NULL, *servers = NULL;
  struct stat st;
  int found, rc = 1;

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0 && install) {
      args = argv + i + 1;
      n_args = argc - i - 1;
      break;
    } else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
      name = argv[++i];
    } else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      file = argv[++i];
    } else if (strcmp(argv[i], "--dry-run") == 0 && install) {
      dry_run = 1;
    } else if (argv[i][0] == '-' || id != NULL) {
      return usage(cmd);
    } else {
      id = argv[i];
    }
  }
  if (id == NULL)
    return usage(cmd);
  if ((c = find_client(id)) == NULL) {
    fprintf(stderr, "mcpd %s: unknown client \"%s\"\n", cmd, id);
    return usage(cmd);
  }
  if (name[0] == '\0') {
    fprintf(stderr, "mcpd %s: --name must not be empty\n", cmd);
    return 2;
  }
  if (file != NULL)
    strbuf_puts(&path, file);
  else if (default_path(c, &path) != 0)
    goto done;
  if (path.failed)
    goto oom;
  /* A config that is a link (dotfiles kept elsewhere) stays one: what
   * changes is the file it points to. */
  if (realpath(path.data, real) != NULL) {
    path.len = 0;
    strbuf_puts(&path, real);
    if (path.failed)
      goto oom;
  }

  memset(&st, 0, sizeof(st));
  switch (read_file(path.data, &text, &st)) {
  case -1:
    goto done;
  case 0:
    if (!install) {
      printf("%s has no config at %s: nothing to remove\n", c->title,
             path.data);
      rc = 0;
      goto done;
    }
    root = json_object_new_object();
    /* A new config may come to hold tokens: it is the user's alone. */
    st.st_mode = 0600;
    break;
  default:
    if ((root = parse_config(path.data, &text)) == NULL)
      goto done;
  }

  if (json_object_object_get_ex(root, c->key, &servers) &&
      !json_object_is_type(servers, json_type_object)) {
    fprintf(stderr,
            "mcpd %s: \"%s\" in %s is not an object; the file was left as "
            "it is\n",
            cmd, c->key, path.data);
    goto done;
  }
  found = servers != NULL && json_object_object_get_ex(servers, name, NULL);
  if (install) {
    if (servers == NULL) {
      servers = json_object_new_object();
      json_object_object_add(root, c->key, servers);
    }
    /* Replaced in place: running it twice leaves one entry. */
    json_object_object_add(servers, name, new_entry(c, self, args, n_args));
  } else if (!found) {
    printf("%s's config (%s) has no server \"%s\": nothing to remove\n",
           c->title, path.data, name);
    rc = 0;
    goto done;
  } else {
    json_object_object_del(servers, name);
  }

  {
    strbuf result = {0};

    pretty(&result, root, 0);
    strbuf_append(&result, "\n", 1);
    if (result.failed) {
      strbuf_free(&result);
      goto oom;
    }
    if (dry_run) {
      fwrite(result.data, 1, result.len, stdout);
      rc = 0;
      strbuf_free(&result);
      goto done;
    }
    make_parents(path.data);
    /* The previous file, as it was, beside the new one. */
    if (text.len > 0) {
      strbuf_puts(&backup, path.data);
      strbuf_puts(&backup, ".mcpd-backup");
      if (backup.failed || replace_file(backup.data, text.data, text.len,
                                        st.st_mode & 07777) != 0) {
        strbuf_free(&result);
        goto done;
      }
    }
    if (replace_file(path.data, result.data, result.len, st.st_mode & 07777) !=
        0) {
      strbuf_free(&result);
      goto done;
    }
    strbuf_free(&result);
  }
  if (install) {
    printf("%s \"%s\" in %s's config (%s): %s", found ? "Updated" : "Added",
           name, c->title, path.data, self);
    for (int i = 0; i < n_args; i++)
      printf(" %s", args[i]);
    printf("\n");
  } else
    printf("Removed \"%s\" from %s's config (%s)\n", name, c->title, path.data);
  if (backup.len > 0)
    printf("The previous file is %s.\n", backup.data);
  if (text.len > 0 && has_comments(text.data, text.len))
    printf("Its comments could not be kept; the previous file has them.\n");
  printf("Restart %s for the change to take effect.\n", c->title);
  rc = 0;
  goto done;

oom:
  fprintf(stderr, "mcpd %s: out of memory\n", cmd);
done:
  json_object_put(root);
  strbuf_free(&path);
  strbuf_free(&text);
  strbuf_free(&backup);
  return rc;
}
