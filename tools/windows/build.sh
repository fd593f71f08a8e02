#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/windows/build.sh - cross-compile mcpd for 64-bit Windows with
# mingw-w64: first its dependencies, libuv and json-c, from Debian 12's
# source packages into a prefix (DLLs, import libraries, headers, .pc
# files), then mcpd.exe and the bundled echo and calc plugins as DLLs, in
# DIR/dist/mcpd and a zip.  With --test, also run a libuv + json-c smoke
# program and the driver test (tests/windows/driver.mjs) under wine64.
# See tools/windows/README.md.
#
# Runs on Debian 12 (bookworm) as root, or as a user with sudo (only the
# apt steps need root).  Progress: one line per step on stderr; each
# step's full output goes to OUT/logs/.

# shellcheck disable=SC2015 # "a && b || die" is meant: die if either fails
# shellcheck disable=SC2016 # '${prefix}' in .pc files is literal

set -eu

prog=build.sh
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
repo=$(CDPATH='' cd -- "$here/../.." && pwd)

out=$repo/build-windows
do_test=0
do_clean=0
jobs=

src_list=/etc/apt/sources.list.d/mcpd-windows-src.list
triplet=x86_64-w64-mingw32
cc=$triplet-gcc
toolchain=$here/mingw64.cmake

# ---------------------------------------------------------------- helpers

step_name=
step_no=0
step_total=0
log=

usage() {
	cat <<EOF
usage: sh tools/windows/build.sh [--out DIR] [--test] [--clean] [--jobs N]

Cross-compiles libuv and json-c (Debian 12 source packages) for 64-bit
Windows into DIR/prefix, then mcpd.exe and its echo and calc plugins into
DIR/dist/mcpd and DIR/mcpd-VERSION-windows-x86_64.zip.

  --out DIR   work directory (default: build-windows/ in the repository)
  --test      also run a smoke program and tests/windows/driver.mjs
              (mcpd.exe over pipes) under wine64
  --clean     redo every step (keeps DIR/wineprefix, slow to recreate)
  --jobs N    parallel compile jobs (default: number of CPUs)
  -h, --help  this text
EOF
}

# die MESSAGE: fail the current step (if any) with a clear message.
die() {
	if [ -n "$step_name" ]; then
		printf 'FAILED\n' >&2
		printf '%s: error: %s: %s\n' "$prog" "$step_name" "$1" >&2
		show_log
		step_name=
	else
		printf '%s: error: %s\n' "$prog" "$1" >&2
	fi
	exit 1
}

show_log() {
	if [ -n "$log" ] && [ -s "$log" ]; then
		printf '%s: last lines of %s:\n' "$prog" "$log" >&2
		tail -n 20 "$log" | sed 's/^/  | /' >&2
	fi
}

on_exit() {
	rc=$?
	if [ "$rc" -ne 0 ] && [ -n "$step_name" ]; then
		printf 'FAILED\n' >&2
		printf '%s: error: step "%s" failed (exit status %d)\n' \
			"$prog" "$step_name" "$rc" >&2
		show_log
	fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s; }

# step NAME LOGNAME: start a step; its line ends when done/skipped is called.
step() {
	step_no=$((step_no + 1))
	step_name=$1
	step_t0=$(now)
	log=$out/logs/$(printf '%02d' "$step_no")-$2.log
	: >"$log"
	printf '%s: [%d/%d] %s ... ' "$prog" "$step_no" "$step_total" "$1" >&2
}

# done_ [NOTE]: finish the current step.
done_() {
	t=$(($(now) - step_t0))
	printf '%s (%ds)\n' "${1:-done}" "$t" >&2
	step_name=
}

# run CMD...: run a command with its output (and the command) in the log.
run() {
	printf '+ %s\n' "$*" >>"$log"
	"$@" >>"$log" 2>&1 </dev/null
}

# as_root CMD...: run a command as root (directly, or through sudo).
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "this needs root (or sudo): $*"
	fi
}

is_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" = installed ]
}

# Does apt know the source packages (a deb-src line, and updated lists)?
have_sources() {
	for p in libuv1 json-c; do
		apt-cache showsrc "$p" 2>/dev/null | grep -q "^Package: $p\$" || return 1
	done
}

