/* The root finder of collision/ccd_math.h, written once against
 * HY_CCD_REAL: one query in relative form, box evaluation with its
 * rigorous exclusion bound, Newton starts and certification, and the
 * earliest-first search. No include guard: ccd_math.h includes it once per
 * arithmetic type, with HY_CCD_REAL, HY_CCD_FN and HY_CCD_UNIT defined
 * (double, suffix _d; on the host also long double, suffix _ld). Include
 * collision/ccd_math.h, not this file. */
#ifndef HY_CCD_REAL
#error "collision/ccd_root.h is instantiated by collision/ccd_math.h; include that"
#endif

/* One query in relative form: at time end s (0 or 1),
 * F_s(u, v) = q_s + u e_s - w(u, v) f_s with w = v (1-u) (duffy) or v. */
typedef struct HY_CCD_FN(hy_ccd_problem) {
    HY_CCD_REAL q[2][3], e[2][3], f[2][3];
    HY_CCD_REAL eps[3];      /* rigorous bound on |computed F_k - exact F_k| */
    HY_CCD_REAL axis_thr[3]; /* eps_k + min_distance, rounded up */
    HY_CCD_REAL accept[3];   /* |F_k| bound under which a box counts as touching */
    HY_CCD_REAL md;          /* min_distance, scaled */
    HY_CCD_REAL twist_tol;   /* nonlinearity under which an unseparated box is a contact */
    int t_level;             /* time bisection depth required before accepting on twist */
    int tight;               /* md > 0 with no slack: Euclidean distance bounds and the extra
                                directions of hy_ccd_box_eval (hy_ccd_problem_init) */
    int certain;             /* a contact is known to exist (a point within md at t = 1): an
                                unexcluded box is accepted once its time span is short */
    int duffy;
    int bounded;             /* eps .. twist_tol and t_level made (hy_ccd_problem_bounds) */
} HY_CCD_FN(hy_ccd_problem);

HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_rmin)(HY_CCD_REAL a, HY_CCD_REAL b) { return a < b ? a : b; }
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_rmax)(HY_CCD_REAL a, HY_CCD_REAL b) { return a > b ? a : b; }
/* As a max of a and -a: compiles to a branch-free max (a compare-and-
 * branch form cannot, as it must keep the sign of -0). */
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_rabs)(HY_CCD_REAL a) { return HY_CCD_FN(hy_ccd_rmax)(a, -a); }

/* Fill the relative form (hy_ccd_problem_init below: the frame, then the
 * bounds; the frame alone is all Newton's method reads). x[0..3] are the
 * 4 positions at t=0, x[4..7] at t=1, already scaled. For vertex-face
 * x = (p, a, b, c); for edge-edge x = (a, b, c, d). acc_factor scales the touching tolerance in units of
 * eps (>= 1); twist_rel is the nonlinearity tolerance relative to the
 * largest coordinate; t_level the time bisection depth before a box may be
 * accepted on that tolerance; md_slack (>= 0) lets a box count as touching
 * up to md * (1 + md_slack) away, and adds md_slack * md / 2 to the twist
 * tolerance (only more false positives, never fewer contacts). */
HY_HD void HY_CCD_FN(hy_ccd_problem_frame)(HY_CCD_FN(hy_ccd_problem) * pr, const double* const* x, int is_vf,
                                           double md, int t_level, double md_slack) {
    pr->duffy = is_vf;
    pr->certain = 0;
    pr->bounded = 0;
    /* Callers that allow a slack (the step's tests) keep the L1 bounds
     * and the plain direction set: their contacts, and so the simulated
     * motion, do not depend on these refinements. */
    pr->tight = md > 0 && md_slack == 0;
    pr->md = md;
    pr->t_level = t_level;
    for (int s = 0; s < 2; s++) {
        const double* p0 = x[4 * s + 0];
        const double* p1 = x[4 * s + 1];
        const double* p2 = x[4 * s + 2];
        const double* p3 = x[4 * s + 3];
        for (int k = 0; k < 3; k++) {
            if (is_vf) {
                /* F = (p - a) + u (a - b) - v (1-u) (c - a) */
                pr->q[s][k] = (HY_CCD_REAL)p0[k] - (HY_CCD_REAL)p1[k];
                pr->e[s][k] = (HY_CCD_REAL)p1[k] - (HY_CCD_REAL)p2[k];
                pr->f[s][k] = (HY_CCD_REAL)p3[k] - (HY_CCD_REAL)p1[k];
            } else {
                /* F = (a - c) + u (b - a) - v (d - c) */
                pr->q[s][k] = (HY_CCD_REAL)p0[k] - (HY_CCD_REAL)p2[k];
                pr->e[s][k] = (HY_CCD_REAL)p1[k] - (HY_CCD_REAL)p0[k];
                pr->f[s][k] = (HY_CCD_REAL)p3[k] - (HY_CCD_REAL)p2[k];
            }
        }
    }
}

