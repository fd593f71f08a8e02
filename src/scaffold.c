/* SPDX-License-Identifier: MIT */
/* scaffold.c -- `mcpd new NAME [--dir DIR]` (see scaffold.h): writes
 * DIR/NAME/ with NAME.c (one tool with an input schema), a Makefile
 * (make, make check, make install) and a README.md, from the templates
 * below with @NAME@ replaced.  An existing directory is never touched. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scaffold.h"
#include "strbuf.h"

#define NAME_MAX_LEN 64

static const char source_template[] =
    "/* @NAME@.c -- an mcpd plugin, made by `mcpd new @NAME@`.\n"
    " *\n"
    " * One tool, \"@NAME@\", that greets whoever its \"name\" argument "
    "names.\n"
    " * `make` builds @NAME@.so, `make check` calls the tool through mcpd,\n"
    " * `make install` copies it where mcpd looks.  The plugin guide says\n"
    " * the rest: resources, prompts, threads, tasks, asking the client. */\n"
    "#include <mcpd.h>\n"
    "\n"
    "/* Runs on mcpd's thread pool (the default): it may block, and must be\n"
    " * thread-safe.  mcpd checked the arguments against the schema below\n"
    " * before calling it, so \"name\" is a string. */\n"
    "static int greet(mcpd_call *call, const mcpd_request *req) {\n"
    "  json_object *name = NULL;\n"
    "\n"
    "  json_object_object_get_ex(req->arguments, \"name\", &name);\n"
    "  return req->host->result_textf(call, \"Hello, %s!\",\n"
    "                                 json_object_get_string(name));\n"
    "}\n"
    "\n"
    "static const mcpd_tool tools[] = {\n"
    "    {.name = \"@NAME@\",\n"
    "     .description = \"Greets someone by name.\",\n"
    "     .input_schema = \"{\\\"type\\\":\\\"object\\\",\\\"properties\\\":"
    "{\\\"name\\\":\"\n"
    "                     \"{\\\"type\\\":\\\"string\\\",\\\"description\\\":"
    "\\\"Who to greet\\\"}},\"\n"
    "                     \"\\\"required\\\":[\\\"name\\\"]}\",\n"
    "     .call = greet},\n"
    "    MCPD_TOOL_END,\n"
    "};\n"
    "\n"
    "MCPD_PLUGIN_DEFINE(.name = \"@NAME@\", .version = \"0.1.0\",\n"
    "                   .description = \"What @NAME@ offers.\", .tools = "
    "tools);\n";

static const char makefile_template[] =
    "# The mcpd plugin @NAME@, made by `mcpd new @NAME@`.\n"
    "#\n"
    "#   make           builds @NAME@.so, warnings as errors\n"
    "#   make check     calls its tool through mcpd and checks the answer\n"
    "#   make install   copies @NAME@.so into your plugin directory\n"
    "#\n"
    "# mcpd.pc (pkg-config) supplies -I, -fPIC, -fvisibility=hidden, "
    "-shared\n"
    "# and json-c.  Set PKG_CONFIG_PATH when mcpd is installed where\n"
    "# pkg-config does not look; MCPD names the mcpd to test with.\n"
    "\n"
    "PKG_CONFIG ?= pkg-config\n"
    "MCPD ?= mcpd\n"
    "CFLAGS ?= -O2 -g\n"
    "WARNINGS = -Wall -Wextra -Werror -Wno-unused-parameter\n"
    "PLUGIN_DIR ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/mcpd/"
    "plugins\n"
    "\n"
    "MCPD_CFLAGS = $(shell $(PKG_CONFIG) --cflags mcpd)\n"
    "MCPD_LIBS = $(shell $(PKG_CONFIG) --libs mcpd)\n"
    "\n"
    "all: @NAME@.so\n"
    "\n"
    "# mcpd loads no plugin that others may write: go-w whatever the "
    "umask.\n"
    "@NAME@.so: @NAME@.c\n"
    "\t@$(PKG_CONFIG) --exists mcpd || { \\\n"
    "\t  echo \"mcpd.pc not found: install mcpd, or set PKG_CONFIG_PATH\" "
    ">&2; \\\n"
    "\t  exit 1; }\n"
    "\t$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(MCPD_CFLAGS) $(LDFLAGS) \\\n"
    "\t  -o $@ $< $(MCPD_LIBS)\n"
    "\tchmod go-w $@\n"
    "\n"
    "check: @NAME@.so\n"
    "\t@out=$$($(MCPD) --log-level warn --plugins . --no-watch \\\n"
    "\t  --call @NAME@ \\\n"
    "\t  --args '{\"name\":\"World\"}') || { echo \"$$out\"; exit 1; }; \\\n"
    "\tcase \"$$out\" in \\\n"
    "\t  *'\"Hello, World!\"'*) echo \"check: @NAME@ answered Hello, "
    "World!\" ;; \\\n"
    "\t  *) echo \"check: unexpected answer: $$out\" >&2; exit 1 ;; \\\n"
    "\tesac\n"
    "\n"
    "# A rename into place: a running mcpd reloads the plugin at once, and\n"
    "# never sees half a file.\n"
    "install: @NAME@.so\n"
    "\tinstall -d -m 0755 '$(PLUGIN_DIR)'\n"
    "\tinstall -m 0644 @NAME@.so '$(PLUGIN_DIR)/.@NAME@.so.new'\n"
    "\tmv -f '$(PLUGIN_DIR)/.@NAME@.so.new' '$(PLUGIN_DIR)/@NAME@.so'\n"
    "\n"
    "uninstall:\n"
    "\trm -f '$(PLUGIN_DIR)/@NAME@.so'\n"
    "\n"
    "clean:\n"
    "\trm -f @NAME@.so\n"
    "\n"
    ".PHONY: all check install uninstall clean\n";

