/* The CUDA backend (sched/cuda.h): device probe and the LEAF kernel.
 *
 * Compiled by nvcc as CUDA C++ with --fmad=false (no contraction, like the
 * C code's -ffp-contract=off), so hy_leaf_eval computes on the device
 * exactly what it computes on the CPU. The interface is C (extern "C"),
 * errors become hy_status with a message (hy_fail); nothing here aborts.
 *
 * Memory: per device, one job buffer and two result buffers, kept between
 * calls and grown on demand (never shrunk). A batch larger than
 * MAX_LAUNCH_JOBS runs as several launches through the same buffers, so
 * device memory stays bounded whatever n is. Each thread's search heap
 * (collision/leaf.h, ~14 KB) lives in local memory; its frame size is read
 * from the kernel once and the per-thread stack limit raised to it if
 * needed. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "collision/leaf.h"
#include "sched/cuda.h"

extern "C" {
#include "engine/error.h"
}

/* GPUs handled (more are left out, and the status line says so). */
#define MAX_DEVICES 16
/* Jobs per launch: 1M jobs are 208 MB of input, enough to fill any GPU
 * while keeping the buffers bounded. */
#define MAX_LAUNCH_JOBS ((int64_t)1 << 20)
/* Threads per block: small blocks, as threads diverge (most jobs end at an
 * early-out, a few search hundreds of boxes). */
#define BLOCK_THREADS 128

static_assert(sizeof(hy_leaf_job) == 208, "hy_leaf_job layout is shared with the host");

/* One thread per job: load it into registers/local memory, evaluate with
 * the CPU's arithmetic, store the two results. */
__global__ void __launch_bounds__(BLOCK_THREADS)
    leaf_kernel(const hy_leaf_job* __restrict__ jobs, int64_t n, hy_ccd_options opts, unsigned char* __restrict__ hit,
                double* __restrict__ toi) {
    int64_t i = (int64_t)blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i >= n) return;
    hy_leaf_job j = jobs[i];
    double t = 1.0;
    int r = hy_leaf_eval(j.is_vf, j.x, j.min_distance, &opts, &t);
    hit[i] = (unsigned char)r;
    toi[i] = t;
}

typedef struct device_state {
    pthread_mutex_t lock; /* one batch at a time per device */
    int ready;            /* stream created, stack limit checked */
    cudaStream_t stream;
    hy_leaf_job* jobs; /* device buffers of cap jobs */
    unsigned char* hit;
    double* toi;
    int64_t cap;
} device_state;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_count;
static char g_status[512];
static device_state g_dev[MAX_DEVICES];

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Append to g_status without overflowing it. */
static void status_append(const char* s) {
    size_t len = strlen(g_status);
    snprintf(g_status + len, sizeof g_status - len, "%s", s);
}

/* Count GPUs once. A missing driver, no device or a kernel image that does
 * not load all mean "no GPU": the status line says which. */
static void probe(void) {
    for (int d = 0; d < MAX_DEVICES; d++) pthread_mutex_init(&g_dev[d].lock, NULL);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        if (e == cudaSuccess) e = cudaErrorNoDevice;
        (void)cudaGetLastError(); /* not sticky, but leave nothing behind */
        snprintf(g_status, sizeof g_status, "cuda: no GPU present (%s): CPU only", cudaGetErrorName(e));
        g_count = 0;
        return;
    }
    int used = n < MAX_DEVICES ? n : MAX_DEVICES;
    snprintf(g_status, sizeof g_status, "cuda: %d GPU%s:", n, n == 1 ? "" : "s");
    for (int d = 0; d < used; d++) {
        cudaDeviceProp p;
        char item[320];
        e = cudaGetDeviceProperties(&p, d);
        if (e == cudaSuccess) {
            /* The kernel must have an image (or PTX) this GPU can run. */
            cudaFuncAttributes fa;
            e = cudaSetDevice(d);
            if (e == cudaSuccess) e = cudaFuncGetAttributes(&fa, leaf_kernel);
        }
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(g_status, sizeof g_status, "cuda: %d GPU%s, but GPU %d is unusable (%s: %s): CPU only", n,
                     n == 1 ? "" : "s", d, cudaGetErrorName(e), cudaGetErrorString(e));
            g_count = 0;
            return;
        }
        snprintf(item, sizeof item, "%s %s (sm_%d%d, %.0f GiB)", d ? "," : "", p.name, p.major, p.minor,
                 (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
        status_append(item);
    }
    (void)cudaSetDevice(0); /* leave the probing thread on the default device */
    if (used < n) {
        char item[64];
        snprintf(item, sizeof item, "; only the first %d used", used);
        status_append(item);
    }
    g_count = used;
}

extern "C" int hy_cuda_device_count(void) {
    pthread_once(&g_once, probe);
    return g_count;
}

extern "C" const char* hy_cuda_status(void) {
    pthread_once(&g_once, probe);
    return g_status;
}

extern "C" hy_status hy_cuda_device_name(int device, char* buf, size_t cap) {
    if (!buf || cap == 0) return hy_fail(HY_ERR_INVALID_ARG, "cuda device name: NULL or empty buffer");
    buf[0] = '\0';
    int n = hy_cuda_device_count();
    if (device < 0 || device >= n) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: no such GPU (%s)", device, g_status);
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess)
        return hy_fail(HY_ERR_INTERNAL, "cuda:%d: cudaGetDeviceProperties failed: %s (%s)", device, cudaGetErrorName(e),
                       cudaGetErrorString(e));
    snprintf(buf, cap, "%s", p.name);
    return HY_OK;
}

/* A failed CUDA call as a status naming the device, the call and the
 * error; out-of-memory is HY_ERR_NOMEM, the rest HY_ERR_INTERNAL. */