/* The rest of hy_ccd_problem_init: the rounding bounds, tolerances and
 * time depth that certification and the box search read (Newton needs
 * only the frame), for a problem made by hy_ccd_problem_frame with the
 * same x and md. */
HY_HD void HY_CCD_FN(hy_ccd_problem_bounds)(HY_CCD_FN(hy_ccd_problem) * pr, const double* const* x, double md,
                                            double acc_factor, double twist_rel, double md_slack) {
    HY_CCD_REAL mall = 0;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL m = 0;
        for (int i = 0; i < 8; i++) m = HY_CCD_FN(hy_ccd_rmax)(m, HY_CCD_FN(hy_ccd_rabs)((HY_CCD_REAL)x[i][k]));
        /* 34 units derived in docs/design/CCD.md; 48 leaves room for the O(u^2)
         * terms and for rounding in this product. */
        pr->eps[k] = 48 * HY_CCD_UNIT * m + (HY_CCD_REAL)DBL_MIN;
        pr->axis_thr[k] = (pr->eps[k] + (HY_CCD_REAL)md) * (1 + 4 * HY_CCD_UNIT);
        pr->accept[k] = (HY_CCD_REAL)md * (1 + (HY_CCD_REAL)md_slack) + (HY_CCD_REAL)acc_factor * pr->eps[k];
        mall = HY_CCD_FN(hy_ccd_rmax)(mall, m);
    }
    pr->twist_tol = (HY_CCD_REAL)twist_rel * mall + (HY_CCD_REAL)(0.5 * md_slack * md);
    /* Nothing moves relative to anything: F does not depend on t, a contact
     * at any time is one at the start of its box, so time needs no
     * refinement. */
    int moving = 0;
    for (int k = 0; k < 3; k++)
        if (pr->q[0][k] != pr->q[1][k] || pr->e[0][k] != pr->e[1][k] || pr->f[0][k] != pr->f[1][k]) moving = 1;
    if (!moving) pr->t_level = 0;
    pr->bounded = 1;
}

HY_HD void HY_CCD_FN(hy_ccd_problem_init)(HY_CCD_FN(hy_ccd_problem) * pr, const double* const* x, int is_vf,
                                          double md, double acc_factor, double twist_rel, int t_level,
                                          double md_slack) {
    HY_CCD_FN(hy_ccd_problem_frame)(pr, x, is_vf, md, t_level, md_slack);
    HY_CCD_FN(hy_ccd_problem_bounds)(pr, x, md, acc_factor, twist_rel, md_slack);
}

/* Corner values of F over a box: F[ti][ui][vi][k]. */
HY_HD void HY_CCD_FN(hy_ccd_corners)(const HY_CCD_FN(hy_ccd_problem) * pr, const hy_ccd_box* b,
                                     HY_CCD_REAL F[2][2][2][3]) {
    HY_CCD_REAL G[2][2][2][3]; /* [time end][ui][vi][k] */
    for (int ui = 0; ui < 2; ui++) {
        HY_CCD_REAL u = ui ? b->hi[1] : b->lo[1];
        for (int vi = 0; vi < 2; vi++) {
            HY_CCD_REAL v = vi ? b->hi[2] : b->lo[2];
            HY_CCD_REAL w = pr->duffy ? v * (1 - u) : v;
            for (int s = 0; s < 2; s++)
                for (int k = 0; k < 3; k++) G[s][ui][vi][k] = (pr->q[s][k] + u * pr->e[s][k]) - w * pr->f[s][k];
        }
    }
    for (int ti = 0; ti < 2; ti++) {
        HY_CCD_REAL t = ti ? b->hi[0] : b->lo[0];
        HY_CCD_REAL s0 = 1 - t;
        for (int ui = 0; ui < 2; ui++)
            for (int vi = 0; vi < 2; vi++)
                for (int k = 0; k < 3; k++) F[ti][ui][vi][k] = G[0][ui][vi][k] * s0 + G[1][ui][vi][k] * t;
    }
}

