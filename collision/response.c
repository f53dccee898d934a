/* Collision response (see response.h). One file of just over a thousand
 * lines: its stages (impulse rounds, rigid groups, impact zones, the
 * fail-safe) share the resolver's state and per-vertex helpers, which a
 * split would have to publish to each other.
 *
 * Rounds of detection and impulses: every contact of a round gets an
 * inelastic (or, between rigid bodies and obstacles, restitutive) normal
 * impulse plus Coulomb friction, applied in the canonical contact order
 * (Gauss-Seidel). Positions are then re-derived from the new velocities and
 * the motion is checked again. Contacts that survive the impulse rounds are
 * merged into impact zones (Provot 1997; Bridson et al. 2002): a zone moves
 * as one rigid unit, here by translation at its momentum-weighted velocity,
 * or, when it holds an obstacle, by the obstacle's own rigid map over the
 * step, so nothing inside it can collide; zones grow until the motion is
 * collision free. If even that does not converge, the fail-safe gives
 * every unit a motion that is collision free by construction: it stays
 * where it started, or it follows a moving obstacle it touches (see
 * fail_safe). Translation-only free zones are a choice: they lose the
 * zone's spin for the step, but need no polar decomposition and cannot
 * create new intersections inside the zone.
 *
 * A round ends the response only when no contact is violated, so the
 * violation test must not pass a crossing: the linear velocity test is
 * backed by a zero-distance CCD query on pairs close enough to meet
 * (may_cross), and pairs inside one zone are exempt (in_one_zone) because
 * no common rigid map can make them cross. */
#include "collision/response.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/ccd.h"
#include "collision/closest.h"
#include "collision/collide.h"
#include "core/error.h"
#include "engine/world.h"

hy_response_params hy_response_params_default(void) {
    hy_response_params p;
    p.impulse_iterations = 6;
    p.sweeps = 4;
    p.zone_iterations = 32;
    p.separation = 0.1;
    return p;
}

/* ------------------------------------------------ per-vertex accessors */

typedef struct resolver {
    hy_world* w;
    hy_collision_state* cs;
    double dt;
    double* body_inv_inertia; /* 9 per object slot (bodies only) */
    struct rigid_group* groups; /* per round: violated contacts between two rigid objects */
    struct group_solve* group_solve; /* per group: the velocity sweeps' state */
    int64_t group_count, group_capacity;
    int group_failed;           /* out of memory: contacts were applied one by one */
    int impulse_failed;         /* out of memory recording a pair impulse */
    int32_t* mover;             /* fail-safe, per unit: moving obstacle it follows, or -1 (stays) */
    int64_t* swept;             /* a round's violated cloth contacts, for its extra sweeps */
    int64_t swept_capacity;
} resolver;

/* The violated contacts between two rigid objects (bodies or obstacles) of
 * one round, resolved as one: a single impulse at their mean point along
 * their mean normal. Applied one after another, the contacts of a face or
 * a ring of edges would each spin the body (the first one reached takes
 * the whole impulse off-centre), which loses the bounce to rotation; the
 * mean contact of a ball on a plane lies under its centre. The relative
 * velocity at the mean points is the mean of the contacts' (it is affine
 * in the point for rigid motion). */
typedef struct rigid_group {
    int32_t object[2];   /* side A, side B */
    int32_t unit[2];
    hy_v3 point[2];      /* sums, then means */
    hy_v3 normal;        /* sum of unit normals, A from B */
    hy_v3 vel[2];        /* sums of each side's velocity at its contact points, as met */
    double d0_min, thickness, friction, restitution;
    int64_t count;
} rigid_group;

static int vertex_object(const hy_collision_state* cs, int32_t g) { return cs->vertex_object[g]; }

/* Unit a vertex moves with: itself (cloth) or its object's first vertex. */
static int32_t unit_of(const resolver* r, int32_t g) {
    const hy_object* o = &r->w->objects[vertex_object(r->cs, g)];
    return o->kind == HY_OBJECT_CLOTH ? g : r->cs->object_offset[vertex_object(r->cs, g)];
}

/* Obstacle vertices report their chord velocity (x1 - x0) / dt, not the
 * script's velocity at the end of the step: the chord is what the motion
 * checked by detection does, and a cloth vertex that follows a rotating
 * obstacle moves on the same chord, so the pair's relative velocity is
 * zero rather than the difference of a chord and a tangent. */
static hy_v3 vertex_velocity(const resolver* r, int32_t g) {
    const hy_collision_state* cs = r->cs;
    const hy_object* o = &r->w->objects[vertex_object(cs, g)];
    if (o->kind == HY_OBJECT_BODY) {
        hy_v3 rr = v3_sub(v3_load(cs->X0 + 3 * g), o->body.x);
        return v3_add(o->body1.v, v3_cross(o->body1.w, rr));
    }
    if (o->kind == HY_OBJECT_OBSTACLE)
        return v3_scale(v3_sub(v3_load(cs->X1 + 3 * g), v3_load(cs->X0 + 3 * g)), 1.0 / r->dt);
    return v3_load(cs->V + 3 * g);
}

/* ------------------------------------------------------------ geometry */

/* Weights (summing to zero) and the unit normal pointing from side B to
 * side A at the start of the step. Returns 0 if no direction is defined. */
