/* The integrate phase as runtime tasks (engine/integrate.h).
 *
 * The phase runs in the waves of engine/kinds.h: every object's predict,
 * the bonds between bodies (on the calling thread: one Gauss-Seidel solve
 * over all of them), then the integrates of each order. A wave is one task
 * graph: one task per object in it, in the object's partition (its slot),
 * on two handles, the object's state block (read-write) and its model
 * (read). Within a wave no task writes what another reads: a cloth reads
 * the end-of-step positions of the surfaces it rests on, and those were
 * written by an earlier wave, which has finished. So every object's
 * result is what the plain loop over the objects gives, whatever PU ran it
 * and in whatever order.
 *
 * Solids joined by attachments or contacts (engine/links.h) step in one
 * coupled solve per group: the group is one task of the solids' wave, in
 * the partition of its lowest slot, in place of its members' own tasks, so
 * groups spread over the PUs like single objects and run beside the free
 * solids. It names that member's handles only: in the wave no other task
 * touches any of its members, so they add no dependency, and one task
 * writes them all. A group's solve reads the links (found before the
 * waves, hy_links_prepare) and writes its own solids, so groups may run at
 * once.
 *
 * PUs: one PU is the calling thread (runtime/exec.h, one worker), which
 * keeps using the world's pool inside the solvers; there is nothing to
 * place, so the policy has no say. Several PUs are a team (runtime/team.h)
 * of one worker thread each, placed by the policy with real stealing; the
 * world's pool is for one caller at a time, so each worker steps its
 * objects with a pool of its own (the world's thread count shared out),
 * made on its first task. Pools give the same results at any size.
 *
 * The solver figures of each task are kept apart and added into the step's
 * in object order after the wave; an error message (thread-local) is
 * copied out of the task and raised again on the calling thread.
 *
 * GPUs (hy_integrator_set_gpus): each is a PU of the team, one host thread
 * feeding it. The integrates of objects whose kind can bind its model to
 * a GPU (hy_kind_ops.set_device: FEM, mass-spring, cloth) and the coupled
 * groups are tasks of a kind with a CUDA implementation; a task the policy
 * places on a GPU PU binds the object's model (each member's, for a group)
 * to that GPU and runs the same step, the solver's loop on the host and
 * its passes on the device (the models' contexts move their data), so the
 * state has the CPU's bits. A CPU PU's task binds it back to the CPU. Both
 * arguments are the host's (cuda_host_args): the solve reads and writes
 * the object's own arrays. A GPU that cannot take a model (no such GPU,
 * out of memory) is said once (hy_integrate_stats.fallback) and its tasks
 * step on the CPU from its thread, with the same bits; a GPU PU of device
 * -1 is a host twin (tests: the placement and the kind's CUDA path with
 * the models on the CPU).
 *
 * Trace: when the world's collision trace is open, the integrator writes
 * its runs into the same stream (hy_rt_trace_attach) as a process of its
 * own. On the real clock the collision jobs are timed from the trace's
 * opening, and so are the tasks (clock0 = that moment, one monotonic clock
 * for both). On the virtual clock the collision timeline is modeled: the
 * phase is placed where the collision jobs' timeline stands and moves it
 * on by its wall time, so the two halves of a step follow each other. */
#include "engine/integrate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "engine/kinds.h"
#include "engine/links.h"
#include "runtime/exec.h"
#include "runtime/policy.h"
#include "runtime/team.h"
#include "sched/cuda.h"
#include "sched/prox_internal.h"
#include "solvers/batch_step.h"

typedef struct obj_task {
    hy_world* w;
    hy_integrator* it;
    int32_t slot;
    int32_t group; /* a coupled group's solve (engine/links.h), -1: the object's own operation */
    int32_t batch; /* a batch of small solids (its index), -1: none */
    int wide;      /* run on the calling thread with the world's pool (wide_slot) */
    int32_t batched, batch_products; /* of a batch's run: objects stepped by the lockstep path, its products */
    int32_t resident;                /* ... of them, those whose CG ran in the batch's memory */
    double dt;
    hy_step_stats st; /* its solver figures */
    hy_status status;
    char message[1024];
} obj_task;