/* 1 if direction d separates all 8 corners from the origin by more than the
 * rounding bound (plus min_distance). fmx_k bounds |F_k| at the corners. */
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_dir_bound)(const HY_CCD_FN(hy_ccd_problem) * pr, const HY_CCD_REAL d[3],
                                              const HY_CCD_REAL fmx[3]) {
    HY_CCD_REAL bound = 0, dl1 = 0;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL a = HY_CCD_FN(hy_ccd_rabs)(d[k]);
        /* error of F_k, plus gamma_3 rounding of the dot product */
        bound += a * (pr->eps[k] + 4 * HY_CCD_UNIT * fmx[k]);
        dl1 += a;
    }
    return (bound + pr->md * dl1) * (1 + 64 * HY_CCD_UNIT) + (HY_CCD_REAL)DBL_MIN;
}

/* An upper bound on |d|_2, given |d|_1 = dl1 (itself one, the fallback
 * when the squared norm ss under- or overflowed). */
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_norm2_up)(HY_CCD_REAL dl1, HY_CCD_REAL ss) {
    if (!(ss >= (HY_CCD_REAL)0x1p-1000 && ss <= (HY_CCD_REAL)0x1p1000)) return dl1;
    /* ss carries a few units of rounding, the conversion to double and
     * the square root one more each: 2^-40 covers them */
    HY_CCD_REAL n = (HY_CCD_REAL)(sqrt((double)ss) * (1.0 + 0x1p-40));
    return n < dl1 ? n : dl1;
}

/* Separation along d with min_distance counted along |d|_2: a point of the
 * hull within md of the origin (Euclidean) projects within md |d|_2, so
 * this never excludes it. (hy_ccd_dir_bound counts md along |d|_1, up to
 * sqrt(3) times more: with md > 0 that leaves a shell of distances that a
 * box is neither excluded from nor accepted in, and resting pairs at about
 * md away ran to the work cap in it.) */
HY_HD int HY_CCD_FN(hy_ccd_dir_separates)(const HY_CCD_FN(hy_ccd_problem) * pr, const HY_CCD_REAL d[3],
                                          const HY_CCD_REAL* Fc, const HY_CCD_REAL fmx[3]) {
    HY_CCD_REAL bound;
    if (pr->tight) {
        HY_CCD_REAL rb = 0, dl1 = 0;
        for (int k = 0; k < 3; k++) {
            HY_CCD_REAL a = HY_CCD_FN(hy_ccd_rabs)(d[k]);
            rb += a * (pr->eps[k] + 4 * HY_CCD_UNIT * fmx[k]);
            dl1 += a;
        }
        HY_CCD_REAL dl2 = HY_CCD_FN(hy_ccd_norm2_up)(dl1, (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2]);
        bound = (rb + pr->md * dl2) * (1 + 64 * HY_CCD_UNIT) + (HY_CCD_REAL)DBL_MIN;
    } else {
        bound = HY_CCD_FN(hy_ccd_dir_bound)(pr, d, fmx);
    }
    HY_CCD_REAL mn = Fc[0] * d[0] + Fc[1] * d[1] + Fc[2] * d[2], mx = mn;
    for (int i = 1; i < 8; i++) {
        const HY_CCD_REAL* F = Fc + 3 * i;
        HY_CCD_REAL dot = (d[0] * F[0] + d[1] * F[1]) + d[2] * F[2];
        mn = HY_CCD_FN(hy_ccd_rmin)(mn, dot);
        mx = HY_CCD_FN(hy_ccd_rmax)(mx, dot);
        if (mn <= bound && mx >= -bound) return 0;
    }
    return mn > bound || mx < -bound;
}

/* 1 if the origin lies deep inside the slab of every face normal and axis:
 * with F nearly affine on the box a root is then certain, far beyond what
 * rounding could fake, and no re-check in wider arithmetic is needed. */
