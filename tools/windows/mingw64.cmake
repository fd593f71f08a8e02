# SPDX-License-Identifier: MIT
#
# CMake toolchain file: cross-compile for 64-bit Windows with Debian's
# mingw-w64 toolchain (package mingw-w64, win32 thread model).
# Used by tools/windows/build.sh:
#   cmake -DCMAKE_TOOLCHAIN_FILE=tools/windows/mingw64.cmake ...

set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(MINGW_TRIPLET x86_64-w64-mingw32)
set(CMAKE_C_COMPILER   ${MINGW_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${MINGW_TRIPLET}-g++)
set(CMAKE_RC_COMPILER  ${MINGW_TRIPLET}-windres)
set(CMAKE_AR           ${MINGW_TRIPLET}-gcc-ar CACHE FILEPATH "ar")
set(CMAKE_RANLIB       ${MINGW_TRIPLET}-gcc-ranlib CACHE FILEPATH "ranlib")

# Headers and libraries come from the mingw-w64 sysroot (plus whatever the
# caller adds to CMAKE_FIND_ROOT_PATH / CMAKE_PREFIX_PATH); programs from
# the build machine.
list(APPEND CMAKE_FIND_ROOT_PATH /usr/${MINGW_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