static int contact_frame(const resolver* r, const hy_contact* c, double w[4], hy_v3* n, double* d0) {
    const double *X0 = r->cs->X0, *X1 = r->cs->X1;
    hy_v3 p[4], q[4];
    for (int k = 0; k < 4; k++) {
        hy_v3 a = v3_load(X0 + 3 * c->v[k]), b = v3_load(X1 + 3 * c->v[k]);
        q[k] = a;
        p[k] = v3_lerp(a, b, c->toi);
    }
    hy_v3 nn;
    if (c->type == HY_CONTACT_VF) {
        double wa, wb, wc;
        hy_closest_on_triangle(p[0], p[1], p[2], p[3], &wa, &wb, &wc);
        w[0] = 1; w[1] = -wa; w[2] = -wb; w[3] = -wc;
        nn = v3_cross(v3_sub(p[2], p[1]), v3_sub(p[3], p[1]));
    } else {
        double s, u;
        hy_closest_segments(p[0], p[1], p[2], p[3], &s, &u);
        w[0] = 1 - s; w[1] = s; w[2] = -(1 - u); w[3] = -u;
        nn = v3_cross(v3_sub(p[1], p[0]), v3_sub(p[3], p[2]));
    }
    /* separation vector at t0 with these weights (side A minus side B) */
    hy_v3 sep0 = v3(0, 0, 0), sept = v3(0, 0, 0);
    for (int k = 0; k < 4; k++) {
        sep0 = v3_mad(sep0, q[k], w[k]);
        sept = v3_mad(sept, p[k], w[k]);
    }
    double len = v3_len(nn);
    if (!(len > 1e-300)) {
        /* parallel edges or a degenerate face: use the separation itself */
        nn = v3_len(sept) > 1e-300 ? sept : sep0;
        len = v3_len(nn);
        if (!(len > 1e-300)) return 0;
    }
    nn = v3_scale(nn, 1.0 / len);
    double scale = 0.0;
    for (int k = 0; k < 4; k++) scale = fmax(scale, fabs(w[k]) * v3_len(v3_sub(q[k], q[0])));
    if (fabs(v3_dot(nn, sep0)) > 1e-9 * scale) {
        if (v3_dot(nn, sep0) < 0) nn = v3_scale(nn, -1.0);
    } else {
        /* the features touch at the start (faces of a broken solid, bodies
         * placed in contact): the separation has no sign. A vertex over the
         * inside of a closed rigid mesh's face is outside that mesh, so the
         * face normal (outwards) holds; otherwise the side is the one the
         * features are on at the end of the step. */
        const hy_object* ob = &r->w->objects[vertex_object(r->cs, c->v[c->type == HY_CONTACT_VF ? 1 : 2])];
        int inside_face = c->type == HY_CONTACT_VF && ob->kind != HY_OBJECT_CLOTH && w[1] < -1e-9 && w[2] < -1e-9 &&
                          w[3] < -1e-9;
        if (!inside_face) {
            hy_v3 sep1 = v3(0, 0, 0);
            for (int k = 0; k < 4; k++) sep1 = v3_mad(sep1, v3_load(X1 + 3 * c->v[k]), w[k]);
            double along = v3_dot(nn, sep1), l1 = v3_len(sep1);
            if (fabs(along) > 1e-9 * (scale + l1)) {
                if (along < 0) nn = v3_scale(nn, -1.0);
            } else if (l1 > 1e-12 * (scale + 1e-300)) {
                nn = v3_scale(sep1, 1.0 / l1);
            } else {
                return 0;
            }
        }
    }
    *n = nn;
    *d0 = v3_dot(nn, sep0);
    return 1;
}

/* Whether the pair may touch over the candidate motion X0 -> X1. The
 * velocity test above is linear in a normal fixed at the start, which a
 * hinge closing about a shared edge or a pair that turns can pass while
 * crossing; a round with no violated contact ends the response, so that
 * round has to be right. Within an impulse round (from_v) the impulses
 * already applied have changed V but not X1 yet, so free cloth vertices
 * are taken at X0 + V dt, where update_positions will put them (bodies
 * keep the round's X1: their impulses between two rigid objects wait for
 * the round's end anyway). Cheap bound first: a common translation
 * changes no distance, and beyond it no point of either feature moves
 * further than the largest vertex displacement relative to one vertex's,
 * so a pair more than twice that apart at the start cannot meet.
 * Otherwise the conservative CCD query at zero distance decides. */
static int may_cross(const resolver* r, const hy_contact* c, int from_v) {
    const hy_collision_state* cs = r->cs;
    double x[8][3];
    hy_v3 x0[4], d[4];
    for (int k = 0; k < 4; k++) {
        int32_t g = c->v[k];
        memcpy(x[k], cs->X0 + 3 * g, sizeof x[k]);
        if (from_v && cs->inv_mass[g] > 0)
            v3_store(x[4 + k], v3_mad(v3_load(cs->X0 + 3 * g), v3_load(cs->V + 3 * g), r->dt));
        else
            memcpy(x[4 + k], cs->X1 + 3 * g, sizeof x[k]);
        x0[k] = v3_load(x[k]);
        d[k] = v3_sub(v3_load(x[4 + k]), x0[k]);
    }
    double rel = 0.0;
    for (int k = 0; k < 4; k++) rel = fmax(rel, v3_len(v3_sub(d[k], d[1])));
    int is_vf = c->type == HY_CONTACT_VF;
    hy_v3 sep = hy_closest_separation(x0, is_vf);
    double gap = v3_len(sep), size = 0.0;
    for (int k = 1; k < 4; k++) size = fmax(size, v3_len(v3_sub(x0[k], x0[0])));
    if (gap > 2.0 * rel * (1.0 + 1e-6) + 1e-12) return 0;
    /* features that touch at the start (bodies placed face to face, the
     * pieces of a broken solid) touch at t = 0 whatever they do next: the
     * query cannot tell leaving from crossing, the linear test decides */
    if (gap <= 1e-9 * size) return 0;
    /* the step's options: a capped search answers "contact", which only
     * costs another round */
    hy_ccd_options opts = hy_ccd_options_step();
    double toi = 1.0;
    return hy_ccd_query(is_vf, (const double(*)[3])x, 0.0, &opts, &toi, NULL) != 0;
}

/* ------------------------------------------------------------ impulses */
static int32_t find(int32_t* parent, int32_t x);

typedef struct participant {
    int32_t unit;   /* vertex (cloth) or object's first vertex (body/obstacle) */
    int32_t object;
    double weight;  /* summed weights of its vertices in this contact */
    hy_v3 point;    /* weighted point, body participants: lever arm base */
    hy_v3 vel;      /* velocity at that point (weighted like it) */
} participant;

/* A rigid group in the velocity sweeps (apply_groups): its sides at their
 * mean points, normal, target normal velocity, effective inverse mass
 * along the normal (0: takes no part) and accumulated impulses. */
typedef struct group_solve {
    participant p[2];
    hy_v3 n;
    double target, K, acc_n;
    hy_v3 acc_t;
} group_solve;

static double inv_mass_along(const resolver* r, const participant* p, hy_v3 dir) {
    const hy_object* o = &r->w->objects[p->object];
    if (o->kind == HY_OBJECT_CLOTH) return r->cs->inv_mass[p->unit];
    if (o->kind == HY_OBJECT_OBSTACLE) return 0.0;
    hy_v3 lever = v3_sub(p->point, o->body.x);
    hy_v3 rn = v3_cross(lever, dir);
    return o->inertia.inv_mass + v3_dot(rn, mat_mul_v3(r->body_inv_inertia + 9 * p->object, rn));
}