struct hy_integrator {
    char policy[32];
    int32_t pus;   /* CPU PUs */
    int automatic; /* CPU PUs from hy_integrator_default_pus at each step */
    int32_t gpus;  /* GPU PUs after the CPU ones, of devices gpu_device[] (-1: a host twin) */
    int gpu_device[HY_RT_MAX_PUS];
    int gpu_failed[HY_RT_MAX_PUS]; /* the device refused a model: its tasks step on the CPU (its thread's) */
    int binds;                     /* GPUs were set: each task binds its models (to the CPU on a CPU PU) */
    char fallback[192];            /* what was not used and why, "" when all was (under lock) */
    hy_rt_exec* exec; /* one PU */
    hy_rt_team* team; /* several */
    hy_rt_graph* g;
    /* what the handles were registered on: the object table, its length
     * and each object's id and state block */
    const hy_object* base;
    int32_t count, cap;
    hy_object_id* ids;
    hy_object_state** states;
    int32_t *h_state, *h_model;
    obj_task* tasks;
    /* small free solids stepped in batches (GPUs set): batch k's slots are
     * bslots[bstart[k] .. bstart[k + 1]), their steps bobj[] alike;
     * batch_of[slot] the slot's batch this wave (-1: none) */
    int32_t bstart[HY_RT_MAX_PUS + 1];
    int32_t *bslots, *batch_of;
    hy_batch_object* bobj;
    hy_batch_stepper* stepper[HY_RT_MAX_PUS]; /* batch k's, made on the device it last ran on */
    /* several PUs: a pool per worker thread */
    pthread_mutex_t lock;
    int32_t npools;
    pthread_t pool_thread[HY_RT_MAX_PUS];
    hy_pool* pool[HY_RT_MAX_PUS];
    hy_rt_trace* trace;       /* attached to the world's collision trace, or NULL */
    int wide_track;           /* the trace's track of wide runs is named */
    hy_integrate_stats stats; /* the last hy_integrator_step */
};

_Static_assert(HY_INTEGRATE_MAX_PUS >= HY_RT_MAX_PUS, "hy_integrate_stats holds every PU");

/* ------------------------------------------------------------ the tasks */

/* The pool the calling worker steps its objects with; NULL when none
 * could be made. */
static hy_pool* worker_pool(hy_integrator* it, const hy_world* w) {
    if (!it->team) return w->pool;
    pthread_t self = pthread_self();
    hy_pool* p = NULL;
    pthread_mutex_lock(&it->lock);
    for (int32_t i = 0; i < it->npools && !p; i++)
        if (pthread_equal(it->pool_thread[i], self)) p = it->pool[i];
    if (!p && it->npools < HY_RT_MAX_PUS) {
        int threads = hy_pool_size(w->pool) / (it->pus + it->gpus);
        p = hy_pool_create(threads > 1 ? threads : 1);
        if (p) {
            it->pool_thread[it->npools] = self;
            it->pool[it->npools++] = p;
        }
    }
    pthread_mutex_unlock(&it->lock);
    return p;
}

/* The GPU PU (index among the GPUs) whose device is `device`, -1 if none. */
static int32_t gpu_index(const hy_integrator* it, int device) {
    for (int32_t i = 0; i < it->gpus; i++)
        if (it->gpu_device[i] == device) return i;
    return -1;
}

/* GPU `device` (a PU's) stops taking the integration's work: said once,
 * from then on its tasks step on the CPU from its thread. */
static void gpu_stopped(hy_integrator* it, int device) {
    int32_t gi = gpu_index(it, device);
    if (gi >= 0) it->gpu_failed[gi] = 1; /* only this GPU's thread writes its flag */
    pthread_mutex_lock(&it->lock);
    snprintf(it->fallback, sizeof it->fallback, "integration on cuda:%d stopped (%s); its tasks step on the CPU",
             device, hy_last_error());
    pthread_mutex_unlock(&it->lock);
}

/* Bind the models the task steps (the object's, or each member's of its
 * group) to `device` (-1: the CPU). A GPU that refuses one is said once
 * and left out from then on: the models stay on the CPU, the same bits.
 * Returns the bytes the binds sent: a bind that made a model a new GPU
 * context (its counters then differ from the old one's) sent what that
 * context has counted, its constant arrays; a bind to the device the
 * model is on sends nothing. */
static int64_t bind_models(obj_task* t, int device) {
    hy_world* w = t->w;
    hy_integrator* it = t->it;
    int32_t gi = device >= 0 ? gpu_index(it, device) : -1;
    if (gi >= 0 && it->gpu_failed[gi]) device = -1;
    int64_t sent = 0;
    for (int32_t i = t->group >= 0 ? 0 : t->slot; i < w->object_count; i++) {
        if (t->group >= 0 ? hy_links_group_of(w, i) != t->group : i != t->slot) continue;
        hy_object* o = &w->objects[i];
        if (!o->ops->set_device) continue;
        int64_t before = o->ops->gpu_bytes ? o->ops->gpu_bytes(o) : 0;
        if (o->ops->set_device(o, device) && device >= 0) {
            gpu_stopped(it, device); /* the caller reads the flag after the run */
            device = -1;
            o->ops->set_device(o, -1);
        }
        int64_t after = o->ops->gpu_bytes ? o->ops->gpu_bytes(o) : 0;
        sent += after != before ? after : 0;
        if (t->group < 0) break;
    }
    return sent;
}

/* Bytes the GPU contexts of the task's models (the object's, or each
 * member's of its group) have moved so far. */
static int64_t models_gpu_bytes(const obj_task* t) {
    const hy_world* w = t->w;
    int64_t bytes = 0;
    for (int32_t i = t->group >= 0 ? 0 : t->slot; i < w->object_count; i++) {
        if (t->group >= 0 ? hy_links_group_of(w, i) != t->group : i != t->slot) continue;
        const hy_object* o = &w->objects[i];
        if (o->ops->gpu_bytes) bytes += o->ops->gpu_bytes(o);
        if (t->group < 0) break;
    }
    return bytes;
}

