/* Expected-time model: profiles, their JSON form, problems and assignments. */
#include "sched/model.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json_text.h"

/* Share of ideal speed-up a CPU resource of several cores reaches on these
 * jobs; used to split an aggregate CPU profile into per-core resources. */
#define CPU_PARALLEL_EFFICIENCY 0.85

/* ---- built-in profiles
 * Constants in microseconds, after the devices of Kim et al. 2013 Tables 1
 * and 3; tests/test_sched.c checks that they load and round-trip as JSON. */
typedef struct builtin {
    const char* name;
    hy_device_kind kind;
    int cores;
    double us[HY_JOB_KINDS][4]; /* setup, proc, upload, download */
} builtin;

static const builtin g_builtins[] = {
    {"gtx285", HY_DEVICE_GPU, 240, {{40.0, 0.060, 0.012, 0.015}, {30.0, 0.080, 0.012, 0.015}}},
    {"gtx480", HY_DEVICE_GPU, 480, {{25.0, 0.029, 0.012, 0.015}, {20.0, 0.042, 0.012, 0.015}}},
    {"gtx580", HY_DEVICE_GPU, 512, {{25.0, 0.0245, 0.012, 0.015}, {20.0, 0.036, 0.012, 0.015}}},
    {"c2075", HY_DEVICE_GPU, 448, {{25.0, 0.039, 0.012, 0.015}, {20.0, 0.055, 0.012, 0.015}}},
    {"cpu-m1", HY_DEVICE_CPU, 4, {{10.0, 0.1176, 0.0, 0.0}, {10.0, 0.588, 0.0, 0.0}}},
    {"cpu-m2", HY_DEVICE_CPU, 12, {{15.0, 0.0353, 0.0, 0.0}, {15.0, 0.1765, 0.0, 0.0}}},
};
#define BUILTIN_COUNT (int)(sizeof g_builtins / sizeof g_builtins[0])

const char* const* hy_device_profile_builtin_names(void) {
    static const char* names[BUILTIN_COUNT + 1];
    if (!names[0])
        for (int i = 0; i < BUILTIN_COUNT; i++) names[i] = g_builtins[i].name;
    return names;
}

