/* Tests the elementary CCD tests (collision/ccd.h): hand-made unit cases
 * (hit, miss, touching at t=0 and t=1, sliding, parallel, coplanar, zero
 * motion, bad input) and randomized configurations built to meet exactly at
 * a chosen time, which must never be reported free; the volume-cubic time
 * restriction and the certified-root shortcut (collision/ccd_math.h), and
 * the conservative advancement that settles queries with a contact
 * distance (collision/ccd_query.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/ccd.h"
#include "collision/ccd_math.h"
#include "collision/ccd_query.h"
#include "test.h"

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng* r) {
    /* splitmix64: fixed seed, same sequence everywhere */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Integer in [lo, hi]. */
static int rng_int(rng* r, int lo, int hi) { return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1)); }

/* Small dyadic in [-range, range] with `bits` fractional bits: products and
 * sums of a few of them stay exact in double. */
static double dy(rng* r, int range, int bits) {
    int s = 1 << bits;
    return (double)rng_int(r, -range * s, range * s) / (double)s;
}

static void set3(double* p, double x, double y, double z) {
    p[0] = x;
    p[1] = y;
    p[2] = z;
}

static int vf(double x[8][3], double* toi) {
    return hy_ccd_vf(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], 0.0, toi);
}

static int ee(double x[8][3], double* toi) {
    return hy_ccd_ee(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], 0.0, toi);
}

/* Static unit triangle in z = 0 at both times. */
static void tri_static(double x[8][3]) {
    set3(x[1], 0, 0, 0);
    set3(x[2], 1, 0, 0);
    set3(x[3], 0, 1, 0);
    memcpy(x[5], x[1], sizeof x[1]);
    memcpy(x[6], x[2], sizeof x[2]);
    memcpy(x[7], x[3], sizeof x[3]);
}

static void test_vf_units(void) {
    double x[8][3], toi = -1.0;

    /* Clear hit: vertex falls through the triangle, crossing z=0 at t=0.5. */
    tri_static(x);
    set3(x[0], 0.25, 0.25, 1);
    set3(x[4], 0.25, 0.25, -1);
    CHECK(vf(x, &toi) == 1);
    /* toi must not be after the contact at 0.5 and is refined to 2^-16 at
     * least (TOI_BITS in ccd.c). */
    CHECK(toi <= 0.5 && toi >= 0.5 - 1.0 / 65536.0);

    /* Clear miss: same motion beside the triangle. */
    set3(x[0], 2, 2, 1);
    set3(x[4], 2, 2, -1);
    CHECK(vf(x, &toi) == 0);

    /* Passing just outside the hypotenuse (u + v = 1.001). */
    set3(x[0], 0.5005, 0.5005, 1);
    set3(x[4], 0.5005, 0.5005, -1);
    CHECK(vf(x, &toi) == 0);

    /* Touching at t = 0 only (moving away). */
    set3(x[0], 0.25, 0.25, 0);
    set3(x[4], 0.25, 0.25, 1);
    CHECK(vf(x, &toi) == 1);
    CHECK(toi == 0.0);

    /* Touching at t = 1 only (arriving). */
    set3(x[0], 0.25, 0.25, 1);
    set3(x[4], 0.25, 0.25, 0);
    CHECK(vf(x, &toi) == 1);
    CHECK(toi <= 1.0 && toi > 0.99);

    /* Touching a triangle vertex exactly at t = 1. */
    set3(x[0], 1, 0, 1);
    set3(x[4], 1, 0, 0);
    CHECK(vf(x, &toi) == 1);

    /* Coplanar: vertex slides in the triangle's plane into the triangle. */
    set3(x[0], -1, 0.25, 0);
    set3(x[4], 0.5, 0.25, 0);
    CHECK(vf(x, &toi) == 1);
    CHECK(toi <= 2.0 / 3.0);
    /* Coplanar, staying outside. */
    set3(x[0], -1, -0.25, 0);
    set3(x[4], 2, -0.25, 0);
    CHECK(vf(x, &toi) == 0);

    /* Sliding on the face the whole time. */
    set3(x[0], 0.1, 0.1, 0);
    set3(x[4], 0.3, 0.2, 0);
    CHECK(vf(x, &toi) == 1);
    CHECK(toi == 0.0);
    /* Sliding parallel just above it (1e-7). */
    set3(x[0], 0.1, 0.1, 1e-7);
    set3(x[4], 0.3, 0.2, 1e-7);
    CHECK(vf(x, &toi) == 0);

    /* Zero motion: resting on the face, or apart. */
    set3(x[0], 0.2, 0.2, 0);
    set3(x[4], 0.2, 0.2, 0);
    CHECK(vf(x, &toi) == 1);
    CHECK(toi == 0.0);
    set3(x[0], 0.2, 0.2, 0.5);
    set3(x[4], 0.2, 0.2, 0.5);
    CHECK(vf(x, &toi) == 0);

    /* Degenerate triangle (collinear) crossed by the vertex. */
    set3(x[1], 0, 0, 0);
    set3(x[2], 1, 0, 0);
    set3(x[3], 2, 0, 0);
    memcpy(x[5], x[1], sizeof x[1]);
    memcpy(x[6], x[2], sizeof x[2]);
    memcpy(x[7], x[3], sizeof x[3]);
    set3(x[0], 1.5, 1, 0);
    set3(x[4], 1.5, -1, 0);
    CHECK(vf(x, &toi) == 1);
    CHECK(toi <= 0.5);

    /* min_distance: passing 0.01 above the face. */
    tri_static(x);
    set3(x[0], 0.2, 0.2, 0.01);
    set3(x[4], 0.3, 0.2, 0.01);
    CHECK(hy_ccd_vf(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], 0.02, &toi) == 1);
    CHECK(hy_ccd_vf(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], 0.005, &toi) == 0);

    /* Non-finite input: nothing can be proven, so "collision" at t = 0. */
    set3(x[0], NAN, 0.2, 0.01);
    CHECK(vf(x, &toi) == 1);
    CHECK(toi == 0.0);
    set3(x[0], INFINITY, 0.2, 0.01);
    CHECK(vf(x, &toi) == 1);

    /* Very large and very small scales behave like unit scale. */
    double big[8][3], small[8][3];
    tri_static(x);
    set3(x[0], 0.25, 0.25, 1);
    set3(x[4], 0.25, 0.25, -1);
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) {
            big[i][k] = x[i][k] * 0x1p600;
            small[i][k] = x[i][k] * 0x1p-600;
        }
    CHECK(vf(big, &toi) == 1);
    CHECK(toi <= 0.5);
    CHECK(vf(small, &toi) == 1);
    CHECK(toi <= 0.5);
}

