/* libhyphys_intercept.so: retargets the kernel launches of an unmodified CUDA
 * program (see intercept.h and docs/design/INTERCEPT.md).
 *
 * Defining a runtime symbol here puts this library's version in front of the
 * runtime's when it is preloaded; each wrapper calls the runtime's own
 * through dlsym(RTLD_NEXT). Symbols not defined here reach the runtime
 * untouched. Wrapped:
 *   launches   __cudaLaunchKernel(_ptsz) (what nvcc 12.x/13 emits for <<<>>>,
 *              with a kernel handle), cudaLaunchKernel(_ptsz) (the API and
 *              the older nvcc launch path, with a host stub or a handle);
 *   kernels    __cudaRegisterFunction, __cudaGetKernel, __cudaUnregisterFatBinary
 *              (names, and which handle belongs to which stub);
 *   <<<>>>     __cudaPushCallConfiguration, counted only: the stub pops the
 *              configuration on the caller's thread before it launches, so
 *              grid, block and stream arrive as launch arguments;
 *   memory     cudaMalloc, cudaFree, cudaMemcpy(Async), cudaMemset: the table
 *              of blocks and their per-device copies;
 *   sync       cudaDeviceSynchronize, which also waits for the devices that
 *              ran the caller's kernels. */
#include "intercept.h"

#include "cuda_abi.h"
#include "table.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
#define MAX_PARAMS 64

/* ---- the runtime's own functions */
typedef hy_cuda_error (*launch_handle_fn)(hy_cuda_kernel, hy_dim3, hy_dim3, void**, size_t, hy_cuda_stream);
typedef hy_cuda_error (*launch_func_fn)(const void*, hy_dim3, hy_dim3, void**, size_t, hy_cuda_stream);

