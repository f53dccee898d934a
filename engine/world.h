/* The world: objects, their state, and the step pipeline (internal). */
#ifndef HY_ENGINE_WORLD_H
#define HY_ENGINE_WORLD_H

#include <stdint.h>

#include "collision/contact.h"
#include "collision/scene_view.h"
#include "core/hash.h"
#include "core/hd.h"
#include "hyphys/hyphys.h"
#include "core/pool.h"
#include "solvers/bonds.h"
#include "solvers/cloth.h"
#include "solvers/rigid.h"

/* What an object is, fixed when it is added: its kind, topology, rest
 * shape and material. The kinds' own models (cloth springs, FEM elements)
 * hang from it. */
typedef struct hy_object_model {
    hy_object_kind kind;
    int32_t nv, nt;
    int32_t* tri;
    double* local;    /* body: vertices relative to the COM in body frame; obstacle: mesh frame */
    double thickness; /* m */
    double friction;
    double restitution;
    int gravity;
    hy_cloth_model* cloth;
    hy_mass_properties mass; /* body */
    double reach;            /* body: farthest vertex from its centre, m */
    /* obstacle: pose(t) = scripted motion applied to the initial pose */
    hy_v3 pos0, pivot;
    hy_quat q0;
    hy_motion motion;
    /* the kind's own model and scratch, which its table entry alone reads */
    void* kind_model;
} hy_object_model;

/* What changes from step to step: one block per object (this header, then
 * the four vertex arrays), allocated when the object is added and never
 * moved, so that a task can name it as its data argument
 * (hy_object_state_bytes says how long it is). */
typedef struct hy_object_state {
    /* world positions and velocities, and the candidate end of the step:
     * four arrays of 3 nv in the block, x1 and v1 swapped with x and v
     * when the step commits */
    double* x;
    double* v;
    double* x1;
    double* v1;
    /* rigid body: its pose and momentum, its effective inertia (zero
     * inverse parts while kinematic), sleep and the applied loads */
    hy_rigid_state body, body1;
    hy_rigid_inertia inertia;
    int32_t rest_steps; /* steps since its rest pose, all within the sleep drift of it */
    hy_v3 rest_x;       /* pose its rest window started from */
    hy_quat rest_q;
    int asleep;         /* not moved and not tested against sleepers or static obstacles */
    int32_t island;     /* asleep: the group it fell asleep with (a slot of that group) */
    int kinematic;      /* moved by its velocities only; inverse mass and inertia are 0 meanwhile */
    hy_v3 force, torque; /* applied for the next step (N, N m, world frame) */
    /* cloth: the rigid features its vertices rest on (engine/cloth_contact.c),
     * or NULL, and the last solve's contact constraints (room for 3 per vertex) */
    int32_t* rest_face;
    hy_cloth_constraint* cons;
    int32_t cons_count;
} hy_object_state;

typedef struct hy_object {
    uint32_t handle;     /* its id's index: the slot in the world's id table */
    uint32_t generation; /* its id's generation */
    int alive;
    char name[64];
    void* user_data; /* the caller's, never dereferenced */
    /* its kind's operations (engine/kinds.h) */
    const struct hy_kind_ops* ops;
    hy_object_model model;
    hy_object_state* state;
} hy_object;

/* Bytes of an object's state block (the header and its arrays). */
static inline size_t hy_object_state_bytes(int32_t nv) {
    return sizeof(hy_object_state) + 4 * 3 * sizeof(double) * (size_t)(nv > 0 ? nv : 0);
}

/* Object slots (engine/world.c), for the kinds' own add functions: reserve
 * a slot for an object of `kind` (its table entry set, the mesh's triangles
 * and vertices copied into its model, its state block allocated and
 * zeroed), then give it an id (cannot fail), or free it. */
hy_status hy_world_new_object(hy_world* w, hy_object_kind kind, hy_mesh_view m, hy_object** out, int32_t* slot);
hy_object_id hy_world_commit_object(hy_world* w, int32_t slot, const char* default_name);
void hy_object_free(hy_object* o);

/* Resolve an id that must name an object of `kind`; `what` names the
 * call in messages (HY_ERR_STALE_ID, HY_ERR_INVALID_ARG). */
hy_status hy_world_resolve_kind(const hy_world* w, hy_object_id id, hy_object_kind kind, const char* what,
                                hy_object** out);
/* The status of an id that did not resolve (hy_world_resolve's message
 * is already set). */
hy_status hy_world_resolve_status(const hy_world* w, hy_object_id id);

/* Checks of def fields for the kinds' add functions, naming `what.field`:
 * a non-zero finite quaternion (normalised copy out), a finite vector, a
 * finite value >= 0. */
hy_status hy_check_quat(const double q[4], const char* what, hy_quat* out);
hy_status hy_check_vec(const double* p, const char* what, const char* field);
hy_status hy_check_nonneg(double x, const char* what, const char* field);

/* Body: zero the inverse mass and inertia (kinematic) or make them again
 * from the mass properties (dynamic). */
void hy_body_kinematic_inertia(hy_object* o, int kinematic);

