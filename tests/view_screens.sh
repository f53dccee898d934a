#!/usr/bin/env bash
# Tests `hyphys view --frames N --screenshot` on the three benchmark scenes
# (cloth_ball, nbody, fracture) under Xvfb with Mesa's software OpenGL: each
# run exits 0 and writes a PNG that shows the scene (not one colour; object
# colours on >= 2% of the pixels: scripts/check_screenshot.py states the
# rules). The contacts run schedules its collision jobs on modeled devices.
# Also: no display -> exit 1 with a message, bad options -> exit 2.
# Skips (77) without xvfb-run, python3, or a CLI built with the viewer.
set -uo pipefail
cli=${HY_CLI:?HY_CLI must name the hyphys binary}
src=${HY_SOURCE_DIR:?HY_SOURCE_DIR must name the source tree}
frames=${HY_VIEW_FRAMES:-2} # few steps: the scenes are big, the point is the picture

command -v xvfb-run >/dev/null || { echo "SKIP: xvfb-run not installed (apt-get install xvfb)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
"$cli" --help | grep -q '^  view ' || { echo "SKIP: hyphys built without the viewer (GLFW/libepoxy/stb missing)"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
export LIBGL_ALWAYS_SOFTWARE=1 # Mesa llvmpipe: the same pixels on any machine
# In an ASan build: Mesa's driver, loaded with dlopen and unloaded at exit,
# leaks a few hundred bytes that LeakSanitizer cannot name or suppress.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# no display: a clear message and exit 1, never a crash
out=$(env -u DISPLAY -u WAYLAND_DISPLAY "$cli" view "$src/scenes/nbody.json" --frames 1 --screenshot "$work/x.png" 2>&1)
rc=$?
if [ $rc -ne 1 ] || ! echo "$out" | grep -q "needs a display"; then
    echo "FAIL: without a display expected exit 1 and a message, got $rc: $out"
    fail=1
fi
# unknown policy / device / option: usage errors (exit 2), before any window
for bad in "--sched fifo" "--devices gpu0" "--clock fast" "--bogus"; do
    # shellcheck disable=SC2086
    "$cli" view "$src/scenes/nbody.json" $bad >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL: 'view $bad' expected exit 2, got $rc"; fail=1; fi
done

# a small cloth that lands on a ball within a few steps, for key c / --contacts
cat >"$work/drape.json" <<'EOF'
{"solver": {"time_step": 0.01},
 "objects": [
  {"type": "cloth", "name": "sheet", "material": {"thickness": 0.002},
   "mesh": {"generator": "grid", "vertices": [24, 24], "size": [1.2, 1.2]},
   "transform": {"position": [0, 0.53, 0]}},
  {"type": "obstacle", "name": "ball", "material": {"thickness": 0.002},
   "mesh": {"generator": "icosphere", "radius": 0.5, "subdivisions": 2}}]}
EOF

# all three scenes in one X server: starting Xvfb once saves seconds
cat >"$work/run.sh" <<EOF
set -u
st=0
for c in on off; do
    # with contacts: collision jobs on two modeled resources under the ws policy
    flag=; [ \$c = on ] && flag="--contacts --sched ws --devices model:cpu-m1,model:gtx285 --clock virtual"
    "$cli" view "$work/drape.json" --frames 12 --no-hud \$flag --size 640x360 --screenshot "$work/contacts_\$c.png" \
        >/dev/null 2>"$work/contacts_\$c.err" || { echo "FAIL: view --contacts (\$c)"; cat "$work/contacts_\$c.err"; st=1; }
done
for s in cloth_ball nbody fracture; do
    start=\$(date +%s.%N)
    if ! "$cli" view "$src/scenes/\$s.json" --frames $frames --screenshot "$work/\$s.png" >"$work/\$s.out" 2>"$work/\$s.err"; then
        echo "FAIL: view \$s exited non-zero:"; cat "$work/\$s.err"; st=1
    fi
    echo "\$s: \$(awk -v a=\$start -v b=\$(date +%s.%N) 'BEGIN{printf "%.1f s", b-a}')"
done
exit \$st
EOF
xvfb-run -a -s "-screen 0 1280x720x24" bash "$work/run.sh" || fail=1

for s in cloth_ball nbody fracture; do
    [ -f "$work/$s.png" ] || { echo "FAIL: $s: no screenshot"; fail=1; continue; }
    cat "$work/$s.out"
    colours=$(sed -n 's/.*colours \(#[0-9a-f,#]*\).*/\1/p' "$work/$s.out")
    if [ -z "$colours" ]; then echo "FAIL: $s: the viewer did not list the object colours"; fail=1; continue; fi
    python3 "$src/scripts/check_screenshot.py" "$work/$s.png" "$colours" --min-share 0.02 || { echo "FAIL: $s"; fail=1; }
done
# contact points are drawn in yellow (#fff028) only when asked for
python3 "$src/scripts/check_screenshot.py" "$work/contacts_on.png" "#fff028" --min-share 0.001 ||
    { echo "FAIL: --contacts shows no contact points"; fail=1; }
if python3 "$src/scripts/check_screenshot.py" "$work/contacts_off.png" "#fff028" --min-share 0.001 >/dev/null 2>&1; then
    echo "FAIL: contact points drawn without --contacts"; fail=1
fi
[ $fail -eq 0 ] && echo "PASS"
exit $fail