HY_HD int HY_CCD_FN(hy_ccd_robust)(const HY_CCD_FN(hy_ccd_problem) * pr, const HY_CCD_REAL* Fc,
                                   const HY_CCD_REAL n[3][3], const HY_CCD_REAL fmx[3], HY_CCD_REAL twist) {
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL lo = Fc[k], hi = Fc[k];
        for (int i = 1; i < 8; i++) {
            lo = HY_CCD_FN(hy_ccd_rmin)(lo, Fc[3 * i + k]);
            hi = HY_CCD_FN(hy_ccd_rmax)(hi, Fc[3 * i + k]);
        }
        HY_CCD_REAL m = 16 * (pr->axis_thr[k] + twist);
        if (!(lo < -m && hi > m)) return 0;
    }
    for (int j = 0; j < 3; j++) {
        const HY_CCD_REAL* d = n[j];
        HY_CCD_REAL dl1 = HY_CCD_FN(hy_ccd_rabs)(d[0]) + HY_CCD_FN(hy_ccd_rabs)(d[1]) + HY_CCD_FN(hy_ccd_rabs)(d[2]);
        if (dl1 == 0) return 0;
        HY_CCD_REAL m = 16 * (HY_CCD_FN(hy_ccd_dir_bound)(pr, d, fmx) + twist * dl1);
        HY_CCD_REAL mn = Fc[0] * d[0] + Fc[1] * d[1] + Fc[2] * d[2], mx = mn;
        for (int i = 1; i < 8; i++) {
            const HY_CCD_REAL* F = Fc + 3 * i;
            HY_CCD_REAL dot = (d[0] * F[0] + d[1] * F[1]) + d[2] * F[2];
            mn = HY_CCD_FN(hy_ccd_rmin)(mn, dot);
            mx = HY_CCD_FN(hy_ccd_rmax)(mx, dot);
        }
        if (!(mn < -m && mx > m)) return 0;
    }
    return 1;
}

/* Evaluate one box; on HY_CCD_SPLIT, *split_dim is the parameter to bisect.
 * On HY_CCD_ACCEPTED, *robust says whether the contact is certain. */
