/* LEAF jobs made and run where their TRAVERSE jobs ran
 * (collision/leaf_resident.h), checked where no GPU is:
 * - the host twin of the device's steps (hy_leaf_resident_run) on random
 *   candidates over front pairs (some empty) at several distances: per
 *   front pair the candidates, exact tests and contacts, in candidate
 *   order with bit-equal times of impact, are those of the host's LEAF
 *   jobs (hy_leaf_eval on gathered points); hy_leaf_segment finds each
 *   candidate's front pair;
 * - a colliding scene whose modeled GPU runs its TRAVERSE batches with
 *   their LEAF jobs (only contacts and counts come back): the state hash,
 *   candidates and contacts of every step equal the CPU-only run's (the
 *   device makes at least as many exact tests: in later rounds it tests
 *   candidates the host knows unmoved), and the device ran front pairs
 *   and sent contacts back; with the
 *   device failing mid-run, the same states; where there is a GPU, the
 *   same on cuda:0 (the kernels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/leaf_resident.h"
#include "engine/world.h"
#include "sched/cuda.h"
#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/scene_cloth_ball.h"
#include "tests/world_step.h"

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static double rnd(void) { return hy_test_uniform(&g_rng); }

#define NV 24
#define NFRONT 9

static void twin(void) {
    double X0[3 * NV], X1[3 * NV];
    for (int i = 0; i < 3 * NV; i++) {
        X0[i] = 0.2 * rnd();
        X1[i] = X0[i] + 0.1 * (rnd() - 0.5);
    }
    /* front pair s holds sizes[s] candidates (two empty ones) */
    static const int sizes[NFRONT] = {7, 0, 12, 3, 0, 20, 1, 9, 15};
    int64_t off[NFRONT + 1];
    off[0] = 0;
    for (int s = 0; s < NFRONT; s++) off[s + 1] = off[s] + sizes[s];
    int64_t total = off[NFRONT];
    hy_feature_pair pairs[80];
    for (int64_t i = 0; i < total; i++) {
        int32_t v[4];
        for (int j = 0; j < 4; j++) {
            int again;
            do { /* four distinct vertices */
                v[j] = (int32_t)(rnd() * NV) % NV;
                again = 0;
                for (int k = 0; k < j; k++) again |= v[k] == v[j];
            } while (again);
        }
        memcpy(pairs[i].v, v, sizeof v);
        pairs[i].kind = i % 3 == 0 ? HY_FEATURE_EE : i % 3 == 1 ? HY_FEATURE_VF : HY_FEATURE_FV;
    }
    double md[NFRONT];
    for (int s = 0; s < NFRONT; s++) md[s] = s % 3 == 0 ? 0.0 : 0.004 * s;
    hy_ccd_options opts = hy_ccd_options_step();

    for (int64_t i = 0; i < total; i++) {
        int64_t s = hy_leaf_segment(off, NFRONT, i);
        CHECK(s >= 0 && s < NFRONT && off[s] <= i && i < off[s + 1]);
    }

    hy_leaf_contacts out;
    memset(&out, 0, sizeof out);
    CHECK_OK(hy_leaf_resident_run(pairs, off, NFRONT, md, X0, X1, &opts, &out));
    if (!out.offsets) return;
    int64_t all_exact = 0, all_contacts = 0, mismatches = 0;
    for (int s = 0; s < NFRONT; s++) {
        int64_t exact = 0, m = out.offsets[s];
        for (int64_t i = off[s]; i < off[s + 1]; i++) {
            double x[8][3];
            for (int j = 0; j < 4; j++)
                for (int k = 0; k < 3; k++) {
                    x[j][k] = X0[3 * pairs[i].v[j] + k];
                    x[4 + j][k] = X1[3 * pairs[i].v[j] + k];
                }
            double toi = 1.0;
            int hit = hy_leaf_eval(pairs[i].kind != HY_FEATURE_EE, (const double(*)[3])x, md[s], &opts, &toi);
            exact += hit >> 1;
            if (!(hit & 1)) continue;
            const hy_leaf_contact* c = &out.contacts[m++];
            mismatches += memcmp(&c->pair, &pairs[i], sizeof pairs[i]) != 0 || c->front != s ||
                          memcmp(&c->toi, &toi, sizeof toi) != 0;
        }
        CHECK(out.candidates[s] == sizes[s]);
        CHECK(out.exact[s] == exact);
        CHECK(m == out.offsets[s + 1]);
        all_exact += exact;
        all_contacts += out.offsets[s + 1] - out.offsets[s];
    }
    CHECK(mismatches == 0);
    /* the sample exercises both outcomes */
    CHECK(all_contacts > 0 && all_contacts < total);
    CHECK(all_exact >= all_contacts);
    fprintf(stderr, "twin: %lld candidates, %lld exact tests, %lld contacts\n", (long long)total,
            (long long)all_exact, (long long)all_contacts);
    hy_leaf_contacts_free(&out);
    CHECK(out.contacts == NULL && out.offsets == NULL);
}

