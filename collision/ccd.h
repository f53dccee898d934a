/* Elementary continuous collision tests for linear motion over t in [0, 1].
 *
 * Both tests are conservative: if the primitives come within `min_distance`
 * (0 = touch) at some t in [0, 1] they report a collision (never a false
 * negative, including the degenerate sliding / parallel / coplanar cases).
 * They may report a few pairs that pass close without touching. *toi gets a
 * time of impact no later than the true first contact (0 <= toi <= 1).
 * Vertex order follows the shared data set (docs/design/CCD.md). */
#ifndef HY_COLLISION_CCD_H
#define HY_COLLISION_CCD_H

#ifdef __cplusplus
extern "C" {
#endif

/* Vertex p against triangle (a, b, c): positions at t=0 then t=1. */
int hy_ccd_vf(const double p0[3], const double a0[3], const double b0[3], const double c0[3], const double p1[3],
              const double a1[3], const double b1[3], const double c1[3], double min_distance, double* toi);

/* Edge (a, b) against edge (c, d). */
int hy_ccd_ee(const double a0[3], const double b0[3], const double c0[3], const double d0[3], const double a1[3],
              const double b1[3], const double c1[3], const double d1[3], double min_distance, double* toi);

/* Tuning and statistics for callers that want them (the evaluator, tests).
 * hy_ccd_vf / hy_ccd_ee use hy_ccd_options_default(). */
typedef struct hy_ccd_options {
    int max_boxes;        /* work cap in box evaluations; past it: "collision" */
    double accept_factor; /* a box within accept_factor * rounding bound of
                             touching counts as touching (>= 1) */
    double twist_rel;     /* an unseparated box whose corner values are affine
                             within twist_rel * largest |coordinate| counts as
                             a contact (only trades false positives for speed) */
    int toi_bits;         /* ... once its time span is at most 2^-toi_bits */
    int refine_boxes;     /* work cap of the long double re-check of a
                             reported contact (0: no re-check) */
    double refine_twist_rel; /* twist_rel of the re-check */
    double min_distance_slack; /* with min_distance > 0: pairs up to
                                  min_distance * (1 + slack) apart may count
                                  as contacts (0 by default) */
    int need_toi; /* 1 (default): *toi is the time of impact to toi_bits;
                     0: only whether there is a contact matters: with
                     min_distance > 0 and no slack, a pair certainly
                     within min_distance at one of a few sampled times is
                     reported at once with *toi = 0 (the same answer, and
                     a time no later than any contact) */
} hy_ccd_options;

typedef struct hy_ccd_info {
    int boxes;        /* boxes evaluated (0 when an early-out decided) */
    int refine_boxes; /* ... of which in the long double re-check */
    int capped; /* 1 when the work cap forced the conservative answer */
} hy_ccd_info;

hy_ccd_options hy_ccd_options_default(void);

/* Settings for the simulation step: thickness queries of resting contacts
 * sit on the decision boundary for the whole step, where the default
 * settings bisect down to rounding level. The step needs neither that
 * resolution nor a precise time: a small work cap, 8 bits of time, no
 * long double re-check and a 50% distance slack keep every contact (the
 * answers stay conservative) and make such queries cheap; the response
 * ignores the extra pairs that are not approaching. */
hy_ccd_options hy_ccd_options_step(void);

/* Either test on x[0..3] at t=0 and x[4..7] at t=1, in the order above
 * (is_vf: p, a, b, c; else a, b, c, d). opts and info may be NULL. */
int hy_ccd_query(int is_vf, const double x[8][3], double min_distance, const hy_ccd_options* opts, double* toi,
                 hy_ccd_info* info);

#ifdef __cplusplus
}
#endif

#endif