static void test_ee_units(void) {
    double x[8][3], toi = -1.0;

    /* Clear hit: crossing edges, one moving down through the other. */
    set3(x[0], -1, 0, 1);
    set3(x[1], 1, 0, 1);
    set3(x[2], 0, -1, 0);
    set3(x[3], 0, 1, 0);
    set3(x[4], -1, 0, -1);
    set3(x[5], 1, 0, -1);
    memcpy(x[6], x[2], sizeof x[2]);
    memcpy(x[7], x[3], sizeof x[3]);
    CHECK(ee(x, &toi) == 1);
    CHECK(toi <= 0.5 && toi >= 0.5 - 1.0 / 65536.0);

    /* Clear miss: moving past the end of the other edge. */
    set3(x[0], 2, 0, 1);
    set3(x[1], 3, 0, 1);
    set3(x[4], 2, 0, -1);
    set3(x[5], 3, 0, -1);
    CHECK(ee(x, &toi) == 0);

    /* Parallel edges sliding along each other in contact. */
    set3(x[0], 0, 0, 0);
    set3(x[1], 1, 0, 0);
    set3(x[2], 0.5, 0, 0);
    set3(x[3], 1.5, 0, 0);
    set3(x[4], 1, 0, 0);
    set3(x[5], 2, 0, 0);
    memcpy(x[6], x[2], sizeof x[2]);
    memcpy(x[7], x[3], sizeof x[3]);
    CHECK(ee(x, &toi) == 1);
    CHECK(toi == 0.0);
    /* ... and sliding parallel at a 1e-7 gap. */
    for (int i = 0; i < 8; i++)
        if (i == 0 || i == 1 || i == 4 || i == 5) x[i][2] = 1e-7;
    CHECK(ee(x, &toi) == 0);

    /* Collinear edges approaching end to end, meeting at t = 0.5. */
    set3(x[0], -2, 0, 0);
    set3(x[1], -1, 0, 0);
    set3(x[4], 0, 0, 0);
    set3(x[5], 1, 0, 0);
    set3(x[2], 0, 0, 0);
    set3(x[3], 1, 0, 0);
    set3(x[6], 0, 0, 0);
    set3(x[7], 1, 0, 0);
    CHECK(ee(x, &toi) == 1);
    CHECK(toi <= 0.5);
    /* Collinear, stopping short. */
    set3(x[4], -1.5, 0, 0);
    set3(x[5], -0.5, 0, 0);
    set3(x[6], 0, 0, 0);
    set3(x[7], 1, 0, 0);
    CHECK(ee(x, &toi) == 0);

    /* Touching at t = 1 only, and at t = 0 only. */
    set3(x[0], -1, 0, 1);
    set3(x[1], 1, 0, 1);
    set3(x[4], -1, 0, 0);
    set3(x[5], 1, 0, 0);
    set3(x[2], 0, -1, 0);
    set3(x[3], 0, 1, 0);
    memcpy(x[6], x[2], sizeof x[2]);
    memcpy(x[7], x[3], sizeof x[3]);
    CHECK(ee(x, &toi) == 1);
    CHECK(toi > 0.99 && toi <= 1.0);
    set3(x[0], -1, 0, 0);
    set3(x[1], 1, 0, 0);
    set3(x[4], -1, 0, 1);
    set3(x[5], 1, 0, 1);
    CHECK(ee(x, &toi) == 1);
    CHECK(toi == 0.0);

    /* Zero motion, zero-length edge sitting on the other edge. */
    set3(x[0], 0, 0.5, 0);
    set3(x[1], 0, 0.5, 0);
    memcpy(x[4], x[0], sizeof x[0]);
    memcpy(x[5], x[1], sizeof x[1]);
    CHECK(ee(x, &toi) == 1);
    CHECK(toi == 0.0);
    /* ... and just off it. */
    set3(x[0], 1e-9, 0.5, 0);
    set3(x[1], 1e-9, 0.5, 0);
    memcpy(x[4], x[0], sizeof x[0]);
    memcpy(x[5], x[1], sizeof x[1]);
    CHECK(ee(x, &toi) == 0);
}

/* Position at t = 1 - ... : a point with position s_at at time ts and
 * velocity w has x0 = s_at - ts w, x1 = s_at + (1 - ts) w (exact here). */
static void place(double* x0, double* x1, const double* at, const double* w, double ts) {
    for (int k = 0; k < 3; k++) {
        x0[k] = at[k] - ts * w[k];
        x1[k] = at[k] + (1.0 - ts) * w[k];
    }
}

/* Random configurations that meet exactly at a chosen time ts: coordinates
 * are small dyadics, so every construction step below is exact in double,
 * and the true first contact is at or before ts. Some draws make velocities
 * zero, equal (no relative motion), or flatten everything into a plane, to
 * reach the degenerate cases. */
