/* The LEAF kernel (collision/kernels.h): one thread per job, evaluating
 * hy_leaf_eval (collision/leaf.h), the function the CPU step runs.
 *
 * Compiled by nvcc as CUDA C++ with --fmad=false (no contraction, like the
 * C code's -ffp-contract=off), so it computes on the device exactly what
 * the CPU computes. The interface is C (extern "C"); errors become hy_status
 * with a message (hy_fail); nothing here aborts.
 *
 * Memory: per device, one job buffer and two result buffers, kept between
 * calls and grown on demand (never shrunk). A batch larger than
 * MAX_LAUNCH_JOBS runs as several launches through the same buffers, so
 * device memory stays bounded whatever n is. Each thread's search heap
 * (collision/leaf.h, ~14 KB) lives in local memory; the per-thread stack
 * limit is raised to the kernel's frame if needed. */
#include <string.h>

#include "collision/kernels.h"
#include "collision/kernels_cuda.cuh"
#include "collision/leaf.h"

/* Jobs per launch: 1M jobs are 208 MB of input, enough to fill any GPU
 * while keeping the buffers bounded. */
#define MAX_LAUNCH_JOBS ((int64_t)1 << 20)

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

/* One thread per job by reference: its points read from the positions the
 * device holds, then the same evaluation. */
__global__ void __launch_bounds__(BLOCK_THREADS)
    leaf_ref_kernel(const hy_leaf_ref* __restrict__ refs, int64_t n, const double* __restrict__ X0,
                    const double* __restrict__ X1, hy_ccd_options opts, unsigned char* __restrict__ hit,
                    double* __restrict__ toi) {
    int64_t i = (int64_t)blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i >= n) return;
    hy_leaf_ref r = refs[i];
    double t = 1.0;
    int h = hy_leaf_eval_ref(&r, X0, X1, &opts, &t);
    hit[i] = (unsigned char)h;
    toi[i] = t;
}

typedef struct leaf_device {
    kernel_lane lane;
    hy_leaf_job* jobs; /* device buffers of cap jobs */
    unsigned char* hit;
    double* toi;
    int64_t cap;
    /* jobs by reference: ref_cap references; the step's positions */
    hy_leaf_ref* refs;
    int64_t ref_cap;
    resident_x x;
} leaf_device;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static leaf_device g_dev[HY_CUDA_MAX_DEVICES];

static void init_locks(void) {
    for (int d = 0; d < HY_CUDA_MAX_DEVICES; d++) pthread_mutex_init(&g_dev[d].lane.lock, NULL);
}

/* Device buffers for at least want jobs (grown, never shrunk). */
static hy_status device_reserve(int device, leaf_device* ds, int64_t want) {
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

/* Launch by launch (MAX_LAUNCH_JOBS jobs at most): jobs up into dev, the
 * kernel (launch(m, blocks) over m jobs), the answers down; the copies'
 * and launches' seconds and the bytes moved added. J is the job's type. */
template <typename J, typename L>
static hy_status launches(int device, leaf_device* ds, const J* jobs, J* dev, int64_t n, L launch, unsigned char* hit,
                          double* toi, double* sec_transfer, double* sec_kernel, int64_t* up, int64_t* down) {
    for (int64_t begin = 0; begin < n; begin += MAX_LAUNCH_JOBS) {
        int64_t m = n - begin < MAX_LAUNCH_JOBS ? n - begin : MAX_LAUNCH_JOBS;
        double t0 = now_s();
        CK(cudaMemcpyAsync(dev, jobs + begin, sizeof(J) * (size_t)m, cudaMemcpyHostToDevice, ds->lane.stream));
        CK(cudaStreamSynchronize(ds->lane.stream));
        double t1 = now_s();
        launch(m, (unsigned int)((m + BLOCK_THREADS - 1) / BLOCK_THREADS));
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(ds->lane.stream));
        double t2 = now_s();
        CK(cudaMemcpyAsync(hit + begin, ds->hit, (size_t)m, cudaMemcpyDeviceToHost, ds->lane.stream));
        CK(cudaMemcpyAsync(toi + begin, ds->toi, sizeof(double) * (size_t)m, cudaMemcpyDeviceToHost, ds->lane.stream));
        CK(cudaStreamSynchronize(ds->lane.stream));
        double t3 = now_s();
        *sec_transfer += (t1 - t0) + (t3 - t2);
        *sec_kernel += t2 - t1;
        *up += (int64_t)(sizeof(J) * (size_t)m);
        *down += (int64_t)((1 + sizeof(double)) * (size_t)m);
    }
    return HY_OK;
}

/* The batch with the device's lock held and the device current. */
static hy_status run_batch(int device, leaf_device* ds, const hy_leaf_job* jobs, int64_t n,
                           const hy_ccd_options* opts, unsigned char* hit, double* toi, double* sec_transfer,
                           double* sec_kernel) {
    hy_status s = lane_ready(device, &ds->lane, (const void*)leaf_kernel);
    if (s) return s;
    s = device_reserve(device, ds, n < MAX_LAUNCH_JOBS ? n : MAX_LAUNCH_JOBS);
    if (s) return s;
    int64_t up = 0, down = 0;
    hy_ccd_options o = *opts;
    return launches(
        device, ds, jobs, ds->jobs, n,
        [&](int64_t m, unsigned int blocks) {
            leaf_kernel<<<blocks, BLOCK_THREADS, 0, ds->lane.stream>>>(ds->jobs, m, o, ds->hit, ds->toi);
        },
        hit, toi, sec_transfer, sec_kernel, &up, &down);
}

