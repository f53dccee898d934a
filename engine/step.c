/* The step pipeline (read it top-down in hy_world_step): integrate, detect
 * and respond, commit, sleep; the contacts it keeps, and the scheduling
 * settings its collision jobs run with. */
#include "engine/world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision/collide.h"
#include "collision/response.h"
#include "core/error.h"
#include "engine/cloth_contact.h"
#include "engine/integrate.h"
#include "engine/kinds.h"
#include "engine/links.h"
#include "engine/tools.h"
#include "sched/proximity.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static int finite3(const double* p) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

/* -------------------------------------------------------------- step */

HY_API const char* hy_phase_name(hy_phase p) {
    static const char* names[HY_PHASE_COUNT] = {"integrate", "refit", "traverse", "response", "commit"};
    return (unsigned)p < HY_PHASE_COUNT ? names[p] : "unknown";
}

/* Detection and response over the substep's candidate motion: the scene
 * view filled from the objects, the response run through it with the
 * world's framework, its corrected motion taken back; the first detection
 * round's contacts kept (hy_world_get_contacts) and noted as events. */
static hy_status respond(hy_world* w, double dt, hy_step_stats* st) {
    hy_status s = hy_world_collision_sync(w);
    if (!s) s = hy_world_ensure_prox(w);
    if (s) return s;
    hy_world_view_begin(w, dt);
    hy_response_params rp = hy_response_params_default();
    rp.rolling_resistance = w->def.rolling_resistance;
    rp.bounce_speed = w->def.bounce_speed;
    hy_contact_list first = {w->last_contacts, 0, w->last_contact_capacity};
    s = hy_collision_resolve(w->collision, &w->view, w->prox, w->pool, dt, &rp, &first, st);
    w->last_contacts = first.items;
    w->last_contact_capacity = first.capacity;
    w->last_contact_count = first.count;
    if (s) return s;
    hy_world_view_end(w);
    return hy_events_note(w, w->last_contacts, w->last_contact_count);
}

HY_API hy_status hy_world_get_contacts(const hy_world* w, hy_contact_info* out, int64_t capacity, int64_t* count) {
    if (!w || !count) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_contacts: NULL argument");
    if (capacity < 0 || (capacity > 0 && !out))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_contacts: out is NULL or capacity %lld < 0",
                       (long long)capacity);
    *count = 0;
    const hy_collision_state* cs = w->collision;
    const hy_scene_view* v = &w->view;
    if (!cs || cs->object_count != w->object_count) return HY_OK;
    for (int64_t k = 0; k < w->last_contact_count && k < capacity && out; k++) {
        const hy_contact* c = &w->last_contacts[k];
        hy_contact_info* info = &out[k];
        int32_t oa = v->vertex_object[c->v[0]], ob = v->vertex_object[c->v[c->type == HY_CONTACT_VF ? 1 : 2]];
        info->kind = c->type == HY_CONTACT_VF ? HY_CONTACT_KIND_VERTEX_FACE : HY_CONTACT_KIND_EDGE_EDGE;
        info->a = hy_world_slot_id(w, oa);
        info->b = hy_world_slot_id(w, ob);
        for (int q = 0; q < 4; q++) info->vertex[q] = c->v[q] - v->offset[v->vertex_object[c->v[q]]];
        const double* p0 = v->X0 + 3 * (size_t)c->v[0];
        const double* p1 = v->X0 + 3 * (size_t)c->v[1];
        for (int d = 0; d < 3; d++) info->point[d] = c->type == HY_CONTACT_VF ? p0[d] : 0.5 * (p0[d] + p1[d]);
        info->time_of_impact = c->toi;
    }
    *count = w->last_contact_count;
    return HY_OK;
}

/* Predict x1, v1 of every object over dt from x, v (the solvers' phase):
 * the kinds' operations as runtime tasks (engine/integrate.c), on the
 * world's integration PUs (one, the calling thread, unless
 * hy_world_set_integrate_sched said otherwise). */
static hy_status integrate(hy_world* w, double dt, hy_step_stats* st) {
    if (!w->integrator) {
        hy_status s = hy_integrator_create("lp", 0, &w->integrator);
        if (s) return s;
    }
    /* solids joined by attachments or last step's contacts step together
     * in one coupled solve per group, a task of the solids' wave */
    hy_status s = hy_links_prepare(w);
    if (s) return s;
    return hy_integrator_step(w->integrator, w, dt, st);
}

