/* hyphys — physics simulation engine: the public C API.
 *
 * This is the only header an embedding program includes. It compiles alone as
 * C11 and as C++. Objects live in a world and are named by small value ids
 * ({index, generation}); a stale id is reported, never dereferenced.
 *
 * Threads: a world may be used from one thread at a time. hy_last_error() is
 * thread-local. Units are SI (metres, kilograms, seconds) throughout.
 */
#ifndef HYPHYS_HYPHYS_H
#define HYPHYS_HYPHYS_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define HY_API
#elif defined(HY_BUILDING_LIBRARY)
#define HY_API __attribute__((visibility("default")))
#else
#define HY_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define HY_VERSION_MAJOR 0
#define HY_VERSION_MINOR 1
#define HY_VERSION_PATCH 0

/* ---------------------------------------------------------------- status */

/* Every fallible call returns a hy_status; HY_OK is 0. On failure
 * hy_last_error() holds a message naming the file, line, object and rule. */
typedef enum hy_status {
    HY_OK = 0,
    HY_ERR_INVALID_ARG = 1, /* a NULL pointer, an out-of-range value */
    HY_ERR_BAD_DEF = 2,     /* a def not initialised by its _default() */
    HY_ERR_STALE_ID = 3,    /* the object was removed or never existed */
    HY_ERR_IO = 4,          /* a file could not be opened or read */
    HY_ERR_PARSE = 5,       /* malformed scene, mesh or CSV */
    HY_ERR_NUMERIC = 6,     /* NaN/inf appeared; last good state kept */
    HY_ERR_NOMEM = 7,
    HY_ERR_UNSUPPORTED = 8, /* a feature this build or machine lacks */
    HY_ERR_INTERNAL = 9,
    HY_ERR_OVERLAP = 10     /* objects intersect or lie closer than their contact distance */
} hy_status;

/* Message of the last failure on this thread ("" if none). Valid until the
 * next failing call on the same thread. */
HY_API const char* hy_last_error(void);
/* Short constant name of a status ("HY_ERR_PARSE"). */
HY_API const char* hy_status_name(hy_status s);

/* ----------------------------------------------------------- memory */

/* An allocator of the host program (as in Box2D v3): every block hyphys
 * allocates for itself (worlds, objects, meshes, collision and solver
 * scratch) comes from alloc and goes back through free_fn. alloc returns
 * `size` bytes aligned to `alignment` (a power of two, >= 16), or NULL
 * when it cannot. Both may be called from the world's worker threads at
 * once. Memory that the libraries hyphys uses allocate for themselves
 * (cJSON, CHOLMOD, OpenBLAS, the CUDA runtime) does not pass through it. */
typedef void* hy_alloc_fn(size_t size, size_t alignment, void* user_context);
typedef void hy_free_fn(void* block, void* user_context);
/* Install the allocator for the whole process; both NULL: the C library's
 * again (the default). Only while hyphys holds no memory (before anything
 * is created, or once all is destroyed) and no hyphys call runs:
 * HY_ERR_INVALID_ARG otherwise, and with only one of the two. */
HY_API hy_status hy_set_allocator(hy_alloc_fn* alloc, hy_free_fn* free_fn, void* user_context);
/* Blocks hyphys holds now, from whichever allocator. */
HY_API hy_status hy_get_allocation_count(int64_t* out);

/* ------------------------------------------------------------------ ids */

typedef struct hy_world hy_world;

/* Ids are small values, {index, generation}, handed out by the *_add
 * calls. A removed object's id goes stale: every call given it returns
 * HY_ERR_STALE_ID, even after its index is reused (the generation grows on
 * each removal). {0, 0} never names a live object: an id struct zeroed is a
 * safe "none".
 *
 * Typed ids say at compile time what kind of object a call takes:
 * hy_body_id for rigid bodies, hy_cloth_id for cloths, hy_obstacle_id for
 * obstacles, hy_solid_id for deformable solids (FEM and mass-spring). hy_object_id names an object
 * of any kind; the typed ids widen to it with hy_body_object() and the
 * like, and hy_object_as_body() and the like narrow it back, checking the
 * kind. A typed id and its object id share index and generation. */
typedef struct hy_object_id {
    uint32_t index;      /* slot in the world's id table */
    uint32_t generation; /* 0 never names a live object */
} hy_object_id;

typedef struct hy_body_id {
    uint32_t index;
    uint32_t generation;
} hy_body_id;

typedef struct hy_cloth_id {
    uint32_t index;
    uint32_t generation;
} hy_cloth_id;

typedef struct hy_obstacle_id {
    uint32_t index;
    uint32_t generation;
} hy_obstacle_id;

typedef struct hy_solid_id { /* a deformable solid: FEM or mass-spring */
    uint32_t index;
    uint32_t generation;
} hy_solid_id;

typedef enum hy_object_kind {
    HY_OBJECT_CLOTH = 1,
    HY_OBJECT_BODY = 2,
    HY_OBJECT_OBSTACLE = 3,
    HY_OBJECT_FEM = 4,        /* corotational finite elements on a tet mesh (scenes: "type": "fem") */
    HY_OBJECT_MASS_SPRING = 5 /* springs on a tet mesh's edges (scenes: "type": "massspring") */
} hy_object_kind;

/* Widening: always valid (a stale typed id gives a stale object id). */
static inline hy_object_id hy_body_object(hy_body_id id) {
    hy_object_id o = {id.index, id.generation};
    return o;
}
static inline hy_object_id hy_cloth_object(hy_cloth_id id) {
    hy_object_id o = {id.index, id.generation};
    return o;
}
static inline hy_object_id hy_obstacle_object(hy_obstacle_id id) {
    hy_object_id o = {id.index, id.generation};
    return o;
}
static inline hy_object_id hy_solid_object(hy_solid_id id) {
    hy_object_id o = {id.index, id.generation};
    return o;
}
/* 1 when two ids name the same object (same index and generation). */
static inline int hy_object_id_equal(hy_object_id a, hy_object_id b) {
    return a.index == b.index && a.generation == b.generation;
}