static void apply_impulse(resolver* r, const participant* p, hy_v3 impulse) {
    hy_object* o = &r->w->objects[p->object];
    if (o->kind == HY_OBJECT_CLOTH) {
        double im = r->cs->inv_mass[p->unit];
        if (im > 0) v3_store(r->cs->V + 3 * p->unit, v3_mad(v3_load(r->cs->V + 3 * p->unit), impulse, im));
    } else if (o->kind == HY_OBJECT_BODY) {
        hy_v3 lever = v3_sub(p->point, o->body.x);
        o->body1.v = v3_mad(o->body1.v, impulse, o->inertia.inv_mass);
        o->body1.w = v3_add(o->body1.w, mat_mul_v3(r->body_inv_inertia + 9 * p->object, v3_cross(lever, impulse)));
    }
}

static int add_to_group(resolver* r, const participant* parts, hy_v3 n, double d0, double thickness,
                        double friction, double restitution) {
    int a = parts[0].weight > 0 ? 0 : 1, b = 1 - a;
    rigid_group* g = NULL;
    for (int64_t i = 0; i < r->group_count; i++)
        if (r->groups[i].object[0] == parts[a].object && r->groups[i].object[1] == parts[b].object) {
            g = &r->groups[i];
            break;
        }
    int flip = 0;
    if (!g)
        for (int64_t i = 0; i < r->group_count; i++)
            if (r->groups[i].object[0] == parts[b].object && r->groups[i].object[1] == parts[a].object) {
                g = &r->groups[i];
                flip = 1;
                break;
            }
    if (!g) {
        if (r->group_count == r->group_capacity) {
            int64_t cap = r->group_capacity ? 2 * r->group_capacity : 16;
            rigid_group* ng = realloc(r->groups, sizeof *ng * (size_t)cap);
            if (ng) r->groups = ng;
            group_solve* ns = ng ? realloc(r->group_solve, sizeof *ns * (size_t)cap) : NULL;
            if (!ng || !ns) {
                r->group_failed = 1;
                return 0;
            }
            r->group_solve = ns;
            r->group_capacity = cap;
        }
        g = &r->groups[r->group_count++];
        memset(g, 0, sizeof *g);
        g->object[0] = parts[a].object;
        g->object[1] = parts[b].object;
        g->unit[0] = parts[a].unit;
        g->unit[1] = parts[b].unit;
        g->d0_min = d0;
    }
    if (flip) {
        int t = a;
        a = b;
        b = t;
        n = v3_scale(n, -1.0);
    }
    g->point[0] = v3_add(g->point[0], parts[a].point);
    g->point[1] = v3_add(g->point[1], parts[b].point);
    g->normal = v3_add(g->normal, n);
    g->vel[0] = v3_add(g->vel[0], parts[a].vel);
    g->vel[1] = v3_add(g->vel[1], parts[b].vel);
    g->d0_min = fmin(g->d0_min, d0);
    g->thickness = fmax(g->thickness, thickness);
    g->friction = fmax(g->friction, friction);
    g->restitution = fmax(g->restitution, restitution);
    g->count++;
    return 1;
}

static double inv_mass_along(const resolver* r, const participant* p, hy_v3 dir);
static void apply_impulse(resolver* r, const participant* p, hy_v3 impulse);

/* Velocity of a group's side at its mean point, now: a body's from its
 * current motion (a group applied before this one may have changed it; the
 * velocities met while the contacts were gathered would then be stale, and
 * an impulse sized on them can add energy), an obstacle's as met (the
 * response never changes it). */
static hy_v3 side_velocity(const resolver* r, const participant* p, hy_v3 met) {
    const hy_object* o = &r->w->objects[p->object];
    if (o->kind != HY_OBJECT_BODY) return met;
    return v3_add(o->body1.v, v3_cross(o->body1.w, v3_sub(p->point, o->body.x)));
}

/* Keep a rigid pair's impulse for the engine (hy_collision_state.pair_impulse). */
static void record_impulse(resolver* r, int32_t a, int32_t b, double impulse) {
    hy_collision_state* cs = r->cs;
    if (cs->pair_impulse_count == cs->pair_impulse_capacity) {
        int64_t cap = cs->pair_impulse_capacity ? 2 * cs->pair_impulse_capacity : 64;
        hy_pair_impulse* p = realloc(cs->pair_impulse, sizeof *p * (size_t)cap);
        if (!p) {
            r->impulse_failed = 1;
            return;
        }
        cs->pair_impulse = p;
        cs->pair_impulse_capacity = cap;
    }
    cs->pair_impulse[cs->pair_impulse_count++] = (hy_pair_impulse){a, b, impulse};
}

static hy_status impulses_kept(const resolver* r) {
    return r->impulse_failed ? hy_fail(HY_ERR_NOMEM, "out of memory recording the contact impulses") : HY_OK;
}

/* Velocity sweeps over a round's groups: sequential impulses on the
 * round's contact set, each group's normal impulse accumulated and kept
 * >= 0, its friction impulse kept within the Coulomb cone of it. One sweep
 * applied one impulse per group; but a body in a chain of contacts (a
 * piece pressed between the projectile and the pieces behind it) is moved
 * again by every later group, and the round then ended with most contacts
 * still violated, for the impact zones to settle as one rigid unit. A
 * group's target is fixed at its first sweep: the bounce answers the
 * approach met then, not one the sweeps themselves made. */
enum { GROUP_SWEEPS = 8 };

