# SPDX-License-Identifier: MIT
# Tests in three layers, all under `make check`:
#   tests/plugins.mk  fixture plugins built check-only as real .so files
#   tests/unit.mk     Check unit suites (framing, JSON-RPC, loader, ...)
#   tests/e2e.mk      end-to-end tests that spawn src/mcpd (node, official SDK)
include $(srcdir)/tests/plugins.mk
include $(srcdir)/tests/abi/local.mk
include $(srcdir)/tests/unit.mk
include $(srcdir)/tests/e2e.mk

# The layering rule of src/layers.txt, checked on the sources and objects.
TESTS += tests/layers.sh tests/layers-selftest.sh
EXTRA_DIST += tests/layers.sh tests/layers-selftest.sh src/layers.txt

# What a plugin author's compiler says with mcpd.pc's flags: an unported
# callback is an error, and the guide's callback test builds and passes.
TESTS += tests/sdk/build-flags.sh
EXTRA_DIST += tests/sdk/build-flags.sh tests/sdk/old_signature.c

# A new plugin author's first five minutes: mcpd new, make check, make
# install, mcpd install, against a staging install of this build.
TESTS += tests/new.sh
EXTRA_DIST += tests/new.sh tests/stage-install.sh
