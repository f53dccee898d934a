/* The rigid pairs' grouped impulses of a response round (see
 * response_internal.h): the violated contacts between two rigid objects
 * resolved as one, in velocity sweeps, and the impulses they exchanged
 * kept for the engine. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/response_internal.h"
#include "core/error.h"

/* The violated contacts between two rigid objects (bodies or obstacles) of
 * one round, resolved as one: a single impulse at their mean point along
 * their mean normal. Applied one after another, the contacts of a face or
 * a ring of edges would each spin the body (the first one reached takes
 * the whole impulse off-centre), which loses the bounce to rotation; the
 * mean contact of a ball on a plane lies under its centre. The relative
 * velocity at the mean points is the mean of the contacts' (it is affine
 * in the point for rigid motion). */
typedef struct hy_rigid_group {
    int32_t object[2];   /* side A, side B */
    int32_t unit[2];
    hy_v3 point[2];      /* sums, then means */
    hy_v3 normal;        /* sum of unit normals, A from B */
    hy_v3 vel[2];        /* sums of each side's velocity at its contact points, as met */
    double d0_min, thickness, friction, restitution;
    int64_t count;
} rigid_group;

/* A rigid group in the velocity sweeps (hy_response_apply_groups): its sides at their
 * mean points, normal, target normal velocity, effective inverse mass
 * along the normal (0: takes no part) and accumulated impulses. */
typedef struct hy_group_solve {
    hy_participant p[2];
    hy_v3 n;
    double target, K, acc_n;
    hy_v3 acc_t, acc_r; /* friction impulse, rolling resistance's angular impulse */
} group_solve;

int hy_response_group_add(hy_resolver* r, const hy_participant* parts, hy_v3 n, double d0, double thickness,
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

/* Velocity of a group's side at its mean point, now: a body's from its
 * current motion (a group applied before this one may have changed it; the
 * velocities met while the contacts were gathered would then be stale, and
 * an impulse sized on them can add energy), an obstacle's as met (the
 * response never changes it). */
static hy_v3 side_velocity(const hy_resolver* r, const hy_participant* p, hy_v3 met) {
    if (motion_of(r, p->object) != HY_MOVES_RIGID) return met;
    const hy_view_body* b = &r->v->body1[p->object];
    return v3_add(b->v, v3_cross(b->w, v3_sub(p->point, r->v->body0[p->object].x)));
}

/* Angular velocity of a group's side: a body's current spin, a scripted
 * object's mean turn over the step (from its two poses; small-angle
 * form, a step turns an obstacle by far less than a radian). */
static hy_v3 side_spin(const hy_resolver* r, const hy_participant* p) {
    int m = motion_of(r, p->object);
    if (m == HY_MOVES_RIGID) return r->v->body1[p->object].w;
    if (m != HY_MOVES_SCRIPTED) return v3(0, 0, 0);
    hy_quat q0 = r->v->pose_q0[p->object];
    hy_quat d = quat_mul(r->v->pose_q1[p->object], (hy_quat){q0.w, -q0.x, -q0.y, -q0.z});
    double s = (d.w < 0 ? -2.0 : 2.0) / r->dt;
    return v3(s * d.x, s * d.y, s * d.z);
}

/* The inverse inertia of a side about dir (0: a scripted object). */
static double inv_inertia_along(const hy_resolver* r, const hy_participant* p, hy_v3 dir) {
    if (motion_of(r, p->object) != HY_MOVES_RIGID) return 0.0;
    return v3_dot(dir, mat_mul_v3(r->v->body_inv_inertia + 9 * p->object, dir));
}

static void apply_angular_impulse(hy_resolver* r, const hy_participant* p, hy_v3 L) {
    if (motion_of(r, p->object) != HY_MOVES_RIGID) return;
    hy_view_body* b = &r->v->body1[p->object];
    b->w = v3_add(b->w, mat_mul_v3(r->v->body_inv_inertia + 9 * p->object, L));
}

typedef double along_fn(const hy_resolver* r, const hy_participant* p, hy_v3 dir);

/* A group's accumulated impulse acc (friction's, or rolling resistance's
 * angular one) plus the impulse that stops the sides' relative slip (a
 * velocity, or a spin) along its direction, where along gives each side's
 * inverse mass (or inertia) there; then kept within |acc| <= cap. */
static hy_v3 stop_within(const hy_resolver* r, const group_solve* q, hy_v3 acc, hy_v3 slip, along_fn* along, double cap) {
    double len = v3_len(slip);
    if (len > 1e-12) {
        hy_v3 t = v3_scale(slip, 1.0 / len);
        double k = along(r, &q->p[0], t) + along(r, &q->p[1], t);
        if (k > 1e-300) acc = v3_mad(acc, t, -len / k);
    }
    double l = v3_len(acc);
    if (l > cap) acc = l > 0 ? v3_scale(acc, cap / l) : acc;
    return acc;
}

/* Rolling resistance of a group in a sweep: an angular impulse against the
 * sides' relative turning (rolling, and spinning about the normal), summed
 * over the sweeps and kept within rolling_resistance x the normal impulse:
 * the torque of a contact whose pressure sits that far ahead of the point
 * of contact, as a ball's or a wheel's does where it flattens. It can stop
 * the turning but never reverse it. */
static void resist_rolling(hy_resolver* r, group_solve* q) {
    hy_v3 wr = v3_sub(side_spin(r, &q->p[0]), side_spin(r, &q->p[1]));
    hy_v3 acc = stop_within(r, q, q->acc_r, wr, inv_inertia_along, r->rolling_resistance * q->acc_n);
    hy_v3 dL = v3_sub(acc, q->acc_r);
    q->acc_r = acc;
    apply_angular_impulse(r, &q->p[0], dL);
    apply_angular_impulse(r, &q->p[1], v3_scale(dL, -1.0));
}

/* Keep a rigid pair's impulse for the engine (hy_collision_state.pair_impulse). */
static void record_impulse(hy_resolver* r, int32_t a, int32_t b, double impulse) {
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

hy_status hy_response_impulses_kept(const hy_resolver* r) {
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

void hy_response_apply_groups(hy_resolver* r, double separation) {
    if (r->group_count == 0) return;
    group_solve* gs = r->group_solve;
    for (int64_t i = 0; i < r->group_count; i++) {
        rigid_group* g = &r->groups[i];
        group_solve* q = &gs[i];
        double inv = 1.0 / (double)g->count;
        double len = v3_len(g->normal);
        q->K = 0.0; /* 0: the group takes no part */
        q->acc_n = 0.0;
        q->acc_t = q->acc_r = v3(0, 0, 0);
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
        if (vn < -r->bounce_speed) target = fmax(target, -g->restitution * vn); /* slower: resting */
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
                hy_v3 acc_t = stop_within(r, q, q->acc_t, vt, inv_mass_along, g->friction * q->acc_n);
                J = v3_add(J, v3_sub(acc_t, q->acc_t));
                q->acc_t = acc_t;
            }
            apply_impulse(r, &q->p[0], J);
            apply_impulse(r, &q->p[1], v3_scale(J, -1.0));
            if (r->rolling_resistance > 0.0) resist_rolling(r, q);
        }
    for (int64_t i = 0; i < r->group_count; i++)
        if (gs[i].K != 0.0 && (gs[i].acc_n > 0.0 || v3_len2(gs[i].acc_t) > 0.0))
            record_impulse(r, gs[i].p[0].object, gs[i].p[1].object,
                           v3_len(v3_mad(gs[i].acc_t, gs[i].n, gs[i].acc_n)));
    r->group_count = 0;
}

