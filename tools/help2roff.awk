# SPDX-License-Identifier: MIT
# help2roff.awk -- fill the man page template doc/mcpd.1.in with the OPTIONS
# section made from `mcpd --help`, so the two cannot say different things.
#
#   src/mcpd --help > help.txt
#   awk -v version=X -v pluginsdir=D -v libexecdir=L -v bindir=B \
#     -f tools/help2roff.awk help.txt doc/mcpd.1.in > doc/mcpd.1
#
# The first file is the help text: everything after its first blank line is
# options, in the shape src/options.c documents above `usage`.  The second
# is the template: the line @OPTIONS@ becomes the options, and @VERSION@,
# @PLUGINSDIR@, @LIBEXECDIR@ and @BINDIR@ anywhere become the values given.

# Text for roff: backslashes printed as such, "--" as two minus signs (a
# lone "-" stays a hyphen), and a leading dot or quote kept from reading as
# a request.
function esc(s) {
  gsub(/\\/, "\\e", s)
  gsub(/--/, "\\-\\-", s)
  sub(/^[.']/, "\\\\&&", s)
  return s
}

# An option name or a path: every "-" is a minus sign, as typed.
function esc_literal(s) {
  gsub(/\\/, "\\e", s)
  gsub(/-/, "\\-", s)
  return s
}

# "--plugins DIR" -> \fB\-\-plugins\fR \fIDIR\fR; "[NAME]" keeps brackets.
function synopsis(s,    n, w, i, out, arg) {
  n = split(s, w, " ")
  out = "\\fB" esc_literal(w[1]) "\\fR"
  for (i = 2; i <= n; i++) {
    arg = w[i]
    if (arg ~ /^\[.*\]$/)
      out = out " [\\fI" esc_literal(substr(arg, 2, length(arg) - 2)) "\\fR]"
    else
      out = out " \\fI" esc_literal(arg) "\\fR"
  }
  return out
}

# Every `key` in s replaced by `value`, taken literally (gsub would read
# the backslashes of roff in it).
function subst(s, key, value,    out, i) {
  out = ""
  while ((i = index(s, key)) > 0) {
    out = out substr(s, 1, i - 1) value
    s = substr(s, i + length(key))
  }
  return out s
}

function flush_desc() {
  if (desc != "")
    opts[++nopts] = esc(desc)
  desc = ""
}

# The help text.
NR == FNR {
  if (!started) {
    if ($0 == "")
      started = 1
    next
  }
  if ($0 ~ /^  -/) {
    line = substr($0, 3)
    if (match(line, /  +/)) {
      head = substr(line, 1, RSTART - 1)
      text = substr(line, RSTART + RLENGTH)
    } else {
      head = line
      text = ""
    }
    flush_desc()
    # An option with no text of its own shares the next one's.
    opts[++nopts] = (grouped ? ".TQ" : ".TP") "\n" synopsis(head)
    grouped = (text == "")
    desc = text
    next
  }
  if ($0 ~ /^   +[^ ]/) {
    text = $0
    sub(/^ +/, "", text)
    desc = desc (desc == "" ? "" : " ") text
    next
  }
  if ($0 != "") {
    print "help2roff: cannot read help line: " $0 > "/dev/stderr"
    failed = 1
  }
  next
}

# The template.
FNR == 1 {
  flush_desc()
  if (nopts == 0 || grouped) {
    print "help2roff: no options found in the help text" > "/dev/stderr"
    failed = 1
  }
}
$0 == "@OPTIONS@" {
  for (i = 1; i <= nopts; i++)
    print opts[i]
  next
}
{
  line = subst($0, "@VERSION@", version)
  line = subst(line, "@PLUGINSDIR@", esc_literal(pluginsdir))
  line = subst(line, "@BINDIR@", esc_literal(bindir))
  print subst(line, "@LIBEXECDIR@", esc_literal(libexecdir))
}
END { exit failed }