hy_status hy_device_profile_builtin(const char* name, hy_device_profile* out) {
    if (!name || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_device_profile_builtin: NULL argument");
    for (int b = 0; b < BUILTIN_COUNT; b++) {
        const builtin* s = &g_builtins[b];
        if (strcmp(s->name, name) != 0) continue;
        memset(out, 0, sizeof *out);
        snprintf(out->name, sizeof out->name, "%s", s->name);
        out->kind = s->kind;
        out->cores = s->cores;
        for (int c = 0; c < HY_JOB_KINDS; c++) {
            out->cost[c].setup = s->us[c][0] * 1e-6;
            out->cost[c].proc = s->us[c][1] * 1e-6;
            out->cost[c].upload = s->us[c][2] * 1e-6;
            out->cost[c].download = s->us[c][3] * 1e-6;
        }
        return HY_OK;
    }
    char list[256] = "";
    for (int b = 0; b < BUILTIN_COUNT; b++) {
        strncat(list, b ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, g_builtins[b].name, sizeof list - strlen(list) - 1);
    }
    return hy_fail(HY_ERR_INVALID_ARG, "unknown device profile '%s' (known: %s)", name, list);
}

hy_status hy_device_profile_core(const hy_device_profile* cpu, hy_device_profile* out) {
    if (!cpu || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_device_profile_core: NULL argument");
    if (cpu->kind != HY_DEVICE_CPU || cpu->cores < 1)
        return hy_fail(HY_ERR_INVALID_ARG, "device '%s' is not a CPU with cores >= 1", cpu->name);
    hy_device_profile core = *cpu;
    snprintf(core.name, sizeof core.name, "%.40s-core", cpu->name);
    core.cores = 1;
    /* An aggregate proc is core_proc / (cores · efficiency); one core alone
     * runs at its own speed, and its hand-off is a single worker's. */
    double scale = cpu->cores > 1 ? cpu->cores * CPU_PARALLEL_EFFICIENCY : 1.0;
    for (int c = 0; c < HY_JOB_KINDS; c++) {
        core.cost[c].proc = cpu->cost[c].proc * scale;
        core.cost[c].setup = cpu->cost[c].setup * 0.5;
    }
    *out = core;
    return HY_OK;
}

/* ---- JSON */

static const char* g_kind_names[HY_JOB_KINDS] = {"traverse", "leaf"};
static const char* g_cost_names[4] = {"setup_us", "proc_us", "upload_us", "download_us"};

static hy_status get_number(const cJSON* obj, const char* key, const char* where, const char* ctx, double* out) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return hy_fail(HY_ERR_PARSE, "%s: %s: missing field '%s'", where, ctx, key);
    if (!cJSON_IsNumber(v)) return hy_fail(HY_ERR_PARSE, "%s: %s.%s must be a number", where, ctx, key);
    double d = v->valuedouble;
    if (!isfinite(d) || d < 0)
        return hy_fail(HY_ERR_PARSE, "%s: %s.%s must be finite and >= 0, got %g", where, ctx, key, d);
    *out = d;
    return HY_OK;
}

hy_status hy_device_profile_from_json(const cJSON* json, const char* where, hy_device_profile* out) {
    if (!where) where = "profile";
    if (!json || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_device_profile_from_json: NULL argument");
    if (!cJSON_IsObject(json)) return hy_fail(HY_ERR_PARSE, "%s: a device profile must be a JSON object", where);
    hy_device_profile p;
    memset(&p, 0, sizeof p);
    /* unknown fields are errors: a typo must not silently fall back to 0 */
    for (const cJSON* it = json->child; it; it = it->next) {
        const char* k = it->string;
        if (strcmp(k, "name") && strcmp(k, "kind") && strcmp(k, "cores") && strcmp(k, "traverse") &&
            strcmp(k, "leaf") && strcmp(k, "source") && strcmp(k, "staged") && strcmp(k, "engage_us"))
            return hy_fail(HY_ERR_PARSE, "%s: unknown field '%s' in device profile", where, k);
    }
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(json, "name");
    if (!cJSON_IsString(name) || !name->valuestring[0] || strlen(name->valuestring) >= sizeof p.name)
        return hy_fail(HY_ERR_PARSE, "%s: 'name' must be a non-empty string of < %zu characters", where,
                       sizeof p.name);
    snprintf(p.name, sizeof p.name, "%s", name->valuestring);
    const cJSON* kind = cJSON_GetObjectItemCaseSensitive(json, "kind");
    if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "cpu"))
        p.kind = HY_DEVICE_CPU;
    else if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "gpu"))
        p.kind = HY_DEVICE_GPU;
    else
        return hy_fail(HY_ERR_PARSE, "%s: device '%s': 'kind' must be \"cpu\" or \"gpu\"", where, p.name);
    const cJSON* cores = cJSON_GetObjectItemCaseSensitive(json, "cores");
    if (!cJSON_IsNumber(cores) || cores->valuedouble < 1 || cores->valuedouble > 1e6 ||
        cores->valuedouble != floor(cores->valuedouble))
        return hy_fail(HY_ERR_PARSE, "%s: device '%s': 'cores' must be an integer >= 1", where, p.name);
    p.cores = (int)cores->valuedouble;
    const cJSON* staged = cJSON_GetObjectItemCaseSensitive(json, "staged");
    if (staged && !cJSON_IsBool(staged))
        return hy_fail(HY_ERR_PARSE, "%s: device '%s': 'staged' must be true or false", where, p.name);
    p.staged = cJSON_IsTrue(staged);
    if (cJSON_GetObjectItemCaseSensitive(json, "engage_us")) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "device '%s'", p.name);
        hy_status s = get_number(json, "engage_us", where, ctx, &p.engage);
        if (s) return s;
        p.engage *= 1e-6;
    }
    for (int c = 0; c < HY_JOB_KINDS; c++) {
        const cJSON* k = cJSON_GetObjectItemCaseSensitive(json, g_kind_names[c]);
        char ctx[96];
        snprintf(ctx, sizeof ctx, "device '%s'.%s", p.name, g_kind_names[c]);
        if (!cJSON_IsObject(k)) return hy_fail(HY_ERR_PARSE, "%s: %s must be an object", where, ctx);
        for (const cJSON* it = k->child; it; it = it->next) {
            int known = 0;
            for (int f = 0; f < 4; f++) known |= !strcmp(it->string, g_cost_names[f]);
            if (!known) return hy_fail(HY_ERR_PARSE, "%s: %s: unknown field '%s'", where, ctx, it->string);
        }
        double v[4];
        for (int f = 0; f < 4; f++) {
            hy_status s = get_number(k, g_cost_names[f], where, ctx, &v[f]);
            if (s) return s;
        }
        p.cost[c].setup = v[0] * 1e-6;
        p.cost[c].proc = v[1] * 1e-6;
        p.cost[c].upload = v[2] * 1e-6;
        p.cost[c].download = v[3] * 1e-6;
    }
    *out = p;
    return HY_OK;
}

