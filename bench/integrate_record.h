/* Recordings of real runs for `hyphys bench integrate`: per step, every
 * solid's particles, integration time (timed alone on one thread, as that
 * thread's CPU time, which other processes on a shared machine do not
 * stretch; engine/integrate_probe.h) and CG iterations, and the pairs of solids
 * that interact (attached, engine/links.h, or touching: the world's
 * contact events): the per-object task costs and the interaction graph
 * that the modeled experiments replay.
 *
 * File (CSV; lines starting with '#' are comments, the first of them
 * naming the scene, steps and time step):
 *   object,STEP,INDEX,PARTICLES,SECONDS,CG_ITERATIONS
 *   pair,STEP,A,B
 * STEP counts the recorded steps from 0; INDEX, A and B number the solids
 * in the world's object order from 0 (obstacles and surface objects are
 * left out: they are not integrated as solids); A < B. */
#ifndef HY_BENCH_INTEGRATE_RECORD_H
#define HY_BENCH_INTEGRATE_RECORD_H

#include <stdint.h>

#include "core/error.h"

#define HY_REC_MAX_OBJ 64
#define HY_REC_MAX_PAIRS 512

typedef struct hy_irec {
    char scene[64];
    int32_t nobj, nsteps;
    int32_t n[HY_REC_MAX_OBJ]; /* particles of each solid */
    double* seconds;           /* [step * nobj + i] */
    int32_t* cg;               /* [step * nobj + i] */
    int32_t* pair_start;       /* pairs of step k: pairs[2 * pair_start[k] .. 2 * pair_start[k + 1]) */
    int32_t* pairs;
} hy_irec;

/* Load scene_path on one thread (with the scene parameters `params`,
 * "name=value,...", as hy_scene_options.parameters; NULL: as written),
 * run `skip` steps at its own time step,
 * then `steps` more, probing every solid's integration before each, and
 * write the recording to out_path (refused when it exists). *hash gets the
 * state hash at the end. HY_ERR_INVALID_ARG for a scene with no solid or
 * more than HY_REC_MAX_OBJ, or a step with more than HY_REC_MAX_PAIRS
 * touching pairs; the loader's and the step's errors as they come. */
hy_status hy_irec_make(const char* scene_path, const char* params, int skip, int steps, const char* out_path,
                       uint64_t* hash);
/* Read a recording; HY_ERR_IO / HY_ERR_PARSE naming the file and line. */
hy_status hy_irec_load(const char* path, hy_irec* out);
void hy_irec_free(hy_irec* r);

#endif
