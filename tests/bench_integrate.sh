#!/usr/bin/env bash
# Tests `hyphys bench integrate` on the documented FEM costs
# (docs/integrate/measured_fem_costs.csv, so no timing enters): the JSON has
# the issue's keys with one row per configuration and the same state hash in
# every run, the CSVs and gnuplot scripts are written, a second run (its
# allocations filled with a pattern) prints exactly the same (virtual
# clock) and refuses to overwrite the first's files, --record makes a recording of a small real run (same state hash
# as the plain run) that --recordings replays, --trace writes a valid trace with one track per PU, --pus runs real
# FEM steps on two CPU PUs with the single thread's hash, and bad input
# exits 2 (usage) or 1 (a bad costs file, naming its line).
set -u
CLI=${HY_CLI:?HY_CLI not set}
SRC=${HY_SOURCE_DIR:?HY_SOURCE_DIR not set}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # description, condition result
    if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}
COSTS="$SRC/docs/integrate/measured_fem_costs.csv"
run() { "$CLI" bench integrate --fem-costs "$COSTS" --steps 5 --no-plot --json "$@"; }

out1=$(run --only gpus,bars,mixed --out "$tmp/a" 2>"$tmp/err1")
check "first run exits 0" $?
# the second run with glibc's allocator filling fresh and freed blocks with
# a byte pattern: a figure read from memory left uninitialised would differ
out2=$(MALLOC_PERTURB_=165 run --only bars --out "$tmp/b" 2>/dev/null)
check "second run exits 0" $?
[ "$(printf '%s' "$out1" | grep -o '"bars":\[[^]]*\]')" = "$(printf '%s' "$out2" | grep -o '"bars":\[[^]]*\]')" ]
check "identical bars figures across runs (virtual clock), the second's allocations perturbed" $?
for f in gpus.csv gpus_steps.csv gpus.gp bars.csv bars.gp mixed.csv mixed.gp; do
    [ -s "$tmp/a/$f" ]; check "$f written" $?
done
[ ! -e "$tmp/a/fem_costs.csv" ]; check "no fem_costs.csv when the costs were read" $?
printf '%s' "$out1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["note"] == "modeled", d["note"]
assert all(d["workloads"][k].startswith("modeled; workload from measured FEM costs")
           for k in ("fem64", "fem_bars", "fem_independent")), d["workloads"]
assert len(d["gpus"]) == 4 * 6 and {r["gpus"] for r in d["gpus"]} == {1, 2, 4, 8}
assert all(abs(r["speedup"] - 1) < 1e-9 for r in d["gpus"] if r["gpus"] == 1)
assert all(r["speedup"] > 1 for r in d["gpus"] if r["gpus"] > 1)
assert len(d["bars"]) == 4 * 5 and all(r["ms"] > 0 for r in d["bars"])
assert {r["policy"] for r in d["bars"]} == {"round-robin", "static", "affinity", "priority", "lp"}
assert len(d["mixed"]) == 24 * 3 and {r["policy"] for r in d["mixed"]} == {"ws", "priority", "lp"}
assert all(abs(r["speedup"] - 1) < 0.01 for r in d["mixed"] if (r["gpus"], r["cpus"]) == (0, 1))
assert d["gpus_same_hash"] and d["bars_same_hash"] and d["mixed_same_hash"]
t = d["targets"]
assert set(t) >= {"gpus8_at_least_6", "bars_affinity_priority_beat_rr_static", "mixed_priority_cooperative",
                  "mixed_ws_speed_down", "lp_ge_priority_everywhere"}, t
'
check "JSON keys, rows and hashes" $?
run --only bars --out "$tmp/a" >/dev/null 2>"$tmp/err3"
[ $? -eq 1 ] && grep -q "never overwritten" "$tmp/err3"; check "existing files are not overwritten" $?