HY_API hy_status hy_world_set_integrate_sched(hy_world* w, const char* policy, int32_t pus) {
    if (!w || !policy) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_set_integrate_sched: NULL argument");
    hy_integrator* it = NULL;
    hy_status s = hy_integrator_create(policy, pus, &it);
    int devices[HY_INTEGRATE_MAX_PUS];
    int32_t gpus = w->integrator ? hy_integrator_gpus(w->integrator, devices) : 0;
    if (!s && gpus) s = hy_integrator_set_gpus(it, gpus, devices); /* the GPUs stay */
    if (s) {
        hy_integrator_destroy(it);
        hy_error_prefix("hy_world_set_integrate_sched: ");
        return s;
    }
    hy_integrator_destroy(w->integrator);
    w->integrator = it;
    return HY_OK;
}

HY_API hy_status hy_world_set_integrate_devices(hy_world* w, const char* devices) {
    if (!w) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_set_integrate_devices: NULL world");
    if (!w->integrator) {
        hy_status s = hy_integrator_create("lp", 0, &w->integrator);
        if (s) return s;
    }
    hy_status s = hy_integrator_set_devices(w->integrator, devices);
    if (s) hy_error_prefix("hy_world_set_integrate_devices: ");
    return s;
}

/* NaN/inf anywhere in the candidate state: name the object and vertex. */
static hy_status check_finite(const hy_world* w) {
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        for (int32_t k = 0; k < o->model.nv; k++)
            if (!finite3(o->state->x1 + 3 * k) || !finite3(o->state->v1 + 3 * k))
                return hy_fail(HY_ERR_NUMERIC,
                               "step %lld: object '%s' vertex %d became non-finite; state kept at the last finite substep",
                               (long long)w->step_index + 1, o->name, k);
    }
    return HY_OK;
}

static void commit(hy_world* w) {
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive) continue;
        double* t = o->state->x;
        o->state->x = o->state->x1;
        o->state->x1 = t;
        t = o->state->v;
        o->state->v = o->state->v1;
        o->state->v1 = t;
        if (o->ops->commit) o->ops->commit(o);
    }
}

/* ------------------------------------------------------------- scheduling */

HY_API hy_sched_def hy_sched_def_default(void) {
    hy_sched_def d;
    memset(&d, 0, sizeof d);
    d.policy = "lp";
    d.devices = "cpu";
    d.cookie = HY_DEF_COOKIE;
    return d;
}

hy_status hy_world_ensure_prox(hy_world* w) {
    if (w->prox) return HY_OK;
    hy_sched_def d = hy_sched_def_default();
    return hy_world_set_scheduling(w, &d);
}

struct hy_prox* hy_world_prox(hy_world* w) { return w && !hy_world_ensure_prox(w) ? w->prox : NULL; }

HY_API hy_status hy_world_set_scheduling(hy_world* w, const hy_sched_def* def) {
    if (!w || !def) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_set_scheduling: NULL argument");
    if (def->cookie != HY_DEF_COOKIE)
        return hy_fail(HY_ERR_BAD_DEF, "hy_world_set_scheduling: def not initialised by hy_sched_def_default()");
    hy_sched_model profiles;
    hy_sched_model_init(&profiles);
    if (def->profile) {
        hy_status s = hy_sched_model_load(def->profile, &profiles);
        if (s) return s;
    }
    hy_prox_config c;
    memset(&c, 0, sizeof c);
    c.policy = def->policy;
    c.devices = def->devices;
    c.clock = def->virtual_clock ? HY_CLOCK_VIRTUAL : HY_CLOCK_REAL;
    c.profiles = def->profile ? &profiles : NULL;
    c.fault = def->fault;
    hy_sched_options_default(&c.options);
    /* the scheduler's own decisions must not read the wall clock, or the
     * assignment (and so the timeline) would change from run to run: lp's
     * time-out compares its modeled solving time instead */
    c.options.lp_timeout = 2;
    hy_prox* p = NULL;
    hy_status s = hy_prox_create(&c, &p);
    if (!s && def->trace) s = hy_prox_trace_open(p, def->trace);
    if (s) {
        hy_prox_destroy(p);
        return s;
    }
    hy_integrator_detach_trace(w->integrator); /* it may write into the old trace's stream */
    hy_prox_destroy(w->prox);
    w->prox = p;
    return HY_OK;
}

