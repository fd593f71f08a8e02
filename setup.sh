#!/bin/sh
# SPDX-License-Identifier: MIT
# setup.sh -- install build dependencies, build mcpd, then install it or
# run the test suite.  Works on a fresh Debian or Ubuntu machine.
#
#   ./setup.sh            deps + build + install to /usr/local (then: mcpd)
#   ./setup.sh --test     deps + build + the whole test suite
#   ./setup.sh --test --asan   the same, built with ASan + UBSan
#   ./setup.sh --test --tsan   the same, built with ThreadSanitizer
#   ./setup.sh --test --portable   the same, built from the portable POSIX
#                          paths only (./configure --enable-portable)
set -eu

cd "$(dirname "$0")"
top=$(pwd)
mode=install
variant=plain
for arg in "$@"; do
  case "$arg" in
    --test) mode=test ;;
    --asan) variant=asan ;;
    --tsan) variant=tsan ;;
    --portable) variant=portable ;;
    --build-only) mode=build ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Build dependencies, installed only when missing.
pkgs="build-essential autoconf automake libtool pkg-config libjson-c-dev \
libuv1-dev libmicrohttpd-dev libssl-dev libjwt-dev libsqlite3-dev \
libcurl4-openssl-dev check"
# nginx: tests/e2e/nginx.test.mjs runs its own private nginx processes.
[ "$mode" = test ] && pkgs="$pkgs nodejs npm nginx"
missing=""
for p in $pkgs; do
  case "$p" in
    nodejs|npm) command -v "${p%js}" >/dev/null 2>&1 && \
      command -v node >/dev/null 2>&1 && continue ;;
    # Any package's nginx will do (nginx-light, nginx-core on Ubuntu, ...).
    nginx) PATH="$PATH:/usr/sbin" command -v nginx >/dev/null 2>&1 && \
      continue ;;
  esac
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup.sh: installing$missing" >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # shellcheck disable=SC2086
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
  case " $missing " in
    *" nginx "*)
      # Debian's package starts nginx with its default site on port 80
      # where an init system runs.  The tests need no such service, so
      # the one just installed is stopped and kept from starting at boot.
      # Without systemd (a container) systemctl fails, and service stops
      # whatever the init script started, usually nothing: both may fail.
      as_root systemctl disable --now nginx >/dev/null 2>&1 || true
      as_root service nginx stop >/dev/null 2>&1 || true
      ;;
  esac
fi

[ -x configure ] || autoreconf -fi

if [ "$variant" = asan ]; then
  build="$top/build-asan"
  flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined"
  flags="$flags -fno-sanitize-recover=undefined"
  ldflags=-fsanitize=address,undefined
elif [ "$variant" = tsan ]; then
  build="$top/build-tsan"
  flags="-g -O1 -fno-omit-frame-pointer -fsanitize=thread"
  ldflags=-fsanitize=thread
elif [ "$variant" = portable ]; then
  build="$top/build-portable"
  flags="-g -O2"
  configure_args=--enable-portable
else
  build="$top/build"
  flags="-g -O2"
fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ]; then
  "$top/configure" -q ${configure_args:-} CFLAGS="$flags" LDFLAGS="${ldflags:-}"
fi
make -j"$(nproc 2>/dev/null || echo 2)" >/dev/null

case "$mode" in
  install)
    as_root make install >/dev/null
    echo "setup.sh: installed $(command -v mcpd || echo /usr/local/bin/mcpd)" >&2
    ;;
  test)
    # npm ci when a pinned package is missing or the lock file changed.
    if [ ! -d "$top/tests/node_modules/@modelcontextprotocol/sdk" ] ||
      [ ! -d "$top/tests/node_modules/@modelcontextprotocol/client" ] ||
      [ ! -d "$top/tests/node_modules/conformance-next" ] ||
      [ "$top/tests/package-lock.json" -nt \
        "$top/tests/node_modules/.package-lock.json" ]; then
      npm ci --prefix "$top/tests" --no-audit --no-fund --loglevel=error
    fi
    if [ "$variant" = asan ]; then
      # Stacks unwind by frame pointers (the build keeps them): the slow
      # unwinder made every malloc cost ~15x and the suite crawl.
      # handle_segv=0: a plugin's crash in a worker process must read as
      # the signal it is (the isolation tests check which), not as ASan's
      # exit status.
      export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:handle_segv=0"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    elif [ "$variant" = tsan ]; then
      # A race report makes the process exit non-zero, which fails the
      # test that ran it.
      export TSAN_OPTIONS="halt_on_error=0:exitcode=66:second_deadlock_stack=1:handle_segv=0"
    fi
    MCPD_REQUIRE_E2E=1 make -j2 check
    ;;
esac
