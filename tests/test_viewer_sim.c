/* The viewer's simulation thread (viewer/sim.c) and its rate meter
 * (viewer/rate.c), without a window: this test plays the render thread.
 * - the rate meter on made-up event times (steady, slow, a full ring);
 * - a run to the frame limit publishes advancing steps, and its last
 *   snapshot is the state of `hyphys run` after as many steps (same hash,
 *   same positions), whatever the thread count;
 * - taking the newest snapshot never waits for a step;
 * - pause and single steps (keys space and n) while the thread runs;
 * - --realtime never runs ahead of the wall clock, and says when it falls
 *   behind;
 * - --integrate-devices: a GPU this machine lacks is left out with the
 *   fallback line (the state that of the CPU-only run); on a GPU machine
 *   it is an integration PU; a bad list refuses the scene.
 * Runs under ThreadSanitizer (make test-tsan) and AddressSanitizer. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hyphys/hyphys.h"
#include "test.h"
#include "viewer/rate.h"
#include "viewer/sim.h"

static const char* DROP = HY_SOURCE_DIR "/scenes/drop.json";

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* The drop scene (a ball over a slab) with another time step, in a file:
 * the simulation thread loads scenes by path. */
static void drop_with_step(double dt, char* path, size_t size) {
    snprintf(path, size, "/tmp/hy_test_viewer_sim_XXXXXX");
    int fd = mkstemp(path);
    FILE* f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        path[0] = '\0';
        return;
    }
    fprintf(f,
            "{\"solver\": {\"time_step\": %.9g}, \"objects\": ["
            "{\"type\": \"obstacle\", \"name\": \"floor\", \"mesh\": {\"generator\": \"box\", "
            "\"half_extents\": [2.0, 0.05, 2.0]}, \"transform\": {\"position\": [0, -0.05, 0]}},"
            "{\"type\": \"body\", \"name\": \"ball\", \"material\": {\"density\": 1000}, "
            "\"mesh\": {\"generator\": \"icosphere\", \"radius\": 0.1, \"subdivisions\": 2}, "
            "\"transform\": {\"position\": [0, 1.0, 0]}}]}\n",
            dt);
    fclose(f);
}

static hy_viewer_sim_def def_for(const char* path) {
    hy_viewer_sim_def d;
    memset(&d, 0, sizeof d);
    d.scene_path = path;
    d.options = hy_scene_options_default();
    d.max_steps = -1;
    return d;
}

/* Take snapshots until `done` says stop or 60 s pass; returns the last one. */
static const hy_viewer_frame* wait_until(hy_viewer_sim* sim, int64_t step_at_least) {
    const hy_viewer_frame* f = NULL;
    double t0 = now_s();
    do {
        hy_viewer_sim_acquire(sim, &f);
        if (f->step >= step_at_least) break;
        sleep_s(0.001);
    } while (now_s() - t0 < 60.0);
    return f;
}

static void test_rate(void) {
    hy_viewer_rate r;
    hy_viewer_rate_restart(&r, 0.0);
    CHECK(hy_viewer_rate_get(&r, 1.0, 1.0) == 0.0);

    /* 100 events 10 ms apart: 100 per second, measured from the restart */
    for (int i = 1; i <= 100; i++) hy_viewer_rate_note(&r, 0.01 * i);
    CHECK_NEAR(hy_viewer_rate_get(&r, 1.0, 1.0), 100.0, 1e-9);
    /* 1000 more at 1 ms: the last second holds only those */
    for (int i = 1; i <= 1000; i++) hy_viewer_rate_note(&r, 1.0 + 0.001 * i);
    CHECK_NEAR(hy_viewer_rate_get(&r, 2.0, 1.0), 1000.0, 1e-6);

    /* slow events, 3 s apart: about 1/3 just after one, falling until the
     * next (a long step shows as a falling rate, not the old one) */
    hy_viewer_rate_restart(&r, 0.0);
    hy_viewer_rate_note(&r, 3.0);
    hy_viewer_rate_note(&r, 6.0);
    CHECK_NEAR(hy_viewer_rate_get(&r, 6.0, 1.0), 1.0 / 3.0, 1e-12);
    CHECK_NEAR(hy_viewer_rate_get(&r, 8.0, 1.0), 1.0 / 5.0, 1e-12);
    CHECK_NEAR(hy_viewer_rate_last(&r), 6.0, 0.0);

    /* 10,000 per second: the ring (4096) holds 0.41 s of them, the rate is
     * still that of the events it holds */
    hy_viewer_rate_restart(&r, 0.0);
    for (int i = 1; i <= 20000; i++) hy_viewer_rate_note(&r, 1e-4 * i);
    CHECK_NEAR(hy_viewer_rate_get(&r, 2.0, 1.0), 1e4, 1.0);
}