static const char readme_template[] =
    "# @NAME@\n"
    "\n"
    "An [mcpd](https://modelcontextprotocol.io) plugin with one tool, "
    "`@NAME@`,\n"
    "that greets whoever its `name` argument names.\n"
    "\n"
    "    make            # build @NAME@.so (warnings are errors)\n"
    "    make check      # call the tool through mcpd and check the answer\n"
    "    make install    # copy @NAME@.so into ~/.local/share/mcpd/plugins\n"
    "\n"
    "Then let your MCP client start mcpd, once:\n"
    "\n"
    "    mcpd install claude-desktop   # or cursor, vscode, claude-code, "
    "gemini\n"
    "\n"
    "and restart the client.  A running mcpd picks up a new build at once:\n"
    "`make install` again is all it takes.  Edit `@NAME@.c` to make the "
    "tool\n"
    "yours; `man mcpd` and the plugin guide (`doc/plugin-guide.md` in "
    "mcpd's\n"
    "sources) say what else a plugin can offer.\n";

int scaffold_valid_name(const char *name) {
  size_t n = strlen(name);

  if (n == 0 || n > NAME_MAX_LEN ||
      !(isalpha((unsigned char)name[0]) || name[0] == '_'))
    return 0;
  for (size_t i = 1; i < n; i++)
    if (!isalnum((unsigned char)name[i]) && name[i] != '_')
      return 0;
  return 1;
}

/* `template` with every @NAME@ replaced by `name`, into `out`. */
static void expand(strbuf *out, const char *template, const char *name) {
  const char *at;

  while ((at = strstr(template, "@NAME@")) != NULL) {
    strbuf_append(out, template, (size_t)(at - template));
    strbuf_puts(out, name);
    template = at + 6;
  }
  strbuf_puts(out, template);
}

/* Writes a new file `dir`/`file` (never an existing one).  Returns 0, or
 * -1 after saying why. */
static int write_new(const char *dir, const char *file, const char *template,
                     const char *name) {
  strbuf path = {0}, text = {0};
  int fd = -1, rc = -1;

  strbuf_puts(&path, dir);
  strbuf_puts(&path, "/");
  expand(&path, file, name);
  expand(&text, template, name);
  if (path.failed || text.failed) {
    fprintf(stderr, "mcpd new: out of memory\n");
  } else if ((fd = open(path.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                        0644)) < 0) {
    fprintf(stderr, "mcpd new: cannot create %s: %s\n", path.data,
            strerror(errno));
  } else {
    size_t done = 0;
    while (done < text.len) {
      ssize_t n = write(fd, text.data + done, text.len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      done += (size_t)n;
    }
    if (done == text.len && close(fd) == 0)
      rc = 0;
    else
      fprintf(stderr, "mcpd new: cannot write %s: %s\n", path.data,
              strerror(errno));
    if (done != text.len)
      close(fd);
  }
  strbuf_free(&path);
  strbuf_free(&text);
  return rc;
}

static int usage(void) {
  fprintf(stderr, "usage: mcpd new NAME [--dir DIR]\n"
                  "  creates DIR/NAME/ (DIR defaults to .) with NAME.c, a "
                  "Makefile and a README.md\n");
  return 2;
}

int scaffold_main(int argc, char **argv) {
  const char *name = NULL, *dir = ".";
  strbuf project = {0};
  int rc = 1;

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
      dir = argv[++i];
    else if (strncmp(argv[i], "--dir=", 6) == 0)
      dir = argv[i] + 6;
    else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
      return usage() - 2;
    else if (argv[i][0] == '-' || name != NULL)
      return usage();
    else
      name = argv[i];
  }
  if (name == NULL)
    return usage();
  if (!scaffold_valid_name(name)) {
    fprintf(stderr,
            "mcpd new: \"%s\" is not a C identifier of 1 to %d characters "
            "(a letter or _, then letters, digits or _): it names the "
            "plugin, its tool and its files\n",
            name, NAME_MAX_LEN);
    return 2;
  }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "mcpd new: cannot create %s: %s\n", dir, strerror(errno));
    return 1;
  }
  strbuf_puts(&project, dir);
  strbuf_puts(&project, "/");
  strbuf_puts(&project, name);
  if (project.failed) {
    fprintf(stderr, "mcpd new: out of memory\n");
  } else if (mkdir(project.data, 0755) != 0) {
    fprintf(stderr, "mcpd new: cannot create %s: %s%s\n", project.data,
            strerror(errno),
            errno == EEXIST ? " (an existing directory is never overwritten)"
                            : "");
  } else if (write_new(project.data, "@NAME@.c", source_template, name) == 0 &&
             write_new(project.data, "Makefile", makefile_template, name) ==
                 0 &&
             write_new(project.data, "README.md", readme_template, name) == 0) {
    printf("Created %s/ with %s.c, a Makefile and a README.md.  Next:\n"
           "  cd %s\n"
           "  make check                   # build, then call the tool "
           "through mcpd\n"
           "  make install                 # copy %s.so where mcpd looks\n"
           "  mcpd install claude-desktop  # once: the client starts mcpd "
           "(or cursor, vscode, claude-code, gemini)\n",
           project.data, name, project.data, name);
    rc = 0;
  }
  strbuf_free(&project);
  return rc;
}