extern "C" hy_status hy_cuda_leaf_batch(int device, const hy_leaf_job* jobs, int64_t n, const hy_ccd_options* opts,
                                        unsigned char* hit, double* toi, double* seconds_transfer,
                                        double* seconds_kernel) {
    double st = 0.0, sk = 0.0;
    if (seconds_transfer) *seconds_transfer = 0.0;
    if (seconds_kernel) *seconds_kernel = 0.0;
    hy_status s = device_check(device);
    if (s) return s;
    if (n < 0) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf batch of %lld jobs", device, (long long)n);
    if (!opts) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf batch without CCD options", device);
    if (!hy_leaf_options_device_ok(opts))
        return hy_fail(HY_ERR_UNSUPPORTED,
                       "cuda:%d: CCD options need refine_boxes == 0 (no long double on the GPU) and max_boxes <= %d, "
                       "got refine_boxes %d, max_boxes %d",
                       device, HY_LEAF_MAX_BOXES, opts->refine_boxes, opts->max_boxes);
    if (n == 0) return HY_OK;
    if (!jobs || !hit || !toi) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf batch with NULL arrays", device);
    pthread_once(&g_once, init_locks);
    leaf_device* ds = &g_dev[device];
    s = lane_enter(device, &ds->lane);
    if (!s) s = run_batch(device, ds, jobs, n, opts, hit, toi, &st, &sk);
    pthread_mutex_unlock(&ds->lane.lock);
    if (seconds_transfer) *seconds_transfer = st;
    if (seconds_kernel) *seconds_kernel = sk;
    return s;
}


/* Jobs by reference with the device's lock held and the device current:
 * the positions up when stale, then per launch the references up, the
 * answers down. */
static hy_status run_resident(int device, leaf_device* ds, uint64_t version, const double* X0, const double* X1,
                              int32_t nv, const hy_leaf_ref* refs, int64_t n, const hy_ccd_options* opts,
                              unsigned char* hit, double* toi, double* sec_transfer, int64_t* up, int64_t* down) {
    hy_status s = lane_ready(device, &ds->lane, (const void*)leaf_ref_kernel);
    if (s) return s;
    s = device_reserve(device, ds, n < MAX_LAUNCH_JOBS ? n : MAX_LAUNCH_JOBS);
    if (s) return s;
    int64_t want = n < MAX_LAUNCH_JOBS ? n : MAX_LAUNCH_JOBS;
    if (ds->ref_cap < want) {
        cudaFree(ds->refs);
        ds->refs = NULL;
        ds->ref_cap = 0;
        CK(cudaMalloc((void**)&ds->refs, sizeof(hy_leaf_ref) * (size_t)want));
        ds->ref_cap = want;
    }
    double t0 = now_s();
    s = resident_x_sync(device, ds->lane.stream, &ds->x, version, X0, X1, nv, up);
    if (s) return s;
    *sec_transfer += now_s() - t0;
    double kernel = 0.0;
    hy_ccd_options o = *opts;
    const double* X = ds->x.X;
    return launches(
        device, ds, refs, ds->refs, n,
        [&](int64_t m, unsigned int blocks) {
            leaf_ref_kernel<<<blocks, BLOCK_THREADS, 0, ds->lane.stream>>>(ds->refs, m, X, X + 3 * (int64_t)nv, o,
                                                                          ds->hit, ds->toi);
        },
        hit, toi, sec_transfer, &kernel, up, down);
}

extern "C" hy_status hy_cuda_leaf_resident(int device, uint64_t version, const double* X0, const double* X1,
                                           int32_t nv, const hy_leaf_ref* refs, int64_t n, const hy_ccd_options* opts,
                                           unsigned char* hit, double* toi, double* seconds_transfer,
                                           int64_t* bytes_up, int64_t* bytes_down) {
    double st = 0.0;
    int64_t up = 0, down = 0;
    if (seconds_transfer) *seconds_transfer = 0.0;
    if (bytes_up) *bytes_up = 0;
    if (bytes_down) *bytes_down = 0;
    hy_status s = device_check(device);
    if (s) return s;
    if (n < 0 || nv < 0)
        return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf batch of %lld jobs over %d vertices", device, (long long)n, nv);
    if (!opts) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf batch without CCD options", device);
    if (!hy_leaf_options_device_ok(opts))
        return hy_fail(HY_ERR_UNSUPPORTED, "cuda:%d: CCD options need refine_boxes == 0 and max_boxes <= %d", device,
                       HY_LEAF_MAX_BOXES);
    if (n == 0) return HY_OK;
    if (!refs || !hit || !toi || !X0 || !X1)
        return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf batch with NULL arrays", device);
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < 4; j++)
            if (refs[i].v[j] < 0 || refs[i].v[j] >= nv)
                return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: leaf job %lld refers to vertex %d of %d", device,
                               (long long)i, refs[i].v[j], nv);
    pthread_once(&g_once, init_locks);
    leaf_device* ds = &g_dev[device];
    s = lane_enter(device, &ds->lane);
    if (!s) s = run_resident(device, ds, version, X0, X1, nv, refs, n, opts, hit, toi, &st, &up, &down);
    if (s) ds->x.version = 0; /* what reached the device is unknown */
    pthread_mutex_unlock(&ds->lane.lock);
    if (seconds_transfer) *seconds_transfer = st;
    if (bytes_up) *bytes_up = up;
    if (bytes_down) *bytes_down = down;
    return s;
}
