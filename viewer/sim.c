/* The viewer's simulation thread: steps the world, publishes snapshots.
 * See sim.h for the threading contract. */
#include "viewer/sim.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "viewer/rate.h"

/* Real time: how late the simulation may be before it says it is behind,
 * when it counts as caught up again, and the most lateness it makes up by
 * stepping back to back. A hiccup (a heavy contact step) is caught up; a
 * scene that is simply too slow is not replayed in fast motion when it
 * gets lighter: the clock it chases slides instead. */
#define BEHIND_ENTER_S 0.25
#define BEHIND_LEAVE_S 0.05
#define CATCH_UP_MAX_S 0.5
#define RATE_WINDOW_S 1.0 /* steps/s and the real-time factor: the last second */

struct hy_viewer_sim {
    hy_viewer_sim_def def;
    char* scene_path; /* owned copy */
    hy_viewer_topology topo;

    /* owned by the simulation thread once it runs */
    hy_world* world;
    double* scratch; /* doubles for hy_object_get_positions */
    hy_contact_info* contact_scratch; /* HY_VIEWER_MAX_CONTACTS */
    size_t scratch_capacity;

    /* three frame slots: write (sim thread), ready (published), front (renderer) */
    hy_viewer_frame slots[3];
    int write_slot, ready_slot, front_slot;
    int ready_fresh;
    uint64_t serial;

