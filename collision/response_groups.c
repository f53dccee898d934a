/* The rigid pairs' grouped impulses of a response round (see
 * response_internal.h): the contacts between two rigid objects resolved
 * together, in velocity sweeps (one impulse at the violated contacts' mean
 * point, and a one-sided row per contact), and the impulses they
 * exchanged kept for the engine. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collision/response_internal.h"
#include "core/error.h"

/* The contacts between two rigid objects (bodies or obstacles) of one
 * round. The violated ones are resolved as one: a single impulse at their
 * mean point along their mean normal. Applied one after another, the contacts of a face or
 * a ring of edges would each spin the body (the first one reached takes
 * the whole impulse off-centre), which loses the bounce to rotation; the
 * mean contact of a ball on a plane lies under its centre. The relative
 * velocity at the mean points is the mean of the contacts' (it is affine
 * in the point for rigid motion). Every contact of the pair, met ones
 * included, is also a row (hy_group_row). */
typedef struct hy_rigid_group {
    int32_t object[2];   /* side A, side B */
    int32_t unit[2];
    hy_v3 point[2];      /* sums, then means */
    int64_t first;       /* its contacts: a list through hy_group_row.next, or -1 */
    hy_v3 normal;        /* sum of the violated contacts' unit normals, A from B */
    hy_v3 row_normal;    /* sum of all its contacts' unit normals: the rows' normal */
    hy_v3 vel[2];        /* sums of each side's velocity at its contact points, as met */
    double d0_min, thickness, friction, restitution;
    int64_t count;       /* violated contacts (the mean's); the rows hold the met ones too */
} rigid_group;

/* A rigid group in the velocity sweeps (hy_response_apply_groups): its sides at their
 * mean points, normal, target normal velocity, effective inverse mass
 * along the normal (0: takes no part) and accumulated impulses. */
typedef struct hy_group_solve {
    hy_participant p[2];
    hy_v3 n;
    double target, K, acc_n;
    hy_v3 acc_t, acc_r; /* friction impulse, rolling resistance's angular impulse */
    hy_v3 row_n;        /* the rows' normal, A from B (zero: no rows) */
} group_solve;

/* One contact of a group as a row of the sweeps: its points on both
 * sides, its gap along the rows' normal (the mean of all the pair's
 * contacts' normals: an edge-edge pair's own normal, the edges' cross
 * product, can point almost anywhere), the normal velocity it may not go
 * below and the impulse it has taken. The group's impulse at the
 * mean point stops that point; a pair that touches over an area (a face
 * on a face, a cone's rim on the bowl) can still turn about it, its
 * contacts on one side approaching while those on the other lift off,
 * and in a resting pile half of a round's violated contacts were still
 * approaching after the sweeps, round after round, until the impact zones
 * froze the pile. Each contact's row keeps it from approaching (beyond
 * what its gap to the thickness allows): a one-sided impulse, never a
 * push, so it can stop a turn but not start one. The pushes apart (the
 * thickness) and the bounce stay with the group's impulse at the mean
 * point: rows that pushed each at its own gap spun a ball resting on a
 * plane up, step after step. */
typedef struct hy_group_row {
    hy_v3 point[2], vel[2]; /* each side's point and its velocity as met (an obstacle's counts) */
    double d0, target, K, acc;
    int64_t next; /* the pair's next row, or -1 */
} group_row;

/* Append a row for the contact between the sides pa, pb to group g; 0 when
 * out of memory (r->group_failed set). */
static int add_row(hy_resolver* r, rigid_group* g, const hy_participant* pa, const hy_participant* pb) {
    if (r->row_count == r->row_capacity) {
        int64_t cap = r->row_capacity ? 2 * r->row_capacity : 256;
        group_row* nr = realloc(r->rows, sizeof *nr * (size_t)cap);
        if (!nr) {
            r->group_failed = 1;
            return 0;
        }
        r->rows = nr;
        r->row_capacity = cap;
    }
    group_row* w = &r->rows[r->row_count];
    w->point[0] = pa->point;
    w->point[1] = pb->point;
    w->vel[0] = pa->vel;
    w->vel[1] = pb->vel;
    w->next = g->first;
    g->first = r->row_count++;
    return 1;
}