static struct {
    hy_cuda_error (*get_device_count)(int*);
    hy_cuda_error (*get_device)(int*);
    hy_cuda_error (*set_device)(int);
    hy_cuda_error (*malloc_)(void**, size_t);
    hy_cuda_error (*free_)(void*);
    hy_cuda_error (*memcpy_)(void*, const void*, size_t, int);
    hy_cuda_error (*memcpy_async)(void*, const void*, size_t, int, hy_cuda_stream);
    hy_cuda_error (*memset_)(void*, int, size_t);
    hy_cuda_error (*memcpy_peer)(void*, int, const void*, int, size_t);
    hy_cuda_error (*device_synchronize)(void);
    hy_cuda_error (*stream_synchronize)(hy_cuda_stream);
    hy_cuda_error (*get_last_error)(void);
    hy_cuda_error (*peek_at_last_error)(void);
    hy_cuda_error (*func_get_param_info)(const void*, size_t, size_t*, size_t*);
    void (*register_function)(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
    void (*unregister_fat_binary)(void**);
    hy_cuda_error (*get_kernel)(hy_cuda_kernel*, const void*);
    unsigned (*push_call_configuration)(hy_dim3, hy_dim3, size_t, hy_cuda_stream);
    launch_handle_fn launch_handle, launch_handle_ptsz;
    launch_func_fn launch_func, launch_func_ptsz;
} real;

/* ---- what a kernel is: its stub, its handle, its parameters */
typedef struct kernel {
    const void* host; /* host stub, NULL when only the handle was seen */
    const void* handle; /* cudaKernel_t, NULL until __cudaGetKernel */
    void** module; /* fat binary it was registered from */
    char* name;
    int nparams; /* -2: not asked yet; -1: cannot be listed */
    unsigned short size[MAX_PARAMS];
} kernel;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static kernel* kernels;
static size_t nkernels, capkernels;
static hy_icpt_table* table;
static int device_count = -1;
static hy_intercept_policy_fn user_policy;
static void* user_ctx;
static int fixed_target = -1; /* hy_intercept_set_target */
static int env_mode; /* HY_INTERCEPT_POLICY: 0 round-robin, 1 caller, 2 fixed */
static int env_fixed;
static unsigned pending_sync; /* devices that ran retargeted work since the last sync */
static hy_intercept_stats stats;
/* A wrapper that the runtime (or this library) enters while another wrapper
 * runs on the thread passes straight through. */
static _Thread_local int inside;

static void* next(const char* name) { return dlsym(RTLD_NEXT, name); }

/* ---- the table's device memory, through the runtime */
static int mem_alloc(void* ctx, int device, size_t size, void** out) {
    int saved = 0;
    real.get_device(&saved);
    int rc = real.set_device(device);
    if (rc == 0) rc = real.malloc_(out, size);
    real.set_device(saved);
    return rc;
}
static int mem_free(void* ctx, int device, void* ptr) { return real.free_(ptr); }
/* cudaMemcpyPeer stages through the host when the devices have no peer path,
 * and is ordered after the work queued on both devices' default streams. */
static int mem_copy(void* ctx, void* dst, int dst_device, const void* src, int src_device, size_t size) {
    return real.memcpy_peer(dst, dst_device, src, src_device, size);
}

static void init(void) {
    real.get_device_count = next("cudaGetDeviceCount");
    real.get_device = next("cudaGetDevice");
    real.set_device = next("cudaSetDevice");
    real.malloc_ = next("cudaMalloc");
    real.free_ = next("cudaFree");
    real.memcpy_ = next("cudaMemcpy");
    real.memcpy_async = next("cudaMemcpyAsync");
    real.memset_ = next("cudaMemset");
    real.memcpy_peer = next("cudaMemcpyPeer");
    real.device_synchronize = next("cudaDeviceSynchronize");
    real.stream_synchronize = next("cudaStreamSynchronize");
    real.get_last_error = next("cudaGetLastError");
    real.peek_at_last_error = next("cudaPeekAtLastError");
    real.func_get_param_info = next("cudaFuncGetParamInfo");
    real.register_function = next("__cudaRegisterFunction");
    real.unregister_fat_binary = next("__cudaUnregisterFatBinary");
    real.get_kernel = next("__cudaGetKernel");
    real.push_call_configuration = next("__cudaPushCallConfiguration");
    real.launch_handle = next("__cudaLaunchKernel");
    real.launch_handle_ptsz = next("__cudaLaunchKernel_ptsz");
    real.launch_func = next("cudaLaunchKernel");
    real.launch_func_ptsz = next("cudaLaunchKernel_ptsz");
    static const hy_icpt_mem_ops ops = {mem_alloc, mem_free, mem_copy, NULL};
    table = hy_icpt_table_create(&ops);

    const char* p = getenv("HY_INTERCEPT_POLICY");
    char* end = NULL;
    if (!p || !*p || strcmp(p, "round-robin") == 0) {
        env_mode = 0;
    } else if (strcmp(p, "caller") == 0) {
        env_mode = 1;
    } else if (strncmp(p, "fixed:", 6) == 0 && (env_fixed = (int)strtol(p + 6, &end, 10)) >= 0 && end != p + 6 &&
               !*end) {
        env_mode = 2;
    } else {
        fprintf(stderr,
                "hyphys intercept: HY_INTERCEPT_POLICY=%s is not one of round-robin, caller, fixed:N; "
                "launches stay on the caller's device\n",
                p);
        env_mode = 1;
    }
}

/* The wrappers need the runtime below them; without it (the library preloaded
 * into a program that has no CUDA runtime) they are never called. */
static void ready(void) { pthread_once(&once, init); }

/* Under mu. The runtime's device count, asked once. */
static int devices(void) {
    if (device_count < 0) {
        int n = 0;
        device_count = real.get_device_count && real.get_device_count(&n) == 0 ? n : 0;
        if (device_count > HY_INTERCEPT_MAX_DEVICES) device_count = HY_INTERCEPT_MAX_DEVICES;
    }
    return device_count;
}

/* Under mu. The kernel whose stub or handle is `key`, added when new. */
static kernel* kernel_of(const void* key, int is_handle) {
    for (size_t i = 0; i < nkernels; i++)
        if (kernels[i].host == key || kernels[i].handle == key) return &kernels[i];
    if (nkernels == capkernels) {
        size_t cap = capkernels ? 2 * capkernels : 32;
        kernel* nk = realloc(kernels, cap * sizeof *nk);
        if (!nk) return NULL;
        kernels = nk;
        capkernels = cap;
    }
    kernel* k = &kernels[nkernels++];
    memset(k, 0, sizeof *k);
    if (is_handle)
        k->handle = key;
    else
        k->host = key;
    k->nparams = -2;
    return k;
}

/* Under mu. Lists the kernel's parameter sizes with cudaFuncGetParamInfo
 * (CUDA 12.4+): the runtime reads them from the kernel's image, so they are
 * right for C and C++ kernels alike, where a name cannot say (an extern "C"
 * kernel's name carries no types). The probe ends on an error the runtime
 * records as the thread's last error; it is cleared so that the program
 * never sees it, and when the program already has an error pending (which
 * clearing would lose) the probe waits for a later launch. */
static void list_params(kernel* k) {
    if (k->nparams != -2) return;
    if (!real.func_get_param_info || !real.get_last_error) {
        k->nparams = -1;
        return;
    }
    if (real.peek_at_last_error && real.peek_at_last_error() != 0) return;
    const void* f = k->host ? k->host : k->handle;
    int n = 0;
    hy_cuda_error rc = 0;
    for (; n < MAX_PARAMS; n++) {
        size_t off = 0, size = 0;
        rc = real.func_get_param_info(f, (size_t)n, &off, &size);
        if (rc != 0) break;
        k->size[n] = (unsigned short)(size > 0xffff ? 0xffff : size);
    }
    if (rc != 0) real.get_last_error();
    /* out of range ends the list; any other error means the runtime does not
     * know the kernel's parameters */
    k->nparams = rc == HY_CUDA_ERROR_INVALID_VALUE ? n : -1;
}

static int place(const hy_intercept_launch* l, hy_intercept_policy_fn fn, void* ctx, int fixed) {
    if (fixed >= 0) return fixed;
    if (fn) return fn(l, ctx);
    switch (env_mode) {
        case 0: return l->device_count > 0 ? (int)(l->index % (unsigned long long)l->device_count) : -1;
        case 2: return env_fixed;
        default: return -1;
    }
}

/* One launch through any entry point: place it, switch to the chosen device,
 * point the pointer arguments at that device's copies, launch, switch back. */
static hy_cuda_error launch(const void* key, int is_handle, hy_dim3 grid, hy_dim3 block, void** args, size_t shared,
                            hy_cuda_stream stream, launch_handle_fn by_handle, launch_func_fn by_func) {
#define CALL_REAL(a, s)                                                        \
    (by_handle ? by_handle((hy_cuda_kernel)key, grid, block, (a), shared, (s)) \
               : by_func(key, grid, block, (a), shared, (s)))
    if (!by_handle && !by_func) return HY_CUDA_ERROR_INVALID_DEVICE_FUNCTION;
    if (inside) return CALL_REAL(args, stream);
    inside = 1;
    int caller = 0;
    real.get_device(&caller);

    /* what the policy is told, read under the lock; the policy runs without it */
    hy_intercept_launch l = {0};
    unsigned short size[MAX_PARAMS];
    int nparams = -1;
    pthread_mutex_lock(&mu);
    kernel* k = kernel_of(key, is_handle);
    if (k) {
        list_params(k);
        nparams = k->nparams;
        if (nparams > 0) memcpy(size, k->size, (size_t)nparams * sizeof *size);
    }
    l.kernel = k ? k->name : NULL;
    l.func = key;
    l.caller_device = caller;
    l.device_count = devices();
    l.index = stats.launches++;
    hy_intercept_policy_fn fn = user_policy;
    void* ctx = user_ctx;
    int fixed = fixed_target;
    pthread_mutex_unlock(&mu);
    l.grid[0] = grid.x, l.grid[1] = grid.y, l.grid[2] = grid.z;
    l.block[0] = block.x, l.block[1] = block.y, l.block[2] = block.z;
    int target = place(&l, fn, ctx, fixed);
    if (target < 0 || target >= l.device_count) target = caller;

    if (target != caller && nparams < 0) {
        /* a kernel whose pointer arguments cannot be found cannot move */
        target = caller;
        pthread_mutex_lock(&mu);
        stats.kept++;
        pthread_mutex_unlock(&mu);
    }

    if (target != caller) {
        /* A stream belongs to its device. The caller's own stream is drained and
         * the kernel goes to the target's default stream (0, legacy and
         * per-thread name whichever device is current); copies to and from it
         * are ordered by cudaMemcpyPeer. */
        if (!HY_CUDA_STREAM_IS_DEFAULT(stream)) {
            hy_cuda_error rc = real.stream_synchronize(stream);
            if (rc != 0) {
                inside = 0;
                return rc;
            }
            stream = NULL;
        }
        hy_cuda_error rc = real.set_device(target);
        if (rc != 0) {
            inside = 0;
            return rc;
        }
    }

    /* pointer arguments: every parameter of pointer size whose value lies in a
     * block the program allocated is pointed at the target's copy, which the
     * kernel may write (so every other copy becomes stale) */
    void* val[MAX_PARAMS];
    void* moved[MAX_PARAMS];
    void** use = args;
    hy_cuda_error rc = 0;
    unsigned long long translated = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nparams && args && rc == 0; i++) {
        moved[i] = args[i];
        if (size[i] != sizeof(void*)) continue;
        void* p;
        memcpy(&p, args[i], sizeof p);
        int err = 0;
        void* q = hy_icpt_table_acquire(table, p, target, 1, &err);
        if (err) rc = err;
        if (q && q != p) {
            val[i] = q;
            moved[i] = &val[i];
            use = moved;
            translated++;
        }
    }
    stats.translated += translated;
    pthread_mutex_unlock(&mu);