static hy_status cuda_fail(int device, const char* call, cudaError_t e) {
    hy_status s = e == cudaErrorMemoryAllocation ? HY_ERR_NOMEM : HY_ERR_INTERNAL;
    return hy_fail(s, "cuda:%d: %s failed: %s (%s)", device, call, cudaGetErrorName(e), cudaGetErrorString(e));
}

#define CK(call)                                      \
    do {                                              \
        cudaError_t ck_e_ = (call);                   \
        if (ck_e_ != cudaSuccess) {                   \
            (void)cudaGetLastError();                 \
            return cuda_fail(device, #call, ck_e_);   \
        }                                             \
    } while (0)

/* First use of a device by a batch: its stream, and a per-thread stack
 * large enough for the kernel's local frame (the search heap). */
static hy_status device_init(int device, device_state* ds) {
    if (ds->ready) return HY_OK;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, leaf_kernel));
    size_t stack = 0;
    CK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
    size_t need = fa.localSizeBytes + 1024;
    if (stack < need) CK(cudaDeviceSetLimit(cudaLimitStackSize, need));
    CK(cudaStreamCreateWithFlags(&ds->stream, cudaStreamNonBlocking));
    ds->ready = 1;
    return HY_OK;
}

/* Device buffers for at least want jobs (grown, never shrunk). */
static hy_status device_reserve(int device, device_state* ds, int64_t want) {
    if (ds->cap >= want) return HY_OK;
    cudaFree(ds->jobs);
    cudaFree(ds->hit);
    cudaFree(ds->toi);
    ds->jobs = NULL;
    ds->hit = NULL;
    ds->toi = NULL;
    ds->cap = 0;
    CK(cudaMalloc((void**)&ds->jobs, sizeof(hy_leaf_job) * (size_t)want));
    CK(cudaMalloc((void**)&ds->hit, (size_t)want));
    CK(cudaMalloc((void**)&ds->toi, sizeof(double) * (size_t)want));
    ds->cap = want;
    return HY_OK;
}

/* The batch with the device's lock held and the device current. */
static hy_status run_batch(int device, device_state* ds, const hy_leaf_job* jobs, int64_t n,
                           const hy_ccd_options* opts, unsigned char* hit, double* toi, double* sec_transfer,
                           double* sec_kernel) {
    hy_status s = device_init(device, ds);
    if (s) return s;
    s = device_reserve(device, ds, n < MAX_LAUNCH_JOBS ? n : MAX_LAUNCH_JOBS);
    if (s) return s;
    for (int64_t begin = 0; begin < n; begin += MAX_LAUNCH_JOBS) {
        int64_t m = n - begin < MAX_LAUNCH_JOBS ? n - begin : MAX_LAUNCH_JOBS;
        double t0 = now_s();
        CK(cudaMemcpyAsync(ds->jobs, jobs + begin, sizeof(hy_leaf_job) * (size_t)m, cudaMemcpyHostToDevice,
                           ds->stream));
        CK(cudaStreamSynchronize(ds->stream));
        double t1 = now_s();
        unsigned int blocks = (unsigned int)((m + BLOCK_THREADS - 1) / BLOCK_THREADS);
        leaf_kernel<<<blocks, BLOCK_THREADS, 0, ds->stream>>>(ds->jobs, m, *opts, ds->hit, ds->toi);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(ds->stream));
        double t2 = now_s();
        CK(cudaMemcpyAsync(hit + begin, ds->hit, (size_t)m, cudaMemcpyDeviceToHost, ds->stream));
        CK(cudaMemcpyAsync(toi + begin, ds->toi, sizeof(double) * (size_t)m, cudaMemcpyDeviceToHost, ds->stream));
        CK(cudaStreamSynchronize(ds->stream));
        double t3 = now_s();
        *sec_transfer += (t1 - t0) + (t3 - t2);
        *sec_kernel += t2 - t1;
    }
    return HY_OK;
}

extern "C" hy_status hy_cuda_leaf_batch(int device, const hy_leaf_job* jobs, int64_t n, const hy_ccd_options* opts,
                                        unsigned char* hit, double* toi, double* seconds_transfer,
                                        double* seconds_kernel) {
    double st = 0.0, sk = 0.0;
    if (seconds_transfer) *seconds_transfer = 0.0;
    if (seconds_kernel) *seconds_kernel = 0.0;
    int count = hy_cuda_device_count();
    if (device < 0 || device >= count)
        return hy_fail(count ? HY_ERR_INVALID_ARG : HY_ERR_UNSUPPORTED, "cuda:%d: no such GPU (%s)", device, g_status);
    if (n < 0) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf batch of %lld jobs", device, (long long)n);
    if (!opts) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf batch without CCD options", device);
    if (!hy_leaf_options_device_ok(opts))
        return hy_fail(HY_ERR_UNSUPPORTED,
                       "cuda:%d: CCD options need refine_boxes == 0 (no long double on the GPU) and max_boxes <= %d, "
                       "got refine_boxes %d, max_boxes %d",
                       device, HY_LEAF_MAX_BOXES, opts->refine_boxes, opts->max_boxes);
    if (n == 0) return HY_OK;
    if (!jobs || !hit || !toi) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf batch with NULL arrays", device);
    device_state* ds = &g_dev[device];
    pthread_mutex_lock(&ds->lock);
    hy_status s;
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        s = cuda_fail(device, "cudaSetDevice", e);
    else
        s = run_batch(device, ds, jobs, n, opts, hit, toi, &st, &sk);
    pthread_mutex_unlock(&ds->lock);
    if (seconds_transfer) *seconds_transfer = st;
    if (seconds_kernel) *seconds_kernel = sk;
    return s;
}