cJSON* hy_device_profile_to_json(const hy_device_profile* p) {
    cJSON* o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "name", p->name);
    cJSON_AddStringToObject(o, "kind", p->kind == HY_DEVICE_GPU ? "gpu" : "cpu");
    cJSON_AddNumberToObject(o, "cores", p->cores);
    if (p->staged) cJSON_AddTrueToObject(o, "staged");
    if (p->engage > 0.0) cJSON_AddNumberToObject(o, "engage_us", p->engage * 1e6);
    for (int c = 0; c < HY_JOB_KINDS; c++) {
        cJSON* k = cJSON_AddObjectToObject(o, g_kind_names[c]);
        if (!k) break;
        const double v[4] = {p->cost[c].setup, p->cost[c].proc, p->cost[c].upload, p->cost[c].download};
        for (int f = 0; f < 4; f++) cJSON_AddNumberToObject(k, g_cost_names[f], v[f] * 1e6);
    }
    return o;
}

static hy_status read_json(const char* path, cJSON** out) {
    FILE* f = fopen(path, "rb");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open", path);
    char* buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > ((size_t)64 << 20)) {
                free(buf);
                fclose(f);
                return hy_fail(HY_ERR_PARSE, "%s: file too large for a profile", path);
            }
            char* nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return hy_fail(HY_ERR_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, 4096, f);
        len += got;
        if (got < 4096) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return hy_fail(HY_ERR_IO, "%s: read error", path);
    }
    buf[len] = '\0';
    const char* end = NULL;
    cJSON* j = cJSON_ParseWithOpts(buf, &end, 1);
    if (!j) {
        /* name the line of the first character cJSON could not take */
        int line, col;
        hy_json_line_col((const unsigned char*)buf, len, end ? (size_t)(end - buf) : len, &line, &col);
        free(buf);
        return hy_fail(HY_ERR_PARSE, "%s:%d: malformed JSON", path, line);
    }
    free(buf);
    *out = j;
    return HY_OK;
}

hy_status hy_device_profile_load(const char* path, hy_device_profile* out) {
    if (!path || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_device_profile_load: NULL argument");
    cJSON* j = NULL;
    hy_status s = read_json(path, &j);
    if (s) return s;
    const cJSON* dev = j;
    const cJSON* list = cJSON_GetObjectItemCaseSensitive(j, "devices");
    if (list) {
        if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != 1) {
            cJSON_Delete(j);
            return hy_fail(HY_ERR_PARSE, "%s: expected one device, found a 'devices' list", path);
        }
        dev = list->child;
    }
    s = hy_device_profile_from_json(dev, path, out);
    cJSON_Delete(j);
    return s;
}

/* ---- model */

void hy_sched_model_init(hy_sched_model* model) { memset(model, 0, sizeof *model); }

static hy_status check_profile(const hy_device_profile* d) {
    if (!isfinite(d->engage) || d->engage < 0)
        return hy_fail(HY_ERR_INVALID_ARG, "device '%s': engage_us must be finite and >= 0, got %g", d->name,
                       d->engage * 1e6);
    for (int c = 0; c < HY_JOB_KINDS; c++) {
        const double v[4] = {d->cost[c].setup, d->cost[c].proc, d->cost[c].upload, d->cost[c].download};
        for (int f = 0; f < 4; f++)
            if (!isfinite(v[f]) || v[f] < 0)
                return hy_fail(HY_ERR_INVALID_ARG, "device '%s': %s.%s must be finite and >= 0, got %g", d->name,
                               g_kind_names[c], g_cost_names[f], v[f] * 1e6);
    }
    return HY_OK;
}

void hy_sched_model_update(hy_sched_model* m) {
    int R = m->resources;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < 2 * R; j++) {
            int k = hy_job_type_producer(j);
            hy_job_kind c = hy_job_type_kind(j);
            double trans = k == i && !m->device[i].staged
                               ? 0.0
                               : m->device[k].cost[c].download + m->device[i].cost[c].upload;
            m->setup[i][j] = m->device[i].cost[c].setup;
            m->trans[i][j] = trans;
            double u = m->units[c] > 0 ? m->units[c] : 1.0;
            m->cost[i][j] = m->device[i].cost[c].proc * u + trans;
        }
}