HY_HD int HY_CCD_FN(hy_ccd_box_eval)(const HY_CCD_FN(hy_ccd_problem) * pr, const hy_ccd_box* b, int* split_dim,
                                     int* robust) {
    *robust = 0;
    HY_CCD_REAL F[2][2][2][3];
    HY_CCD_FN(hy_ccd_corners)(pr, b, F);
    const HY_CCD_REAL* Fc = &F[0][0][0][0];

    /* Axis test: the hull's bounding box misses the origin. */
    HY_CCD_REAL fmx[3];
    int inside = 1;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL lo = Fc[k], hi = Fc[k];
        for (int i = 1; i < 8; i++) {
            lo = HY_CCD_FN(hy_ccd_rmin)(lo, Fc[3 * i + k]);
            hi = HY_CCD_FN(hy_ccd_rmax)(hi, Fc[3 * i + k]);
        }
        if (lo > pr->axis_thr[k] || hi < -pr->axis_thr[k]) return HY_CCD_EXCLUDED;
        fmx[k] = HY_CCD_FN(hy_ccd_rmax)(-lo, hi);
        if (fmx[k] + pr->eps[k] > pr->accept[k]) inside = 0;
    }
    /* Touching within rounding: the earliest such box gives the time. */
    if (inside) return HY_CCD_ACCEPTED;

    /* Centroid direction: separates a hull that is small compared with its
     * distance to the origin (the usual near miss). */
    HY_CCD_REAL c[3] = {0, 0, 0};
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) c[k] += Fc[3 * i + k];
    if (HY_CCD_FN(hy_ccd_dir_separates)(pr, c, Fc, fmx)) return HY_CCD_EXCLUDED;

    /* Face normals of the hull: for F affine on the box the hull is a
     * parallelepiped spanned by the mean edge vectors D_t, D_u, D_v, and a
     * point outside it is separated by one of the three face normals. They
     * also catch flat hulls (a triangle's normal, two edges' common normal,
     * parallel edges sliding in a plane) that the centroid cannot. */
    HY_CCD_REAL D[3][3];
    for (int k = 0; k < 3; k++) {
        D[0][k] = (F[1][0][0][k] - F[0][0][0][k]) + (F[1][0][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[0][1][0][k]) +
                  (F[1][1][1][k] - F[0][1][1][k]);
        D[1][k] = (F[0][1][0][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][0][1][k]);
        D[2][k] = (F[0][0][1][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][1][0][k]) + (F[1][0][1][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][1][0][k]);
    }
    HY_CCD_REAL n[3][3];
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3;
        n[i][0] = D[i][1] * D[j][2] - D[i][2] * D[j][1];
        n[i][1] = D[i][2] * D[j][0] - D[i][0] * D[j][2];
        n[i][2] = D[i][0] * D[j][1] - D[i][1] * D[j][0];
        if ((n[i][0] != 0 || n[i][1] != 0 || n[i][2] != 0) && HY_CCD_FN(hy_ccd_dir_separates)(pr, n[i], Fc, fmx))
            return HY_CCD_EXCLUDED;
    }
    /* With a distance the region to stay clear of is a ball, and a flat
     * hull (short in time) beside it is apart along a direction in its
     * own plane, not along a face normal: try the in-plane normals of the
     * (u, v) face's edges (D_u, D_v, and their sum and difference, which
     * on a whole Duffy square lie along the triangle's sides).
     * Sliding contacts, where a feature moves in the other's plane, were
     * refined to the work cap without these. */
    if (pr->tight) {
        HY_CCD_REAL e[4][3], d[3];
        for (int k = 0; k < 3; k++) {
            e[0][k] = D[1][k];
            e[1][k] = D[2][k];
            e[2][k] = D[1][k] - D[2][k];
            e[3][k] = D[1][k] + D[2][k];
        }
        for (int i = 0; i < 4; i++) {
            d[0] = n[1][1] * e[i][2] - n[1][2] * e[i][1];
            d[1] = n[1][2] * e[i][0] - n[1][0] * e[i][2];
            d[2] = n[1][0] * e[i][1] - n[1][1] * e[i][0];
            if ((d[0] != 0 || d[1] != 0 || d[2] != 0) && HY_CCD_FN(hy_ccd_dir_separates)(pr, d, Fc, fmx))
                return HY_CCD_EXCLUDED;
        }
        /* And the direction to the point of the box's (u, v) patch at
         * mid-time closest to the origin (two triangles of its corners):
         * near the boundary of the ball the separating direction runs
         * from an edge or corner of the patch to the origin, along none of
         * the above. Any direction is a rigorous test; this one is only
         * chosen in double. */
        hy_v3 q[4], o3 = v3(0.0, 0.0, 0.0);
        for (int qc = 0; qc < 4; qc++) {
            const HY_CCD_REAL* f0 = Fc + 3 * qc;      /* t = lo: F[0][ui][vi] */
            const HY_CCD_REAL* f1 = Fc + 12 + 3 * qc; /* t = hi */
            q[qc] = v3((double)(0.5 * (f0[0] + f1[0])), (double)(0.5 * (f0[1] + f1[1])), (double)(0.5 * (f0[2] + f1[2])));
        }
        double best = INFINITY;
        hy_v3 dir = o3;
        for (int tri = 0; tri < 2; tri++) {
            /* corners 0 = (u lo, v lo), 1 = (lo, hi), 2 = (hi, lo), 3 = (hi, hi) */
            hy_v3 qa = q[0], qb = tri ? q[1] : q[2], qd = q[3];
            double wa, wb, wc;
            hy_closest_on_triangle(o3, qa, qb, qd, &wa, &wb, &wc);
            hy_v3 x = v3_add(v3_add(v3_scale(qa, wa), v3_scale(qb, wb)), v3_scale(qd, wc));
            double l2 = v3_len2(x);
            if (l2 < best) {
                best = l2;
                dir = x;
            }
        }
        if (best > 0.0 && best < INFINITY) {
            d[0] = (HY_CCD_REAL)dir.x;
            d[1] = (HY_CCD_REAL)dir.y;
            d[2] = (HY_CCD_REAL)dir.z;
            if (HY_CCD_FN(hy_ccd_dir_separates)(pr, d, Fc, fmx)) return HY_CCD_EXCLUDED;
        }
    }

    /* Not separated. Measure how far F is from affine on this box (twisted
     * edges): the face-normal test is exact for an affine F, so a box whose
     * nonlinear part is below the tolerance and which is still not separated
     * holds a contact (or a near miss closer than about the tolerance).
     * Accepting only decides false positives, never false negatives, and the
     * time of impact stays safe because boxes are searched earliest first. */
    HY_CCD_REAL twist = 0;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL tu = (F[1][1][0][k] - F[1][0][0][k]) - (F[0][1][0][k] - F[0][0][0][k]);
        HY_CCD_REAL tv = (F[1][0][1][k] - F[1][0][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        HY_CCD_REAL uv = (F[0][1][1][k] - F[0][1][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        HY_CCD_REAL uv1 = (F[1][1][1][k] - F[1][1][0][k]) - (F[1][0][1][k] - F[1][0][0][k]);
        tu = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(tu), HY_CCD_FN(hy_ccd_rabs)(tv));
        uv = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(uv), HY_CCD_FN(hy_ccd_rabs)(uv1));
        twist = HY_CCD_FN(hy_ccd_rmax)(twist, HY_CCD_FN(hy_ccd_rmax)(tu, uv));
    }
    HY_CCD_REAL spread[3];
    for (int d = 0; d < 3; d++) {
        HY_CCD_REAL s = (HY_CCD_FN(hy_ccd_rabs)(D[d][0]) + HY_CCD_FN(hy_ccd_rabs)(D[d][1])) +
                        HY_CCD_FN(hy_ccd_rabs)(D[d][2]);
        spread[d] = b->level[d] >= HY_CCD_MAX_LEVEL ? -1 : s;
    }
    /* A contact known to exist: what is left is its time, and every
     * earlier time was excluded, so a box short enough in time gives it
     * (precision as for the twist rule; a near miss just before the
     * contact can only make the time earlier, which is safe). */
    if (pr->certain && b->level[0] >= pr->t_level) {
        *robust = 1;
        return HY_CCD_ACCEPTED;
    }
    if (twist <= pr->twist_tol) {
        if (b->level[0] >= pr->t_level) {
            *robust = HY_CCD_FN(hy_ccd_robust)(pr, Fc, (const HY_CCD_REAL(*)[3])n, fmx, twist);
            return HY_CCD_ACCEPTED;
        }
        if (spread[0] >= 0) {
            *split_dim = 0; /* refine the time of impact */
            return HY_CCD_SPLIT;
        }
    }
    /* Split the parameter along which F varies most; a known contact
     * favours time (HY_CCD_CERTAIN_T_BIAS), which is all it needs. */
    int dim = 0;
    HY_CCD_REAL st = spread[0];
    if (pr->certain && st >= 0) st *= HY_CCD_CERTAIN_T_BIAS;
    if (spread[1] > st) dim = 1;
    if (spread[2] > (dim ? spread[1] : st)) dim = 2;
    if (spread[dim] < 0) return HY_CCD_ACCEPTED; /* cannot split: conservative */
    *split_dim = dim;
    return HY_CCD_SPLIT;
}