# The Signed-By keyring of the system's deb.debian.org bookworm entry, if
# any: our deb-src line must name the same one, or apt rejects the pair
# ("Conflicting values set for option Signed-By").
debian_signed_by() {
	{
		awk 'BEGIN { RS = ""; FS = "\n" }
		{
			uris = ""; suites = ""; sb = ""
			for (i = 1; i <= NF; i++) {
				l = $i; k = tolower(l); sub(/:.*/, "", k)
				sub(/^[^:]*:[ \t]*/, "", l)
				if (k == "uris") uris = l
				else if (k == "suites") suites = l
				else if (k == "signed-by") sb = l
			}
			if ((" " uris " ") ~ /[ \t]https?:\/\/deb\.debian\.org\/debian\/?[ \t]/ &&
			    (" " suites " ") ~ /[ \t]bookworm[ \t]/ && sb ~ /^\//) {
				print sb; exit
			}
		}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
		sed -n 's|^deb[ \t]*\[.*signed-by=\([^] \t]*\).*\][ \t]*https\{0,1\}://deb\.debian\.org/debian/\{0,1\}[ \t][ \t]*bookworm[ \t].*|\1|p' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
	} | head -n 1
}

# stamp_ok FILE KEY: is FILE there and does it hold KEY?
stamp_ok() {
	[ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

# ------------------------------------------------------------- arguments

while [ $# -gt 0 ]; do
	case $1 in
	--out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift 2 ;;
	--out=*) out=${1#--out=}; shift ;;
	--test) do_test=1; shift ;;
	--clean) do_clean=1; shift ;;
	--jobs) [ $# -ge 2 ] || die "--jobs needs a number"; jobs=$2; shift 2 ;;
	--jobs=*) jobs=${1#--jobs=}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done

case $jobs in
'') jobs=$(nproc 2>/dev/null || echo 2) ;;
*[!0-9]*|0) die "--jobs wants a positive number, not '$jobs'" ;;
esac

[ -f /etc/debian_version ] && command -v apt-get >/dev/null 2>&1 ||
	die "this script wants Debian 12 (bookworm) with apt"
# shellcheck source=/dev/null
. /etc/os-release
[ "${VERSION_CODENAME:-}" = bookworm ] ||
	printf '%s: warning: written for Debian 12 (bookworm), this is %s\n' \
		"$prog" "${PRETTY_NAME:-unknown}" >&2

mkdir -p "$out"
out=$(CDPATH='' cd -- "$out" && pwd)
case $out in
*[[:space:]]*) die "the work directory must not contain blanks: $out" ;;
esac
prefix=$out/prefix
wineprefix=$out/wineprefix

if [ "$do_clean" -eq 1 ]; then
	# Only what this script creates; the wine prefix survives (its
	# initialisation is the slowest step).
	rm -rf "$out/src" "$out/build" "$out/prefix" "$out/smoke" "$out/logs" \
		"$out/versions.txt" "$out/mcpd" "$out/dist" "$out/test-plugins" \
		"$out"/mcpd-*-windows-x86_64.zip
fi
mkdir -p "$out/logs" "$out/src" "$out/build"

if [ "$do_test" -eq 1 ]; then step_total=12; else step_total=8; fi
t_start=$(now)
export LC_ALL=C.UTF-8 TZ=UTC
unset CFLAGS CPPFLAGS LDFLAGS CC PKG_CONFIG_PATH 2>/dev/null || true

# ------------------------------------------------- 1. apt source entries

fetched() { [ -f "$out/src/.libuv1.dir" ] && [ -f "$out/src/.json-c.dir" ]; }

updated=0
step "apt: deb-src for bookworm main" apt-sources
if fetched; then
	done_ "not needed (sources already fetched)"
elif have_sources; then
	done_ "already configured"
