#!/usr/bin/env bash
# Tests what a new user meets on the command line when something is wrong:
# - output files: a path that cannot be opened or created (--csv, --trace,
#   --export-frames, a missing --profile) is exit 2 before anything runs;
#   a write that fails at run time (/dev/full: a full device) is exit 1,
#   named, with the summary still printed; never exit 0;
# - stdout on a full device is exit 1;
# - --devices cuda:N with no GPU N is exit 2; plain cuda with no GPU falls
#   back to the cpu with exactly one line (with GPUs: uses them, no line);
# - an unknown scene name lists the scenes there are (run and view), and
#   `view` names a missing scene file once;
# - view: a --screenshot path that cannot be written is exit 2 before any
#   step, a picture or trace lost on a full device exit 1.
set -uo pipefail
cli=${HY_CLI:?HY_CLI must name the hyphys binary}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HYPHYS_PROFILE="$work/profile.json" # never touch the user's cache
fail=0
scene=drop # small and quick
frames=3

# expect NAME RC [args...]: the exit code, and a message on stderr unless 0
expect() {
    local name=$1 want=$2; shift 2
    "$cli" "$@" >"$work/$name.out" 2>"$work/$name.err"
    local rc=$?
    if [ $rc -ne "$want" ]; then
        echo "FAIL: $name: 'hyphys $*' exited $rc, expected $want"; cat "$work/$name.err"; fail=1; return 1
    fi
    if [ "$want" -ne 0 ] && [ ! -s "$work/$name.err" ]; then echo "FAIL: $name: no message"; fail=1; return 1; fi
    return 0
}
# summary NAME: the run's summary reached stdout (nothing computed is lost)
summary() { grep -q "^state hash [0-9a-f]\{16\}$" "$work/$1.out" || { echo "FAIL: $1: no summary"; cat "$work/$1.out"; fail=1; }; }
# says NAME TEXT: stderr contains TEXT
says() { grep -qF -- "$2" "$work/$1.err" || { echo "FAIL: $1: stderr lacks '$2':"; cat "$work/$1.err"; fail=1; }; }

: >"$work/plain" # a file where a folder is expected
# bad paths given by the user: exit 2, nothing run
expect csv_dir 2 run $scene --frames $frames --csv "$work/none/x.csv" && says csv_dir "$work/none/x.csv"
expect trace_dir 2 run $scene --frames $frames --trace "$work/none/t.json" && says trace_dir "$work/none/t.json"
expect profile_missing 2 run $scene --frames $frames --profile "$work/none/p.json" && says profile_missing "$work/none/p.json"
expect export_file 2 run $scene --frames $frames --export-frames "$work/plain" && says export_file "Not a directory"
expect export_under_file 2 run $scene --frames $frames --export-frames "$work/plain/frames" && says export_under_file "$work/plain"
for n in csv_dir trace_dir profile_missing export_file export_under_file; do
    [ -s "$work/$n.out" ] && { echo "FAIL: $n: ran before refusing"; fail=1; }
done
# good paths work
expect good 0 run $scene --frames $frames --quiet --csv "$work/ok.csv" --trace "$work/ok.json" --export-frames "$work/frames" && summary good
[ "$(wc -l <"$work/ok.csv")" -eq $((frames + 1)) ] || { echo "FAIL: good: csv rows"; fail=1; }
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/ok.json" || { echo "FAIL: good: trace is not JSON"; fail=1; }

# writes that fail at run time: exit 1, the file named, the summary printed
if [ -w /dev/full ]; then
    expect csv_full 1 run $scene --frames $frames --quiet --csv /dev/full && says csv_full "'/dev/full'" && summary csv_full
    expect trace_full 1 run $scene --frames $frames --quiet --trace /dev/full && says trace_full "trace '/dev/full': write failed" && summary trace_full
    "$cli" run $scene --frames $frames --quiet >/dev/full 2>"$work/stdout_full.err"
    rc=$?
    [ $rc -eq 1 ] && grep -q "writing the output failed" "$work/stdout_full.err" || { echo "FAIL: stdout on /dev/full: exit $rc"; fail=1; }
    "$cli" run $scene --frames $frames --json >/dev/full 2>"$work/json_full.err"
    rc=$?
    [ $rc -eq 1 ] || { echo "FAIL: --json on /dev/full: exit $rc"; fail=1; }
