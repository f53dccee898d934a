#!/usr/bin/env bash
# Tests `hyphys run --check` and `--strict`: a scene whose bodies intersect
# loads with a warning naming the pair, `--check` stops at step 0 naming the
# objects and triangles (exit 1), `--strict` refuses it (exit 2); a clear
# scene passes --check over its steps (exit 0), and the nbody benchmark
# loads under --strict; a struck wall's run --json reports its bonds.
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

# a small wall struck by a ball: --check passes every step, and run --json
# reports the bonds at the start and how many broke
cat >"$work/wall.json" <<'JSON'
{"solver": {"time_step": 0.004, "gravity": [0, 0, 0]},
 "objects": [
  {"type": "fracture", "name": "wall", "size": [0.4, 0.3, 0.2], "pieces": [4, 3, 2], "gap": 0.004,
   "bond_strength": 3.0, "material": {"density": 2000, "thickness": 0.001}},
  {"type": "body", "name": "ball", "material": {"density": 7800, "thickness": 0.001},
   "mesh": {"generator": "icosphere", "radius": 0.08, "subdivisions": 1},
   "transform": {"position": [0.02, 0.01, -0.3]}, "velocity": [0, 0, 20]}]}
JSON
"$cli" run "$work/wall.json" --frames 20 --quiet --check --strict --json >"$work/wall.out" 2>"$work/err"
rc=$?
python3 - "$work/wall.out" <<'PY' || { echo "FAIL: wall run (rc $rc)"; cat "$work/err"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
b = d["bonds"]
sys.exit(0 if d["ok"] and b["initial"] == 46 and 0 < b["broken"] <= 46 else 1)
PY

[ $fail -eq 0 ] && echo "check_cli: all passed"
exit $fail
