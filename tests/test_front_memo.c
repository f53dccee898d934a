/* Tests the traversal front's memo across the detection rounds of one step
 * (collision/front_memo.h): a round after the response moved a patch of
 * the cloth gives again the answers of the front pairs whose subtrees did
 * not move, and finds exactly the contacts, candidates and exact tests
 * that a fresh collision state finds, over several rounds that move
 * different patches (an answer kept twice is checked against the round
 * that made it). The same rounds keeping the last round's contacts and
 * traversing only node pairs with a moved node (hy_collision_state.carry)
 * find the same contacts from fewer candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/traverse_hd.h"
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
    if (hy_scene_load_string(json, strlen(json), "test_front_memo", &o, &w))
        fprintf(stderr, "scene: %s\n", hy_last_error());
    return w;
}

/* carry = 0: world w detects each round into an empty list, its memos
 * answering what did not move; carry = 1: w keeps the last round's list
 * (hy_collision_state.carry, as the response does) and looks only at node
 * pairs with a moved node. Either way the contacts are those of a fresh
 * detection; with carry the candidates are fewer. */
static void test_rounds(int threads, int carry) {
    /* two identical worlds: one keeps its memo over the rounds, the other
     * detects fresh each time */
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
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        memcpy(X0 + 3 * (size_t)w->view.offset[i], o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
    }
    /* the cloth sinks 3 mm (into its thickness on the ball) */
    memcpy(X1, X0, sizeof(double) * n);
    for (int32_t v = 0; v < nv; v++) X1[3 * (size_t)v + 1] -= 0.003;
    /* rounds 2-5 lift a band of rows each: one over the top of the ball,
     * one on its side, the first again (answers of round 2 there are now
     * stale), and none (the jobs' memo then gives the whole traversal) */
    const int32_t bands[4][2] = {{22, 25}, {12, 15}, {23, 26}, {0, 0}};
    /* Both worlds start the rounds from a collision state made now: a tree
     * carried through the steps (built at an earlier state, refit, rebuilt
     * when refitting let it decay) may find other candidates than one built
     * at this state, and only the rounds' memo is under test. */
    hy_collision_state_destroy(w->collision);
    w->collision = NULL;
    hy_contact_list a = {0}, b = {0};
    int64_t differ = 0, reused[5] = {0}, fronts[5] = {0}, contacts = 0, jobs_last = 0, fewer = 0, carried = 0;
    for (int r = 0; r < 5; r++) {
        if (r > 0)
            for (int32_t v = 48 * bands[r - 1][0]; v < 48 * bands[r - 1][1] && v < nv; v++)
                X1[3 * (size_t)v + 1] += 0.0015;
        hy_step_stats sa, sb;
        memset(&sa, 0, sizeof sa);
        memset(&sb, 0, sizeof sb);
        b.count = 0;
        if (carry && r > 0)
            w->collision->carry = 1;
        else
            a.count = 0;
        CHECK_OK(hy_world_detect(w, X0, X1, &a, &sa));
        hy_contacts_canonicalize(&a, NULL);
        reused[r] = w->collision->fronts_reused;
        fronts[r] = reused[r] + hy_traverse_front(w->collision->traverser, NULL);
        jobs_last = w->collision->jobs_reused;
        CHECK_OK(hy_test_detect_fresh(f, X0, X1, &b, &sb));
        contacts += a.count;
        if (carry) {
            differ += !hy_test_same_contacts(&a, &b);
            /* round 1 traverses every pair (the first update after a build
             * refits the whole tree) but tests only the moved ones */
            fewer += r > 0 && (r == 1 || sa.candidates < sb.candidates) && sa.exact_tests < sb.exact_tests;
            carried += w->collision->carried;
            if (r == 4) CHECK(sa.candidates == 0 && w->collision->carried == a.count); /* nothing moved */
            continue;
        }
        differ += !hy_test_same_contacts(&a, &b) || sa.candidates != sb.candidates || sa.exact_tests != sb.exact_tests;
    }
    if (carry) {
        fprintf(stderr, "carried (%d threads): %lld contacts over 5 rounds, %lld kept; %lld rounds differ from fresh\n",
                threads, (long long)contacts, (long long)carried, (long long)differ);
        CHECK(contacts > 500 && carried > 0);
        CHECK(fewer == 4);
        CHECK(differ == 0);
    } else {
        fprintf(stderr,
                "front memo (%d threads): %lld contacts over 5 rounds; front pairs given again %lld/%lld, %lld/%lld, "
                "%lld/%lld, %lld/%lld, %lld/%lld; %lld rounds differ from fresh\n",
                threads, (long long)contacts, (long long)reused[0], (long long)fronts[0], (long long)reused[1],
                (long long)fronts[1], (long long)reused[2], (long long)fronts[2], (long long)reused[3],
                (long long)fronts[3], (long long)reused[4], (long long)fronts[4], (long long)differ);
        CHECK(contacts > 500);
        CHECK(reused[0] == 0); /* the step's first round runs every pair */
        for (int r = 1; r < 4; r++) CHECK(reused[r] > 0 && reused[r] < fronts[r]);
        CHECK(jobs_last > 0 && fronts[4] == 0); /* nothing moved: every job given again */
        CHECK(differ == 0);
        CHECK(w->collision->memo_count > 0); /* the cloth's exact-test answers are kept */
    }
    hy_contact_list_free(&a);
    hy_contact_list_free(&b);
    free(X0);
    free(X1);
    hy_world_destroy(w);
    hy_world_destroy(f);
}

/* Between rigid objects no exact-test answer is kept (collision/collide.c,
 * job_memo): a round traverses a rigid pair again only when one of the two
 * moved as a whole. Eight bodies into a bowl, 150 steps of landing and
 * rounds of response: the memo stays empty. */
static void test_rigid_no_memo(void) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = 2;
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load_string(hy_test_nbody_json, strlen(hy_test_nbody_json), "test_front_memo", &o, &w));
    if (!w) return;
    int64_t contacts = 0, rounds = 0;
    for (int i = 0; i < 150; i++) {
        CHECK_OK(hy_test_step(w));
        hy_step_stats st;
        CHECK_OK(hy_world_get_stats(w, &st));
        contacts += st.contacts;
        rounds += st.response_iterations;
    }
    fprintf(stderr, "rigid: %lld contacts, %lld detection rounds over 150 steps, %lld exact-test answers kept\n",
            (long long)contacts, (long long)rounds, (long long)(w->collision ? w->collision->memo_count : -1));
    CHECK(contacts > 100 && rounds > 150); /* the bodies landed and the response ran rounds */
    CHECK(w->collision && w->collision->memo_count == 0);
    hy_world_destroy(w);
}

int main(void) {
    test_rigid_no_memo();
    test_rounds(1, 0);
    test_rounds(2, 0);
    test_rounds(1, 1);
    test_rounds(2, 1);
    TEST_END();
}