/* hy_world_hash and the positions of the scene after n steps on this thread */
static uint64_t reference(const char* path, int threads, int64_t n, float* positions) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = threads;
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load(path, &o, &w));
    if (!w) return 0;
    hy_world_def def;
    CHECK_OK(hy_world_get_def(w, &def));
    for (int64_t i = 0; i < n; i++) CHECK_OK(hy_world_step(w, def.time_step, def.substeps));
    int32_t first = 0, objects = 0;
    CHECK_OK(hy_world_get_object_count(w, &objects));
    for (int32_t i = 0; i < objects; i++) {
        hy_object_id id;
        int32_t nv = 0, nt = 0;
        const int32_t* tri = NULL;
        double p[3 * 4096];
        CHECK_OK(hy_world_get_object(w, i, &id));
        CHECK_OK(hy_object_get_mesh(w, id, &nv, &nt, &tri));
        CHECK(nv <= 4096);
        CHECK_OK(hy_object_get_positions(w, id, p, sizeof p / sizeof p[0]));
        for (int32_t k = 0; k < 3 * nv && k < 3 * 4096; k++) positions[3 * first + k] = (float)p[k];
        first += nv;
    }
    uint64_t h = 0;
    CHECK_OK(hy_world_hash(w, &h));
    hy_world_destroy(w);
    return h;
}

/* To the frame limit: the snapshots advance one published step at a time,
 * and the last is the state after exactly N steps. */
static void test_run_to_limit(int threads) {
    const int64_t N = 30;
    hy_viewer_sim_def d = def_for(DROP);
    d.options.threads = threads;
    d.max_steps = N;
    hy_viewer_sim* sim = NULL;
    CHECK_OK(hy_viewer_sim_create(&d, &sim));
    if (!sim) return;
    const hy_viewer_topology* t = hy_viewer_sim_get_topology(sim);
    const hy_viewer_frame* f = NULL;
    CHECK(hy_viewer_sim_acquire(sim, &f) == 1); /* step 0, published by create */
    CHECK(f->step == 0);
    uint64_t serial = f->serial;
    CHECK(hy_viewer_sim_start(sim));
    int64_t last = 0, fresh = 0;
    double t0 = now_s();
    while (!hy_viewer_sim_is_done(sim) && now_s() - t0 < 60.0) {
        if (hy_viewer_sim_acquire(sim, &f)) {
            fresh++;
            CHECK(f->serial > serial);
            CHECK(f->step > last); /* a newer snapshot is a later step */
            CHECK_NEAR(f->sim_time, (double)f->step * t->time_step, 1e-12);
            serial = f->serial;
            last = f->step;
        }
    }
    CHECK(hy_viewer_sim_is_done(sim));
    if (hy_viewer_sim_acquire(sim, &f)) fresh++; /* the thread may have finished before the loop looked */
    CHECK(f->step == N);
    CHECK(fresh >= 1);

    float* want = calloc(3 * (size_t)t->vertex_count, sizeof(float));
    uint64_t hash = reference(DROP, 1, N, want);
    CHECK(f->state_hash == hash);
    CHECK(memcmp(f->positions, want, sizeof(float) * 3 * (size_t)t->vertex_count) == 0);
    /* it stays at the limit */
    sleep_s(0.05);
    CHECK(hy_viewer_sim_acquire(sim, &f) == 0);
    CHECK(f->step == N);
    hy_viewer_sim_rates r;
    hy_viewer_sim_get_rates(sim, &r);
    CHECK(!r.stepping);
    CHECK(r.steps_per_s > 0.0); /* the last second of the run, kept */
    CHECK(hy_viewer_sim_destroy(sim) == 0);
    free(want);
}