static void test_random_constructed(int n, uint64_t seed, int ts_bits) {
    rng r = {seed};
    int fn = 0, late = 0;
    for (int it = 0; it < n; it++) {
        int is_vf = it & 1;
        int mode = rng_int(&r, 0, 5);
        /* ts_bits 6: contacts on cell boundaries of the time restriction;
         * 20: generic times inside cells (still exact: 26-bit products) */
        double ts = (double)rng_int(&r, 0, 1 << ts_bits) / (double)(1 << ts_bits);
        double at[4][3], w[4][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) {
                at[i][k] = dy(&r, 2, 6);
                w[i][k] = dy(&r, 2, 6);
            }
        if (mode == 1) /* no relative motion */
            for (int i = 1; i < 4; i++) memcpy(w[i], w[0], sizeof w[0]);
        if (mode == 2) /* everything in the plane z = 0 */
            for (int i = 0; i < 4; i++) at[i][2] = w[i][2] = 0.0;
        if (mode == 3) /* static */
            for (int i = 0; i < 4; i++) w[i][0] = w[i][1] = w[i][2] = 0.0;
        if (mode == 4) { /* parallel edges / a sliver triangle */
            for (int k = 0; k < 3; k++) {
                at[3][k] = at[2][k] + (at[1][k] - at[0][k]);
                w[3][k] = w[2][k] + (w[1][k] - w[0][k]);
            }
        }
        double x[8][3];
        double u = (double)rng_int(&r, 0, 16) / 16.0, v = (double)rng_int(&r, 0, 16) / 16.0;
        double meet[3];
        if (is_vf) {
            /* vertex at barycentric (1-u-v, u, v) of the triangle at ts */
            if (u + v > 1.0) {
                u = 1.0 - u;
                v = 1.0 - v;
            }
            for (int k = 0; k < 3; k++)
                meet[k] = at[1][k] + u * (at[2][k] - at[1][k]) + v * (at[3][k] - at[1][k]);
            memcpy(at[0], meet, sizeof meet);
        } else {
            /* point u on edge (0,1) = point v on edge (2,3); move edge a */
            for (int k = 0; k < 3; k++) {
                double pa = at[0][k] + u * (at[1][k] - at[0][k]);
                double pb = at[2][k] + v * (at[3][k] - at[2][k]);
                at[0][k] += pb - pa;
                at[1][k] += pb - pa;
            }
        }
        for (int i = 0; i < 4; i++) place(x[i], x[4 + i], at[i], w[i], ts);
        double toi = 2.0;
        int hit = is_vf ? vf(x, &toi) : ee(x, &toi);
        if (!hit) {
            fn++;
            if (fn <= 5) fprintf(stderr, "false negative: it %d %s mode %d ts %g\n", it, is_vf ? "vf" : "ee", mode, ts);
        } else if (!(toi >= 0.0 && toi <= ts)) {
            late++;
            if (late <= 5) fprintf(stderr, "late toi: it %d toi %.17g > ts %g\n", it, toi, ts);
        }
    }
    CHECK(fn == 0);
    CHECK(late == 0);
}

/* Random configurations with a contact distance md: at a chosen time ts
 * a point of one primitive lies a fraction f < 1 of md from a point of the
 * other, along a random direction (often in the primitives' plane: the
 * sliding contacts that the in-plane and closest-point directions of the
 * box search exist for), so the pair is within md by ts. The answer must
 * be a contact at or before ts, with the default options (no slack: the
 * Euclidean bounds, the shortcuts for pairs within md at t = 0 or at a
 * sampled time) and with the step's. Half of the draws also sit the pair
 * within md at t = 0 or t = 1. */
static void test_random_distance(int n, uint64_t seed) {
    rng r = {seed};
    int fn = 0, late = 0, capped = 0;
    long long boxes = 0;
    const double mds[3] = {0.01, 0.05, 0.2};
    for (int it = 0; it < n; it++) {
        int is_vf = it & 1;
        int planar = rng_int(&r, 0, 2) == 0;
        double md = mds[rng_int(&r, 0, 2)];
        int tb = rng_int(&r, 0, 3);
        double ts = tb == 0 ? 0.0 : tb == 1 ? 1.0 : (double)rng_int(&r, 0, 64) / 64.0;
        double at[4][3], w[4][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) {
                at[i][k] = dy(&r, 2, 6);
                w[i][k] = dy(&r, 2, 6);
            }
        if (planar)
            for (int i = 0; i < 4; i++) at[i][2] = w[i][2] = 0.0;
        double u = (double)rng_int(&r, 0, 16) / 16.0, v = (double)rng_int(&r, 0, 16) / 16.0;
        double off[3], len = 0.0;
        do {
            len = 0.0;
            for (int k = 0; k < 3; k++) {
                off[k] = planar && k == 2 ? 0.0 : dy(&r, 1, 10);
                len += off[k] * off[k];
            }
        } while (len < 1e-4);
        double f = 0.05 + 0.94 * (double)rng_int(&r, 0, 1000) / 1000.0;
        for (int k = 0; k < 3; k++) off[k] *= f * md / sqrt(len);
        if (is_vf) {
            if (u + v > 1.0) {
                u = 1.0 - u;
                v = 1.0 - v;
            }
            for (int k = 0; k < 3; k++)
                at[0][k] = at[1][k] + u * (at[2][k] - at[1][k]) + v * (at[3][k] - at[1][k]) + off[k];
        } else {
            for (int k = 0; k < 3; k++) {
                double pa = at[0][k] + u * (at[1][k] - at[0][k]);
                double pb = at[2][k] + v * (at[3][k] - at[2][k]);
                at[0][k] += pb - pa + off[k];
                at[1][k] += pb - pa + off[k];
            }
        }
        double x[8][3];
        for (int i = 0; i < 4; i++) place(x[i], x[4 + i], at[i], w[i], ts);
        for (int opt = 0; opt < 2; opt++) {
            hy_ccd_options o = opt ? hy_ccd_options_step() : hy_ccd_options_default();
            hy_ccd_info info;
            double toi = 2.0;
            int hit = hy_ccd_query(is_vf, x, md, &o, &toi, &info);
            boxes += info.boxes;
            capped += info.capped;
            if (!hit) {
                fn++;
                if (fn <= 5)
                    fprintf(stderr, "distance false negative: it %d %s md %g f %.3f ts %g opt %d\n", it,
                            is_vf ? "vf" : "ee", md, f, ts, opt);
            } else if (!(toi >= 0.0 && toi <= ts + 1e-12)) {
                late++;
                if (late <= 5) fprintf(stderr, "distance late toi: it %d toi %.17g > ts %g\n", it, toi, ts);
            }
        }
    }
    printf("distance: %d queries x 2 option sets, %.1f boxes per query, %d capped\n", n, (double)boxes / (2.0 * n),
           capped);
    CHECK(fn == 0);
    CHECK(late == 0);
}

