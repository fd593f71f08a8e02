# Examples are shipped in the tarball but neither built by `make` nor
# installed: hello/ is built out of tree against the installed SDK, and the
# JSON files are snippets for MCP client configurations.

EXTRA_DIST += \
	examples/hello/hello.c \
	examples/hello/Makefile \
	examples/hello/oot-test.sh \
	examples/claude_desktop_config.json \
	examples/cursor-mcp.json \
	examples/vscode-mcp.json

# Installs into a staging directory and builds hello.so out of tree with
# pkg-config, exactly as a plugin author would, then calls it through mcpd.
TESTS += examples/hello/oot-test.sh
