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

/* After a step: a sleeper something struck wakes with its whole island
 * (the contacts between sleepers are not tracked, so which of them rest on
 * it is not known; an island is every body that fell asleep touching, or
 * bonded to, another of it). A body is at rest while its farthest point stays within a
 * quarter of sleep_velocity x sleep_time of the pose its rest began from
 * (a box on a floor jitters in place at a few cm/s, which a test on the
 * speed alone would never call rest), and it moves slower than ten times
 * the sleep velocity. Every group of bodies joined by this step's contacts
 * and by intact bonds whose members have all been at rest for sleep_time
 * falls asleep, its velocities zeroed. A group that touches cloth or a
 * moving obstacle stays awake. Serial, in slot order. */
hy_status hy_world_update_sleep(hy_world* w, double dt) {
    if (!(w->def.sleep_time > 0.0)) return HY_OK;
    int32_t n = w->object_count;
    if (w->sleep_capacity < n + 1) { /* grows with the objects; a steady step allocates nothing */
        int32_t* p = realloc(w->sleep_parent, sizeof *p * ((size_t)n + 1));
        if (p) w->sleep_parent = p;
        unsigned char* f = p ? realloc(w->sleep_flag, (size_t)n + 1) : NULL;
        if (!f) return hy_fail(HY_ERR_NOMEM, "out of memory grouping %d objects for sleep", n);
        w->sleep_flag = f;
        w->sleep_capacity = n + 1;
    }
    unsigned char* woken = w->sleep_flag; /* per island: struck */
    memset(woken, 0, (size_t)n + 1);
    double drift = 0.25 * w->def.sleep_velocity * w->def.sleep_time;
    for (int32_t i = 0; i < n; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || !hy_object_has(o, HY_KIND_SLEEPS)) continue;
        double speed = body_speed(o);
        if (o->state->asleep) {
            if (speed > 0.0) woken[o->state->island] = 1;
            continue;
        }
        if (o->state->rest_steps > 0 && rest_drift(o) < drift && speed < 10.0 * w->def.sleep_velocity) {
            o->state->rest_steps++;
        } else { /* a new rest window from here */
            o->state->rest_steps = 1;
            o->state->rest_x = o->state->body.x;
            o->state->rest_q = o->state->body.q;
        }
    }
    for (int32_t i = 0; i < n; i++)
        if (w->objects[i].state->asleep && woken[w->objects[i].state->island]) {
            w->objects[i].state->asleep = 0;
            w->objects[i].state->rest_steps = 0;
        }
    int32_t need = (int32_t)ceil(w->def.sleep_time / dt);
    int32_t* parent = w->sleep_parent;
    unsigned char* keep = w->sleep_flag; /* per root: a member may not sleep */
    memset(keep, 0, (size_t)n + 1);
    for (int32_t i = 0; i < n; i++) parent[i] = i;
    const hy_collision_state* cs = w->collision;
    int contacts_known = cs && cs->object_count == n;
    for (int64_t k = 0; contacts_known && k < w->last_contact_count; k++) {
        const hy_contact* c = &w->last_contacts[k];
        int32_t a = w->view.vertex_object[c->v[0]];
        int32_t b = w->view.vertex_object[c->v[c->type == HY_CONTACT_VF ? 1 : 2]];
        const hy_object *oa = &w->objects[a], *ob = &w->objects[b];
        if ((hy_object_has(oa, HY_KIND_SCRIPTED) && hy_object_is_static(oa)) ||
            (hy_object_has(ob, HY_KIND_SCRIPTED) && hy_object_is_static(ob)))
            continue; /* the floor joins nothing */
        join(parent, a, b);
    }
    for (int32_t k = 0; k < w->bonds.count; k++)
        if (!w->bonds.bonds[k].broken) join(parent, w->bonds.bonds[k].a, w->bonds.bonds[k].b);
    /* a sleeper keeps its island: a group that touches it joins that island */
    for (int32_t i = 0; i < n; i++) {
        const hy_object* o = &w->objects[i];
        if (o->alive && hy_object_has(o, HY_KIND_SLEEPS) && o->state->asleep) join(parent, i, o->state->island);
    }
    for (int32_t i = 0; i < n; i++) {
        const hy_object* o = &w->objects[i];
        int body = o->alive && hy_object_has(o, HY_KIND_SLEEPS);
        if (o->alive && !body && !(hy_object_has(o, HY_KIND_SCRIPTED) && hy_object_is_static(o)))
            keep[find_root(parent, i)] = 1; /* cloth or a moving obstacle */
        if (body && !o->state->asleep && o->state->rest_steps <= need) keep[find_root(parent, i)] = 1;
    }
    for (int32_t i = 0; i < n; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || !hy_object_has(o, HY_KIND_SLEEPS)) continue;
        int32_t root = find_root(parent, i);
        if (o->state->asleep) {
            o->state->island = root;
            continue;
        }
        if (keep[root]) continue;
        o->state->asleep = 1;
        o->state->island = root;
        o->state->body.v = v3(0, 0, 0);
        o->state->body.w = v3(0, 0, 0);
        hy_body_pose_vertices(o, &o->state->body, o->state->x, o->state->v);
    }
    return HY_OK;
}