/* Translating approaches with a contact distance, where the first time
 * within md is known in closed form: a vertex falling onto a triangle's
 * interior, and an edge falling onto a crossing edge, each along the
 * common normal from height h0 to h1, meet md at t* = (h0 - md) / (h0 - h1).
 * The default (tight) options settle these by conservative advancement
 * without a box search: the toi is t* to rounding (the box search alone
 * gives 2^-16), never after it. Ending just beyond md (1e-7 relative) is a
 * miss, just inside it a contact. */
static void test_advance(int n, uint64_t seed) {
    rng r = {seed};
    int wrong = 0, boxes = 0;
    double worst = 0.0;
    for (int it = 0; it < n; it++) {
        int is_vf = it & 1;
        int kind = rng_int(&r, 0, 2); /* 0: crossing inside the step, 1: near miss, 2: just inside at t = 1 */
        double md = 0.001 * (1 + rng_int(&r, 0, 99));
        double h0 = md * (1.5 + 10.0 * (double)rng_int(&r, 0, 1000) / 1000.0);
        double h1 = kind == 0 ? md * (0.9 - 1.8 * (double)rng_int(&r, 0, 1000) / 1000.0)
                              : md * (kind == 1 ? 1.0 + 1e-7 : 1.0 - 1e-7);
        /* a random frame: two tangents and the normal, from a random unit vector */
        double nz[3], len = 0.0;
        do {
            len = 0.0;
            for (int k = 0; k < 3; k++) {
                nz[k] = dy(&r, 1, 10);
                len += nz[k] * nz[k];
            }
        } while (len < 0.05);
        for (int k = 0; k < 3; k++) nz[k] /= sqrt(len);
        double ax[3] = {1, 0, 0};
        if (fabs(nz[0]) > 0.6) set3(ax, 0, 1, 0);
        double tx[3], ty[3];
        tx[0] = ax[1] * nz[2] - ax[2] * nz[1];
        tx[1] = ax[2] * nz[0] - ax[0] * nz[2];
        tx[2] = ax[0] * nz[1] - ax[1] * nz[0];
        len = sqrt(tx[0] * tx[0] + tx[1] * tx[1] + tx[2] * tx[2]);
        for (int k = 0; k < 3; k++) tx[k] /= len;
        ty[0] = nz[1] * tx[2] - nz[2] * tx[1];
        ty[1] = nz[2] * tx[0] - nz[0] * tx[2];
        ty[2] = nz[0] * tx[1] - nz[1] * tx[0];
        double c[3], drift[3];
        for (int k = 0; k < 3; k++) {
            c[k] = dy(&r, 4, 6);
            drift[k] = dy(&r, 1, 6); /* both sides translate together by drift as well */
        }
        double loc[4][3]; /* (tangent x, tangent y, height at t = 0) of the four points */
        if (is_vf) {
            double a = 0.5 + (double)rng_int(&r, 0, 100) / 100.0;
            double pl[4][2] = {{0.1 * a, 0.1 * a}, {-a, -a}, {2 * a, -a}, {-a, 2 * a}};
            for (int i = 0; i < 4; i++) {
                loc[i][0] = pl[i][0];
                loc[i][1] = pl[i][1];
                loc[i][2] = i == 0 ? 1.0 : 0.0;
            }
        } else {
            double a = 0.5 + (double)rng_int(&r, 0, 100) / 100.0, ang = 0.3 + 2.5 * (double)rng_int(&r, 0, 100) / 100.0;
            double l2[4][2] = {{-a, 0.1}, {a, 0.1}, {-a * cos(ang), -a * sin(ang)}, {a * cos(ang), a * sin(ang)}};
            for (int i = 0; i < 4; i++) {
                loc[i][0] = l2[i][0];
                loc[i][1] = l2[i][1];
                loc[i][2] = i < 2 ? 1.0 : 0.0;
            }
        }
        double x[8][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) {
                double base = c[k] + loc[i][0] * tx[k] + loc[i][1] * ty[k];
                x[i][k] = base + loc[i][2] * h0 * nz[k];
                x[4 + i][k] = base + loc[i][2] * h1 * nz[k] + drift[k];
            }
        hy_ccd_options o = hy_ccd_options_default();
        hy_ccd_info info;
        double toi = 2.0;
        int hit = hy_ccd_query(is_vf, (const double(*)[3])x, md, &o, &toi, &info);
        boxes += info.boxes;
        double ts = kind == 1 ? 2.0 : (h0 - md) / (h0 - h1);
        int ok = kind == 1 ? !hit : hit && toi <= ts + 1e-12 && ts - toi < 1e-9;
        if (hit && kind != 1) worst = fmax(worst, fabs(ts - toi));
        if (!ok && ++wrong <= 5)
            fprintf(stderr, "advance: it %d %s kind %d hit %d toi %.17g t* %.17g\n", it, is_vf ? "vf" : "ee", kind, hit,
                    toi, ts);
    }
    printf("advance: %d translating queries, %d boxes in all, largest |toi - t*| %.3g\n", n, boxes, worst);
    CHECK(wrong == 0);
    CHECK(boxes == 0);
}

