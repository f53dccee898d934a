/* Sleeping rigid bodies (hy_world_def.sleep_time): which bodies are at
 * rest, the islands they fall asleep in, and waking (hy_world_update_sleep,
 * after every substep). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "core/error.h"
#include "engine/kinds.h"

static int32_t find_root(int32_t* parent, int32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

static void join(int32_t* parent, int32_t a, int32_t b) {
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a != b) parent[a > b ? a : b] = a < b ? a : b; /* the lower slot is the root: order-free */
}

/* A body's speed for sleeping: its centre's, or its spin times its reach
 * (the speed of its farthest vertex), whichever is more. */
static double body_speed(const hy_object* o) {
    return fmax(v3_len(o->state->body.v), v3_len(o->state->body.w) * o->model.reach);
}

/* How far the body's farthest point is from where its rest pose put it:
 * the centre's move plus the turn (angle, small) times the reach. */
static double rest_drift(const hy_object* o) {
    hy_quat r = o->state->rest_q;
    hy_quat d = quat_mul(o->state->body.q, (hy_quat){r.w, -r.x, -r.y, -r.z});
    double s = sqrt(d.x * d.x + d.y * d.y + d.z * d.z), angle = 2.0 * atan2(s, fabs(d.w));
    return v3_len(v3_sub(o->state->body.x, o->state->rest_x)) + angle * o->model.reach;
}

/* Whether an awake body's motion is rest by the rest test (see
 * hy_world_update_sleep): slower than the sleep velocity, or jittering
 * within the rest drift of its rest pose slower than ten times it. */
static int resting(const hy_world* w, const hy_object* o, double speed) {
    double drift = 0.25 * w->def.sleep_velocity * w->def.sleep_time;
    return speed < w->def.sleep_velocity || (rest_drift(o) < drift && speed < 10.0 * w->def.sleep_velocity);
}

/* An awake body that may push a sleeper: faster than the sleep velocity
 * and not jittering at rest in its rest window. */
static int moves(const hy_world* w, const hy_object* o) {
    double speed = body_speed(o);
    return speed > w->def.sleep_velocity && !(o->state->rest_steps > 0 && resting(w, o, speed));
}

/* The slot's scratch: 2 (n + 1) union-find slots, 2 (n + 1) flags and a
 * box per object. Grows with the objects; a steady step allocates nothing. */
static hy_status grow(hy_world* w, int32_t n) {
    if (w->sleep_capacity >= n + 1) return HY_OK;
    int32_t* p = realloc(w->sleep_parent, sizeof *p * 2 * ((size_t)n + 1));
    if (p) w->sleep_parent = p;
    unsigned char* f = p ? realloc(w->sleep_flag, 2 * ((size_t)n + 1)) : NULL;
    if (f) w->sleep_flag = f;
    double* b = f ? realloc(w->sleep_box, sizeof *b * 6 * ((size_t)n + 1)) : NULL;
    if (!b) return hy_fail(HY_ERR_NOMEM, "out of memory grouping %d objects for sleep", n);
    w->sleep_box = b;
    w->sleep_capacity = n + 1;
    return HY_OK;
}

