#include "core/simd.h"

int hy_cpu_avx2(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
    return 0;
#endif
}

int hy_simd_on(int* state) {
    int s = __atomic_load_n(state, __ATOMIC_RELAXED);
    if (s < 0) {
        s = hy_cpu_avx2();
        __atomic_store_n(state, s, __ATOMIC_RELAXED);
    }
    return s;
}

int hy_simd_set(int* state, int on) {
    int was = hy_simd_on(state);
    if (on >= 0) __atomic_store_n(state, on && hy_cpu_avx2(), __ATOMIC_RELAXED);
    return was;
}