else
	if [ ! -f "$src_list" ]; then
		sb=$(debian_signed_by)
		opt=
		[ -n "$sb" ] && opt="[signed-by=$sb] "
		line="deb-src ${opt}http://deb.debian.org/debian bookworm main"
		printf '# SPDX-License-Identifier: MIT\n# Written by mcpd tools/windows/build.sh (apt-get source libuv1 json-c).\n%s\n' \
			"$line" >"$out/logs/mcpd-windows-src.list"
		run as_root cp "$out/logs/mcpd-windows-src.list" "$src_list"
		note="wrote $src_list"
	else
		note="$src_list was there"
	fi
	if ! run as_root apt-get update; then
		# Never leave apt broken behind us.
		[ "${note#wrote}" != "$note" ] && as_root rm -f "$src_list"
		die "apt-get update failed with $src_list (removed it again if we wrote it)"
	fi
	updated=1
	have_sources || die "apt still knows no source package libuv1/json-c"
	done_ "$note"
fi

# ----------------------------------------------------------- 2. packages

pkgs="mingw-w64 dpkg-dev cmake make pkgconf xz-utils zip"
[ "$do_test" -eq 1 ] && pkgs="$pkgs wine64"
missing=
for p in $pkgs; do
	is_installed "$p" || missing="$missing $p"
done
step "apt: install build tools" apt-install
if [ -z "$missing" ]; then
	done_ "all there ($pkgs)"
else
	[ "$updated" -eq 1 ] || run as_root apt-get update ||
		die "apt-get update failed"
	# shellcheck disable=SC2086
	run as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends $missing ||
		die "apt-get install failed:$missing"
	done_ "installed$missing"
fi
command -v "$cc" >/dev/null 2>&1 || die "$cc not found after installing mingw-w64"

# ------------------------------------------------------ 3. fetch sources

# fetch SRCPKG: apt-get source SRCPKG into OUT/src; records the tree's name
# in OUT/src/.SRCPKG.dir.
fetch() {
	if [ -f "$out/src/.$1.dir" ] && [ -d "$out/src/$(cat "$out/src/.$1.dir")" ]; then
		return 0
	fi
	sandbox=
	[ "$(id -u)" -eq 0 ] && sandbox="-o APT::Sandbox::User=root"
	mark=$(wc -l <"$log")
	# shellcheck disable=SC2086
	(cd "$out/src" && run apt-get $sandbox source "$1") ||
		die "apt-get source $1 failed"
	dir=$(tail -n +"$((mark + 1))" "$log" |
		sed -n 's/.*\(extracting [^ ]* in\|already unpacked source in\) \([^ ]*\)$/\2/p' |
		tail -n 1)
	[ -n "$dir" ] && [ -f "$out/src/$dir/debian/changelog" ] ||
		die "cannot tell where apt-get source unpacked $1"
	printf '%s\n' "$dir" >"$out/src/.$1.dir"
	fetched_now="$fetched_now $1"
}