static void apply_groups(resolver* r, double separation) {
    if (r->group_count == 0) return;
    group_solve* gs = r->group_solve;
    for (int64_t i = 0; i < r->group_count; i++) {
        rigid_group* g = &r->groups[i];
        group_solve* q = &gs[i];
        double inv = 1.0 / (double)g->count;
        double len = v3_len(g->normal);
        q->K = 0.0; /* 0: the group takes no part */
        q->acc_n = 0.0;
        q->acc_t = v3(0, 0, 0);
        if (!(len > 1e-300)) continue; /* opposing normals cancel: nothing to push along */
        q->n = v3_scale(g->normal, 1.0 / len);
        for (int k = 0; k < 2; k++) {
            q->p[k].unit = g->unit[k];
            q->p[k].object = g->object[k];
            q->p[k].weight = k ? -1.0 : 1.0;
            q->p[k].point = v3_scale(g->point[k], inv);
            q->p[k].vel = v3_scale(g->vel[k], inv); /* an obstacle's, as met */
        }
        hy_v3 vr = v3_sub(side_velocity(r, &q->p[0], q->p[0].vel), side_velocity(r, &q->p[1], q->p[1].vel));
        double vn = v3_dot(vr, q->n);
        double target = (g->thickness - g->d0_min) / r->dt;
        if (target > 0) target *= separation > 0 ? fmin(1.0, separation) : 1.0;
        if (vn < 0) target = fmax(target, -g->restitution * vn);
        q->target = target;
        double K = inv_mass_along(r, &q->p[0], q->n) + inv_mass_along(r, &q->p[1], q->n);
        if (K > 1e-300) q->K = K;
    }
    for (int sweep = 0; sweep < GROUP_SWEEPS; sweep++)
        for (int64_t i = 0; i < r->group_count; i++) {
            group_solve* q = &gs[i];
            const rigid_group* g = &r->groups[i];
            if (q->K == 0.0) continue;
            hy_v3 vr = v3_sub(side_velocity(r, &q->p[0], q->p[0].vel), side_velocity(r, &q->p[1], q->p[1].vel));
            double vn = v3_dot(vr, q->n);
            double acc = fmax(q->acc_n + (q->target - vn) / q->K, 0.0);
            double jn = acc - q->acc_n;
            q->acc_n = acc;
            hy_v3 J = v3_scale(q->n, jn);
            /* friction: the slip after the normal impulse, bounded by the cone */
            if (g->friction > 0) {
                hy_v3 vt = v3_mad(vr, q->n, -vn);
                double vt_len = v3_len(vt);
                hy_v3 acc_t = q->acc_t;
                if (vt_len > 1e-12) {
                    hy_v3 t = v3_scale(vt, 1.0 / vt_len);
                    double Kt = inv_mass_along(r, &q->p[0], t) + inv_mass_along(r, &q->p[1], t);
                    if (Kt > 1e-300) acc_t = v3_mad(acc_t, t, -vt_len / Kt);
                }
                double cap = g->friction * q->acc_n, l = v3_len(acc_t);
                if (l > cap) acc_t = l > 0 ? v3_scale(acc_t, cap / l) : acc_t;
                J = v3_add(J, v3_sub(acc_t, q->acc_t));
                q->acc_t = acc_t;
            }
            apply_impulse(r, &q->p[0], J);
            apply_impulse(r, &q->p[1], v3_scale(J, -1.0));
        }
    for (int64_t i = 0; i < r->group_count; i++)
        if (gs[i].K != 0.0 && (gs[i].acc_n > 0.0 || v3_len2(gs[i].acc_t) > 0.0))
            record_impulse(r, gs[i].p[0].object, gs[i].p[1].object,
                           v3_len(v3_mad(gs[i].acc_t, gs[i].n, gs[i].acc_n)));
    r->group_count = 0;
}

static int touches_cloth(const resolver* r, const hy_contact* c) {
    for (int k = 0; k < 4; k++)
        if (r->w->objects[vertex_object(r->cs, c->v[k])].kind == HY_OBJECT_CLOTH) return 1;
    return 0;
}

/* Apply the contact's impulse if it is violated: approaching, or ending the
 * step closer than the thickness, by more than a small tolerance. Returns 1
 * if it was violated. With apply = 0 only checks; with push = 0 a contact
 * only counts as violated when it approaches (what impact zones need: a
 * zone moves rigidly, so it can stop the approach but cannot push its
 * members apart to the thickness). */
static int resolve_contact(resolver* r, const hy_contact* c, double separation, int apply, int push) {
    double w[4];
    hy_v3 n;
    double d0;
    if (!contact_frame(r, c, w, &n, &d0)) return 0;
    /* group vertices that move together */
    participant parts[4];
    int np = 0;
    double thickness = 0.0, friction = 0.0, restitution = 0.0;
    int rigid_only = 1;
    for (int k = 0; k < 4; k++) {
        if (w[k] == 0.0) continue;
        int32_t g = c->v[k], obj = vertex_object(r->cs, g), unit = unit_of(r, g);
        const hy_object* o = &r->w->objects[obj];
        thickness = fmax(thickness, o->thickness);
        friction = fmax(friction, o->friction);
        if (o->kind == HY_OBJECT_CLOTH) rigid_only = 0;
        if (o->kind == HY_OBJECT_BODY) restitution = fmax(restitution, o->restitution);
        int found = -1;
        for (int q = 0; q < np; q++)
            if (parts[q].unit == unit) found = q;
        hy_v3 x = v3_load(r->cs->X0 + 3 * g), v = vertex_velocity(r, g);
        if (found < 0) {
            parts[np].unit = unit;
            parts[np].object = obj;
            parts[np].weight = w[k];
            parts[np].point = v3_scale(x, w[k]);
            parts[np].vel = v3_scale(v, w[k]);
            np++;
        } else {
            parts[found].weight += w[k];
            parts[found].point = v3_mad(parts[found].point, x, w[k]);
            parts[found].vel = v3_mad(parts[found].vel, v, w[k]);
        }
    }
    for (int q = 0; q < np; q++)
        if (fabs(parts[q].weight) > 1e-12) {
            parts[q].point = v3_scale(parts[q].point, 1.0 / parts[q].weight);
            parts[q].vel = v3_scale(parts[q].vel, 1.0 / parts[q].weight);
        } else {
            parts[q].point = v3_load(r->cs->X0 + 3 * parts[q].unit);
            parts[q].vel = vertex_velocity(r, parts[q].unit);
        }
    /* relative velocity (side A minus side B) */
    hy_v3 vr = v3(0, 0, 0);
    for (int k = 0; k < 4; k++)
        if (w[k] != 0.0) vr = v3_mad(vr, vertex_velocity(r, c->v[k]), w[k]);
    double vn = v3_dot(vr, n);
    /* end the step no closer than the thickness; rigid pairs bounce */
    double target = (thickness - d0) / r->dt;
    if (target > 0) target *= separation > 0 ? fmin(1.0, separation) : 1.0;
    if (rigid_only && vn < 0) target = fmax(target, -restitution * vn);
    /* zones: the gap may shrink, by at most half of itself (a zone riding
     * a rotating obstacle follows it on chords, not arcs) */
    if (!push) target = fmin(target, -0.5 * fmax(fmin(d0, thickness), 0.0) / r->dt);
    /* a contact within 1% of the thickness per step of its target is met:
     * without this slack, resting contacts would never count as resolved.
     * Zones allow no more than a quarter of the gap on top of their half:
     * a flat 1% let pairs that start closer than 2% of the thickness cross */
    double slack = 0.01 * thickness;
    if (!push) slack = fmin(slack, 0.25 * fmax(d0, 0.0));
    int met = vn >= target - slack / r->dt;
    if (met && !may_cross(r, c, apply)) return 0;
    if (!apply) return 1;
    /* a crossing the linear test cannot see: stop any approach; if there
     * is none, the pair is left to the impact zones */
    if (met) {
        target = fmax(target, 0.0);
        if (vn >= target) return 1;
    }
    if (rigid_only && np == 2 && !r->group_failed && add_to_group(r, parts, n, d0, thickness, friction,
                                                                 restitution))
        return 1;
    double K = 0.0;
    for (int q = 0; q < np; q++) K += parts[q].weight * parts[q].weight * inv_mass_along(r, &parts[q], n);
    if (!(K > 1e-300)) return 0;
    double jn = (target - vn) / K;
    /* friction: oppose the tangential slip, bounded by the Coulomb cone */
    hy_v3 vt = v3_mad(vr, n, -vn);
    double vt_len = v3_len(vt);
    hy_v3 jt_vec = v3(0, 0, 0);
    if (vt_len > 1e-12 && friction > 0) {
        hy_v3 t = v3_scale(vt, 1.0 / vt_len);
        double Kt = 0.0;
        for (int q = 0; q < np; q++) Kt += parts[q].weight * parts[q].weight * inv_mass_along(r, &parts[q], t);
        if (Kt > 1e-300) {
            double jt = fmin(friction * jn, vt_len / Kt);
            jt_vec = v3_scale(t, -jt);
        }
    }
    hy_v3 J = v3_add(v3_scale(n, jn), jt_vec);
    for (int q = 0; q < np; q++) apply_impulse(r, &parts[q], v3_scale(J, parts[q].weight));
    return 1;
}

