/* The cuda backend's probe (sched/cuda.h): how many GPUs, which, and
 * whether this build's kernel images load on them. Compiled by nvcc; the
 * interface is C (extern "C"); nothing here aborts. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sched/cuda.h"

extern "C" {
#include "core/error.h"
}

/* Does nothing: probed for its attributes, which fail when this build has
 * no image or PTX the GPU can run (every .cu file is built for the same
 * architectures). */
__global__ void probe_kernel(void) {}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_count;
static char g_status[512];

/* Append to g_status without overflowing it. */
static void status_append(const char* s) {
    size_t len = strlen(g_status);
    snprintf(g_status + len, sizeof g_status - len, "%s", s);
}

/* Count GPUs once. A missing driver, no device or a kernel image that does
 * not load all mean "no GPU": the status line says which. */
static void probe(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        if (e == cudaSuccess) e = cudaErrorNoDevice;
        (void)cudaGetLastError(); /* not sticky, but leave nothing behind */
        snprintf(g_status, sizeof g_status, "cuda: no GPU present (%s): CPU only", cudaGetErrorName(e));
        g_count = 0;
        return;
    }
    int used = n < HY_CUDA_MAX_DEVICES ? n : HY_CUDA_MAX_DEVICES;
    snprintf(g_status, sizeof g_status, "cuda: %d GPU%s:", n, n == 1 ? "" : "s");
    for (int d = 0; d < used; d++) {
        cudaDeviceProp p;
        char item[320];
        e = cudaGetDeviceProperties(&p, d);
        if (e == cudaSuccess) {
            /* The kernels must have an image (or PTX) this GPU can run. */
            cudaFuncAttributes fa;
            e = cudaSetDevice(d);
            if (e == cudaSuccess) e = cudaFuncGetAttributes(&fa, probe_kernel);
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
