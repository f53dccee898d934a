/* Whole-sequence lengths of the benchmark scenes and their contact distance
 * (see scene_info.h). */
#include "bench/scene_info.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* Each benchmark scene's whole sequence: the frames it takes to cover its
 * events (first contact, landing, rest). The counts come from stepping the
 * scenes at 2 threads and watching `hyphys bench step --csv`'s kinetic_energy and contacts
 * columns; a change to a scene may call for a new count here.
 * - nbody: the bodies first touch the bowl at frame 119 and land over
 *   the next hundred frames; the heap then keeps sliding and flattening,
 *   well past frame 450 (docs/PERFORMANCE.md follows it to frame 1,500):
 *   it has not come to rest by the end, and the sequence does not claim
 *   it has.
 * - fracture: the projectile reaches the wall at frame 8 (4 ms steps);
 *   400 frames, 1.6 s, cover the impact and about 1.5 s for the pieces
 *   knocked loose to fall and come to rest on the floor.
 * - fem64: the lowest blocks reach the slab at frame 38, the upper layers
 *   land on them over frames 100-200 (the most contacts, about 660,000,
 *   at frame 130), and the pile then presses and rings in contact (about
 *   60,000 contacts at frame 300, the blocks still moving): 300 frames,
 *   1.5 s. Its first 110 frames, which earlier figures used, end before
 *   most of the landings. */
static const struct {
    const char* name;
    long frames;
    const char* what;
} sequences[] = {
    {"cloth_ball", 300, "the fall, the drape and the ball turning under the cloth"},
    {"nbody", 450, "the bodies falling into the bowl and piling up"},
    {"fracture", 400, "the impact and the pieces coming to rest"},
    {"fem64", 300, "the blocks falling, landing on the slab and on each other, and the pile in contact"},
};

long hy_bench_default_frames(const char* name, const char** what) {
    for (size_t i = 0; i < sizeof sequences / sizeof sequences[0]; i++)
        if (!strcmp(name, sequences[i].name)) {
            if (what) *what = sequences[i].what;
            return sequences[i].frames;
        }
    if (what) *what = "the default length for scenes without a benchmark sequence";
    return HY_BENCH_DEFAULT_FRAMES;
}

const char* hy_bench_sequences_text(void) {
    static char text[256];
    size_t n = 0;
    text[0] = '\0';
    for (size_t i = 0; i < sizeof sequences / sizeof sequences[0] && n < sizeof text; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%s %ld", i ? ", " : "", sequences[i].name,
                              sequences[i].frames);
    return text;
}

hy_status hy_bench_contact_distance(const hy_world* w, double* out, int* mixed) {
    double lo = 0.0, hi = 0.0;
    int32_t n = hy_cli_objects(w);
    for (int32_t i = 0; i < n; i++) {
        hy_object_id id;
        double t;
        hy_status st = hy_world_get_object(w, i, &id);
        if (!st) st = hy_object_get_thickness(w, id, &t);
        if (st) return st;
        if (i == 0 || t < lo) lo = t;
        if (i == 0 || t > hi) hi = t;
    }
    *out = hi;
    *mixed = n > 0 && lo != hi;
    return HY_OK;
}