step "fetch Debian sources (libuv1, json-c)" fetch
fetched_now=
fetch libuv1
fetch json-c
uv_src=$out/src/$(cat "$out/src/.libuv1.dir")
jc_src=$out/src/$(cat "$out/src/.json-c.dir")
uv_deb=$(dpkg-parsechangelog -l "$uv_src/debian/changelog" -S Version)
jc_deb=$(dpkg-parsechangelog -l "$jc_src/debian/changelog" -S Version)
# Upstream version: no epoch, no Debian revision.
uv_ver=${uv_deb#*:}; uv_ver=${uv_ver%-*}
jc_ver=${jc_deb#*:}; jc_ver=${jc_ver%-*}
if [ -n "$fetched_now" ]; then
	done_ "libuv1 $uv_deb, json-c $jc_deb"
else
	done_ "already there (libuv1 $uv_deb, json-c $jc_deb)"
fi

# ------------------------------------------------------------ 4-5. build

# -ffile-prefix-map: no build path in the binaries (assert messages);
# --no-insert-timestamp: no link time in the PE header, so a rebuild gives
# the same bytes; -static-libgcc: json-c's thread-local variables need
# libgcc's emulated TLS, which otherwise comes from libgcc_s_seh-1.dll.
cflags="-O2 -ffile-prefix-map=$out=."
ldflags="-Wl,--no-insert-timestamp -static-libgcc"

# cmake_build NAME SRC DEBVERSION [CMAKE ARGS...]: configure, build and
# install into the prefix, unless the stamp says it was done with the
# same arguments, toolchain file and source version.
cmake_build() {
	name=$1 src=$2 debver=$3
	shift 3
	bld=$out/build/$name
	set -- -S "$src" -B "$bld" -G "Unix Makefiles" \
		-DCMAKE_TOOLCHAIN_FILE="$toolchain" \
		-DCMAKE_BUILD_TYPE=None \
		-DCMAKE_C_FLAGS="$cflags" \
		-DCMAKE_SHARED_LINKER_FLAGS="$ldflags" \
		-DCMAKE_EXE_LINKER_FLAGS="$ldflags" \
		-DCMAKE_INSTALL_PREFIX="$prefix" \
		-DCMAKE_INSTALL_BINDIR=bin \
		-DCMAKE_INSTALL_LIBDIR=lib \
		-DCMAKE_INSTALL_INCLUDEDIR=include \
		-DBUILD_TESTING=OFF \
		"$@"
	key=$(printf '%s\n' "$debver" "$@" "$(cksum <"$toolchain")" | cksum)
	stamp=$bld/.mcpd-installed
	if stamp_ok "$stamp" "$key"; then
		done_ "already built"
		return 0
	fi
	rm -rf "$bld"
	SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Timestamp)
	export SOURCE_DATE_EPOCH
	run cmake "$@" || die "cmake configure failed"
	run cmake --build "$bld" --parallel "$jobs" || die "build failed"
	run cmake --install "$bld" || die "install failed"
	unset SOURCE_DATE_EPOCH
	printf '%s\n' "$key" >"$stamp"
	done_
}

step "build libuv $uv_ver (DLL + import lib + static lib)" libuv
cmake_build libuv "$uv_src" "$uv_deb" \
	-DLIBUV_BUILD_TESTS=OFF -DLIBUV_BUILD_BENCH=OFF

step "build json-c $jc_ver (DLL + import lib)" json-c
cmake_build json-c "$jc_src" "$jc_deb" \
	-DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF -DDISABLE_WERROR=ON

# ------------------------------------------- 6. pkg-config files, checks

step "check prefix, fix pkg-config files" prefix
for pc in "$prefix"/lib/pkgconfig/*.pc; do
	[ -f "$pc" ] || die "no .pc files in $prefix/lib/pkgconfig"
	# prefix= the absolute prefix; everything else relative to it.
	sed -e "s|^prefix=.*|prefix=$prefix|" \
		-e 's|^exec_prefix=.*|exec_prefix=${prefix}|' \
		-e 's|^libdir=.*|libdir=${prefix}/lib|' \
		-e 's|^includedir=.*|includedir=${prefix}/include|' \
		"$pc" >"$pc.tmp"
	if cmp -s "$pc" "$pc.tmp"; then rm -f "$pc.tmp"; else mv "$pc.tmp" "$pc"; fi
	cat "$pc" >>"$log"
done
for f in bin/libuv.dll lib/libuv.dll.a lib/libuv_a.a include/uv.h \
	bin/libjson-c.dll lib/libjson-c.dll.a include/json-c/json.h; do
	[ -f "$prefix/$f" ] || die "missing $prefix/$f"
done
PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig
export PKG_CONFIG_LIBDIR
v=$(pkg-config --modversion libuv) && [ "$v" = "$uv_ver" ] ||
	die "pkg-config libuv says '$v', expected $uv_ver"
v=$(pkg-config --modversion json-c) && [ "$v" = "$jc_ver" ] ||
	die "pkg-config json-c says '$v', expected $jc_ver"
# Every DLL a DLL imports must be beside it in bin/ or part of Windows.
for dll in "$prefix"/bin/*.dll; do
	printf '%s imports:\n' "${dll##*/}" >>"$log"
	for imp in $($triplet-objdump -p "$dll" | sed -n 's/^[ \t]*DLL Name: //p'); do
		printf '  %s\n' "$imp" >>"$log"
		case $(printf '%s' "$imp" | tr '[:upper:]' '[:lower:]') in
		kernel32.dll|msvcrt.dll|ucrtbase.dll|ntdll.dll|advapi32.dll|user32.dll|\
		ws2_32.dll|iphlpapi.dll|userenv.dll|psapi.dll|dbghelp.dll|ole32.dll|\
		shell32.dll|bcrypt.dll|secur32.dll|crypt32.dll|api-ms-win-*.dll)
			;;
		*)
			[ -f "$prefix/bin/$imp" ] ||
				die "${dll##*/} imports $imp, which is neither in $prefix/bin nor part of Windows"
			;;
		esac
	done
