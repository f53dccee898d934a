/* The report of the interceptor's sample program, shared by intercept/sample.cu
 * and its C twin (tests/cudart_double/sample_twin.c) so that both print the
 * same lines: sums of y (expected 1498750: y = (1 + 12 i) / 4, i < 1000) and
 * z (expected 506500: z = 7 + i), exact in float and double. Returns the
 * exit status: 0 when the sums are right, the device was kept after every
 * launch and no error is pending. */
#ifndef HY_INTERCEPT_SAMPLE_REPORT_H
#define HY_INTERCEPT_SAMPLE_REPORT_H

#include <stdio.h>

static inline int hy_sample_report(const float* y, const float* z, int n, int version, int launches, int kept,
                                   int err) {
    double sy = 0, sz = 0;
    for (int i = 0; i < n; i++) sy += y[i], sz += z[i];
    printf("sample: runtime %d\n", version);
    printf("sample: launches %d, current device kept after %d\n", launches, kept);
    printf("sample: sum y %.2f (expect 1498750.00), sum z %.2f (expect 506500.00)\n", sy, sz);
    printf("sample: last error %d\n", err);
    return sy == 1498750.0 && sz == 506500.0 && kept == launches && err == 0 ? 0 : 1;
}

#endif
