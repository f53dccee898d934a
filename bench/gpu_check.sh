#!/usr/bin/env bash
# The checks and timings that need a GPU, in one go (a lent GPU machine's
# time is short): the tests with GPU branches (test_cuda, test_solver_hd,
# test_solver_batch, test_cloth_hd: kernels bit-equal to the CPU;
# test_batch_step: small objects' lockstep CG with batch products on
# cuda:0, its vectors on the device (resident) and on the host;
# test_runtime_gpu: the data layer's device memory, a world's
# batches on cuda:0), the FEM beam's integration on the GPU
# against the CPU (ms per step, the same state hash), fem64's and
# fem_mixed's integration with cuda:0 as an integration PU beside 16 CPU
# PUs (ms per step, the same state hash), fem_independent's 32 small
# blocks batched on cuda:0 (objects batched, batch launches, bytes per
# step, the same state hash), fem_bars' small blocks batched with their CG
# resident on cuda:0 and cloth_ball's cloth on cuda:0 (bytes per step on
# its channel, the same state hash), state hashes of the
# CPU-only run against runs with cuda resources under every policy and
# with the GPU failing mid-run (--fault), the calibrated profiles, step
# timings with the GPU on its own feeding thread (the ccd figure is the
# phase's wall time) and the bytes each channel moved per step at 2 and 16
# threads, the issue's target (cpu,cuda never slower than the better of
# cpu and cuda alone), the CUDA interceptor on the nvcc-built sample
# program, and last, while time is left, test_cuda with HY_TEST_FULL.
#
# Every command runs under a timeout, and the whole script within BUDGET
# seconds (default 570, under the 10 minutes of one call): a step that no
# time is left for is reported as skipped, and counts as failed.
#
# usage: bench/gpu_check.sh BUILD_DIR OUT_DIR [FRAMES [BUDGET]]
#   BUILD_DIR holds hyphys, test_cuda, test_solver_hd, test_solver_batch, test_cloth_hd,
#   test_batch_step, test_runtime_gpu, intercept_sample and
#   libhyphys_intercept.so (a CUDA build; see README);
#   OUT_DIR gets the logs, the JSON of every run and summary.txt.
# Exit 0 when every check passed (timings are not checks).
set -u
B=${1:?usage: bench/gpu_check.sh BUILD_DIR OUT_DIR [FRAMES [BUDGET]]}
O=${2:?usage: bench/gpu_check.sh BUILD_DIR OUT_DIR [FRAMES [BUDGET]]}
FRAMES=${3:-30}
BUDGET=${4:-570}
export OPENBLAS_NUM_THREADS=1
mkdir -p "$O"
S="$O/summary.txt"
: > "$S"
fail=0
say() { echo "$*" | tee -a "$S"; }
T0=$(date +%s)
# run_t LIMIT CMD...: CMD under a timeout of LIMIT seconds, or of what is
# left of the budget when that is less; 124 when there was no time for it.
run_t() {
    local limit=$1 left
    shift
    left=$((BUDGET - ($(date +%s) - T0)))
    [ "$left" -lt "$limit" ] && limit=$left
    if [ "$limit" -lt 3 ]; then
        echo "skipped: no time left for $*" >&2
        return 124
    fi
    timeout "$limit" "$@"
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader > "$O/gpu.txt" 2>&1
say "gpu: $(cat "$O/gpu.txt")"
say "cores: $(nproc)"

# 1. the tests with GPU branches: LEAF (gathered and by reference against
#    resident positions), TRAVERSE, and TRAVERSE keeping its LEAF jobs on
#    the device (worlds on cuda:0 reach the CPU's hash), bit-equal to the
#    CPU (test_cuda); the FEM's and the mass-spring objects' GPU passes
#    bit-equal to the CPU's (test_solver_hd); the cloth's spring pass and
#    products on cuda:0, a step bit-equal to the CPU's (test_cloth_hd); the
#    host twins (test_device_leaf); small FEM and mass-spring objects in
#    one launch per pass bit-equal to each object's CPU passes
#    (test_solver_batch); their steps with CG in lockstep and the batch's
#    products on cuda:0, iterations and residuals bit-equal to each
#    object's own, with the CG's vectors on cuda:0 (the resident CG,
#    solvers/cg.cu: its fixed-order sums) and on the host, the resident
#    one moving fewer bytes (test_batch_step); the data layer's copies in cuda:0's
#    memory and back, a world's small solids batched on cuda:0 at the
#    CPU-only hash with bytes counted on its channel (test_runtime_gpu); a
#    4,374-element FEM block's 14 products on cuda:0, the last two on the
#    system assembled there, bit-equal to the CPU's (test_fem_passes)
for test in test_cuda test_solver_hd test_solver_batch test_cloth_hd test_device_leaf test_batch_step test_runtime_gpu \
    test_fem_passes; do
    log="$O/$test.log"
    run_t 120 "$B/$test" > "$log" 2>&1
    rc=$?
    say "$test: exit $rc"
    grep -E "^cuda|mismatch|world on|FAIL|failed|cuda:0|twin|scene|no GPU|batch|device memory|resident" "$log" | head -12 | tee -a "$S"
    [ "$rc" = 0 ] || fail=1
done

# 2. the FEM beam (101,250 tetrahedra, 10 CG iterations a step) at 16
#    threads on the CPU and with its element and vertex passes on cuda:0:
#    ms per step and the same state hash (the issue's target: <= 3 ms)
for dev in cpu cuda:0; do
    f="$O/fem_beam_${dev/:/}.json"
    arg=""
    [ "$dev" != cpu ] && arg="--device $dev"
    # shellcheck disable=SC2086
    run_t 90 "$B/hyphys" bench fem --threads 16 --steps 20 $arg --json > "$f" 2> "${f%.json}.err"
    say "fem_beam $dev: exit $? $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]; print("%.2f ms per step (median), state %s" % (r["ms_per_step"]["median"], r["hash"]))' "$f" 2>/dev/null)"
done
hc=$(sed -n 's/.*"hash":"\([0-9a-f]*\)".*/\1/p' "$O/fem_beam_cpu.json" 2>/dev/null)
hg=$(sed -n 's/.*"hash":"\([0-9a-f]*\)".*/\1/p' "$O/fem_beam_cuda0.json" 2>/dev/null)
if [ -n "$hc" ] && [ "$hc" = "$hg" ]; then say "fem_beam: cuda:0 state equals the CPU's ($hc)"; else say "fem_beam: state DIFFERS (cpu ${hc:-none}, cuda:0 ${hg:-none})"; fail=1; fi
hash_of() { sed -n 's/.*"state_hash":"\([0-9a-f]*\)".*/\1/p' "$1"; }
# 2b. fem64's integration (64 FEM blocks, 12 frames without collisions: the
#     hash d6e6c2b8dbe5a1e4 at any thread count) on 16 CPU PUs, then with
#     cuda:0 as a 17th PU (its feeding thread binds each object placed
#     there to the GPU) under lp and round-robin (which puts every 17th
#     object there): the integrate phase's ms per step (the issue's target:
#     <= 16 with the GPU and 16 cores), the tasks the GPU PU ran in the last
#     step, the same state hash; then fem_mixed (6 frames, collisions on)
#     the same way
integ_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); i=d.get("integration",{}); t=i.get("last_step_tasks",[]); print("integrate %.2f ms per step (median, p95 %.2f), total %.2f, PUs %d (GPUs %d), last step tasks %s, bytes %s, batched %d (CG resident %d) in %d batch launches, state %s%s" % (d["ms_per_step"]["integrate"]["median"], d["ms_per_step"]["integrate"]["p95"], d["ms_per_step"]["total"]["median"], i.get("pus",0), i.get("gpus",0), t, i.get("last_step_bytes",[]), i.get("last_step_batched",0), i.get("last_step_resident",0), i.get("last_step_batch_products",0), d["state_hash"], (", fallback: " + i["fallback"]) if i.get("fallback") else ""))' "$1" 2>/dev/null; }
for scene in fem64 fem_mixed; do
    if [ "$scene" = fem64 ]; then sargs="--frames 12 --no-collisions"; else sargs="--frames 6"; fi
    f="$O/i_${scene}_cpu.json"
    # shellcheck disable=SC2086
    run_t 120 "$B/hyphys" run "$scene" $sargs --threads 16 --integrate-pus 16 --json --quiet > "$f" 2> "${f%.json}.err"
    say "$scene 16 CPU PUs: exit $? $(integ_of "$f")"
    ref=$(hash_of "$f")
    for pol in lp round-robin; do
        f="$O/i_${scene}_cuda_$pol.json"
        # shellcheck disable=SC2086
        run_t 120 "$B/hyphys" run "$scene" $sargs --threads 16 --integrate-pus 16 --integrate-sched "$pol" \
            --integrate-devices cuda:0 --json --quiet > "$f" 2> "${f%.json}.err"
        say "$scene 16 CPU PUs + cuda:0 ($pol): exit $? $(integ_of "$f")"
        h=$(hash_of "$f")
        gpu_tasks=$(python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))["integration"]; print(sum(i["last_step_tasks"][i["pus"]-i["gpus"]:]) if i["gpus"] else -1)' "$f" 2>/dev/null)
        if [ -n "$ref" ] && [ "$h" = "$ref" ]; then say "  same state as the CPU PUs' ($ref), GPU PU tasks in the last step: ${gpu_tasks:-?}"; else say "  state DIFFERS (cpu ${ref:-none}, with cuda:0 ${h:-none})"; fail=1; fi
        [ "${gpu_tasks:--1}" -ge 0 ] 2>/dev/null || { say "  cuda:0 was not used as an integration PU"; fail=1; }
    done