done
{
	printf 'libuv1 %s (Debian source package; upstream %s)\n' "$uv_deb" "$uv_ver"
	printf 'json-c %s (Debian source package; upstream %s)\n' "$jc_deb" "$jc_ver"
	printf '%s\n' "$($cc --version | head -n 1)"
	printf 'cflags: %s\nldflags: %s\n' "$cflags" "$ldflags"
} >"$out/versions.txt"
done_ "$(cd "$prefix" && echo bin/*.dll | tr ' ' ',')"

# --------------------------------------------------- 7. mcpd.exe

# mcpd's version and the files of its core (what src/mcpd links on Linux,
# from Makefile.am), with the Windows platform file instead of the others.
version=$(sed -n 's/^AC_INIT(\[mcpd\], \[\([^]]*\)\].*/\1/p' "$repo/configure.ac")
[ -n "$version" ] || die "cannot read mcpd's version from configure.ac"
mcpd_cflags="-std=gnu11 $cflags -Wall -Wextra -Wshadow -Wstrict-prototypes \
-Wmissing-prototypes -Wformat=2 -Wno-unused-parameter -Werror \
-fvisibility=hidden -ffile-prefix-map=$repo=."
# winpthreads is linked in, so that no mingw runtime DLL is needed.
mcpd_static="-Wl,-Bstatic -lwinpthread -Wl,-Bdynamic"

step "build mcpd.exe $version" mcpd-build
obj=$out/mcpd
rm -rf "$obj"
mkdir -p "$obj"
sources=$(sed -n '/^MCPD_BASE = /,/^src_libmcpdcore_la_SOURCES/p;/^src_libmcpdcore_la_SOURCES/,/^$/p' \
	"$repo/Makefile.am" | grep -o 'src/[A-Za-z0-9_/]*\.c' |
	grep -v '^src/platform/' | sort -u)
sources="$sources src/platform/windows.c src/wire/input_thread.c src/main.c"
[ "$(echo "$sources" | wc -w)" -gt 40 ] ||
	die "found only $(echo "$sources" | wc -w) source files in Makefile.am"
{
	printf '/* Generated by tools/windows/build.sh. */\n'
	printf '#define PACKAGE "mcpd"\n#define PACKAGE_NAME "mcpd"\n'
	printf '#define PACKAGE_VERSION "%s"\n#define VERSION "%s"\n' "$version" "$version"
	printf '#define PACKAGE_STRING "mcpd %s"\n' "$version"
	printf '#define MCPD_PLATFORM "windows"\n#define MCPD_PORTABLE 1\n'
	printf '#include "win32.h"\n'
} >"$obj/config.h"
includes="-I$obj -I$repo/sdk -I$repo/src"
for d in "$repo"/src/*/; do includes="$includes -I${d%/}"; done
# shellcheck disable=SC2046,SC2086 # word splitting wanted
printf '%s\n' $sources | (cd "$repo" && xargs -P "$jobs" -I{} sh -c \
	'o="$1/$(basename "$2" .c).o"; printf "+ cc %s\n" "$2"; '"$cc"' '"$mcpd_cflags"' '"$includes"' $(pkg-config --cflags libuv-static json-c) -c "$2" -o "$o"' \
	sh "$obj" {}) >>"$log" 2>&1 || die "compiling mcpd failed"
# The manifest (UTF-8 as the process's code page) as a resource.
printf '1 24 "%s"\n' "$here/mcpd.manifest" >"$obj/mcpd.rc"
run "$triplet-windres" -O coff -o "$obj/manifest.res" "$obj/mcpd.rc" ||
	die "windres failed on the manifest"
# shellcheck disable=SC2046,SC2086
run "$cc" -o "$obj/mcpd.exe" "$obj"/*.o "$obj/manifest.res" $(pkg-config --static --libs libuv-static) \
	$(pkg-config --libs json-c) $ldflags $mcpd_static ||
	die "linking mcpd.exe failed"
done_ "$(wc -c <"$obj/mcpd.exe") bytes"

# ----------------------------------- 8. plugins, the folder and the zip

# plugin_dll SOURCE OUT: one plugin as a DLL, built as a plugin author on
# Windows would: sdk/mcpd.h and json-c, nothing else.
plugin_dll() {
	# shellcheck disable=SC2046,SC2086
	run "$cc" -shared -std=gnu11 $cflags -Wall -Wextra -Werror -I"$repo/sdk" \
		$(pkg-config --cflags json-c) -o "$2" "$1" \
		$(pkg-config --libs json-c) $ldflags $mcpd_static
}

step "bundle plugins, the folder and the zip" mcpd-dist
dist=$out/dist/mcpd
rm -rf "$out/dist" "$out"/mcpd-*-windows-x86_64.zip
mkdir -p "$dist/plugins"
for p in echo calc; do
	plugin_dll "$repo/plugins/$p/$p.c" "$dist/plugins/$p.dll" ||
		die "building the $p plugin failed"
done
cp "$obj/mcpd.exe" "$prefix/bin/libjson-c.dll" "$dist/"
cp "$repo/LICENSE" "$dist/LICENSE.txt" 2>/dev/null || true
# Nothing may need a DLL that is neither in the folder nor part of Windows.
for f in "$dist"/*.exe "$dist"/*.dll "$dist"/plugins/*.dll; do
	for imp in $($triplet-objdump -p "$f" | sed -n 's/^[ \t]*DLL Name: //p'); do
		case $(printf '%s' "$imp" | tr '[:upper:]' '[:lower:]') in
		kernel32.dll|msvcrt.dll|advapi32.dll|user32.dll|ws2_32.dll|\
		iphlpapi.dll|userenv.dll|psapi.dll|dbghelp.dll|ole32.dll|shell32.dll) ;;
		*) [ -f "$dist/$imp" ] || die "${f##*/} imports $imp, which is not in $dist" ;;
		esac
	done
