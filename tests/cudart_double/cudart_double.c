/* Test double of the CUDA runtime: simulated devices, every call recorded
 * (see cudart_double.h). Built as libcudart.so.13 with the runtime's symbol
 * version, so a program linked against the real runtime loads this one when
 * its directory comes first in the library path. */
#include "cudart_double.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
#define STREAM_MAGIC 0x5354524du

typedef struct dbl_alloc {
    char* base;
    size_t size;
    int dev;
} dbl_alloc;

typedef struct dbl_func {
    struct dbl_func* next;
    void** module;
    const void* host;
    char* name;
    const hy_dbl_kernel* emu;
} dbl_func;

typedef struct dbl_stream {
    unsigned magic;
    int dev;
} dbl_stream;

typedef struct dbl_config {
    hy_dim3 grid, block;
    size_t shared;
    hy_cuda_stream stream;
} dbl_config;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int ndev;
static FILE* log_file;
static void* emu_lib;
static dbl_alloc* allocs;
static size_t nallocs, capallocs;
static dbl_func* funcs;
static _Thread_local int current;
static _Thread_local hy_cuda_error last_error;
static _Thread_local dbl_config configs[16];
static _Thread_local int nconfigs;

static void init(void) {
    const char* n = getenv("HY_CUDART_DOUBLE_DEVICES");
    ndev = n ? atoi(n) : 2;
    if (ndev < 1 || ndev > 32) ndev = 2;
    const char* path = getenv("HY_CUDART_DOUBLE_LOG");
    if (path && *path) log_file = fopen(path, "w");
    const char* lib = getenv("HY_CUDART_DOUBLE_KERNELS");
    if (lib && *lib && !(emu_lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL)))
        fprintf(stderr, "cudart double: cannot load %s: %s\n", lib, dlerror());
}

/* One line in the call log. */
__attribute__((format(printf, 1, 2))) static void record(const char* fmt, ...) {
    pthread_once(&once, init);
    if (!log_file) return;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&mu);
    vfprintf(log_file, fmt, ap);
    fputc('\n', log_file);
    fflush(log_file);
    pthread_mutex_unlock(&mu);
    va_end(ap);
}

static hy_cuda_error fail(hy_cuda_error e) {
    last_error = e;
    return e;
}

/* Under mu. The live allocation holding [p, p+n), or NULL. */
static dbl_alloc* alloc_of(const void* p, size_t n) {
    for (size_t i = 0; i < nallocs; i++) {
        dbl_alloc* a = &allocs[i];
        if ((const char*)p >= a->base && (const char*)p < a->base + a->size)
            return n <= (size_t)(a->base + a->size - (const char*)p) ? a : NULL;
    }
    return NULL;
}

/* The device of p (n bytes from it), -1 when it is not device memory. */
static int device_of(const void* p, size_t n) {
    pthread_mutex_lock(&mu);
    dbl_alloc* a = alloc_of(p, n);
    int d = a ? a->dev : -1;
    pthread_mutex_unlock(&mu);
    return d;
}

/* ---- devices */
API hy_cuda_error cudaGetDeviceCount(int* n) {
    record("cudaGetDeviceCount");
    *n = ndev;
    return 0;
}

API hy_cuda_error cudaSetDevice(int d) {
    record("cudaSetDevice %d", d);
    if (d < 0 || d >= ndev) return fail(HY_CUDA_ERROR_INVALID_DEVICE);
    current = d;
    return 0;
}

API hy_cuda_error cudaGetDevice(int* d) {
    record("cudaGetDevice");
    *d = current;
    return 0;
}

API hy_cuda_error cudaDeviceSynchronize(void) {
    record("cudaDeviceSynchronize dev=%d", current);
    return 0;
}

API hy_cuda_error cudaGetLastError(void) {
    record("cudaGetLastError");
    hy_cuda_error e = last_error;
    last_error = 0;
    return e;
}

API hy_cuda_error cudaPeekAtLastError(void) {
    record("cudaPeekAtLastError");
    return last_error;
}

API const char* cudaGetErrorString(hy_cuda_error e) { return e == 0 ? "no error" : "cudart double error"; }

API hy_cuda_error cudaRuntimeGetVersion(int* v) {
    record("cudaRuntimeGetVersion");
    *v = 13000;
    return 0;
}

