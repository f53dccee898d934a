#!/usr/bin/env bash
# Build the libFuzzer targets (fuzz/fuzz_*.c) with clang in build-fuzz and run
# fuzz_scene and fuzz_obj side by side, one core each, for SECONDS seconds.
#
#   scripts/fuzz.sh [SECONDS]        (default 60)
#
# Corpora live in build-fuzz/corpus/<target>, seeded from scenes/*.json and
# tests/data (scene fixtures and OBJ fixtures); they grow across runs. A crash
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
cmake --build "$build" -j"${JOBS_BUILD:-2}" --target fuzz_scene fuzz_obj
fi

# Seed corpora (copies: libFuzzer writes new inputs into its corpus dir).
mkdir -p "$build/corpus/scene" "$build/corpus/obj" "$build/artifacts/scene" "$build/artifacts/obj"
shopt -s nullglob
for f in "$root"/scenes/*.json "$root"/tests/data/*.json "$root"/tests/data/scenes/*.json; do
    cp -f "$f" "$build/corpus/scene/seed_$(basename "$f")"
done
for f in "$root"/tests/data/*.obj "$root"/tests/data/scenes/*.obj; do
    cp -f "$f" "$build/corpus/obj/seed_$(basename "$f")"
done

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

# Both targets at once, one process (one core) each.
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
rc=0
wait "$pid_scene" || rc=1
wait "$pid_obj" || rc=1

for t in scene obj; do
    echo "== fuzz_$t: $(grep -E '^(#[0-9]+|stat::number_of_executed_units)' "$build/fuzz_$t.log" | tail -1)"
    grep -E 'ERROR|SUMMARY|Test unit written' "$build/fuzz_$t.log" || true
done
echo "logs: $build/fuzz_scene.log $build/fuzz_obj.log; reproducers (if any): $build/artifacts/"
exit "$rc"
