/* The backend table (sched/backend.h): cpu, model and cuda. */
#include "sched/backend.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "sched/cuda.h"

static int one(void) { return 1; }
static int any(void) { return -1; }
static const char* cpu_status(void) { return "cpu: the worker pool"; }
static const char* model_status(void) { return "model: modeled devices, computed by the worker pool"; }

static hy_status no_init(hy_resource* res) {
    (void)res;
    return HY_OK;
}

/* cpu and model: the kind's host function (a modeled device's jobs are
 * computed by the pool; only its time is the profile's). */
static hy_status host_run(const hy_resource* res, int r, const hy_job_kind_ops* k, void* ctx, hy_batch* b) {
    return k->run[HY_RESOURCE_CPU](ctx, r, res, b);
}

/* A GPU that answers: its name is asked for, which fails for a device that
 * is not there. */
static hy_status cuda_init(hy_resource* res) {
    char name[128];
    hy_status s = hy_cuda_device_name(res->device, name, sizeof name);
    if (s) hy_error_prefix("%s: ", res->name);
    return s;
}

/* The kind's GPU function; the host one where there is none, or where it
 * cannot take the batch (HY_ERR_UNSUPPORTED: its copies do not count). */
static hy_status cuda_run(const hy_resource* res, int r, const hy_job_kind_ops* k, void* ctx, hy_batch* b) {
    hy_status s = HY_ERR_UNSUPPORTED;
    if (k->run[HY_RESOURCE_CUDA]) s = k->run[HY_RESOURCE_CUDA](ctx, r, res, b);
    if (s != HY_ERR_UNSUPPORTED) return s;
    b->transfer = 0.0;
    b->made = 0;
    b->work = -1;
    b->bytes_up = b->bytes_down = 0;
    b->stage = NULL;
    return k->run[HY_RESOURCE_CPU](ctx, r, res, b);
}

/* A modeled device: the kind's own preparation where it runs in parts on
 * the device's thread (hy_job_kind_ops.device), else the host function. */
static hy_status model_run(const hy_resource* res, int r, const hy_job_kind_ops* k, void* ctx, hy_batch* b) {
    hy_status s = HY_ERR_UNSUPPORTED;
    if (k->device[HY_RESOURCE_MODEL] && k->run[HY_RESOURCE_MODEL]) s = k->run[HY_RESOURCE_MODEL](ctx, r, res, b);
    if (s != HY_ERR_UNSUPPORTED) return s;
    b->stage = NULL;
    return k->run[HY_RESOURCE_CPU](ctx, r, res, b);
}

static const hy_backend g_backends[HY_BACKEND_COUNT] = {
    [HY_RESOURCE_CPU] = {.name = "cpu", .unit = "worker pool", .entry = 0, .probe = one, .status = cpu_status,
                         .init = no_init, .run_batch = host_run, .fed = 0, .may_fail = 0},
    [HY_RESOURCE_MODEL] = {.name = "model", .unit = "modeled device", .entry = 2, .probe = any,
                           .status = model_status, .init = no_init, .run_batch = model_run, .fed = 1, .may_fail = 0},
    [HY_RESOURCE_CUDA] = {.name = "cuda", .unit = "GPU", .entry = 1, .probe = hy_cuda_device_count,
                          .status = hy_cuda_status, .init = cuda_init, .run_batch = cuda_run, .fed = 1, .may_fail = 1},
};

const hy_backend* hy_backend_get(hy_resource_kind kind) {
    return (int)kind >= 0 && kind < HY_BACKEND_COUNT ? &g_backends[kind] : NULL;
}

const hy_backend* hy_backend_find(const char* word, size_t len) {
    for (int i = 0; i < HY_BACKEND_COUNT; i++)
        if (strlen(g_backends[i].name) == len && !strncmp(g_backends[i].name, word, len)) return &g_backends[i];
    return NULL;
}
