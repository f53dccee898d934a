/* What the response's files share (collision/response.c: the driver, its
 * rounds of detection and impulses; response_contact.c: one contact's
 * frame, violation test and impulse, and positions from velocities;
 * response_groups.c: the rigid pairs' grouped impulses; response_zones.c:
 * impact zones; response_failsafe.c: the fail-safe). Not for use outside
 * collision/response*.c.
 *
 * The response sees the scene through its view (collision/scene_view.h):
 * a vertex moves on its own (HY_MOVES_FREE), with its object's rigid
 * state (HY_MOVES_RIGID) or with its object's script (HY_MOVES_SCRIPTED,
 * never taking an impulse). A unit is what moves as one: a free vertex, or
 * a rigid or scripted object, named by its first vertex. */
#ifndef HY_COLLISION_RESPONSE_INTERNAL_H
#define HY_COLLISION_RESPONSE_INTERNAL_H

#include <stdint.h>

#include "collision/collide.h"
#include "collision/response.h"
#include "collision/scene_view.h"

typedef struct hy_resolver {
    hy_collision_state* cs;
    hy_scene_view* v;
    struct hy_prox* prox;
    hy_pool* pool;
    hy_step_stats* stats;
    hy_contact_list* first; /* where the first detection round's contacts go, or NULL */
    int32_t rounds;         /* detection rounds so far */
    double dt;
    double rolling_resistance; /* m, hy_response_params.rolling_resistance */
    double bounce_speed;       /* m/s, hy_response_params.bounce_speed */
    struct hy_rigid_group* groups;   /* per round: violated contacts between two rigid objects */
    struct hy_group_solve* group_solve; /* per group: the velocity sweeps' state */
    int64_t group_count, group_capacity;
    int group_failed;   /* out of memory: contacts were applied one by one */
    int impulse_failed; /* out of memory recording a pair impulse */
    int32_t* mover;     /* fail-safe, per unit: moving obstacle it follows, or -1 (stays) */
    int64_t* swept;     /* a round's violated cloth contacts, for its extra sweeps */
    int64_t swept_capacity;
    /* a round's colouring of its contacts (response.c): per contact its
     * colour (-1: it has a rigid participant) and result, the contacts by
     * colour, and per vertex the colours its contacts took */
    int8_t* colour;
    unsigned char* result;
    int64_t* by_colour;
    int64_t colour_capacity;
    uint64_t* used;
} hy_resolver;

/* One side of a contact that moves as one: a unit with its summed weight
 * in the contact, its weighted point and the velocity there. */
typedef struct hy_participant {
    int32_t unit;   /* vertex (free) or object's first vertex (rigid/scripted) */
    int32_t object;
    double weight;  /* summed weights of its vertices in this contact */
    hy_v3 point;    /* weighted point, rigid participants: lever arm base */
    hy_v3 vel;      /* velocity at that point (weighted like it) */
} hy_participant;

/* ---- per-vertex accessors */

static inline int32_t object_of(const hy_resolver* r, int32_t g) { return r->v->vertex_object[g]; }

static inline int motion_of(const hy_resolver* r, int32_t object) { return r->v->motion[object]; }

static inline int32_t vertex_count_of(const hy_resolver* r, int32_t object) {
    return r->v->offset[object + 1] - r->v->offset[object];
}

/* Unit a vertex moves with: itself (free) or its object's first vertex. */
static inline int32_t unit_of(const hy_resolver* r, int32_t g) {
    int32_t obj = object_of(r, g);
    return motion_of(r, obj) == HY_MOVES_FREE ? g : r->v->offset[obj];
}

/* Scripted vertices report their chord velocity (x1 - x0) / dt, not the
 * script's velocity at the end of the step: the chord is what the motion
 * checked by detection does, and a cloth vertex that follows a rotating
 * obstacle moves on the same chord, so the pair's relative velocity is
 * zero rather than the difference of a chord and a tangent. */
static inline hy_v3 vertex_velocity(const hy_resolver* r, int32_t g) {
    const hy_scene_view* v = r->v;
    int32_t obj = object_of(r, g);
    int m = motion_of(r, obj);
    if (m == HY_MOVES_RIGID) {
        hy_v3 rr = v3_sub(v3_load(v->X0 + 3 * g), v->body0[obj].x);
        return v3_add(v->body1[obj].v, v3_cross(v->body1[obj].w, rr));
    }
    if (m == HY_MOVES_SCRIPTED) return v3_scale(v3_sub(v3_load(v->X1 + 3 * g), v3_load(v->X0 + 3 * g)), 1.0 / r->dt);
    return v3_load(v->V + 3 * g);
}