/* Newton's method on F = 0 from (t, u, v) (x[3]); 1 when it converges
 * inside [0, 1]^3 (an estimate only: hy_ccd_certify decides). */
HY_HD int HY_CCD_FN(hy_ccd_newton)(const HY_CCD_FN(hy_ccd_problem) * pr, double x[3], int iters) {
    for (int it = 0; it < iters; it++) {
        HY_CCD_REAL t = x[0], u = x[1], v = x[2];
        HY_CCD_REAL w = pr->duffy ? v * (1 - u) : v;
        HY_CCD_REAL wu = pr->duffy ? -v : 0, wv = pr->duffy ? 1 - u : 1;
        HY_CCD_REAL F[3], J[3][3]; /* J[k][j] = dF_k / dx_j */
        for (int k = 0; k < 3; k++) {
            HY_CCD_REAL q = (1 - t) * pr->q[0][k] + t * pr->q[1][k];
            HY_CCD_REAL e = (1 - t) * pr->e[0][k] + t * pr->e[1][k];
            HY_CCD_REAL f = (1 - t) * pr->f[0][k] + t * pr->f[1][k];
            F[k] = (q + u * e) - w * f;
            J[k][0] = ((pr->q[1][k] - pr->q[0][k]) + u * (pr->e[1][k] - pr->e[0][k])) - w * (pr->f[1][k] - pr->f[0][k]);
            J[k][1] = e - wu * f;
            J[k][2] = -wv * f;
        }
        /* Cramer: columns of J. */
        HY_CCD_REAL c12[3] = {J[1][1] * J[2][2] - J[2][1] * J[1][2], J[2][1] * J[0][2] - J[0][1] * J[2][2],
                              J[0][1] * J[1][2] - J[1][1] * J[0][2]};
        HY_CCD_REAL det = J[0][0] * c12[0] + J[1][0] * c12[1] + J[2][0] * c12[2];
        if (!(det != 0)) return 0;
        HY_CCD_REAL c20[3] = {J[1][2] * J[2][0] - J[2][2] * J[1][0], J[2][2] * J[0][0] - J[0][2] * J[2][0],
                              J[0][2] * J[1][0] - J[1][2] * J[0][0]};
        HY_CCD_REAL c01[3] = {J[1][0] * J[2][1] - J[2][0] * J[1][1], J[2][0] * J[0][1] - J[0][0] * J[2][1],
                              J[0][0] * J[1][1] - J[1][0] * J[0][1]};
        /* delta = -J^-1 F; row i of J^-1 is (column cross product)/det. */
        HY_CCD_REAL d0 = -(F[0] * c12[0] + F[1] * c12[1] + F[2] * c12[2]) / det;
        HY_CCD_REAL d1 = -(F[0] * c20[0] + F[1] * c20[1] + F[2] * c20[2]) / det;
        HY_CCD_REAL d2 = -(F[0] * c01[0] + F[1] * c01[1] + F[2] * c01[2]) / det;
        x[0] = (double)(t + d0);
        x[1] = (double)(u + d1);
        x[2] = (double)(v + d2);
        if (!(x[0] > -1 && x[0] < 2 && x[1] > -1 && x[1] < 2 && x[2] > -1 && x[2] < 2)) return 0;
        HY_CCD_REAL dm = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(d0), HY_CCD_FN(hy_ccd_rabs)(d1));
        /* converged far below the certification box (2^-24) */
        if (HY_CCD_FN(hy_ccd_rmax)(dm, HY_CCD_FN(hy_ccd_rabs)(d2)) < (HY_CCD_REAL)0x1p-32) break;
    }
    return x[0] >= 0 && x[0] <= 1 && x[1] >= 0 && x[1] <= 1 && x[2] >= 0 && x[2] <= 1;
}

