/* A test double of the CUDA runtime (libcudart.so.13 built from
 * cudart_double.c): the runtime symbols a CUDA program and the interceptor
 * use, over simulated devices whose memory is host memory tagged with its
 * device. It records every call, one line each, in the file
 * HY_CUDART_DOUBLE_LOG names, and checks what a real GPU would refuse or
 * get wrong: a launch whose pointer argument lies on another device, or on
 * no device at all, a stream used on another device, a copy out of bounds.
 * Each such finding is a line starting "violation".
 *
 * Environment:
 *   HY_CUDART_DOUBLE_DEVICES  simulated devices, 1..32 (default 2)
 *   HY_CUDART_DOUBLE_LOG      the call log (none when unset)
 *   HY_CUDART_DOUBLE_KERNELS  a shared library holding the host emulation of
 *                             the program's kernels (below); a launch of a
 *                             kernel without one is recorded, not run.
 *
 * Kernel emulation: for the kernel registered as NAME the library exports
 * `const hy_dbl_kernel hy_dbl_kernel_NAME`: its parameters' sizes, which
 * cudaFuncGetParamInfo reports and the launch check uses, and a host function
 * that does the work of the whole grid. */
#ifndef HY_CUDART_DOUBLE_H
#define HY_CUDART_DOUBLE_H

#include "intercept/cuda_abi.h"

#define HY_DBL_MAX_PARAMS 16

typedef struct hy_dbl_kernel {
    int nparams;
    size_t param_size[HY_DBL_MAX_PARAMS];
    void (*run)(void** args, hy_dim3 grid, hy_dim3 block);
} hy_dbl_kernel;

#endif