"$CLI" bench integrate --fem-costs "$COSTS" --trace "$tmp/t.json" --scene fem_bars --block 500 --policy lp \
    --gpus 2 --cpus 2 --steps 5 >"$tmp/trace.txt"
check "trace run exits 0" $?
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = [e["args"]["name"] for e in ev if e["ph"] == "M"]
assert names == ["gpu0 (modeled)", "gpu1 (modeled)", "cpu0 (modeled)", "cpu1 (modeled)", "scheduler (lp)"], names
tasks = [e for e in ev if e["ph"] == "X" and e["cat"] == "task"]
# 30 blocks of 27 tasks, 18 attachments along the bars and 27 across
assert len(tasks) == 5 * (18 + 27 + 30 * 27), len(tasks)
assert any(e.get("cat") == "map" for e in ev)
' "$tmp/t.json"
check "trace: a track per PU, every task" $?

real=$("$CLI" bench integrate --pus cpu:1,cpu:1 --policy ws --objects 4 --steps 2 --json)
check "real run exits 0" $?
printf '%s' "$real" | grep -q '"same_hash":true'; check "real run: the single thread's hash" $?

# a recording of a real run (two stacked blocks) replayed in place of fem_independent
cat >"$tmp/stack.json" <<'JSON'
{"solver": {"time_step": 0.01},
 "materials": {"rubber": {"young": 50000, "poisson": 0.3, "density": 1000, "damping": 0.01}},
 "objects": [
  {"type": "obstacle", "name": "floor", "mesh": {"generator": "box", "half_extents": [1, 0.05, 1]},
   "transform": {"position": [0, -0.05, 0]}},
  {"type": "fem", "name": "low", "material": "rubber",
   "mesh": {"generator": "block", "size": [0.15, 0.15, 0.15], "cells": [3, 3, 3]}, "transform": {"position": [0, 0.077, 0]}},
  {"type": "fem", "name": "high", "material": "rubber",
   "mesh": {"generator": "block", "size": [0.15, 0.15, 0.15], "cells": [3, 3, 3]}, "transform": {"position": [0, 0.229, 0]}}
 ]}
