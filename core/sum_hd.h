/* Sums in one fixed order, the same on every CPU, for every thread count
 * and block split, and on a GPU: the reductions of the CG solves (dot
 * products and squared norms) and any sum whose bits a state hash sees.
 *
 * A vector of n terms is cut into chunks of HY_SUM_CHUNK (32) terms from
 * its start; the last chunk's missing terms are +0.0. A chunk is summed by
 * a halving tree: t[j] += t[j + 16] for j < 16, then + 8, + 4, + 2, + 1,
 * t[0] its sum. That is the order in which a warp of 32 lanes, lane j
 * holding term j, sums by shuffling down by 16, 8, 4, 2 and 1, so a GPU
 * kernel computes a chunk's sum with the same bits (solvers/cg.cu). The
 * chunks' sums, in chunk order, are then combined by the same halving
 * tree over the list padded with +0.0 to a power of two (hy_sum_hd_tree).
 * A caller that splits a vector into blocks of a multiple of 32 terms
 * writes each block's chunk sums at their chunk indices and runs the tree
 * once: the result depends on n and the terms only.
 *
 * On the CPU the chunk tree's halves are independent adds of 16, 8, 4
 * entries: they vectorise (no reassociation needed, so no fast-math).
 *
 * HY_HD: compiled for the host and the device without contraction. */
#ifndef HY_CORE_SUM_HD_H
#define HY_CORE_SUM_HD_H

#include <stdint.h>

#include "core/hd.h"

#define HY_SUM_CHUNK 32

/* Chunks of a vector of n terms. */
HY_HD int64_t hy_sum_hd_chunks(int64_t n) { return (n + HY_SUM_CHUNK - 1) / HY_SUM_CHUNK; }

/* The halving tree over t[0..32) (overwritten): its sum. */
HY_HD double hy_sum_hd_tree32(double* t) {
    for (int h = HY_SUM_CHUNK / 2; h >= 1; h >>= 1)
        for (int j = 0; j < h; j++) t[j] = t[j] + t[j + h];
    return t[0];
}

/* A whole chunk's sum of a[j] * b[j]: the tree's levels written out (the
 * products and the first level in one step). On a GCC-compatible host
 * compiler, in vectors of 4 lanes (each lane's multiplies and adds the
 * same IEEE operations, so the same bits), which the compiler keeps in
 * registers: twice as fast as the scalar form. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#include <string.h>
typedef double hy_sum_v4 __attribute__((vector_size(32)));
static inline double hy_sum_hd_dot32(const double* a, const double* b) {
    hy_sum_v4 A[8], B[8];
    memcpy(A, a, sizeof A);
    memcpy(B, b, sizeof B);
    /* t[4k .. 4k + 3] = a b + a' b' sixteen apart */
    hy_sum_v4 t0 = A[0] * B[0] + A[4] * B[4], t1 = A[1] * B[1] + A[5] * B[5];
    hy_sum_v4 t2 = A[2] * B[2] + A[6] * B[6], t3 = A[3] * B[3] + A[7] * B[7];
    hy_sum_v4 v = (t0 + t2) + (t1 + t3); /* + 8 apart, then + 4 */
    return (v[0] + v[2]) + (v[1] + v[3]);
}
#else
#define HY_SUM_P(j) (a[j] * b[j] + a[(j) + 16] * b[(j) + 16])
HY_HD double hy_sum_hd_dot32(const double* a, const double* b) {
    double t0 = HY_SUM_P(0), t1 = HY_SUM_P(1), t2 = HY_SUM_P(2), t3 = HY_SUM_P(3);
    double t4 = HY_SUM_P(4), t5 = HY_SUM_P(5), t6 = HY_SUM_P(6), t7 = HY_SUM_P(7);
    double t8 = HY_SUM_P(8), t9 = HY_SUM_P(9), t10 = HY_SUM_P(10), t11 = HY_SUM_P(11);
    double t12 = HY_SUM_P(12), t13 = HY_SUM_P(13), t14 = HY_SUM_P(14), t15 = HY_SUM_P(15);
    double u0 = t0 + t8, u1 = t1 + t9, u2 = t2 + t10, u3 = t3 + t11;
    double u4 = t4 + t12, u5 = t5 + t13, u6 = t6 + t14, u7 = t7 + t15;
    double v0 = u0 + u4, v1 = u1 + u5, v2 = u2 + u6, v3 = u3 + u7;
    double w0 = v0 + v2, w1 = v1 + v3;
    return w0 + w1;
}
#undef HY_SUM_P
#endif

/* A chunk's sum of a[j] * b[j], j < len (len <= 32, the rest +0.0). */
HY_HD double hy_sum_hd_dot_chunk(const double* a, const double* b, int len) {
    if (len == HY_SUM_CHUNK) return hy_sum_hd_dot32(a, b);
    double t[HY_SUM_CHUNK];
    for (int j = 0; j < HY_SUM_CHUNK; j++) t[j] = j < len ? a[j] * b[j] : 0.0;
    return hy_sum_hd_tree32(t);
}

/* A chunk's sum of v[j], j < len (len <= 32, the rest +0.0). */
HY_HD double hy_sum_hd_chunk(const double* v, int len) {
    double t[HY_SUM_CHUNK];
    for (int j = 0; j < HY_SUM_CHUNK; j++) t[j] = j < len ? v[j] : 0.0;
    return hy_sum_hd_tree32(t);
}

/* The halving tree over c[0..m) padded with +0.0 to the next power of two:
 * for h = P/2, P/4, ..., 1, c[j] += c[j + h] for j < h. c is overwritten;
 * 0.0 for m = 0. The padding is not stored: past the live entries it
 * stays +0.0, which the loop adds where a live entry meets it. */
HY_HD double hy_sum_hd_tree(double* c, int64_t m) {
    if (m <= 0) return 0.0;
    int64_t p = 1;
    while (p < m) p <<= 1;
    int64_t live = m;
    for (int64_t h = p >> 1; h >= 1; h >>= 1) {
        int64_t top = live < h ? live : h;
        for (int64_t j = 0; j < top; j++) c[j] = c[j] + (j + h < live ? c[j + h] : 0.0);
        live = top;
    }
    return c[0];
}

/* sum a[i] b[i], i < n, on one thread: the chunk sums into part (at least
 * hy_sum_hd_chunks(n) entries, overwritten), then the tree. */
HY_HD double hy_sum_hd_dot(const double* a, const double* b, int64_t n, double* part) {
    int64_t m = hy_sum_hd_chunks(n);
    for (int64_t k = 0; k < m; k++) {
        int64_t o = k * HY_SUM_CHUNK, left = n - o;
        part[k] = hy_sum_hd_dot_chunk(a + o, b + o, left < HY_SUM_CHUNK ? (int)left : HY_SUM_CHUNK);
    }
    return hy_sum_hd_tree(part, m);
}

#endif