/* buffers[0] is the object's state block and buffers[1] its model: the
 * host copies, which are the object's own, so the kind's operation is
 * called on the object. `gpu`: run from a GPU PU's thread, the models
 * bound to its device (none for a host twin); else bound to the CPU. */
static void run_op(obj_task* t, int predict, int gpu) {
    hy_object* o = &t->w->objects[t->slot];
    hy_pool* pool = t->wide ? t->w->pool : worker_pool(t->it, t->w);
    hy_status s;
    int64_t bound = !predict && t->it->binds ? bind_models(t, gpu ? hy_rt_current_device() : -1) : 0;
    /* a GPU task's own transfers go on its PU's channel, with those of a
     * bind that made a model's context (its constant arrays) */
    int64_t bytes = gpu ? models_gpu_bytes(t) - bound : 0;
    if (!pool) s = hy_fail(HY_ERR_NOMEM, "object '%s': no worker pool for its integration", o->name);
    else if (t->group >= 0) s = hy_links_solve_group(t->w, t->group, pool, t->dt, &t->st);
    else if (predict) s = o->ops->predict(t->w, o, pool, t->dt, &t->st);
    else s = o->ops->integrate(t->w, o, pool, t->dt, &t->st);
    if (gpu) hy_rt_count_transfer(models_gpu_bytes(t) - bytes);
    t->status = s;
    if (s) snprintf(t->message, sizeof t->message, "%s", hy_last_error());
}

static void predict_fn(void* const* buffers, void* arg) {
    (void)buffers;
    run_op(arg, 1, 0);
}

static void integrate_fn(void* const* buffers, void* arg) {
    (void)buffers;
    run_op(arg, 0, 0);
}

static void integrate_cuda_fn(void* const* buffers, void* arg) {
    (void)buffers;
    run_op(arg, 0, 1);
}

static const hy_rt_kind k_predict = {"predict", 2, {HY_RT_RW, HY_RT_R}, predict_fn, NULL, 0};
static const hy_rt_kind k_integrate = {"integrate", 2, {HY_RT_RW, HY_RT_R}, integrate_fn, NULL, 0};
/* objects whose model can run its passes on a GPU, and coupled groups
 * (solids): the host-driven solve takes both arguments on the host */
static const hy_rt_kind k_integrate_dev = {"integrate", 2, {HY_RT_RW, HY_RT_R}, integrate_fn, integrate_cuda_fn, 3u};
static const hy_rt_kind k_group = {"group", 2, {HY_RT_RW, HY_RT_R}, integrate_fn, integrate_cuda_fn, 3u};

/* A batch of small free solids (solvers/batch_step.h). On a GPU PU (or its
 * host twin) their CG solves run in lockstep with each round's products
 * in one batch product on its device (the twin's on the host); on a CPU
 * PU, or once its GPU has failed, each steps alone. Either way every
 * object ends with the bits of its own step. The models stay on the CPU:
 * the batch's device copies are the stepper's. */
static void run_batch(obj_task* t, int gpu) {
    hy_integrator* it = t->it;
    hy_world* w = t->w;
    int32_t k = t->batch, first = it->bstart[k], n = it->bstart[k + 1] - first;
    hy_pool* pool = worker_pool(it, w);
    hy_status s = HY_OK;
    for (int32_t j = 0; j < n && !s; j++) {
        hy_object* o = &w->objects[it->bslots[first + j]];
        s = o->ops->set_device(o, -1);
    }
    if (!pool) s = hy_fail(HY_ERR_NOMEM, "object '%s': no worker pool for its integration",
                           w->objects[it->bslots[first]].name);
    int device = gpu ? hy_rt_current_device() : -1;
    int32_t gi = gpu ? gpu_index(it, device) : -1;
    if (!s && gpu && !(gi >= 0 && it->gpu_failed[gi])) {
        hy_batch_stepper* st = it->stepper[k];
        int64_t before = 0, after = 0, bytes0 = 0, bytes1 = 0;
        if (!st || hy_batch_stepper_device(st) != device) {
            hy_batch_stepper_destroy(st);
            it->stepper[k] = NULL;
            s = hy_batch_stepper_create(device, &it->stepper[k]);
            st = it->stepper[k];
        }
        int32_t failed = -1;
        hy_batch_stepper_counts(st, &before, NULL, &bytes0);
        int64_t resident0 = hy_batch_stepper_resident_steps(st);
        if (!s)
            s = hy_batch_step(st, &it->bobj[first], n, pool, t->dt, w->def.gravity, w->def.cg_max_iterations,
                              w->def.cg_tolerance, &failed);
        hy_batch_stepper_counts(st, &after, NULL, &bytes1);
        hy_rt_count_transfer(bytes1 - bytes0); /* on the GPU PU's channel */
        if (!s) {
            for (int32_t j = 0; j < n; j++) {
                const hy_batch_object* b = &it->bobj[first + j];
                hy_stats_add_solve(&t->st, b->iterations, b->residual, !(b->residual <= w->def.cg_tolerance));
            }
            t->batched = n;
            t->batch_products = (int32_t)(after - before);
            if (hy_batch_stepper_resident_steps(st) > resident0) t->resident = n;
            return;
        }
        if (failed >= 0) {
            hy_error_prefix("object '%s': ", w->objects[it->bslots[first + failed]].name);
            t->status = s;
            snprintf(t->message, sizeof t->message, "%s", hy_last_error());
            return;
        }
        /* the GPU failed before any object's state was written */
        gpu_stopped(it, device);
        s = HY_OK;
    }
    for (int32_t j = 0; j < n && !s; j++) {
        hy_object* o = &w->objects[it->bslots[first + j]];
        s = o->ops->integrate(w, o, pool, t->dt, &t->st);
    }
    t->status = s;
    if (s) snprintf(t->message, sizeof t->message, "%s", hy_last_error());
}