done

# 2c. fem_independent (32 blocks of 2,058 tetrahedra and 32 of 14,196, each
#     pinned along its top and sagging, never touching), 6 frames: the 32
#     small blocks are one batch task; where lp places it on cuda:0 their
#     CG runs in lockstep with one launch per kind per round (the twin's
#     figure here: 25-28 rounds a step for 32 objects; their coarse level
#     keeps the CG itself on the host); fem_bars (20 frames; blocks under
#     500 vertices, block Jacobi alone, so a batch on cuda:0 runs its CG
#     resident: only scalars cross per operation); cloth_ball (6 frames; the
#     cloth bound to cuda:0, its context's bytes and its first bind
#     counted). Each on 16 CPU PUs, then with cuda:0 under lp: objects
#     batched, batch launches and bytes on the channels in the last step,
#     the same state hash
for scene in fem_independent fem_bars cloth_ball; do
    if [ "$scene" = fem_bars ]; then sargs="--frames 20"; else sargs="--frames 6"; fi
    f="$O/i_${scene}_cpu.json"
    # shellcheck disable=SC2086
    run_t 120 "$B/hyphys" run "$scene" $sargs --threads 16 --integrate-pus 16 --json --quiet > "$f" 2> "${f%.json}.err"
    say "$scene 16 CPU PUs: exit $? $(integ_of "$f")"
    ref=$(hash_of "$f")
    f="$O/i_${scene}_cuda_lp.json"
    # shellcheck disable=SC2086
    run_t 120 "$B/hyphys" run "$scene" $sargs --threads 16 --integrate-pus 16 --integrate-devices cuda:0 \
        --json --quiet > "$f" 2> "${f%.json}.err"
    say "$scene 16 CPU PUs + cuda:0 (lp): exit $? $(integ_of "$f")"
    h=$(hash_of "$f")
    if [ -n "$ref" ] && [ "$h" = "$ref" ]; then say "  same state as the CPU PUs' ($ref)"; else say "  state DIFFERS (cpu ${ref:-none}, with cuda:0 ${h:-none})"; fail=1; fi