/* ----------------------------------------------------------------- meshes */

/* A triangle mesh owned by hyphys (from a generator or a file). */
typedef struct hy_mesh hy_mesh;

/* Borrowed view of triangle data; functions taking it copy what they need. */
typedef struct hy_mesh_view {
    const double* positions; /* 3 * vertex_count, metres */
    const int32_t* triangles; /* 3 * triangle_count, 0-based vertex indices */
    int32_t vertex_count;
    int32_t triangle_count;
} hy_mesh_view;

HY_API void hy_mesh_destroy(hy_mesh* mesh);
HY_API hy_mesh_view hy_mesh_get_view(const hy_mesh* mesh);

/* Generators. All return HY_ERR_INVALID_ARG for sizes out of range.
 * grid: nx * ny vertices in the x-z plane centred at the origin, y up. */
HY_API hy_status hy_mesh_grid(int nx, int ny, double size_x, double size_z, hy_mesh** out);
HY_API hy_status hy_mesh_uv_sphere(double radius, int slices, int stacks, hy_mesh** out);
HY_API hy_status hy_mesh_icosphere(double radius, int subdivisions, hy_mesh** out);
HY_API hy_status hy_mesh_box(double hx, double hy, double hz, int subdivisions, hy_mesh** out);
/* cone: apex at +height/2 on y, base disc at -height/2, closed. */
HY_API hy_status hy_mesh_cone(double radius, double height, int slices, hy_mesh** out);
HY_API hy_status hy_mesh_torus(double major_radius, double minor_radius, int major_segments,
                               int minor_segments, hy_mesh** out);
/* bowl: an open hemispherical shell (inner surface), rim at y = 0, opening up. */
HY_API hy_status hy_mesh_bowl(double radius, int slices, int stacks, hy_mesh** out);

/* Wavefront OBJ (v and f records; polygons are fanned into triangles; texture
 * and normal indices are accepted and ignored). Errors name file and line. */
HY_API hy_status hy_mesh_load_obj(const char* path, hy_mesh** out);

/* ------------------------------------------------------------------ world */

#define HY_DEF_COOKIE 0x48595048u /* "HYPH": set by every *_def_default() */

/* A task system of the host program (as in Box2D v3): the world hands it
 * its parallel loops instead of running its own worker threads.
 *
 * hy_task_fn runs the items [begin, end) of a loop; `worker` is the index
 * of the host's thread running it, in [0, hy_world_def.threads): two calls
 * running at the same time must have different workers (the world keeps
 * scratch per worker). */
typedef void hy_task_fn(int64_t begin, int64_t end, int32_t worker, void* task_context);
/* Run task over [0, item_count), split into ranges of at least min_range
 * items (the last may be shorter) in any order, on the host's workers,
 * passing task_context through. Return a handle finish_task waits on, or
 * NULL after running every item before returning. Called from the thread
 * that steps the world, never from inside a task. */
typedef void* hy_enqueue_task_fn(hy_task_fn* task, int64_t item_count, int64_t min_range, void* task_context,
                                 void* user_context);
/* Wait until every item of the task enqueue_task returned user_task for
 * has run. */
typedef void hy_finish_task_fn(void* user_task, void* user_context);

typedef struct hy_world_def {
    double gravity[3];      /* m/s^2, default (0, -9.81, 0) */
    double time_step;       /* seconds per hy_world_step, > 0, default 1/60 */
    int32_t substeps;       /* solver substeps per step, 1..64, default 1 */
    int32_t threads;        /* worker threads, 1..256; 0 = one per core. default 0 */
    int32_t cg_max_iterations; /* cloth CG iteration cap, default 200 */
    double cg_tolerance;    /* cloth CG: stop when ||b - A dv|| <= cg_tolerance * ||b||, default 1e-6 */
    int32_t collisions;     /* 1 = run collision detection and response, default 1 */
    double sleep_time;      /* s: a group of rigid bodies in contact (or bonded) that have all been
                               at rest this long falls asleep: it is neither moved nor tested
                               against other sleepers or static obstacles, and takes no impulse,
                               until a moving object about to reach it wakes it (with the sleepers
                               that touched it when they fell asleep; one that the mover does not
                               move sleeps again once no mover is near); 0 = never. default 0.5 */
    double sleep_velocity;  /* m/s: under it a body counts as at rest (its spin times its size
                               too), as it does jittering within a quarter of sleep_velocity x
                               sleep_time of one pose; faster, an awake body wakes the sleepers
                               it is about to reach. default 0.05 */
    double rolling_resistance; /* m, >= 0: where two rigid objects press on each other, the
                               torque against their relative turning (rolling, and spinning
                               about the normal) is at most this times the pressing force, the
                               lever arm of a contact whose pressure sits ahead of its point (a
                               few mm for hard balls on a hard floor). 0 = none: a ball rolls
                               for ever. default 0 */
    double bounce_speed;    /* m/s, >= 0: rigid contacts that approach slower than this do not
                               bounce (restitution acts above it). A body resting on another
                               approaches it by gravity x time_step every step, and bouncing
                               that back kept it hopping in place for ever. default 0.1 */
    double rest_damping;    /* 1/s, >= 0: a body awake that touches something (a contact at the
                               end of the last step) and moves slower than ten times
                               sleep_velocity loses this fraction of its velocity and spin per
                               second (v /= 1 + rest_damping dt): what a resting body still does
                               is jitter, which this ends so that it can sleep. Bodies in flight,
                               and faster ones, keep their motion. 0 = none, default 0 */
    /* The host's task system: both or neither (default NULL: the world's own
     * pool of `threads` workers). With them, `threads` is the host's worker
     * count (1..256, not 0) and the world starts no thread. The state does
     * not depend on how the host splits or orders the ranges: every loop's
     * results are combined in a fixed order. */
    hy_enqueue_task_fn* enqueue_task;
    hy_finish_task_fn* finish_task;
    void* user_task_context; /* passed to both */
    uint32_t cookie;        /* HY_DEF_COOKIE; do not touch */
} hy_world_def;

