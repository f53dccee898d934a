#!/usr/bin/env bash
# Installs hyphys into a temporary prefix, builds examples/game_loop.c
# against the installed package (pkg-config, then the CMake package) with
# warnings as errors, and runs it: ids refused after removal, contact
# events, impulses, and a restore that continues to the uninterrupted hash.
set -euo pipefail
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$HY_BUILD_DIR" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib* | head -1)
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# HY_EXTRA_CFLAGS: the sanitizer flags when the library was built with them
${HY_C_COMPILER:-cc} -std=c11 -Wall -Wextra -Werror -pedantic ${HY_EXTRA_CFLAGS:-} "$HY_SOURCE_DIR/examples/game_loop.c" \
  -o "$work/game_loop" $(pkg-config --cflags --libs hyphys) -Wl,-rpath,"$libdir"
out=$(env -u LD_LIBRARY_PATH "$work/game_loop")
echo "$out"
echo "$out" | grep -q "stale ids refused: 3" || { echo "removed ids were not refused"; exit 1; }
echo "$out" | grep -q "restore at frame 80: same hash" || { echo "restore did not continue the run"; exit 1; }
echo "$out" | grep -q "game loop: ok" || { echo "unexpected output"; exit 1; }
# CMake package
mkdir -p "$work/cm"
cat > "$work/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(game_loop C)
find_package(hyphys REQUIRED)
add_executable(game_loop $HY_SOURCE_DIR/examples/game_loop.c)
target_link_libraries(game_loop PRIVATE hyphys::hyphys)
CM
cmake -S "$work/cm" -B "$work/cm/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="${HY_EXTRA_CFLAGS:-}" >/dev/null
cmake --build "$work/cm/build" >/dev/null
env -u LD_LIBRARY_PATH "$work/cm/build/game_loop" | grep -q "game loop: ok"
echo "install + game_loop: ok"