/* ---- memory: host blocks tagged with the current device, filled with 0xff
 * (NaN as float) so that a copy never made shows in the results */
API hy_cuda_error cudaMalloc(void** p, size_t size) {
    pthread_once(&once, init);
    char* b = malloc(size ? size : 1);
    if (!b) return fail(HY_CUDA_ERROR_MEMORY_ALLOCATION);
    memset(b, 0xff, size);
    pthread_mutex_lock(&mu);
    if (nallocs == capallocs) {
        size_t cap = capallocs ? 2 * capallocs : 64;
        dbl_alloc* na = realloc(allocs, cap * sizeof *na);
        if (!na) {
            pthread_mutex_unlock(&mu);
            free(b);
            return fail(HY_CUDA_ERROR_MEMORY_ALLOCATION);
        }
        allocs = na;
        capallocs = cap;
    }
    allocs[nallocs++] = (dbl_alloc){b, size ? size : 1, current};
    pthread_mutex_unlock(&mu);
    *p = b;
    record("cudaMalloc dev=%d size=%zu", current, size);
    return 0;
}

API hy_cuda_error cudaFree(void* p) {
    if (!p) return 0;
    pthread_mutex_lock(&mu);
    dbl_alloc* a = alloc_of(p, 1);
    int ok = a && a->base == (char*)p;
    int dev = ok ? a->dev : -1;
    if (ok) {
        free(a->base);
        *a = allocs[--nallocs];
    }
    pthread_mutex_unlock(&mu);
    if (!ok) {
        record("violation cudaFree of a pointer cudaMalloc did not return");
        return fail(HY_CUDA_ERROR_INVALID_VALUE);
    }
    record("cudaFree dev=%d", dev);
    return 0;
}

/* Which sides of a copy are device memory: by kind, or by address for
 * cudaMemcpyDefault. The device side must hold the n bytes. */
static hy_cuda_error copy(const char* call, void* dst, const void* src, size_t n, int kind) {
    int sd = device_of(src, n), dd = device_of(dst, n);
    int src_dev = kind == HY_CUDA_D2H || kind == HY_CUDA_D2D || (kind == HY_CUDA_DEFAULT && sd >= 0);
    int dst_dev = kind == HY_CUDA_H2D || kind == HY_CUDA_D2D || (kind == HY_CUDA_DEFAULT && dd >= 0);
    record("%s kind=%d dev=%d size=%zu src=%d dst=%d", call, kind, current, n, sd, dd);
    if (kind < 0 || kind > HY_CUDA_DEFAULT || (src_dev && sd < 0) || (dst_dev && dd < 0)) {
        record("violation %s: a device side is not device memory of that size", call);
        return fail(HY_CUDA_ERROR_INVALID_VALUE);
    }
    memmove(dst, src, n);
    return 0;
}

API hy_cuda_error cudaMemcpy(void* dst, const void* src, size_t n, int kind) {
    return copy("cudaMemcpy", dst, src, n, kind);
}

API hy_cuda_error cudaMemcpyAsync(void* dst, const void* src, size_t n, int kind, hy_cuda_stream s) {
    return copy("cudaMemcpyAsync", dst, src, n, kind);
}

API hy_cuda_error cudaMemset(void* p, int v, size_t n) {
    int d = device_of(p, n);
    record("cudaMemset dev=%d size=%zu on=%d", current, n, d);
    if (d < 0) {
        record("violation cudaMemset: not device memory of that size");
        return fail(HY_CUDA_ERROR_INVALID_VALUE);
    }
    memset(p, v, n);
    return 0;
}

API hy_cuda_error cudaMemcpyPeer(void* dst, int dst_dev, const void* src, int src_dev, size_t n) {
    int sd = device_of(src, n), dd = device_of(dst, n);
    record("cudaMemcpyPeer %d->%d size=%zu", src_dev, dst_dev, n);
    if (sd != src_dev || dd != dst_dev) {
        record("violation cudaMemcpyPeer: source on %d (said %d), destination on %d (said %d)", sd, src_dev, dd,
               dst_dev);
        return fail(HY_CUDA_ERROR_INVALID_VALUE);
    }
    memmove(dst, src, n);
    return 0;
}

