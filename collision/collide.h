/* Scene-level collision detection: one BVH per object over its swept
 * triangles, a sweep-and-prune over the objects' root boxes, self traversal
 * for the objects that can touch themselves (cloth), pair traversal between
 * objects that can meet (never two driven ones, never two static ones),
 * and the exact elementary tests (collision/ccd.h) on every candidate, run
 * as the jobs of the proximity framework (sched/proximity.h). The scene
 * comes as a view (collision/scene_view.h); vertex indices are global:
 * every object's vertices concatenated in object order. */
#ifndef HY_COLLISION_COLLIDE_H
#define HY_COLLISION_COLLIDE_H

#include <stdint.h>

#include "collision/bvh.h"
#include "collision/contact.h"
#include "collision/scene_view.h"
#include "collision/traverse.h"
#include "core/pool.h"
#include "hyphys/hyphys.h"
#include "sched/model.h"

struct hy_prox;

/* The impulse one rigid pair's contacts exchanged in a response round (the
 * length of the normal and friction impulse, N s), in the order applied. */
typedef struct hy_pair_impulse {
    int32_t a, b; /* object slots */
    double impulse;
} hy_pair_impulse;

typedef struct hy_collision_state {
    int32_t object_count; /* objects of the view this state was built for */
    int32_t vertex_count;
    /* the positions of the detection under way: a number unique in the
     * process (the devices' valid bit, collision/kernels.h), and per
     * modeled resource the number its twin's copy would hold */
    uint64_t positions_version;
    uint64_t resident_version[HY_SCHED_MAX_RESOURCES];
    unsigned char* object_deforms; /* per object: 1 when a round may move some of its vertices (free vertices) */
    hy_contact_list contacts; /* the response's last detection round, canonical order */
    /* the last response's rigid pair impulses (the engine's bonds read them) */
    hy_pair_impulse* pair_impulse;
    int64_t pair_impulse_count, pair_impulse_capacity;
    /* impact-zone scratch */
    int32_t* zone_parent;
    unsigned char* zone_member;
    double* zone_acc;
    int32_t* zone_obstacle;
    unsigned char* zone_pinned;
    /* detection */
    hy_bvh** bvh;        /* per object */
    hy_traverser* traverser;
    hy_candidates candidates;
    int32_t* order;      /* sweep-and-prune order of objects */
    hy_status* refit_status; /* per object: its last BVH update's status */
    double** refit_x;        /* per object: X0 then X1 of its last BVH update (NULL: none yet) */
    unsigned char* hit;  /* per candidate: exact test result */
    double* toi;         /* per candidate */
    double ms_refit, ms_traverse; /* of the last detect call */
    /* the proximity framework's jobs of the current detect call */
    hy_traverse_job* tjobs; /* traversal jobs (object self / object pairs) */
    double* tjob_distance;  /* contact distance per traversal job */
    int32_t tjob_count, tjob_capacity;
    hy_feature_pair* leaf; /* LEAF jobs in the order the framework numbered them */
    int32_t* leaf_tjob;    /* ... and the traversal job each came from */
    int64_t leaf_count, leaf_capacity;
    /* The rounds of one step (collision/collide_jobs.c): the response
     * detects several times over the same X0, each round's X1 moved only
     * where the last round's impulses moved vertices. */
    double *round_x0, *round_x1; /* X0 and X1 of the last detect call */
    int32_t* vertex_round;       /* per vertex: the round its X1 last changed */
    int32_t round;               /* detect calls since X0 last changed (1 = the first) */
    int64_t front_cap;           /* room in front_dev_cand / front_dev_exact */
    /* Front pairs whose TRAVERSE batch ran on a device with their LEAF jobs
     * (collision/leaf_resident.h): per front pair the candidates and exact
     * tests counted there (-1: its candidates are in the LEAF list); their
     * contacts are in dev_contacts (whose `front` is the front pair's id).
     * A GPU always runs its TRAVERSE batches so; a modeled device when
     * device_leaf_model is 1 (its host twin; tests). */
    int64_t *front_dev_cand, *front_dev_exact;
    struct hy_leaf_contact* dev_contacts;
    int64_t dev_count, dev_cap;
    int device_leaf_model;
    int64_t resident_fronts, resident_contacts; /* totals over the state's life */
    uint64_t* seen_version; /* per object: its tree's version at the last detect call */
    int64_t carried;        /* contacts the last detect call kept */
} hy_collision_state;

/* A collision state for the layout of view (its object and vertex
 * counts, triangles, thickness and HY_VIEW_SELF flags): *cs is kept when
 * it was made for as many objects, else destroyed and made again. */
hy_status hy_collision_state_sync(hy_collision_state** cs, const hy_scene_view* view);
void hy_collision_state_destroy(hy_collision_state* cs);

/* Every colliding feature pair of the motion X0 -> X1 (3 per global vertex
 * of view), appended to out (which the caller canonicalises). carry = 1:
 * out holds, in canonical order, the whole output of the call before over
 * the same X0 (the response's rounds); its contacts none of whose vertices
 * moved since are kept, the rest dropped, and only pairs with a moved
 * vertex are looked for and appended (node pairs with a moved node,
 * hy_traverse_only_moved); over another X0 out is emptied first. Traversal
 * and exact tests run as the jobs of the proximity framework prox; the
 * host's share on pool (NULL: the calling thread). */
hy_status hy_collide_detect(hy_collision_state* cs, const hy_scene_view* view, struct hy_prox* prox, hy_pool* pool,
                            const double* X0, const double* X1, int carry, hy_contact_list* out,
                            hy_step_stats* stats);

/* Calibration of one resource (`hyphys calibrate`): the scene's detection
 * between X0 and X1 is run once to make the jobs, then batches of its
 * TRAVERSE and LEAF jobs of growing size are timed (median of `repeats`) on
 * the resource: device < 0 the cpu resource (pool), device >= 0
 * the GPU cuda:device (hy_cuda_traverse_batch, hy_cuda_leaf_batch). Per job
 * kind, T(n) = setup + proc·n is fitted by least squares, n counting units
 * of work: node pairs tested for TRAVERSE (a batch of front pairs tests
 * thousands), elementary tests for LEAF, the units of the model
 * (sched/model.h). On a GPU the batches' host<->device copies are fitted
 * apart, against the batch's jobs: copies = c0 + upload·jobs; proc is then
 * fitted on the rest of the time and setup takes both intercepts. Seconds. */
#define HY_CALIB_POINTS 16
typedef struct hy_calib_kind {
    double setup, proc; /* fitted, seconds */
    double upload;      /* GPU: seconds of copies per job (fitted); 0 on the cpu */
    double r;           /* correlation of the points (n, T - copies) */
    double r_copy;      /* GPU: correlation of the points (jobs, copies); 0 on the cpu */
    int points;
    /* per batch size: units of work, median seconds (copies included), the
     * jobs in the batch and the median batch's seconds of copies */
    double n[HY_CALIB_POINTS], t[HY_CALIB_POINTS], jobs[HY_CALIB_POINTS], copy[HY_CALIB_POINTS];
} hy_calib_kind;

typedef struct hy_calibration {
    hy_calib_kind kind[2]; /* [HY_JOB_TRAVERSE], [HY_JOB_LEAF] */
    int64_t front, leaves; /* jobs the sample made */
} hy_calibration;

hy_status hy_collide_calibrate(hy_collision_state* cs, const hy_scene_view* view, struct hy_prox* prox,
                               hy_pool* pool, const double* X0, const double* X1, int device, int repeats,
                               hy_calibration* out);

#endif