/* Inverse mass of a participant along dir (0 when it takes no impulse). */
static inline double inv_mass_along(const hy_resolver* r, const hy_participant* p, hy_v3 dir) {
    const hy_scene_view* v = r->v;
    int m = motion_of(r, p->object);
    if (m == HY_MOVES_FREE) return v->inv_mass[p->unit];
    if (m == HY_MOVES_SCRIPTED) return 0.0;
    hy_v3 lever = v3_sub(p->point, v->body0[p->object].x);
    hy_v3 rn = v3_cross(lever, dir);
    return v->body_inv_mass[p->object] + v3_dot(rn, mat_mul_v3(v->body_inv_inertia + 9 * p->object, rn));
}

static inline void apply_impulse(hy_resolver* r, const hy_participant* p, hy_v3 impulse) {
    hy_scene_view* v = r->v;
    int m = motion_of(r, p->object);
    if (m == HY_MOVES_FREE) {
        double im = v->inv_mass[p->unit];
        if (im > 0) v3_store(v->V + 3 * p->unit, v3_mad(v3_load(v->V + 3 * p->unit), impulse, im));
    } else if (m == HY_MOVES_RIGID) {
        hy_view_body* b = &v->body1[p->object];
        hy_v3 lever = v3_sub(p->point, v->body0[p->object].x);
        b->v = v3_mad(b->v, impulse, v->body_inv_mass[p->object]);
        b->w = v3_add(b->w, mat_mul_v3(v->body_inv_inertia + 9 * p->object, v3_cross(lever, impulse)));
    }
}

/* ---- response.c */

/* One detection round over the view's X0 -> X1 into the collision state's
 * contacts, canonical order; the first round's are copied to r->first. */
hy_status hy_response_detect(hy_resolver* r);

/* ---- response_contact.c */

/* Apply the contact's impulse if it is violated: approaching, or ending the
 * step closer than the thickness, by more than a small tolerance. Returns 1
 * if it was violated. With apply = 0 only checks; with push = 0 a contact
 * only counts as violated when it approaches (what impact zones need: a
 * zone moves rigidly, so it can stop the approach but cannot push its
 * members apart to the thickness). */
int hy_response_contact(hy_resolver* r, const hy_contact* c, double separation, int apply, int push);
/* Whether a vertex of the contact moves on its own. */
int hy_response_touches_free(const hy_resolver* r, const hy_contact* c);
/* Re-derive X1 (and rigid vertices' velocities) from the current velocities. */
void hy_response_update_positions(hy_resolver* r);
/* The vertices of rigid object i at the rigid state b: X1, and V as the
 * state's linear velocity alone (spin = 0) or with its spin (spin = 1). */
void hy_response_pose_rigid(hy_resolver* r, int32_t i, const hy_view_body* b, int spin);

/* ---- response_groups.c */

/* Gather a violated contact between two rigid units into the round's
 * group of that pair; 0 when out of memory (r->group_failed set). */
int hy_response_group_add(hy_resolver* r, const hy_participant* parts, hy_v3 n, double d0, double thickness,
                          double friction, double restitution);
/* Resolve the round's groups (velocity sweeps) and empty them. */
void hy_response_apply_groups(hy_resolver* r, double separation);
/* HY_OK, or the out-of-memory error of a pair impulse that was not kept. */
hy_status hy_response_impulses_kept(const hy_resolver* r);

/* ---- response_zones.c */

int32_t hy_zone_find(int32_t* parent, int32_t x);
void hy_zone_unite(int32_t* parent, int32_t a, int32_t b);
/* Whether all four vertices of the contact already move with one zone. */
int hy_response_in_one_zone(const hy_resolver* r, const hy_contact* c);
/* Move every zone with more than one unit rigidly (see response_zones.c). */
void hy_response_move_zones(hy_resolver* r, int32_t* parent, const unsigned char* in_zone);

/* ---- response_failsafe.c */

/* Runs the fail-safe: a collision-free motion by construction. */
hy_status hy_response_fail_safe(hy_resolver* r, const hy_response_params* params);

#endif