static void batch_fn(void* const* buffers, void* arg) {
    (void)buffers;
    run_batch(arg, 0);
}

static void batch_cuda_fn(void* const* buffers, void* arg) {
    (void)buffers;
    run_batch(arg, 1);
}

static const hy_rt_kind k_batch = {"batch", 2, {HY_RT_RW, HY_RT_R}, batch_fn, batch_cuda_fn, 3u};

/* ------------------------------------------------------------ integrator */

/* The executor of `pus` PUs (the pools of an earlier one go: they
 * belong to its worker threads). */
static hy_status make_pus(hy_integrator* it, int32_t pus) {
    hy_integrator_detach_trace(it);
    hy_rt_exec_destroy(it->exec);
    hy_rt_team_destroy(it->team);
    it->exec = NULL;
    it->team = NULL;
    for (int32_t i = 0; i < it->npools; i++) hy_pool_destroy(it->pool[i]);
    it->npools = 0;
    it->pus = pus;
    it->stats.pus = pus + it->gpus;
    if (pus == 1 && it->gpus == 0) return hy_rt_exec_create(1, &it->exec);
    if (pus + it->gpus > HY_RT_MAX_PUS)
        return hy_fail(HY_ERR_INVALID_ARG, "integration: %d CPU and %d GPU PUs, at most %d in all", pus, it->gpus,
                       HY_RT_MAX_PUS);
    hy_rt_team_pu def[HY_RT_MAX_PUS];
    for (int32_t q = 0; q < pus; q++) def[q] = (hy_rt_team_pu){HY_RT_CPU, 1, -1};
    for (int32_t i = 0; i < it->gpus; i++) def[pus + i] = (hy_rt_team_pu){HY_RT_GPU, 1, it->gpu_device[i]};
    return hy_rt_team_create_pus(pus + it->gpus, def, it->policy, 42, &it->team);
}

hy_status hy_integrator_set_gpus(hy_integrator* it, int32_t count, const int* devices) {
    if (!it || count < 0 || (count && !devices) || count >= HY_RT_MAX_PUS)
        return hy_fail(HY_ERR_INVALID_ARG, "integration GPUs: %d devices (0..%d)", count, HY_RT_MAX_PUS - 1);
    for (int32_t i = 0; i < count; i++)
        for (int32_t j = 0; j < i; j++)
            if (devices[i] == devices[j] && devices[i] >= 0)
                return hy_fail(HY_ERR_INVALID_ARG, "integration GPUs: cuda:%d named twice", devices[i]);
    it->gpus = count;
    it->binds |= count > 0;
    for (int32_t i = 0; i < count; i++) {
        it->gpu_device[i] = devices[i];
        it->gpu_failed[i] = 0;
    }
    it->fallback[0] = '\0';
    return make_pus(it, it->pus);
}

hy_status hy_integrator_set_devices(hy_integrator* it, const char* list) {
    int devices[HY_RT_MAX_PUS], n = 0, used = 0;
    char missing[128] = "";
    size_t m = 0;
    for (const char* p = list ? list : ""; *p;) {
        size_t len = strcspn(p, ",");
        char* end = NULL;
        long d = len > 5 && !strncmp(p, "cuda:", 5) ? strtol(p + 5, &end, 10) : -1;
        if (d < 0 || d > 1023 || end != p + len)
            return hy_fail(HY_ERR_INVALID_ARG, "integration devices '%s': item '%.*s' is not cuda:D", list, (int)len, p);
        if (n >= HY_RT_MAX_PUS - 1)
            return hy_fail(HY_ERR_INVALID_ARG, "integration devices '%s': more than %d", list, HY_RT_MAX_PUS - 1);
        devices[n++] = (int)d;
        p += len + (p[len] == ',');
    }
    /* the GPUs this build and machine have; the others are said, not used */
    int have = hy_cuda_device_count();
    for (int i = 0; i < n; i++) {
        if (devices[i] < have) devices[used++] = devices[i];
        else if (m < sizeof missing) m += (size_t)snprintf(missing + m, sizeof missing - m, "%scuda:%d", m ? ", " : "", devices[i]);
    }
    hy_status s = hy_integrator_set_gpus(it, used, devices);
    if (!s && missing[0])
        snprintf(it->fallback, sizeof it->fallback, "integration: %s not used (%s); integration on the CPU PUs", missing,
                 hy_cuda_status());
    return s;
}