double hy_sched_time_work(const hy_sched_model* m, int i, int j, int64_t n, double work) {
    if (n <= 0) return 0.0;
    hy_job_kind c = hy_job_type_kind(j);
    return m->setup[i][j] + m->trans[i][j] * (double)n + m->device[i].cost[c].proc * work;
}

hy_status hy_sched_model_add(hy_sched_model* model, const hy_device_profile* device) {
    if (!model || !device) return hy_fail(HY_ERR_INVALID_ARG, "hy_sched_model_add: NULL argument");
    if (model->resources >= HY_SCHED_MAX_RESOURCES)
        return hy_fail(HY_ERR_INVALID_ARG, "a model holds at most %d resources", HY_SCHED_MAX_RESOURCES);
    hy_status s = check_profile(device);
    if (s) return s;
    model->device[model->resources++] = *device;
    hy_sched_model_update(model);
    return HY_OK;
}

hy_status hy_sched_model_load(const char* path, hy_sched_model* model) {
    if (!path || !model) return hy_fail(HY_ERR_INVALID_ARG, "hy_sched_model_load: NULL argument");
    cJSON* j = NULL;
    hy_status s = read_json(path, &j);
    if (s) return s;
    hy_sched_model* tmp = malloc(sizeof *tmp);
    if (!tmp) {
        cJSON_Delete(j);
        return hy_fail(HY_ERR_NOMEM, "%s: out of memory", path);
    }
    hy_sched_model_init(tmp);
    const cJSON* list = cJSON_GetObjectItemCaseSensitive(j, "devices");
    if (list && !cJSON_IsArray(list)) {
        s = hy_fail(HY_ERR_PARSE, "%s: 'devices' must be an array", path);
    } else if (list) {
        int n = 0;
        for (const cJSON* it = list->child; it && !s; it = it->next, n++) {
            char where[600];
            snprintf(where, sizeof where, "%s: devices[%d]", path, n);
            hy_device_profile d;
            s = hy_device_profile_from_json(it, where, &d);
            if (!s) s = hy_sched_model_add(tmp, &d);
        }
        if (!s && n == 0) s = hy_fail(HY_ERR_PARSE, "%s: 'devices' is empty", path);
    } else {
        hy_device_profile d;
        s = hy_device_profile_from_json(j, path, &d);
        if (!s) s = hy_sched_model_add(tmp, &d);
    }
    if (!s) *model = *tmp;
    free(tmp);
    cJSON_Delete(j);
    return s;
}

hy_status hy_sched_model_save(const hy_sched_model* model, const char* path) {
    if (!model || !path) return hy_fail(HY_ERR_INVALID_ARG, "hy_sched_model_save: NULL argument");
    cJSON* root = cJSON_CreateObject();
    cJSON* list = root ? cJSON_AddArrayToObject(root, "devices") : NULL;
    if (!list) {
        cJSON_Delete(root);
        return hy_fail(HY_ERR_NOMEM, "%s: out of memory", path);
    }
    for (int i = 0; i < model->resources; i++) cJSON_AddItemToArray(list, hy_device_profile_to_json(&model->device[i]));
    char* text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return hy_fail(HY_ERR_NOMEM, "%s: out of memory", path);
    FILE* f = fopen(path, "wb");
    if (!f) {
        free(text);
        return hy_fail(HY_ERR_IO, "%s: cannot open for writing", path);
    }
    int ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    ok = (fclose(f) == 0) && ok;
    free(text);
    return ok ? HY_OK : hy_fail(HY_ERR_IO, "%s: write failed", path);
}

/* ---- problems and assignments */

void hy_sched_problem_init(hy_sched_problem* p, const hy_sched_model* model) {
    memset(p, 0, sizeof *p);
    p->model = model;
}

