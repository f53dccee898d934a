#!/usr/bin/env bash
# Tests `hyphys bench step` on small scenes with few frames: the JSON has
# every field with sane, consistent values; the first contact of the drop
# scene is at the frame free fall predicts; the per-frame CSV agrees with
# the summary; the kinetic energy column follows free fall; capped CG
# steps are counted; the state does not depend on the thread count; the
# default length is the scene's sequence; bad usage exits 2 and an
# unwritable CSV exits 1.
set -u
CLI=${HY_CLI:?HY_CLI not set}
SRC=${HY_SOURCE_DIR:?HY_SOURCE_DIR not set}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # description, condition result
    if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}
field() { # json, key -> value (keys used here occur once)
    printf '%s' "$1" | sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p"
}

# drop: a ball falls 0.9 m (its lowest point from 0.9 m onto the slab top
# at 0) with time step 0.005 s. The step is semi-implicit Euler, so after n
# steps it has fallen g dt^2 n (n + 1) / 2: 0.8964 m after 85, 0.9175 m
# after 86, and the step that reaches the slab (within the 1 mm contact
# distance) is step 86. The icosphere's lowest vertex may sit a little
# above -0.1, which could move it one step later: 86 or 87.
out1=$("$CLI" bench step --scene "$SRC/scenes/drop.json" --frames 120 --threads 2 --quiet --json --csv "$tmp/drop.csv" 2>"$tmp/err1")
check "drop: exits 0" $?
[ ! -s "$tmp/err1" ]; check "drop: --quiet prints nothing on stderr" $?
[ "$(field "$out1" scene)" = '"drop"' ]; check "scene name" $?
[ "$(field "$out1" threads)" = 2 ]; check "threads" $?
[ "$(field "$out1" frames)" = 120 ]; check "frames" $?
fc=$(field "$out1" first_contact_frame)
[ "$fc" = 86 ] || [ "$fc" = 87 ]; check "first contact at frame 86 or 87 ($fc)" $?
for k in fps seconds step_ms contact_step_ms phase_ms cg_iterations cg_max_iterations capped_steps hash; do
    printf '%s' "$out1" | grep -q "\"$k\":"; check "json has $k" $?
done
awk -v f="$(field "$out1" fps)" 'BEGIN { exit !(f > 0) }'; check "fps > 0" $?
if command -v python3 >/dev/null 2>&1; then
    printf '%s' "$out1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["step_ms"]
assert 0 < s["median"] <= s["p95"] <= s["max"], s
assert abs(d["fps"] - d["frames"] / d["seconds"]) <= 1e-3 * d["fps"] + 1e-3, d
assert 0 < d["contact_step_ms"]["median"] <= d["contact_step_ms"]["p95"], d
assert set(d["phase_ms"]) == {"integrate", "refit", "traverse", "response", "commit"}, d["phase_ms"]
for p in d["phase_ms"].values():
    assert 0 <= p["median"] <= p["p95"] <= s["max"], p
# rigid bodies only: no CG solve, nothing capped
assert d["cg_iterations"] == {"median": 0, "max": 0, "median_in_contact": 0}, d["cg_iterations"]
assert d["capped_steps"] == 0 and d["cg_max_iterations"] == 200, d
' 2>"$tmp/py1"
    check "drop: JSON valid, figures consistent" $?
    head -3 "$tmp/py1"
fi

# the CSV: a header and one row per frame; its first row with contacts is
# the first contact frame; its step times add up to the summary's seconds
[ "$(wc -l <"$tmp/drop.csv")" -eq 121 ]; check "CSV has 120 rows" $?
head -1 "$tmp/drop.csv" | grep -q "^frame,ms_integrate,ms_refit,ms_traverse,ms_response,ms_commit,ms_total,cg_iterations,capped,candidates,exact_tests,contacts,response_iterations,bonds_broken,bonds,kinetic_energy$"
check "CSV header" $?
csv_fc=$(awk -F, 'NR > 1 && $12 > 0 { print $1; exit }' "$tmp/drop.csv")
[ "$csv_fc" = "$fc" ]; check "CSV's first contact row is the first contact frame ($csv_fc)" $?
awk -F, -v s="$(field "$out1" seconds)" 'NR > 1 { t += $7 } END { d = t / 1000 - s; exit !(d < 1e-3 && d > -1e-3) }' "$tmp/drop.csv"
check "CSV step times add up to the summary's seconds" $?
# free fall: v = g dt n after n steps, so the kinetic energy grows as n^2:
# KE(80) / KE(10) = 64 (to rounding: the CSV keeps 9 digits)
awk -F, '$1 == 10 { a = $16 } $1 == 80 { b = $16 } END { r = b / a; exit !(a > 0 && r > 64 - 1e-6 && r < 64 + 1e-6) }' "$tmp/drop.csv"
check "kinetic energy follows free fall (KE(80)/KE(10) = 64)" $?

# the same state with 1 thread (the step does not depend on the thread count)
out2=$("$CLI" bench step --scene "$SRC/scenes/drop.json" --frames 120 --threads 1 --quiet --json)
[ "$(field "$out2" hash)" = "$(field "$out1" hash)" ] && [ "$(field "$out2" first_contact_frame)" = "$fc" ]
check "same hash and first contact with 1 and 2 threads" $?

