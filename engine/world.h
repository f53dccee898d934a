/* The world: objects, their state, and the step pipeline (internal). */
#ifndef HY_ENGINE_WORLD_H
#define HY_ENGINE_WORLD_H

#include <stdint.h>

#include "engine/hd.h"
#include "hyphys/hyphys.h"
#include "sched/pool.h"
#include "solvers/bonds.h"
#include "solvers/cloth.h"
#include "solvers/rigid.h"

typedef struct hy_object {
    hy_object_kind kind;
    uint32_t generation;
    int alive;
    char name[64];
    /* topology (what the object is) */
    int32_t nv, nt;
    int32_t* tri;
    double* local;    /* body: vertices relative to the COM in body frame; obstacle: mesh frame */
    double thickness; /* m */
    double friction;
    /* state (what changes per step): world positions and velocities */
    double* x;
    double* v;
    /* candidate end-of-step state */
    double* x1;
    double* v1;
    /* cloth */
    hy_cloth_model* cloth;
    int32_t* rest_face;         /* per vertex: the rigid features it rests on (engine/cloth_contact.c), or NULL */
    hy_cloth_constraint* cons;  /* the last solve's contact constraints (room for 3 per vertex) */
    int32_t cons_count;
    /* rigid body */
    hy_mass_properties mass;
    hy_rigid_inertia inertia;
    hy_rigid_state body, body1;
    int32_t rest_steps; /* body: steps since its rest pose, all within the sleep drift of it */
    hy_v3 rest_x;       /* body: pose its rest window started from */
    hy_quat rest_q;
    double reach;       /* body: farthest vertex from its centre, m */
    int asleep;         /* body: not moved and not tested against sleepers or static obstacles */
    int32_t island;     /* body, asleep: the group it fell asleep with (a slot of that group) */
    double restitution;
    int gravity;
    /* obstacle: pose(t) = scripted motion applied to the initial pose */
    hy_v3 pos0, pivot;
    hy_quat q0;
    hy_motion motion;
} hy_object;

/* A static obstacle (no scripted motion) or a sleeping body: two of these
 * cannot meet, so collision detection skips such pairs. */
static inline int hy_object_is_static(const hy_object* o) {
    if (o->kind == HY_OBJECT_BODY) return o->asleep;
    if (o->kind != HY_OBJECT_OBSTACLE) return 0;
    const double *lv = o->motion.linear_velocity, *av = o->motion.angular_velocity;
    return lv[0] == 0.0 && lv[1] == 0.0 && lv[2] == 0.0 && av[0] == 0.0 && av[1] == 0.0 && av[2] == 0.0;
}

/* x (and v when not NULL) of a body's vertices for rigid state st. */
void hy_body_pose_vertices(hy_object* o, const hy_rigid_state* st, double* x, double* v);
/* After a substep's commit: wake the struck islands of sleepers and put to
 * sleep the groups that have rested for sleep_time (engine/sleep.c). */
hy_status hy_world_update_sleep(hy_world* w, double dt);

struct hy_collision_state;
struct hy_prox;

struct hy_world {
    hy_world_def def;
    hy_pool* pool;
    hy_object* objects;
    int32_t object_count, object_capacity;
    hy_bond_set bonds;
    double time;
    int64_t step_index;
    hy_step_stats stats;
    struct hy_collision_state* collision; /* built lazily on the first colliding step */
    /* contacts of the last substep's first detection round, canonical order */
    struct hy_contact* last_contacts;
    int64_t last_contact_count, last_contact_capacity;
    int detect_round; /* detection calls so far in this substep */
    /* sleep's scratch (engine/sleep.c), per object slot */
    int32_t* sleep_parent;
    unsigned char* sleep_flag;
    int32_t sleep_capacity;
    struct hy_prox* prox; /* the proximity framework collision runs through; made on first use */
    hy_sched_stats sched_stats; /* of the last step */
    hy_resource_stats resource_stats[32];
};

/* Create the default framework (cpu, lp, real clock) if there is none. */
hy_status hy_world_ensure_prox(hy_world* w);

/* Obstacle pose at time t. */
void hy_obstacle_pose(const hy_object* o, double t, hy_v3* position, hy_quat* orientation);
/* Resolve an id; NULL (and a HY_ERR_STALE_ID message) if stale. */
hy_object* hy_world_resolve(const hy_world* w, hy_object_id id);

/* 64-bit FNV-1a of n bytes, continuing from h (start from
 * HY_FNV1A_INIT): the state hash's and the recordings' (engine/export.c). */
#define HY_FNV1A_INIT 14695981039346656037ull
uint64_t hy_fnv1a(uint64_t h, const void* data, size_t n);

#endif
