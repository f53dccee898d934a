#!/usr/bin/env bash
# Tests `hyphys run --fault DEVICE@STEP` on modeled devices: the run ends
# with the state hash of the run without the fault, says once on stderr
# which resource failed in which step, and exits 0; a malformed value, a
# device not in --devices, and a fault on the only resource are usage
# errors (exit 2) with a message naming the option or the device, and so
# is --fault given to `hyphys view`.
set -uo pipefail
cli=${HY_CLI:?HY_CLI must name the hyphys binary}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HYPHYS_PROFILE="$work/profile.json" # never touch the user's cache
fail=0
devs=model:cpu-m1,model:gtx285
run() { "$cli" run cloth_ball --frames 4 --threads 2 --devices "$devs" "$@"; }

run >"$work/ref.out" 2>"$work/ref.err" || { echo "FAIL: run without a fault"; cat "$work/ref.err"; exit 1; }
ref=$(grep '^state hash' "$work/ref.out")
[ -n "$ref" ] || { echo "FAIL: no state hash"; exit 1; }
if grep -q 'failed in step' "$work/ref.err"; then echo "FAIL: a failure said without a fault"; fail=1; fi

for dev in model:gtx285 model:cpu-m1; do
    run --fault "$dev@2" >"$work/f.out" 2>"$work/f.err"
    rc=$?
    [ $rc -eq 0 ] || { echo "FAIL: --fault $dev@2 exited $rc"; cat "$work/f.err"; fail=1; }
    got=$(grep '^state hash' "$work/f.out")
    [ "$got" = "$ref" ] || { echo "FAIL: --fault $dev@2: '$got', without: '$ref'"; fail=1; }
    n=$(grep -c "^hyphys run: $dev failed in step" "$work/f.err")
    [ "$n" -eq 1 ] || { echo "FAIL: --fault $dev@2: said $n times"; cat "$work/f.err"; fail=1; }
done

# expect_usage ARGS... SAYS: exit 2 and the message
expect_usage() {
    local says=${*: -1}
    "$cli" run cloth_ball --frames 1 "${@:1:$#-1}" >"$work/u.out" 2>"$work/u.err"
    local rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL: '${*:1:$#-1}' exited $rc, expected 2"; cat "$work/u.err"; fail=1; return; fi
    grep -q -- "$says" "$work/u.err" || { echo "FAIL: '${*:1:$#-1}': no '$says' in:"; cat "$work/u.err"; fail=1; }
}
expect_usage --devices "$devs" --fault model:gtx285 "--fault: expected DEVICE@STEP"
expect_usage --devices "$devs" --fault model:gtx285@0 "--fault: expected DEVICE@STEP"
expect_usage --devices "$devs" --fault @2 "--fault: expected DEVICE@STEP"
expect_usage --devices "$devs" --fault model:gtx480@2 "no resource 'model:gtx480'"
expect_usage --devices model:gtx285 --fault model:gtx285@2 "only resource"
expect_usage --devices "$devs" --fault "--fault needs a value"

# view takes the scheduling options but not --fault (nothing there says a failure)
if "$cli" --help | grep -q '^  view '; then
    "$cli" view cloth_ball --devices "$devs" --fault model:gtx285@2 >"$work/v.out" 2>"$work/v.err"
    rc=$?
    [ $rc -eq 2 ] && grep -q -- "--fault is an option of hyphys run" "$work/v.err" ||
        { echo "FAIL: view --fault exited $rc"; cat "$work/v.err"; fail=1; }
fi

exit $fail