HY_API hy_world_def hy_world_def_default(void);
HY_API hy_status hy_world_create(const hy_world_def* def, hy_world** out);
HY_API void hy_world_destroy(hy_world* world);
HY_API hy_status hy_world_get_def(const hy_world* world, hy_world_def* out);

/* Scripted motion of an obstacle: rigid, about `pivot` (world frame). */
typedef struct hy_motion {
    double linear_velocity[3];  /* m/s */
    double angular_velocity[3]; /* rad/s, axis * rate, about the pivot */
} hy_motion;

/* ------------------------------------------------------------------ cloth */

typedef struct hy_cloth_def {
    hy_mesh_view mesh;           /* rest shape, copied */
    double position[3];          /* translation applied to the mesh, m */
    double orientation[4];       /* rotation applied to the mesh, quaternion (w,x,y,z) */
    double density;              /* kg/m^2 of surface, > 0, default 0.1 */
    double stretch_stiffness;    /* N/m per spring, >= 0, default 1000 */
    double shear_stiffness;      /* N/m, >= 0, default 100 */
    double bend_stiffness;       /* N/m, >= 0, default 1 */
    double damping;              /* spring damping, s * stiffness, >= 0, default 0.01 */
    double air_damping;          /* 1/s drag on velocity, >= 0, default 0.02 */
    double thickness;            /* collision thickness, m, >= 0, default 0.002 */
    double friction;             /* Coulomb coefficient, >= 0, default 0.3 */
    const int32_t* pinned;       /* vertex indices held fixed, copied; may be NULL */
    int32_t pinned_count;
    uint32_t cookie;
} hy_cloth_def;

HY_API hy_cloth_def hy_cloth_def_default(void);
/* Add a cloth; *out names it. HY_ERR_BAD_DEF, HY_ERR_INVALID_ARG (the
 * message names the field), HY_ERR_NOMEM. */
HY_API hy_status hy_cloth_add(hy_world* world, const hy_cloth_def* def, hy_cloth_id* out);
/* Remove it (see hy_object_remove). */
HY_API hy_status hy_cloth_remove(hy_world* world, hy_cloth_id id);

/* ------------------------------------------------------------- rigid body */

typedef struct hy_body_def {
    hy_mesh_view mesh;           /* closed surface in body frame, copied */
    double density;              /* kg/m^3, > 0, default 1000 */
    double position[3];          /* where the mesh origin goes, m */
    double orientation[4];       /* quaternion (w,x,y,z), normalised on add */
    double linear_velocity[3];   /* m/s, of the centre of mass */
    double angular_velocity[3];  /* rad/s, world frame */
    double restitution;          /* 0..1, default 0.5 */
    double friction;             /* >= 0, default 0.4 */
    double thickness;            /* collision thickness, m, >= 0, default 0.001 */
    int32_t gravity;             /* 1 = affected by gravity, default 1 */
    uint32_t cookie;
} hy_body_def;

HY_API hy_body_def hy_body_def_default(void);
HY_API hy_status hy_body_add(hy_world* world, const hy_body_def* def, hy_body_id* out);
/* Remove it (see hy_object_remove): its bonds go with it. */
HY_API hy_status hy_body_remove(hy_world* world, hy_body_id id);

/* Mass properties of a closed mesh at a density (divergence theorem).
 * inertia is about the centre of mass, in the mesh frame, row-major 3x3. */
typedef struct hy_mass_properties {
    double volume; /* m^3 */
    double mass;   /* kg */
    double center[3];
    double inertia[9];
} hy_mass_properties;
HY_API hy_status hy_mesh_mass_properties(hy_mesh_view mesh, double density, hy_mass_properties* out);

/* Body state in the world frame. The position is the centre of mass's
 * (the def's position plus the rotated offset of the mesh's centre of
 * mass); the orientation is (w,x,y,z). Any out pointer may be NULL. Every
 * hy_body_* call returns HY_ERR_STALE_ID for a removed body and
 * HY_ERR_INVALID_ARG for an id of another kind or a NULL/non-finite input. */
HY_API hy_status hy_body_get_transform(const hy_world* world, hy_body_id id, double position[3],
                                       double orientation[4]);
/* Move the body (a teleport: no sweep from the old pose, the next step's
 * collision detection starts from the new one). The orientation is
 * normalised; a zero quaternion is HY_ERR_INVALID_ARG. Velocities are kept.
 * Wakes the body's island. */
HY_API hy_status hy_body_set_transform(hy_world* world, hy_body_id id, const double position[3],
                                       const double orientation[4]);
/* Whether the body is asleep (hy_world_def.sleep_time): out 1 or 0. */
HY_API hy_status hy_body_is_asleep(const hy_world* world, hy_body_id id, int32_t* out);
/* Velocity of the centre of mass (m/s) and angular velocity (rad/s, world
 * frame). Either pointer may be NULL. */
HY_API hy_status hy_body_get_velocity(const hy_world* world, hy_body_id id, double linear[3],
                                      double angular[3]);
/* Set both (NULL keeps that one). Wakes the body's island. */
HY_API hy_status hy_body_set_velocity(hy_world* world, hy_body_id id, const double linear[3],
                                      const double angular[3]);
HY_API hy_status hy_body_get_angular_momentum(const hy_world* world, hy_body_id id, double out[3]);
HY_API hy_status hy_body_get_mass_properties(const hy_world* world, hy_body_id id, hy_mass_properties* out);

/* A force (N) acting at a world point (m; NULL: the centre of mass) over
 * the whole next step, as gravity does: the step adds force/m * h to the
 * velocity and (point - centre) x force, through the world-frame inverse
 * inertia, * h to the angular velocity in each substep of length h. Forces
 * and torques add up until that step, which clears them. Ignored by
 * kinematic bodies. Wakes the body's island. */