/* The slot of the pair (lo, hi) in the round's hash of groups (open
 * addressing over 2 x capacity slots): its group's, or the empty one to
 * put it in. */
static int64_t hash_slot(const hy_resolver* r, int32_t lo, int32_t hi) {
    uint64_t slots = 2 * (uint64_t)r->group_capacity;
    uint64_t k = ((uint64_t)(uint32_t)lo * 0x9E3779B97F4A7C15ull ^ (uint32_t)hi) % slots;
    for (; r->group_hash[k] >= 0; k = (k + 1) % slots) {
        const rigid_group* g = &r->groups[r->group_hash[k]];
        int32_t glo = g->object[0] < g->object[1] ? g->object[0] : g->object[1];
        int32_t ghi = g->object[0] < g->object[1] ? g->object[1] : g->object[0];
        if (glo == lo && ghi == hi) break;
    }
    return (int64_t)k;
}

/* Room for one more group (and its hash slot): 0 when out of memory. */
static int grow_groups(hy_resolver* r) {
    if (r->group_count < r->group_capacity) return 1;
    int64_t cap = r->group_capacity ? 2 * r->group_capacity : 64;
    rigid_group* ng = realloc(r->groups, sizeof *ng * (size_t)cap);
    if (ng) r->groups = ng;
    group_solve* ns = ng ? realloc(r->group_solve, sizeof *ns * (size_t)cap) : NULL;
    if (ns) r->group_solve = ns;
    int64_t* nh = ns ? realloc(r->group_hash, sizeof *nh * 2 * (size_t)cap) : NULL;
    if (!nh) return 0;
    r->group_hash = nh;
    r->group_capacity = cap;
    for (int64_t i = 0; i < 2 * cap; i++) nh[i] = -1;
    for (int64_t i = 0; i < r->group_count; i++) {
        const rigid_group* g = &r->groups[i];
        int32_t lo = g->object[0] < g->object[1] ? g->object[0] : g->object[1];
        int32_t hi = g->object[0] < g->object[1] ? g->object[1] : g->object[0];
        nh[hash_slot(r, lo, hi)] = i;
    }
    return 1;
}