int32_t hy_integrator_gpus(const hy_integrator* it, int* devices) {
    for (int32_t i = 0; devices && i < it->gpus; i++) devices[i] = it->gpu_device[i];
    return it->gpus;
}

hy_status hy_integrator_create(const char* policy, int32_t pus, hy_integrator** out) {
    *out = NULL;
    const hy_rt_policy_class* pc = NULL;
    hy_status s = hy_rt_policy_lookup(policy ? policy : "", &pc);
    if (s) return s;
    if (pus < 0 || pus > HY_RT_MAX_PUS)
        return hy_fail(HY_ERR_INVALID_ARG, "integration PUs must be in [1, %d] (0: chosen per step), got %d",
                       HY_RT_MAX_PUS, pus);
    hy_integrator* it = calloc(1, sizeof *it);
    if (!it) return hy_fail(HY_ERR_NOMEM, "out of memory for the integrator");
    snprintf(it->policy, sizeof it->policy, "%s", policy);
    it->automatic = pus == 0;
    snprintf(it->stats.policy, sizeof it->stats.policy, "%s", policy);
    pthread_mutex_init(&it->lock, NULL);
    s = make_pus(it, pus ? pus : 1);
    if (s) {
        hy_integrator_destroy(it);
        return s;
    }
    *out = it;
    return HY_OK;
}

int32_t hy_integrator_default_pus(const hy_world* w) {
    int32_t threads = hy_pool_size(w->pool), solids = 0;
    if (threads > HY_RT_MAX_PUS) threads = HY_RT_MAX_PUS;
    for (int32_t i = 0; i < w->object_count && solids < 2 * threads; i++)
        solids += w->objects[i].alive && hy_object_has(&w->objects[i], HY_KIND_SOLID);
    return threads > 1 && solids >= 2 * threads ? threads : 1;
}

static void drop_steppers(hy_integrator* it) {
    for (int32_t k = 0; k < HY_RT_MAX_PUS; k++) {
        hy_batch_stepper_destroy(it->stepper[k]);
        it->stepper[k] = NULL;
    }
}

void hy_integrator_destroy(hy_integrator* it) {
    if (!it) return;
    hy_integrator_detach_trace(it);
    hy_rt_exec_destroy(it->exec);
    hy_rt_team_destroy(it->team);
    hy_rt_graph_destroy(it->g);
    drop_steppers(it);
    for (int32_t i = 0; i < it->npools; i++) hy_pool_destroy(it->pool[i]);
    pthread_mutex_destroy(&it->lock);
    free(it->ids);
    free(it->states);
    free(it->h_state);
    free(it->h_model);
    free(it->tasks);
    free(it->bslots);
    free(it->batch_of);
    free(it->bobj);
    free(it);
}

const char* hy_integrator_policy(const hy_integrator* it) { return it->policy; }
int32_t hy_integrator_pus(const hy_integrator* it) { return it->pus; }

/* The handles name the objects' state blocks and models: registered again
 * (a new graph) when the object table moved or changed. */
static hy_status sync_handles(hy_integrator* it, hy_world* w) {
    int32_t n = w->object_count;
    int same = it->g && it->base == w->objects && it->count == n;
    for (int32_t i = 0; same && i < n; i++) {
        hy_object_id id = hy_world_slot_id(w, i);
        same = it->states[i] == w->objects[i].state && it->ids[i].index == id.index &&
               it->ids[i].generation == id.generation;
    }
    if (same) return HY_OK;
    /* the batches' device copies were made of models that may be gone */
    drop_steppers(it);
    hy_rt_graph_destroy(it->g);
    it->g = NULL;
    it->count = 0;
    if (n > it->cap) {
        int32_t cap = n;
        hy_object_id* ids = realloc(it->ids, sizeof *ids * (size_t)cap);
        if (ids) it->ids = ids;
        hy_object_state** st = ids ? realloc(it->states, sizeof *st * (size_t)cap) : NULL;
        if (st) it->states = st;
        int32_t* hs = st ? realloc(it->h_state, sizeof *hs * (size_t)cap) : NULL;
        if (hs) it->h_state = hs;
        int32_t* hm = hs ? realloc(it->h_model, sizeof *hm * (size_t)cap) : NULL;
        if (hm) it->h_model = hm;
        obj_task* t = hm ? realloc(it->tasks, sizeof *t * (size_t)cap) : NULL;
        if (t) it->tasks = t;
        int32_t* bs = t ? realloc(it->bslots, sizeof *bs * (size_t)cap) : NULL;
        if (bs) it->bslots = bs;
        int32_t* bo = bs ? realloc(it->batch_of, sizeof *bo * (size_t)cap) : NULL;
        if (bo) it->batch_of = bo;
        hy_batch_object* bb = bo ? realloc(it->bobj, sizeof *bb * (size_t)cap) : NULL;
        if (!bb) return hy_fail(HY_ERR_NOMEM, "out of memory for the integration tasks of %d objects", n);
        it->bobj = bb;
        it->cap = cap;
    }
    hy_status s = hy_rt_graph_create(&it->g);
    for (int32_t i = 0; !s && i < n; i++) {
        hy_object* o = &w->objects[i];
        s = hy_rt_graph_register(it->g, o->state, hy_object_state_bytes(o->model.nv), &it->h_state[i]);
        if (!s) s = hy_rt_graph_register(it->g, &o->model, sizeof o->model, &it->h_model[i]);
        it->states[i] = o->state;
        it->ids[i] = hy_world_slot_id(w, i);
    }
    if (s) return s;
    it->base = w->objects;
    it->count = n;
    return HY_OK;
}

