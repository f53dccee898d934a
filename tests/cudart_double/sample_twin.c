/* The C twin of intercept/sample.cu: the same program written as nvcc's
 * generated host code is (a constructor registers the module and its
 * kernels; a launch pushes its configuration, calls the kernel's host stub,
 * which pops it and launches by kernel handle), so that the interceptor is
 * tested against the CUDA runtime double where nvcc is absent, and under the
 * sanitizers. It prints what sample.cu prints.
 *
 * usage: sample_twin [cuda13|cuda13_ptsz|api|api_ptsz|policy|threads|bad]
 *   the launch entry point the stubs use: __cudaLaunchKernel (nvcc 12.x/13),
 *   its per-thread-stream form, cudaLaunchKernel with the stub (the API, and
 *   older nvcc), or its per-thread form. `policy` runs the cuda13 path with
 *   a placement policy of its own given to the interceptor through its
 *   control API (launch k on device count-1 - k mod count). `threads` runs
 *   the sample in two threads at once, each on its own blocks. `bad` runs one
 *   launch on device 1 with device 0's pointers, which the double must
 *   report. */
#include "intercept/cuda_abi.h"
#include "intercept/intercept.h"
#include "intercept/sample_report.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the runtime API, as cuda_runtime_api.h and crt/host_runtime.h declare it */
hy_cuda_error cudaRuntimeGetVersion(int*);
hy_cuda_error cudaGetDeviceCount(int*);
hy_cuda_error cudaSetDevice(int);
hy_cuda_error cudaGetDevice(int*);
hy_cuda_error cudaMalloc(void**, size_t);
hy_cuda_error cudaFree(void*);
hy_cuda_error cudaMemcpy(void*, const void*, size_t, int);
hy_cuda_error cudaMemset(void*, int, size_t);
hy_cuda_error cudaStreamCreate(hy_cuda_stream*);
hy_cuda_error cudaStreamDestroy(hy_cuda_stream);
hy_cuda_error cudaDeviceSynchronize(void);
hy_cuda_error cudaGetLastError(void);
hy_cuda_error cudaLaunchKernel(const void*, hy_dim3, hy_dim3, void**, size_t, hy_cuda_stream);
hy_cuda_error cudaLaunchKernel_ptsz(const void*, hy_dim3, hy_dim3, void**, size_t, hy_cuda_stream);
void** __cudaRegisterFatBinary(void*);
void __cudaRegisterFatBinaryEnd(void**);
void __cudaUnregisterFatBinary(void**);
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
unsigned __cudaPushCallConfiguration(hy_dim3, hy_dim3, size_t, hy_cuda_stream);
hy_cuda_error __cudaPopCallConfiguration(hy_dim3*, hy_dim3*, size_t*, void*);
hy_cuda_error __cudaGetKernel(hy_cuda_kernel*, const void*);
hy_cuda_error __cudaLaunchKernel(hy_cuda_kernel, hy_dim3, hy_dim3, void**, size_t, hy_cuda_stream);
hy_cuda_error __cudaLaunchKernel_ptsz(hy_cuda_kernel, hy_dim3, hy_dim3, void**, size_t, hy_cuda_stream);

enum { CUDA13, CUDA13_PTSZ, API, API_PTSZ };
static int entry = CUDA13;

/* Each kernel's handle, looked up once, after registration (nvcc's stubs do
 * it in a thread-safe static initialiser at the first launch). */
static hy_cuda_kernel axpy_handle, scale_handle, fill_handle;

/* The body of every host stub: take the configuration the launch pushed and
 * launch through the chosen entry point. */
static void stub_launch(const void* stub, hy_cuda_kernel handle, void** args) {
    hy_dim3 grid, block;
    size_t shared;
    hy_cuda_stream stream;
    if (__cudaPopCallConfiguration(&grid, &block, &shared, &stream) != 0) return;
    switch (entry) {
        case CUDA13: __cudaLaunchKernel(handle, grid, block, args, shared, stream); break;
        case CUDA13_PTSZ: __cudaLaunchKernel_ptsz(handle, grid, block, args, shared, stream); break;
        case API: cudaLaunchKernel(stub, grid, block, args, shared, stream); break;
        default: cudaLaunchKernel_ptsz(stub, grid, block, args, shared, stream); break;
    }
}