HY_API hy_status hy_body_apply_force(hy_world* world, hy_body_id id, const double force[3], const double point[3]);
/* A torque (N m, world frame) over the whole next step, like a force. */
HY_API hy_status hy_body_apply_torque(hy_world* world, hy_body_id id, const double torque[3]);
/* An impulse (N s) at a world point (NULL: the centre of mass), now: the
 * linear momentum changes by exactly `impulse` (velocity by impulse/m) and
 * the angular momentum by (point - centre) x impulse. HY_ERR_INVALID_ARG
 * on a kinematic body (its velocity is the caller's to set). Wakes the
 * body's island. */
HY_API hy_status hy_body_apply_impulse(hy_world* world, hy_body_id id, const double impulse[3],
                                       const double point[3]);
/* An angular impulse (N m s, world frame), now. */
HY_API hy_status hy_body_apply_angular_impulse(hy_world* world, hy_body_id id, const double impulse[3]);

/* Kinematic bodies are driven by the caller: each step moves them by the
 * velocities hy_body_set_velocity gave them (or they had), untouched by
 * gravity, forces and contacts, as if of infinite mass; what they strike
 * is pushed. They do not collide with obstacles or other kinematic bodies.
 * 1 makes the body kinematic, 0 dynamic again (with its mass and the
 * velocities it has). */
HY_API hy_status hy_body_set_kinematic(hy_world* world, hy_body_id id, int32_t kinematic);
HY_API hy_status hy_body_is_kinematic(const hy_world* world, hy_body_id id, int32_t* out);

/* Breakable bond holding two bodies together (fracture). Breaks when the
 * impulse it must carry in one step exceeds strength (N*s). */
typedef struct hy_bond_def {
    hy_body_id a, b;
    double anchor[3];   /* world point where the bond acts, m */
    double strength;    /* N*s, > 0, default 1 */
    uint32_t cookie;
} hy_bond_def;
HY_API hy_bond_def hy_bond_def_default(void);
HY_API hy_status hy_bond_add(hy_world* world, const hy_bond_def* def);
/* Bonds still intact. */
HY_API hy_status hy_world_get_bond_count(const hy_world* world, int32_t* out);

/* --------------------------------------------------------------- obstacle */

typedef struct hy_obstacle_def {
    hy_mesh_view mesh;         /* copied */
    double position[3];        /* where the mesh origin goes, m */
    double orientation[4];     /* quaternion (w,x,y,z) */
    double pivot[3];           /* world point the scripted rotation turns about */
    hy_motion motion;          /* zero for a static obstacle */
    double friction;           /* >= 0, default 0.5 */
    double thickness;          /* m, >= 0, default 0.001 */
    uint32_t cookie;
} hy_obstacle_def;

HY_API hy_obstacle_def hy_obstacle_def_default(void);
HY_API hy_status hy_obstacle_add(hy_world* world, const hy_obstacle_def* def, hy_obstacle_id* out);
/* Remove it (see hy_object_remove). */
HY_API hy_status hy_obstacle_remove(hy_world* world, hy_obstacle_id id);

/* ------------------------------------------------------ deformable solid */

/* A volumetric solid on a tetrahedral mesh: corotational linear finite
 * elements (kind HY_OBJECT_FEM) or a spring on every edge of the mesh
 * (HY_OBJECT_MASS_SPRING), stepped by implicit Euler solved with CG (the
 * world's cg_max_iterations and cg_tolerance). The mesh's boundary
 * triangles are its collision surface; contacts with other solids couple
 * them in the next step's solve (see docs/guide/SCENES.md). */
typedef struct hy_solid_def {
    hy_object_kind kind;       /* HY_OBJECT_FEM (default) or HY_OBJECT_MASS_SPRING */
    const double* positions;   /* 3 * vertex_count, m: the mesh in its own frame, copied */
    int32_t vertex_count;      /* > 0 */
    const int32_t* tets;       /* 4 * tet_count 0-based vertex indices, each element of positive
                                  volume (right-handed), copied */
    int32_t tet_count;         /* > 0 */
    double position[3];        /* where the mesh origin goes, m; the placed mesh is the rest shape */
    double orientation[4];     /* quaternion (w,x,y,z), normalised on add */
    double young;              /* FEM: Young's modulus, Pa, > 0, default 1e5 */
    double poisson;            /* FEM: Poisson ratio, [0, 0.5), default 0.3 */
    double spring_stiffness;   /* mass-spring: N/m per edge, > 0, default 1e3 */
    double density;            /* kg/m^3, > 0, default 1000 */
    double damping_mass;       /* 1/s: force -alpha M v, >= 0, default 0 */
    double damping_stiffness;  /* s: FEM Rayleigh beta, mass-spring spring damping, >= 0, default 0.01 */
    double thickness;          /* collision thickness, m, >= 0, default 0.002 */
    double friction;           /* >= 0, default 0.3 */
    const int32_t* fixed;      /* vertices held where they are placed, copied; may be NULL */
    int32_t fixed_count;
    uint32_t cookie;
} hy_solid_def;

HY_API hy_solid_def hy_solid_def_default(void);
/* Add a solid; *out names it. HY_ERR_BAD_DEF; HY_ERR_INVALID_ARG naming
 * the element, vertex or field at fault (a degenerate or inverted element,
 * an index out of range, a material out of range); HY_ERR_NOMEM. */
HY_API hy_status hy_solid_add(hy_world* world, const hy_solid_def* def, hy_solid_id* out);
/* Remove it (see hy_object_remove): its attachments go with it. */
HY_API hy_status hy_solid_remove(hy_world* world, hy_solid_id id);
/* Attach solid b to solid a: every vertex of a within `tolerance` (m,
 * >= 0) of a vertex of b, where they are now, is tied to the nearest such
 * one by a spring of rest length 0 and `stiffness` N/m (> 0); the two then
 * step in one implicit solve and do not collide with each other (the
 * blocks of a bar sharing a face). *pair_count (may be NULL) gets the
 * number of vertex pairs tied. HY_ERR_INVALID_ARG naming the objects:
 * not two distinct solids, a bad tolerance or stiffness, no vertices
 * within the tolerance; HY_ERR_STALE_ID; HY_ERR_NOMEM. */