/* While steps run, most acquires find no new snapshot: the renderer takes
 * what is there and does not wait for the step under way. */
static void test_acquire_does_not_wait(void) {
    hy_viewer_sim_def d = def_for(HY_SOURCE_DIR "/scenes/cloth_small.json");
    d.options.threads = 1;
    hy_viewer_sim* sim = NULL;
    CHECK_OK(hy_viewer_sim_create(&d, &sim));
    if (!sim) return;
    CHECK(hy_viewer_sim_start(sim));
    const hy_viewer_frame* f = NULL;
    wait_until(sim, 1);
    int stale = 0, fresh = 0;
    for (int i = 0; i < 2000; i++) {
        if (hy_viewer_sim_acquire(sim, &f))
            fresh++;
        else
            stale++;
        /* what the renderer reads: the snapshot it holds is whole */
        CHECK(f->step >= 1);
    }
    CHECK(stale > 0);
    hy_viewer_sim_rates r;
    hy_viewer_sim_get_rates(sim, &r);
    CHECK(r.stepping);
    CHECK(!r.behind); /* not in real time: never behind */
    CHECK(hy_viewer_sim_destroy(sim) == 0); /* stops it mid-run */
}

/* Keys space and n: paused, one step per request; run, pause again. */
static void test_pause_and_step(void) {
    hy_viewer_sim_def d = def_for(DROP);
    d.paused = 1;
    hy_viewer_sim* sim = NULL;
    CHECK_OK(hy_viewer_sim_create(&d, &sim));
    if (!sim) return;
    CHECK(hy_viewer_sim_start(sim));
    const hy_viewer_frame* f = NULL;
    sleep_s(0.05);
    hy_viewer_sim_acquire(sim, &f);
    CHECK(f->step == 0); /* started paused */
    for (int i = 0; i < 3; i++) hy_viewer_sim_request_step(sim);
    f = wait_until(sim, 3);
    CHECK(f->step == 3);
    sleep_s(0.05);
    hy_viewer_sim_acquire(sim, &f);
    CHECK(f->step == 3); /* three requests, three steps */
    CHECK(hy_viewer_sim_get_paused(sim));

    hy_viewer_sim_set_paused(sim, 0);
    f = wait_until(sim, 10);
    CHECK(f->step >= 10);
    hy_viewer_sim_set_paused(sim, 1);
    /* a step under way when pausing may still finish; then no more */
    sleep_s(0.05);
    hy_viewer_sim_acquire(sim, &f);
    int64_t at = f->step;
    sleep_s(0.05);
    hy_viewer_sim_acquire(sim, &f);
    CHECK(f->step == at);
    hy_viewer_sim_rates r;
    hy_viewer_sim_get_rates(sim, &r);
    CHECK(!r.stepping);
    CHECK(r.steps_per_s == 0.0);

    /* reset: back to step 0, the same start state */
    hy_viewer_sim_request_reset(sim);
    double t0 = now_s();
    do hy_viewer_sim_acquire(sim, &f);
    while (f->step != 0 && now_s() - t0 < 60.0);
    CHECK(f->step == 0);
    CHECK(f->state_hash == reference(DROP, 0, 0, (float[3 * 4096]){0}));
    CHECK(hy_viewer_sim_destroy(sim) == 0);
}

/* --realtime, a scene that steps far faster than its 50 ms time step: it
 * never gets ahead of the wall clock and is never behind. */
