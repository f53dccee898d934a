/* Which GPUs the cuda backend (sched/backend.h) has: the probe, its one-line
 * status, device names. The kernels that run on them belong to the layers
 * whose jobs they are (the collision kernels: collision/kernels.h).
 *
 * Two implementations behind this header: sched/cuda.cu (built by nvcc when
 * CMake finds a CUDA compiler and HY_CUDA is on) and sched/cuda_stub.c
 * (otherwise, and in sanitizer builds). Having no GPU is normal either way:
 * hy_cuda_device_count() is 0, hy_cuda_status() says why in one line, and
 * the caller runs everything on the CPU.
 *
 * Threads: every function may be called from any thread. */
#ifndef HY_SCHED_CUDA_H
#define HY_SCHED_CUDA_H

#include <stddef.h>

#include "hyphys/hyphys.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GPUs handled (more are left out, and the status line says so). */
#define HY_CUDA_MAX_DEVICES 16

/* GPUs usable by this build: 0 when built without CUDA, when no GPU or no
 * driver is present, or when the runtime fails to start. Probed once (later
 * calls are cheap); never fails, never aborts. */
int hy_cuda_device_count(void);

/* One line describing the above, for the log: "cuda: built without CUDA",
 * "cuda: no GPU present (cudaErrorNoDevice): CPU only",
 * "cuda: 1 GPU: NVIDIA H100 80GB HBM3 (sm_90)". Static storage. */
const char* hy_cuda_status(void);

/* Name of GPU `device` into buf (cap bytes, NUL-terminated, truncated to
 * fit). HY_ERR_INVALID_ARG for a device not in [0, hy_cuda_device_count())
 * or a NULL/empty buffer. */
hy_status hy_cuda_device_name(int device, char* buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
