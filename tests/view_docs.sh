#!/usr/bin/env bash
# Tests that the viewer screenshots of README.md and docs/guide/VIEWER.md show what
# the viewer draws today. docs/img/screens.txt records what they were made
# from (scripts/make_screenshots.sh writes it with the pictures): the
# SHA-256 of the viewer's sources and of each scene shown, then each
# picture's SHA-256, object colours and command. This fails when the tree's
# viewer or scenes differ from those (the pictures are stale: it names the
# command that makes them again), when a picture differs from its record
# (replaced by hand), when README.md or docs/guide/VIEWER.md shows a picture that
# is not recorded, and when a picture does not pass
# scripts/check_screenshot.py (one colour, or no object colours).
# Needs no display: it reads files only.
set -uo pipefail
src=${HY_SOURCE_DIR:?HY_SOURCE_DIR must name the source tree}
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
stamp=$src/docs/img/screens.txt
fail=0
[ -f "$stamp" ] || { echo "FAIL: $stamp is missing (bash scripts/make_screenshots.sh makes it)"; exit 1; }

# the sources the pictures were made from are the tree's
if ! diff <(grep -E '^(viewer|scene) ' "$stamp") <(bash "$src/scripts/screens_stamp.sh") >/dev/null; then
    echo "FAIL: docs/img/view_*.png are stale: made from other viewer sources or scenes than these:"
    diff <(grep -E '^(viewer|scene) ' "$stamp") <(bash "$src/scripts/screens_stamp.sh") | sed 's/^/  /'
    echo "  (recorded <, tree >) make them again: bash scripts/make_screenshots.sh, and commit docs/img"
    fail=1
fi

# every picture is the one recorded, and shows a scene
listed=0
while read -r _ name sha colours _; do
    listed=$((listed + 1))
    png=$src/docs/img/$name
    if [ ! -f "$png" ]; then echo "FAIL: $name is recorded but missing"; fail=1; continue; fi
    got=$(sha256sum <"$png" | cut -c1-64)
    [ "$got" = "$sha" ] || { echo "FAIL: $name differs from the picture recorded in screens.txt"; fail=1; }
    python3 "$src/scripts/check_screenshot.py" "$png" "$colours" --min-share 0.02 >/dev/null ||
        { echo "FAIL: $name does not show the scene (scripts/check_screenshot.py)"; fail=1; }
done < <(grep '^png ' "$stamp")
[ $listed -ge 3 ] || { echo "FAIL: screens.txt records $listed pictures, expected the three benchmark scenes"; fail=1; }

# the pictures the docs show are the recorded ones
for doc in README.md docs/guide/VIEWER.md; do
    for name in $(grep -o 'img/view_[a-z_]*\.png' "$src/$doc" | sed 's|img/||' | sort -u); do
        grep -q "^png $name " "$stamp" || { echo "FAIL: $doc shows $name, which screens.txt does not record"; fail=1; }
    done
done
[ $fail -eq 0 ] && echo "PASS"
exit $fail
