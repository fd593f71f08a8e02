# SPDX-License-Identifier: MIT
# Sourced by the tests that build plugins against an installed mcpd
# (examples/hello/oot-test.sh, tests/new.sh).
#
# stage_install: `make install` of $builddir into $tmp/root, then a copy of
# the staged mcpd.pc in $tmp/pc whose includedir points into the staging
# root, first on PKG_CONFIG_PATH (exported).  The staged mcpd.pc still
# names the final prefix; rewriting just its includedir is precise, where
# PKG_CONFIG_SYSROOT_DIR or --define-variable=prefix would also move
# json-c's paths, which are not under the staging root.  Sets staged_bin
# to the staged mcpd.  Needs builddir, tmp, MAKE, PKG_CONFIG, log and a
# fail() that exits.
stage_install() {
  log=$tmp/install.log
  "$MAKE" -C "$builddir" install DESTDIR="$tmp/root" >"$log" 2>&1 ||
    fail "make install DESTDIR=$tmp/root failed"
  staged_pc=$(find "$tmp/root" -name mcpd.pc | head -n 1)
  staged_bin=$(find "$tmp/root" -name mcpd -type f -perm -u+x | head -n 1)
  [ -n "$staged_pc" ] && [ -n "$staged_bin" ] ||
    fail "make install did not install mcpd and mcpd.pc"
  includedir=$(PKG_CONFIG_PATH=$(dirname "$staged_pc") "$PKG_CONFIG" \
    --variable=includedir mcpd) || fail "$staged_pc does not parse"
  {
    mkdir "$tmp/pc" &&
      sed "s|^includedir=.*|includedir=$tmp/root$includedir|" "$staged_pc" \
        >"$tmp/pc/mcpd.pc"
  } || fail "cannot rewrite $staged_pc"
  PKG_CONFIG_PATH=$tmp/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export PKG_CONFIG_PATH
}
