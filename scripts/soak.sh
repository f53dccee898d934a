#!/usr/bin/env bash
# The soak run (not part of the test suite): fem64 and cloth_ball stepped
# for STEPS steps each by `hyphys bench soak`, which reports after every
# step that the state stayed finite, that no triangles intersect, and that
# the moving objects' energy stayed bounded (see hyphys bench soak --help).
# Usage: bash scripts/soak.sh [STEPS] [extra bench soak options...]
#   (default 10000 steps: hours on a 2-core machine; BUILD=DIR picks the
#   build folder, which must hold a built hyphys)
# Exit: 0 when both scenes are healthy, 1 when one is not.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
steps=${1:-10000}
shift || true
status=0
for scene in fem64 cloth_ball; do
    echo "soak.sh: $scene, $steps steps"
    "$BUILD/hyphys" bench soak --scene "$scene" --steps "$steps" "$@" || status=1
done
exit $status