/* ------------------------------------------------------ state updates */

/* Re-derive X1 (and body vertex velocities) from the current velocities. */
static void update_positions(resolver* r) {
    hy_world* w = r->w;
    hy_collision_state* cs = r->cs;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        int32_t off = cs->object_offset[i];
        if (o->kind == HY_OBJECT_CLOTH) {
            for (int32_t k = 0; k < o->nv; k++) {
                int32_t g = off + k;
                if (cs->inv_mass[g] > 0)
                    v3_store(cs->X1 + 3 * g, v3_mad(v3_load(cs->X0 + 3 * g), v3_load(cs->V + 3 * g), r->dt));
            }
        } else if (o->kind == HY_OBJECT_BODY) {
            o->body1.x = v3_mad(o->body.x, o->body1.v, r->dt);
            o->body1.q = quat_normalize(quat_mul(quat_from_rotvec(v3_scale(o->body1.w, r->dt)), o->body.q));
            double R[9];
            quat_to_mat(o->body1.q, R);
            for (int32_t k = 0; k < o->nv; k++) {
                hy_v3 rr = mat_mul_v3(R, v3_load(o->local + 3 * k));
                v3_store(cs->X1 + 3 * (off + k), v3_add(o->body1.x, rr));
                v3_store(cs->V + 3 * (off + k), v3_add(o->body1.v, v3_cross(o->body1.w, rr)));
            }
        }
    }
}

/* ------------------------------------------------------- impact zones */

