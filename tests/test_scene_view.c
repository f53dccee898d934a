/* Collision on a scene view alone (collision/scene_view.h), with no world:
 * a square of free vertices (cloth) and a rigid square plate (body) each
 * dropped at 2 m/s onto a static scripted ground triangle, one step of
 * 10 ms that would carry them 15 mm through it. The response ends the
 * free vertices' step at the thickness and bounces the plate with its
 * restitution; both come back through the view's X1, V and body1, and the
 * first detection round's contacts through the caller's list. This file
 * includes nothing of engine/. */
#include <math.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/response.h"
#include "collision/scene_view.h"
#include "core/pool.h"
#include "sched/policy.h"
#include "sched/proximity.h"
#include "test.h"

#define DT 0.01
#define THICKNESS 0.002
#define HEIGHT 0.005 /* the square's height over the ground at the start, m */
#define SPEED 2.0    /* downwards, m/s */

static const int32_t square_tri[6] = {0, 1, 2, 0, 2, 3};
static const double square_local[12] = {-0.05, 0, -0.05, 0.05, 0, -0.05, 0.05, 0, 0.05, -0.05, 0, 0.05};
/* one large triangle: its vertices and edges are metres from the square */
static const int32_t ground_tri[3] = {0, 1, 2};
static const double ground_x[9] = {-5, 0, -5, 0, 0, 8, 5, 0, -5};

/* Object 0 the square (free vertices of 0.01 kg, or a rigid plate of
 * 1 kg), object 1 the static ground. */
static hy_status make_view(hy_scene_view* v, int rigid) {
    hy_status s = hy_scene_view_layout(v, 2, 7);
    if (s) return s;
    v->offset[1] = 4;
    v->offset[2] = 7;
    for (int32_t g = 0; g < 7; g++) v->vertex_object[g] = g < 4 ? 0 : 1;
    v->motion[0] = (unsigned char)(rigid ? HY_MOVES_RIGID : HY_MOVES_FREE);
    v->motion[1] = HY_MOVES_SCRIPTED;
    v->tri[0] = square_tri;
    v->tri_count[0] = 2;
    v->tri[1] = ground_tri;
    v->tri_count[1] = 1;
    v->local[0] = square_local;
    for (int i = 0; i < 2; i++) {
        v->thickness[i] = THICKNESS;
        v->friction[i] = 0.0;
        v->restitution[i] = 0.5;
    }
    v->flags[0] = 0;
    v->flags[1] = HY_VIEW_DRIVEN | HY_VIEW_STATIC;
    v->name[0] = "square";
    v->name[1] = "ground";
    for (int32_t k = 0; k < 4; k++) {
        for (int d = 0; d < 3; d++) {
            double x = square_local[3 * k + d] + (d == 1 ? HEIGHT : 0.0);
            v->X0[3 * k + d] = x;
            v->X1[3 * k + d] = x - (d == 1 ? SPEED * DT : 0.0);
            v->V[3 * k + d] = d == 1 ? -SPEED : 0.0;
        }
        if (!rigid) {
            v->mass[k] = 0.01;
            v->inv_mass[k] = 100.0;
        }
    }
    memcpy(v->X0 + 12, ground_x, sizeof ground_x);
    memcpy(v->X1 + 12, ground_x, sizeof ground_x);
    if (rigid) {
        hy_view_body b0 = {v3(0, HEIGHT, 0), (hy_quat){1, 0, 0, 0}, v3(0, -SPEED, 0), v3(0, 0, 0)};
        hy_view_body b1 = b0;
        b1.x = v3(0, HEIGHT - SPEED * DT, 0);
        v->body0[0] = b0;
        v->body1[0] = b1;
        v->body_mass[0] = 1.0;
        v->body_inv_mass[0] = 1.0;
        for (int d = 0; d < 3; d++) v->body_inv_inertia[4 * d] = 600.0; /* about a 10 cm plate's */
    }
    v->pose_q0[1] = v->pose_q1[1] = (hy_quat){1, 0, 0, 0};
    return HY_OK;
}

/* One response over a view made by make_view; its first round's contacts
 * in *first. */
