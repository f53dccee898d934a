/* Run-time switches for the code paths built for AVX2 (the filters'
 * lanes, collision/filter_pairs.c; the traversal's eight-wide gate,
 * collision/traverse_avx.c). Each path keeps one int, -1 until first read:
 * then on exactly when the CPU has AVX2. Tests turn a path off to compare
 * it with the scalar code it must match. */
#ifndef HY_CORE_SIMD_H
#define HY_CORE_SIMD_H

/* 1 when the CPU runs AVX2 (always 0 off x86-64 GCC builds). */
int hy_cpu_avx2(void);
/* The switch's setting, settled on first use (thread-safe). */
int hy_simd_on(int* state);
/* on = 1 turns the path on (granted only with AVX2), 0 off, -1 leaves it;
 * returns the setting before. */
int hy_simd_set(int* state, int on);

#endif
