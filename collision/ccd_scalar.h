/* Scalar helpers of the CCD arithmetic (collision/ccd_math.h and the
 * headers it gathers): HY_HD, compiled alike as C and as CUDA. */
#ifndef HY_COLLISION_CCD_SCALAR_H
#define HY_COLLISION_CCD_SCALAR_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/hd.h"

/* Finite operands only (inputs are checked): plain compares, no libm call. */
HY_HD double hy_ccd_min(double a, double b) { return a < b ? a : b; }
HY_HD double hy_ccd_max(double a, double b) { return a > b ? a : b; }

/* 2^e, exactly ldexp(1.0, e), for -1022 <= e <= 1023 (the slab widths and
 * grids: no library call on the host, a few per query otherwise). */
HY_HD double hy_ccd_exp2i(int e) {
#ifdef __CUDA_ARCH__
    return ldexp(1.0, e);
#else
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
#endif
}

#endif