else
    echo "note: no writable /dev/full; full-device checks skipped"
fi

# devices: a numbered GPU that is not there is an error; plain cuda falls back
expect gpu_missing 2 run $scene --frames 1 --quiet --devices cuda:999 && says gpu_missing "'cuda:999': no such GPU"
expect cuda 0 run $scene --frames 1 --json --devices cuda
gpus=$(python3 -c 'import json,sys; print(sum(r["name"].startswith("cuda:") for r in json.load(open(sys.argv[1]))["sched"]["resources"]))' "$work/cuda.out")
lines=$(grep -c "cuda" "$work/cuda.err")
if [ "$gpus" = 0 ]; then
    [ "$lines" -eq 1 ] && says cuda "collision jobs on cpu" || { echo "FAIL: cuda with no GPU: expected one line, got $lines"; cat "$work/cuda.err"; fail=1; }
    # no GPU here, so cuda:7 is not there either
    expect gpu7 2 run $scene --frames 1 --quiet --devices cuda:7 && says gpu7 "'cuda:7'"
else
    [ "$lines" -eq 0 ] || { echo "FAIL: cuda with $gpus GPUs: unexpected lines"; cat "$work/cuda.err"; fail=1; }
fi

# scenes: an unknown name lists the scenes; a missing file is named once
expect run_nosuch 2 run nosuch --frames 1 && says run_nosuch "no scene 'nosuch'" && says run_nosuch "cloth_ball" && says run_nosuch "drop"
if "$cli" --help | grep -q '^  view '; then
    expect view_nosuch 2 view nosuch && says view_nosuch "cloth_ball"
    [ "$(grep -o nosuch "$work/view_nosuch.err" | wc -l)" -eq 1 ] || { echo "FAIL: view nosuch names it more than once"; cat "$work/view_nosuch.err"; fail=1; }
    # refused before any window or step
    expect view_gpu 2 view $scene --devices cuda:999 && says view_gpu "'cuda:999': no such GPU"
    expect view_shot_dir 2 view $scene --frames 1 --screenshot "$work/none/a.png" && says view_shot_dir "$work/none/a.png"
    if command -v xvfb-run >/dev/null; then
        # one X server for the three runs; each exit code kept in a file (the
        # exit code of xvfb-run itself may be its own cleanup's)
        cat >"$work/views.sh" <<VIEWS
export LIBGL_ALWAYS_SOFTWARE=1
"$cli" view "$work/gone.json" >/dev/null 2>"$work/view_gone.err"; echo \$? >"$work/view_gone.rc"
if [ -w /dev/full ]; then
    "$cli" view $scene --frames 1 --screenshot /dev/full >/dev/null 2>"$work/view_full.err"; echo \$? >"$work/view_full.rc"
    "$cli" view $scene --frames 1 --screenshot "$work/v.png" --trace /dev/full >/dev/null 2>"$work/view_trace.err"; echo \$? >"$work/view_trace.rc"
fi
VIEWS
        xvfb-run -a -s "-screen 0 1280x720x24" bash "$work/views.sh" >/dev/null 2>&1
        rc=$(cat "$work/view_gone.rc" 2>/dev/null)
        n=$(grep -o "gone.json" "$work/view_gone.err" | wc -l)
        [ "$rc" = 2 ] && [ "$n" -eq 1 ] || { echo "FAIL: view of a missing file: exit $rc, named $n times"; cat "$work/view_gone.err"; fail=1; }
        if [ -w /dev/full ]; then
            # the picture or the trace lost on a full device: exit 1, said
            rc=$(cat "$work/view_full.rc" 2>/dev/null)
            [ "$rc" = 1 ] && grep -q "writing /dev/full failed" "$work/view_full.err" || { echo "FAIL: view --screenshot /dev/full: exit $rc"; cat "$work/view_full.err"; fail=1; }
            rc=$(cat "$work/view_trace.rc" 2>/dev/null)
            [ "$rc" = 1 ] && grep -q "trace '/dev/full': write failed" "$work/view_trace.err" || { echo "FAIL: view --trace /dev/full: exit $rc"; cat "$work/view_trace.err"; fail=1; }
        fi
    fi
fi
[ $fail -eq 0 ] && echo "PASS"
exit $fail