/* One entry of the id table: which object slot an id index names now. */
typedef struct hy_handle {
    int32_t slot;        /* index into hy_world.objects; -1 when free */
    uint32_t generation; /* of the object it names, or of the last one it named */
    int32_t next_free;   /* free list link; -1 ends it */
} hy_handle;

/* x (and v when not NULL) of a body's vertices for rigid state st. */
void hy_body_pose_vertices(hy_object* o, const hy_rigid_state* st, double* x, double* v);
/* After a substep's commit: wake the struck islands of sleepers and put to
 * sleep the groups that have rested for sleep_time (engine/sleep.c). */
hy_status hy_world_update_sleep(hy_world* w, double dt);
/* Before a substep: damp the slow bodies that touch something
 * (hy_world_def.rest_damping; engine/sleep.c). */
hy_status hy_world_damp_resting(hy_world* w, double dt);

struct hy_collision_state;
struct hy_prox;

struct hy_world {
    hy_world_def def;
    hy_pool* pool;
    /* live objects, dense, in insertion order (removal closes the gap):
     * collision and response see slots 0..object_count-1 only */
    hy_object* objects;
    int32_t object_count, object_capacity;
    /* the id table: ids index it, it names slots */
    hy_handle* handles;
    int32_t handle_count, handle_capacity, free_handle;
    /* contact events (engine/events.c): pairs of object slots found this
     * step, the last step's pairs as ids, and the public lists */
    int64_t* pair_keys; /* (slot a << 32) | slot b, a < b */
    int64_t pair_count, pair_capacity;
    hy_contact_pair* touching;
    int64_t touching_count, touching_capacity;
    hy_contact_pair* begin_events;
    int64_t begin_count, begin_capacity;
    hy_contact_pair* end_events;
    int64_t end_count, end_capacity;
    hy_bond_set bonds;
    double time;
    int64_t step_index;
    hy_step_stats stats;
    /* what collision sees of the objects (engine/collision_view.c) and its
     * own state, both laid out again when the objects change */
    hy_scene_view view;
    struct hy_collision_state* collision; /* built lazily on the first colliding step */
    /* contacts of the last substep's first detection round, canonical order */
    hy_contact* last_contacts;
    int64_t last_contact_count, last_contact_capacity;
    /* sleep's scratch (engine/sleep.c), per object slot */
    int32_t* sleep_parent;
    unsigned char* sleep_flag;
    double* sleep_box; /* 6 per slot: lo, hi */
    int32_t sleep_capacity;
    struct hy_links* links; /* interactions between solids (engine/links.h); made on first use */
    struct hy_prox* prox; /* the proximity framework collision runs through; made on first use */
    struct hy_integrator* integrator; /* the integrate phase's runtime (engine/integrate.h); made on first use */
    hy_sched_stats sched_stats; /* of the last step */
    hy_resource_stats resource_stats[32];
};

/* Create the default framework (cpu, lp, real clock) if there is none. */
hy_status hy_world_ensure_prox(hy_world* w);

/* The scene view and collision state (engine/collision_view.c): laid out
 * again when the objects changed (hy_world_collision_sync, engine/tools.h);
 * the step's part filled from the objects before a response over dt from
 * w->time; the response's corrected x1, v1 and body1 taken back. */
void hy_world_view_begin(hy_world* w, double dt);
void hy_world_view_end(hy_world* w);
/* One detection over X0 -> X1 (3 per vertex of the view) with the world's
 * framework and pool, into out (not canonical). */
hy_status hy_world_detect(hy_world* w, const double* X0, const double* X1, int carry, hy_contact_list* out,
                          hy_step_stats* st);

/* Obstacle pose at time t. */
void hy_obstacle_pose(const hy_object* o, double t, hy_v3* position, hy_quat* orientation);
/* x (and v when not NULL) of an obstacle's vertices at time t. */
void hy_obstacle_vertices(const hy_object* o, double t, double* x, double* v);
/* Resolve an id; NULL (and a HY_ERR_STALE_ID message) if stale. */
hy_object* hy_world_resolve(const hy_world* w, hy_object_id id);
/* The id of the object in a slot. */
static inline hy_object_id hy_world_slot_id(const hy_world* w, int32_t slot) {
    hy_object_id id = {w->objects[slot].handle, w->objects[slot].generation};
    return id;
}
/* The slot of a live id, or -1 (no message: a pair may outlive an object). */
static inline int32_t hy_world_live_slot(const hy_world* w, hy_object_id id) {
    if (id.generation == 0 || id.index >= (uint32_t)w->handle_count) return -1;
    const hy_handle* h = &w->handles[id.index];
    return h->slot >= 0 && h->generation == id.generation ? h->slot : -1;
}

/* Contact events (engine/events.c): forget this step's pairs; note the
 * object pairs of contacts (global vertex pairs through the scene view);
 * after the step, make the begin / end / touching lists. */
void hy_events_clear_step(hy_world* w);
hy_status hy_events_note(hy_world* w, const hy_contact* contacts, int64_t count);
hy_status hy_events_finish_step(hy_world* w);
void hy_events_free(hy_world* w);

#endif
