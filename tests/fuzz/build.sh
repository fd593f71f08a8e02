#!/bin/sh
# SPDX-License-Identifier: MIT
# build.sh BUILDDIR [OUTDIR] -- builds the libFuzzer harnesses with clang.
#
# The autotools objects are built with gcc, so the sources are compiled
# here again, directly, with -fsanitize=fuzzer,address,undefined, against
# the config.h that configure wrote into BUILDDIR.  OUTDIR (default
# BUILDDIR/tests/fuzz) receives fuzz_protocol, fuzz_arguments, fuzz_uritpl
# and the plugins they load (echo.so, calc.so, fuzzfix.so), which they find
# beside themselves.
#
# Needs clang and libFuzzer; on Debian 12: apt-get install clang
# libclang-rt-14-dev.  CC overrides the compiler.
set -eu

if [ $# -lt 1 ]; then
  echo "usage: $0 BUILDDIR [OUTDIR]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
out=${2:-$build/tests/fuzz}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CC=${CC:-clang}

if [ ! -f "$build/config.h" ]; then
  echo "build.sh: $build/config.h is missing; run configure there first" >&2
  exit 2
fi
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "build.sh: $CC not found (apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi

# Every .c of src/ but main.c, in whichever folder (layer) it lives; each
# folder is on the include path, as in Makefile.am.  Of src/platform/, the
# files the build's configure chose (config.h names the platform).
platform=$(sed -n 's/^#define MCPD_PLATFORM "\(.*\)"$/\1/p' "$build/config.h")
case "$platform" in
  linux) platform_files="platform/linux.c platform/elf.c platform/unix.c" ;;
  macos) platform_files="platform/posix.c platform/macos.c platform/unix.c" ;;
  *) platform_files="platform/posix.c platform/elf.c platform/unix.c" ;;
esac
# input_thread.c is the Windows build's only.
SOURCES=$( (cd "$top/src" && find . -name '*.c' ! -name main.c \
  ! -name input_thread.c ! -path './platform/*' | sed 's|^\./||'
  printf '%s\n' $platform_files) | sort)
SRC_INCLUDES=$(cd "$top/src" && find . -type d | sed "s|^\.|-I$top/src|" |
  sort | tr '\n' ' ')

deps_cflags=$(pkg-config --cflags json-c libuv libmicrohttpd libcrypto)
deps_libs=$(pkg-config --libs json-c libuv libmicrohttpd libcrypto)
jsonc_libs=$(pkg-config --libs json-c)
SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
CFLAGS_FUZZ="-g -O1 -fno-omit-frame-pointer $SAN -std=gnu11 -Wall -Wextra \
-Wno-unused-parameter -I$build $SRC_INCLUDES -I$top/sdk -I$here $deps_cflags"

mkdir -p "$out/obj"
objs=""
for f in $SOURCES; do
  m=$(basename "$f" .c)
  # shellcheck disable=SC2086
  $CC $CFLAGS_FUZZ -c "$top/src/$f" -o "$out/obj/$m.o"
  objs="$objs $out/obj/$m.o"
done
# shellcheck disable=SC2086
$CC $CFLAGS_FUZZ -c "$here/fuzz_common.c" -o "$out/obj/fuzz_common.o"

for fz in fuzz_protocol fuzz_arguments fuzz_uritpl; do
  # shellcheck disable=SC2086
  $CC $CFLAGS_FUZZ "$here/$fz.c" $objs "$out/obj/fuzz_common.o" \
    -o "$out/$fz" $deps_libs -ldl -lm -lpthread
done

# The plugins the harnesses load: the bundled echo and calc, and the
# fixture fuzzfix (fuzz_plugin.c).  Instrumented for ASan/UBSan and for
# coverage; the runtimes come from the fuzzer binary that dlopen()s them.
for p in echo:plugins/echo/echo.c calc:plugins/calc/calc.c \
  fuzzfix:tests/fuzz/fuzz_plugin.c; do
  # shellcheck disable=SC2086
  $CC -shared -fPIC -g -O1 -fno-omit-frame-pointer \
    -fsanitize=fuzzer-no-link,address,undefined \
    -fno-sanitize-recover=undefined -Wall -Wextra \
    -I"$top/sdk" $deps_cflags "$top/${p#*:}" \
    -o "$out/${p%%:*}.so" $jsonc_libs -lm
  chmod 0755 "$out/${p%%:*}.so"
done

echo "build.sh: built fuzz_protocol, fuzz_arguments, fuzz_uritpl and their plugins in $out"