    if (rc == 0) rc = CALL_REAL(use, stream);

    pthread_mutex_lock(&mu);
    if (rc == 0 && target < HY_INTERCEPT_MAX_DEVICES) stats.per_device[target]++;
    if (rc == 0 && target != caller) {
        stats.retargeted++;
        pending_sync |= 1u << target;
    }
    pthread_mutex_unlock(&mu);
    if (target != caller) real.set_device(caller);
    inside = 0;
    return rc;
#undef CALL_REAL
}

/* ---- launch entry points */
API hy_cuda_error __cudaLaunchKernel(hy_cuda_kernel k, hy_dim3 grid, hy_dim3 block, void** args, size_t shared,
                                     hy_cuda_stream stream) {
    ready();
    return launch(k, 1, grid, block, args, shared, stream, real.launch_handle, NULL);
}
API hy_cuda_error __cudaLaunchKernel_ptsz(hy_cuda_kernel k, hy_dim3 grid, hy_dim3 block, void** args, size_t shared,
                                          hy_cuda_stream stream) {
    ready();
    return launch(k, 1, grid, block, args, shared, stream, real.launch_handle_ptsz, NULL);
}
API hy_cuda_error cudaLaunchKernel(const void* f, hy_dim3 grid, hy_dim3 block, void** args, size_t shared,
                                   hy_cuda_stream stream) {
    ready();
    return launch(f, 0, grid, block, args, shared, stream, NULL, real.launch_func);
}
API hy_cuda_error cudaLaunchKernel_ptsz(const void* f, hy_dim3 grid, hy_dim3 block, void** args, size_t shared,
                                        hy_cuda_stream stream) {
    ready();
    return launch(f, 0, grid, block, args, shared, stream, NULL, real.launch_func_ptsz);
}