done

# 3. calibration of the cpu and every GPU (the profiles the runs below load)
for t in 2 16; do
    run_t 90 "$B/hyphys" calibrate --threads "$t" --json > "$O/calibrate_$t.json" 2> "$O/calibrate_$t.err"
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

# 4. determinism: every device set and policy reaches the CPU-only hash
for scene in drop nbody cloth_ball fracture; do
    run_t 30 "$B/hyphys" run "$scene" --frames 6 --threads 2 --json --quiet > "$O/h_${scene}_cpu.json" 2> "$O/h_${scene}_cpu.err"
    ref=$(hash_of "$O/h_${scene}_cpu.json")
    line="$scene cpu $ref"
    for dev in cuda cpu,cuda; do
        for pol in lp ws ws-exp lau10 tan09 exhaustive; do
            [ "$dev" = cuda ] && [ "$pol" != lp ] && continue
            f="$O/h_${scene}_${dev/,/-}_$pol.json"
            run_t 30 "$B/hyphys" run "$scene" --frames 6 --threads 2 --devices "$dev" --sched "$pol" --json --quiet > "$f" 2> "${f%.json}.err"
            h=$(hash_of "$f")
            if [ -n "$ref" ] && [ "$h" = "$ref" ]; then line="$line | $dev/$pol same"; else line="$line | $dev/$pol DIFFERS ($h)"; fail=1; fi
        done
    done
    say "$line"
    # a GPU failing in step 3: retired, its jobs elsewhere, the same hash
    f="$O/h_${scene}_fault.json"
    run_t 30 "$B/hyphys" run "$scene" --frames 6 --threads 2 --devices cpu,cuda --fault cuda:0@3 --json --quiet > "$f" 2> "${f%.json}.err"
    h=$(hash_of "$f")
    said=$(grep -c 'cuda:0 failed in step' "${f%.json}.err")
    if [ -n "$ref" ] && [ "$h" = "$ref" ]; then say "$scene cpu,cuda --fault cuda:0@3: same hash, said $said time(s)"; else say "$scene cpu,cuda --fault cuda:0@3: DIFFERS ($h)"; fail=1; fi
