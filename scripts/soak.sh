#!/usr/bin/env bash
# The soak run (not part of the test suite): fem64 and cloth_ball stepped
# for STEPS steps each by `hyphys bench soak`, which reports after every
# step that the state stayed finite, that no triangles intersect, and that
# the moving objects' energy stayed bounded (see hyphys bench soak --help).
# Each scene's run is kept in a checkpoint, soak/SCENE.soak (SOAK_DIR=DIR
# picks another folder), every 100 steps and when the script is stopped
# (Ctrl-C, SIGTERM): calling the script again goes on from there, with the
# state an unbroken run would have, so the hours a soak takes need not be
# one sitting. A scene whose checkpoint has reached STEPS is reported from
# it without stepping.
# Usage: bash scripts/soak.sh [STEPS] [extra bench soak options...]
#   (default 10000 steps: hours on a 2-core machine; BUILD=DIR picks the
#   build folder, which must hold a built hyphys)
# Exit: 0 when both scenes are healthy, 1 when one is not or was stopped.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SOAK_DIR=${SOAK_DIR:-soak}
steps=${1:-10000}
shift || true
mkdir -p "$SOAK_DIR" || exit 1
status=0
stopped=0
child=0
# a signal is passed on to the soak under way, which saves after its step
trap 'stopped=1; [ $child -ne 0 ] && kill -TERM $child 2>/dev/null' INT TERM
for scene in fem64 cloth_ball; do
    [ $stopped -eq 1 ] && break
    kept="$SOAK_DIR/$scene.soak"
    if [ -f "$kept" ]; then
        echo "soak.sh: $scene, $steps steps, resuming $kept"
        "$BUILD/hyphys" bench soak --resume "$kept" --steps "$steps" "$@" &
    else
        echo "soak.sh: $scene, $steps steps, kept in $kept"
        "$BUILD/hyphys" bench soak --scene "$scene" --steps "$steps" --checkpoint "$kept" "$@" &
    fi
    child=$!
    wait $child
    rc=$?
    while kill -0 $child 2>/dev/null; do # interrupted by the trap: let it save
        wait $child
        rc=$?
    done
    child=0
    [ $rc -ne 0 ] && status=1
done
exit $status