static int32_t find(int32_t* parent, int32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void unite(int32_t* parent, int32_t a, int32_t b) {
    a = find(parent, a);
    b = find(parent, b);
    if (a == b) return;
    if (a < b) parent[b] = a;
    else parent[a] = b;
}

/* Whether all four vertices of the contact already move with one zone. A
 * zone's motion over the step is one rigid map, and the straight-line
 * motion between x0 and the map's image is an invertible affine map at
 * every time (for rotations under half a turn), which keeps any
 * configuration free of crossings that starts free of them: such a contact
 * needs nothing. The gap along the start normal still looks like it
 * shrinks when the zone rides a rotating obstacle (the normal does not turn
 * with the pair), which kept such zones from ever converging. */
static int in_one_zone(const resolver* r, const hy_contact* c) {
    int32_t* parent = r->cs->zone_parent;
    int32_t root = -1;
    for (int k = 0; k < 4; k++) {
        int32_t u = unit_of(r, c->v[k]);
        if (!r->cs->zone_member[u]) return 0;
        int32_t q = find(parent, u);
        if (k > 0 && q != root) return 0;
        root = q;
    }
    return 1;
}

/* Move every zone with more than one unit rigidly: with the obstacle it
 * contains (x1 = p1 + R1 R0^T (x0 - p0), the map the obstacle's script
 * applies to its own vertices, so the zone keeps its distances to the
 * obstacle), else fixed if it holds a pinned vertex, else by translation at
 * its momentum-weighted velocity. Velocities become the chord (x1 - x0) / dt
 * so the next step starts with the motion taken. */
static void move_zones(resolver* r, int32_t* parent, const unsigned char* in_zone) {
    hy_world* w = r->w;
    hy_collision_state* cs = r->cs;
    int32_t n = cs->vertex_count;
    /* accumulate per root: momentum, mass, pinned flag, obstacle */
    double* acc = cs->zone_acc; /* 4 per vertex: px, py, pz, mass */
    int32_t* obstacle = cs->zone_obstacle;
    unsigned char* pinned = cs->zone_pinned;
    for (int32_t g = 0; g < n; g++) {
        acc[4 * g] = acc[4 * g + 1] = acc[4 * g + 2] = acc[4 * g + 3] = 0.0;
        obstacle[g] = -1;
        pinned[g] = 0;
    }
    for (int32_t g = 0; g < n; g++) {
        if (!in_zone[g]) continue;
        int32_t u = unit_of(r, g);
        if (u != g) continue; /* a body/obstacle counts once, at its first vertex */
        int32_t root = find(parent, g);
        const hy_object* o = &w->objects[vertex_object(cs, g)];
        double m;
        hy_v3 v;
        if (o->kind == HY_OBJECT_CLOTH) {
            if (cs->inv_mass[g] == 0.0) pinned[root] = 1;
            m = cs->mass[g];
            v = v3_load(cs->V + 3 * g);
        } else if (o->kind == HY_OBJECT_BODY) {
            m = o->inertia.mass;
            v = o->body1.v;
        } else {
            obstacle[root] = vertex_object(cs, g);
            continue;
        }
        acc[4 * root] += m * v.x;
        acc[4 * root + 1] += m * v.y;
        acc[4 * root + 2] += m * v.z;
        acc[4 * root + 3] += m;
    }
    /* obstacle motion over the step, for zones that ride on one */
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (o->kind == HY_OBJECT_OBSTACLE) continue;
        int32_t off = cs->object_offset[i];
        for (int32_t k = 0; k < o->nv; k++) {
            int32_t g = off + k;
            if (!in_zone[g]) continue;
            if (o->kind == HY_OBJECT_BODY && k > 0) continue; /* handled via its first vertex */
            int32_t root = find(parent, g);
            hy_v3 zv = v3(0, 0, 0);
            int ride = obstacle[root] >= 0;
            hy_v3 p0 = v3(0, 0, 0), p1 = v3(0, 0, 0);
            hy_quat q0 = {1, 0, 0, 0}, q1 = {1, 0, 0, 0};
            if (ride) {
                const hy_object* ob = &w->objects[obstacle[root]];
                hy_obstacle_pose(ob, w->time, &p0, &q0);
                hy_obstacle_pose(ob, w->time + r->dt, &p1, &q1);
            } else if (!pinned[root] && acc[4 * root + 3] > 0) {
                zv = v3_scale(v3(acc[4 * root], acc[4 * root + 1], acc[4 * root + 2]), 1.0 / acc[4 * root + 3]);
            }
            /* rigid map x -> p1 + R1 R0^T (x - p0) for riders, x + dt*zv otherwise */
            hy_quat q0c = {q0.w, -q0.x, -q0.y, -q0.z};
            hy_quat rel = quat_mul(q1, q0c);
            if (o->kind == HY_OBJECT_CLOTH) {
                if (cs->inv_mass[g] == 0.0) continue;
                hy_v3 x0 = v3_load(cs->X0 + 3 * g);
                hy_v3 x1 = ride ? v3_add(p1, quat_rotate(rel, v3_sub(x0, p0))) : v3_mad(x0, zv, r->dt);
                v3_store(cs->X1 + 3 * g, x1);
                v3_store(cs->V + 3 * g, v3_scale(v3_sub(x1, x0), 1.0 / r->dt));
            } else {
                if (ride) {
                    hy_v3 c1 = v3_add(p1, quat_rotate(rel, v3_sub(o->body.x, p0)));
                    o->body1.v = v3_scale(v3_sub(c1, o->body.x), 1.0 / r->dt);
                    o->body1.x = c1;
                    o->body1.q = quat_normalize(quat_mul(rel, o->body.q));
                    o->body1.w = v3(0, 0, 0);
                } else {
                    o->body1.v = zv;
                    o->body1.w = v3(0, 0, 0);
                    o->body1.x = v3_mad(o->body.x, zv, r->dt);
                    o->body1.q = o->body.q;
                }
                double R[9];
                quat_to_mat(o->body1.q, R);
                for (int32_t j = 0; j < o->nv; j++) {
                    hy_v3 rr = mat_mul_v3(R, v3_load(o->local + 3 * j));
                    v3_store(cs->X1 + 3 * (off + j), v3_add(o->body1.x, rr));
                    v3_store(cs->V + 3 * (off + j), o->body1.v);
                }
            }
        }
    }
}

/* ---------------------------------------------------------- fail-safe */

/* The last resort when impact zones do not converge. Every unit (cloth
 * vertex, body) is given a mover: either it stays where it started, or it
 * follows one moving obstacle by the exact rigid map the obstacle's script
 * applies over the step (x1 = p1 + R1 R0^T (x0 - p0), what its own vertices
 * do). Units that follow the same mover keep every mutual distance, and
 * the straight-line motion in between is one invertible affine map for all
 * of them, so pairs within a mover cannot cross; a static obstacle is the
 * same mover as "stays". Pairs between different movers are checked by
 * detection and their units handed to the moving obstacle (a unit caught
 * between a moving obstacle and something that stays must go with the
 * obstacle: the obstacle will not yield). Growth is per unit for a few
 * rounds, then per object, so it ends once every object touching a moving
 * obstacle follows it. Only a unit squeezed between two obstacles that
 * move differently (or a moving and a static one) has no safe motion; it
 * then follows one of them. Freezing everything instead (the former last
 * resort) is only safe with static obstacles: a rotating ball moved into
 * the frozen cloth. */

static int moving_obstacle(const hy_object* o) {
    const double* lv = o->motion.linear_velocity;
    const double* av = o->motion.angular_velocity;
    return lv[0] != 0.0 || lv[1] != 0.0 || lv[2] != 0.0 || av[0] != 0.0 || av[1] != 0.0 || av[2] != 0.0;
}

/* Mover of any vertex: its unit's, or for obstacle vertices the obstacle
 * itself (-1 when it does not move). */
static int32_t mover_of(const resolver* r, int32_t g) {
    int32_t obj = vertex_object(r->cs, g);
    const hy_object* o = &r->w->objects[obj];
    if (o->kind == HY_OBJECT_OBSTACLE) return moving_obstacle(o) ? obj : -1;
    return r->mover[unit_of(r, g)];
}

/* The obstacle's rigid map over the step, as pose at start and end. */
typedef struct rigid_map {
    hy_v3 p0, p1;
    hy_quat rel; /* q1 q0^-1 */
} rigid_map;

static rigid_map obstacle_map(const resolver* r, int32_t obj) {
    rigid_map m;
    hy_quat q0, q1;
    hy_obstacle_pose(&r->w->objects[obj], r->w->time, &m.p0, &q0);
    hy_obstacle_pose(&r->w->objects[obj], r->w->time + r->dt, &m.p1, &q1);
    hy_quat q0c = {q0.w, -q0.x, -q0.y, -q0.z};
    m.rel = quat_mul(q1, q0c);
    return m;
}

static hy_v3 map_point(const rigid_map* m, hy_v3 x) { return v3_add(m->p1, quat_rotate(m->rel, v3_sub(x, m->p0))); }