/* ---- streams: each belongs to the device current at its creation */
API hy_cuda_error cudaStreamCreate(hy_cuda_stream* s) {
    dbl_stream* st = malloc(sizeof *st);
    if (!st) return fail(HY_CUDA_ERROR_MEMORY_ALLOCATION);
    *st = (dbl_stream){STREAM_MAGIC, current};
    *s = (hy_cuda_stream)st;
    record("cudaStreamCreate dev=%d", current);
    return 0;
}

static int stream_ok(hy_cuda_stream s) {
    return HY_CUDA_STREAM_IS_DEFAULT(s) || ((dbl_stream*)s)->magic == STREAM_MAGIC;
}

API hy_cuda_error cudaStreamSynchronize(hy_cuda_stream s) {
    record("cudaStreamSynchronize");
    return stream_ok(s) ? 0 : fail(HY_CUDA_ERROR_INVALID_RESOURCE_HANDLE);
}

API hy_cuda_error cudaStreamDestroy(hy_cuda_stream s) {
    record("cudaStreamDestroy");
    if (HY_CUDA_STREAM_IS_DEFAULT(s) || !stream_ok(s)) return fail(HY_CUDA_ERROR_INVALID_RESOURCE_HANDLE);
    ((dbl_stream*)s)->magic = 0;
    free(s);
    return 0;
}

/* ---- modules and kernels */
API void** __cudaRegisterFatBinary(void* fat) {
    record("__cudaRegisterFatBinary");
    void** h = malloc(sizeof *h);
    if (h) *h = fat;
    return h;
}

API void __cudaRegisterFatBinaryEnd(void** h) { record("__cudaRegisterFatBinaryEnd"); }

API char __cudaInitModule(void** h) {
    record("__cudaInitModule");
    return 1;
}

API void __cudaRegisterFunction(void** module, const char* host, char* device_fun, const char* name, int limit,
                                void* tid, void* bid, void* bdim, void* gdim, int* wsize) {
    record("__cudaRegisterFunction %s", name);
    dbl_func* f = calloc(1, sizeof *f);
    if (!f) return;
    f->module = module;
    f->host = host;
    f->name = strdup(name);
    if (emu_lib && f->name) {
        char sym[256];
        snprintf(sym, sizeof sym, "hy_dbl_kernel_%s", name);
        f->emu = dlsym(emu_lib, sym);
    }
    pthread_mutex_lock(&mu);
    f->next = funcs;
    funcs = f;
    pthread_mutex_unlock(&mu);
}

API void __cudaUnregisterFatBinary(void** module) {
    record("__cudaUnregisterFatBinary");
    pthread_mutex_lock(&mu);
    for (dbl_func** pf = &funcs; *pf;) {
        dbl_func* f = *pf;
        if (f->module == module) {
            *pf = f->next;
            free(f->name);
            free(f);
        } else {
            pf = &f->next;
        }
    }
    pthread_mutex_unlock(&mu);
    free(module);
}

/* The function registered for a host stub, or the one a handle is. */
static dbl_func* func_of(const void* key) {
    pthread_mutex_lock(&mu);
    dbl_func* f = funcs;
    while (f && f->host != key && (const void*)f != key) f = f->next;
    pthread_mutex_unlock(&mu);
    return f;
}

API hy_cuda_error __cudaGetKernel(hy_cuda_kernel* k, const void* host) {
    dbl_func* f = func_of(host);
    record("__cudaGetKernel %s", f ? f->name : "(unknown)");
    if (!f || f->host != host) return fail(HY_CUDA_ERROR_INVALID_DEVICE_FUNCTION);
    *k = (hy_cuda_kernel)f;
    return 0;
}

API hy_cuda_error cudaFuncGetParamInfo(const void* func, size_t i, size_t* offset, size_t* size) {
    dbl_func* f = func_of(func);
    record("cudaFuncGetParamInfo %s %zu", f ? f->name : "(unknown)", i);
    if (!f || !f->emu) return fail(HY_CUDA_ERROR_INVALID_DEVICE_FUNCTION);
    if (i >= (size_t)f->emu->nparams) return fail(HY_CUDA_ERROR_INVALID_VALUE);
    size_t off = 0;
    for (size_t j = 0; j <= i; j++) {
        size_t s = f->emu->param_size[j], align = s >= 8 ? 8 : s;
        if (align) off = (off + align - 1) / align * align;
        if (j < i) off += s;
    }
    *offset = off;
    *size = f->emu->param_size[i];
    return 0;
}