HY_API hy_status hy_solid_attach(hy_world* world, hy_solid_id a, hy_solid_id b, double tolerance, double stiffness,
                                 int32_t* pair_count);

/* -------------------------------------------------------- any object */

/* Remove an object between steps: it is freed, its id and every copy of it
 * go stale (HY_ERR_STALE_ID, also for a second remove), and its index may
 * be handed to a later object with a higher generation. The other objects
 * keep their ids and their order. A body's bonds are removed with it.
 * Every sleeping body wakes (what rested on the object may fall); contact
 * pairs that involved it end without an end event. The collision
 * structures are rebuilt at the next step (as after an add). */
HY_API hy_status hy_object_remove(hy_world* world, hy_object_id id);

/* Narrowing: the typed id of an object of that kind; HY_ERR_INVALID_ARG
 * (naming the object and its kind) for another kind, HY_ERR_STALE_ID for a
 * removed object. */
HY_API hy_status hy_object_as_body(const hy_world* world, hy_object_id id, hy_body_id* out);
HY_API hy_status hy_object_as_cloth(const hy_world* world, hy_object_id id, hy_cloth_id* out);
HY_API hy_status hy_object_as_obstacle(const hy_world* world, hy_object_id id, hy_obstacle_id* out);
/* FEM or mass-spring. */
HY_API hy_status hy_object_as_solid(const hy_world* world, hy_object_id id, hy_solid_id* out);

/* A pointer of the caller's, kept with the object and never dereferenced
 * by hyphys (NULL until set). */
HY_API hy_status hy_object_set_user_data(hy_world* world, hy_object_id id, void* user_data);
HY_API hy_status hy_object_get_user_data(const hy_world* world, hy_object_id id, void** out);

HY_API hy_status hy_object_get_kind(const hy_world* world, hy_object_id id, hy_object_kind* out);
HY_API hy_status hy_object_get_name(const hy_world* world, hy_object_id id, const char** out);
HY_API hy_status hy_object_set_name(hy_world* world, hy_object_id id, const char* name);
/* Collision thickness of an object (its def's thickness, m). Two objects
 * collide within the mean of their thicknesses. */
HY_API hy_status hy_object_get_thickness(const hy_world* world, hy_object_id id, double* out);
/* Number of live objects and the id of the i-th (in insertion order;
 * removing an object shifts the later ones down by one). */
HY_API hy_status hy_world_get_object_count(const hy_world* world, int32_t* out);
HY_API hy_status hy_world_get_object(const hy_world* world, int32_t i, hy_object_id* out);
/* Tetrahedra of a volumetric object (FEM or mass-spring); 0 for the
 * surface kinds. */
HY_API hy_status hy_object_get_tet_count(const hy_world* world, hy_object_id id, int32_t* out);
HY_API hy_status hy_object_get_mesh(const hy_world* world, hy_object_id id, int32_t* vertex_count,
                                    int32_t* triangle_count, const int32_t** triangles);
/* World-frame vertex positions / velocities, 3 * vertex_count doubles, copied
 * into `out` (capacity in doubles). */
HY_API hy_status hy_object_get_positions(const hy_world* world, hy_object_id id, double* out, size_t capacity);
HY_API hy_status hy_object_get_velocities(const hy_world* world, hy_object_id id, double* out, size_t capacity);

/* ------------------------------------------------------------------- step */

/* Phases of one step, timed separately in hy_step_stats. */
typedef enum hy_phase {
    HY_PHASE_INTEGRATE = 0, /* solvers: predict x1, v1 */
    HY_PHASE_REFIT,         /* collision: BVH refit over swept boxes */
    HY_PHASE_TRAVERSE,      /* collision: BVH pair traversal + elementary tests */
    HY_PHASE_RESPONSE,      /* collision: impulses until collision free */
    HY_PHASE_COMMIT,        /* engine: commit state, bonds */
    HY_PHASE_COUNT
} hy_phase;

HY_API const char* hy_phase_name(hy_phase p);

typedef struct hy_step_stats {
    double ms[HY_PHASE_COUNT]; /* wall milliseconds per phase */
    double ms_total;
    int64_t step_index;        /* steps completed so far */
    int32_t cg_iterations;     /* summed over the step's implicit solves and substeps: one solve per
                                  cloth, per solid stepping alone, and per coupled group of solids
                                  (touching or attached solids step in one CG, whose iteration is
                                  a product over all of them) */
    int64_t candidates;        /* primitive pairs from BVH traversal */
    int64_t exact_tests;       /* elementary tests that passed the filters */
    int64_t contacts;          /* colliding feature pairs found */
    int32_t response_iterations;
    int32_t bonds_broken;      /* in this step */
    double cg_relative_residual; /* largest final ||b - A dv|| / ||b|| over those solves (0: none) */
    int32_t cg_capped;         /* those solves (x substeps) that ended short of cg_tolerance:
                                  at cg_max_iterations, or on a breakdown */
} hy_step_stats;

/* Advance the world by dt seconds (in (0, 1]) in `substeps` equal substeps
 * (1..64); HY_ERR_INVALID_ARG outside those ranges. A world's def carries
 * the scene's own choice (hy_world_get_def: time_step, substeps), which a
 * caller stepping at the scene's rate passes here. On HY_ERR_NUMERIC the
 * state is that of the last substep that stayed finite (with one substep:
 * as before the call) and the message names the object and vertex. */