_Static_assert(HY_SCHED_INFO_RESOURCES >= HY_SCHED_MAX_RESOURCES, "hy_sched_info holds every resource");

HY_API hy_status hy_world_get_scheduling(const hy_world* w, hy_sched_info* out) {
    if (!w || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_scheduling: NULL argument");
    memset(out, 0, sizeof *out);
    if (!w->prox) {
        /* what hy_world_ensure_prox will make at the first step */
        snprintf(out->policy, sizeof out->policy, "lp");
        out->resource_count = 1;
        snprintf(out->resource[0].name, sizeof out->resource[0].name, "cpu");
        return HY_OK;
    }
    snprintf(out->policy, sizeof out->policy, "%s", hy_prox_policy_name(w->prox));
    out->virtual_clock = hy_prox_clock(w->prox) == HY_CLOCK_VIRTUAL;
    int n = hy_prox_resource_count(w->prox);
    out->resource_count = n < HY_SCHED_INFO_RESOURCES ? n : HY_SCHED_INFO_RESOURCES;
    for (int i = 0; i < out->resource_count; i++) {
        const hy_resource* r = hy_prox_resource(w->prox, i);
        snprintf(out->resource[i].name, sizeof out->resource[i].name, "%s", r->name);
        out->resource[i].modeled = r->modeled;
        out->resource[i].retired = r->retired;
    }
    out->failures = hy_prox_failures(w->prox);
    snprintf(out->failure, sizeof out->failure, "%s", hy_prox_failure(w->prox));
    snprintf(out->fallback, sizeof out->fallback, "%s", hy_prox_fallback(w->prox));
    out->fell_back = out->fallback[0] != '\0';
    return HY_OK;
}

HY_API hy_status hy_world_close_trace(hy_world* w) {
    if (!w) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_close_trace: NULL argument");
    hy_integrator_detach_trace(w->integrator);
    return w->prox ? hy_prox_trace_close(w->prox) : HY_OK;
}

HY_API hy_status hy_world_set_policy(hy_world* w, const char* policy) {
    if (!w || !policy) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_set_policy: NULL argument");
    hy_status s = hy_world_ensure_prox(w);
    return s ? s : hy_prox_set_policy(w->prox, policy);
}

/* Copy the framework's figures of this step into the world's snapshot. */
static void keep_sched_stats(hy_world* w) {
    memset(&w->sched_stats, 0, sizeof w->sched_stats);
    if (!w->prox) return;
    const hy_prox_stats* ps = hy_prox_stats_get(w->prox);
    hy_sched_stats* o = &w->sched_stats;
    snprintf(o->policy, sizeof o->policy, "%s", hy_prox_policy_name(w->prox));
    o->virtual_clock = hy_prox_clock(w->prox) == HY_CLOCK_VIRTUAL;
    o->resources = hy_prox_resource_count(w->prox);
    o->makespan_ms = 1e3 * ps->makespan;
    o->scheduler_ms = 1e3 * ps->sched_time;
    o->calls = ps->calls;
    for (int i = 0; i < o->resources && i < 32; i++) {
        hy_resource_stats* r = &w->resource_stats[i];
        const hy_resource* res = hy_prox_resource(w->prox, i);
        snprintf(r->name, sizeof r->name, "%s", res->name);
        r->modeled = res->modeled;
        r->busy_ms = 1e3 * ps->busy[i];
        r->transfer_ms = 1e3 * ps->transfer[i];
        r->traverse_jobs = ps->jobs[i][HY_JOB_TRAVERSE];
        r->leaf_jobs = ps->jobs[i][HY_JOB_LEAF];
        const hy_sched_model* m = hy_prox_model(w->prox);
        for (int k = 0; k < HY_JOB_KINDS; k++) r->proc_us[k] = 1e6 * m->device[i].cost[k].proc;
    }
}

HY_API hy_status hy_world_get_sched_stats(const hy_world* w, hy_sched_stats* out, hy_resource_stats* res,
                                          int32_t capacity, int32_t* count) {
    if (!w || !out || (capacity > 0 && !res))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_sched_stats: NULL argument");
    *out = w->sched_stats;
    int32_t n = w->sched_stats.resources;
    for (int32_t i = 0; i < n && i < capacity && i < 32; i++) res[i] = w->resource_stats[i];
    if (count) *count = n;
    return HY_OK;
}

/* Bonds of bodies the response struck harder than their bonds can pass on
 * break (hy_bonds_break_struck): the blows are the rigid pairs' contact
 * impulses of the response. */
static hy_status struck_bonds(hy_world* w, hy_step_stats* st) {
    const hy_collision_state* cs = w->collision;
    if (w->bonds.intact == 0 || !cs) return HY_OK;
    for (int64_t i = 0; i < cs->pair_impulse_count; i++) {
        const hy_pair_impulse* p = &cs->pair_impulse[i];
        if (!hy_bonds_blow(&w->bonds, w->object_count, p->a, p->b, p->impulse))
            return hy_fail(HY_ERR_NOMEM, "out of memory indexing %d bonds", w->bonds.count);
    }
    st->bonds_broken += hy_bonds_break_struck(&w->bonds);
    return HY_OK;
}

/* Each kind's end of the substep after the response. */
static void after_response(hy_world* w, double dt) {
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (o->ops->after_response) o->ops->after_response(o, dt);
    }
}