# cloth: CG iterations counted, and a step is capped when its solve ends
# short of the tolerance (here: at the cap): the summary's count is the CSV's, on the scene as
# it is and with the cap lowered to 2 (every step after the first, which
# starts from rest, needs more than 2 iterations to reach 1e-6)
capped_rows() { # csv, cap -> rows whose iterations reach the cap, and rows marked capped
    awk -F, -v cap="$2" 'NR > 1 && $8 >= cap { n++ } NR > 1 && $9 == 1 { m++ } END { print n + 0, m + 0 }' "$1"
}
out3=$("$CLI" bench step --scene "$SRC/scenes/cloth_small.json" --frames 4 --quiet --json --csv "$tmp/cloth.csv")
check "cloth_small: exits 0" $?
[ "$(field "$out3" first_contact_frame)" = null ]; check "cloth_small: no contact in 4 frames (swinging free)" $?
printf '%s' "$out3" | grep -q '"contact_step_ms":null'; check "no contact: contact_step_ms is null" $?
max=$(printf '%s' "$out3" | sed -n 's/.*"cg_iterations":{"median":[^,]*,"max":\([0-9]*\).*/\1/p')
[ -n "$max" ] && [ "$max" -gt 0 ] && [ "$max" -le 200 ]; check "cloth_small: CG iterations counted, at most the cap ($max)" $?
n=$(field "$out3" capped_steps)
[ "$(capped_rows "$tmp/cloth.csv" 200)" = "$n $n" ]; check "cloth_small: capped steps ($n) as in the CSV" $?
sed 's/"substeps": 1 }/"substeps": 1, "cg_max_iterations": 2 }/' "$SRC/scenes/cloth_small.json" >"$tmp/capped.json"
grep -q '"cg_max_iterations": 2' "$tmp/capped.json"; check "capped scene made" $?
out4=$("$CLI" bench step --scene "$tmp/capped.json" --frames 4 --quiet --json --csv "$tmp/capped.csv")
n=$(field "$out4" capped_steps)
[ "$(field "$out4" cg_max_iterations)" = 2 ] && [ "$n" -ge 3 ] && [ "$(capped_rows "$tmp/capped.csv" 2)" = "$n $n" ]
check "cap of 2 iterations: $n of 4 steps capped (at least 3), in the summary and the CSV" $?

# the default length: the scene's sequence (the table in bench/scene_info.c),
# else 100 frames
out5=$("$CLI" bench step --scene "$SRC/scenes/drop.json" --quiet --json)
[ "$(field "$out5" frames)" = 100 ]; check "drop: 100 frames by default" $?
out6=$("$CLI" bench step --scene cloth_ball --frames 1 --quiet --json)
[ "$(field "$out6" sequence_frames)" = 300 ] && [ "$(field "$out6" frames)" = 1 ]
check "cloth_ball: its sequence is 300 frames" $?
"$CLI" bench step --scene "$SRC/scenes/drop.json" --frames 3 >"$tmp/text" 2>"$tmp/err7"
grep -q "^scene drop: 332 triangles, 3 frames (set by --frames), 2 threads" "$tmp/text" &&
    grep -q "first contact  *none in these frames" "$tmp/text" && grep -q "frame 3/3" "$tmp/err7"
check "text report and progress" $?

"$CLI" bench step --frames 0 >/dev/null 2>&1; [ $? -eq 2 ]; check "--frames 0 exits 2" $?
"$CLI" bench step --bogus >/dev/null 2>&1; [ $? -eq 2 ]; check "unknown option exits 2" $?
"$CLI" bench step --scene "$tmp/none.json" >/dev/null 2>&1; [ $? -eq 2 ]; check "missing scene exits 2" $?
"$CLI" bench step --scene "$SRC/scenes/drop.json" --frames 2 --csv "$tmp/no/such/dir/x.csv" >/dev/null 2>"$tmp/err8"
[ $? -eq 2 ] && grep -q "cannot write '$tmp/no/such/dir/x.csv'" "$tmp/err8"; check "unwritable --csv path exits 2" $?
if [ -w /dev/full ]; then
    "$CLI" bench step --scene "$SRC/scenes/drop.json" --frames 2 --csv /dev/full >/dev/null 2>"$tmp/err9"
    [ $? -eq 1 ] && grep -q "writing '/dev/full' failed" "$tmp/err9"; check "--csv on a full device exits 1" $?
fi

# --check: a clear scene passes and says so; bodies that start inside each
# other end the run at frame 0 with the pair named (exit 1)
out10=$("$CLI" bench step --scene "$SRC/scenes/drop.json" --frames 3 --check --quiet --json)
[ "$(field "$out10" checked)" = true ]; check "--check on a clear scene" $?
cat >"$tmp/overlap.json" <<'JSON'
{"objects": [
 {"type": "body", "name": "left", "mesh": {"generator": "icosphere", "radius": 0.2, "subdivisions": 1}},
 {"type": "body", "name": "right", "mesh": {"generator": "icosphere", "radius": 0.2, "subdivisions": 1},
  "transform": {"position": [0.3, 0, 0]}}]}
JSON
"$CLI" bench step --scene "$tmp/overlap.json" --frames 3 --check --quiet >/dev/null 2>"$tmp/err10"
[ $? -eq 1 ] && grep -q -- "--check: frame 0 ends with intersecting triangles: .*'left' triangle [0-9]* and 'right'" "$tmp/err10"
check "--check names the first offending frame" $?
exit $fail