    /* control, guarded by `lock` */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int thread_started;
    int quit, paused, step_requests, reset_request, done, failed;
    hy_viewer_rate steps;  /* completion times of the steps since the last (re)start */
    int stepping;          /* 1 while the thread steps without waiting for a key */
    int behind;            /* real time only: the simulation is late (BEHIND_*) */
    const char* policy_request; /* static string, or NULL */
    const char* policy;         /* the policy chosen with p (sim thread only), or NULL */
    char message[512];
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void free_topology(hy_viewer_topology* t) {
    free(t->objects);
    free(t->triangles);
    memset(t, 0, sizeof *t);
}

/* Read what the world is made of. The renderer keeps this for the viewer's
 * whole life; only positions travel in snapshots. */
static hy_status read_topology(const hy_world* w, hy_viewer_topology* t) {
    memset(t, 0, sizeof *t);
    int32_t n = 0;
    hy_status sn = hy_world_get_object_count(w, &n);
    if (sn) return sn;
    if (n <= 0) return hy_fail(HY_ERR_INVALID_ARG, "the scene has no objects to show");
    t->objects = calloc((size_t)n, sizeof *t->objects);
    if (!t->objects) return hy_fail(HY_ERR_NOMEM, "out of memory reading the scene");
    t->object_count = n;
    int64_t nv = 0, nt = 0;
    for (int32_t i = 0; i < n; i++) {
        hy_object_id id;
        hy_viewer_object* o = &t->objects[i];
        const int32_t* tri = NULL;
        const char* name = NULL;
        hy_status s = hy_world_get_object(w, i, &id);
        if (s == HY_OK) s = hy_object_get_kind(w, id, &o->kind);
        if (s == HY_OK) s = hy_object_get_mesh(w, id, &o->vertex_count, &o->triangle_count, &tri);
        if (s != HY_OK) return s;
        if (hy_object_get_name(w, id, &name) == HY_OK && name) snprintf(o->name, sizeof o->name, "%s", name);
        o->first_vertex = (int32_t)nv;
        o->first_triangle = (int32_t)nt;
        nv += o->vertex_count;
        nt += o->triangle_count;
        if (nv > INT32_MAX / 3 || nt > INT32_MAX / 3)
            return hy_fail(HY_ERR_UNSUPPORTED, "the scene is too large to show (%lld vertices)", (long long)nv);
    }
    t->vertex_count = (int32_t)nv;
    t->triangle_count = (int32_t)nt;
    t->triangles = malloc(sizeof(uint32_t) * 3 * (size_t)(nt > 0 ? nt : 1));
    if (!t->triangles) return hy_fail(HY_ERR_NOMEM, "out of memory reading the scene");
    for (int32_t i = 0; i < n; i++) {
        hy_object_id id;
        hy_viewer_object* o = &t->objects[i];
        const int32_t* tri = NULL;
        int32_t vc, tc;
        hy_status s = hy_world_get_object(w, i, &id);
        if (s == HY_OK) s = hy_object_get_mesh(w, id, &vc, &tc, &tri);
        if (s != HY_OK) return s;
        for (int64_t k = 0; k < 3 * (int64_t)tc; k++)
            t->triangles[3 * (int64_t)o->first_triangle + k] = (uint32_t)(o->first_vertex + tri[k]);
    }
    hy_world_def def;
    if (hy_world_get_def(w, &def) == HY_OK) {
        t->time_step = def.time_step;
        t->threads = def.threads;
    }
    if (t->threads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        t->threads = c > 0 ? (int32_t)c : 1;
    }
    return HY_OK;
}

static int same_topology(const hy_viewer_topology* a, const hy_viewer_topology* b) {
    if (a->object_count != b->object_count || a->vertex_count != b->vertex_count ||
        a->triangle_count != b->triangle_count)
        return 0;
    for (int32_t i = 0; i < a->object_count; i++)
        if (a->objects[i].vertex_count != b->objects[i].vertex_count) return 0;
    return memcmp(a->triangles, b->triangles, sizeof(uint32_t) * 3 * (size_t)a->triangle_count) == 0;
}

/* Fill a slot from the world (sim thread, or the creator before start). */
static hy_status capture(hy_viewer_sim* s, hy_viewer_frame* f, int64_t step) {
    const hy_viewer_topology* t = &s->topo;
    for (int32_t i = 0; i < t->object_count; i++) {
        const hy_viewer_object* o = &t->objects[i];
        hy_object_id id;
        size_t need = 3 * (size_t)o->vertex_count;
        hy_status st = hy_world_get_object(s->world, i, &id);
        if (st == HY_OK) st = hy_object_get_positions(s->world, id, s->scratch, s->scratch_capacity);
        if (st != HY_OK) return st;
        float* dst = f->positions + 3 * (size_t)o->first_vertex;
        for (size_t k = 0; k < need; k++) dst[k] = (float)s->scratch[k];
    }
    int64_t nc = 0;
    if (step > 0 && hy_world_get_contacts(s->world, s->contact_scratch, HY_VIEWER_MAX_CONTACTS, &nc)) nc = 0;
    if (nc > HY_VIEWER_MAX_CONTACTS) nc = HY_VIEWER_MAX_CONTACTS;
    for (int64_t k = 0; k < nc; k++)
        for (int d = 0; d < 3; d++) f->contacts[3 * k + d] = (float)s->contact_scratch[k].point[d];
    f->contact_count = (int32_t)nc;
    if (step > 0)
        hy_world_get_stats(s->world, &f->stats);
    else
        memset(&f->stats, 0, sizeof f->stats);
    int32_t nr = 0;
    if (hy_world_get_sched_stats(s->world, &f->sched, f->resources, 8, &nr)) nr = 0;
    f->resource_count = nr > 8 ? 8 : nr;
    hy_world_get_integrate_stats(s->world, &f->integrate); /* the world exists: cannot fail */
    f->step = step;
    f->sim_time = (double)step * t->time_step;
    hy_world_get_bond_count(s->world, &f->bonds); /* the world exists: cannot fail */
    hy_world_hash(s->world, &f->state_hash);
    return HY_OK;
}

/* Hand the written slot over (lock held). */
static void publish(hy_viewer_sim* s) {
    s->slots[s->write_slot].serial = ++s->serial;
    int t = s->ready_slot;
    s->ready_slot = s->write_slot;
    s->write_slot = t;
    s->ready_fresh = 1;
}

/* The integrate phase's settings of the def, if any, on a loaded world. */
static hy_status set_integrate(hy_world* w, const hy_viewer_sim_def* def) {
    hy_status s = HY_OK;
    if (def->integrate_sched || def->integrate_pus != 0)
        s = hy_world_set_integrate_sched(w, def->integrate_sched ? def->integrate_sched : "lp", def->integrate_pus);
    if (!s && def->integrate_devices) s = hy_world_set_integrate_devices(w, def->integrate_devices);
    return s;
}

/* Reload the scene file (sim thread, lock not held). The new world replaces
 * the old only if it has the same shape: the renderer's buffers were built
 * for that shape. Returns a message for the HUD, "" if all went well. */
static void reset(hy_viewer_sim* s, char* msg, size_t size) {
    hy_world* w = NULL;
    hy_viewer_topology t;
    msg[0] = '\0';
    hy_status st = hy_scene_load(s->scene_path, &s->def.options, &w);
    if (st == HY_OK && s->def.has_sched) st = hy_world_set_scheduling(w, &s->def.sched);
    if (st == HY_OK) st = set_integrate(w, &s->def);
    if (st == HY_OK && s->policy) st = hy_world_set_policy(w, s->policy);
    if (st != HY_OK) {
        snprintf(msg, size, "reset failed, kept the running scene: %s", hy_last_error());
        hy_world_destroy(w);
        return;
    }
    st = read_topology(w, &t);
    if (st != HY_OK || !same_topology(&t, &s->topo)) {
        snprintf(msg, size, "reset refused: %s changed shape on disk; restart the viewer", s->scene_path);
        free_topology(&t);
        hy_world_destroy(w);
        return;
    }
    free_topology(&t);
    hy_world_destroy(s->world);
    s->world = w;
}

/* Wait on the condition variable for at most `seconds` (lock held). */
static void wait_for(hy_viewer_sim* s, double seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + seconds;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&s->wake, &s->lock, &ts);
}

