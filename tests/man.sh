#!/bin/sh
# The man pages say what the program does: every long option of
# src/options.c that is not internal is in `mcpd --help` (and so in the
# OPTIONS section of mcpd(1), made from it), every config key that
# src/options.c accepts is on mcpd(1), and groff reads both pages without a
# warning (lintian runs the same check on the Debian package).

srcdir=${MCPD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${MCPD_BUILDDIR:-$srcdir}
options_c=$srcdir/src/options.c
page=$builddir/doc/mcpd.1
guide=$builddir/doc/mcpd-plugin.7
status=0

for f in "$page" "$guide"; do
  [ -f "$f" ] || { echo "man: $f was not built" >&2; exit 99; }
done
help=$("$builddir/src/mcpd" --help) || { echo "man: mcpd --help failed" >&2; exit 1; }

# How mcpd starts its own workers; deliberately not in --help.
internal=" worker worker-config-fd rlimit-as rlimit-cpu rlimit-nofile "
for opt in $(sed -n 's/^ *{"\([a-z-]*\)", [a-z_]*_argument,.*/\1/p' \
    "$options_c"); do
  case "$internal" in *" $opt "*) continue ;; esac
  printf '%s\n' "$help" | grep -q -- "--$opt\\b" || {
    echo "man: option --$opt is not in --help (src/options.c usage)" >&2
    status=1
  }
done

# Config keys: those load_config and check_hosting compare, and the
# authorization table's.
keys=$( (grep -o 'strcmp([a-z]*key, "[A-Za-z]*")' "$options_c" |
    sed 's/.*"\(.*\)".*/\1/'

  sed -n 's/.*"--auth-[a-z-]*", "\([A-Za-z]*\)",.*/\1/p;
    s/.*"--resource-url", "\([A-Za-z]*\)",.*/\1/p' "$options_c") | sort -u)
[ -n "$keys" ] || { echo "man: no config keys found in $options_c" >&2; exit 99; }
for key in $keys; do
  grep -q "^\\.B $key\\b\\|\\\\fB$key\\\\fR\\|^\\.BR $key\\b" "$page" || {
    echo "man: config key \"$key\" is not in doc/mcpd.1.in" >&2
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
