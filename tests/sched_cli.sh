#!/usr/bin/env bash
# Tests the scheduling command line: `hyphys calibrate` fits and saves a
# profile (JSON with positive per-job costs and a correlation); `hyphys run`
# with --sched/--devices/--profile, with --clock virtual and --trace, names
# its resources (modeled ones marked) and ends with the CPU-only state hash;
# bad policies, device lists and clocks are usage errors (exit 2).
set -uo pipefail
cli=${HY_CLI:?HY_CLI must name the hyphys binary}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
export HYPHYS_PROFILE="$work/default-profile.json" # never touch the user's cache

"$cli" calibrate --repeats 3 --size 32 --output "$work/p.json" --json >"$work/cal.json" || { echo "FAIL: calibrate"; exit 1; }
python3 - "$work/cal.json" "$work/p.json" <<'PY' || fail=1
import json, sys
cal = json.load(open(sys.argv[1]))
prof = json.load(open(sys.argv[2]))
ok = True
for k in ("traverse", "leaf"):
    c = cal[k]
    if not (c["proc_us"] > 0 and c["setup_us"] >= 0 and -1 <= c["r"] <= 1 and len(c["points"]) >= 3):
        print("FAIL: calibrate fit for", k, c); ok = False
d = prof["devices"][0]
if d["name"] != "cpu" or d["leaf"]["proc_us"] <= 0 or d["traverse"]["proc_us"] <= 0:
    print("FAIL: profile", d); ok = False
sys.exit(0 if ok else 1)
PY

# A scene path with a quote and a backslash: the JSON stays valid.
if [ -n "${HY_SOURCE_DIR:-}" ]; then
    odd="$work/odd\"na\\me.json"
    cp "$HY_SOURCE_DIR/scenes/nbody.json" "$odd"
    "$cli" run "$odd" --frames 1 --json --quiet >"$work/odd.json" || { echo "FAIL: run with an odd scene path"; fail=1; }
    python3 - "$work/odd.json" "$odd" <<'PY' || { echo "FAIL: JSON with an odd scene path"; fail=1; }
import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["scene"] == sys.argv[2] else 1)
PY
fi

# Two rows of balls and cones (as in nbody) thrown at each other: collision
# jobs from the first steps (the nbody benchmark's bodies start apart and
# first touch the bowl after about 150 steps)
cat >"$work/clash.json" <<'JSON'
{"solver": {"time_step": 0.005, "gravity": [0, 0, 0]},
 "objects": [
  {"type": "body", "name": "left", "transform": {"position": [-0.25, 0, 0]}, "velocity": [10, 0, 0],
   "meshes": [{"generator": "icosphere", "radius": 0.15, "subdivisions": 3},
              {"generator": "cone", "radius": 0.15, "height": 0.3, "slices": 65}],
   "array": {"count": [1, 3, 3], "spacing": [0.5, 0.5, 0.5], "random_rotation": true, "seed": 3}},
  {"type": "body", "name": "right", "transform": {"position": [0.25, 0, 0]}, "velocity": [-10, 0, 0],
   "meshes": [{"generator": "cone", "radius": 0.15, "height": 0.3, "slices": 65},
              {"generator": "icosphere", "radius": 0.15, "subdivisions": 3}],
   "array": {"count": [1, 3, 3], "spacing": [0.5, 0.5, 0.5], "random_rotation": true, "seed": 4}}]}