/* The bytes of a run on the channel between the host and PU q's memory
 * (0 for a PU on the host). */
static int64_t pu_channel_bytes(const hy_rt_sim* s, int32_t q, const hy_rt_step_stats* rs) {
    int32_t mem = s->m.pu[q].mem;
    for (int32_t c = 0; mem != HY_RT_HOST && c < s->m.net.nchannels; c++) {
        const hy_rt_channel* ch = &s->m.net.channels[c];
        if ((ch->a == HY_RT_HOST && ch->b == mem) || (ch->b == HY_RT_HOST && ch->a == mem)) return rs->channel_bytes[c];
    }
    return 0;
}

/* With GPUs set, the small free solids of the wave of `order` go into
 * batches (hy_solid_batch_object), as many as there are GPUs and at least
 * two objects each, slots in order; each batch is one task at its first
 * slot, in place of its members' own (as a coupled group is: in the wave
 * no other task touches them). Returns the number of batches. */
static int32_t make_batches(hy_integrator* it, hy_world* w, int order) {
    int32_t n = 0;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        it->batch_of[i] = -1;
        if (!o->alive || o->ops->order != order || !hy_object_has(o, HY_KIND_SOLID) || !o->ops->set_device ||
            hy_links_group_of(w, i) >= 0 || !hy_solid_batch_object(w, o, &it->bobj[n]))
            continue;
        it->bslots[n++] = i;
    }
    int32_t nb = it->gpus < n / 2 ? it->gpus : n / 2;
    for (int32_t k = 0; k <= nb; k++) it->bstart[k] = nb ? (int32_t)((int64_t)k * n / nb) : 0;
    for (int32_t k = 0; k < nb; k++)
        for (int32_t j = it->bstart[k]; j < it->bstart[k + 1]; j++) it->batch_of[it->bslots[j]] = k;
    return nb;
}

/* The vertices of the task headed by object i in this wave (a coupled
 * group's at its lowest slot, a batch's at its first), or -1 when object i
 * heads none. */
static int64_t task_vertices(const hy_integrator* it, const hy_world* w, int32_t i, int order, int32_t nb) {
    const hy_object* o = &w->objects[i];
    if (!o->alive || (order < 0 ? !o->ops->predict : o->ops->order != order)) return -1;
    int32_t g = order < 0 ? -1 : hy_links_group_of(w, i), first = i;
    int32_t b = nb ? it->batch_of[i] : -1;
    int64_t nv = o->model.nv;
    if (g >= 0) hy_links_group_info(w, g, &first, NULL, &nv);
    if (b >= 0) {
        first = it->bslots[it->bstart[b]];
        nv = 0;
        for (int32_t j = it->bstart[b]; j < it->bstart[b + 1]; j++) nv += w->objects[it->bslots[j]].model.nv;
    }
    return first == i ? nv : -1;
}

/* The slot of a coupled group that holds more than half of the wave's
 * vertices, or -1. No placement can balance such a task against the rest:
 * on a PU of its own it keeps one thread busy while the others run dry
 * (fem64's landings: one group of 52 of the 64 blocks, its solve on one of
 * the two threads). It runs first, on the calling thread with the world's
 * whole pool, and the PUs share out the rest of the wave after it; a
 * group's solve gives the same bits on any pool. Not with GPUs, which may
 * take the group whole. */
static int32_t wide_slot(const hy_integrator* it, const hy_world* w, int order, int32_t nb) {
    if (!it->team || it->gpus > 0 || order < 0) return -1;
    int64_t total = 0, most = 0;
    int32_t slot = -1;
    for (int32_t i = 0; i < w->object_count; i++) {
        int64_t nv = task_vertices(it, w, i, order, nb);
        if (nv < 0) continue;
        total += nv;
        if (hy_links_group_of(w, i) >= 0 && nv > most) most = nv, slot = i;
    }
    return slot >= 0 && 2 * most > total ? slot : -1;
}