HY_API hy_status hy_world_step(hy_world* world, double dt, int32_t substeps);
/* Stats of the last completed step; valid until the next step. */
HY_API hy_status hy_world_get_stats(const hy_world* world, hy_step_stats* out);
/* Triangles and vertices of every live object. */
HY_API hy_status hy_world_get_triangle_count(const hy_world* world, int32_t* out);
HY_API hy_status hy_world_get_vertex_count(const hy_world* world, int32_t* out);
/* Tetrahedra and vertices (particles) of every live volumetric object (FEM
 * and mass-spring). */
HY_API hy_status hy_world_get_tet_counts(const hy_world* world, int32_t* tetrahedra, int32_t* particles);
/* Worker threads the world steps with (the caller's thread included). */
HY_API hy_status hy_world_get_thread_count(const hy_world* world, int32_t* out);

/* A colliding feature pair found at the start of the last step's collision
 * response (before any impulse): a vertex against a triangle, or an edge
 * against an edge. */
typedef enum hy_contact_kind { HY_CONTACT_KIND_VERTEX_FACE = 0, HY_CONTACT_KIND_EDGE_EDGE = 1 } hy_contact_kind;

typedef struct hy_contact_info {
    hy_contact_kind kind;
    hy_object_id a, b;      /* the vertex's (or first edge's) object and the other side's; equal for self contact */
    int32_t vertex[4];      /* vertex-face: vertex, then the face's three; edge-edge: both ends of each edge
                               (indices within each object's own vertices) */
    double point[3];        /* where, at the start of the step: the vertex, or the first edge's midpoint (m) */
    double time_of_impact;  /* fraction of the step at which the features came within the thickness */
} hy_contact_info;

/* Contacts of the last step in their canonical order. Writes at most
 * capacity of them to out (out may be NULL when capacity is 0) and the
 * number there are to *count (more than capacity: call again with room).
 * With several substeps: those of the last substep. None after an object
 * was added or removed, or a restore, until the next step.
 * HY_ERR_INVALID_ARG on a NULL world or count, or out NULL with capacity > 0. */
HY_API hy_status hy_world_get_contacts(const hy_world* world, hy_contact_info* out, int64_t capacity,
                                       int64_t* count);

/* Two different objects that touch: a.index's slot comes first in the
 * world's object order. */
typedef struct hy_contact_pair {
    hy_object_id a, b;
} hy_contact_pair;

/* The last step's contact events between pairs of objects (self contact of
 * a cloth is not an event). A pair touches in a step when collision
 * detection found a contact between the two in any of its substeps, or
 * when it touched in the step before and both are now at rest (a sleeping
 * body on a static obstacle or another sleeper: not tested, still
 * touching). begin: pairs that touch and did not in the step before; end:
 * pairs that touched then and do not now (a pair whose object was removed
 * ends without an event); touching: every pair that touches. Each list is
 * in the world's object order. The arrays belong to the world and live
 * until the next step, remove or restore. */
typedef struct hy_contact_events {
    const hy_contact_pair* begin;
    int64_t begin_count;
    const hy_contact_pair* end;
    int64_t end_count;
    const hy_contact_pair* touching;
    int64_t touching_count;
} hy_contact_events;

/* Fill *out (all zero before the first step). HY_ERR_INVALID_ARG on NULL. */
HY_API hy_status hy_world_get_contact_events(const hy_world* world, hy_contact_events* out);

/* 64-bit FNV-1a hash of every object's positions and velocities (bit
 * patterns) in object order: equal hashes mean bit-identical states. */
HY_API hy_status hy_world_hash(const hy_world* world, uint64_t* out);

/* ---------------------------------------------------------- snapshots */

/* A snapshot is the world's whole changing state in a block of memory the
 * caller owns: every live object's positions, velocities and rigid state
 * (sleep, kinematic flag, pending forces), the bonds' broken flags, the
 * clock, the step count and the touching pairs the next contact events are
 * reckoned from. Restoring it and stepping on gives the states, to the
 * bit, of the run that went on from where it was taken (the same hashes).
 * What objects exist is not in it: restore needs the same live objects, by
 * id, as when it was taken (the same world, or one built again the same
 * way, as hy_scene_load does) and the same bonds; else HY_ERR_INVALID_ARG
 * naming what differs, and the world is unchanged. The format is this
 * build's own (a header checks it). */
/* Bytes hy_world_snapshot needs now. */
HY_API hy_status hy_world_snapshot_size(const hy_world* world, size_t* out);
/* Write the snapshot into buffer (capacity bytes; HY_ERR_INVALID_ARG when
 * short) and its size to *written (may be NULL). Between steps. */
HY_API hy_status hy_world_snapshot(const hy_world* world, void* buffer, size_t capacity, size_t* written);
/* Put the world back in the snapshot's state. HY_ERR_PARSE for a buffer
 * that is not a whole snapshot of this format. */
HY_API hy_status hy_world_restore(hy_world* world, const void* buffer, size_t size);

/* ----------------------------------------------------------------- checks */

/* A pair of triangles found by hy_world_find_overlaps. */
typedef struct hy_overlap {
    hy_object_id a, b;              /* a's slot <= b's; equal for two triangles of one cloth */
    int32_t triangle_a, triangle_b; /* triangle indices within each object's mesh */
    double distance;                /* metres; 0 when the triangles intersect */
} hy_overlap;

typedef enum hy_overlap_mode {
    HY_OVERLAP_INTERSECTING = 0, /* triangles that share a point (exact predicates, touching included) */
    HY_OVERLAP_CLEARANCE = 1     /* those, and triangles of two objects closer than the pair's contact
                                    distance (half the sum of their thicknesses) */
} hy_overlap_mode;

/* Tests the world's committed state, whole scene: triangles of different
 * objects (except obstacle against obstacle) and of one cloth (neighbours
 * that only meet at their shared vertices or edge do not count; a rigid
 * mesh is not tested against itself). Intersection is decided with exact
 * predicates; distances are in floating point. Writes the first `capacity`
 * pairs, in a fixed order, to pairs (NULL when capacity is 0) and the
 * total to *count. Serial, allocates its scratch, any thread while no step
 * runs. Returns HY_ERR_INVALID_ARG or HY_ERR_NOMEM; finding pairs is not
 * an error. */