JSON
mkdir -p "$tmp/rec"
"$CLI" bench integrate --record "$tmp/stack.json" --steps 4 --out "$tmp/rec/fem_independent.csv" >"$tmp/rec.txt"
check "record exits 0" $?
want=$("$CLI" run "$tmp/stack.json" --frames 4 --threads 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state_hash"])')
grep -q "state hash $want" "$tmp/rec.txt"; check "recording leaves the run's hash ($want)" $?
[ "$(grep -c '^object,' "$tmp/rec/fem_independent.csv")" -eq 8 ] && grep -q '^pair,[0-3],0,1$' "$tmp/rec/fem_independent.csv"
check "recording: 2 solids x 4 steps, the touching pair" $?
"$CLI" bench integrate --record "$tmp/stack.json" --steps 1 --out "$tmp/rec/fem_independent.csv" >/dev/null 2>"$tmp/err6"
[ $? -eq 1 ] && grep -q "never overwritten" "$tmp/err6"; check "a recording is not overwritten" $?
# The replay steps the recorded scene for real in each of the 72 mixed
# configurations: minutes in the unoptimised sanitizer build, where the
# recording above already ran the same code; the normal build replays.
if [ "${HY_TEST_SANITIZER:-0}" != 1 ]; then
    rep=$(run --only mixed --recordings "$tmp/rec" --out "$tmp/d" 2>/dev/null)
    check "replay exits 0" $?
    printf '%s' "$rep" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["workloads"]["fem_independent"].startswith("modeled; replaying the recorded run"), d["workloads"]
assert d["workloads"]["fem64"].startswith("modeled; workload from measured"), d["workloads"]
assert len(d["mixed"]) == 24 * 3 and d["mixed_same_hash"]
'
    check "replay: the recorded scene, same hash everywhere" $?
fi
# Costs of this recording once made the modeled run's two idle cores pass a
# stolen partition back and forth for ever (priority, 0 GPUs + 2 cores).
mkdir -p "$tmp/rec2"
cat >"$tmp/rec2/fem_independent.csv" <<'CSV'
# hyphys integrate recording: scene stack.json, steps 1-4 of dt 0.01 s (1 substeps), one thread (CPU time), 2 solids
# object,step,index,particles,seconds,cg_iterations / pair,step,a,b
object,0,0,64,0.000039328,32
object,0,1,64,0.000121745,31
object,1,0,64,0.000095506,24
object,1,1,64,0.001341555,50
pair,1,0,1
object,2,0,64,0.000070506,20
object,2,1,64,0.000098473,42
pair,2,0,1
object,3,0,64,0.000167018,41
object,3,1,64,0.000110780,39
CSV
timeout 120 "$CLI" bench integrate --fem-costs "$COSTS" --steps 5 --no-plot --json --only mixed \
    --recordings "$tmp/rec2" --out "$tmp/g" >/dev/null 2>&1
check "a steal is started by its thief: no endless passing of a partition" $?
printf '# r\nobject,0,0,64,0.001,5\npair,0,0,3\n' >"$tmp/rec/fem64.csv"
run --only gpus --recordings "$tmp/rec" --out "$tmp/e" >/dev/null 2>"$tmp/err7"
[ $? -eq 1 ] && grep -q "fem64.csv:3" "$tmp/err7"; check "a bad recording names its line" $?
# fem_bars: a recording per block size, replayed in place of that size's
# synthetic workload; a recording of another block size is refused
mkdir -p "$tmp/rec3" "$tmp/rec4"
printf '# r\nobject,0,0,512,0.002,40\nobject,0,1,512,0.003,44\npair,0,0,1\nobject,1,0,512,0.002,41\nobject,1,1,512,0.003,45\npair,1,0,1\n' \
    >"$tmp/rec3/fem_bars_512.csv"
rep=$(run --only bars --recordings "$tmp/rec3" --out "$tmp/h" 2>/dev/null)
check "bars replay exits 0" $?
printf '%s' "$rep" | python3 -c '
import json, sys
d = json.load(sys.stdin)
w = d["workloads"]["fem_bars"]
assert w.startswith("modeled; replaying the recorded runs") and "blocks of 512 particles (the other sizes synthetic)" in w, w
assert len(d["bars"]) == 4 * 5 and d["bars_same_hash"]
'
check "bars replay: the 512-particle recording, the other sizes synthetic" $?
printf '# r\nobject,0,0,64,0.001,5\n' >"$tmp/rec4/fem_bars_1000.csv"
run --only bars --recordings "$tmp/rec4" --out "$tmp/i" >/dev/null 2>"$tmp/err8"
[ $? -eq 1 ] && grep -q "cells=9" "$tmp/err8"; check "a fem_bars recording of another block size is refused" $?

"$CLI" bench integrate --only nothing >/dev/null 2>&1; [ $? -eq 2 ]; check "unknown experiment exits 2" $?
"$CLI" bench integrate --pus cpu:1 --policy lifo >/dev/null 2>&1; [ $? -eq 2 ]; check "unknown policy exits 2" $?
"$CLI" bench integrate --pus gpu:1 >/dev/null 2>"$tmp/err4"; [ $? -eq 1 ] && grep -q "gpu:1" "$tmp/err4"
check "a bad PU list names its item" $?
printf 'particles,step_ms,setup_ms,iteration_ms\n512,2.8,0.6\n' >"$tmp/bad.csv"
"$CLI" bench integrate --fem-costs "$tmp/bad.csv" --out "$tmp/c" >/dev/null 2>"$tmp/err5"
[ $? -eq 1 ] && grep -q "bad.csv:2" "$tmp/err5"; check "a bad costs file names its line" $?
exit $fail
