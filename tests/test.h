/* Minimal test macros: each failed check prints expression and values and
 * marks the test failed; TEST_END returns the exit code (77 = skipped). A
 * test that reaches TEST_END without running a single check fails: a test
 * whose checks were all skipped by a wrong early return tests nothing. */
#ifndef HY_TESTS_TEST_H
#define HY_TESTS_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hy_test_failures = 0;
static int hy_test_checks = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        hy_test_checks++;                                                            \
        if (!(cond)) {                                                               \
            hy_test_failures++;                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                           \
    do {                                                                                                \
        double hy_a_ = (double)(a), hy_b_ = (double)(b), hy_t_ = (double)(tol);                         \
        hy_test_checks++;                                                                               \
        if (!(fabs(hy_a_ - hy_b_) <= hy_t_)) {                                                          \
            hy_test_failures++;                                                                         \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.17g, %s = %.17g, |diff| = %.3g > %.3g\n", \
                    __FILE__, __LINE__, #a, hy_a_, #b, hy_b_, fabs(hy_a_ - hy_b_), hy_t_);              \
        }                                                                                               \
    } while (0)

#define CHECK_OK(expr)                                                                                 \
    do {                                                                                               \
        hy_status hy_s_ = (expr);                                                                      \
        hy_test_checks++;                                                                              \
        if (hy_s_ != HY_OK) {                                                                          \
            hy_test_failures++;                                                                        \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr, hy_status_name(hy_s_), \
                    hy_last_error());                                                                  \
        }                                                                                              \
    } while (0)

/* Check that msg holds every string of want (NULL-ended), naming the
 * first one it lacks. */
#define CHECK_MESSAGE(msg, want)                                                               \
    do {                                                                                       \
        const char* hy_m_ = (msg);                                                             \
        for (const char* const* hy_w_ = (want); *hy_w_; hy_w_++) {                             \
            hy_test_checks++;                                                                  \
            if (!hy_m_ || !strstr(hy_m_, *hy_w_)) {                                            \
                hy_test_failures++;                                                            \
                fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__,     \
                        hy_m_ ? hy_m_ : "(null)", *hy_w_);                                     \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* A uniform double in [0, 1) from a xorshift64 state (fixed seeds give
 * the same numbers on every machine). */
static inline double hy_test_uniform(uint64_t* s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) * (1.0 / 9007199254740992.0);
}

#define TEST_SKIP(why)                              \
    do {                                            \
        fprintf(stderr, "SKIPPED: %s\n", why);      \
        return 77;                                  \
    } while (0)

#define TEST_END()                                                                             \
    do {                                                                                       \
        fprintf(stderr, "%d checks, %d failed\n", hy_test_checks, hy_test_failures);           \
        if (hy_test_checks == 0) {                                                             \
            fprintf(stderr, "%s: no check ran\n", __FILE__);                                   \
            return 1;                                                                          \
        }                                                                                      \
        return hy_test_failures ? 1 : 0;                                                       \
    } while (0)

#endif
