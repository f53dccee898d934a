#!/usr/bin/env bash
# Tests `hyphys bench fem` on a small beam: the JSON has the geometry's
# counts (N x N x 5N cells: (N+1)^2 (5N+1) vertices, 30 N^3 tetrahedra),
# one run per thread count with positive times, and the same state hash
# at 1 and 2 threads; --threads runs one count; the text form names the
# beam; bad usage exits 2.
set -u
CLI=${HY_CLI:?HY_CLI not set}
fail=0
check() { # description, condition result
    if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}

out=$("$CLI" bench fem --cells 2 --steps 3 --cg-iterations 5 --json)
check "exits 0" $?
printf '%s' "$out" | grep -q '"cells":\[10,2,2\],"vertices":99,"tetrahedra":240,"steps":3,"cg_iterations":5'
check "geometry and settings ($out)" $?
[ "$(printf '%s' "$out" | grep -o '"threads":[0-9]*' | tr '\n' ' ')" = '"threads":1 "threads":2 ' ]
check "runs at 1 then 2 threads" $?
hashes=$(printf '%s' "$out" | grep -o '"hash":"[0-9a-f]\{16\}"' | sort -u | wc -l)
[ "$hashes" -eq 1 ] && [ "$(printf '%s' "$out" | grep -o '"hash"' | wc -l)" -eq 2 ]
check "the same state at 1 and 2 threads" $?
printf '%s' "$out" | grep -o '"median":[0-9.]*' | awk -F: '{ if (!($2 > 0)) bad = 1 } END { exit bad }'
check "positive step times" $?

one=$("$CLI" bench fem --cells 2 --steps 2 --threads 2 --json)
[ "$(printf '%s' "$one" | grep -o '"threads":[0-9]*')" = '"threads":2' ]; check "--threads 2: one run" $?
"$CLI" bench fem --cells 1 --steps 1 | grep -q "^fem_beam: 5 x 1 x 1 cells, 24 vertices, 30 tetrahedra"
check "text output" $?

"$CLI" bench fem --steps 0 >/dev/null 2>&1; [ $? -eq 2 ]; check "--steps 0 exits 2" $?
"$CLI" bench fem --cells >/dev/null 2>&1; [ $? -eq 2 ]; check "--cells without a value exits 2" $?
"$CLI" bench fem --bogus >/dev/null 2>&1; [ $? -eq 2 ]; check "unknown option exits 2" $?
"$CLI" bench --help | grep -q "^  fem "; check "listed by bench --help" $?
exit $fail
