/* The proximity framework's resources: device lists ("cpu,cuda:0,model:NAME")
 * parsed into resources with their profiles, and the framework's create,
 * destroy and settings (see proximity.h). */
#include "sched/proximity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sched/prox_internal.h"

/* ---- device lists */

static hy_status parse_int(const char* s, int* out) {
    char* end = NULL;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > 1023) return HY_ERR_INVALID_ARG;
    *out = (int)v;
    return HY_OK;
}

/* Calls fn for every resource of the list, each entry read through its
 * backend's table entry (sched/backend.h), each backend probed once.
 * An entry with a backend's bare name stands for every device it has
 * ("cuda": every GPU present), so with none it adds nothing: that is the
 * one fallback, said (the backend's status line) in note[cap] when note is
 * not NULL. A numbered device ("cuda:7") names one device: when it is not
 * there the list is refused, as any other entry naming nothing would be. */
typedef hy_status (*entry_fn)(void* ctx, hy_resource_kind kind, int device, const char* arg, const char* token);

static hy_status each_entry(const char* devices, entry_fn fn, void* ctx, char* note, size_t cap) {
    const char* list = devices && *devices ? devices : "cpu";
    char buf[1024];
    if (strlen(list) >= sizeof buf) return hy_fail(HY_ERR_INVALID_ARG, "device list longer than %zu characters", sizeof buf - 1);
    strcpy(buf, list);
    if (note && cap) note[0] = '\0';
    char* save = NULL;
    for (char* tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        const char* colon = strchr(tok, ':');
        size_t len = colon ? (size_t)(colon - tok) : strlen(tok);
        const hy_backend* be = hy_backend_find(tok, len);
        hy_resource_kind kind = be ? (hy_resource_kind)(be - hy_backend_get(HY_RESOURCE_CPU)) : HY_RESOURCE_CPU;
        hy_status s;
        if (be && be->entry == 0 && !colon) {
            s = fn(ctx, kind, 0, NULL, tok);
        } else if (be && be->entry == 1 && !colon) {
            int n = be->probe();
            if (n == 0 && note && cap) snprintf(note, cap, "%s", be->status());
            s = HY_OK;
            for (int d = 0; d < n && !s; d++) s = fn(ctx, kind, d, NULL, tok);
        } else if (be && be->entry == 1) {
            int d = 0;
            if (parse_int(colon + 1, &d))
                return hy_fail(HY_ERR_INVALID_ARG, "device list: '%s': expected %s:N with N a %s index", tok,
                               be->name, be->unit);
            int n = be->probe();
            if (d >= n)
                return hy_fail(HY_ERR_INVALID_ARG, "device list: '%s': no such %s (%d present; %s)", tok, be->unit,
                               n, be->status());
            s = fn(ctx, kind, d, NULL, tok);
        } else if (be && be->entry == 2 && colon && colon[1]) {
            s = fn(ctx, kind, 0, colon + 1, tok);
        } else {
            return hy_fail(HY_ERR_INVALID_ARG,
                           "device list: unknown entry '%s' (expected cpu, cuda, cuda:N or model:NAME)", tok);
        }
        if (s) return s;
    }
    return HY_OK;
}

/* A real resource's name, as profiles and the stats know it: "cpu",
 * "cuda:N". */
static void real_name(hy_resource_kind kind, int device, char* buf, size_t cap) {
    if (kind == HY_RESOURCE_CPU)
        snprintf(buf, cap, "cpu");
    else
        snprintf(buf, cap, "cuda:%d", device);
}

typedef struct needs_ctx {
    hy_clock clock;
    const hy_sched_model* profiles; /* model:NAME may name one of these */
    int count, real;
    int real_kind[HY_SCHED_MAX_RESOURCES], real_device[HY_SCHED_MAX_RESOURCES]; /* the first real ones */
} needs_ctx;

static const hy_device_profile* find_profile(const hy_sched_model* m, const char* name);

/* Counts resources and checks every model: entry loads. */
static hy_status count_entry(void* vctx, hy_resource_kind kind, int device, const char* arg, const char* token) {
    needs_ctx* c = vctx;
    c->count++;
    if (kind != HY_RESOURCE_MODEL) {
        /* a repeated real resource is refused here, the one place it is
         * checked: hy_prox_create reads the list with this first, and a
         * run calls it before anything (a calibration) is done for it */
        for (int i = 0; i < c->real && i < HY_SCHED_MAX_RESOURCES; i++)
            if (c->real_kind[i] == (int)kind && (kind == HY_RESOURCE_CPU || c->real_device[i] == device)) {
                if (kind == HY_RESOURCE_CPU) return hy_fail(HY_ERR_INVALID_ARG, "device list: 'cpu' listed twice");
                return hy_fail(HY_ERR_INVALID_ARG, "device list: 'cuda:%d' listed twice", device);
            }
        if (c->real < HY_SCHED_MAX_RESOURCES) {
            c->real_kind[c->real] = (int)kind;
            c->real_device[c->real] = device;
        }
        c->real++;
        return HY_OK;
    }
    if (find_profile(c->profiles, arg)) return HY_OK;
    hy_device_profile d;
    size_t n = strlen(arg);
    hy_status s = n > 5 && !strcmp(arg + n - 5, ".json") ? hy_device_profile_load(arg, &d)
                                                           : hy_device_profile_builtin(arg, &d);
    if (s) hy_error_prefix("device list: '%s': ", token);
    return s;
}