done

# 5. timings: median step and CCD phase, CPU only and with the GPU
ms_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["ms_per_step"]; s=d.get("sched",{}); print("total %.2f traverse %.2f ccd %.2f" % (m["total"]["median"], m["traverse"]["median"], s.get("ccd_ms",{}).get("median",0)), " ".join("%s:%.0f%%(up %.0f KB down %.0f KB/step)" % (r["name"], 100*r["share"], r.get("bytes_per_step",{}).get("up",0)/1e3, r.get("bytes_per_step",{}).get("down",0)/1e3) for r in s.get("resources",[])))' "$1" 2>/dev/null; }
for scene in nbody cloth_ball fracture; do
    for t in 16 2; do
        for dev in cpu cuda cpu,cuda; do
            f="$O/t_${scene}_${t}_${dev/,/-}.json"
            run_t 60 "$B/hyphys" run "$scene" --frames "$FRAMES" --threads "$t" --devices "$dev" --json --quiet > "$f" 2> "${f%.json}.err"
            say "$scene threads $t devices $dev: $(ms_of "$f")"
        done
    done
done
# 5b. the issue's target: cpu,cuda against the better of cpu and cuda alone
#     (median step and ccd phase; > 1.00 means cpu,cuda is slower)
for scene in nbody cloth_ball fracture; do
    for t in 16 2; do
        python3 - "$O" "$scene" "$t" <<'PY' | tee -a "$S"
import json, sys
o, scene, t = sys.argv[1:]
def get(dev):
    try:
        d = json.load(open("%s/t_%s_%s_%s.json" % (o, scene, t, dev)))
        return d["ms_per_step"]["total"]["median"], d["sched"]["ccd_ms"]["median"]
    except Exception:
        return None
def ratio(x, y):
    return "%.2f" % (x / y) if y > 0 else "n/a"
c, g, b = get("cpu"), get("cuda"), get("cpu-cuda")
if c and g and b:
    print("%s threads %s: cpu,cuda / best alone: step %s, ccd %s" % (scene, t, ratio(b[0], min(c[0], g[0])), ratio(b[1], min(c[1], g[1]))))
PY
    done
done
# 6. CUDA interception: the sample program (intercept/sample.cu, built with
#    -cudart shared) alone and with libhyphys_intercept.so preloaded, under
#    round-robin and, with several GPUs, everything on GPU 1: the same output,
#    and the report counts every launch the sample says it made
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
if [ -x "$B/intercept_sample" ] && [ -f "$B/libhyphys_intercept.so" ]; then
    run_t 30 "$B/intercept_sample" > "$O/intercept_plain.out" 2> "$O/intercept_plain.err"
    rc=$?
    n=$(sed -n 's/^sample: launches \([0-9]*\),.*/\1/p' "$O/intercept_plain.out")
    say "intercept_sample alone: exit $rc, $n launches"
    [ "$rc" = 0 ] && [ -n "$n" ] || fail=1
    pols=round-robin
    [ "${ngpu:-0}" -gt 1 ] && pols="$pols fixed:1"
    for pol in $pols; do
        f="$O/intercept_${pol/:/}"
        run_t 30 env HY_INTERCEPT_POLICY="$pol" HY_INTERCEPT_REPORT="$f.report" LD_PRELOAD="$B/libhyphys_intercept.so" \
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
# 7. while time is left: the CUDA test's full sizes
log="$O/test_cuda_full.log"
run_t 300 env HY_TEST_FULL=1 "$B/test_cuda" > "$log" 2>&1
rc=$?
say "test_cuda (HY_TEST_FULL=1): exit $rc$([ "$rc" = 124 ] && echo ' (out of time: not a failure of the test)')"
grep -E "^cuda|mismatch|world on|FAIL" "$log" | head -12 | tee -a "$S"
[ "$rc" = 0 ] || [ "$rc" = 124 ] || fail=1
say "elapsed: $(($(date +%s) - T0)) s of a budget of $BUDGET s"
say "checks: $([ $fail = 0 ] && echo passed || echo FAILED)"
exit $fail