/* Squared distance from p to segment (a, b). */
static double seg_point_d2(const double* a, const double* b, const double* p) {
    double ab[3], ap[3], l2 = 0.0, t = 0.0;
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ap[k] = p[k] - a[k];
        l2 += ab[k] * ab[k];
        t += ab[k] * ap[k];
    }
    t = l2 > 0.0 ? fmin(1.0, fmax(0.0, t / l2)) : 0.0;
    double d2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double d = ap[k] - t * ab[k];
        d2 += d * d;
    }
    return d2;
}

/* Random free-form configurations: whenever the test says "free", a dense
 * scan of the separation (sampled times, sampled points of one primitive
 * against the other) must never come near zero. A sampled separation below
 * 1e-9 of the scene size with a "free" answer would be a missed contact. */
static void test_random_scan(int n, uint64_t seed) {
    rng r = {seed};
    int bad = 0, hits = 0;
    for (int it = 0; it < n; it++) {
        double x[8][3];
        for (int i = 0; i < 8; i++)
            for (int k = 0; k < 3; k++) x[i][k] = dy(&r, 1, 10);
        double toi;
        /* edge-edge only: the point-segment distance is exact enough. */
        int hit = ee(x, &toi);
        hits += hit;
        if (hit) continue;
        double mind2 = INFINITY;
        for (int ti = 0; ti <= 64; ti++) {
            double t = ti / 64.0, pos[4][3];
            for (int i = 0; i < 4; i++)
                for (int k = 0; k < 3; k++) pos[i][k] = x[i][k] + t * (x[4 + i][k] - x[i][k]);
            for (int si = 0; si <= 64; si++) {
                double s = si / 64.0, p[3];
                for (int k = 0; k < 3; k++) p[k] = pos[0][k] + s * (pos[1][k] - pos[0][k]);
                mind2 = fmin(mind2, seg_point_d2(pos[2], pos[3], p));
            }
        }
        if (mind2 < 1e-18) bad++;
    }
    CHECK(bad == 0);
    /* Random segments in a unit cube do collide sometimes; both answers
     * must occur or the scan tested nothing. */
    CHECK(hits > 0 && hits < n);
}

/* Bernstein coefficients of (t - r0)(t - r1)(t - r2) on [0, 1]. */
static void cubic_from_roots(const double r[3], double c[4]) {
    /* monomial a0 + a1 t + a2 t^2 + t^3 */
    double a0 = -r[0] * r[1] * r[2];
    double a1 = r[0] * r[1] + r[0] * r[2] + r[1] * r[2];
    double a2 = -(r[0] + r[1] + r[2]);
    double a3 = 1.0;
    c[0] = a0;
    c[1] = a0 + a1 / 3.0;
    c[2] = a0 + 2.0 * a1 / 3.0 + a2 / 3.0;
    c[3] = a0 + a1 + a2 + a3;
}

/* The time restriction keeps a slab around every root of the volume cubic
 * (roots at generic times, on cell boundaries and at the ends), drops the
 * root-free cubic entirely, and gives up on an identically zero one. */
static void test_vol_slabs(void) {
    const int level = 17;
    const double w = 1.0 / 131072.0;
    const double cases[4][3] = {{0.3, 0.5, 0.7}, {0.123456789, 0.9, 2.0}, {0.0, 1.0, -1.0}, {0.25, 0.25 + 1e-9, 3.0}};
    for (int ci = 0; ci < 4; ci++) {
        double c[4], sl[16];
        cubic_from_roots(cases[ci], c);
        /* error bound of the coefficient computation above: a few units of
         * rounding of their magnitude (all below 8) */
        int n = hy_ccd_vol_slabs(c, 1e-14, level, 16, 120, sl);
        CHECK(n > 0 && n <= 8);
        for (int ri = 0; ri < 3; ri++) {
            double r = cases[ci][ri];
            if (r < 0.0 || r > 1.0) continue;
            int found = 0;
            for (int i = 0; i < n; i++)
                if (sl[i] <= r && r <= sl[i] + w) found = 1;
            CHECK(found);
        }
        for (int i = 1; i < n; i++) CHECK(sl[i] > sl[i - 1]); /* earliest first */
    }
    double c[4] = {1.0, 0.5, 0.25, 2.0}, sl[16];
    CHECK(hy_ccd_vol_slabs(c, 1e-14, level, 16, 120, sl) == 0);
    double z[4] = {0.0, 0.0, 0.0, 0.0};
    CHECK(hy_ccd_vol_slabs(z, 1e-14, level, 16, 120, sl) == -1);
}

/* Random roots: every root of the cubic in [0, 1] lies in a slab, both
 * when the bracketed Newton search of hy_ccd_vol_cell finds its cell at
 * once (one root in the interval) and when splits separate close roots. */
static void test_vol_slabs_random(void) {
    const int level = 17;
    const double w = 1.0 / 131072.0;
    rng r = {77};
    int64_t roots = 0, missed = 0, empty = 0;
    for (int it = 0; it < 20000; it++) {
        double rt[3];
        for (int i = 0; i < 3; i++) rt[i] = (double)(rng_next(&r) >> 11) * 0x1p-53 * 1.6 - 0.3;
        if (it % 4 == 0) rt[1] = rt[0] + 1e-4 * (double)rng_int(&r, 1, 100); /* close pairs */
        double c[4], sl[16];
        cubic_from_roots(rt, c);
        int n = hy_ccd_vol_slabs(c, 1e-14, level, 16, 120, sl);
        if (n < 0) continue; /* gave up: the caller searches all of [0, 1] */
        empty += n == 0;
        for (int i = 0; i < 3; i++) {
            if (rt[i] < 0.0 || rt[i] > 1.0) continue;
            roots++;
            int found = 0;
            for (int k = 0; k < n; k++)
                if (sl[k] <= rt[i] && rt[i] <= sl[k] + w) found = 1;
            missed += !found;
        }
    }
    fprintf(stderr, "vol slabs: %lld roots in [0, 1], %lld missed, %lld root-free cubics\n", (long long)roots,
            (long long)missed, (long long)empty);
    CHECK(roots > 20000);
    CHECK(missed == 0);
    CHECK(empty > 0);
}

