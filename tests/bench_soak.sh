#!/usr/bin/env bash
# Tests `hyphys bench soak`'s checkpoints: a run stopped (at its --steps,
# or by SIGTERM) and resumed from its checkpoint ends in the state of a
# run never stopped, with its figures carried over; bad checkpoints,
# another scene's or another build's checkpoint and an unwritable
# checkpoint are refused.
set -u
CLI=${HY_CLI:?HY_CLI not set}
fail=0
check() { # description, condition result
    if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
field() { printf '%s' "$1" | grep -o "\"$2\":[^,}]*"; }
# steps of the runs: fewer under the sanitizers (the checkpoint's code is
# the same whatever the count)
whole=40 cut=17 long=120
[ -n "${HY_TEST_SANITIZER:-}" ] && whole=12 cut=5 long=30

all=$("$CLI" bench soak --scene cloth_small --steps $whole --json --quiet)
check "a whole run exits 0" $?
part=$("$CLI" bench soak --scene cloth_small --steps $cut --checkpoint "$dir/k" --checkpoint-every 5 --json --quiet)
check "the first part exits 0" $?
[ "$(field "$part" steps_done)" = "\"steps_done\":$cut" ]; check "the first part ran $cut steps" $?
rest=$("$CLI" bench soak --resume "$dir/k" --steps $whole --json --quiet)
check "the resumed part exits 0" $?
[ "$(field "$rest" hash)" = "$(field "$all" hash)" ] && [ -n "$(field "$all" hash)" ]
check "resumed, the state of the whole run ($(field "$rest" hash) $(field "$all" hash))" $?
[ "$(field "$rest" checks)" = "\"checks\":$whole" ] && [ "$(field "$rest" scene)" = '"scene":"cloth_small"' ]
check "its figures carried over ($whole checks, the scene's name)" $?
[ ! -e "$dir/k.tmp" ]; check "no temporary file left" $?

# stopped by SIGTERM wherever it is: it saves after the step under way
full=$("$CLI" bench soak --scene cloth_small --steps $long --json --quiet)
"$CLI" bench soak --scene cloth_small --steps $long --checkpoint "$dir/t" --checkpoint-every 1000 --quiet \
    >/dev/null 2>&1 &
pid=$!
sleep 0.3
kill -TERM $pid 2>/dev/null
wait $pid
after=$("$CLI" bench soak --resume "$dir/t" --steps $long --json --quiet)
[ "$(field "$after" hash)" = "$(field "$full" hash)" ] && [ "$(field "$after" steps_done)" = "\"steps_done\":$long" ]
check "stopped by SIGTERM and resumed: the whole run's state" $?

"$CLI" bench soak --resume "$dir/none" >/dev/null 2>&1; [ $? -eq 2 ]; check "a missing checkpoint exits 2" $?
head -c 100 "$dir/k" > "$dir/cut"
"$CLI" bench soak --resume "$dir/cut" 2>&1 >/dev/null | grep -q "not a whole soak checkpoint"
check "a cut checkpoint is named as such" $?
"$CLI" bench soak --resume "$dir/cut" >/dev/null 2>&1; [ $? -eq 2 ]; check "... and exits 2" $?
"$CLI" bench soak --resume "$dir/k" --scene drop >/dev/null 2>&1; [ $? -eq 2 ]; check "another scene's checkpoint exits 2" $?
cp "$CLI" "$dir/other" && printf 'x' >> "$dir/other" # another build: the same program, other bytes
"$dir/other" bench soak --resume "$dir/k" --steps $((whole + 1)) 2>&1 >/dev/null | grep -q "written by another build"
check "another build's checkpoint is refused" $?
"$CLI" bench soak --scene drop --steps 3 --checkpoint "$dir/no/such/dir/k" --quiet 2>&1 >/dev/null |
    grep -q "cannot write the checkpoint"
check "an unwritable checkpoint is said" $?
"$CLI" bench soak --scene drop --steps 3 --checkpoint "$dir/no/such/dir/k" --quiet >/dev/null 2>&1; [ $? -eq 1 ]
check "... and exits 1" $?
"$CLI" bench soak --scene drop --checkpoint-every 0 >/dev/null 2>&1; [ $? -eq 2 ]; check "--checkpoint-every 0 exits 2" $?
exit $fail
