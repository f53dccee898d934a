#!/usr/bin/env bash
# Build the libFuzzer targets (fuzz/fuzz_*.c) with clang in build-fuzz and run
# fuzz_scene, fuzz_obj and fuzz_tetmesh side by side, one process each, for
# SECONDS seconds.
#
#   scripts/fuzz.sh [SECONDS]        (default 60)
#
# Corpora live in build-fuzz/corpus/<target>, seeded from scenes/*.json and
# tests/data (scene fixtures and OBJ fixtures) and, for fuzz_tetmesh, from
# small Gmsh 2.2 / 4.1 and TetGen meshes written below (the first byte picks
# the format: even Gmsh, odd TetGen with "@@" between the .node and the
# .ele text); they grow across runs. A crash
# leaves its reproducer in build-fuzz/artifacts/<target>/ and this script
# exits 1; rerun one with  build-fuzz/<target> <reproducer>.
# Env: JOBS_BUILD (default 2) build parallelism; FUZZ_ARGS extra libFuzzer flags;
# FUZZ_NO_BUILD=1 runs the targets already in build-fuzz without rebuilding.
set -euo pipefail

seconds="${1:-60}"
case "$seconds" in (*[!0-9]*|'') echo "usage: $0 [SECONDS]" >&2; exit 2;; esac
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"

command -v clang >/dev/null || { echo "fuzz.sh: clang not found" >&2; exit 2; }

# The library is instrumented for coverage (fuzzer-no-link) and sanitizers too,
# not only the fuzz drivers: without it the fuzzer would be blind inside it.
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHY_FUZZ=ON -DHY_SANITIZE=ON -DHY_VIEWER=OFF -DHY_CUDA=OFF \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
cmake --build "$build" -j"${JOBS_BUILD:-2}" --target fuzz_scene fuzz_obj fuzz_tetmesh
fi

# Seed corpora (copies: libFuzzer writes new inputs into its corpus dir).
for t in scene obj tetmesh; do mkdir -p "$build/corpus/$t" "$build/artifacts/$t"; done
shopt -s nullglob
for f in "$root"/scenes/*.json "$root"/tests/data/*.json "$root"/tests/data/scenes/*.json; do
    cp -f "$f" "$build/corpus/scene/seed_$(basename "$f")"
done
for f in "$root"/tests/data/*.obj "$root"/tests/data/scenes/*.obj; do
    cp -f "$f" "$build/corpus/obj/seed_$(basename "$f")"
done

tc="$build/corpus/tetmesh"
printf '0$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 1 "body"\n$EndPhysicalNames\n$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 0 0 -1\n$EndNodes\n$Elements\n3\n1 2 2 0 1 1 2 3\n2 4 2 1 1 1 2 3 4\n3 4 2 1 1 1 3 2 5\n$EndElements\n' > "$tc/seed_gmsh22"
printf '0$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 0 0 1\n1 0 0 0 1 1 1 0 0\n$EndEntities\n$Nodes\n1 5 1 5\n3 1 0 5\n1\n2\n3\n4\n5\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n0 0 -1\n$EndNodes\n$Elements\n1 2 1 2\n3 1 4 2\n1 1 2 3 4\n2 1 3 2 5\n$EndElements\n' > "$tc/seed_gmsh41"
printf '1# nodes\n5 3 1 1\n1 0 0 0 0.5 1\n2 1 0 0 0.5 1\n3 0 1 0 0.5 1\n4 0 0 1 0.5 1\n5 0 0 -1 0.5 0\n@@2 4 1\n1 1 2 3 4 7\n2 1 3 2 5 7\n' > "$tc/seed_tetgen"
printf '1 5 3\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 0.5 0 0\n@@1 10\n0 0 1 2 3 4 4 4 4 4 4\n' > "$tc/seed_tetgen10"

# Dictionary of the scene format's words: lets the fuzzer build valid scenes.
dict="$build/scene.dict"
{
    for w in name description solver time_step substeps gravity threads cg_max_iterations cg_tolerance \
        collisions materials objects type cloth body obstacle fracture material base mesh meshes file \
        generator grid uv_sphere icosphere box cone torus bowl vertices size radius slices stacks \
        subdivisions half_extents height major_radius minor_radius major_segments minor_segments \
        transform position rotation axis degrees quaternion scale array count spacing jitter seed \
        random_rotation pin corners two_corners edge none velocity angular_velocity motion translate \
        rotate rate pivot pieces gap bond_strength density stretch_stiffness shear_stiffness \
        bend_stiffness damping air_damping thickness friction restitution scene_tetra.obj scene_bad.obj; do
        printf '"\\"%s\\""\n' "$w"
    done
    printf '"%s"\n' true false null 1e999 -1 0.5 '{' '}' '[' ']' ':' ','
} > "$dict"
objdict="$build/obj.dict"
printf '"%s"\n' 'v ' 'f ' 'vt ' 'vn ' '/' '//' '#' 'o ' 'g ' 's ' 'usemtl ' 'mtllib ' '-1' '1e308' 'nan' \
    'inf' '\x0A' '\x0D\x0A' > "$objdict"
tetdict="$build/tetmesh.dict"
printf '"%s"\n' '$MeshFormat' '$EndMeshFormat' '$Nodes' '$EndNodes' '$Elements' '$EndElements' '$Entities' \
    '$EndEntities' '$PhysicalNames' '$EndPhysicalNames' '2.2 0 8' '4.1 0 8' '@@' '#' '-1' '1e308' 'nan' 'inf' \
    '\x0A' '\x0D\x0A' > "$tetdict"

# The three targets at once, one process each.
common=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 ${FUZZ_ARGS:-})
export HY_FUZZ_DATA="$root/tests/data/scenes"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export OPENBLAS_NUM_THREADS=1
cd "$build"
"$build/fuzz_scene" "${common[@]}" -dict="$dict" -artifact_prefix="$build/artifacts/scene/" \
    "$build/corpus/scene" > "$build/fuzz_scene.log" 2>&1 &
pid_scene=$!
"$build/fuzz_obj" "${common[@]}" -dict="$objdict" -artifact_prefix="$build/artifacts/obj/" \
    "$build/corpus/obj" > "$build/fuzz_obj.log" 2>&1 &
pid_obj=$!
"$build/fuzz_tetmesh" "${common[@]}" -dict="$tetdict" -artifact_prefix="$build/artifacts/tetmesh/" \
    "$build/corpus/tetmesh" > "$build/fuzz_tetmesh.log" 2>&1 &
pid_tetmesh=$!
rc=0
wait "$pid_scene" || rc=1
wait "$pid_obj" || rc=1
wait "$pid_tetmesh" || rc=1

for t in scene obj tetmesh; do
    echo "== fuzz_$t: $(grep -E '^(#[0-9]+|stat::number_of_executed_units)' "$build/fuzz_$t.log" | tail -1)"
    grep -E 'ERROR|SUMMARY|Test unit written' "$build/fuzz_$t.log" || true
done
echo "logs: $build/fuzz_scene.log $build/fuzz_obj.log $build/fuzz_tetmesh.log; reproducers (if any): $build/artifacts/"
exit "$rc"
