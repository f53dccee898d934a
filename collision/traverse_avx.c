/* The CPU traversal of one front pair compiled a second time for AVX2
 * (collision/traverse.c picks it at run time when the CPU has it): the same
 * code as collision/traverse_hd.h, with HY_TRAV_AVX switching the
 * triangle-pair gate to eight slots of B's leaf at a time (hy_trav_gate8).
 * The gate's answers are those of the one-pair test, so the feature pairs
 * and their order are the same on either path (tests/test_bvh.c compares
 * them). No FMA is enabled, so the box tests round as they do elsewhere. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC target("avx2")
#define HY_TRAV_AVX 1
#include "collision/traverse_hd.h"

int hy_trav_run_pair_avx2(const hy_trav_ctx* ctxs, hy_trav_pair start, hy_trav_pair* stack, int64_t stack_cap,
                          hy_trav_out* o, hy_trav_counts* k) {
    return hy_trav_run_pair(ctxs, start, stack, stack_cap, o, k);
}
#pragma GCC pop_options
#else
typedef int hy_traverse_avx_unused; /* ISO C: a translation unit is not empty */
#endif