/* Set X1, V (and body1) of every unit from its mover. Pinned cloth
 * vertices stay, as they did under the former freeze. */
static void apply_movers(resolver* r) {
    hy_world* w = r->w;
    hy_collision_state* cs = r->cs;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (o->kind == HY_OBJECT_OBSTACLE) continue;
        int32_t off = cs->object_offset[i];
        if (o->kind == HY_OBJECT_CLOTH) {
            for (int32_t k = 0; k < o->nv; k++) {
                int32_t g = off + k;
                hy_v3 x0 = v3_load(cs->X0 + 3 * g), x1 = x0;
                if (r->mover[g] >= 0 && cs->inv_mass[g] > 0) {
                    rigid_map m = obstacle_map(r, r->mover[g]);
                    x1 = map_point(&m, x0);
                }
                v3_store(cs->X1 + 3 * g, x1);
                v3_store(cs->V + 3 * g, v3_scale(v3_sub(x1, x0), 1.0 / r->dt));
            }
        } else if (o->kind == HY_OBJECT_BODY) {
            int32_t mv = r->mover[off];
            if (mv < 0) {
                o->body1 = o->body;
                o->body1.v = v3(0, 0, 0);
                o->body1.w = v3(0, 0, 0);
            } else {
                /* the body follows the map; its angular velocity is left
                 * zero (the spin is the obstacle's, over one step) */
                rigid_map m = obstacle_map(r, mv);
                hy_v3 c1 = map_point(&m, o->body.x);
                o->body1 = o->body;
                o->body1.v = v3_scale(v3_sub(c1, o->body.x), 1.0 / r->dt);
                o->body1.w = v3(0, 0, 0);
                o->body1.x = c1;
                o->body1.q = quat_normalize(quat_mul(m.rel, o->body.q));
            }
            double R[9];
            quat_to_mat(o->body1.q, R);
            for (int32_t k = 0; k < o->nv; k++) {
                hy_v3 rr = mat_mul_v3(R, v3_load(o->local + 3 * k));
                v3_store(cs->X1 + 3 * (off + k), v3_add(o->body1.x, rr));
                v3_store(cs->V + 3 * (off + k), o->body1.v);
            }
        }
    }
}

/* Initial movers: units in an impact zone that holds a moving obstacle
 * follow it; everything else stays. */
static void init_movers(resolver* r) {
    hy_collision_state* cs = r->cs;
    int32_t n = cs->vertex_count;
    int32_t* root_obstacle = cs->zone_obstacle;
    for (int32_t g = 0; g < n; g++) root_obstacle[g] = -1;
    for (int32_t i = 0; i < r->w->object_count; i++) {
        const hy_object* o = &r->w->objects[i];
        int32_t u = cs->object_offset[i];
        if (o->kind != HY_OBJECT_OBSTACLE || o->nv == 0 || !moving_obstacle(o) || !cs->zone_member[u]) continue;
        int32_t root = find(cs->zone_parent, u);
        if (root_obstacle[root] < 0) root_obstacle[root] = i;
    }
    for (int32_t g = 0; g < n; g++) {
        r->mover[g] = -1;
        if (unit_of(r, g) != g || !cs->zone_member[g]) continue;
        if (r->w->objects[vertex_object(cs, g)].kind == HY_OBJECT_OBSTACLE) continue;
        r->mover[g] = root_obstacle[find(cs->zone_parent, g)];
    }
}

/* Hand every unit of a violated contact between different movers to a
 * moving obstacle among them (the lowest index, for a canonical choice);
 * with per_object, the whole objects of those units. Returns 1 if a mover
 * changed. */
static int grow_movers(resolver* r, const hy_contact* c, int per_object) {
    int32_t target = -1;
    for (int k = 0; k < 4; k++) {
        int32_t m = mover_of(r, c->v[k]);
        if (m >= 0 && (target < 0 || m < target)) target = m;
    }
    if (target < 0) return 0;
    int changed = 0;
    for (int k = 0; k < 4; k++) {
        int32_t obj = vertex_object(r->cs, c->v[k]);
        const hy_object* o = &r->w->objects[obj];
        if (o->kind == HY_OBJECT_OBSTACLE) continue;
        if (per_object) {
            int32_t off = r->cs->object_offset[obj];
            for (int32_t j = 0; j < o->nv; j++)
                if (unit_of(r, off + j) == off + j && r->mover[off + j] != target) {
                    r->mover[off + j] = target;
                    changed = 1;
                }
        } else {
            int32_t u = unit_of(r, c->v[k]);
            if (r->mover[u] != target) {
                r->mover[u] = target;
                changed = 1;
            }
        }
    }
    return changed;
}

/* Runs the fail-safe; *rounds counts its detections. */
static hy_status fail_safe(resolver* r, hy_detect_fn detect, void* detect_ctx, const hy_response_params* params,
                           hy_step_stats* stats, int32_t* rounds) {
    hy_collision_state* cs = r->cs;
    hy_contact_list* contacts = &cs->contacts;
    r->mover = malloc(sizeof *r->mover * (size_t)(cs->vertex_count > 0 ? cs->vertex_count : 1));
    if (!r->mover) return hy_fail(HY_ERR_NOMEM, "collision response: out of memory in the fail-safe");
    init_movers(r);
    /* a few rounds per unit keep the followers local; then whole objects,
     * at most one more round per object */
    enum { UNIT_ROUNDS = 4 };
    int32_t max_rounds = UNIT_ROUNDS + r->w->object_count + 1;
    int changed = 1;
    for (int32_t it = 0; it < max_rounds && changed; it++) {
        apply_movers(r);
        int any_moving = 0;
        for (int32_t g = 0; g < cs->vertex_count && !any_moving; g++) any_moving = r->mover[g] >= 0;
        for (int32_t i = 0; i < r->w->object_count && !any_moving; i++)
            any_moving = r->w->objects[i].kind == HY_OBJECT_OBSTACLE && moving_obstacle(&r->w->objects[i]);
        if (!any_moving) break; /* everything stays: the start is collision free */
        contacts->count = 0;
        hy_status s = detect(detect_ctx, cs->X0, cs->X1, contacts, stats);
        if (s) return s;
        hy_contacts_canonicalize(contacts);
        (*rounds)++;
        changed = 0;
        for (int64_t k = 0; k < contacts->count; k++) {
            const hy_contact* c = &contacts->items[k];
            int32_t m0 = mover_of(r, c->v[0]);
            int same = 1;
            for (int q = 1; q < 4; q++) same &= mover_of(r, c->v[q]) == m0;
            if (same || !resolve_contact(r, c, params->separation, 0, 0)) continue;
            changed |= grow_movers(r, c, it >= UNIT_ROUNDS);
        }
        /* unchanged: collision free, or nothing left to hand over */
    }
    /* out of rounds: the last hand-over is unverified but closer to safe */
    if (changed) apply_movers(r);
    return HY_OK;
}