/* The box of an object's vertices, and their largest speed. */
static double object_box(const hy_object* o, double box[6]) {
    double vmax2 = 0.0;
    box[0] = box[1] = box[2] = HUGE_VAL;
    box[3] = box[4] = box[5] = -HUGE_VAL;
    for (int32_t k = 0; k < o->model.nv; k++) {
        const double *x = o->state->x + 3 * k, *v = o->state->v + 3 * k;
        for (int d = 0; d < 3; d++) {
            box[d] = fmin(box[d], x[d]);
            box[3 + d] = fmax(box[3 + d], x[d]);
        }
        vmax2 = fmax(vmax2, v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    return sqrt(vmax2);
}

static int is_sleeper(const hy_object* o) { return o->alive && hy_object_has(o, HY_KIND_SLEEPS) && o->state->asleep; }

static int is_awake_body(const hy_object* o) {
    return o->alive && hy_object_has(o, HY_KIND_SLEEPS) && !o->state->asleep;
}

/* An awake body whose rest may end this update in sleep (its count before
 * the update's rest test: one more step makes it more than need). */
static int may_fall_asleep(const hy_object* o, int32_t need) {
    return is_awake_body(o) && o->state->rest_steps >= need;
}

/* The floor and other static obstacles: contacts with them join nothing. */
static int is_ground(const hy_object* o) { return hy_object_has(o, HY_KIND_SCRIPTED) && hy_object_is_static(o); }

/* Sleepers to wake, by island (woken[island] = 1): one the response moved
 * (a sleeper takes no impulse, so only an impact zone or the caller can),
 * one bonded to a moving body, and one whose box meets the box a moving
 * object may sweep over the next two steps. A moving object is an awake
 * body faster than sleep_velocity (its centre, or its spin times its
 * reach) that is not jittering at rest (bodies at rest beside a sleeper
 * would otherwise wake it, and all that rests on it, for ever), or any
 * other object that is not static (cloth, a moving obstacle). Found
 * before the mover arrives, the sleeper meets it awake, with its mass: a
 * sleeper takes no impulse and would stop the mover like a wall, and
 * holds a body bonded to it as an anchor. For the same reason an awake
 * body that may fall asleep this update but whose box meets a mover's is
 * marked near (per slot): it stays awake while the mover may reach it. */
static void find_woken(hy_world* w, double dt, int32_t need, unsigned char* woken, unsigned char* near) {
    int32_t n = w->object_count, watched = 0;
    double* box = w->sleep_box;
    for (int32_t i = 0; i < n; i++) {
        hy_object* o = &w->objects[i];
        if (is_sleeper(o)) {
            hy_rigid_state* b = &o->state->body;
            if (v3_len2(b->v) > 0.0 || v3_len2(b->w) > 0.0) woken[o->state->island] = 1;
        } else if (!may_fall_asleep(o, need)) {
            continue;
        }
        watched++;
        object_box(o, box + 6 * i);
    }
    if (watched == 0) return;
    for (int32_t k = 0; k < w->bonds.count; k++) {
        const hy_bond* bd = &w->bonds.bonds[k];
        const hy_object *a = &w->objects[bd->a], *b = &w->objects[bd->b];
        if (bd->broken || is_sleeper(a) == is_sleeper(b)) continue;
        const hy_object *sleeper = is_sleeper(a) ? a : b, *other = is_sleeper(a) ? b : a;
        if (other->alive && moves(w, other)) woken[sleeper->state->island] = 1;
    }
    for (int32_t i = 0; i < n; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || is_sleeper(o) || hy_object_is_static(o)) continue;
        double mb[6];
        double speed = object_box(o, mb);
        if (hy_object_has(o, HY_KIND_SLEEPS)) { /* its vertices' velocities may lack the spin */
            if (!moves(w, o)) continue;
            speed = body_speed(o);
        }
        double grow = 2.0 * speed * dt + 2.0 * o->model.thickness;
        for (int32_t j = 0; j < n; j++) {
            const hy_object* sj = &w->objects[j];
            int sleeper = is_sleeper(sj);
            if (sleeper ? woken[sj->state->island] : j == i || near[j] || !may_fall_asleep(sj, need)) continue;
            const double* sb = box + 6 * j;
            double g = grow + sj->model.thickness;
            int apart = 0;
            for (int d = 0; d < 3 && !apart; d++) apart = mb[d] - g > sb[3 + d] || mb[3 + d] + g < sb[d];
            if (apart) continue;
            if (sleeper) woken[sj->state->island] = 1;
            else near[j] = 1;
        }
    }
}

/* The two objects of a contact. */
static void contact_objects(const hy_world* w, const hy_contact* c, int32_t* a, int32_t* b) {
    *a = w->view.vertex_object[c->v[0]];
    *b = w->view.vertex_object[c->v[c->type == HY_CONTACT_VF ? 1 : 2]];
}

/* After a step: wake (find_woken), then put to sleep. A body is at rest
 * while it moves slower than the sleep velocity (a slow creep: its rest
 * pose follows it), or while its farthest point stays within a quarter of
 * sleep_velocity x sleep_time of the pose its rest began from and it moves
 * slower than ten times the sleep velocity (a box on a floor jitters in
 * place at a few cm/s, which a test on the speed alone would never call
 * rest). An awake body that has been at rest for sleep_time, and neither
 * touches (this step's contacts) nor is bonded to an awake body that has
 * not, falls asleep, its velocities zeroed. A sleeper holds what rests on it,
 * or is bonded to it, as the floor does, so a pile or a bonded wall falls
 * asleep in parts, each as it comes to rest, rather than only when its
 * last restless member does. A body that touches cloth or a moving
 * obstacle stays awake. The sleepers' islands (what wakes together) are
 * every sleeper joined by contacts or bonds when it fell asleep, the old
 * islands it touched included: what rests on a body that wakes, or is
 * bonded to it, wakes with it. Serial, in slot order. */
hy_status hy_world_update_sleep(hy_world* w, double dt) {
    if (!(w->def.sleep_time > 0.0)) return HY_OK;
    int32_t n = w->object_count;
    hy_status s = grow(w, n);
    if (s) return s;
    int32_t need = (int32_t)ceil(w->def.sleep_time / dt);
    unsigned char* woken = w->sleep_flag; /* per island: struck */
    unsigned char* near = w->sleep_flag + n + 1; /* per slot: stays awake this time */
    memset(woken, 0, 2 * ((size_t)n + 1));
    find_woken(w, dt, need, woken, near);
    double drift = 0.25 * w->def.sleep_velocity * w->def.sleep_time;
    for (int32_t i = 0; i < n; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || !hy_object_has(o, HY_KIND_SLEEPS) || o->state->asleep) continue;
        if (o->state->rest_steps > 0 && resting(w, o, body_speed(o))) {
            o->state->rest_steps++;
            if (!(rest_drift(o) < drift)) { /* creeping slower than the sleep velocity: rest goes on, measured from here */
                o->state->rest_x = o->state->body.x;
                o->state->rest_q = o->state->body.q;
            }
        } else { /* a new rest window from here */
            o->state->rest_steps = 1;
            o->state->rest_x = o->state->body.x;
            o->state->rest_q = o->state->body.q;
        }
    }
    /* A woken sleeper has not moved: its rest window goes on from where it
     * fell asleep, so that it counts as rested (it keeps no neighbour
     * awake) and may sleep again once no mover is near and it has not been
     * moved; a push that moves it ends the window as any motion does. It
     * stays awake this time, with the mover that woke it on its way. */
    for (int32_t i = 0; i < n; i++)
        if (is_sleeper(&w->objects[i]) && woken[w->objects[i].state->island]) {
            w->objects[i].state->asleep = 0;
            near[i] = 1;
        }

    /* Each awake body sleeps on its own once it has rested for
     * sleep_time, unless it touches (this step's contacts) or is bonded to
     * an awake body that has not, or touches cloth or a moving obstacle.
     * A pile, or a bonded wall, falls asleep from its calm parts on: a
     * sleeper holds what rests on it, or is bonded to it, as the floor
     * does. (Bonded bodies sleeping only as a whole kept fracture's
     * standing wall awake for good: one of its hundreds of pieces had
     * always just been nudged.) */
    unsigned char* keep = w->sleep_flag; /* per slot: may not sleep */
    memset(keep, 0, (size_t)n + 1);
    for (int32_t i = 0; i < n; i++) {
        const hy_object* o = &w->objects[i];
        if (is_awake_body(o) && (o->state->rest_steps <= need || near[i])) keep[i] = 1;
    }
    for (int32_t k = 0; k < w->bonds.count; k++) {
        const hy_bond* b = &w->bonds.bonds[k];
        if (b->broken) continue;
        const hy_object *oa = &w->objects[b->a], *ob = &w->objects[b->b];
        if (is_awake_body(oa) && is_awake_body(ob) && (oa->state->rest_steps <= need || ob->state->rest_steps <= need))
            keep[b->a] = keep[b->b] = 1;
    }
    const hy_collision_state* cs = w->collision;
    int contacts_known = cs && cs->object_count == n;
    for (int64_t k = 0; contacts_known && k < w->last_contact_count; k++) {
        int32_t ends[2];
        contact_objects(w, &w->last_contacts[k], &ends[0], &ends[1]);
        for (int e = 0; e < 2; e++) {
            const hy_object *o = &w->objects[ends[e]], *other = &w->objects[ends[1 - e]];
            if (!is_awake_body(o) || ends[0] == ends[1]) continue;
            int restless = is_awake_body(other) ? other->state->rest_steps <= need
                                                : other->alive && !is_ground(other) && !is_sleeper(other);
            if (restless) keep[ends[e]] = 1;
        }
    }
    int32_t fell = 0;
    for (int32_t i = 0; i < n; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || !hy_object_has(o, HY_KIND_SLEEPS) || o->state->asleep || keep[i]) continue;
        o->state->asleep = 1;
        o->state->island = i;
        o->state->body.v = v3(0, 0, 0);
        o->state->body.w = v3(0, 0, 0);
        hy_body_pose_vertices(o, &o->state->body, o->state->x, o->state->v);
        fell++;
    }
    if (fell == 0) return HY_OK;

    /* the islands: the old ones (by label: the first member met stands for
     * the rest) joined by this step's contacts and bonds between sleepers */
    int32_t* parent = w->sleep_parent;
    int32_t* first = parent + n + 1;
    for (int32_t i = 0; i < n; i++) {
        parent[i] = i;
        first[i] = -1;
    }
    for (int32_t i = 0; i < n; i++) {
        const hy_object* o = &w->objects[i];
        if (!is_sleeper(o)) continue;
        int32_t label = o->state->island;
        if (first[label] < 0) first[label] = i;
        else join(parent, first[label], i);
    }
    for (int64_t k = 0; contacts_known && k < w->last_contact_count; k++) {
        int32_t a, b;
        contact_objects(w, &w->last_contacts[k], &a, &b);
        if (is_sleeper(&w->objects[a]) && is_sleeper(&w->objects[b])) join(parent, a, b);
    }
    for (int32_t k = 0; k < w->bonds.count; k++) {
        const hy_bond* b = &w->bonds.bonds[k];
        if (!b->broken && is_sleeper(&w->objects[b->a]) && is_sleeper(&w->objects[b->b])) join(parent, b->a, b->b);
    }
    for (int32_t i = 0; i < n; i++)
        if (is_sleeper(&w->objects[i])) w->objects[i].state->island = find_root(parent, i);
    return HY_OK;
}