/* hy_ccd_vol_sums (SSE2 on the host) gives the bits of the scalar form
 * CUDA runs, over points at several scales. */
static void test_vol_sums(void) {
    rng r = {5};
    const double scales[4] = {1.0, 1e-3, 1e5, 0x1p-30};
    int64_t bad = 0;
    for (int it = 0; it < 40000; it++) {
        double pts[8][3];
        double sc = scales[it % 4];
        for (int i = 0; i < 8; i++)
            for (int k = 0; k < 3; k++) pts[i][k] = ((double)(rng_next(&r) >> 11) * 0x1p-53 - 0.5) * sc;
        const double* x[8];
        for (int i = 0; i < 8; i++) x[i] = pts[i];
        double b[4], abc[3], want[4], wabc[3];
        hy_ccd_vol_sums(x, x + 4, b, abc);
        hy_ccd_vol_sums_scalar(x, x + 4, want, wabc);
        bad += memcmp(b, want, sizeof b) != 0 || memcmp(abc, wabc, sizeof abc) != 0;
    }
    CHECK(bad == 0);
}

/* Work counts (deterministic): a transversal crossing, the common true
 * contact of real frames, is settled by one certified box instead of a
 * bisection down to rounding level, with the time still to 2^-16; a box
 * around a near miss is never certified. */
static void test_certified(void) {
    double x[8][3], toi = -1.0;
    hy_ccd_info info;
    /* edges crossing at t = 0.3 (not a dyadic), u = 0.4, v = 0.6 */
    set3(x[0], -0.4, 0, 0.3);
    set3(x[1], 0.6, 0, 0.3);
    set3(x[2], 0, -0.6, 0);
    set3(x[3], 0, 0.4, 0);
    set3(x[4], -0.4, 0, -0.7);
    set3(x[5], 0.6, 0, -0.7);
    memcpy(x[6], x[2], sizeof x[2]);
    memcpy(x[7], x[3], sizeof x[3]);
    CHECK(hy_ccd_query(0, (const double(*)[3])x, 0.0, NULL, &toi, &info) == 1);
    CHECK(info.boxes <= 2 && !info.capped);
    CHECK(toi <= 0.3 && toi >= 0.3 - 1.0 / 65536.0);
    /* vertex through a tilted triangle at t = 0.6 */
    set3(x[1], 0, 0, 0);
    set3(x[2], 1, 0, 0.1);
    set3(x[3], 0, 1, 0.2);
    memcpy(x[5], x[1], sizeof x[1]);
    memcpy(x[6], x[2], sizeof x[2]);
    memcpy(x[7], x[3], sizeof x[3]);
    set3(x[0], 0.2, 0.3, 0.08 + 0.6);
    set3(x[4], 0.2, 0.3, 0.08 - 0.4);
    CHECK(hy_ccd_query(1, (const double(*)[3])x, 0.0, NULL, &toi, &info) == 1);
    CHECK(info.boxes <= 2 && !info.capped);
    CHECK(toi <= 0.6 && toi >= 0.6 - 1.0 / 65536.0);

    /* Certification on its own, on the box t in [0, 2^-20], u, v within
     * 2^-20 of 0.5: edges crossing at right angles, one moving up by 1e-3
     * over the step. Starting 1e-9 above the other they never meet (no
     * root: refused); placed to meet at t = 2^-21, the box's centre, they
     * do (accepted). */
    for (int meet = 0; meet < 2; meet++) {
        double y[8][3];
        set3(y[0], -1, 0, meet ? 0.0 : 1e-9);
        set3(y[1], 1, 0, meet ? 0.0 : 1e-9);
        set3(y[2], 0, -1, 0);
        set3(y[3], 0, 1, 0);
        for (int i = 0; i < 4; i++) memcpy(y[4 + i], y[i], sizeof y[i]);
        y[4][2] += 1e-3;
        y[5][2] += 1e-3;
        const double* p[8];
        for (int i = 0; i < 8; i++) p[i] = y[i];
        hy_ccd_problem_d pr;
        hy_ccd_problem_init_d(&pr, p, 0, 0.0, 2.0, 1e-9, 16, 0.0);
        hy_ccd_box b = {{0.0, 0.5 - 0x1p-20, 0.5 - 0x1p-20}, {0x1p-20, 0.5 + 0x1p-20, 0.5 + 0x1p-20}, {20, 20, 20}};
        if (meet) {
            y[0][2] = y[1][2] = -0x1p-21 * 1e-3 / (1.0 - 0x1p-21);
            y[4][2] = y[5][2] = y[0][2] + 1e-3 / (1.0 - 0x1p-21);
            hy_ccd_problem_init_d(&pr, p, 0, 0.0, 2.0, 1e-9, 16, 0.0);
        }
        CHECK(hy_ccd_certify_d(&pr, &b) == meet);
    }
}

/* hy_ccd_slab_apart (collision/ccd_query.h) never separates a slab that
 * holds a contact: features built from small dyadics to meet exactly at a
 * dyadic time t* (where x0 + t* (x1 - x0) is exact), the vertex anywhere on
 * the closed triangle and the edges' crossing anywhere on the closed
 * segments, corners and sides included; every slab of width 2^-12 or 2^-6
 * with t* in it must stay. A slab away from t* is mostly separated. */
