#!/bin/sh
# SPDX-License-Identifier: MIT
# The man pages say what the program does: every long option of the
# settings table (src/settings.c) that is not internal is in `mcpd --help`
# (and so in the OPTIONS section of mcpd(1), made from it), every config
# key that src/settings.c accepts is on mcpd(1), and groff reads both pages
# without a warning (lintian runs the same check on the Debian package).

srcdir=${MCPD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${MCPD_BUILDDIR:-$srcdir}
settings_c=$srcdir/src/settings.c
page=$builddir/doc/mcpd.1
guide=$builddir/doc/mcpd-plugin.7
status=0

for f in "$page" "$guide"; do
  [ -f "$f" ] || { echo "man: $f was not built" >&2; exit 99; }
done
help=$("$builddir/src/mcpd" --help) || { echo "man: mcpd --help failed" >&2; exit 1; }

# How mcpd starts its own workers; deliberately not in --help.
internal=" worker "
# A row of the table starts with {"flag", "key", SETTING_... on one line,
# or {NULL, "key", for a key of the file only.
rows=$(grep '^ *{[^,]*, [^,]*, SETTING_' "$settings_c")
[ -n "$rows" ] || { echo "man: no rows found in $settings_c" >&2; exit 99; }
for opt in $(printf '%s\n' "$rows" | sed -n 's/^ *{"\([a-z-]*\)",.*/\1/p'); do
  case "$internal" in *" $opt "*) continue ;; esac
  printf '%s\n' "$help" | grep -q -- "--$opt\\b" || {
    echo "man: option --$opt is not in --help (src/settings.c table)" >&2
    status=1
  }
done

# Config keys: those of the table's rows, and those check_hosting
# compares (plugins.NAME.mcpd).
keys=$( (printf '%s\n' "$rows" |
    sed -n 's/^ *{[^,]*, "\([A-Za-z]*\)",.*/\1/p'
  grep -o 'strcmp([a-z]*key, "[A-Za-z]*")' "$settings_c" |
    sed 's/.*"\(.*\)".*/\1/') | sort -u)
[ -n "$keys" ] || { echo "man: no config keys found in $settings_c" >&2; exit 99; }
for key in $keys; do
  grep -q "^\\.B $key\\b\\|\\\\fB$key\\\\fR\\|^\\.BR $key\\b" "$page" || {
    echo "man: config key \"$key\" is not in doc/mcpd.1.in" >&2
    status=1
  }
done

# The commands (src/main.c), their options and clients (src/scaffold.c,
# src/client_config.c) are each named on mcpd(1).
for word in new install uninstall --dir --name --config --dry-run \
  claude-desktop cursor vscode claude-code gemini; do
  escaped=$(printf '%s' "$word" | sed 's/-/\\\\-/g')
  grep -q -- "$escaped" "$page" || {
    echo "man: \"$word\" (mcpd new, install, uninstall) is not in doc/mcpd.1.in" >&2
    status=1
  }
done
for client in $(sed -n 's/^    {"\([a-z-]*\)", "[A-Z].*/\1/p' \
  "$srcdir/src/client_config.c"); do
  escaped=$(printf '%s' "$client" | sed 's/-/\\\\-/g')
  grep -q -- "^\\.B $escaped\$" "$page" || {
    echo "man: client \"$client\" of src/client_config.c is not in doc/mcpd.1.in" >&2
    status=1
  }
done

if command -v groff >/dev/null 2>&1; then
  for f in "$page" "$guide"; do
    out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$f" 2>&1)
    if [ -n "$out" ]; then
      printf 'man: groff warns about %s:\n%s\n' "$f" "$out" >&2
      status=1
    fi
  done
fi
exit $status
