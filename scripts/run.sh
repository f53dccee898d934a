#!/usr/bin/env bash
# The main job: install what is missing, build the `hyphys` command (only
# it: the test suite is scripts/test.sh), run the default scene headless.
# Usage: bash scripts/run.sh [SCENE] [hyphys run options...]
#   (default: cloth_ball --frames 60; BUILD=DIR picks the build folder)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=./$BUILD ;; esac
echo "run.sh: building the hyphys command in $BUILD (the first build takes a few minutes)"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHY_WERROR=ON >/dev/null
cmake --build "$BUILD" --target hyphys_cli -j"$(nproc)"
scene=${1:-cloth_ball}
shift || true
if [ $# -eq 0 ]; then
    set -- --frames 60
    [ "$scene" = cloth_ball ] &&
        echo "run.sh: cloth_ball, 60 frames: about 8 seconds on 2 cores (17 frames of free fall take" \
             "a few seconds; each frame in contact about a seventh of a second); the progress bar" \
             "shows the time left"
fi
exec "$BUILD/hyphys" run "$scene" "$@"
