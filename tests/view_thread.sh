#!/usr/bin/env bash
# Tests the viewer's simulation thread through `hyphys view`, under Xvfb with
# Mesa's software OpenGL:
# - batch: `view drop --frames 30 --screenshot` shows the state after exactly
#   30 steps: its state hash is that of `hyphys run drop --frames 30`, and
#   the picture (no HUD) is the same byte for byte with 1 or 2 threads and
#   with --realtime, and with --integrate-devices cuda:0 (a GPU this machine
#   lacks said once on stderr, as run says it); a list that is not cuda:D
#   items is exit 2;
# - interactive: the window keeps drawing while steps of ~0.1-0.5 s run
#   (several frames per step), and Ctrl-C closes it cleanly (exit 0, the
#   thread joined, the closing line printed);
# - --realtime on a scene no machine can keep up with (1 us time step) says
#   "behind real time: 0.0013x" (or so) on stderr once, not every frame.
# Skips (77) without xvfb-run or a CLI built with the viewer.
set -uo pipefail
cli=${HY_CLI:?HY_CLI must name the hyphys binary}
src=${HY_SOURCE_DIR:?HY_SOURCE_DIR must name the source tree}

command -v xvfb-run >/dev/null || { echo "SKIP: xvfb-run not installed (apt-get install xvfb)"; exit 77; }
"$cli" --help | grep -q '^  view ' || { echo "SKIP: hyphys built without the viewer (GLFW/libepoxy/stb missing)"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
export LIBGL_ALWAYS_SOFTWARE=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" # Mesa's unnamed leaks (view_screens.sh)

# the state `hyphys run` reaches
want=$("$cli" run "$src/scenes/drop.json" --frames 30 --quiet 2>&1 | sed -n 's/^state hash \([0-9a-f]*\).*/\1/p')
[ -n "$want" ] || { echo "FAIL: hyphys run printed no state hash"; fail=1; }

# a cloth whose steps take a good fraction of a second, drawn small
cat >"$work/slow.json" <<'EOF'
{"solver": {"time_step": 0.01},
 "objects": [
  {"type": "cloth", "name": "sheet", "material": {"thickness": 0.002},
   "mesh": {"generator": "grid", "vertices": [120, 120], "size": [1.2, 1.2]},
   "transform": {"position": [0, 0.53, 0]}},
  {"type": "obstacle", "name": "ball", "material": {"thickness": 0.002},
   "mesh": {"generator": "icosphere", "radius": 0.5, "subdivisions": 2}}]}
EOF
# the drop scene with a 1 us time step: always behind real time
sed 's/"time_step": 0.005/"time_step": 0.000001/' "$src/scenes/drop.json" >"$work/tiny_step.json"
grep -q '0.000001' "$work/tiny_step.json" || { echo "FAIL: could not make the 1 us scene"; fail=1; }

# all runs in one X server
cat >"$work/run.sh" <<EOF
set -u
st=0
i=0
for flags in "--threads 1" "--threads 2" "--threads 2 --realtime" "--threads 2 --integrate-devices cuda:0"; do
    i=\$((i + 1))
    "$cli" view "$src/scenes/drop.json" --frames 30 --no-hud --size 640x360 \$flags --screenshot "$work/drop\$i.png" \
        >"$work/drop\$i.out" 2>"$work/drop\$i.err" || { echo "FAIL: view drop \$flags"; cat "$work/drop\$i.err"; st=1; }
done
"$cli" view "$src/scenes/drop.json" --frames 1 --integrate-devices gpu:0 --screenshot "$work/bad.png" \
    >/dev/null 2>"$work/bad_devices.err"
echo \$? >"$work/bad_devices.rc"
# interactive, closed by Ctrl-C after a few seconds
run_for() { # seconds name args...
    local secs=\$1 name=\$2
    shift 2
    "$cli" view "\$@" >"$work/\$name.out" 2>"$work/\$name.err" &
    local pid=\$!
    sleep "\$secs"
    kill -INT \$pid
    wait \$pid
    echo \$? >"$work/\$name.rc"
}
run_for 5 slow "$work/slow.json" --threads 1 --size 320x240 --no-hud
run_for 3 behind "$work/tiny_step.json" --threads 1 --realtime --size 320x240
exit \$st
EOF
xvfb-run -a -s "-screen 0 1280x720x24" bash "$work/run.sh" || fail=1

# batch: step 30 exactly, whatever the threads or --realtime
for i in 1 2 3 4; do
    got=$(sed -n 's/.*after 30 steps, state hash \([0-9a-f]*\),.*/\1/p' "$work/drop$i.out")
    [ "$got" = "$want" ] || { echo "FAIL: screenshot $i: state hash '$got', hyphys run says '$want'"; cat "$work/drop$i.out"; fail=1; }
done
if [ -f "$work/drop1.png" ]; then
    for i in 2 3 4; do
        cmp -s "$work/drop1.png" "$work/drop$i.png" || { echo "FAIL: screenshot $i differs from screenshot 1"; fail=1; }
    done
fi

# --integrate-devices: the fallback line as often as `hyphys run` says it (once where this machine
# has no cuda:0, never where it has), a bad list refused
n=$(grep -c 'integration: cuda:0 not used' "$work/drop4.err")
m=$("$cli" run "$src/scenes/drop.json" --frames 1 --quiet --integrate-devices cuda:0 2>&1 | grep -c 'integration: cuda:0 not used')
[ "$n" = "$m" ] || { echo "FAIL: --integrate-devices cuda:0: the fallback said $n times, run says it $m"; cat "$work/drop4.err"; fail=1; }
[ "$(cat "$work/bad_devices.rc" 2>/dev/null)" = 2 ] && grep -q "'gpu:0'" "$work/bad_devices.err" ||
    { echo "FAIL: --integrate-devices gpu:0: expected exit 2 naming it"; cat "$work/bad_devices.err"; fail=1; }

# interactive: closed cleanly, and the window drew several frames per step
for name in slow behind; do
    rc=$(cat "$work/$name.rc" 2>/dev/null)
    [ "$rc" = 0 ] || { echo "FAIL: $name: Ctrl-C gave exit '$rc'"; cat "$work/$name.err"; fail=1; }
done
line=$(grep 'frames drawn' "$work/slow.out")
frames=$(sed -n 's/.* \([0-9]*\) frames drawn.*/\1/p' <<<"$line")
steps=$(sed -n 's/.*at step \([0-9]*\),.*/\1/p' <<<"$line")
echo "slow: $line"
if [ -z "$frames" ] || [ -z "$steps" ] || [ "$steps" -lt 1 ] || [ "$frames" -lt $((2 * steps)) ]; then
    echo "FAIL: slow steps: expected at least 2 frames drawn per step, got '$line'"
    fail=1
fi

# behind real time: said once
n=$(grep -c 'behind real time: [0-9.e-]*x' "$work/behind.err")
echo "behind: $(grep 'behind real time' "$work/behind.err")"
[ "$n" = 1 ] || { echo "FAIL: --realtime on a 1 us step: expected one 'behind real time' line, got $n:"; cat "$work/behind.err"; fail=1; }

[ $fail -eq 0 ] && echo "PASS"
exit $fail
