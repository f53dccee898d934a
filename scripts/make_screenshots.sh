#!/usr/bin/env bash
# Makes the viewer screenshots shown in README.md and docs/guide/VIEWER.md
# (docs/img/view_SCENE.png) with the current sources, under Xvfb with Mesa's
# software renderer, and records what they were made from in
# docs/img/screens.txt (scripts/screens_stamp.sh, then one line per
# picture). tests/view_docs.sh fails when the viewer or a scene changed
# since: run this again then, and commit the pictures with screens.txt.
# Usage: bash scripts/make_screenshots.sh [BUILD_DIR]   (default: build)
# It steps each scene into contact (cloth_ball 150 steps, nbody 200,
# fracture 100, seen from behind the wall): 10 minutes on a busy 2-core
# machine, most of them cloth_ball's and fracture's steps in contact.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
command -v xvfb-run >/dev/null || { echo "make_screenshots: needs xvfb-run (apt-get install xvfb)" >&2; exit 1; }
cmake --build "$build" --target hyphys_cli -j"$(nproc)" >/dev/null
cli=$build/hyphys
"$cli" --help | grep -q '^  view ' || { echo "make_screenshots: $cli was built without the viewer" >&2; exit 1; }
export LIBGL_ALWAYS_SOFTWARE=1 # Mesa llvmpipe, as in the tests
shots=("cloth_ball 150" "nbody 200" "fracture 100 --camera 30,25")
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
bash scripts/screens_stamp.sh >"$stamp"
for shot in "${shots[@]}"; do
    read -r scene frames extra <<<"$shot"
    png=docs/img/view_$scene.png
    start=$(date +%s)
    # shellcheck disable=SC2086
    line=$(xvfb-run -a -s "-screen 0 1280x720x24" "$cli" view "scenes/$scene.json" --frames "$frames" $extra --screenshot "$png")
    colours=$(sed -n 's/.*colours \(#[0-9a-f,#]*\).*/\1/p' <<<"$line")
    echo "$png: $frames steps, $(($(date +%s) - start)) s"
    # png NAME SHA256 COLOURS COMMAND: the colours for scripts/check_screenshot.py
    echo "png view_$scene.png $(sha256sum <"$png" | cut -c1-64) $colours hyphys view scenes/$scene.json --frames $frames${extra:+ $extra}" >>"$stamp"
done
{
    echo "# What docs/img/view_*.png were made from: written by scripts/make_screenshots.sh,"
    echo "# checked by tests/view_docs.sh (under Xvfb, LIBGL_ALWAYS_SOFTWARE=1, 1280x720)."
    cat "$stamp"
} >docs/img/screens.txt
echo "docs/img/screens.txt written"