hy_status hy_sched_problem_check(const hy_sched_problem* p) {
    if (!p || !p->model) return hy_fail(HY_ERR_INVALID_ARG, "scheduling problem without a model");
    int R = p->model->resources;
    if (R < 1 || R > HY_SCHED_MAX_RESOURCES)
        return hy_fail(HY_ERR_INVALID_ARG, "model has %d resources, need 1..%d", R, HY_SCHED_MAX_RESOURCES);
    for (int j = 0; j < 2 * R; j++)
        if (p->jobs[j] < 0) return hy_fail(HY_ERR_INVALID_ARG, "jobs[%d] must be >= 0, got %lld", j, (long long)p->jobs[j]);
    for (int i = 0; i < R; i++)
        if (!isfinite(p->busy[i]) || p->busy[i] < 0)
            return hy_fail(HY_ERR_INVALID_ARG, "busy[%d] must be finite and >= 0, got %g", i, p->busy[i]);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < 2 * R; j++)
            if (p->open[i][j] > 1)
                return hy_fail(HY_ERR_INVALID_ARG, "open[%d][%d] must be 0 or 1, got %d", i, j, p->open[i][j]);
    for (int i = 0; i < R; i++)
        if (p->engaged[i] > 1)
            return hy_fail(HY_ERR_INVALID_ARG, "engaged[%d] must be 0 or 1, got %d", i, p->engaged[i]);
    if (p->next_round > 1) return hy_fail(HY_ERR_INVALID_ARG, "next_round must be 0 or 1, got %d", p->next_round);
    return HY_OK;
}

void hy_sched_assignment_clear(hy_sched_assignment* a) { memset(a, 0, sizeof *a); }

void hy_sched_counts_copy(hy_sched_assignment* dst, const hy_sched_assignment* src, int R) {
    for (int i = 0; i < R; i++) memcpy(dst->count[i], src->count[i], sizeof(int64_t) * (size_t)(2 * R));
}

double hy_sched_assigned_time(const hy_sched_problem* p, const hy_sched_assignment* a, int i, int j) {
    int64_t n = a->count[i][j];
    double t = hy_sched_time_launched(p->model, i, j, n, a->launch[i][j]);
    /* the first launch joins an open batch */
    return n > 0 && p->open[i][j] ? t - p->model->setup[i][j] : t;
}

double hy_sched_finish(const hy_sched_problem* p, const hy_sched_assignment* a, int i) {
    double t = p->busy[i];
    int used = 0;
    for (int j = 0; j < 2 * p->model->resources; j++)
        if (a->count[i][j] != 0) { /* 0 jobs take no time */
            t += hy_sched_assigned_time(p, a, i, j);
            used = 1;
        }
    return used ? t + hy_sched_engage(p, i) : t;
}

/* Move jobs of the types in mask (bit j) from GPU g to the CPU resource
 * that finishes them soonest, when it finishes before g does now; the jobs
 * moved (0 when none is worth it). */
static int64_t guard_move(const hy_sched_problem* p, hy_sched_assignment* a, int g, uint64_t mask) {
    int R = p->model->resources, J = 2 * R;
    double fg = hy_sched_finish(p, a, g);
    int best = -1;
    double fbest = fg;
    for (int c = 0; c < R; c++) {
        if (p->model->device[c].kind != HY_DEVICE_CPU) continue;
        int64_t keep[HY_SCHED_MAX_TYPES];
        for (int j = 0; j < J; j++) {
            keep[j] = a->count[c][j];
            if (mask >> j & 1u) a->count[c][j] += a->count[g][j];
        }
        double fc = hy_sched_finish(p, a, c);
        for (int j = 0; j < J; j++) a->count[c][j] = keep[j];
        if (fc < fbest) {
            fbest = fc;
            best = c;
        }
    }
    if (best < 0) return 0;
    int64_t moved = 0;
    for (int j = 0; j < J; j++) {
        if (!(mask >> j & 1u) || a->count[g][j] == 0) continue;
        if (a->count[best][j] == 0) a->launch[best][j] = 0;
        a->count[best][j] += a->count[g][j];
        moved += a->count[g][j];
        a->count[g][j] = 0;
        a->launch[g][j] = 0;
    }
    return moved;
}

int64_t hy_sched_guard_gpus(const hy_sched_problem* p, hy_sched_assignment* a) {
    int R = p->model->resources, J = 2 * R;
    int64_t moved = 0;
    for (int g = 0; g < R; g++) {
        if (p->model->device[g].kind != HY_DEVICE_GPU) continue;
        uint64_t all = 0;
        for (int j = 0; j < J; j++)
            if (a->count[g][j] > 0) all |= (uint64_t)1 << j;
        if (!all) continue;
        moved += guard_move(p, a, g, all);
        for (int j = 0; j < J; j++)
            if (a->count[g][j] > 0) moved += guard_move(p, a, g, (uint64_t)1 << j);
    }
    return moved;
}