HY_API hy_status hy_world_find_overlaps(const hy_world* world, hy_overlap_mode mode, hy_overlap* pairs,
                                        int64_t capacity, int64_t* count);

/* ------------------------------------------------------------- scheduling */

/* Collision detection runs as jobs of the hybrid proximity framework (Kim et
 * al. 2013): TRAVERSE jobs (BVH node pairs) and LEAF jobs (elementary tests)
 * handed to resources by a scheduling policy. The contacts and the state do
 * not depend on the policy, the resources or the clock. */
typedef struct hy_sched_def {
    const char* policy;    /* "lp" (default), "lau10", "tan09", "ws", "ws-exp", "exhaustive" */
    const char* devices;   /* comma list of cpu, cuda (every GPU present; none: left out, see
                              hy_sched_info.fell_back), cuda:N (GPU N; HY_ERR_INVALID_ARG when there is
                              no GPU N), model:NAME (built-in profile or .json file); default "cpu" */
    int32_t virtual_clock; /* 1: discrete-event clock, every batch charged its modeled time; default 0 */
    const char* profile;   /* profile file from `hyphys calibrate` (the real cpu / cuda resources); needed
                              with more than one resource or the virtual clock; NULL: none */
    const char* trace;     /* write Chrome/Perfetto trace events of every later step here; NULL: none */
    const char* fault;     /* "DEVICE@STEP": resource DEVICE (as hy_sched_resource.name gives it) fails at
                              its first batch in step STEP (counted from 1 by this world's steps) or later;
                              its jobs run elsewhere and the run goes on without it (hy_sched_info.failure).
                              Needs another resource. NULL: none */
    uint32_t cookie;
} hy_sched_def;

HY_API hy_sched_def hy_sched_def_default(void);
/* Replace the world's framework; on error the previous one stays.
 * HY_ERR_INVALID_ARG: an unknown policy, a device list entry that names
 * nothing (unknown, repeated, "cuda:N" with no GPU N), a resource without
 * the profile it needs; HY_ERR_IO / HY_ERR_PARSE: the profile or a model
 * file cannot be read, the trace file cannot be created. What was set up,
 * and whether a plain "cuda" entry found no GPU and was left out, is
 * hy_world_get_scheduling's to say. */
HY_API hy_status hy_world_set_scheduling(hy_world* world, const hy_sched_def* def);

#define HY_SCHED_INFO_RESOURCES 32

/* One resource the collision jobs run on. */
typedef struct hy_sched_resource {
    char name[64];   /* "cpu", "cuda:0", "model:gtx285" */
    int32_t modeled; /* 1 when its time is charged from a profile */
    int32_t retired; /* 1 when it failed during a step and was retired: it gets no more jobs */
} hy_sched_resource;

/* What the world's framework runs on: as hy_world_set_scheduling set it up,
 * or, before any call, the default the first step will use (lp, real
 * clock, cpu). */
typedef struct hy_sched_info {
    char policy[32];
    int32_t virtual_clock;
    int32_t resource_count; /* resources in use, >= 1 */
    hy_sched_resource resource[HY_SCHED_INFO_RESOURCES];
    /* 1 when the device list asked for what is not there and it was left
     * out: a "cuda" entry on a machine with no usable GPU (the jobs run on
     * the other resources, the cpu when none is left); 0 when every entry
     * was used as asked */
    int32_t fell_back;
    char fallback[192]; /* one line saying why ("cuda: no GPU present (...)"); "" when fell_back is 0 */
    /* resources that failed during a step (a GPU's error, or hy_sched_def.fault)
     * and were retired: their unfinished jobs ran on the others, and the
     * results are those of a run without the failure */
    int32_t failures;
    char failure[320]; /* one line on the last failure (which, in which step, why); "" when none */
} hy_sched_info;

/* Fill *out (see hy_sched_info). HY_ERR_INVALID_ARG on a NULL argument. */
HY_API hy_status hy_world_get_scheduling(const hy_world* world, hy_sched_info* out);
/* Finish the trace file named by hy_sched_def.trace and close it; later
 * steps write none. HY_ERR_IO (message naming the file) when any of it
 * could not be written, a full disk say: call it to know, since
 * hy_world_destroy closes a trace still open without saying. HY_OK when
 * no trace is open. */
HY_API hy_status hy_world_close_trace(hy_world* world);
/* Switch the policy only (between steps). */
HY_API hy_status hy_world_set_policy(hy_world* world, const char* policy);

/* Integration scheduling: each step's integrate phase runs as tasks, one
 * per object (or coupled group of solids), on `pus` CPU processing units
 * (1..32) of one worker thread each, placed by the integration runtime's
 * `policy` (round-robin, static, ws, affinity, priority, lp) with work
 * stealing between them. One PU is the calling thread with the world's
 * pool inside the solvers; several share the world's thread count out as
 * a pool each. pus 0 (the default, with lp) chooses at each step: one PU
 * per thread when the world holds at least two volumetric solids per
 * thread, else one. The state is the same for every policy and PU count.
 * HY_ERR_INVALID_ARG for an unknown policy or a PU count out of range (the
 * previous setting stays). */
HY_API hy_status hy_world_set_integrate_sched(hy_world* world, const char* policy, int32_t pus);
/* GPUs as integration PUs besides the CPU ones: "cuda:0,cuda:1" ("" or
 * NULL: none), one host thread feeding each. The integrates of FEM,
 * mass-spring and cloth objects and the solids' coupled groups may then be
 * placed there by the policy: the object's model runs its passes on that
 * GPU with the CPU's arithmetic, so the state is the same. A GPU this build
 * or machine does not have is left out and said in
 * hy_integrate_stats.fallback (one line; the step goes on on the CPU), as
 * is one that later refuses a model. Kept by hy_world_set_integrate_sched.
 * HY_ERR_INVALID_ARG naming an item that is not cuda:D. */