/* ------------------------------------------------------------- driver */

static void gather(resolver* r) {
    hy_world* w = r->w;
    hy_collision_state* cs = r->cs;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        size_t off = 3 * (size_t)cs->object_offset[i], n = 3 * (size_t)o->nv;
        memcpy(cs->X0 + off, o->x, n * sizeof(double));
        memcpy(cs->X1 + off, o->x1, n * sizeof(double));
        memcpy(cs->V + off, o->v1, n * sizeof(double));
        if (o->kind == HY_OBJECT_BODY) {
            double I[9];
            hy_rigid_world_inertia(&o->inertia, o->body.q, I, r->body_inv_inertia + 9 * i);
        }
    }
}

static void scatter(resolver* r) {
    hy_world* w = r->w;
    hy_collision_state* cs = r->cs;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (o->kind == HY_OBJECT_OBSTACLE) continue;
        size_t off = 3 * (size_t)cs->object_offset[i], n = 3 * (size_t)o->nv;
        memcpy(o->x1, cs->X1 + off, n * sizeof(double));
        memcpy(o->v1, cs->V + off, n * sizeof(double));
    }
}

hy_status hy_collision_resolve(hy_world* w, double dt, hy_detect_fn detect, void* detect_ctx,
                               const hy_response_params* params, hy_step_stats* stats) {
    hy_collision_state* cs = w->collision;
    resolver r = {w, cs, dt, cs->body_inv_inertia, NULL, NULL, 0, 0, 0, 0, NULL, NULL, 0};
    cs->pair_impulse_count = 0;
    gather(&r);
    hy_contact_list* contacts = &cs->contacts;
    hy_status s;
    int32_t rounds = 0;
    /* impulse rounds */
    int64_t prev_violated = 0;
    for (int32_t it = 0; it < params->impulse_iterations; it++) {
        contacts->count = 0;
        s = detect(detect_ctx, cs->X0, cs->X1, contacts, stats);
        if (s) {
            free(r.groups);
            free(r.group_solve);
            free(r.swept);
            return s;
        }
        hy_contacts_canonicalize(contacts);
        rounds++;
        if (it == 0) stats->contacts += contacts->count;
        int64_t violated = 0, violated_rigid = 0, swept = 0;
        if (r.swept_capacity < contacts->count) {
            int64_t* p = realloc(r.swept, sizeof *p * (size_t)contacts->count);
            if (p) {
                r.swept = p;
                r.swept_capacity = contacts->count;
            }
        }
        for (int64_t k = 0; k < contacts->count; k++) {
            int v = resolve_contact(&r, &contacts->items[k], params->separation, 1, 1);
            violated += v;
            if (!v) continue;
            if (!touches_cloth(&r, &contacts->items[k])) violated_rigid++;
            else if (r.swept_capacity >= contacts->count) r.swept[swept++] = k;
        }
        apply_groups(&r, params->separation);
        /* More Gauss-Seidel sweeps over the round's violated cloth
         * contacts: a vertex in several contacts is pushed by each in
         * turn, and a sweep costs far less than the next round's
         * detection (rigid pairs were swept in their groups; a contact met
         * in the first pass and undone by a later push is the next
         * round's) */
        for (int32_t sweep = 1; swept > 0 && sweep < params->sweeps; sweep++) {
            int64_t again = 0;
            for (int64_t j = 0; j < swept; j++)
                again += resolve_contact(&r, &contacts->items[r.swept[j]], params->separation, 1, 1);
            if (!again) break;
        }
        if (violated == 0) {
            stats->response_iterations += rounds;
            scatter(&r);
            free(r.groups);
            free(r.group_solve);
            free(r.swept);
            return impulses_kept(&r);
        }
        update_positions(&r);
        /* a few cloth contacts that the rounds no longer reduce (a vertex
         * pinched between two layers the impulses push back and forth) are
         * left to the impact zones at once: each further round costs a
         * detection over the whole scene and resolves nothing. Rigid
         * contacts keep their rounds: a zone freezes whole bodies */
        if (violated_rigid == 0 && violated >= 2 && prev_violated > 0 && violated * 5 >= prev_violated * 4) break;
        prev_violated = violated;
    }
    /* impact zones */
    int32_t n = cs->vertex_count;
    for (int32_t g = 0; g < n; g++) {
        cs->zone_parent[g] = g;
        cs->zone_member[g] = 0;
    }
    for (int32_t it = 0; it < params->zone_iterations; it++) {
        contacts->count = 0;
        s = detect(detect_ctx, cs->X0, cs->X1, contacts, stats);
        if (s) {
            free(r.groups);
            free(r.group_solve);
            free(r.swept);
            return s;
        }
        hy_contacts_canonicalize(contacts);
        rounds++;
        int64_t violated = 0;
        for (int64_t k = 0; k < contacts->count; k++) {
            const hy_contact* c = &contacts->items[k];
            if (in_one_zone(&r, c) || !resolve_contact(&r, c, params->separation, 0, 0)) continue;
            violated++;
            int32_t u0 = unit_of(&r, c->v[0]);
            for (int q = 0; q < 4; q++) {
                int32_t u = unit_of(&r, c->v[q]);
                cs->zone_member[c->v[q]] = 1;
                cs->zone_member[u] = 1;
                unite(cs->zone_parent, u0, u);
            }
        }
        if (violated == 0) {
            stats->response_iterations += rounds;
            scatter(&r);
            free(r.groups);
            free(r.group_solve);
            free(r.swept);
            return impulses_kept(&r);
        }
        move_zones(&r, cs->zone_parent, cs->zone_member);
    }
    s = fail_safe(&r, detect, detect_ctx, params, stats, &rounds);
    stats->response_iterations += rounds;
    if (!s) scatter(&r);
    free(r.groups);
    free(r.group_solve);
    free(r.swept);
    free(r.mover);
    return s ? s : impulses_kept(&r);
}
