#!/usr/bin/env bash
# Tests `hyphys bench ccd` on a small scene: the first run records frames,
# the second replays the same recording (same counts), the JSON has every
# field with sane values, the first contact is at the frame free fall
# predicts and agrees with the per-frame CSV, the default contact distance
# is the scene's thickness, and bad usage exits 2.
set -u
CLI=${HY_CLI:?HY_CLI not set}
SRC=${HY_SOURCE_DIR:?HY_SOURCE_DIR not set}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # description, condition result
    if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}
field() { # json, key -> value
    printf '%s' "$1" | sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p"
}

out1=$("$CLI" bench ccd --scene "$SRC/scenes/drop.json" --frames 100 --threads 2 --record-dir "$tmp/rec" --thickness 0.01 --json --csv "$tmp/ccd.csv" 2>"$tmp/err1")
check "first run exits 0" $?
grep -q "recording 100 frames" "$tmp/err1"; check "first run records" $?
[ -f "$tmp/rec/topology.bin" ] && [ -f "$tmp/rec/frame_000100.bin" ]; check "recording written" $?
out2=$("$CLI" bench ccd --scene "$SRC/scenes/drop.json" --frames 100 --threads 1 --record-dir "$tmp/rec" --thickness 0.01 --json 2>"$tmp/err2")
check "second run exits 0" $?
! grep -q "recording" "$tmp/err2"; check "second run replays" $?
for k in fps candidates_per_frame exact_tests_per_frame contacts_per_frame; do
    v=$(field "$out1" "$k")
    [ -n "$v" ]; check "json has $k ($v)" $?
done
[ "$(field "$out1" scene)" = '"drop"' ]; check "scene name" $?
[ "$(field "$out1" frames)" = 100 ]; check "frames" $?
awk -v f="$(field "$out1" fps)" 'BEGIN { exit !(f > 0) }'; check "fps > 0" $?
# the ball reaches the slab within 100 frames: with a 1 cm contact distance
# the replay finds contacts (the response kept the recorded frames apart)
awk -v c="$(field "$out1" contacts_per_frame)" 'BEGIN { exit !(c > 0) }'; check "contacts found" $?
# the ball's lowest point falls from 0.9 m with time step 0.005 s; after n
# semi-implicit Euler steps it has fallen g dt^2 n (n + 1) / 2: 0.8756 m
# after 84 (2.4 cm above the slab), 0.8964 m after 85 (3.6 mm above), so
# frame 85 (the motion from recorded frame 84 to 85) is the first to come
# within 1 cm
[ "$(field "$out1" first_contact_frame)" = 85 ]; check "first contact at frame 85 ($(field "$out1" first_contact_frame))" $?
printf '%s' "$out1" | grep -q '"frame_ms":{"median":[0-9.]*,"p95":[0-9.]*}'; check "json has frame_ms" $?
printf '%s' "$out1" | sed -n 's/.*"frame_ms":{"median":\([0-9.]*\),"p95":\([0-9.]*\)}.*/\1 \2/p' | awk '{ exit !($1 > 0 && $1 <= $2) }'
check "frame_ms: 0 < median <= p95" $?
[ "$(field "$out1" thickness)" = 0.01 ]; check "thickness as given" $?
[ "$(wc -l <"$tmp/ccd.csv")" -eq 101 ] && head -1 "$tmp/ccd.csv" | grep -q "^frame,ms,ms_bvh,ms_traverse,ms_exact,candidates,triangle_pairs,exact_tests,contacts,rebuilt$"
check "CSV: header and 100 rows" $?
[ "$(awk -F, 'NR > 1 && $9 > 0 { print $1; exit }' "$tmp/ccd.csv")" = 85 ]; check "CSV's first contact row is frame 85" $?
awk -F, -v c="$(field "$out1" contacts_per_frame)" 'NR > 1 { n += $9 } END { d = n / 100 - c; exit !(d < 0.051 && d > -0.051) }' "$tmp/ccd.csv"
check "CSV contacts add up to the summary's" $?

# same recording, 1 or 2 threads: the same counts
for k in candidates_per_frame exact_tests_per_frame contacts_per_frame; do
    [ "$(field "$out1" "$k")" = "$(field "$out2" "$k")" ]; check "same $k with 1 and 2 threads" $?
done

