#!/usr/bin/env bash
# Installs hyphys into a temporary prefix, builds examples/embed.c against the
# installed library twice (pkg-config and the CMake package) and checks that
# it runs and prints the free-fall height: 10 - 9.81*(1/60)^2*60*61/2 = 5.01325 (semi-implicit Euler).
set -euo pipefail
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$HY_BUILD_DIR" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib* | head -1)
test -f "$prefix/include/hyphys/hyphys.h"
test -f "$libdir/pkgconfig/hyphys.pc"
test -f "$libdir/cmake/hyphys/hyphysConfig.cmake"
# the public header compiles alone as C11 and as C++
echo '#include <hyphys/hyphys.h>' > "$work/h.c"
${HY_C_COMPILER:-cc} -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$prefix/include" "$work/h.c"
if command -v g++ >/dev/null; then g++ -x c++ -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" "$work/h.c"; fi
# pkg-config, as README.md says for a private prefix: PKG_CONFIG_PATH finds
# hyphys.pc, an rpath finds the library at run time (no LD_LIBRARY_PATH)
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# HY_EXTRA_CFLAGS: the sanitizer flags when the library was built with them
${HY_C_COMPILER:-cc} -std=c11 -Wall -Wextra -Werror ${HY_EXTRA_CFLAGS:-} "$HY_SOURCE_DIR/examples/embed.c" -o "$work/embed" $(pkg-config --cflags --libs hyphys) -Wl,-rpath,"$libdir"
out=$(env -u LD_LIBRARY_PATH "$work/embed")
echo "$out"
echo "$out" | grep -q "after 1 s: height 5.013" || { echo "unexpected output"; exit 1; }
# CMake package
mkdir -p "$work/cm"
cat > "$work/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(embed C)
find_package(hyphys REQUIRED)
add_executable(embed $HY_SOURCE_DIR/examples/embed.c)
target_link_libraries(embed PRIVATE hyphys::hyphys)
CM
cmake -S "$work/cm" -B "$work/cm/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="${HY_EXTRA_CFLAGS:-}" >/dev/null
cmake --build "$work/cm/build" >/dev/null
# CMake puts the imported library's folder in the build tree's rpath
env -u LD_LIBRARY_PATH "$work/cm/build/embed" | grep -q "after 1 s: height 5.013"
echo "install + embed: ok"