static void sample_axpy(float a, const float* x, float* y, int n) {
    void* args[] = {&a, &x, &y, &n};
    stub_launch((const void*)sample_axpy, axpy_handle, args);
}

static void sample_scale(float* y, float s, int n) {
    void* args[] = {&y, &s, &n};
    stub_launch((const void*)sample_scale, scale_handle, args);
}

static void sample_fill(float* z, float v, int n) {
    void* args[] = {&z, &v, &n};
    stub_launch((const void*)sample_fill, fill_handle, args);
}

/* kernel<<<grid, block, 0, stream>>>(...): push, and call the stub when the
 * push succeeded */
#define LAUNCH(grid, block, stream, call) \
    (__cudaPushCallConfiguration((hy_dim3){grid, 1, 1}, (hy_dim3){block, 1, 1}, 0, stream) ? (void)0 : (void)(call))

/* the module: a fat binary wrapper's shape, with no device code in it */
static struct {
    int magic, version;
    const void* data;
    void* unused;
} fatbin = {0x466243b1, 1, NULL, NULL};
static void** module;

static void unregister_module(void) { __cudaUnregisterFatBinary(module); }

__attribute__((constructor)) static void register_module(void) {
    module = __cudaRegisterFatBinary(&fatbin);
    __cudaRegisterFunction(module, (const char*)sample_axpy, (char*)"sample_axpy", "sample_axpy", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFunction(module, (const char*)sample_scale, (char*)"sample_scale", "sample_scale", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFunction(module, (const char*)sample_fill, (char*)"sample_fill", "sample_fill", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFatBinaryEnd(module);
    __cudaGetKernel(&axpy_handle, (const void*)sample_axpy);
    __cudaGetKernel(&scale_handle, (const void*)sample_scale);
    __cudaGetKernel(&fill_handle, (const void*)sample_fill);
    atexit(unregister_module);
}

/* The control API, found as a program that was not linked against the
 * interceptor finds it. Says on stderr what the policy saw. */
static unsigned policy_calls, policy_named;
static int reverse(const hy_intercept_launch* l, void* ctx) {
    policy_calls++;
    policy_named += l->kernel && strncmp(l->kernel, "sample_", 7) == 0;
    return l->device_count - 1 - (int)(l->index % (unsigned long long)l->device_count);
}
static void report_policy(void) { fprintf(stderr, "policy: %u calls, %u named\n", policy_calls, policy_named); }
static int use_policy(void) {
    hy_intercept_set_policy_t set_policy = (hy_intercept_set_policy_t)dlsym(RTLD_DEFAULT, "hy_intercept_set_policy");
    hy_intercept_set_target_t set_target = (hy_intercept_set_target_t)dlsym(RTLD_DEFAULT, "hy_intercept_set_target");
    if (!set_policy || !set_target) {
        fprintf(stderr, "policy: the interceptor is not loaded\n");
        return 1;
    }
    /* a device the runtime does not have is refused; -1 hands back to the policy */
    if (set_target(64) != 1 || set_target(0) != 0 || set_target(-1) != 0) {
        fprintf(stderr, "policy: hy_intercept_set_target answered wrongly\n");
        return 1;
    }
    set_policy(reverse, NULL);
    atexit(report_policy);
    return 0;
}

/* one launch on device 1 with device 0's blocks; the sum of y tells whether it ran */
static int bad_launch(void) {
    const int n = 1000;
    float hx[1000], hy[1000];
    for (int i = 0; i < n; i++) hx[i] = (float)i, hy[i] = 1.0f;
    float *x, *y;
    cudaSetDevice(0);
    cudaMalloc((void**)&x, sizeof hx);
    cudaMalloc((void**)&y, sizeof hy);
    cudaMemcpy(x, hx, sizeof hx, HY_CUDA_H2D);
    cudaMemcpy(y, hy, sizeof hy, HY_CUDA_H2D);
    cudaSetDevice(1);
    LAUNCH(4, 256, NULL, sample_axpy(2.0f, x, y, n));
    int err = (int)cudaGetLastError();
    cudaMemcpy(hy, y, sizeof hy, HY_CUDA_D2H);
    double sy = 0;
    for (int i = 0; i < n; i++) sy += hy[i];
    cudaFree(x);
    cudaFree(y);
    printf("sample: bad launch error %d, sum y %.2f\n", err, sy);
    return 0;
}

/* The sample's work, as intercept/sample.cu's main does it; its exit status. */
static int scenario(void) {
    enum { n = 1000 };
    int count = 0, version = 0, kept = 0, launches = 0, dev = -1;
    cudaRuntimeGetVersion(&version);
    if (cudaGetDeviceCount(&count) != 0 || count < 1) {
        printf("no device\n");
        return 1;
    }
    float hx[n], hy[n], hz[n];
    for (int i = 0; i < n; i++) hx[i] = (float)i, hy[i] = 1.0f;
    cudaSetDevice(0);
    float *x, *y, *z;
    hy_cuda_stream s;
    cudaMalloc((void**)&x, n * sizeof(float));
    cudaMalloc((void**)&y, n * sizeof(float));
    cudaMemcpy(x, hx, n * sizeof(float), HY_CUDA_H2D);
    cudaMemcpy(y, hy, n * sizeof(float), HY_CUDA_H2D);
    cudaStreamCreate(&s);
    /* y = 1 + 12 i, then a quarter of it */
    for (int k = 0; k < 6; k++) {
        LAUNCH(4, 256, NULL, sample_axpy(2.0f, x, y, n));
        launches++;
        kept += cudaGetDevice(&dev) == 0 && dev == 0;
    }
    for (int k = 0; k < 2; k++) {
        LAUNCH(4, 256, s, sample_scale(y, 0.5f, n));
        launches++;
        kept += cudaGetDevice(&dev) == 0 && dev == 0;
    }
    /* z = 7 + i on the last device */
    int last = count - 1;
    cudaSetDevice(last);
    cudaMalloc((void**)&z, n * sizeof(float));
    cudaMemset(z, 0, n * sizeof(float));
    LAUNCH(4, 256, NULL, sample_fill(z, 7.0f, n));
    launches++;
    kept += cudaGetDevice(&dev) == 0 && dev == last;
    cudaMemcpy(hz, z, n * sizeof(float), HY_CUDA_D2H);
    cudaSetDevice(0);
    cudaDeviceSynchronize();
    cudaMemcpy(hy, y, n * sizeof(float), HY_CUDA_D2H);
    cudaFree(x);
    cudaFree(y);
    cudaFree(z);
    cudaStreamDestroy(s);
    return hy_sample_report(hy, hz, n, version, launches, kept, (int)cudaGetLastError());
}

static void* scenario_thread(void* status) {
    *(int*)status = scenario();
    return NULL;
}

int main(int argc, char** argv) {
    static const char* names[] = {"cuda13", "cuda13_ptsz", "api", "api_ptsz"};
    if (argc > 1 && strcmp(argv[1], "bad") == 0) return bad_launch();
    if (argc > 1 && strcmp(argv[1], "policy") == 0) {
        if (use_policy() != 0) return 1;
        argc = 1;
    }
    if (argc > 1 && strcmp(argv[1], "threads") == 0) {
        /* two threads, each the whole sample on blocks of its own */
        pthread_t th[2];
        int status[2] = {1, 1};
        for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, scenario_thread, &status[i]);
        for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
        return status[0] || status[1];
    }
    for (entry = 0; argc > 1 && entry < 4 && strcmp(argv[1], names[entry]) != 0; entry++) {
    }
    if (entry == 4) {
        fprintf(stderr, "usage: sample_twin [cuda13|cuda13_ptsz|api|api_ptsz|policy|threads|bad]\n");
        return 2;
    }
    return scenario();
}