int hy_response_group_add(hy_resolver* r, const hy_participant* parts, hy_v3 n, double d0, double thickness,
                          double friction, double restitution, int met) {
    int a = parts[0].weight > 0 ? 0 : 1, b = 1 - a;
    if (!grow_groups(r)) {
        r->group_failed = 1;
        return 0;
    }
    int32_t oa = parts[a].object, ob = parts[b].object;
    int64_t slot = hash_slot(r, oa < ob ? oa : ob, oa < ob ? ob : oa);
    rigid_group* g = NULL;
    int flip = 0;
    if (r->group_hash[slot] >= 0) {
        g = &r->groups[r->group_hash[slot]];
        flip = g->object[0] != oa;
    } else {
        r->group_hash[slot] = r->group_count;
        g = &r->groups[r->group_count++];
        memset(g, 0, sizeof *g);
        g->object[0] = oa;
        g->object[1] = ob;
        g->unit[0] = parts[a].unit;
        g->unit[1] = parts[b].unit;
        g->d0_min = HUGE_VAL;
        g->first = -1;
    }
    if (flip) {
        int t = a;
        a = b;
        b = t;
        n = v3_scale(n, -1.0);
    }
    if (!add_row(r, g, &parts[a], &parts[b])) return 0;
    g->row_normal = v3_add(g->row_normal, n);
    g->thickness = fmax(g->thickness, thickness);
    if (met) return 1;
    g->point[0] = v3_add(g->point[0], parts[a].point);
    g->point[1] = v3_add(g->point[1], parts[b].point);
    g->normal = v3_add(g->normal, n);
    g->vel[0] = v3_add(g->vel[0], parts[a].vel);
    g->vel[1] = v3_add(g->vel[1], parts[b].vel);
    g->d0_min = fmin(g->d0_min, d0);
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

/* The rows of a group in a sweep (see hy_group_row): each contact kept
 * from approaching, a one-sided impulse along the rows' normal. */
static void solve_rows(hy_resolver* r, const group_solve* q, const rigid_group* g) {
    for (int64_t k = g->first; k >= 0; k = r->rows[k].next) {
        group_row* w = &r->rows[k];
        if (w->K == 0.0) continue;
        hy_participant p[2] = {q->p[0], q->p[1]};
        p[0].point = w->point[0];
        p[1].point = w->point[1];
        hy_v3 vr = v3_sub(side_velocity(r, &p[0], w->vel[0]), side_velocity(r, &p[1], w->vel[1]));
        double acc = fmax(w->acc + (w->target - v3_dot(vr, q->row_n)) / w->K, 0.0);
        hy_v3 J = v3_scale(q->row_n, acc - w->acc);
        w->acc = acc;
        apply_impulse(r, &p[0], J);
        apply_impulse(r, &p[1], v3_scale(J, -1.0));
    }
}

/* One group's impulses in a sweep: at the mean point the normal impulse
 * towards its target, accumulated and kept >= 0, friction within the
 * Coulomb cone of it and rolling resistance; then its rows. */
static void solve_group(hy_resolver* r, group_solve* q, const rigid_group* g) {
    if (q->K != 0.0) {
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
    solve_rows(r, q, g);
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
        double inv = g->count > 0 ? 1.0 / (double)g->count : 0.0;
        double len = v3_len(g->normal);
        q->K = 0.0; /* 0: the group takes no part */
        q->acc_n = 0.0;
        q->acc_t = q->acc_r = v3(0, 0, 0);
        q->n = len > 1e-300 ? v3_scale(g->normal, 1.0 / len) : v3(0, 0, 0);
        double row_len = v3_len(g->row_normal);
        q->row_n = row_len > 1e-300 ? v3_scale(g->row_normal, 1.0 / row_len) : v3(0, 0, 0);
        for (int k = 0; k < 2; k++) {
            q->p[k].unit = g->unit[k];
            q->p[k].object = g->object[k];
            q->p[k].weight = k ? -1.0 : 1.0;
            q->p[k].point = v3_scale(g->point[k], inv);
            q->p[k].vel = v3_scale(g->vel[k], inv); /* an obstacle's, as met */
        }
        /* the rows: each contact's gap along the rows' normal, and the
         * approach it allows (none beyond reaching the thickness) */
        for (int64_t k = g->first; k >= 0; k = r->rows[k].next) {
            group_row* w = &r->rows[k];
            hy_participant p[2] = {q->p[0], q->p[1]};
            p[0].point = w->point[0];
            p[1].point = w->point[1];
            w->d0 = v3_dot(q->row_n, v3_sub(w->point[0], w->point[1]));
            w->target = fmin(0.0, (g->thickness - w->d0) / r->dt);
            w->acc = 0.0;
            w->K = row_len > 1e-300 ? inv_mass_along(r, &p[0], q->row_n) + inv_mass_along(r, &p[1], q->row_n) : 0.0;
            if (!(w->K > 1e-300)) w->K = 0.0;
        }
        if (g->count == 0 || !(len > 1e-300)) continue; /* no violated contact, or opposing normals cancel */
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
        for (int64_t i = 0; i < r->group_count; i++) solve_group(r, &gs[i], &r->groups[i]);
    for (int64_t i = 0; i < r->group_count; i++)
    {
        hy_v3 J = v3_mad(gs[i].acc_t, gs[i].n, gs[i].acc_n);
        for (int64_t k = r->groups[i].first; k >= 0; k = r->rows[k].next) J = v3_mad(J, gs[i].row_n, r->rows[k].acc);
        if (v3_len2(J) > 0.0) record_impulse(r, r->groups[i].object[0], r->groups[i].object[1], v3_len(J));
    }
    for (int64_t i = 0; i < 2 * r->group_capacity; i++) r->group_hash[i] = -1;
    r->group_count = 0;
    r->row_count = 0;
}