# a recording that does not read, in a folder the user named: exit 2,
# naming the file, and the folder is left as it was
cp -r "$tmp/rec" "$tmp/bad"
printf 'garbage!' | dd of="$tmp/bad/frame_000002.bin" bs=1 conv=notrunc 2>/dev/null
sum=$(cat "$tmp/bad"/* | cksum)
"$CLI" bench ccd --scene "$SRC/scenes/drop.json" --frames 100 --record-dir "$tmp/bad" >/dev/null 2>"$tmp/err3"; rc=$?
[ $rc -eq 2 ] && grep -q "frame_000002.bin" "$tmp/err3" && [ "$(cat "$tmp/bad"/* | cksum)" = "$sum" ]
check "corrupt recording: exit 2, not recorded over" $?

# a recorded position that is NaN: exit 2, naming the file and the vertex
cp -r "$tmp/rec" "$tmp/nan"
printf '\x00\x00\x00\x00\x00\x00\xf8\x7f' | dd of="$tmp/nan/frame_000003.bin" bs=1 seek=56 conv=notrunc 2>/dev/null
"$CLI" bench ccd --scene "$SRC/scenes/drop.json" --frames 100 --record-dir "$tmp/nan" >/dev/null 2>"$tmp/err4"; rc=$?
[ $rc -eq 2 ] && grep -q "frame_000003.bin: vertex 1 (object 0, its vertex 1) has a non-finite coordinate" "$tmp/err4"
check "NaN in a recorded frame: exit 2, naming the file and vertex" $?

# which scene a recording is of (source.txt): a recording of another scene
# in a folder the user named is refused (exit 2), left as it was; in the
# default cache it is recorded again, its stale frames and stream removed
grep -q "^scene_hash [0-9a-f]\{16\}$" "$tmp/rec/source.txt" && grep -q "^collisions 1$" "$tmp/rec/source.txt"
check "source.txt written" $?
sed 's/"time_step": 0.005/"time_step": 0.004/' "$SRC/scenes/drop.json" >"$tmp/drop2.json"
! cmp -s "$SRC/scenes/drop.json" "$tmp/drop2.json"; check "edited scene differs" $?
sum=$(cat "$tmp/rec"/* | cksum)
"$CLI" bench ccd --scene "$tmp/drop2.json" --frames 100 --record-dir "$tmp/rec" >/dev/null 2>"$tmp/err5"; rc=$?
[ $rc -eq 2 ] && grep -q "not a recording of .*drop2.json as it is now (the scene file differs" "$tmp/err5" &&
    [ "$(cat "$tmp/rec"/* | cksum)" = "$sum" ]
check "recording of another scene in a named folder: exit 2, left alone" $?
"$CLI" run "$SRC/scenes/drop.json" --frames 3 --no-collisions --export-frames "$tmp/nocol" --quiet >/dev/null 2>&1
"$CLI" bench ccd --scene "$SRC/scenes/drop.json" --frames 3 --record-dir "$tmp/nocol" >/dev/null 2>"$tmp/err6"; rc=$?
[ $rc -eq 2 ] && grep -q "recorded with collisions off" "$tmp/err6"; check "recording without collisions refused" $?
mkdir -p "$tmp/cwd/hyphys-recordings"
cp -r "$tmp/rec" "$tmp/cwd/hyphys-recordings/drop2"
echo stale >"$tmp/cwd/hyphys-recordings/drop2/jobs.csv"
(cd "$tmp/cwd" && "$CLI" bench ccd --scene "$tmp/drop2.json" --frames 20 >/dev/null 2>"$tmp/err7"); rc=$?
d="$tmp/cwd/hyphys-recordings/drop2"
[ $rc -eq 0 ] && grep -q "recording it again" "$tmp/err7" && [ -f "$d/frame_000020.bin" ] &&
    [ ! -e "$d/frame_000021.bin" ] && [ ! -e "$d/jobs.csv" ] && grep -q "drop2.json" "$d/source.txt"
check "stale recording in the default cache: recorded again, old frames and stream gone" $?

# no --thickness: the simulation's contact distance, the scene's thickness
# (drop: 1 mm, the default of bodies and obstacles; cloth_small: 2 mm, the
# default of cloth)
out8=$("$CLI" bench ccd --scene "$SRC/scenes/drop.json" --frames 100 --record-dir "$tmp/rec" --json 2>/dev/null)
[ "$(field "$out8" thickness)" = 0.001 ]; check "drop: replayed at its 1 mm contact distance" $?
out9=$("$CLI" bench ccd --scene "$SRC/scenes/cloth_small.json" --frames 2 --record-dir "$tmp/cloth" --json 2>/dev/null)
[ "$(field "$out9" thickness)" = 0.002 ] && [ "$(field "$out9" first_contact_frame)" = null ]
check "cloth_small: replayed at its 2 mm contact distance, no contact" $?
# the default length is the scene's sequence (100 frames for drop)
[ "$(field "$out8" frames)" = 100 ] && [ "$(field "$out8" sequence_frames)" = 100 ]; check "drop: 100 frames by default" $?
"$CLI" bench ccd --scene "$SRC/scenes/drop.json" --frames 100 --record-dir "$tmp/rec" --csv "$tmp/no/such/x.csv" >/dev/null 2>&1
[ $? -eq 2 ]; check "unwritable --csv path exits 2" $?
if [ -w /dev/full ]; then
    "$CLI" bench ccd --scene "$SRC/scenes/drop.json" --frames 100 --record-dir "$tmp/rec" --csv /dev/full >/dev/null 2>&1
    [ $? -eq 1 ]; check "--csv on a full device exits 1" $?
fi

"$CLI" bench ccd --frames 0 >/dev/null 2>&1; [ $? -eq 2 ]; check "--frames 0 exits 2" $?
"$CLI" bench ccd --bogus >/dev/null 2>&1; [ $? -eq 2 ]; check "unknown option exits 2" $?
"$CLI" bench ccd --scene "$tmp/none.json" --record-dir "$tmp/none" >/dev/null 2>&1; [ $? -eq 2 ]; check "missing scene exits 2" $?
exit $fail
