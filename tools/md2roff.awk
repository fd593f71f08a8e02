# SPDX-License-Identifier: MIT
# md2roff.awk -- the plugin guide (doc/plugin-guide.md) as a man page, so
# mcpd-plugin(7) is made from the guide at build time and cannot drift.
#
#   awk -v name=mcpd-plugin -v section=7 -v version=X \
#     -v summary="writing plugins for mcpd" -f tools/md2roff.awk guide.md
#
# It knows the Markdown the guide uses, no more: "#" headings, paragraphs,
# "- " lists with indented continuation lines, ``` code blocks, pipe tables,
# `code`, **bold** and [links](...).  Anything else passes through as text.

# Roff-safe text: backslashes printed as such, a leading dot or quote kept
# from reading as a request.
function esc(s) {
  gsub(/\\/, "\\e", s)
  return s
}

# What is typed literally: minus signs and straight quotes, so that text
# copied from the page works.
function literal(s) {
  s = esc(s)
  gsub(/-/, "\\-", s)
  gsub(/'/, "\\(aq", s)
  gsub(/`/, "\\(ga", s)
  return s
}

function lead(s) {
  if (s ~ /^[.']/)
    s = "\\&" s
  return s
}

# Inline Markdown to roff fonts: `code` and **bold** in bold (the man page
# convention for what is typed literally), links as their text, with the
# address after it when it leaves the guide.
function inline(s,    out, i, j, text, url, len) {
  out = ""
  while (s != "") {
    if (substr(s, 1, 1) == "`" && (j = index(substr(s, 2), "`")) > 0) {
      out = out "\\fB" literal(substr(s, 2, j - 1)) "\\fR"
      s = substr(s, j + 2)
    } else if (substr(s, 1, 2) == "**" &&
               (j = index(substr(s, 3), "**")) > 0) {
      out = out "\\fB" esc(substr(s, 3, j - 1)) "\\fR"
      s = substr(s, j + 4)
    } else if (substr(s, 1, 1) == "[" &&
               match(s, /^\[[^\]]*\]\([^)]*\)/)) {
      len = RLENGTH
      i = index(s, "](")
      text = substr(s, 2, i - 2)
      url = substr(s, i + 2, len - i - 2)
      out = out inline(text)
      if (url ~ /^[a-z]+:/)
        out = out " <" esc(url) ">"
      s = substr(s, len + 1)
    } else {
      i = match(s, /[`*[]/)
      if (i == 1)
        i = 2
      if (i == 0)
        i = length(s) + 1
      out = out esc(substr(s, 1, i - 1))
      s = substr(s, i)
    }
  }
  return out
}

function cells(line, arr,    n, i) {
  sub(/^ *\|/, "", line)
  sub(/\| *$/, "", line)
  n = split(line, arr, "|")
  for (i = 1; i <= n; i++) {
    sub(/^ +/, "", arr[i])
    sub(/ +$/, "", arr[i])
  }
  return n
}

# A table row as a tagged paragraph: the first cell is the tag, the second
# the text, and further cells follow under their header's name.
function table_row(line,    c, n, i, body) {
  n = cells(line, c)
  print ".TP"
  print lead(inline(c[1]))
  body = inline(c[2])
  for (i = 3; i <= n; i++)
    if (c[i] != "" && c[i] != "–" && c[i] != "-")
      body = body (body == "" ? "" : ". ") \
             (header[i] != "" ? inline(header[i]) ": " : "") inline(c[i])
  if (body != "")
    print lead(body)
}

BEGIN {
  print ".\\\" Made from doc/plugin-guide.md by tools/md2roff.awk; edit the guide."
  printf ".TH %s %s \"\" \"mcpd %s\" \"mcpd Manual\"\n", toupper(name),
         section, version
  print ".SH NAME"
  gsub(/-/, "\\-", name)
  print name " \\- " summary
  print ".SH DESCRIPTION"
  para = 0
}

# Code blocks, verbatim.
/^```/ {
  if (!code) {
    print ".PP"
    print ".nf"
    print ".RS 2"
    code = 1
  } else {
    print ".RE"
    print ".fi"
    code = 0
    para = 1
  }
  next
}
code {
  print lead(literal($0))
  next
}

# The title is the NAME line's; the guide's first heading adds nothing.
/^# / && !titled { titled = 1; next }
/^## / {
  s = substr($0, 4)
  print ".SH \"" toupper(esc(s)) "\""
  para = 0; list = 0
  next
}
/^### / {
  print ".SS \"" esc(substr($0, 5)) "\""
  para = 0; list = 0
  next
}

# Tables: the header row names the columns, the |---| row is dropped.
/^\|/ {
  if (!table) {
    table = 1
    cells($0, header)
    next
  }
  if ($0 ~ /^\|[-| :]+\|$/)
    next
  table_row($0)
  next
}
table { table = 0; para = 1 }

/^$/ { para = 1; list = 0; next }

/^- / {
  print ".IP \\(bu 2"
  print lead(inline(substr($0, 3)))
  list = 1; para = 0
  next
}
list && /^  / {
  s = $0
  sub(/^ +/, "", s)
  print lead(inline(s))
  next
}

{
  if (para) {
    print ".PP"
    para = 0
  }
  print lead(inline($0))
}