double hy_sched_makespan(const hy_sched_problem* p, const hy_sched_assignment* a) {
    double L = 0;
    for (int i = 0; i < p->model->resources; i++) {
        double t = hy_sched_finish(p, a, i);
        if (t > L) L = t;
    }
    return L;
}

hy_status hy_sched_assignment_check(const hy_sched_problem* p, const hy_sched_assignment* a) {
    int R = p->model->resources;
    for (int j = 0; j < 2 * R; j++) {
        int64_t sum = 0;
        for (int i = 0; i < R; i++) {
            if (a->count[i][j] < 0)
                return hy_fail(HY_ERR_INTERNAL, "assignment count[%d][%d] = %lld < 0", i, j, (long long)a->count[i][j]);
            if (a->launch[i][j] < 0)
                return hy_fail(HY_ERR_INTERNAL, "assignment launch[%d][%d] = %lld < 0", i, j,
                               (long long)a->launch[i][j]);
            sum += a->count[i][j];
        }
        if (sum != p->jobs[j])
            return hy_fail(HY_ERR_INTERNAL, "type %d: %lld jobs assigned, %lld waiting", j, (long long)sum,
                           (long long)p->jobs[j]);
    }
    return HY_OK;
}

/* splitmix64: small, good enough, and the same on every platform */
static uint64_t next_u64(uint64_t* s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double next_unit(uint64_t* s) { return (double)(next_u64(s) >> 11) * (1.0 / 9007199254740992.0); }

void hy_sched_problem_random(hy_sched_problem* p, const hy_sched_model* model, uint64_t seed, int64_t min_jobs,
                             int64_t max_jobs) {
    hy_sched_problem_init(p, model);
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
    int R = model->resources;
    if (min_jobs < 1) min_jobs = 1;
    if (max_jobs < min_jobs) max_jobs = min_jobs;
    double lo = log((double)min_jobs), hi = log((double)max_jobs + 1.0);
    for (int j = 0; j < 2 * R; j++) {
        if (next_u64(&s) % 8 == 0) continue;
        int64_t n = (int64_t)exp(lo + (hi - lo) * next_unit(&s));
        p->jobs[j] = n < min_jobs ? min_jobs : n > max_jobs ? max_jobs : n;
    }
    /* T0: each type spread over all resources at their own rates, no setup */
    double T0 = 0;
    for (int j = 0; j < 2 * R; j++) {
        double rate = 0;
        for (int i = 0; i < R; i++) rate += model->cost[i][j] > 0 ? 1.0 / model->cost[i][j] : 1e12;
        T0 += (double)p->jobs[j] / rate;
    }
    int idle = (int)(next_u64(&s) % (uint64_t)R);
    for (int i = 0; i < R; i++) p->busy[i] = i == idle ? 0.0 : T0 * next_unit(&s);
}

hy_status hy_sched_model_machine(hy_sched_model* model, int resources, int hierarchical) {
    static const char* gpus[] = {"gtx580", "c2075", "gtx480", "gtx285"};
    int cpu_res = hierarchical ? 1 : 12;
    if (resources <= cpu_res || resources > HY_SCHED_MAX_RESOURCES)
        return hy_fail(HY_ERR_INVALID_ARG, "%s machine needs %d..%d resources, got %d",
                       hierarchical ? "hierarchical" : "flat", cpu_res + 1, HY_SCHED_MAX_RESOURCES, resources);
    hy_sched_model m;
    hy_sched_model_init(&m);
    hy_device_profile cpu, d;
    hy_status s = hy_device_profile_builtin("cpu-m2", &cpu);
    if (s) return s;
    if (hierarchical) {
        s = hy_sched_model_add(&m, &cpu);
    } else {
        s = hy_device_profile_core(&cpu, &d);
        for (int c = 0; c < 12 && !s; c++) {
            snprintf(d.name, sizeof d.name, "cpu-m2-core%d", c);
            s = hy_sched_model_add(&m, &d);
        }
    }
    for (int g = 0; g < resources - cpu_res && !s; g++) {
        s = hy_device_profile_builtin(gpus[g % 4], &d);
        if (!s) s = hy_sched_model_add(&m, &d);
    }
    if (!s) *model = m;
    return s;
}