static void test_slab_apart(void) {
    rng r = {2026};
    const double tstar[5] = {0.125, 0.25, 0.5, 0.75, 0.875};
    int64_t kept_bad = 0, far_slabs = 0, far_apart = 0;
    for (int it = 0; it < 20000; it++) {
        int is_vf = it % 2 == 0;
        double ts = tstar[rng_int(&r, 0, 4)];
        double at[4][3]; /* the four points at t* */
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) at[i][k] = dy(&r, 2, 4);
        /* parameters on a grid of eighths, ends included */
        double u = rng_int(&r, 0, 8) / 8.0, v = rng_int(&r, 0, 8) / 8.0;
        if (is_vf && u + v > 1.0) {
            u = 1.0 - u;
            v = 1.0 - v;
        }
        if (is_vf) {
            for (int k = 0; k < 3; k++) at[0][k] = at[1][k] + u * (at[2][k] - at[1][k]) + v * (at[3][k] - at[1][k]);
        } else {
            /* the crossing X = a + u (b - a); d = c + (X - c) / v, v a
             * power of two (exact) */
            v = ldexp(1.0, -rng_int(&r, 0, 3));
            for (int k = 0; k < 3; k++) {
                double X = at[0][k] + u * (at[1][k] - at[0][k]);
                at[3][k] = at[2][k] + (X - at[2][k]) / v;
            }
        }
        double x[8][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) {
                double x0 = dy(&r, 2, 4);
                /* x1 = x0 + (at - x0) / t*: exact for t* = 2^-j; for
                 * t* = 1 - 2^-j build x0 from x1 instead */
                if (ts <= 0.5) {
                    x[i][k] = x0;
                    x[4 + i][k] = x0 + (at[i][k] - x0) / ts;
                } else {
                    x[4 + i][k] = x0;
                    x[i][k] = x0 - (x0 - at[i][k]) / (1.0 - ts);
                }
            }
        const double* p[8];
        double pm = 0.0;
        for (int i = 0; i < 8; i++) {
            p[i] = x[i];
            for (int k = 0; k < 3; k++) pm = fmax(pm, fabs(x[i][k]));
        }
        const double widths[2] = {0x1p-12, 0x1p-6};
        for (int wi = 0; wi < 2; wi++) {
            double w = widths[wi];
            kept_bad += hy_ccd_slab_apart(p, is_vf, ts - w, ts, pm);
            kept_bad += hy_ccd_slab_apart(p, is_vf, ts, ts + w, pm);
            kept_bad += hy_ccd_slab_apart(p, is_vf, ts - 0.5 * w, ts + 0.5 * w, pm);
        }
        double lo = ts <= 0.5 ? ts + 0.25 : ts - 0.25;
        far_slabs++;
        far_apart += hy_ccd_slab_apart(p, is_vf, lo, lo + 0x1p-12, pm);
    }
    printf("slab apart: %lld of 120000 slabs holding a contact separated (must be 0); %lld of %lld away from it\n",
           (long long)kept_bad, (long long)far_apart, (long long)far_slabs);
    CHECK(kept_bad == 0);
    CHECK(far_apart > far_slabs / 2);
}

/* The options and info interface: the cap forces a conservative answer. */
static void test_options(void) {
    double x[8][3], toi = -1.0;
    tri_static(x);
    set3(x[0], 0.25, 0.25, 1);
    set3(x[4], 0.25, 0.25, -1);
    hy_ccd_options o = hy_ccd_options_default();
    hy_ccd_info info;
    CHECK(hy_ccd_query(1, (const double(*)[3])x, 0.0, &o, &toi, &info) == 1);
    CHECK(info.boxes > 0 && !info.capped);
    o.max_boxes = 1;
    set3(x[0], 0.5, 0.5, 1); /* passes through the hypotenuse: no root */
    set3(x[4], 0.5, 0.5, -1); /* inside the domain, no separating axis */
    int hit = hy_ccd_query(1, (const double(*)[3])x, 0.0, &o, &toi, &info);
    CHECK(hit == 1 && info.capped == 1 && toi >= 0.0 && toi <= 1.0);
    o = hy_ccd_options_default();
    CHECK(hy_ccd_query(1, (const double(*)[3])x, 0.0, &o, &toi, &info) == 1 && info.boxes > 1);
    /* Just outside the hypotenuse: the separating axes of the time slab
     * settle it without a box. */
    set3(x[0], 0.500002, 0.500002, 1);
    set3(x[4], 0.500002, 0.500002, -1);
    CHECK(hy_ccd_query(1, (const double(*)[3])x, 0.0, &o, &toi, &info) == 0 && info.boxes == 0);
}


/* The step's shortcut for pairs already close at the start (the step's
 * options carry a distance slack, so no conservative advancement): two
 * points of the features within md in every coordinate at t = 0 (the
 * closest points' separation, hy_ccd_box_within_at0) settle the query as a
 * contact at t = 0, which must be what the box search alone answers.
 * Random features are placed with their closest points 0.5 to 2.5 md
 * apart at t = 0 along a random direction (so some are within md in every
 * coordinate but not in length) and moved randomly; every pair the
 * shortcut settles is searched from the whole domain with the step's
 * options, which must give the same contact at t = 0. A pair within md
 * (1 + slack) at t = 0 but not within md in every coordinate may count as
 * a contact (the slack's contract): when it does, it is at t = 0. */