/* Note a change of the behind state (lock held); the one stderr line is
 * written by the caller after unlocking. Returns 1 when it just fell behind,
 * with the real-time factor of the last second in *factor. */
static int update_behind(hy_viewer_sim* s, double lag, double now, double* factor) {
    if (!s->behind && lag > BEHIND_ENTER_S) {
        s->behind = 1;
        *factor = hy_viewer_rate_get(&s->steps, now, RATE_WINDOW_S) * s->topo.time_step;
        return 1;
    }
    if (s->behind && lag < BEHIND_LEAVE_S) s->behind = 0;
    return 0;
}

static void* run(void* arg) {
    hy_viewer_sim* s = arg;
    int64_t step = 0;
    const double dt = s->topo.time_step;
    /* real time: the wall time at which the simulated time was 0, so the
     * wanted simulated time is now - clock0 */
    double clock0 = now_s();
    pthread_mutex_lock(&s->lock);
    while (!s->quit) {
        /* a reset comes first: reload outside the lock, publish step 0 */
        if (s->reset_request) {
            s->reset_request = 0;
            pthread_mutex_unlock(&s->lock);
            char msg[512];
            reset(s, msg, sizeof msg);
            int ok = msg[0] == '\0';
            hy_status st = HY_OK;
            if (ok) st = capture(s, &s->slots[s->write_slot], 0);
            pthread_mutex_lock(&s->lock);
            if (ok && st == HY_OK) {
                step = 0;
                publish(s);
                s->done = 0;
                s->failed = 0;
                s->message[0] = '\0';
                s->stepping = 0; /* the clock and the rate start again */
            } else {
                snprintf(s->message, sizeof s->message, "%s", ok ? hy_last_error() : msg);
            }
            continue;
        }
        int limit = s->def.max_steps >= 0 && step >= s->def.max_steps;
        int want = !s->paused || s->step_requests > 0;
        s->done = limit || s->failed;
        if (!want || s->done) {
            s->stepping = 0;
            s->behind = 0;
            pthread_cond_wait(&s->wake, &s->lock);
            continue;
        }
        double now = now_s();
        if (!s->stepping || s->paused) {
            /* (re)starting, or one step by key: the clock and the rate count from here */
            clock0 = now - (double)step * dt;
            hy_viewer_rate_restart(&s->steps, now);
            s->behind = 0;
        }
        s->stepping = !s->paused;
        double factor = 0.0;
        int fell_behind = 0;
        if (s->def.realtime && !s->paused) {
            /* keep simulated time equal to wall time: wait when early; when
             * late, step back to back (never skip a step), making up at
             * most CATCH_UP_MAX_S */
            double lag = (now - clock0) - (double)step * dt;
            if (lag < -0.0005) {
                wait_for(s, -lag);
                continue; /* re-check quit, pause and reset after waking */
            }
            if (lag > CATCH_UP_MAX_S) clock0 = now - (double)step * dt - CATCH_UP_MAX_S;
            fell_behind = update_behind(s, lag, now, &factor);
        }
        if (s->step_requests > 0) s->step_requests--;
        const char* policy = s->policy_request;
        s->policy_request = NULL;
        pthread_mutex_unlock(&s->lock);

        /* said once each time it falls behind, not every frame */
        if (fell_behind)
            fprintf(stderr, "hyphys view: behind real time: %.2gx (%.0f steps/s, %.0f wanted)\n", factor,
                    dt > 0.0 ? factor / dt : 0.0, dt > 0.0 ? 1.0 / dt : 0.0);

        /* the step and the copy run without the lock */
        hy_status st = HY_OK;
        if (policy) {
            st = hy_world_set_policy(s->world, policy);
            if (st == HY_OK) s->policy = policy; /* kept across resets */
        }
        hy_world_def wd; /* the scene's step */
        if (st == HY_OK) st = hy_world_get_def(s->world, &wd);
        if (st == HY_OK) st = hy_world_step(s->world, wd.time_step, wd.substeps);
        char err[512] = "";
        if (st == HY_OK) {
            st = capture(s, &s->slots[s->write_slot], step + 1);
            if (st != HY_OK) snprintf(err, sizeof err, "reading state failed: %s", hy_last_error());
        } else {
            snprintf(err, sizeof err, "step %lld failed (%s): %s", (long long)(step + 1), hy_status_name(st),
                     hy_last_error());
        }

        pthread_mutex_lock(&s->lock);
        if (st == HY_OK) {
            step++;
            hy_viewer_rate_note(&s->steps, now_s());
            publish(s);
        } else {
            /* the world keeps its last good state; stop and say why */
            s->failed = 1;
            snprintf(s->message, sizeof s->message, "%s", err);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

hy_status hy_viewer_sim_create(const hy_viewer_sim_def* def, hy_viewer_sim** out) {
    if (!def || !def->scene_path || !out) return hy_fail(HY_ERR_INVALID_ARG, "viewer: no scene given");
    *out = NULL;
    hy_viewer_sim* s = calloc(1, sizeof *s);
    if (!s) return hy_fail(HY_ERR_NOMEM, "out of memory");
    s->def = *def;
    s->scene_path = strdup(def->scene_path);
    s->paused = def->paused;
    s->write_slot = 0;
    s->ready_slot = 1;
    s->front_slot = 2;
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);

    hy_status st = s->scene_path ? hy_scene_load(s->scene_path, &def->options, &s->world)
                                 : hy_fail(HY_ERR_NOMEM, "out of memory");
    if (st == HY_OK && def->has_sched) st = hy_world_set_scheduling(s->world, &def->sched);
    if (st == HY_OK) st = set_integrate(s->world, def);
    if (st == HY_OK && def->loaded) def->loaded(s->world, def->ctx);
    if (st == HY_OK) st = read_topology(s->world, &s->topo);
    if (st == HY_OK) {
        /* scratch big enough for the largest object */
        int32_t most = 1;
        for (int32_t i = 0; i < s->topo.object_count; i++)
            if (s->topo.objects[i].vertex_count > most) most = s->topo.objects[i].vertex_count;
        s->scratch_capacity = 3 * (size_t)most;
        s->scratch = malloc(sizeof(double) * s->scratch_capacity);
        for (int k = 0; k < 3; k++) {
            s->slots[k].positions = malloc(sizeof(float) * 3 * (size_t)(s->topo.vertex_count > 0 ? s->topo.vertex_count : 1));
            s->slots[k].contacts = malloc(sizeof(float) * 3 * HY_VIEWER_MAX_CONTACTS);
            if (!s->slots[k].positions || !s->slots[k].contacts) st = hy_fail(HY_ERR_NOMEM, "out of memory");
        }
        s->contact_scratch = malloc(sizeof(hy_contact_info) * HY_VIEWER_MAX_CONTACTS);
        if (!s->scratch || !s->contact_scratch) st = hy_fail(HY_ERR_NOMEM, "out of memory");
    }
    if (st == HY_OK) st = capture(s, &s->slots[s->write_slot], 0);
    if (st != HY_OK) {
        hy_viewer_sim_destroy(s);
        return st;
    }
    publish(s);
    *out = s;
    return HY_OK;
}

int hy_viewer_sim_start(hy_viewer_sim* s) {
    if (pthread_create(&s->thread, NULL, run, s) != 0) return 0;
    s->thread_started = 1;
    return 1;
}

int hy_viewer_sim_destroy(hy_viewer_sim* s) {
    if (!s) return 0;
    if (s->thread_started) {
        pthread_mutex_lock(&s->lock);
        s->quit = 1;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
    }
    /* a trace that could not be written (a full disk) is said, not lost */
    int bad = s->world && hy_world_close_trace(s->world) != HY_OK;
    if (bad) fprintf(stderr, "hyphys view: %s\n", hy_last_error());
    hy_world_destroy(s->world);
    for (int k = 0; k < 3; k++) {
        free(s->slots[k].positions);
        free(s->slots[k].contacts);
    }
    free(s->scratch);
    free(s->contact_scratch);
    free_topology(&s->topo);
    free(s->scene_path);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return bad;
}

const hy_viewer_topology* hy_viewer_sim_get_topology(const hy_viewer_sim* s) { return &s->topo; }

int hy_viewer_sim_acquire(hy_viewer_sim* s, const hy_viewer_frame** out) {
    pthread_mutex_lock(&s->lock);
    int fresh = s->ready_fresh;
    if (fresh) {
        int t = s->front_slot;
        s->front_slot = s->ready_slot;
        s->ready_slot = t;
        s->ready_fresh = 0;
    }
    *out = &s->slots[s->front_slot];
    pthread_mutex_unlock(&s->lock);
    return fresh;
}

void hy_viewer_sim_set_paused(hy_viewer_sim* s, int paused) {
    pthread_mutex_lock(&s->lock);
    s->paused = paused;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
}

int hy_viewer_sim_get_paused(hy_viewer_sim* s) {
    pthread_mutex_lock(&s->lock);
    int p = s->paused;
    pthread_mutex_unlock(&s->lock);
    return p;
}

void hy_viewer_sim_request_step(hy_viewer_sim* s) {
    pthread_mutex_lock(&s->lock);
    s->step_requests++;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
}

void hy_viewer_sim_request_policy(hy_viewer_sim* s, const char* policy) {
    pthread_mutex_lock(&s->lock);
    s->policy_request = policy;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
}

void hy_viewer_sim_request_reset(hy_viewer_sim* s) {
    pthread_mutex_lock(&s->lock);
    s->reset_request = 1;
    s->step_requests = 0;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
}

int hy_viewer_sim_is_done(hy_viewer_sim* s) {
    pthread_mutex_lock(&s->lock);
    int d = s->done;
    pthread_mutex_unlock(&s->lock);
    return d;
}

void hy_viewer_sim_get_rates(hy_viewer_sim* s, hy_viewer_sim_rates* out) {
    double now = now_s();
    pthread_mutex_lock(&s->lock);
    /* stopped at the frame limit: the rate of the run's last second, as it ended */
    double at = s->stepping ? now : hy_viewer_rate_last(&s->steps);
    out->steps_per_s = s->stepping || (s->done && !s->failed) ? hy_viewer_rate_get(&s->steps, at, RATE_WINDOW_S) : 0.0;
    out->realtime_factor = out->steps_per_s * s->topo.time_step;
    out->stepping = s->stepping;
    out->behind = s->behind;
    pthread_mutex_unlock(&s->lock);
}

int hy_viewer_sim_get_message(hy_viewer_sim* s, char* buf, size_t size) {
    pthread_mutex_lock(&s->lock);
    snprintf(buf, size, "%s", s->message);
    int failed = s->failed;
    pthread_mutex_unlock(&s->lock);
    return failed;
}