JSON
ref=$("$cli" run "$work/clash.json" --frames 3 --json --quiet | python3 -c 'import json,sys; print(json.load(sys.stdin)["state_hash"])')
check() { # name, expected resource count, args...
    local name=$1 count=$2; shift 2
    "$cli" run "$work/clash.json" --frames 3 --json --quiet "$@" >"$work/$name.json" 2>"$work/$name.err" || { echo "FAIL: $name: exit $?"; cat "$work/$name.err"; fail=1; return; }
    python3 - "$work/$name.json" "$ref" "$count" "$name" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sched"]
ok = d["state_hash"] == sys.argv[2] and len(s["resources"]) == int(sys.argv[3])
ok = ok and all(r["modeled"] == r["name"].startswith("model:") or s["clock"] == "virtual" for r in s["resources"])
ok = ok and sum(r["leaf_jobs"] for r in s["resources"]) > 0
if not ok: print("FAIL:", sys.argv[4], json.dumps(d))
sys.exit(0 if ok else 1)
PY
}
check lp_real 3 --sched lp --devices cpu,model:gtx285,model:gtx480 --profile "$work/p.json"
check ws_virtual 2 --sched ws --devices model:cpu-m1,model:gtx285 --clock virtual --trace "$work/t.json"
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["traceEvents"]; sys.exit(0 if any(x["name"]=="LEAF" for x in e) and any(x["name"]=="schedule" for x in e) else 1)' "$work/t.json" ||
    { echo "FAIL: trace has no LEAF batches or scheduler calls"; fail=1; }
# an output that cannot be written is refused before anything is measured
: >"$work/plain"
"$cli" calibrate --repeats 3 --size 32 --output "$work/plain/p.json" >"$work/unw.out" 2>"$work/unw.err"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot save a profile at '$work/plain/p.json'" "$work/unw.err" && grep -q "nothing measured" "$work/unw.err" && [ ! -s "$work/unw.out" ] ||
    { echo "FAIL: unwritable --output (rc $rc)"; cat "$work/unw.err"; fail=1; }
"$cli" calibrate --repeats 3 --size 32 --output "$work" >/dev/null 2>"$work/dir.err"; rc=$?
[ $rc -eq 2 ] && grep -q "Is a directory" "$work/dir.err" || { echo "FAIL: --output a folder (rc $rc)"; cat "$work/dir.err"; fail=1; }

# no profile given and none saved: calibrates first and says so
"$cli" run nbody --frames 1 --quiet --devices cpu,model:gtx285 >/dev/null 2>"$work/auto.err" || { echo "FAIL: auto-calibration run"; fail=1; }
grep -q "calibrating first" "$work/auto.err" && [ -f "$HYPHYS_PROFILE" ] || { echo "FAIL: run did not calibrate first"; cat "$work/auto.err"; fail=1; }
# a saved profile without a resource of the list (made before a GPU was
# there, say) is made again, and the run says so
cat >"$HYPHYS_PROFILE" <<'JSON'
{"devices": [{"name": "cuda:7", "kind": "gpu", "cores": 1,
  "traverse": {"setup_us": 1, "proc_us": 1, "upload_us": 0, "download_us": 0},
  "leaf": {"setup_us": 1, "proc_us": 1, "upload_us": 0, "download_us": 0}}]}
JSON
"$cli" run nbody --frames 1 --quiet --devices cpu,model:gtx285 >/dev/null 2>"$work/stale.err" || { echo "FAIL: run with a stale profile"; cat "$work/stale.err"; fail=1; }
grep -q "has no 'cpu': calibrating again" "$work/stale.err" && grep -q '"name":[[:space:]]*"cpu"' "$HYPHYS_PROFILE" ||
    { echo "FAIL: a stale profile was not made again"; cat "$work/stale.err"; fail=1; }

for bad in "--sched fifo" "--devices gpu0" "--devices model:gtx999" "--clock fast" "--devices cpu,cpu"; do
    # shellcheck disable=SC2086
    "$cli" run nbody --frames 1 --quiet $bad >/dev/null 2>"$work/bad.err"
    rc=$?
    if [ $rc -ne 2 ] || [ ! -s "$work/bad.err" ]; then echo "FAIL: 'run $bad' expected exit 2 and a message, got $rc"; fail=1; fi
done
# a repeated resource is refused before a missing profile is calibrated
HYPHYS_PROFILE="$work/none/profile.json" "$cli" run nbody --frames 1 --quiet --devices cpu,cpu >/dev/null 2>"$work/dup.err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q "listed twice" "$work/dup.err" || grep -q "calibrating" "$work/dup.err" || [ -e "$work/none" ]; then
    echo "FAIL: 'run --devices cpu,cpu' with no profile: expected exit 2 before any calibration, got $rc"; cat "$work/dup.err"; fail=1
fi
[ $fail -eq 0 ] && echo "PASS"
exit $fail