/* Starting point for hy_ccd_newton at time t: F is affine in (u, w)
 * (w = v (1-u) for vertex-face, v for edge-edge), so solve the 3 x 2 system
 * in the plane of E and W by cross products. 0 when E and W are parallel
 * or the point is far outside [0, 1]^2 (then no contact is likely near t). */
HY_HD int HY_CCD_FN(hy_ccd_newton_start)(const HY_CCD_FN(hy_ccd_problem) * pr, double t, double x[3]) {
    HY_CCD_REAL Q[3], E[3], W[3];
    HY_CCD_REAL tt = t;
    for (int k = 0; k < 3; k++) {
        Q[k] = (1 - tt) * pr->q[0][k] + tt * pr->q[1][k];
        E[k] = (1 - tt) * pr->e[0][k] + tt * pr->e[1][k];
        W[k] = (1 - tt) * pr->f[0][k] + tt * pr->f[1][k];
    }
    HY_CCD_REAL n[3] = {E[1] * W[2] - E[2] * W[1], E[2] * W[0] - E[0] * W[2], E[0] * W[1] - E[1] * W[0]};
    HY_CCD_REAL nn = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    if (!(nn > 0)) return 0;
    HY_CCD_REAL qw[3] = {Q[1] * W[2] - Q[2] * W[1], Q[2] * W[0] - Q[0] * W[2], Q[0] * W[1] - Q[1] * W[0]};
    HY_CCD_REAL qe[3] = {Q[1] * E[2] - Q[2] * E[1], Q[2] * E[0] - Q[0] * E[2], Q[0] * E[1] - Q[1] * E[0]};
    HY_CCD_REAL u = -(qw[0] * n[0] + qw[1] * n[1] + qw[2] * n[2]) / nn;
    HY_CCD_REAL w = -(qe[0] * n[0] + qe[1] * n[1] + qe[2] * n[2]) / nn;
    HY_CCD_REAL v = w;
    if (pr->duffy) {
        HY_CCD_REAL r = 1 - u;
        v = r > (HY_CCD_REAL)1e-6 ? w / r : (HY_CCD_REAL)0.5;
    }
    x[0] = t;
    x[1] = (double)u;
    x[2] = (double)v;
    /* Near the contact time the in-plane solution moves by the time
     * error (2^-17 or less) times its rate: beyond 1e-3 outside the
     * square a root inside it is unlikely, and certification would fail. */
    return u > -1e-3 && u < 1 + 1e-3 && v > -1e-3 && v < 1 + 1e-3;
}

/* 1 when the box certainly holds a root of F (hy_ccd_robust: the origin
 * deep inside every face-normal slab and axis of the corner hull, far
 * beyond rounding and nonlinearity). Accepting on it adds no false
 * positive; it is never needed for a negative answer. */
