#!/usr/bin/env bash
# Tests the throughput half of `hyphys bench sched` on the small scene drop:
# the first run records the frames and the job stream, the JSON has every
# field with sane values (FPS > 0 and under the fluid bound, idle ratios in
# [0, 1], setup shares within the busy share) for every machine
# configuration and policy, the CSV is written, a second run reads the saved
# stream and prints exactly the same output (the virtual clock is
# deterministic), and bad usage exits 2.
set -u
CLI=${HY_CLI:?HY_CLI not set}
SRC=${HY_SOURCE_DIR:?HY_SOURCE_DIR not set}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # description, condition result
    if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}
run() {
    "$CLI" bench sched --part throughput --scenes "$SRC/scenes/drop.json" --frames 6 \
        --record-dir "$tmp/rec" --out "$tmp/out" --json "$@"
}

out1=$(run 2>"$tmp/err1")
check "first run exits 0" $?
grep -q "recording" "$tmp/err1"; check "first run records" $?
[ -f "$tmp/rec/drop/jobs.csv" ]; check "job stream saved" $?
[ -f "$tmp/out/sched_throughput.csv" ]; check "CSV written" $?
out2=$(run 2>"$tmp/err2")
check "second run exits 0" $?
! grep -q "recording" "$tmp/err2"; check "second run reads the saved stream" $?
[ "$out1" = "$out2" ]; check "identical output across runs (virtual clock)" $?

# 2 machines: 3 + 6 configurations, 5 policies each
rows=$(printf '%s' "$out1" | grep -o '"scene":"drop"' | wc -l)
[ "$rows" -eq 45 ]; check "45 throughput rows ($rows)" $?
[ -z "$(printf '%s' "$out1" | grep -o '"quality"')" ]; check "no quality part with --part throughput" $?
for p in lp ws ws-exp lau10 tan09; do
    printf '%s' "$out1" | grep -q "\"policy\":\"$p\""; check "policy $p present" $?
done
for c in '"machine":"machine1","config":"CPU+GTX285+GTX480"' '"machine":"machine2","config":"2CPU+GTX285+C2075+GTX480+GTX580"'; do
    printf '%s' "$out1" | grep -q "$c"; check "config $c present" $?
done
bad_fps=$(printf '%s' "$out1" | grep -o '"fps":[^,}]*' | awk -F: '!($2 > 0)' | wc -l)
[ "$bad_fps" -eq 0 ]; check "every fps > 0" $?
bad_idle=$(printf '%s' "$out1" | grep -o '"idle":{[^}]*}' | grep -o '":[-0-9.e][-0-9.e]*' | cut -d: -f2 | awk '!($1 >= 0 && $1 <= 1)' | wc -l)
n_idle=$(printf '%s' "$out1" | grep -o '"idle":{[^}]*}' | grep -o '":[-0-9.e][-0-9.e]*' | wc -l)
[ "$bad_idle" -eq 0 ] && [ "$n_idle" -eq 135 ]; check "135 idle ratios ($n_idle), all in [0, 1]" $?
printf '%s' "$out1" | grep -q '"throughput_targets":{"lp_over_ws":'; check "target summary present" $?
if command -v python3 >/dev/null 2>&1; then
    printf '%s' "$out1" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["throughput"]) == 45' 2>/dev/null
    check "valid JSON" $?
    # setup shares: one per resource, within the busy share, some setup paid in every row
    printf '%s' "$out1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in d["throughput"]:
    assert set(r["setup"]) == set(r["idle"]), r
    assert set(r["transfer"]) == set(r["idle"]), r
    for k, v in r["setup"].items():
        assert 0 <= v <= 1 - r["idle"][k] + 1e-4, (r["policy"], r["config"], k, v)
        t = r["transfer"][k]
        assert 0 <= t and v + t <= 1 - r["idle"][k] + 1e-4, (r["policy"], r["config"], k, v, t)
    assert sum(r["setup"].values()) > 0, r
    # the fluid bound is an upper bound on every policy
    assert 0 < r["fps"] <= r["fluid_bound_fps"] * (1 + 1e-9), (r["policy"], r["config"], r["fps"], r["fluid_bound_fps"])
' 2>"$tmp/setup_err"
    check "setup and transfer shares within the busy shares, FPS under the fluid bound" $?
    head -3 "$tmp/setup_err"
fi

# a saved stream with a count past what the simulation's products allow:
# named by line and recorded again, not simulated with overflowing counts
sed '3s/^\([0-9]*,[0-9]*\),[0-9]*/\1,2147483648/' "$tmp/rec/drop/jobs.csv" >"$tmp/jobs.big" && cp "$tmp/jobs.big" "$tmp/rec/drop/jobs.csv"
out3=$(run 2>"$tmp/err3"); rc=$?
[ $rc -eq 0 ] && grep -q "jobs.csv:3: a count above 2^31 - 1 (recording it again)" "$tmp/err3" && [ "$out3" = "$out1" ]
check "a count above 2^31 - 1 in jobs.csv: named, recorded again, same output" $?

