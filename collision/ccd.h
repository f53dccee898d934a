/* Elementary continuous collision tests for linear motion over t in [0, 1].
 *
 * Both tests are conservative: if the primitives come within `min_distance`
 * (0 = touch) at some t in [0, 1] they report a collision (never a false
 * negative, including the degenerate sliding / parallel / coplanar cases).
 * They may report a few pairs that pass close without touching. *toi gets a
 * time of impact no later than the true first contact (0 <= toi <= 1).
 * Vertex order follows the shared data set (docs/CCD.md). */
#ifndef HY_COLLISION_CCD_H
#define HY_COLLISION_CCD_H

/* Vertex p against triangle (a, b, c): positions at t=0 then t=1. */
int hy_ccd_vf(const double p0[3], const double a0[3], const double b0[3], const double c0[3], const double p1[3],
              const double a1[3], const double b1[3], const double c1[3], double min_distance, double* toi);

/* Edge (a, b) against edge (c, d). */
int hy_ccd_ee(const double a0[3], const double b0[3], const double c0[3], const double d0[3], const double a1[3],
              const double b1[3], const double c1[3], const double d1[3], double min_distance, double* toi);

#endif