done
zip_file=$out/mcpd-$version-windows-x86_64.zip
# Stable bytes: fixed times, sorted names, no extra attributes.
find "$out/dist" -exec touch -h -d '2000-01-01 00:00:00 UTC' {} +
# shellcheck disable=SC2046 # the names have no blanks
(cd "$out/dist" && run zip -X -q -D "$zip_file" $(find mcpd -type f | LC_ALL=C sort)) ||
	die "zip failed"
done_ "${zip_file##*/} ($(wc -c <"$zip_file") bytes)"

# ---------------------------------------- 9-12. smoke and driver tests

if [ "$do_test" -eq 1 ]; then
	smoke=$out/smoke
	mkdir -p "$smoke"

	step "build smoke.exe" smoke-build
	# shellcheck disable=SC2046,SC2086 # word splitting wanted
	run "$cc" -std=gnu11 -O2 -Wall -Wextra -Werror \
		-ffile-prefix-map="$here=." \
		$(pkg-config --cflags libuv json-c) \
		-o "$smoke/smoke.exe" "$here/smoke.c" \
		$(pkg-config --libs libuv json-c) $ldflags ||
		die "compiling/linking smoke.c failed"
	cp "$prefix"/bin/*.dll "$smoke/"
	$triplet-objdump -p "$smoke/smoke.exe" | sed -n 's/^[ \t]*DLL Name: /  /p' >>"$log"
	done_ "$(cd "$smoke" && echo *.exe *.dll)"

	wine=
	for w in wine64 /usr/lib/wine/wine64 /usr/lib/x86_64-linux-gnu/wine/wine64; do
		if command -v "$w" >/dev/null 2>&1; then wine=$(command -v "$w"); break; fi
	done
	[ -n "$wine" ] || die "wine64 not found (package wine64)"
	wineserver=
	for w in wineserver64 /usr/lib/wine/wineserver64 wineserver /usr/lib/wine/wineserver; do
		if command -v "$w" >/dev/null 2>&1; then wineserver=$(command -v "$w"); break; fi
	done
	WINEPREFIX=$wineprefix WINEDEBUG=-all WINEARCH=win64
	# No Mono/Gecko install prompts, no display.
	WINEDLLOVERRIDES='mscoree=;mshtml='
	export WINEPREFIX WINEDEBUG WINEARCH WINEDLLOVERRIDES
	unset DISPLAY WAYLAND_DISPLAY 2>/dev/null || true
	wine_version=$("$wine" --version 2>/dev/null || echo wine)

	step "wine prefix ($wine_version)" wine-prefix
	if [ -f "$wineprefix/system.reg" ]; then
		done_ "already initialised"
	else
		run timeout 600 "$wine" wineboot --init || die "wineboot --init failed"
		[ -z "$wineserver" ] || run "$wineserver" -w
		[ -f "$wineprefix/system.reg" ] || die "wineboot left no $wineprefix/system.reg"
		done_ "initialised $wineprefix"
	fi

	step "run smoke.exe under wine64" smoke-run
	expected=$smoke/expected.txt
	{
		printf 'libuv %s\n' "$uv_ver"
		printf 'json-c %s\n' "$jc_ver"
		printf 'work done: 5050\n'
		printf 'timer tick %d\n' 1 2 3
		printf 'loop closed: 0\n'
		printf 'name: mcpd\n'
		# héllo, wörld ✓ 日本 and a rocket, as UTF-8 bytes.
		printf 'greeting: h\303\251llo, w\303\266rld \342\234\223 \346\227\245\346\234\254\n'
		printf 'emoji: \360\237\232\200 (4 bytes)\n'
		printf 'n: 3\n'
		printf 'json: {"name":"mcpd","greeting":"h\303\251llo, w\303\266rld \342\234\223 \346\227\245\346\234\254","emoji":"\360\237\232\200","n":3,"ok":true}\n'
		printf 'ok\n'
	} >"$expected"
	rc=0
	(cd "$smoke" && timeout 120 "$wine" smoke.exe >"$smoke/stdout.raw" 2>>"$log") || rc=$?
	[ -z "$wineserver" ] || "$wineserver" -w >>"$log" 2>&1 || true
	tr -d '\r' <"$smoke/stdout.raw" >"$smoke/stdout.txt"
	cat "$smoke/stdout.raw" >>"$log"
	[ "$rc" -eq 0 ] || die "smoke.exe exited with status $rc"
	if ! diff -u "$expected" "$smoke/stdout.txt" >>"$log" 2>&1; then
		die "smoke.exe printed something else than expected (diff in $log)"
	fi
	crlf=
	cmp -s "$smoke/stdout.raw" "$smoke/stdout.txt" || crlf=" (with CRLF line ends)"
	done_ "output as expected$crlf"
	sed 's/^/    | /' "$smoke/stdout.txt" >&2

	step "mcpd.exe under wine64: tests/windows/driver.mjs" driver
	command -v node >/dev/null 2>&1 || die "node (20 or later) is needed for the driver"
	fixtures=$out/test-plugins
	rm -rf "$fixtures"
	mkdir -p "$fixtures"
	for p in fault good reload_v1 reload_v2; do
		plugin_dll "$repo/tests/plugins/$p.c" "$fixtures/$p.dll" ||
			die "building the $p test plugin failed"
	done
	rc=0
	WINE=$wine timeout 600 node "$repo/tests/windows/driver.mjs" "$dist" \
		"$fixtures" >"$out/driver.txt" 2>&1 || rc=$?
	[ -z "$wineserver" ] || "$wineserver" -w >>"$log" 2>&1 || true
	cat "$out/driver.txt" >>"$log"
	if [ "$rc" -ne 0 ]; then
		done_ "FAILED"
		sed 's/^/    | /' "$out/driver.txt" >&2
		die "the driver test failed (status $rc)"
	fi
	done_ "$(grep -c '^ok' "$out/driver.txt") checks passed"
	grep '^ok\|^not ok' "$out/driver.txt" | sed 's/^/    | /' >&2
fi

# --------------------------------------------------------------- summary

summary="libuv $uv_ver (Debian $uv_deb) and json-c $jc_ver (Debian $jc_deb) for x86_64 Windows in $prefix"
summary="$summary; mcpd.exe $version in $dist and ${zip_file##*/}"
[ "$do_test" -eq 1 ] && summary="$summary; smoke and driver tests passed under $wine_version"
printf '%s: ok in %ds: %s\n' "$prog" "$(($(now) - t_start))" "$summary" >&2