#define STEPS 10

typedef struct step_rec {
    uint64_t hash;
    int64_t candidates, exact, contacts;
} step_rec;

/* Runs the cloth_ball test scene STEPS steps; resident: on a modeled GPU
 * and a second one, whose TRAVERSE batches keep their LEAF jobs (devices
 * NULL), or on `devices`. */
static void run_scene(int resident, const char* devices, const char* fault, step_rec rec[STEPS], int64_t* fronts,
                      int64_t* dev_contacts) {
    memset(rec, 0, sizeof(step_rec) * STEPS);
    *fronts = *dev_contacts = 0;
    hy_world* w = hy_test_cloth_ball_world(1);
    if (!w) return;
    if (resident) {
        hy_sched_def d = hy_sched_def_default();
        d.devices = devices ? devices : "model:gtx285,model:gtx480"; /* GPUs only: they get the TRAVERSE jobs */
        d.fault = fault;
        d.virtual_clock = fault != NULL; /* the injected fault strikes a batch started by the scheduler */
        CHECK_OK(hy_world_set_scheduling(w, &d));
    }
    for (int k = 0; k < STEPS; k++) {
        CHECK_OK(hy_test_step(w));
        /* the collision state exists after the first step */
        if (resident && w->collision) w->collision->device_leaf_model = 1;
        hy_step_stats st;
        CHECK_OK(hy_world_get_stats(w, &st));
        rec[k] = (step_rec){hy_test_hash(w), st.candidates, st.exact_tests, st.contacts};
    }
    hy_sched_info info;
    CHECK_OK(hy_world_get_scheduling(w, &info));
    CHECK(info.failures == (fault != NULL));
    if (info.failures != (fault != NULL)) fprintf(stderr, "fault %s: %d failures\n", fault ? fault : "none", info.failures);
    if (w->collision) {
        *fronts = w->collision->resident_fronts;
        *dev_contacts = w->collision->resident_contacts;
    }
    hy_world_destroy(w);
}

static void scene(void) {
    step_rec ref[STEPS], res[STEPS];
    int64_t f0, c0, f1, c1;
    run_scene(0, NULL, NULL, ref, &f0, &c0);
    run_scene(1, NULL, NULL, res, &f1, &c1);
    int more = 0;
    for (int k = 0; k < STEPS; k++) {
        CHECK(ref[k].hash == res[k].hash);
        CHECK(ref[k].candidates == res[k].candidates);
        /* in a step's later rounds the host tests only the candidates with
         * a moved vertex, the device every candidate of its front pairs */
        CHECK(res[k].exact >= ref[k].exact);
        more += res[k].exact > ref[k].exact;
        CHECK(ref[k].contacts == res[k].contacts);
    }
    CHECK(more > 0); /* the scene's steps have later rounds */
    /* the device failing mid-run: its batches rerun elsewhere, same states */
    int64_t f2, c2;
    run_scene(1, NULL, "model:gtx480@5", res, &f2, &c2);
    for (int k = 0; k < STEPS; k++) CHECK(ref[k].hash == res[k].hash);
    fprintf(stderr, "fault: %lld front pairs resident (%lld without)\n", (long long)f2, (long long)f1);
    CHECK(f2 > 0);
    fprintf(stderr, "scene: %lld candidates, %lld contacts at step %d; resident: %lld front pairs, %lld contacts back\n",
            (long long)ref[STEPS - 1].candidates, (long long)ref[STEPS - 1].contacts, STEPS, (long long)f1,
            (long long)c1);
    CHECK(f0 == 0 && c0 == 0);
    CHECK(f1 > 0 && c1 > 0);
    /* a GPU: its TRAVERSE batches run the kernels of the same steps */
    if (hy_cuda_device_count() > 0) {
        int64_t f3, c3;
        run_scene(1, "cuda:0", NULL, res, &f3, &c3);
        for (int k = 0; k < STEPS; k++) {
            CHECK(ref[k].hash == res[k].hash);
            /* the kernel runs the later rounds' front pairs in full */
            CHECK(res[k].candidates >= ref[k].candidates);
            CHECK(res[k].exact >= ref[k].exact);
            CHECK(ref[k].contacts == res[k].contacts);
        }
        fprintf(stderr, "cuda:0: %lld front pairs resident, %lld contacts back, states equal the CPU's\n",
                (long long)f3, (long long)c3);
        CHECK(f3 > 0);
    }
}

int main(void) {
    twin();
    scene();
    TEST_END();
}