static int needs_profile(const char* devices, hy_clock clock, const hy_sched_model* profiles) {
    needs_ctx c;
    memset(&c, 0, sizeof c);
    c.clock = clock;
    c.profiles = profiles;
    if (each_entry(devices, count_entry, &c, NULL, 0)) return -1;
    if (c.real == 0) return 0;
    return c.count > 1 || clock == HY_CLOCK_VIRTUAL;
}

int hy_prox_needs_profile(const char* devices, hy_clock clock) { return needs_profile(devices, clock, NULL); }

typedef struct build_ctx {
    hy_prox* p;
    const hy_sched_model* profiles;
    int need_model;
} build_ctx;

/* A resource's profile from the calibrated set, by name. */
static const hy_device_profile* find_profile(const hy_sched_model* m, const char* name) {
    for (int i = 0; m && i < m->resources; i++)
        if (!strcmp(m->device[i].name, name)) return &m->device[i];
    return NULL;
}

int hy_prox_profile_missing(const char* devices, const hy_sched_model* profiles, char* name, size_t cap) {
    needs_ctx c;
    memset(&c, 0, sizeof c);
    if (each_entry(devices, count_entry, &c, NULL, 0)) return -1;
    for (int i = 0; i < c.real && i < HY_SCHED_MAX_RESOURCES; i++) {
        char want[64];
        real_name((hy_resource_kind)c.real_kind[i], c.real_device[i], want, sizeof want);
        if (!find_profile(profiles, want)) {
            if (name && cap) snprintf(name, cap, "%s", want);
            return 1;
        }
    }
    return 0;
}

static hy_status add_entry(void* vctx, hy_resource_kind kind, int device, const char* arg, const char* token) {
    build_ctx* c = vctx;
    hy_prox* p = c->p;
    if (p->R >= HY_SCHED_MAX_RESOURCES)
        return hy_fail(HY_ERR_INVALID_ARG, "device list: more than %d resources", HY_SCHED_MAX_RESOURCES);
    hy_resource* r = &p->res[p->R];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->device = device;
    hy_device_profile d;
    memset(&d, 0, sizeof d);
    if (kind == HY_RESOURCE_MODEL) {
        size_t n = strlen(arg);
        const hy_device_profile* given = find_profile(c->profiles, arg);
        hy_status s = given                                    ? (d = *given, HY_OK)
                      : n > 5 && !strcmp(arg + n - 5, ".json") ? hy_device_profile_load(arg, &d)
                                                               : hy_device_profile_builtin(arg, &d);
        if (s) {
            hy_error_prefix("device list: '%s': ", token);
            return s;
        }
        snprintf(r->name, sizeof r->name, "model:%s", d.name);
        r->modeled = 1;
    } else {
        real_name(kind, device, r->name, sizeof r->name);
        const hy_device_profile* prof = find_profile(c->profiles, r->name);
        if (prof) {
            d = *prof;
        } else if (c->need_model) {
            return hy_fail(HY_ERR_INVALID_ARG,
                           "resource '%s' has no calibrated profile (run `hyphys calibrate`); needed with more than "
                           "one resource or the virtual clock",
                           r->name);
        } else {
            snprintf(d.name, sizeof d.name, "%.47s", r->name);
            d.kind = kind == HY_RESOURCE_CPU ? HY_DEVICE_CPU : HY_DEVICE_GPU;
            d.cores = 1;
        }
        r->modeled = p->clock == HY_CLOCK_VIRTUAL;
    }
    const hy_backend* be = hy_backend_get(kind);
    hy_status s = be->init(r);
    if (s) return s;
    s = hy_sched_model_add(&p->model, &d);
    if (s) {
        if (be->deinit) be->deinit(r);
        return s;
    }
    p->calibrated[p->R] = d;
    p->R++;
    return HY_OK;
}

int hy_prox_pick_host(const hy_prox* p) {
    int first = -1;
    for (int i = 0; i < p->R; i++) {
        if (p->res[i].retired) continue;
        if (first < 0) first = i;
        if (p->res[i].kind == HY_RESOURCE_CPU ||
            (p->res[i].kind == HY_RESOURCE_MODEL && p->model.device[i].kind == HY_DEVICE_CPU))
            return i;
    }
    return first < 0 ? 0 : first;
}

/* "NAME@STEP" (hy_prox_config.fault): NAME one of p's resources, STEP >= 1,
 * and another resource left to take its jobs. */
