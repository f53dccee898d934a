/* Tests the detection rounds of one step (collision/collide.c): a round
 * after the response moved a patch of the cloth keeps the last round's
 * contacts none of whose vertices moved and traverses only node pairs with
 * a moved node (hy_collide_detect's carry), and finds exactly the contacts
 * that a fresh collision state finds, from fewer candidates, over several
 * rounds that move different patches (a band moved twice, and a round
 * where nothing moved). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "engine/world.h"
#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/contact_lists.h"
#include "tests/reduced_scenes.h"
#include "tests/world_step.h"

static hy_world* load(int threads) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = threads;
    hy_world* w = NULL;
    char json[4096];
    snprintf(json, sizeof json, hy_test_cloth_ball_json, 48, 48);
    if (hy_scene_load_string(json, strlen(json), "test_detect_rounds", &o, &w))
        fprintf(stderr, "scene: %s\n", hy_last_error());
    return w;
}

/* World w keeps the last round's list (as the response does); world f
 * detects fresh each time. */
static void test_rounds(int threads) {
    hy_world* w = load(threads);
    hy_world* f = load(threads);
    CHECK(w && f);
    if (!w || !f) {
        hy_world_destroy(w);
        hy_world_destroy(f);
        return;
    }
    for (int i = 0; i < 30; i++) {
        CHECK_OK(hy_test_step(w));
        CHECK_OK(hy_test_step(f));
    }
    CHECK(hy_test_hash(w) == hy_test_hash(f));
    const hy_collision_state* cs = w->collision; /* for its size only: replaced before the rounds */
    size_t n = cs ? 3 * (size_t)cs->vertex_count : 0;
    int32_t nv = w->objects[0].model.nv; /* the cloth, rows of 48 vertices */
    double* X0 = malloc(sizeof(double) * (n + 1));
    double* X1 = malloc(sizeof(double) * (n + 1));
    CHECK(cs && X0 && X1);
    if (!cs || !X0 || !X1) {
        free(X0);
        free(X1);
        hy_world_destroy(w);
        hy_world_destroy(f);
        return;
    }
    hy_test_world_positions(w, X0);
    /* the cloth sinks 3 mm (into its thickness on the ball) */
    memcpy(X1, X0, sizeof(double) * n);
    for (int32_t v = 0; v < nv; v++) X1[3 * (size_t)v + 1] -= 0.003;
    /* rounds 2-5 lift a band of rows each: one over the top of the ball,
     * one on its side, the first again, and none */
    const int32_t bands[4][2] = {{22, 25}, {12, 15}, {23, 26}, {0, 0}};
    /* Both worlds start the rounds from a collision state made now: a tree
     * carried through the steps (built at an earlier state, refit, rebuilt
     * when refitting let it decay) may find other candidates than one built
     * at this state, and only the rounds are under test. */
    hy_collision_state_destroy(w->collision);
    w->collision = NULL;
    hy_contact_list a = {0}, b = {0};
    int64_t differ = 0, contacts = 0, fewer = 0, carried = 0;
    for (int r = 0; r < 5; r++) {
        if (r > 0)
            for (int32_t v = 48 * bands[r - 1][0]; v < 48 * bands[r - 1][1] && v < nv; v++)
                X1[3 * (size_t)v + 1] += 0.0015;
        hy_step_stats sa, sb;
        memset(&sa, 0, sizeof sa);
        memset(&sb, 0, sizeof sb);
        b.count = 0;
        if (r == 0) a.count = 0;
        CHECK_OK(hy_world_detect(w, X0, X1, r > 0, &a, &sa));
        hy_contacts_canonicalize(&a, NULL);
        CHECK_OK(hy_test_detect_fresh(f, X0, X1, &b, &sb));
        contacts += a.count;
        differ += !hy_test_same_contacts(&a, &b);
        /* round 2 traverses every pair (the first update after a build
         * refits the whole tree) but tests only those with a moved vertex */
        fewer += r > 0 && (r == 1 || sa.candidates < sb.candidates) && sa.exact_tests < sb.exact_tests;
        carried += w->collision->carried;
        if (r == 4) CHECK(sa.candidates == 0 && w->collision->carried == a.count); /* nothing moved */
    }
    fprintf(stderr, "rounds (%d threads): %lld contacts over 5 rounds, %lld kept; %lld rounds differ from fresh\n",
            threads, (long long)contacts, (long long)carried, (long long)differ);
    CHECK(contacts > 500 && carried > 0);
    CHECK(fewer == 4);
    CHECK(differ == 0);
    hy_contact_list_free(&a);
    hy_contact_list_free(&b);
    free(X0);
    free(X1);
    hy_world_destroy(w);
    hy_world_destroy(f);
}

int main(void) {
    test_rounds(1);
    test_rounds(2);
    TEST_END();
}