static void test_realtime_not_ahead(void) {
    char path[64];
    drop_with_step(0.05, path, sizeof path);
    CHECK(path[0]);
    hy_viewer_sim_def d = def_for(path);
    d.realtime = 1;
    hy_viewer_sim* sim = NULL;
    CHECK_OK(hy_viewer_sim_create(&d, &sim));
    if (sim) {
        double t0 = now_s();
        CHECK(hy_viewer_sim_start(sim));
        sleep_s(0.3);
        const hy_viewer_frame* f = NULL;
        hy_viewer_sim_acquire(sim, &f);
        double wall = now_s() - t0;
        /* step k starts once k * 50 ms of wall time have passed (0.5 ms early at most) */
        CHECK(f->step <= (int64_t)((wall + 0.001) / 0.05) + 1);
        CHECK(f->step >= 1);
        CHECK(f->sim_time <= wall + 0.05);
        CHECK(hy_viewer_sim_destroy(sim) == 0);
    }
    unlink(path);
}

/* --realtime with a 1 us time step: no step is that fast, so it falls
 * behind, says so, and keeps stepping (it skips no step: the snapshots
 * still count every one). */
static void test_realtime_behind(void) {
    char path[64];
    drop_with_step(1e-6, path, sizeof path);
    CHECK(path[0]);
    hy_viewer_sim_def d = def_for(path);
    d.realtime = 1;
    d.options.threads = 1;
    hy_viewer_sim* sim = NULL;
    CHECK_OK(hy_viewer_sim_create(&d, &sim));
    if (sim) {
        CHECK(hy_viewer_sim_start(sim));
        hy_viewer_sim_rates r;
        double t0 = now_s();
        do {
            sleep_s(0.01);
            hy_viewer_sim_get_rates(sim, &r);
        } while (!r.behind && now_s() - t0 < 60.0);
        CHECK(r.behind);
        CHECK(r.realtime_factor < 1.0);
        CHECK_NEAR(r.realtime_factor, r.steps_per_s * 1e-6, 1e-12);
        const hy_viewer_frame* f = NULL;
        hy_viewer_sim_acquire(sim, &f);
        int64_t at = f->step;
        f = wait_until(sim, at + 5);
        CHECK(f->step >= at + 5);
        CHECK_NEAR(f->sim_time, (double)f->step * 1e-6, 1e-12);
        CHECK(hy_viewer_sim_destroy(sim) == 0);
    }
    unlink(path);
}

static void test_integrate_devices(void) {
    const int64_t N = 3;
    hy_viewer_sim_def d = def_for(DROP);
    d.options.threads = 1;
    d.max_steps = N;
    d.integrate_devices = "cuda:0";
    hy_viewer_sim* sim = NULL;
    CHECK_OK(hy_viewer_sim_create(&d, &sim));
    if (!sim) return;
    const hy_viewer_frame* f = NULL;
    hy_viewer_sim_acquire(sim, &f);
    int gpu = f->integrate.gpus == 1;
    /* present: one GPU PU after the CPU's, nothing said; absent: left out and said */
    CHECK(gpu ? f->integrate.fallback[0] == '\0' && f->integrate.pus == 2
              : f->integrate.gpus == 0 && strstr(f->integrate.fallback, "cuda:0 not used") != NULL);
    CHECK(hy_viewer_sim_start(sim));
    f = wait_until(sim, N);
    CHECK(f->step == N);
    float* want = calloc(3 * (size_t)hy_viewer_sim_get_topology(sim)->vertex_count, sizeof(float));
    CHECK(f->state_hash == reference(DROP, 1, N, want));
    free(want);
    CHECK(hy_viewer_sim_destroy(sim) == 0);
    sim = NULL;
    d.integrate_devices = "gpu:0";
    CHECK(hy_viewer_sim_create(&d, &sim) == HY_ERR_INVALID_ARG && !sim);
    CHECK(strstr(hy_last_error(), "gpu:0") != NULL);
}

int main(void) {
    test_rate();
    test_integrate_devices();
    test_run_to_limit(1);
    test_run_to_limit(2);
    test_acquire_does_not_wait();
    test_pause_and_step();
    test_realtime_not_ahead();
    test_realtime_behind();
    TEST_END();
}