HY_API hy_status hy_world_set_integrate_devices(hy_world* world, const char* devices);

#define HY_INTEGRATE_MAX_PUS 32

/* The integrate phase of the last step (its last substep) as the
 * integration runtime ran it: each PU's busy time and tasks (one PU: the
 * wall time of its runs), the objects stolen between PUs and the METIS
 * calls of its mappings. A world that has not stepped reports its PUs with
 * zeros. */
typedef struct hy_integrate_stats {
    char policy[32];
    int32_t pus;
    int32_t steals;        /* objects (partitions) a PU took from another, all waves of the phase */
    int32_t metis_calls;
    double wall_ms;        /* the phase's task runs, wall clock */
    double busy_ms[HY_INTEGRATE_MAX_PUS];
    int32_t tasks[HY_INTEGRATE_MAX_PUS];
    int32_t gpus;          /* the last `gpus` of the `pus` PUs are GPUs (hy_world_set_integrate_devices) */
    char fallback[192];    /* GPUs asked for and not used, and why; "" when none */
    /* With GPUs: small free solids (FEM, mass-spring) go in batches, one
     * per GPU; on a GPU their CG solves run in lockstep, each round's
     * products in one launch for all of them (same state as alone) */
    int32_t batched;        /* objects of the last step stepped that way */
    int32_t batch_products; /* the batch products (launches per kind) they took */
    /* bytes moved between the host and PU q's memory in the last step, both
     * ways (GPU PUs: the runtime's copies and those the solvers made; 0 for
     * CPU PUs) */
    int64_t bytes[HY_INTEGRATE_MAX_PUS];
    /* coupled groups of solids that held more than half of a wave's
     * vertices: no placement balances such a task, so it ran before the
     * wave's other tasks on all of the world's threads, outside the PUs
     * (not counted in tasks or busy_ms; its time is in wall_ms) */
    int32_t wide_tasks;
    double wide_ms;
    /* of the batched objects, those whose CG ran in the batch's memory (its
     * vectors on the GPU, only scalars crossing per operation): every
     * object of the batch has a block-Jacobi preconditioner alone */
    int32_t batch_resident;
} hy_integrate_stats;

/* HY_ERR_INVALID_ARG on a NULL world or out. */
HY_API hy_status hy_world_get_integrate_stats(const hy_world* world, hy_integrate_stats* out);

typedef struct hy_resource_stats {
    char name[64];        /* "cpu", "cuda:0", "model:gtx285" */
    int32_t modeled;      /* 1 when its time is charged from a profile */
    double busy_ms;       /* busy time in the last step, on the framework's clock */
    double transfer_ms;   /* ... of which host<->device transfers (modeled, or a real GPU's copies) */
    int64_t traverse_jobs, leaf_jobs;
    /* the cost per unit of work the scheduler expects of it after the step,
     * microseconds: [0] TRAVERSE per node pair tested, [1] LEAF per test
     * (calibrated; under the real clock, learned from its batches) */
    double proc_us[2];
} hy_resource_stats;

typedef struct hy_sched_stats {
    char policy[32];
    int32_t virtual_clock;
    int32_t resources;
    double makespan_ms;   /* collision jobs of the last step, on the framework's clock */
    double scheduler_ms;  /* charged to scheduler calls */
    int64_t calls;        /* scheduler calls */
} hy_sched_stats;

/* Scheduling figures of the last step; writes up to capacity resource rows
 * (res may be NULL when capacity is 0) and the resource count to *count
 * (may be NULL). HY_ERR_INVALID_ARG on a NULL world or out, or res NULL
 * with capacity > 0. */
HY_API hy_status hy_world_get_sched_stats(const hy_world* world, hy_sched_stats* out, hy_resource_stats* res,
                                          int32_t capacity, int32_t* count);
/* Bytes the last step's collision batches moved over each resource's
 * channel to host memory, in hy_world_get_sched_stats's resource order:
 * up[i] from host memory into resource i's (a GPU's: the positions when its
 * copy is stale, the trees that changed, the jobs' references), down[i]
 * back (answers, candidates). 0 for the cpu; a modeled device counts what a
 * GPU would move for its batches. Writes up to capacity entries of each
 * array (either may be NULL) and the resource count to *count (may be
 * NULL). HY_ERR_INVALID_ARG on a NULL world. */
HY_API hy_status hy_world_get_transfer_bytes(const hy_world* world, int64_t* up, int64_t* down, int32_t capacity,
                                             int32_t* count);

/* ----------------------------------------------------------------- scenes */

typedef struct hy_scene_options {
    int32_t threads; /* overrides the scene's thread count when > 0 */
    int32_t collisions; /* -1 = as the scene says; 0/1 override */
    int32_t strict;     /* 1: objects that intersect or lie closer than their contact distance in the
                           initial state fail the load with HY_ERR_OVERLAP (the message names the
                           pairs); 0 (default): they load, and hy_world_find_overlaps finds them */
    const char* parameters; /* "name=value,name=value": new values for the scene's "parameters"
                               (a name the scene lacks is an error); NULL or "" (default): as given */
    uint32_t cookie;
} hy_scene_options;
HY_API hy_scene_options hy_scene_options_default(void);

/* Load a JSON scene (see docs/guide/SCENES.md) into a new world. Everything is
 * checked before the world is built: on failure *out is NULL and the
 * message names file, line and object. */
HY_API hy_status hy_scene_load(const char* path, const hy_scene_options* options, hy_world** out);
/* Same, from a string; `name` is used in messages in place of a file name. */
HY_API hy_status hy_scene_load_string(const char* json, size_t length, const char* name,
                                      const hy_scene_options* options, hy_world** out);

#ifdef __cplusplus
}
#endif

#endif /* HYPHYS_HYPHYS_H */