/* Which bodies touch something: the pairs the last step's contact events
 * left touching (kept in snapshots, so a restored world damps as the
 * original does). Such a body, awake and slower than ten times the sleep
 * velocity (the rest test's bound), is damped. */
hy_status hy_world_damp_resting(hy_world* w, double dt) {
    if (!(w->def.rest_damping > 0.0) || w->touching_count == 0) return HY_OK;
    int32_t n = w->object_count;
    hy_status s = grow(w, n);
    if (s) return s;
    unsigned char* touches = w->sleep_flag;
    memset(touches, 0, (size_t)n + 1);
    for (int64_t i = 0; i < w->touching_count; i++) {
        int32_t a = hy_world_live_slot(w, w->touching[i].a), b = hy_world_live_slot(w, w->touching[i].b);
        if (a >= 0 && b >= 0) touches[a] = touches[b] = 1;
    }
    double keep = 1.0 / (1.0 + w->def.rest_damping * dt), slow = 10.0 * w->def.sleep_velocity;
    for (int32_t i = 0; i < n; i++) {
        hy_object* o = &w->objects[i];
        if (!touches[i] || !o->alive || !hy_object_has(o, HY_KIND_SLEEPS) || o->state->asleep ||
            o->state->kinematic || !(body_speed(o) < slow))
            continue;
        o->state->body.v = v3_scale(o->state->body.v, keep);
        o->state->body.w = v3_scale(o->state->body.w, keep);
    }
    return HY_OK;
}
