/* The progress estimate of `hyphys run` (cli/progress.c): the rate and the
 * time left follow the recent steps, not the first ones. Step times are
 * given, not measured: the cloth_ball pattern of 17 free-fall steps at
 * 50 ms, then contact steps 50 times as long. */
#include <math.h>

#include "cli/progress.h"
#include "test.h"

/* after the given steps of `cost` seconds each, from t */
static double steps(hy_cli_progress* p, long* done, double t, int n, double cost) {
    for (int i = 0; i < n; i++) {
        t += cost;
        hy_cli_progress_add(p, ++*done, t);
    }
    return t;
}

int main(void) {
    hy_cli_progress p;
    long done = 0;
    /* nothing known before the first step */
    hy_cli_progress_start(&p, 100.0);
    CHECK(hy_cli_progress_rate(&p) == 0.0);
    CHECK(hy_cli_progress_eta(&p, 60) < 0.0);

    /* free fall: 20 steps/s, 43 steps left of 60 */
    double t = steps(&p, &done, 100.0, 17, 0.05);
    CHECK_NEAR(hy_cli_progress_rate(&p), 20.0, 1e-6);
    CHECK_NEAR(hy_cli_progress_eta(&p, 60), 43 * 0.05, 1e-6);

    /* contact: 2.5 s a step. After four of them (10 s, the window) the
     * estimate is that of the contact steps alone: 39 left at 2.5 s. An
     * average from the start would say 39 * (0.85 + 10) / 21 = 20 s. */
    t = steps(&p, &done, t, 4, 2.5);
    CHECK_NEAR(hy_cli_progress_rate(&p), 0.4, 1e-6);
    CHECK_NEAR(hy_cli_progress_eta(&p, 60), 39 * 2.5, 1e-6);
    /* after the first contact step only, it already says most of it: the
     * window reaches back over the 17 fast steps (10 s of wall time not yet
     * passed), so 18 steps in 3.35 s... */
    hy_cli_progress q;
    long dq = 0;
    hy_cli_progress_start(&q, 0.0);
    double tq = steps(&q, &dq, 0.0, 17, 0.05);
    steps(&q, &dq, tq, 1, 2.5);
    CHECK_NEAR(hy_cli_progress_rate(&q), 18.0 / 3.35, 1e-6);
    /* ... and after the second, 19 in 5.85 s (after four, as above, the
     * contact steps alone) */
    steps(&q, &dq, tq + 2.5, 1, 2.5);
    CHECK_NEAR(hy_cli_progress_rate(&q), 19.0 / 5.85, 1e-6);

    /* back to fast steps: the estimate follows within the window */
    t = steps(&p, &done, t, 300, 0.05);
    CHECK_NEAR(hy_cli_progress_rate(&p), 20.0, 1e-6);
    CHECK_NEAR(hy_cli_progress_eta(&p, 400), (400 - 321) * 0.05, 1e-6);
    /* done: nothing left */
    CHECK(hy_cli_progress_eta(&p, 321) == 0.0);

    /* more steps than the ring keeps within the window: the oldest kept */
    hy_cli_progress r;
    long dr = 0;
    hy_cli_progress_start(&r, 0.0);
    steps(&r, &dr, 0.0, 1000, 0.001);
    CHECK_NEAR(hy_cli_progress_rate(&r), 1000.0, 1e-6);
    TEST_END();
}
