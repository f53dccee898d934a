#!/usr/bin/env bash
# The CUDA interceptor (libhyphys_intercept.so) preloaded into the sample
# program, which runs on the CUDA runtime double (tests/cudart_double/: three
# simulated devices, every call logged, a pointer argument on the wrong device
# reported as a violation). Checks, for each launch entry point: the program
# prints what it prints without the interceptor (results and its own check
# that its current device was given back after every launch), launches land
# where the policy says, pointer arguments lie on the launch's device, calls
# the interceptor does not wrap reach the runtime, and the counts of launches.
# The nvcc-built sample (intercept/sample.cu, CUDA builds) must behave as its
# C twin does; two threads launching at once must both be served.
set -euo pipefail
B=$HY_BUILD_DIR
D=$B/cudart_double
twin=$D/intercept_sample_twin
lib=$B/libhyphys_intercept.so
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HY_CUDART_DOUBLE_DEVICES=3 HY_CUDART_DOUBLE_KERNELS=$D/libcudart_double_kernels.so
# Sanitizer builds: the program is built with ASan (or TSan), whose runtime
# must be the first library loaded, so it goes in front of the interceptor.
preload=$lib
case "${HY_EXTRA_CFLAGS:-}" in
*address*) preload="$(${HY_C_COMPILER:-cc} -print-file-name=libasan.so):$lib" ;;
*thread*) preload="$(${HY_C_COMPILER:-cc} -print-file-name=libtsan.so):$lib" ;;
esac
fail() { echo "FAIL: $*"; exit 1; }
# the devices of the log's launches, in order, as one word: "012012012"
devices() { sed -n 's/^launch [^ ]* dev=\([0-9]*\) .*/\1/p' "$1" | tr -d '\n'; }
# run NAME [env...] -- program args: stdout, stderr, call log and report under
# $work/NAME.*; the program must exit 0 (or $RC when set)
run() {
    local name=$1; shift
    local envs=() rc=0
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" HY_CUDART_DOUBLE_LOG="$work/$name.log" HY_INTERCEPT_REPORT="$work/$name.report" \
        "$@" > "$work/$name.out" 2> "$work/$name.err" || rc=$?
    [ "$rc" = "${RC:-0}" ] || { cat "$work/$name.out" "$work/$name.err"; fail "$name exited $rc"; }
}
expect_report() {
    grep -q "^hyphys-intercept $2\$" "$work/$1.report" || { cat "$work/$1.report"; fail "$1: report is not '$2'"; }
}
no_violation() { ! grep -q violation "$work/$1.log" || { grep violation "$work/$1.log"; fail "$1: violations"; }; }

# 1. without the interceptor: every launch on the caller's device (eight on
#    0, the last on 2), the sums right, nothing reported
run plain -- "$twin"
cat "$work/plain.out"
grep -q "launches 9, current device kept after 9" "$work/plain.out" || fail "plain: launches"
grep -q "sum y 1498750.00 (expect 1498750.00), sum z 506500.00" "$work/plain.out" || fail "plain: sums"
[ "$(devices "$work/plain.log")" = 000000002 ] || fail "plain: devices $(devices "$work/plain.log")"
no_violation plain
test ! -e "$work/plain.report" || fail "plain: a report without the interceptor"

# 2. the double catches a pointer on the wrong device (so that the checks
#    below can fail): device 0's blocks launched on device 1
run bad -- "$twin" bad
grep -q "violation __cudaLaunchKernel sample_axpy on dev=1: argument 1 lies on dev=0" "$work/bad.log" || fail "bad: no violation"
grep -q "bad launch error 1, sum y 1000.00" "$work/bad.out" || fail "bad: $(cat "$work/bad.out")"
# ... which the interceptor mends: the kernel gets device 1's copies, the
# program reads the result back through its own pointer
run bad_icpt HY_INTERCEPT_POLICY=caller LD_PRELOAD="$preload" -- "$twin" bad
no_violation bad_icpt
grep -q "bad launch error 0, sum y 1000000.00" "$work/bad_icpt.out" || fail "bad_icpt: $(cat "$work/bad_icpt.out")"
expect_report bad_icpt "launches=1 configured=1 retargeted=0 kept=0 translated=2 copies=3 bytes=12000"

# 3. round-robin over the three devices through every launch entry point:
#    launch k on device k mod 3, the caller's stream drained for the two
#    launches that moved, 9 pointer arguments translated, the output unchanged
for entry in cuda13 cuda13_ptsz api api_ptsz; do
    run "rr_$entry" LD_PRELOAD="$preload" -- "$twin" "$entry"
    cmp -s "$work/plain.out" "$work/rr_$entry.out" || { diff "$work/plain.out" "$work/rr_$entry.out"; fail "$entry: output differs"; }
    [ "$(devices "$work/rr_$entry.log")" = 012012012 ] || fail "$entry: devices $(devices "$work/rr_$entry.log")"
    want=$entry; case $entry in cuda13) want=__cudaLaunchKernel ;; cuda13_ptsz) want=__cudaLaunchKernel_ptsz ;; api) want=cudaLaunchKernel ;; api_ptsz) want=cudaLaunchKernel_ptsz ;; esac
    [ "$(grep -c "^launch .* entry=$want " "$work/rr_$entry.log")" = 9 ] || fail "$entry: not 9 launches through $want"
    no_violation "rr_$entry"
    expect_report "rr_$entry" "launches=9 configured=9 retargeted=5 kept=0 translated=9 copies=13 bytes=52000"
    for d in 0 1 2; do expect_report "rr_$entry" "device=$d launches=3"; done
    # not wrapped by the interceptor, answered by the runtime
    grep -q "^cudaRuntimeGetVersion$" "$work/rr_$entry.log" || fail "$entry: cudaRuntimeGetVersion did not reach the runtime"
    # a moved launch on the caller's own stream ran on the target's default one, after a sync
    [ "$(grep -c "^launch sample_scale dev=1 .* stream=default" "$work/rr_$entry.log")" = 1 ] || fail "$entry: stream"
    grep -q "^cudaStreamSynchronize$" "$work/rr_$entry.log" || fail "$entry: caller's stream not drained"