static void task_reset(obj_task* t, hy_integrator* it, hy_world* w, int32_t i, int32_t g, int32_t b, double dt) {
    memset(&t->st, 0, sizeof t->st);
    t->w = w;
    t->it = it;
    t->slot = i;
    t->group = g;
    t->batch = b;
    t->wide = 0;
    t->batched = t->batch_products = t->resident = 0;
    t->dt = dt;
    t->status = HY_OK;
    t->message[0] = '\0';
}

/* One wave: the predicts (order < 0) or the integrates of one order. */
static hy_status wave(hy_integrator* it, hy_world* w, double dt, int order, hy_step_stats* st) {
    hy_rt_graph_reset(it->g);
    int32_t n = 0;
    int32_t nb = order >= 0 && it->gpus > 0 ? make_batches(it, w, order) : 0;
    int32_t wide = wide_slot(it, w, order, nb);
    hy_integrate_stats* is = &it->stats;
    double t0 = hy_rt_wall_seconds();
    if (wide >= 0) {
        obj_task* t = &it->tasks[wide];
        task_reset(t, it, w, wide, hy_links_group_of(w, wide), -1, dt);
        t->wide = 1;
        run_op(t, 0, 0);
        if (t->status) return hy_fail(t->status, "%s", t->message);
        hy_stats_add_solve(st, t->st.cg_iterations, t->st.cg_relative_residual, t->st.cg_capped);
        double ms = 1e3 * (hy_rt_wall_seconds() - t0);
        is->wide_tasks++;
        is->wide_ms += ms;
        if (it->trace) { /* on a track after the PUs' and the scheduler's */
            int tid = it->pus + it->gpus + 1;
            if (!it->wide_track) hy_rt_trace_track(it->trace, tid, "all threads (groups too large to place)");
            it->wide_track = 1;
            it->trace->base = t0 - it->trace->clock0;
            char args[48];
            snprintf(args, sizeof args, "\"slot\":%d", wide);
            hy_rt_trace_span(it->trace, "group", "task", tid, 0.0, 1e-3 * ms, args);
        }
    }
    for (int32_t i = 0; i < w->object_count; i++) {
        if (i == wide) continue;
        int64_t nv = task_vertices(it, w, i, order, nb);
        if (nv < 0) continue;
        const hy_object* o = &w->objects[i];
        int32_t g = order < 0 ? -1 : hy_links_group_of(w, i);
        int32_t b = nb ? it->batch_of[i] : -1;
        obj_task* t = &it->tasks[i];
        task_reset(t, it, w, i, g, b, dt);
        int32_t h[2] = {it->h_state[i], it->h_model[i]};
        const hy_rt_kind* k = b >= 0                ? &k_batch
                              : g >= 0              ? &k_group
                              : order < 0           ? &k_predict
                              : o->ops->set_device ? &k_integrate_dev
                                                    : &k_integrate;
        /* the modeled cost only seeds the policy: the team measures each
         * partition's real time */
        hy_status s = hy_rt_graph_submit(it->g, k, i, 1e-7 * (double)nv, t, h, NULL);
        if (s) return s;
        n++;
    }
    if (n == 0) {
        is->wall_ms += 1e3 * (hy_rt_wall_seconds() - t0);
        return HY_OK;
    }
    hy_rt_step_stats rs;
    hy_status s = it->team ? hy_rt_team_run(it->team, it->g, &rs) : hy_rt_exec_run(it->exec, it->g);
    if (s) return s;
    double wall = hy_rt_wall_seconds() - t0;
    is->wall_ms += 1e3 * wall;
    if (it->team) {
        is->steals += rs.steals;
        is->metis_calls += rs.metis_calls;
        for (int32_t q = 0; q < it->pus + it->gpus; q++) {
            is->busy_ms[q] += 1e3 * rs.busy[q];
            is->tasks[q] += rs.pu_tasks[q];
            is->bytes[q] += pu_channel_bytes(hy_rt_team_sim(it->team), q, &rs);
        }
    } else {
        is->busy_ms[0] += 1e3 * wall;
        is->tasks[0] += n;
    }
    for (int32_t k = 0; k < it->g->ntasks; k++) {
        const obj_task* t = it->g->tasks[k].arg;
        if (t->status) return hy_fail(t->status, "%s", t->message);
        hy_stats_add_solve(st, t->st.cg_iterations, t->st.cg_relative_residual, t->st.cg_capped);
        is->batched += t->batched;
        is->batch_products += t->batch_products;
        is->batch_resident += t->resident;
    }
    return HY_OK;
}

/* ---------------------------------------------------------------- bonds */

static hy_rigid_state* bond_state(void* ctx, int32_t slot) { return &((hy_world*)ctx)->objects[slot].state->body1; }
/* A sleeper holds its bonds as a fixed anchor (no inverse mass or
 * inertia), as it holds what rests on it: a bonded piece that sleeps
 * beside an awake one is not pulled along, and a bond between two
 * sleepers has nothing to solve. */