HY_HD int HY_CCD_FN(hy_ccd_certify)(const HY_CCD_FN(hy_ccd_problem) * pr, const hy_ccd_box* b) {
    HY_CCD_REAL F[2][2][2][3];
    HY_CCD_FN(hy_ccd_corners)(pr, b, F);
    const HY_CCD_REAL* Fc = &F[0][0][0][0];
    HY_CCD_REAL fmx[3];
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL lo = Fc[k], hi = Fc[k];
        for (int i = 1; i < 8; i++) {
            lo = HY_CCD_FN(hy_ccd_rmin)(lo, Fc[3 * i + k]);
            hi = HY_CCD_FN(hy_ccd_rmax)(hi, Fc[3 * i + k]);
        }
        fmx[k] = HY_CCD_FN(hy_ccd_rmax)(-lo, hi);
    }
    HY_CCD_REAL D[3][3];
    for (int k = 0; k < 3; k++) {
        D[0][k] = (F[1][0][0][k] - F[0][0][0][k]) + (F[1][0][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[0][1][0][k]) +
                  (F[1][1][1][k] - F[0][1][1][k]);
        D[1][k] = (F[0][1][0][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][0][1][k]);
        D[2][k] = (F[0][0][1][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][1][0][k]) + (F[1][0][1][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][1][0][k]);
    }
    HY_CCD_REAL n[3][3];
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3;
        n[i][0] = D[i][1] * D[j][2] - D[i][2] * D[j][1];
        n[i][1] = D[i][2] * D[j][0] - D[i][0] * D[j][2];
        n[i][2] = D[i][0] * D[j][1] - D[i][1] * D[j][0];
    }
    HY_CCD_REAL twist = 0;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL tu = (F[1][1][0][k] - F[1][0][0][k]) - (F[0][1][0][k] - F[0][0][0][k]);
        HY_CCD_REAL tv = (F[1][0][1][k] - F[1][0][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        HY_CCD_REAL uv = (F[0][1][1][k] - F[0][1][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        HY_CCD_REAL uv1 = (F[1][1][1][k] - F[1][1][0][k]) - (F[1][0][1][k] - F[1][0][0][k]);
        tu = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(tu), HY_CCD_FN(hy_ccd_rabs)(tv));
        uv = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(uv), HY_CCD_FN(hy_ccd_rabs)(uv1));
        twist = HY_CCD_FN(hy_ccd_rmax)(twist, HY_CCD_FN(hy_ccd_rmax)(tu, uv));
    }
    return HY_CCD_FN(hy_ccd_robust)(pr, Fc, (const HY_CCD_REAL(*)[3])n, fmx, twist);
}

/* Earliest-first search with a heap of pending boxes (heap must hold
 * st->pending + max_boxes + 1): of [0,1]^3 when st->pending is 0, else
 * resumed from the st->pending boxes left in the heap by an earlier search.
 * Returns 1 and *toi when a box is accepted (it goes back on the heap, so
 * st->pending lets a wider-precision pass resume), or when the cap is hit
 * (then *toi is the earliest pending time); 0 when every box was
 * excluded. Every pending box starts no earlier than the accepted one, and
 * excluded boxes hold no contact, so *toi never exceeds the first contact. */
HY_HD int HY_CCD_FN(hy_ccd_search)(const HY_CCD_FN(hy_ccd_problem) * pr, hy_ccd_box* heap, int max_boxes,
                                   double* toi, hy_ccd_stats* st) {
    st->robust = 0;
    int n = st->pending;
    if (n == 0) {
        hy_ccd_box root = {{0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}, {0, 0, 0}};
        hy_ccd_heap_push(heap, &n, &root);
    }
    int boxes = 0;
    st->capped = 0;
    while (n > 0) {
        if (boxes >= max_boxes) {
            /* Conservative give-up: a contact may hide in any pending box. */
            st->boxes = boxes;
            st->capped = 1;
            st->pending = n;
            *toi = heap[0].lo[0];
            return 1;
        }
        hy_ccd_box b = hy_ccd_heap_pop(heap, &n);
        boxes++;
        int dim = 0, robust = 0;
        int r = HY_CCD_FN(hy_ccd_box_eval)(pr, &b, &dim, &robust);
        if (r == HY_CCD_EXCLUDED) continue;
        if (r == HY_CCD_ACCEPTED) {
            st->boxes = boxes;
            st->robust = robust;
            hy_ccd_heap_push(heap, &n, &b);
            st->pending = n;
            *toi = b.lo[0];
            return 1;
        }
        double mid = 0.5 * (b.lo[dim] + b.hi[dim]);
        hy_ccd_box lo = b, hi = b;
        lo.hi[dim] = mid;
        hi.lo[dim] = mid;
        lo.level[dim]++;
        hi.level[dim]++;
        hy_ccd_heap_push(heap, &n, &hi);
        hy_ccd_heap_push(heap, &n, &lo);
    }
    st->boxes = boxes;
    st->pending = 0;
    return 0;
}