static void test_step_resting(int n, uint64_t seed) {
    rng r = {seed};
    int settled = 0, slack_settled = 0, bad = 0;
    const double mds[3] = {0.002, 0.01, 0.05};
    hy_ccd_options o = hy_ccd_options_step();
    hy_ccd_options_clamp(&o);
    hy_ccd_box* heap = malloc(sizeof *heap * hy_ccd_heap_boxes(&o));
    CHECK(heap != NULL);
    if (!heap) return;
    for (int it = 0; it < n; it++) {
        int is_vf = it & 1;
        double md = mds[rng_int(&r, 0, 2)];
        double at[4][3], w[4][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) {
                at[i][k] = dy(&r, 1, 8);
                w[i][k] = dy(&r, 1, 12) * md * (double)rng_int(&r, 0, 40);
            }
        double u = (double)rng_int(&r, 0, 16) / 16.0, v = (double)rng_int(&r, 0, 16) / 16.0;
        double off[3], len = 0.0;
        do {
            len = 0.0;
            for (int k = 0; k < 3; k++) {
                off[k] = dy(&r, 1, 10);
                len += off[k] * off[k];
            }
        } while (len < 1e-4);
        double f = 0.5 + 2.0 * (double)rng_int(&r, 0, 1000) / 1000.0;
        for (int k = 0; k < 3; k++) off[k] *= f * md / sqrt(len);
        if (is_vf) {
            if (u + v > 1.0) {
                u = 1.0 - u;
                v = 1.0 - v;
            }
            for (int k = 0; k < 3; k++)
                at[0][k] = at[1][k] + u * (at[2][k] - at[1][k]) + v * (at[3][k] - at[1][k]) + off[k];
        } else {
            for (int k = 0; k < 3; k++) {
                double pa = at[0][k] + u * (at[1][k] - at[0][k]);
                double pb = at[2][k] + v * (at[3][k] - at[2][k]);
                at[0][k] += pb - pa + off[k];
                at[1][k] += pb - pa + off[k];
            }
        }
        double x[8][3];
        for (int i = 0; i < 4; i++) place(x[i], x[4 + i], at[i], w[i], 0.0);
        const double* p[8];
        double m = 0.0;
        for (int i = 0; i < 8; i++) {
            p[i] = x[i];
            for (int k = 0; k < 3; k++) m = fmax(m, fabs(x[i][k]));
        }
        double r_in = md * (1.0 - 8.0 * DBL_EPSILON) - 32.0 * DBL_EPSILON * m;
        double toi = 2.0;
        int hit = hy_ccd_query(is_vf, x, md, &o, &toi, NULL);
        hy_ccd_problem_d pr;
        hy_ccd_problem_init_d(&pr, p, is_vf, md, o.accept_factor, o.twist_rel, o.toi_bits, o.min_distance_slack);
        hy_ccd_stats st = {0, 0, 0, 0};
        double ts = 2.0;
        int shit = hy_ccd_search_d(&pr, heap, o.max_boxes, &ts, &st);
        int close = hy_ccd_box_within_at0(p, is_vf, r_in);
        if (!close) {
            /* within md (1 + slack) at t = 0: such a pair may count as a
             * contact (the slack's contract); one that passes the early
             * outs (swept boxes apart by md, ...) is a contact at t = 0,
             * without the search */
            double r_slack = md * (1.0 + o.min_distance_slack) * (1.0 - 8.0 * DBL_EPSILON) - 32.0 * DBL_EPSILON * m;
            if (!hy_ccd_within_at(p, is_vf, 0.0, r_slack)) continue;
            slack_settled += hit;
            if (hit && toi != 0.0 && ++bad <= 5)
                fprintf(stderr, "step resting (slack): it %d %s md %g f %.3f: query %d toi %g\n", it,
                        is_vf ? "vf" : "ee", md, f, hit, toi);
            continue;
        }
        settled++;
        if (hit && toi == 0.0 && shit && ts == 0.0) continue;
        if (++bad <= 5)
            fprintf(stderr, "step resting: it %d %s md %g f %.3f: query %d toi %g, search %d toi %g\n", it,
                    is_vf ? "vf" : "ee", md, f, hit, toi, shit, ts);
    }
    free(heap);
    printf("step resting: %d queries, %d settled at t = 0 by the shortcut, %d more within the slack at t = 0, %d mismatches\n",
           n, settled, slack_settled, bad);
    CHECK(settled > n / 8);
    CHECK(slack_settled > n / 20);
    CHECK(settled < n); /* some are not within md in every coordinate */
    CHECK(bad == 0);
}

/* need_toi = 0 (only the answer wanted, as the whole-step pipeline asks):
 * with a distance the same answers as the default options on random
 * features passing near each other, a time in [0, 1] (a time before which
 * every time was excluded, not refined: it may lie after the default's,
 * which is only no later than the contact), and fewer boxes. */
static void test_need_toi(int n, uint64_t seed) {
    rng r = {seed};
    int hits = 0, differ = 0, out = 0;
    long long boxes[2] = {0, 0};
    const double mds[3] = {0.01, 0.05, 0.2};
    for (int it = 0; it < n; it++) {
        int is_vf = it & 1;
        double md = mds[rng_int(&r, 0, 2)];
        double x[8][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) {
                double at = dy(&r, 1, 8), w = dy(&r, 1, 8);
                x[i][k] = at - 0.5 * w;
                x[4 + i][k] = at + 0.5 * w;
            }
        hy_ccd_options o = hy_ccd_options_default();
        hy_ccd_info info;
        double t1 = 2.0, t0 = 2.0;
        int h1 = hy_ccd_query(is_vf, x, md, &o, &t1, &info);
        boxes[0] += info.boxes;
        o.need_toi = 0;
        int h0 = hy_ccd_query(is_vf, x, md, &o, &t0, &info);
        boxes[1] += info.boxes;
        hits += h1;
        differ += h0 != h1;
        out += h0 && !(t0 >= 0.0 && t0 <= 1.0);
    }
    printf("need_toi 0: %d queries, %d contacts, %d answers differ, %lld -> %lld boxes\n", n, hits, differ, boxes[0],
           boxes[1]);
    CHECK(hits > n / 10 && hits < n);
    CHECK(differ == 0);
    CHECK(out == 0);
    CHECK(boxes[1] < boxes[0]);
}

int main(void) {
    int full = getenv("HY_TEST_FULL") && atoi(getenv("HY_TEST_FULL"));
    test_vf_units();
    test_ee_units();
    test_options();
    test_vol_slabs();
    test_vol_slabs_random();
    test_slab_apart();
    test_vol_sums();
    test_certified();
    test_random_constructed(full ? 400000 : 40000, 12345, 6);
    test_random_constructed(full ? 400000 : 40000, 4242, 20);
    test_random_scan(full ? 20000 : 2000, 777);
    test_random_distance(full ? 200000 : 20000, 9090);
    test_advance(full ? 100000 : 10000, 5151);
    test_step_resting(full ? 100000 : 10000, 2718);
    test_need_toi(full ? 100000 : 10000, 3141);
    TEST_END();
}
