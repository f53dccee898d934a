#!/usr/bin/env bash
# Tests `hyphys run --check` and `--strict`: a scene whose bodies intersect
# loads with a warning naming the pair, `--check` stops at step 0 naming the
# objects and triangles (exit 1), `--strict` refuses it (exit 2); a clear
# scene passes --check over its steps (exit 0), and the nbody benchmark
# loads under --strict.
set -uo pipefail
cli=${HY_CLI:?HY_CLI must name the hyphys binary}
src=${HY_SOURCE_DIR:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

cat >"$work/overlap.json" <<'JSON'
{"objects": [
 {"type": "obstacle", "name": "floor", "mesh": {"generator": "box", "half_extents": [1, 0.1, 1]}},
 {"type": "body", "name": "left", "mesh": {"generator": "icosphere", "radius": 0.2, "subdivisions": 1},
  "transform": {"position": [0, 0.5, 0]}},
 {"type": "body", "name": "right", "mesh": {"generator": "icosphere", "radius": 0.2, "subdivisions": 1},
  "transform": {"position": [0.3, 0.5, 0]}}]}
JSON

"$cli" run "$work/overlap.json" --frames 2 --quiet >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q "warning: .*overlap.json: objects overlap in the initial state: .*'left' triangle [0-9]* and 'right' triangle [0-9]* (intersecting)" "$work/err"; then
  echo "FAIL: default load should warn and run (rc $rc)"; cat "$work/err"; fail=1
fi

"$cli" run "$work/overlap.json" --frames 2 --quiet --check >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q -- "--check: step 0 ends with intersecting triangles: [0-9]* triangle pairs: 'left' triangle" "$work/err"; then
  echo "FAIL: --check should stop at step 0 with exit 1 (rc $rc)"; cat "$work/err"; fail=1
fi

"$cli" run "$work/overlap.json" --frames 2 --quiet --strict >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q "overlap.json: objects overlap in the initial state: .*'left'.*'right'" "$work/err"; then
  echo "FAIL: --strict should refuse with exit 2 (rc $rc)"; cat "$work/err"; fail=1
fi

# the same bodies apart: no warning, --check passes every step as they fall
sed 's/\[0.3, 0.5, 0\]/[0.6, 0.5, 0]/' "$work/overlap.json" >"$work/clear.json"
"$cli" run "$work/clear.json" --frames 40 --quiet --check --strict >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -ne 0 ] || grep -q "overlap\|--check" "$work/err"; then
  echo "FAIL: a clear scene should pass --check --strict (rc $rc)"; cat "$work/err"; fail=1
fi

"$cli" run "$src/scenes/nbody.json" --frames 1 --quiet --strict --check >"$work/out" 2>"$work/err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: nbody under --strict --check (rc $rc)"; cat "$work/err"; fail=1; }

[ $fail -eq 0 ] && echo "check_cli: all passed"
exit $fail
