/* Workloads of `hyphys bench integrate`: task graphs of the FEM scenes
 * (fem64, fem_bars, fem_independent) run on modeled machines
 * (runtime/sim.h), either replaying a recording of the real scene
 * (bench/integrate_record.h: per step, each object's measured integration
 * time and CG iterations and the pairs that touched) or, where none is
 * given, synthetic: shaped like the scene, with per-task costs from timed
 * steps of the real FEM solver (solvers/fem.h) on this machine.
 *
 * Each object is three handles (positions, velocities, forces: 3 doubles
 * per particle each), and each pair that interacts one more (the coupling
 * force on its first object, 3 doubles per particle of the smaller). Per
 * step:
 *   contact / attach  (W pair, R x a, R x b) per pair, joining the
 *                     partition with less work
 *   fem-gather        (RW force, R pair...) only for an object with more
 *                     pairs than its assembly's arguments hold
 *   fem-assemble      (RW v, RW force, R x, R pair...): rotations, forces,
 *                     the system, the coupling forces added
 *   fem-cg            (RW v) per CG iteration
 *   fem-update        (RW x, R v): positions
 * whose CPU implementations do a cheap, deterministic update of the data,
 * so every policy and machine must give the same state hash. A pair writes
 * its own buffer rather than adding into both objects' forces, so the
 * pairs of a step do not wait for one another (adding would chain every
 * pair of a connected scene behind the one before by write after write).
 * One task per CG iteration because a GPU launches kernels and
 * synchronises per iteration: its per-task cost (runtime/machine.h) is paid
 * per iteration, which is what makes small objects poor on a GPU, except
 * that small free objects (fewer tetrahedra than HY_BATCH_MAX_ITEMS, no
 * pair in the step) are marked batchable: the real runtime batches them on
 * a GPU, and the sim shares a GPU's launches among those it holds
 * (runtime/sim.h). A pair task costs CONTACT_SHARE of the smaller object's
 * assembly. */
#ifndef HY_BENCH_INTEGRATE_SCENES_H
#define HY_BENCH_INTEGRATE_SCENES_H

#include <stdint.h>

#include "bench/integrate_record.h"
#include "runtime/sim.h"
#include "runtime/team.h"

#define HY_ISCENE_MAX_OBJ HY_REC_MAX_OBJ
#define HY_ISCENE_MAX_PAIRS HY_REC_MAX_PAIRS
#define HY_FEM_COST_SIZES 5

/* CG iterations per step: a fixed count, as interactive FEM runs it. */
#define HY_FEM_CG_ITERATIONS 25

/* Seconds of one implicit FEM step of a block, split into the part outside
 * the CG (rotations, forces, assembly: `setup`) and one CG iteration
 * (`iteration`), measured here against the particle count, with a line
 * a + b * particles fitted to each. */
typedef struct hy_fem_costs {
    int32_t particles[HY_FEM_COST_SIZES];
    double step[HY_FEM_COST_SIZES];       /* a whole step with HY_FEM_CG_ITERATIONS iterations */
    double setup[HY_FEM_COST_SIZES];
    double iteration[HY_FEM_COST_SIZES];
    double setup_a, setup_b, iter_a, iter_b;
} hy_fem_costs;

/* Times `steps` steps (after one untimed) of a cube block of each size,
 * clamped at its base under gravity, on one thread, with 5 and with
 * HY_FEM_CG_ITERATIONS CG iterations (tolerance 0, so all run), the
 * fastest step of each (the least disturbed on a shared machine): the
 * difference gives an iteration, the rest the setup. */
hy_status hy_fem_costs_measure(int steps, hy_fem_costs* out);
/* Read costs that a run wrote (fem_costs.csv: a header, then
 * particles,step_ms,setup_ms,iteration_ms[,...] for each of the
 * HY_FEM_COST_SIZES sizes), so that figures can be made again from the same
 * measurement. HY_ERR_IO / HY_ERR_PARSE naming the file and line. */
hy_status hy_fem_costs_load(const char* path, hy_fem_costs* out);
static inline double hy_fem_setup_cost(const hy_fem_costs* c, double n) { return c->setup_a + c->setup_b * n; }
static inline double hy_fem_iteration_cost(const hy_fem_costs* c, double n) { return c->iter_a + c->iter_b * n; }