/* ---- kernel registration */
API void __cudaRegisterFunction(void** module, const char* host, char* device_fun, const char* name, int limit,
                                void* tid, void* bid, void* bdim, void* gdim, int* wsize) {
    ready();
    pthread_mutex_lock(&mu);
    kernel* k = kernel_of(host, 0);
    if (k) {
        k->module = module;
        if (name && !k->name) k->name = strdup(name);
    }
    pthread_mutex_unlock(&mu);
    real.register_function(module, host, device_fun, name, limit, tid, bid, bdim, gdim, wsize);
}

API hy_cuda_error __cudaGetKernel(hy_cuda_kernel* out, const void* host) {
    ready();
    hy_cuda_error rc = real.get_kernel(out, host);
    if (rc == 0 && out && *out) {
        pthread_mutex_lock(&mu);
        kernel* k = kernel_of(host, 0);
        if (k) k->handle = *out;
        pthread_mutex_unlock(&mu);
    }
    return rc;
}

/* The module's stubs may be unloaded with it (a dlclose'd library), and their
 * addresses reused by another. */
API void __cudaUnregisterFatBinary(void** module) {
    ready();
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nkernels;) {
        if (kernels[i].module == module) {
            free(kernels[i].name);
            kernels[i] = kernels[--nkernels];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&mu);
    real.unregister_fat_binary(module);
}

API unsigned __cudaPushCallConfiguration(hy_dim3 grid, hy_dim3 block, size_t shared, hy_cuda_stream stream) {
    ready();
    pthread_mutex_lock(&mu);
    stats.configured++;
    pthread_mutex_unlock(&mu);
    return real.push_call_configuration(grid, block, shared, stream);
}

/* ---- memory: blocks enter and leave the table; a copy to or from a block
 * first brings its home copy up to date, a write leaves only that one valid */
API hy_cuda_error cudaMalloc(void** p, size_t size) {
    ready();
    hy_cuda_error rc = real.malloc_(p, size);
    if (rc != 0 || inside || !p || !*p) return rc;
    int dev = 0;
    real.get_device(&dev);
    pthread_mutex_lock(&mu);
    /* out of memory for the entry: the block is not tracked and its pointer
     * reaches kernels unchanged, as without the interceptor */
    hy_icpt_table_add(table, *p, size, dev);
    pthread_mutex_unlock(&mu);
    return rc;
}

API hy_cuda_error cudaFree(void* p) {
    ready();
    if (!inside && p) {
        inside = 1;
        pthread_mutex_lock(&mu);
        hy_icpt_table_remove(table, p);
        pthread_mutex_unlock(&mu);
        inside = 0;
    }
    return real.free_(p);
}

