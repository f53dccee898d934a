#!/usr/bin/env bash
# Tests scripts/run.sh without building anything: with cmake, apt-get and
# sudo replaced by stubs that log their arguments, and a stub hyphys in the
# build folder, it must build the hyphys command alone (never the whole
# tree with its tests), say roughly how long the default run takes, and run
# `hyphys run cloth_ball --frames 60` (or the scene and options given).
set -uo pipefail
src=${HY_SOURCE_DIR:?HY_SOURCE_DIR must name the source tree}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
mkdir -p "$work/bin" "$work/build"
for tool in cmake apt-get sudo; do
    printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$tool" "$work" >"$work/bin/$tool"
    chmod +x "$work/bin/$tool"
done
printf '#!/bin/sh\necho "hyphys $*" >>"%s/calls"\n' "$work" >"$work/build/hyphys"
chmod +x "$work/build/hyphys"

PATH="$work/bin:$PATH" BUILD="$work/build" bash "$src/scripts/run.sh" >"$work/out" 2>&1 || { echo "FAIL: run.sh failed"; cat "$work/out"; fail=1; }
builds=$(grep -c '^cmake --build' "$work/calls")
[ "$builds" -eq 1 ] || { echo "FAIL: expected one cmake --build, got $builds"; fail=1; }
grep -q '^cmake --build .* --target hyphys_cli\b' "$work/calls" || { echo "FAIL: run.sh builds more than the hyphys command:"; cat "$work/calls"; fail=1; }
grep -q '^hyphys run cloth_ball --frames 60$' "$work/calls" || { echo "FAIL: the default run is not cloth_ball, 60 frames:"; cat "$work/calls"; fail=1; }
grep -Eq 'about (a|[0-9]+( to [0-9]+)?) (minutes?|seconds)' "$work/out" || { echo "FAIL: run.sh does not say how long the run takes:"; cat "$work/out"; fail=1; }

: >"$work/calls"
PATH="$work/bin:$PATH" BUILD="$work/build" bash "$src/scripts/run.sh" nbody --frames 5 >"$work/out2" 2>&1 || { echo "FAIL: run.sh nbody"; fail=1; }
grep -q '^hyphys run nbody --frames 5$' "$work/calls" || { echo "FAIL: options not passed on:"; cat "$work/calls"; fail=1; }
[ $fail -eq 0 ] && echo "PASS"
exit $fail
