/* The scene as collision sees it: plain arrays that the world fills, never
 * the world's own structs. Collision detection and response read the
 * view; the response writes its corrected motion (X1, V, body1) back into
 * it, and the world copies that into its objects.
 *
 * Vertices are global: every object's vertices concatenated in object
 * order, object i owning [offset[i], offset[i + 1]). What an object is
 * (its kind) reaches collision only as data: how its vertices move
 * (hy_view_motion), its masses, thickness and friction, and the step's flags. */
#ifndef HY_COLLISION_SCENE_VIEW_H
#define HY_COLLISION_SCENE_VIEW_H

#include <stdint.h>

#include "core/error.h"
#include "core/hd.h"

/* How an object's vertices move: all the response needs of its kind. */
typedef enum hy_view_motion {
    HY_MOVES_FREE = 0,     /* each vertex on its own, with its own mass (cloth); a vertex is a unit */
    HY_MOVES_RIGID = 1,    /* the vertices follow one rigid state that impulses change (body) */
    HY_MOVES_SCRIPTED = 2, /* the vertices follow poses given for both ends of the step, no impulse (obstacle) */
} hy_view_motion;

/* Per-object flags of the step (hy_scene_view.flags). */
enum {
    HY_VIEW_SELF = 1,   /* can collide with itself */
    HY_VIEW_DRIVEN = 2, /* moved by the caller, not by contacts: two driven objects never meet */
    HY_VIEW_STATIC = 4, /* cannot move this step: two static objects never meet */
    HY_VIEW_MOVING = 8, /* scripted, and its poses at the two ends of the step differ */
};

/* A rigid state: centre of mass and orientation (body to world), linear
 * and angular velocity (world frame). */
typedef struct hy_view_body {
    hy_v3 x;
    hy_quat q;
    hy_v3 v;
    hy_v3 w;
} hy_view_body;

typedef struct hy_scene_view {
    /* ---- the model: laid out by hy_scene_view_layout, filled by the world
     * when its objects change */
    int32_t object_count, vertex_count;
    int32_t* offset;        /* first global vertex per object; object_count + 1 entries */
    int32_t* vertex_object; /* owning object per global vertex */
    unsigned char* motion;  /* hy_view_motion per object */
    const int32_t** tri;    /* per object: its triangles, 3 local vertex indices each */
    int32_t* tri_count;
    const double** local; /* per object, RIGID: its vertices in the body frame, 3 each */
    double *thickness, *friction, *restitution; /* per object: m; Coulomb coefficient; bounce (RIGID) */
    double *mass, *inv_mass; /* per global vertex of FREE objects (inverse 0: pinned); 0 elsewhere */
    /* ---- the step: filled by the world before each response */
    unsigned char* flags; /* HY_VIEW_* per object */
    const char** name;    /* per object, for messages */
    /* object pairs that never collide (solids attached to each other: the
     * attachment holds their shared faces together), as keys
     * hy_pair_key(a, b), sorted; the world's (NULL when apart_count is 0) */
    const int64_t* apart;
    int64_t apart_count;
    /* 3 per global vertex: positions at the start and the candidate end,
     * candidate velocities. The response rewrites X1 and V. */
    double *X0, *X1, *V;
    /* per object, RIGID: rigid state at the start and the candidate one
     * (which the response rewrites), mass, inverse mass (0: kinematic) and
     * world-frame inverse inertia at the start (9, row-major) */
    hy_view_body *body0, *body1;
    double *body_mass, *body_inv_mass, *body_inv_inertia;
    /* per object, SCRIPTED: its pose at the start and at the end of the step */
    hy_v3 *pose_x0, *pose_x1;
    hy_quat *pose_q0, *pose_q1;
} hy_scene_view;

/* The key of an unordered object pair: (lo << 32) | hi. */
static inline int64_t hy_pair_key(int32_t a, int32_t b) {
    int32_t lo = a < b ? a : b, hi = a < b ? b : a;
    return (int64_t)(((uint64_t)(uint32_t)lo << 32) | (uint32_t)hi);
}

/* 1 when the pair (a, b) is in keys (n sorted pair keys). */
static inline int hy_pair_keys_have(const int64_t* keys, int64_t n, int32_t a, int32_t b) {
    int64_t key = hy_pair_key(a, b), lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] == key) return 1;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* Size the view's arrays for object_count objects of vertex_count
 * vertices in all (what was there is lost); counts and offset[0] set,
 * the rest for the world to fill. */
hy_status hy_scene_view_layout(hy_scene_view* v, int32_t object_count, int32_t vertex_count);
void hy_scene_view_free(hy_scene_view* v);

#endif