/* Under mu, inside. Home copies of the blocks at src (read) and dst
 * (written) made current; the first error, or 0. */
static hy_cuda_error home_copies(const void* src, void* dst) {
    int err = 0;
    if (src) hy_icpt_table_acquire(table, src, -1, 0, &err);
    if (dst && err == 0) hy_icpt_table_acquire(table, dst, -1, 1, &err);
    return err;
}

static hy_cuda_error before_access(const void* src, void* dst) {
    if (inside) return 0;
    inside = 1;
    pthread_mutex_lock(&mu);
    hy_cuda_error rc = home_copies(src, dst);
    pthread_mutex_unlock(&mu);
    inside = 0;
    return rc;
}

API hy_cuda_error cudaMemcpy(void* dst, const void* src, size_t n, int kind) {
    ready();
    hy_cuda_error rc = before_access(src, dst);
    return rc ? rc : real.memcpy_(dst, src, n, kind);
}

API hy_cuda_error cudaMemcpyAsync(void* dst, const void* src, size_t n, int kind, hy_cuda_stream stream) {
    ready();
    hy_cuda_error rc = before_access(src, dst);
    return rc ? rc : real.memcpy_async(dst, src, n, kind, stream);
}

API hy_cuda_error cudaMemset(void* p, int value, size_t n) {
    ready();
    hy_cuda_error rc = before_access(NULL, p);
    return rc ? rc : real.memset_(p, value, n);
}

/* The caller waits for its device; its kernels may have run elsewhere. */
API hy_cuda_error cudaDeviceSynchronize(void) {
    ready();
    if (inside) return real.device_synchronize();
    inside = 1;
    pthread_mutex_lock(&mu);
    unsigned devs = pending_sync;
    pending_sync = 0;
    pthread_mutex_unlock(&mu);
    int caller = 0;
    real.get_device(&caller);
    hy_cuda_error first = 0;
    for (int d = 0; d < HY_INTERCEPT_MAX_DEVICES; d++) {
        if (!(devs & (1u << d)) || d == caller) continue;
        hy_cuda_error rc = real.set_device(d);
        if (rc == 0) rc = real.device_synchronize();
        if (rc != 0 && first == 0) first = rc;
    }
    if (devs & ~(1u << caller)) real.set_device(caller);
    hy_cuda_error rc = real.device_synchronize();
    inside = 0;
    return first ? first : rc;
}

/* ---- control API */
API int hy_intercept_set_policy(hy_intercept_policy_fn fn, void* ctx) {
    ready();
    pthread_mutex_lock(&mu);
    user_policy = fn;
    user_ctx = ctx;
    pthread_mutex_unlock(&mu);
    return 0;
}

API int hy_intercept_set_target(int device) {
    ready();
    pthread_mutex_lock(&mu);
    int ok = device == -1 || (device >= 0 && device < devices());
    if (ok) fixed_target = device;
    pthread_mutex_unlock(&mu);
    return ok ? 0 : 1;
}

API void hy_intercept_get_stats(hy_intercept_stats* out) {
    ready();
    pthread_mutex_lock(&mu);
    *out = stats;
    hy_icpt_table_stats ts;
    hy_icpt_table_get_stats(table, &ts);
    out->copies = ts.copies;
    out->bytes_copied = ts.bytes;
    pthread_mutex_unlock(&mu);
}

/* HY_INTERCEPT_REPORT=PATH (or - for stderr): the counters at exit, one
 * "key=value" line, then one line per device that ran launches. */
__attribute__((destructor)) static void report(void) {
    const char* path = getenv("HY_INTERCEPT_REPORT");
    if (!path || !*path || !table) return;
    FILE* f = strcmp(path, "-") == 0 ? stderr : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hyphys intercept: cannot write the report to %s\n", path);
        return;
    }
    hy_intercept_stats s;
    hy_intercept_get_stats(&s);
    fprintf(f,
            "hyphys-intercept launches=%llu configured=%llu retargeted=%llu kept=%llu translated=%llu "
            "copies=%llu bytes=%llu\n",
            s.launches, s.configured, s.retargeted, s.kept, s.translated, s.copies, s.bytes_copied);
    for (int d = 0; d < HY_INTERCEPT_MAX_DEVICES; d++)
        if (s.per_device[d]) fprintf(f, "hyphys-intercept device=%d launches=%llu\n", d, s.per_device[d]);
    if (f != stderr) fclose(f);
}
