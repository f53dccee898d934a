#!/usr/bin/env bash
# The main job: install what is missing, build, run the default scene headless.
# Usage: bash scripts/run.sh [SCENE] [hyphys run options...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHY_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
scene=${1:-cloth_ball}
shift || true
[ $# -gt 0 ] || set -- --frames 60
exec "./$BUILD/hyphys" run "$scene" "$@"