API unsigned __cudaPushCallConfiguration(hy_dim3 grid, hy_dim3 block, size_t shared, hy_cuda_stream stream) {
    record("__cudaPushCallConfiguration grid=%u,%u,%u block=%u,%u,%u", grid.x, grid.y, grid.z, block.x, block.y,
           block.z);
    if (nconfigs == 16) return 1;
    configs[nconfigs++] = (dbl_config){grid, block, shared, stream};
    return 0;
}

API hy_cuda_error __cudaPopCallConfiguration(hy_dim3* grid, hy_dim3* block, size_t* shared, void* stream) {
    record("__cudaPopCallConfiguration");
    if (nconfigs == 0) return fail(HY_CUDA_ERROR_MISSING_CONFIGURATION);
    dbl_config c = configs[--nconfigs];
    *grid = c.grid;
    *block = c.block;
    *shared = c.shared;
    *(hy_cuda_stream*)stream = c.stream;
    return 0;
}

/* ---- launches: checked, recorded, run by the emulation when there is one */
static hy_cuda_error launch(const char* entry, const void* key, hy_dim3 grid, hy_dim3 block, void** args,
                            hy_cuda_stream stream) {
    pthread_once(&once, init);
    dbl_func* f = func_of(key);
    if (!f) {
        record("violation %s of a kernel never registered", entry);
        return fail(HY_CUDA_ERROR_INVALID_DEVICE_FUNCTION);
    }
    if (!stream_ok(stream)) {
        record("violation %s %s: not a stream", entry, f->name);
        return fail(HY_CUDA_ERROR_INVALID_RESOURCE_HANDLE);
    }
    int sdev = HY_CUDA_STREAM_IS_DEFAULT(stream) ? current : ((dbl_stream*)stream)->dev;
    /* the device of each pointer argument, in order */
    char ptrs[256] = "";
    size_t len = 0;
    int bad = sdev != current;
    if (bad) record("violation %s %s on dev=%d: stream of dev=%d", entry, f->name, current, sdev);
    for (int i = 0; f->emu && i < f->emu->nparams; i++) {
        if (f->emu->param_size[i] != sizeof(void*)) continue;
        void* p;
        memcpy(&p, args[i], sizeof p);
        int d = device_of(p, 1);
        if (d < 0) continue;
        if (len < sizeof ptrs - 16) len += (size_t)snprintf(ptrs + len, sizeof ptrs - len, "%s%d", len ? "," : "", d);
        if (d != current) {
            record("violation %s %s on dev=%d: argument %d lies on dev=%d", entry, f->name, current, i, d);
            bad = 1;
        }
    }
    record("launch %s dev=%d entry=%s grid=%u,%u,%u block=%u,%u,%u stream=%s ptrdev=%s", f->name, current, entry,
           grid.x, grid.y, grid.z, block.x, block.y, block.z, HY_CUDA_STREAM_IS_DEFAULT(stream) ? "default" : "own",
           ptrs);
    if (bad) return fail(HY_CUDA_ERROR_INVALID_VALUE);
    if (f->emu && f->emu->run) f->emu->run(args, grid, block);
    return 0;
}

API hy_cuda_error __cudaLaunchKernel(hy_cuda_kernel k, hy_dim3 grid, hy_dim3 block, void** args, size_t shared,
                                     hy_cuda_stream stream) {
    return launch("__cudaLaunchKernel", k, grid, block, args, stream);
}

API hy_cuda_error __cudaLaunchKernel_ptsz(hy_cuda_kernel k, hy_dim3 grid, hy_dim3 block, void** args, size_t shared,
                                          hy_cuda_stream stream) {
    return launch("__cudaLaunchKernel_ptsz", k, grid, block, args, stream);
}

API hy_cuda_error cudaLaunchKernel(const void* f, hy_dim3 grid, hy_dim3 block, void** args, size_t shared,
                                   hy_cuda_stream stream) {
    return launch("cudaLaunchKernel", f, grid, block, args, stream);
}

API hy_cuda_error cudaLaunchKernel_ptsz(const void* f, hy_dim3 grid, hy_dim3 block, void** args, size_t shared,
                                        hy_cuda_stream stream) {
    return launch("cudaLaunchKernel_ptsz", f, grid, block, args, stream);
}