# a saved stream another pipeline made (a count of frame 0 or of frame 1,
# the first refit, differs from what this build makes of the recording):
# recorded again, same output
for fr in 0 1; do
    awk -F, -v OFS=, -v fr=$fr '$1 == fr && $2 == 1 { $5 = $5 + 7 } { print }' "$tmp/rec/drop/jobs.csv" >"$tmp/jobs.old" &&
        cp "$tmp/jobs.old" "$tmp/rec/drop/jobs.csv"
    out4=$(run 2>"$tmp/err4"); rc=$?
    [ $rc -eq 0 ] && grep -q "jobs.csv: its first frames differ from what this build's pipeline makes" "$tmp/err4" &&
        [ "$out4" = "$out1" ] && ! cmp -s "$tmp/jobs.old" "$tmp/rec/drop/jobs.csv"
    check "a stream made by another pipeline (frame $fr): recorded again, same output" $?
done

# --call-cost: the text table ends with one row per policy and |R| (the
# drop scene's configurations: |R| = 1..6), each with a measured and a
# charged time; the charged one includes the 2 us gather, so it is above 2
"$CLI" bench sched --part throughput --scenes "$SRC/scenes/drop.json" --frames 2 --record-dir "$tmp/rec" \
    --out none --call-cost >"$tmp/o7" 2>/dev/null; rc=$?
cost_rows=$(awk '/^policy +\|R\| +calls +measured_us +charged_us/ { on = 1; next } on && NF == 0 { exit } on && NF == 5 && $4 > 0 && $5 > 2' "$tmp/o7" | wc -l)
[ $rc -eq 0 ] && [ "$cost_rows" -eq 30 ]; check "--call-cost: 30 rows of call cost ($cost_rows)" $?
# ... then the |R| = 6 calls again by T, the types with jobs: every policy
# has a row, T within 1..12
t_policies=$(awk '/^policy +T +calls +measured_us +charged_us/ { on = 1; next } on && NF == 5 && $2 >= 1 && $2 <= 12 && $4 > 0 && $5 > 2 { print $1 }' "$tmp/o7" | sort -u | wc -l)
[ "$t_policies" -eq 5 ]; check "--call-cost: calls at |R| = 6 by T for all 5 policies ($t_policies)" $?
"$CLI" bench sched --part bogus >/dev/null 2>&1; [ $? -eq 2 ]; check "--part bogus exits 2" $?
"$CLI" bench sched --part throughput --frames 0 >/dev/null 2>&1; [ $? -eq 2 ]; check "--frames 0 exits 2" $?
"$CLI" bench sched --sched-time never >/dev/null 2>&1; [ $? -eq 2 ]; check "--sched-time never exits 2" $?
"$CLI" bench sched --part throughput --scenes "$tmp/none.json" --record-dir "$tmp/none" --out none >/dev/null 2>&1
[ $? -eq 2 ]; check "missing scene exits 2" $?
# bad scenes and output folders are refused before the quality part runs
# (it would print its table first)
"$CLI" bench sched --scenes "$SRC/scenes/drop.json,$tmp/none.json" --out none >"$tmp/o5" 2>"$tmp/e5"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot read scene '$tmp/none.json'" "$tmp/e5" && [ ! -s "$tmp/o5" ]
check "a missing second scene exits 2 before measuring" $?
: >"$tmp/plain"
"$CLI" bench sched --scenes "$SRC/scenes/drop.json" --out "$tmp/plain" >"$tmp/o6" 2>"$tmp/e6"; rc=$?
[ $rc -eq 2 ] && grep -q "out: '$tmp/plain' is not a folder" "$tmp/e6" && [ ! -s "$tmp/o6" ]
check "--out naming a file exits 2 before measuring" $?
# no --out: a new folder in the current one, named for the time; a second
# run makes another (never writes over the first's results)
mkdir -p "$tmp/cwd"
for k in 1 2; do
    (cd "$tmp/cwd" && "$CLI" bench sched --part throughput --scenes "$SRC/scenes/drop.json" --frames 2 \
        --record-dir "$tmp/rec" >/dev/null 2>"$tmp/e8_$k"); rc=$?
    [ $rc -eq 0 ]; check "no --out, run $k: exits 0" $?
done
n=$(ls -d "$tmp"/cwd/bench-sched-*/sched_throughput.csv 2>/dev/null | wc -l)
[ "$n" -eq 2 ] && [ "$(ls "$tmp/cwd" | wc -l)" -eq 2 ]; check "no --out: two new folders, each with its CSV ($n)" $?
grep -q "wrote bench-sched-[0-9]\{8\}-[0-9]\{6\}\(-2\)\?/sched_throughput.csv" "$tmp/e8_1"; check "says where it wrote" $?
# --out-dir is the same option
"$CLI" bench sched --part throughput --scenes "$SRC/scenes/drop.json" --frames 2 --record-dir "$tmp/rec" \
    --out-dir "$tmp/out2" >/dev/null 2>&1 && [ -f "$tmp/out2/sched_throughput.csv" ]
check "--out-dir still names the folder" $?
exit $fail