static hy_status parse_fault(hy_prox* p, const char* spec) {
    const char* at = strrchr(spec, '@');
    char* end = NULL;
    errno = 0;
    long long step = at ? strtoll(at + 1, &end, 10) : 0;
    if (!at || at == spec || !at[1] || *end || errno || step < 1)
        return hy_fail(HY_ERR_INVALID_ARG, "fault '%s': expected DEVICE@STEP (a resource of the device list, a step >= 1)",
                       spec);
    size_t len = (size_t)(at - spec);
    for (int i = 0; i < p->R; i++)
        if (strlen(p->res[i].name) == len && !strncmp(p->res[i].name, spec, len)) {
            if (p->R < 2)
                return hy_fail(HY_ERR_INVALID_ARG, "fault '%s': %s is the only resource: none would be left to take its jobs",
                               spec, p->res[i].name);
            p->fault_resource = i;
            p->fault_step = step;
            return HY_OK;
        }
    char names[256];
    size_t n = 0;
    names[0] = '\0';
    for (int i = 0; i < p->R && n < sizeof names; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", p->res[i].name);
    return hy_fail(HY_ERR_INVALID_ARG, "fault '%s': no resource '%.*s' (the resources: %s)", spec, (int)len, spec, names);
}

hy_status hy_prox_create(const hy_prox_config* config, hy_prox** out) {
    if (!config || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_prox_create: NULL argument");
    *out = NULL;
    int need = needs_profile(config->devices, config->clock, config->profiles);
    if (need < 0) return HY_ERR_INVALID_ARG; /* the message is set */
    hy_prox* p = calloc(1, sizeof *p);
    if (!p) return hy_fail(HY_ERR_NOMEM, "out of memory for the proximity framework");
    p->clock = config->clock;
    p->options = config->options;
    hy_sched_model_init(&p->model);
    build_ctx c = {p, config->profiles, need};
    hy_status s = each_entry(config->devices, add_entry, &c, p->fallback, sizeof p->fallback);
    if (!s && p->R == 0) s = add_entry(&c, HY_RESOURCE_CPU, 0, NULL, "cpu");
    if (!s) s = hy_sched_policy_create(config->policy ? config->policy : "lp", &config->options, &p->policy);
    p->fault_resource = -1;
    for (int i = 0; i < p->R; i++) p->live[i] = i;
    if (!s && config->fault) s = parse_fault(p, config->fault);
    if (s) {
        hy_prox_destroy(p);
        return s;
    }
    p->host = hy_prox_pick_host(p);
    *out = p;
    return HY_OK;
}

void hy_prox_destroy(hy_prox* p) {
    if (!p) return;
    hy_prox_feed_stop(p);
    hy_prox_trace_close(p);
    for (int i = 0; i < p->R; i++) {
        const hy_backend* be = hy_backend_get(p->res[i].kind);
        if (be->deinit) be->deinit(&p->res[i]);
    }
    hy_sched_policy_destroy(p->policy);
    for (int i = 0; i < HY_SCHED_MAX_RESOURCES; i++) {
        for (int k = 0; k < HY_JOB_KINDS; k++) free(p->out[i][k].v);
        for (int j = 0; j < HY_SCHED_MAX_TYPES; j++) {
            free(p->in[i][j].v);
            free(p->fly[i][j].v);
        }
    }
    free(p);
}

int hy_prox_resource_count(const hy_prox* p) { return p->R; }
const hy_resource* hy_prox_resource(const hy_prox* p, int r) { return r >= 0 && r < p->R ? &p->res[r] : NULL; }
const hy_sched_model* hy_prox_model(const hy_prox* p) { return &p->model; }
const char* hy_prox_policy_name(const hy_prox* p) { return p->policy->cls->name; }
hy_clock hy_prox_clock(const hy_prox* p) { return p->clock; }
const char* hy_prox_fallback(const hy_prox* p) { return p->fallback; }
void hy_prox_begin_step(hy_prox* p, int64_t step) { p->step = step; }
int hy_prox_failures(const hy_prox* p) { return p->failures; }
const char* hy_prox_failure(const hy_prox* p) { return p->failure; }

void hy_prox_describe(const hy_prox* p, char* buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "policy %s, %s clock, resources:", p->policy->cls->name,
                                p->clock == HY_CLOCK_VIRTUAL ? "virtual" : "real");
    for (int i = 0; i < p->R && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s %s%s%s", i ? "," : "", p->res[i].name,
                              p->res[i].modeled ? " (modeled)" : "", p->res[i].retired ? " (failed)" : "");
}

hy_status hy_prox_set_policy(hy_prox* p, const char* name) {
    hy_sched_policy* np = NULL;
    hy_status s = hy_sched_policy_create(name, &p->options, &np);
    if (s) return s;
    hy_sched_policy_destroy(p->policy);
    p->policy = np;
    return HY_OK;
}

void hy_prox_stats_reset(hy_prox* p) { memset(&p->stats, 0, sizeof p->stats); }
const hy_prox_stats* hy_prox_stats_get(const hy_prox* p) { return &p->stats; }