static const hy_rigid_inertia* bond_inertia(void* ctx, int32_t slot) {
    static const hy_rigid_inertia anchor; /* all zero: immovable */
    const hy_object_state* st = ((hy_world*)ctx)->objects[slot].state;
    return st->asleep ? &anchor : &st->inertia;
}

/* Bonds correct the bonded bodies' velocities; their poses then follow
 * the corrected velocities over the step, and the anchors' drift is
 * closed on the poses (a fifth per step, as a Baumgarte factor of 0.2
 * would, without adding velocity). */
static void solve_bonds(hy_world* w, double dt, hy_step_stats* st) {
    if (w->bonds.intact == 0) return;
    hy_bond_bodies bb = {bond_state, bond_inertia, w};
    st->bonds_broken += hy_bonds_solve(&w->bonds, &bb, 8);
    for (int32_t k = 0; k < w->bonds.count; k++) {
        const hy_bond* b = &w->bonds.bonds[k];
        int32_t ends[2] = {b->a, b->b};
        for (int e = 0; e < 2; e++) {
            hy_object_state* o = w->objects[ends[e]].state;
            o->body1.x = v3_mad(o->body.x, o->body1.v, dt);
            o->body1.q = quat_normalize(quat_mul(quat_from_rotvec(v3_scale(o->body1.w, dt)), o->body.q));
        }
    }
    hy_bonds_project(&w->bonds, &bb, 0.2, 2);
    for (int32_t k = 0; k < w->bonds.count; k++) { /* sleepers stay where they are */
        const hy_bond* b = &w->bonds.bonds[k];
        hy_object_state *sa = w->objects[b->a].state, *sb = w->objects[b->b].state;
        if (sa->asleep) sa->body1 = sa->body;
        if (sb->asleep) sb->body1 = sb->body;
    }
}

/* ---------------------------------------------------------------- trace */

void hy_integrator_detach_trace(hy_integrator* it) {
    if (!it || !it->trace) return;
    if (it->team) hy_rt_team_set_trace(it->team, NULL);
    else hy_rt_exec_set_trace(it->exec, NULL, NULL);
    hy_rt_trace_close(it->trace); /* leaves the stream to its writer */
    it->trace = NULL;
    it->wide_track = 0;
}

/* Attach to the world's collision trace when one is open and this
 * integrator is not attached yet; a failure leaves the phase untraced. */
static void follow_trace(hy_integrator* it, hy_world* w) {
    const hy_prox* p = w->prox;
    if (it->trace || !p || !p->trace) return;
    if (hy_rt_trace_attach(p->trace, p->trace_path, 2, "integration", &it->trace)) return;
    if (it->team) {
        hy_rt_team_set_trace(it->team, it->trace);
    } else {
        char name[64];
        snprintf(name, sizeof name, "cpu0 (%d threads)", hy_pool_size(w->pool));
        hy_rt_exec_set_trace(it->exec, it->trace, name);
    }
}

/* ----------------------------------------------------------------- step */

hy_status hy_integrator_step(hy_integrator* it, hy_world* w, double dt, hy_step_stats* st) {
    memset(&it->stats, 0, sizeof it->stats);
    snprintf(it->stats.policy, sizeof it->stats.policy, "%s", it->policy);
    hy_status s = HY_OK;
    if (it->automatic) {
        int32_t pus = hy_integrator_default_pus(w);
        if (pus != it->pus) s = make_pus(it, pus);
    }
    it->stats.pus = it->pus + it->gpus;
    it->stats.gpus = it->gpus;
    if (s) return s;
    follow_trace(it, w);
    /* where the phase starts on the trace's timeline (see the top) */
    hy_prox* p = w->prox;
    double start = hy_rt_wall_seconds();
    if (it->trace) it->trace->clock0 = p->clock == HY_CLOCK_VIRTUAL ? start - p->trace_base : p->trace_open_wall;
    s = sync_handles(it, w);
    if (!s) s = wave(it, w, dt, -1, st);
    if (!s) {
        solve_bonds(w, dt, st);
        for (int order = 0; order < HY_ORDER_COUNT && !s; order++) s = wave(it, w, dt, order, st);
    }
    if (it->trace && p->clock == HY_CLOCK_VIRTUAL) p->trace_base += hy_rt_wall_seconds() - start;
    return s;
}

void hy_integrator_get_stats(const hy_integrator* it, hy_integrate_stats* out) {
    *out = it->stats;
    out->pus = it->pus + it->gpus;
    out->gpus = it->gpus;
    snprintf(out->fallback, sizeof out->fallback, "%s", it->fallback);
}

HY_API hy_status hy_world_get_integrate_stats(const hy_world* w, hy_integrate_stats* out) {
    if (!w || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_integrate_stats: NULL argument");
    memset(out, 0, sizeof *out);
    if (w->integrator) {
        hy_integrator_get_stats(w->integrator, out);
    } else { /* what the first step makes (engine/step.c) */
        snprintf(out->policy, sizeof out->policy, "lp");
        out->pus = hy_integrator_default_pus(w);
    }
    return HY_OK;
}
