/* The proximity framework's online learning of the real resources' costs. */
#include "sched/proximity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sched/prox_internal.h"

/* Under the real clock, the costs of the real resources follow what their
 * batches took. The calibration measures a folded cloth, but a test or a
 * node pair costs what the scene makes it cost (n-body's LEAF jobs are
 * mostly culled by the filters, a fold's reach the exact test), and a
 * batch's fixed cost what the step's batches make it; wrong ratios between
 * resources send the policy's jobs the wrong way. So setup(i, c) and
 * proc(i, c) are refitted, as `hyphys calibrate` fits them, by least
 * squares over i's batches of kind c (time less copies against units of
 * work) once LEARN_MIN_UNITS units are in (with batch sizes too alike for
 * a line, proc alone under the setup held): proc
 * within a factor LEARN_RANGE of the calibrated value, setup at most
 * LEARN_RANGE times it (or LEARN_SETUP_MAX); a staged GPU's upload becomes
 * its copies per job. Older runs weigh less (LEARN_DECAY per run), so the
 * costs follow a scene that changes. Results do not depend on it (a job's
 * outcome does not depend on where it runs); the virtual clock, whose
 * resources are all charged from their profiles, never learns.
 *
 * A GPU's engage cost (sched/model.h: what a run's first batch on it costs
 * whatever its jobs: synchronising, sending the trees that changed) is the
 * mean of what its runs' first batches took beyond the fitted line, older
 * runs weighing less, never below 0 nor above LEARN_ENGAGE_MAX (one stalled
 * batch must not keep a GPU out of the runs for long). Without it a light
 * step, whose fixed costs outweigh its jobs, looks cheap on the GPU: the
 * per-job costs spread the trees' upload over many jobs. */
#define LEARN_MIN_UNITS 256.0
#define LEARN_RANGE 16.0
#define LEARN_SETUP_MAX 1e-3
#define LEARN_DECAY 0.5
#define LEARN_ENGAGE_MAX 0.05
void hy_prox_learn_costs(hy_prox* p) {
    if (p->clock != HY_CLOCK_REAL) return;
    for (int i = 0; i < p->R; i++) {
        if (p->res[i].modeled) continue;
        double* E = p->learn_engage[i];
        if (E[1] > 0.0) p->model.device[i].engage = fmin(fmax(E[0] / E[1], 0.0), LEARN_ENGAGE_MAX);
        E[0] *= LEARN_DECAY;
        E[1] *= LEARN_DECAY;
        for (int k = 0; k < HY_JOB_KINDS; k++) {
            double* L = p->learn[i][k];
            hy_device_costs* c = &p->model.device[i].cost[k];
            const hy_device_costs* cal = &p->calibrated[i].cost[k];
            double vx = L[L_N] * L[L_XX] - L[L_X] * L[L_X];
            if (L[L_X] >= LEARN_MIN_UNITS && cal->proc > 0.0) {
                double lo = cal->proc / LEARN_RANGE, hi = cal->proc * LEARN_RANGE;
                double cap = fmax(cal->setup * LEARN_RANGE, LEARN_SETUP_MAX);
                if (L[L_N] >= 2.0 && vx > 0.01 * L[L_N] * L[L_XX]) { /* sizes spread enough for a line */
                    double proc = (L[L_N] * L[L_XY] - L[L_X] * L[L_Y]) / vx;
                    double setup = (L[L_Y] - proc * L[L_X]) / L[L_N];
                    if (setup < 0.0) /* through the origin */
                        proc = L[L_XX] > 0.0 ? L[L_XY] / L[L_XX] : proc;
                    /* proc within its range, then the setup that keeps the
                     * line through the batches' mean, within its own */
                    c->proc = fmin(fmax(proc, lo), hi);
                    c->setup = fmin(fmax((L[L_Y] - c->proc * L[L_X]) / L[L_N], 0.0), cap);
                } else { /* batches nearly alike: keep the setup, fit proc */
                    double proc = (L[L_Y] - c->setup * L[L_N]) / L[L_X];
                    c->proc = fmin(fmax(proc, lo), hi);
                }
            }
            if (p->model.device[i].staged && L[L_JOBS] > 0.0) c->upload = L[L_COPY] / L[L_JOBS];
            for (int q = 0; q < LEARN_SUMS; q++) L[q] *= LEARN_DECAY;
        }
    }
}