static void resolve(hy_scene_view* v, int rigid, hy_prox* prox, hy_pool* pool, hy_contact_list* first,
                    hy_step_stats* st) {
    hy_collision_state* cs = NULL;
    memset(v, 0, sizeof *v);
    memset(st, 0, sizeof *st);
    CHECK_OK(make_view(v, rigid));
    CHECK_OK(hy_collision_state_sync(&cs, v));
    CHECK(cs != NULL);
    if (!cs) return;
    hy_response_params rp = hy_response_params_default();
    CHECK_OK(hy_collision_resolve(cs, v, prox, pool, DT, &rp, first, st));
    /* a state made for other objects is refused, not used */
    hy_scene_view other;
    memset(&other, 0, sizeof other);
    CHECK(hy_collision_resolve(cs, &other, prox, pool, DT, &rp, NULL, st) == HY_ERR_INVALID_ARG);
    hy_collision_state_destroy(cs);
}

/* Every contact of the list between the square (vertices 0-3) and the
 * ground (4-6): vertex-face with the square's vertex on the ground's face. */
static int square_on_ground(const hy_contact_list* l) {
    for (int64_t k = 0; k < l->count; k++) {
        const hy_contact* c = &l->items[k];
        if (c->type != HY_CONTACT_VF || c->v[0] > 3 || c->v[1] < 4 || c->v[2] < 4 || c->v[3] < 4) return 0;
    }
    return 1;
}

static void test_free(hy_prox* prox, hy_pool* pool) {
    hy_scene_view v;
    hy_contact_list first = {0};
    hy_step_stats st;
    resolve(&v, 0, prox, pool, &first, &st);
    fprintf(stderr, "free: %lld contacts, %d rounds, y1 %.9f, vy %.6f\n", (long long)first.count,
            st.response_iterations, v.X1[1], v.V[1]);
    CHECK(first.count == 4 && st.contacts == 4);
    CHECK(square_on_ground(&first));
    CHECK(st.response_iterations == 2);
    /* each vertex is let approach at (thickness - gap) / dt, no faster: it
     * ends the step at the thickness */
    for (int32_t k = 0; k < 4; k++) {
        CHECK_NEAR(v.V[3 * k + 1], (THICKNESS - HEIGHT) / DT, 1e-9);
        CHECK_NEAR(v.X1[3 * k + 1], THICKNESS, 1e-12);
        CHECK(v.V[3 * k] == 0.0 && v.V[3 * k + 2] == 0.0);
    }
    /* the ground takes no impulse */
    CHECK(memcmp(v.X1 + 12, ground_x, sizeof ground_x) == 0);
    hy_contact_list_free(&first);
    hy_scene_view_free(&v);
}

static void test_rigid(hy_prox* prox, hy_pool* pool) {
    hy_scene_view v;
    hy_contact_list first = {0};
    hy_step_stats st;
    resolve(&v, 1, prox, pool, &first, &st);
    const hy_view_body* b = &v.body1[0];
    fprintf(stderr, "rigid: %lld contacts, %d rounds, v (%.9f %.9f %.9f), w (%.3g %.3g %.3g)\n",
            (long long)first.count, st.response_iterations, b->v.x, b->v.y, b->v.z, b->w.x, b->w.y, b->w.z);
    CHECK(first.count == 4 && square_on_ground(&first));
    CHECK(st.response_iterations == 2);
    /* the four contacts act as one at the plate's centre: it bounces
     * straight up at half its approach speed, without spin */
    CHECK_NEAR(b->v.y, 0.5 * SPEED, 1e-12);
    CHECK_NEAR(b->v.x, 0.0, 1e-12);
    CHECK_NEAR(b->v.z, 0.0, 1e-12);
    CHECK_NEAR(v3_len(b->w), 0.0, 1e-9);
    CHECK_NEAR(b->x.y, HEIGHT + 0.5 * SPEED * DT, 1e-12);
    /* its vertices follow the new state, velocities included */
    for (int32_t k = 0; k < 4; k++) {
        CHECK_NEAR(v.X1[3 * k + 1], HEIGHT + 0.5 * SPEED * DT, 1e-12);
        CHECK_NEAR(v.V[3 * k + 1], 0.5 * SPEED, 1e-9);
    }
    hy_contact_list_free(&first);
    hy_scene_view_free(&v);
}

int main(void) {
    hy_prox_config c;
    memset(&c, 0, sizeof c);
    c.policy = "lp";
    c.devices = "cpu";
    c.clock = HY_CLOCK_REAL;
    hy_sched_options_default(&c.options);
    hy_prox* prox = NULL;
    CHECK_OK(hy_prox_create(&c, &prox));
    hy_pool* pool = hy_pool_create(2);
    CHECK(prox != NULL && pool != NULL);
    if (prox && pool) {
        test_free(prox, pool);
        test_rigid(prox, pool);
    }
    hy_pool_destroy(pool);
    hy_prox_destroy(prox);
    TEST_END();
}