/* Forces and torques act over one step. */
static void clear_forces(hy_world* w) {
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object_state* st = w->objects[i].state;
        st->force = st->torque = v3(0, 0, 0);
    }
}

HY_API hy_status hy_world_step(hy_world* w, double time_step, int32_t substeps) {
    if (!w) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_step: world is NULL");
    if (!(time_step > 0.0) || !(time_step <= 1.0))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_step: dt must be in (0, 1] s, got %g", time_step);
    if (substeps < 1 || substeps > 64)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_step: substeps must be in [1, 64], got %d", substeps);
    hy_step_stats st;
    memset(&st, 0, sizeof st);
    if (w->prox) hy_prox_stats_reset(w->prox);
    if (w->prox) hy_prox_begin_step(w->prox, w->step_index + 1);
    double t_start = now_ms();
    double dt = time_step / substeps;
    hy_events_clear_step(w);
    for (int32_t sub = 0; sub < substeps; sub++) {
        double t0 = now_ms();
        hy_status s = hy_world_damp_resting(w, dt);
        if (!s) s = integrate(w, dt, &st);
        if (!s) s = check_finite(w);
        st.ms[HY_PHASE_INTEGRATE] += now_ms() - t0;
        if (s) return s;
        if (!w->def.collisions) w->last_contact_count = 0;
        if (w->def.collisions) {
            t0 = now_ms();
            double refit0 = st.ms[HY_PHASE_REFIT], trav0 = st.ms[HY_PHASE_TRAVERSE];
            w->last_contact_count = 0;
            s = hy_links_before_response(w);
            if (!s) s = respond(w, dt, &st);
            if (!s) s = hy_links_after_response(w, dt);
            double detect = (st.ms[HY_PHASE_REFIT] - refit0) + (st.ms[HY_PHASE_TRAVERSE] - trav0);
            st.ms[HY_PHASE_RESPONSE] += now_ms() - t0 - detect;
            if (!s) hy_cloth_contacts_record(w);
            if (!s) s = struck_bonds(w, &st);
            if (!s) after_response(w, dt);
            if (!s) s = check_finite(w);
            if (s) return s;
        }
        hy_solid_contacts_record(w); /* none when collisions are off */
        t0 = now_ms();
        commit(w);
        w->time += dt;
        hy_status s2 = hy_world_update_sleep(w, dt);
        st.ms[HY_PHASE_COMMIT] += now_ms() - t0;
        if (s2) return s2;
    }
    clear_forces(w);
    hy_status se = hy_events_finish_step(w);
    if (se) return se;
    w->step_index++;
    st.step_index = w->step_index;
    st.ms_total = now_ms() - t_start;
    w->stats = st;
    keep_sched_stats(w);
    return HY_OK;
}

HY_API hy_status hy_world_get_stats(const hy_world* w, hy_step_stats* out) {
    if (!w || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_stats: NULL argument");
    *out = w->stats;
    return HY_OK;
}
