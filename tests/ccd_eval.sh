#!/usr/bin/env bash
# Tests `hyphys ccd-eval`: the whole shared query set gives no false
# negative (exit 0, JSON totals), and bad input exits 2 naming file:line.
set -u
CLI=${HY_CLI:?HY_CLI not set}
DATA=${HY_DATA_DIR:-}/ccd-queries
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # description, condition result
    if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}

# --- the shared set (skipped when the data is absent)
if [ -d "$DATA" ]; then
    out=$("$CLI" ccd-eval --json --repeats 1 "$DATA" 2>"$tmp/err"); rc=$?
    check "shared set exits 0 (no false negative)" $rc
    echo "$out" | grep -q '"total":{"queries":4884,"positives":225,"false_negatives":0,' ; check "json total" $?
    fp=$(echo "$out" | sed 's/.*"total":{[^}]*"false_positives":\([0-9]*\).*/\1/')
    [ "$fp" -lt 127 ]; check "false positives $fp < 127" $?
    n=$(echo "$out" | grep -o '"file":' | wc -l)
    [ "$n" -eq 22 ]; check "22 files walked ($n)" $?
    "$CLI" ccd-eval --repeats 1 "$DATA/unit-tests/vertex-face/data_0_0.csv" >"$tmp/txt"; check "text output" $?
    grep -q '^all ' "$tmp/txt"; check "text total row" $?
else
    echo "shared data not found; skipping the data part"
fi

# --- a query that misses, labelled as a collision: a false negative, exit 1
mkdir -p "$tmp/vertex-face"
q() { printf '%s\n' "$@"; }
q 0,1,0,1,1,1,1 0,1,0,1,0,1,1 1,1,0,1,0,1,1 0,1,1,1,0,1,1 \
  0,1,0,1,2,1,1 0,1,0,1,0,1,1 1,1,0,1,0,1,1 0,1,1,1,0,1,1 >"$tmp/vertex-face/wrong.csv"
"$CLI" ccd-eval --repeats 1 "$tmp/vertex-face/wrong.csv" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ]; check "false negative exits 1 (got $rc)" $?

# --- the same rows labelled 0 are fine; --json has type vf
sed 's/,1$/,0/' "$tmp/vertex-face/wrong.csv" >"$tmp/vertex-face/ok.csv"
out=$("$CLI" ccd-eval --json --repeats 1 "$tmp/vertex-face/ok.csv"); rc=$?
check "correct miss exits 0" $rc
echo "$out" | grep -q '"type":"vf"'; check "type detected from path" $?

# --- bad input: exit 2 with file:line
cp "$tmp/vertex-face/ok.csv" "$tmp/vertex-face/bad.csv"
sed -i '3s/.*/0,1,zero,1,0,1,0/' "$tmp/vertex-face/bad.csv"
"$CLI" ccd-eval "$tmp/vertex-face/bad.csv" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'bad.csv:3:' "$tmp/err"; check "malformed number: exit 2 and file:line" $?

head -n 7 "$tmp/vertex-face/ok.csv" >"$tmp/vertex-face/short.csv"
"$CLI" ccd-eval "$tmp/vertex-face/short.csv" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'multiple of 8' "$tmp/err"; check "row count: exit 2" $?

sed '2s/,0$/,0,5/' "$tmp/vertex-face/ok.csv" >"$tmp/vertex-face/cols.csv"
"$CLI" ccd-eval "$tmp/vertex-face/cols.csv" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'cols.csv:2:' "$tmp/err"; check "column count: exit 2 and file:line" $?

sed '4s/,0$/,1/' "$tmp/vertex-face/ok.csv" >"$tmp/vertex-face/truth.csv"
"$CLI" ccd-eval "$tmp/vertex-face/truth.csv" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'truth.csv:4:' "$tmp/err"; check "inconsistent truth: exit 2" $?

# a bad file after a good one: exit 2, and the good one's results are kept
out=$("$CLI" ccd-eval --json --repeats 1 "$tmp/vertex-face/ok.csv" "$tmp/vertex-face/cols.csv" 2>"$tmp/err"); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q '"file":"[^"]*ok.csv"' && grep -q 'cols.csv:2:' "$tmp/err"
check "good file then a bad one: exit 2, the good one reported" $?
# ... and a file of unknown kind is refused before any work
cp "$tmp/vertex-face/ok.csv" "$tmp/plain-first.csv"
"$CLI" ccd-eval --repeats 1 "$tmp/vertex-face/ok.csv" "$tmp/plain-first.csv" >"$tmp/txt" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ ! -s "$tmp/txt" ]; check "unknown kind anywhere: exit 2 before any work" $?

"$CLI" ccd-eval "$tmp/nope.csv" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; check "missing file: exit 2" $?

"$CLI" ccd-eval --frobnicate "$tmp/vertex-face/ok.csv" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; check "unknown option: exit 2" $?

cp "$tmp/vertex-face/ok.csv" "$tmp/plain.csv"
"$CLI" ccd-eval "$tmp/plain.csv" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; check "unknown kind without --vf/--ee: exit 2" $?
"$CLI" ccd-eval --vf --repeats 1 "$tmp/plain.csv" >/dev/null 2>&1; rc=$?
check "--vf override" $rc

"$CLI" ccd-eval --help >/dev/null; check "--help" $?
exit $fail