typedef enum hy_iscene_kind { HY_ISCENE_FEM64 = 0, HY_ISCENE_BARS = 1, HY_ISCENE_INDEPENDENT = 2 } hy_iscene_kind;

typedef struct hy_iscene {
    hy_iscene_kind kind;
    int nobj;
    int32_t n[HY_ISCENE_MAX_OBJ];   /* particles */
    double setup[HY_ISCENE_MAX_OBJ]; /* reference-core seconds per step outside the CG (measured line) */
    double iter[HY_ISCENE_MAX_OBJ];  /* reference-core seconds per CG iteration (measured line) */
    int bar[HY_ISCENE_MAX_OBJ];     /* fem_bars: the bar of each block */
    const hy_irec* rec;        /* a recorded run replayed (NULL: the synthetic scene) */
    double* data;                   /* x, v, f of every object, one allocation */
    double* x[HY_ISCENE_MAX_OBJ];
    double* v[HY_ISCENE_MAX_OBJ];
    double* f[HY_ISCENE_MAX_OBJ];
    int32_t hx[HY_ISCENE_MAX_OBJ], hv[HY_ISCENE_MAX_OBJ], hf[HY_ISCENE_MAX_OBJ];
    int npairs;                     /* this step's pairs */
    int pa[HY_ISCENE_MAX_PAIRS], pb[HY_ISCENE_MAX_PAIRS];
    int step;
    /* one buffer and handle per pair that has interacted (slot_ab: a < b) */
    int32_t nslots, cap_slots;
    int32_t* slot_ab;
    int32_t* slot_h;
    double** slot_buf;
} hy_iscene;

/* fem64: 64 blocks of about 3,000 particles (2,600-3,400) in a 4x4x4 pile;
 * contacts between pile neighbours come and go in epochs of 4 steps, from a
 * few to 31 at the peak (mid-run).
 * fem_bars: 30 blocks of `block` particles in 12 side-by-side bars (6 of
 * 3, 6 of 2) attached to a wall; each block is attached to its neighbours:
 * the next block of its bar and the block at the same place in the next
 * bar. A bar's cost per step swings by +-35% as it bends (its setup and
 * iterations: contacts and stiffness changes), out of phase between bars.
 * fem_independent: 64 blocks of 512-3,000 particles, never touching.
 * `block` is used by fem_bars only. */
hy_status hy_iscene_create(hy_iscene_kind kind, int block, const hy_fem_costs* costs, hy_iscene* out);
void hy_iscene_destroy(hy_iscene* sc);
const char* hy_iscene_name(hy_iscene_kind kind);

/* Run `steps` steps of a fresh copy of the scene on machine m under the
 * policy; makespan of each step into ms[] (modeled seconds), the state hash
 * into *hash, and stats summed over the steps into *sum (may be NULL).
 * `trace` (may be NULL) records the run. With `rec` (may be NULL) the run
 * replays that recording instead of the synthetic scene (its objects,
 * their particles, and per step the pairs that touched and each object's
 * measured time and CG iterations, the recording's steps repeating when
 * `steps` is longer): the time is split into assembly, one task per CG
 * iteration and update in the proportions of `costs`' measured lines for
 * that size; a pair's task costs CONTACT_SHARE of the smaller object's
 * assembly. `kind` then only names the scene. */
hy_status hy_iscene_run(hy_iscene_kind kind, int block, const hy_fem_costs* costs, const hy_irec* rec,
                        const hy_rt_machine* m, const char* policy, int steps, double* makespan, uint64_t* hash,
                        hy_rt_step_stats* sum, hy_rt_trace* trace);

/* Real work on real CPU PUs (runtime/team.h): `nobj` FEM blocks of
 * 512-1,000 particles (the fem_independent sizes' low end, so a run stays
 * short), never touching, each one "fem-step" task per step that runs
 * hy_fem_solve (HY_FEM_CG_ITERATIONS iterations) on its block. The PU list
 * is hy_rt_team_parse's ("cpu:1,cpu:1"). Wall seconds of each step into
 * wall[], the state hash of every block's positions and velocities into
 * *hash, steals summed into *steals; `trace` (may be NULL) records the
 * run on the real clock. */
hy_status hy_real_fem_run(int nobj, const char* pus, const char* policy, int steps, double* wall, uint64_t* hash,
                          int* steals, hy_rt_trace* trace);

#endif