done
echo "round-robin: 4 entry points, launches on 012012012, 9 pointers translated each"

# 4. other policies: everything on device 1; the caller's device (as without
#    the interceptor); a policy given through the control API; a bad name
run fixed HY_INTERCEPT_POLICY=fixed:1 LD_PRELOAD="$preload" -- "$twin"
cmp -s "$work/plain.out" "$work/fixed.out" || fail "fixed: output differs"
[ "$(devices "$work/fixed.log")" = 111111111 ] || fail "fixed: devices $(devices "$work/fixed.log")"
no_violation fixed
expect_report fixed "device=1 launches=9"
run caller HY_INTERCEPT_POLICY=caller LD_PRELOAD="$preload" -- "$twin"
cmp -s "$work/plain.out" "$work/caller.out" || fail "caller: output differs"
[ "$(devices "$work/caller.log")" = 000000002 ] || fail "caller: devices"
expect_report caller "launches=9 configured=9 retargeted=0 kept=0 translated=0 copies=0 bytes=0"
run policy LD_PRELOAD="$preload" -- "$twin" policy
cmp -s "$work/plain.out" "$work/policy.out" || fail "policy: output differs"
[ "$(devices "$work/policy.log")" = 210210210 ] || fail "policy: devices $(devices "$work/policy.log")"
grep -q "policy: 9 calls, 9 named" "$work/policy.err" || fail "policy: $(cat "$work/policy.err")"
no_violation policy
run badname HY_INTERCEPT_POLICY=sideways LD_PRELOAD="$preload" -- "$twin"
grep -q "HY_INTERCEPT_POLICY=sideways is not one of round-robin, caller, fixed:N" "$work/badname.err" || fail "badname: no message"
[ "$(devices "$work/badname.log")" = 000000002 ] || fail "badname: devices"

# 5. kernels whose parameters the runtime cannot list (the double without
#    their emulation, which runs nothing: the program's sums are wrong and
#    it exits 1) stay on the caller's device: 5 of 9 would have moved
RC=1 run unknown HY_CUDART_DOUBLE_KERNELS= LD_PRELOAD="$preload" -- "$twin"
[ "$(devices "$work/unknown.log")" = 000000002 ] || fail "unknown: devices $(devices "$work/unknown.log")"
expect_report unknown "launches=9 configured=9 retargeted=0 kept=5 translated=0 copies=0 bytes=0"
# the probe's errors were cleared: the program sees none
grep -q "last error 0" "$work/unknown.out" || fail "unknown: the probe's error leaked to the program"

# 6. the sample as nvcc built it, on the double: as its C twin, with and
#    without the interceptor
if [ -x "$B/intercept_sample" ]; then
    run cu_plain LD_LIBRARY_PATH="$D" -- "$B/intercept_sample"
    cmp -s "$work/plain.out" "$work/cu_plain.out" || { diff "$work/plain.out" "$work/cu_plain.out"; fail "nvcc sample: output differs from the twin"; }
    [ "$(devices "$work/cu_plain.log")" = 000000002 ] || fail "nvcc sample: devices"
    run cu_rr LD_LIBRARY_PATH="$D" LD_PRELOAD="$preload" -- "$B/intercept_sample"
    cmp -s "$work/plain.out" "$work/cu_rr.out" || fail "nvcc sample, intercepted: output differs"
    [ "$(devices "$work/cu_rr.log")" = 012012012 ] || fail "nvcc sample, intercepted: devices $(devices "$work/cu_rr.log")"
    no_violation cu_rr
    cmp -s "$work/rr_cuda13.report" "$work/cu_rr.report" || fail "nvcc sample: report differs from the twin's"
    echo "nvcc sample: same output and launches as the twin"
else
    echo "nvcc sample: not built (no CUDA compiler, or a sanitizer build)"
fi
# 7. two threads at once, each the whole sample on its own blocks, through
#    one interceptor (the TSan build runs this too): both right, 18 launches,
#    6 on each device. The round robin is shared by the threads, so which
#    device a thread's launch gets, and so how many of its pointers need
#    another device's copy, depends on how the threads interleave: the
#    translated count is not checked, the pointers' devices are (no
#    violation)
run threads LD_PRELOAD="$preload" -- "$twin" threads
[ "$(grep -c "current device kept after 9" "$work/threads.out")" = 2 ] || fail "threads: $(cat "$work/threads.out")"
no_violation threads
grep -q "^hyphys-intercept launches=18 configured=18 .* kept=0 translated=" "$work/threads.report" || fail "threads: $(cat "$work/threads.report")"
for d in 0 1 2; do expect_report threads "device=$d launches=6"; done
echo "intercept: all checks passed"
