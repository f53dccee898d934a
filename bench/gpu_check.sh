#!/usr/bin/env bash
# The checks and timings that need a GPU, in one go (a lent GPU machine's
# time is short): the CUDA test (normal and HY_TEST_FULL), state hashes of
# the CPU-only run against runs with cuda resources under every policy
# and with the GPU failing mid-run (--fault), the calibrated profiles, step
# timings with the GPU on its own feeding thread (the ccd figure is the
# phase's wall time) and the bytes each channel moved per step, the lp
# guard's light-step test (cpu,cuda never slower than cpu alone), and the
# CUDA interceptor on the nvcc-built sample program.
#
# usage: bench/gpu_check.sh BUILD_DIR OUT_DIR [FRAMES]
#   BUILD_DIR holds hyphys, test_cuda, intercept_sample and
#   libhyphys_intercept.so (a CUDA build; see README);
#   OUT_DIR gets the logs, the JSON of every run and summary.txt.
# Exit 0 when every check passed (timings are not checks).
set -u
B=${1:?usage: bench/gpu_check.sh BUILD_DIR OUT_DIR [FRAMES]}
O=${2:?usage: bench/gpu_check.sh BUILD_DIR OUT_DIR [FRAMES]}
FRAMES=${3:-30}
export OPENBLAS_NUM_THREADS=1
mkdir -p "$O"
S="$O/summary.txt"
: > "$S"
fail=0
say() { echo "$*" | tee -a "$S"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader > "$O/gpu.txt" 2>&1
say "gpu: $(cat "$O/gpu.txt")"
say "cores: $(nproc)"

# 1. the CUDA test: LEAF (gathered and by reference against resident
#    positions) and TRAVERSE bit-equal to the CPU, a world on cuda:0
for full in 0 1; do
    log="$O/test_cuda_full$full.log"
    if [ "$full" = 1 ]; then HY_TEST_FULL=1 timeout 500 "$B/test_cuda" > "$log" 2>&1; else timeout 500 "$B/test_cuda" > "$log" 2>&1; fi
    rc=$?
    say "test_cuda (HY_TEST_FULL=$full): exit $rc"
    grep -E "^cuda|mismatch|world on|FAIL" "$log" | head -12 | tee -a "$S"
    [ "$rc" = 0 ] || fail=1
done

# 2. calibration of the cpu and every GPU (the profiles the runs below load)
for t in 2 16; do
    "$B/hyphys" calibrate --threads "$t" --json > "$O/calibrate_$t.json" 2> "$O/calibrate_$t.err"
    rc=$?
    say "calibrate --threads $t: exit $rc"
    python3 - "$O/calibrate_$t.json" <<'PY' | tee -a "$S"
import json, sys
d = json.load(open(sys.argv[1]))
rows = [("cpu", d)] + [(g["resource"], g) for g in d.get("gpus", [])]
for name, r in rows:
    for k in ("traverse", "leaf"):
        c = r[k]
        print("  %-7s %-8s setup %9.2f us  proc %9.5f us  upload %9.5f us  r %.4f" % (
            name, k, c["setup_us"], c["proc_us"], c.get("upload_us", 0.0), c["r"]))
PY
    [ "$rc" = 0 ] || fail=1
done

# 3. determinism: every device set and policy reaches the CPU-only hash
hash_of() { sed -n 's/.*"state_hash":"\([0-9a-f]*\)".*/\1/p' "$1"; }
for scene in drop nbody cloth_ball fracture; do
    "$B/hyphys" run "$scene" --frames 6 --threads 2 --json --quiet > "$O/h_${scene}_cpu.json" 2> "$O/h_${scene}_cpu.err"
    ref=$(hash_of "$O/h_${scene}_cpu.json")
    line="$scene cpu $ref"
    for dev in cuda cpu,cuda; do
        for pol in lp ws ws-exp lau10 tan09 exhaustive; do
            [ "$dev" = cuda ] && [ "$pol" != lp ] && continue
            f="$O/h_${scene}_${dev/,/-}_$pol.json"
            "$B/hyphys" run "$scene" --frames 6 --threads 2 --devices "$dev" --sched "$pol" --json --quiet > "$f" 2> "${f%.json}.err"
            h=$(hash_of "$f")
            if [ -n "$ref" ] && [ "$h" = "$ref" ]; then line="$line | $dev/$pol same"; else line="$line | $dev/$pol DIFFERS ($h)"; fail=1; fi
        done
    done
    say "$line"
    # a GPU failing in step 3: retired, its jobs elsewhere, the same hash
    f="$O/h_${scene}_fault.json"
    "$B/hyphys" run "$scene" --frames 6 --threads 2 --devices cpu,cuda --fault cuda:0@3 --json --quiet > "$f" 2> "${f%.json}.err"
    h=$(hash_of "$f")
    said=$(grep -c 'cuda:0 failed in step' "${f%.json}.err")
    if [ -n "$ref" ] && [ "$h" = "$ref" ]; then say "$scene cpu,cuda --fault cuda:0@3: same hash, said $said time(s)"; else say "$scene cpu,cuda --fault cuda:0@3: DIFFERS ($h)"; fail=1; fi
done

# 4. timings: median step and CCD phase, CPU only and with the GPU
ms_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["ms_per_step"]; s=d.get("sched",{}); print("total %.2f traverse %.2f ccd %.2f" % (m["total"]["median"], m["traverse"]["median"], s.get("ccd_ms",{}).get("median",0)), " ".join("%s:%.0f%%(up %.0f KB down %.0f KB/step)" % (r["name"], 100*r["share"], r.get("bytes_per_step",{}).get("up",0)/1e3, r.get("bytes_per_step",{}).get("down",0)/1e3) for r in s.get("resources",[])))' "$1" 2>/dev/null; }
for scene in nbody cloth_ball fracture; do
    for t in 2 16; do
        for dev in cpu cuda cpu,cuda; do
            f="$O/t_${scene}_${t}_${dev/,/-}.json"
            "$B/hyphys" run "$scene" --frames "$FRAMES" --threads "$t" --devices "$dev" --json --quiet > "$f" 2> "${f%.json}.err"
            say "$scene threads $t devices $dev: $(ms_of "$f")"
        done
    done
done
# 4b. the issue's target: cpu,cuda against the better of cpu and cuda alone
#     (median step and ccd phase; > 1.00 means cpu,cuda is slower)
for scene in nbody cloth_ball fracture; do
    for t in 2 16; do
        python3 - "$O" "$scene" "$t" <<'PY' | tee -a "$S"
import json, sys
o, scene, t = sys.argv[1:]
def get(dev):
    try:
        d = json.load(open("%s/t_%s_%s_%s.json" % (o, scene, t, dev)))
        return d["ms_per_step"]["total"]["median"], d["sched"]["ccd_ms"]["median"]
    except Exception:
        return None
c, g, b = get("cpu"), get("cuda"), get("cpu-cuda")
if c and g and b:
    print("%s threads %s: cpu,cuda / best alone: step %.2f, ccd %.2f" % (scene, t, b[0] / min(c[0], g[0]), b[1] / min(c[1], g[1])))
PY
    done
done
# 5. CUDA interception: the sample program (intercept/sample.cu, built with
#    -cudart shared) alone and with libhyphys_intercept.so preloaded, under
#    round-robin and, with several GPUs, everything on GPU 1: the same output,
#    and the report counts every launch the sample says it made
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
if [ -x "$B/intercept_sample" ] && [ -f "$B/libhyphys_intercept.so" ]; then
    "$B/intercept_sample" > "$O/intercept_plain.out" 2> "$O/intercept_plain.err"
    rc=$?
    n=$(sed -n 's/^sample: launches \([0-9]*\),.*/\1/p' "$O/intercept_plain.out")
    say "intercept_sample alone: exit $rc, $n launches"
    [ "$rc" = 0 ] && [ -n "$n" ] || fail=1
    pols=round-robin
    [ "${ngpu:-0}" -gt 1 ] && pols="$pols fixed:1"
    for pol in $pols; do
        f="$O/intercept_${pol/:/}"
        HY_INTERCEPT_POLICY=$pol HY_INTERCEPT_REPORT="$f.report" LD_PRELOAD="$B/libhyphys_intercept.so" \
            "$B/intercept_sample" > "$f.out" 2> "$f.err"
        rc=$?
        rep=$(head -1 "$f.report" 2>/dev/null)
        per=$(awk -F= '/^hyphys-intercept device=/ { s += $3 } END { print s + 0 }' "$f.report" 2>/dev/null)
        if [ "$rc" = 0 ] && cmp -s "$O/intercept_plain.out" "$f.out" && [ -n "$n" ] &&
            echo "$rep" | grep -q "launches=$n configured=$n " && [ "${per:-0}" = "$n" ]; then
            say "intercept_sample under $pol: same output, $n launches counted ($rep)"
        else
            say "intercept_sample under $pol: exit $rc, output $(cmp -s "$O/intercept_plain.out" "$f.out" && echo same || echo DIFFERS), report: ${rep:-none} (per device $per)"
            fail=1
        fi
    done
else
    say "intercept: $B/intercept_sample or libhyphys_intercept.so missing (a CUDA build makes both)"
    fail=1
fi
say "checks: $([ $fail = 0 ] && echo passed || echo FAILED)"
exit $fail
