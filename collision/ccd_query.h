/* The body of hy_ccd_query (collision/ccd.h) as HY_HD code, so the CPU
 * wrapper in collision/ccd.c and the CUDA LEAF kernel (collision/leaf.cu via
 * collision/leaf.h) run the same arithmetic. The build disables
 * floating-point contraction on both sides (-ffp-contract=off, nvcc
 * --fmad=false), so both give bit-identical answers.
 *
 * What differs between the two callers stays outside: where the box heap
 * lives (a thread-local array or malloc on the CPU, a local array on the
 * GPU) and the default options (hy_ccd_options_default is a host
 * function). The long double re-check exists only where HY_CCD_HAVE_LD
 * (collision/ccd_math.h): never under nvcc, so device callers must pass
 * refine_boxes == 0 to match the CPU (hy_ccd_options_step does). */
#ifndef HY_COLLISION_CCD_QUERY_H
#define HY_COLLISION_CCD_QUERY_H

#include <math.h>
#include <stddef.h>

#include "collision/ccd.h"
#include "collision/ccd_math.h"
#include "collision/closest.h"
#include "collision/filter_sat.h"

/* Time restriction (touching queries): at most this many candidate time
 * slabs and splits of the volume cubic, else the search covers [0, 1]. */
#define HY_CCD_MAX_SLABS 16
#define HY_CCD_SLAB_STEPS 120
/* Half-width of the box around a Newton root handed to hy_ccd_certify:
 * small enough that F is affine on it far below rounding of its image,
 * large enough that the image dwarfs the rounding bound. Corners snap
 * outward to multiples of 2^-HY_CCD_CERT_GRID (exact dyadics, as the
 * search's). */
#define HY_CCD_CERT_HALF 0x1p-24
#define HY_CCD_CERT_GRID 40
/* hy_ccd_query_core's answer when the heap it was given is too small for
 * the options (nothing else was decided; call again with a larger one). */
#define HY_CCD_NEED_HEAP (-2)

/* Bring options into their valid ranges (what hy_ccd_query does first). */
HY_HD void hy_ccd_options_clamp(hy_ccd_options* o) {
    if (o->accept_factor < 1.0 || !(o->accept_factor == o->accept_factor)) o->accept_factor = 1.0;
    if (o->max_boxes < 1) o->max_boxes = 1;
    if (!(o->twist_rel >= 0.0)) o->twist_rel = 0.0;
    if (o->refine_boxes < 0) o->refine_boxes = 0;
    if (!(o->refine_twist_rel >= 0.0)) o->refine_twist_rel = 0.0;
    if (o->toi_bits < 0) o->toi_bits = 0;
    if (!(o->min_distance_slack >= 0.0) || o->min_distance_slack > 1e6) o->min_distance_slack = 0.0;
    if (o->toi_bits > HY_CCD_MAX_LEVEL) o->toi_bits = HY_CCD_MAX_LEVEL;
    o->need_toi = o->need_toi != 0;
}

/* Boxes the search heap must hold for clamped options: every evaluated box
 * adds at most one to the heap, the accepted one goes back, and the
 * long double pass resumes from what is left. */
HY_HD size_t hy_ccd_heap_boxes(const hy_ccd_options* o) {
    int refine = HY_CCD_HAVE_LD && o->refine_boxes > 0;
    return (size_t)o->max_boxes + 2 + (refine ? (size_t)o->refine_boxes : 0);
}

/* 1 when the features certainly stay apart for all t in [lo, hi] (0 <= lo
 * <= hi <= 1): the separating-axes filter (collision/filter_sat.h) run on
 * the motion from the positions at lo to those at hi. Within a slab of the
 * volume cubic the features are nearly coplanar, so its in-plane
 * directions decide what the whole step's filter could not: whether the
 * vertex lies outside the triangle, or the edges pass beside each other.
 * The end positions are rounded: each coordinate of x0 + s (x1 - x0) is
 * within 5 eps pm of the exact one (pm: the largest |coordinate|), so every
 * point of the rounded motion is within sqrt(3) 8 eps pm of the exact
 * motion's at the same time, and a gap of 32 eps pm (more than twice that)
 * asked of the rounded motion leaves the exact features apart. */
HY_HD int hy_ccd_slab_apart(const double* const* p, int is_vf, double lo, double hi, double pm) {
    double q[8][3];
    const double *a[4], *b[4];
    for (int j = 0; j < 4; j++) {
        for (int k = 0; k < 3; k++) {
            double d = p[4 + j][k] - p[j][k];
            q[j][k] = p[j][k] + lo * d;
            q[4 + j][k] = p[j][k] + hi * d;
        }
        a[j] = q[j];
        b[j] = q[4 + j];
    }
    double gap = 32.0 * DBL_EPSILON * pm;
    if (!(gap > 0.0)) return 0;
    /* In-plane directions first (hy_filter_sat_order's hint): the normals,
     * first in the filter's own order, cannot separate nearly coplanar
     * features. */
    int hint = 4;
    return !hy_filter_sat_order(is_vf, a, b, gap, &hint);
}

/* pr's bounds (hy_ccd_problem_bounds), made when first needed: most
 * queries end before certification or the box search reads them. */
HY_HD void hy_ccd_problem_bound(hy_ccd_problem_d* pr, const double* const* p, const hy_ccd_options* o) {
    if (!pr->bounded) hy_ccd_problem_bounds_d(pr, p, pr->md, o->accept_factor, o->twist_rel, o->min_distance_slack);
}

/* Touching queries: contacts only happen where the volume cubic can vanish
 * (collision/ccd_math.h), so the search runs over those time slabs only,
 * earliest first; in each, a Newton root certified by hy_ccd_certify
 * settles a contact at once (the usual transversal crossing), else the
 * separating axes of the slab (hy_ccd_slab_apart) may clear it, else the
 * box search (and its long double re-check) decides the slab. Returns the
 * answer, or -1 when the cubic does not isolate its roots (then the caller
 * searches all of [0, 1]). pm: the largest |coordinate| of p (for
 * hy_ccd_slab_apart). Every time before the reported toi lies in a
 * slab the search excluded or where the cubic certainly does not vanish,
 * so toi stays no later than the first contact. */
HY_HD int hy_ccd_slab_query(hy_ccd_problem_d* pr, const double* const* p, double pm, int is_vf,
                            const hy_ccd_options* o, int refine, hy_ccd_box* heap, double* t_out, hy_ccd_info* inf) {
    double c[4], verr, slab_lo[HY_CCD_MAX_SLABS];
    int R = o->toi_bits + 1;
    if (R < 12) R = 12;
    if (R > 40) R = 40;
    if (!hy_ccd_vol_cubic(p, c, &verr)) return -1;
    int ns = hy_ccd_vol_slabs(c, verr, R, HY_CCD_MAX_SLABS, HY_CCD_SLAB_STEPS, slab_lo);
    if (ns < 0) return -1;
    double w = hy_ccd_exp2i(-R), grid = hy_ccd_exp2i(HY_CCD_CERT_GRID), prec = hy_ccd_exp2i(-o->toi_bits);
    int budget = o->max_boxes, rbudget = refine ? o->refine_boxes : 0;
#if HY_CCD_HAVE_LD
    int have_ld = 0;
    hy_ccd_problem_ld prl;
#endif
    for (int i = 0; i < ns; i++) {
        double lo = slab_lo[i], hi = lo + w;
        /* Certain root near the slab: a contact, and toi = lo is within
         * the requested precision of it. */
        double x[3];
        if (hy_ccd_newton_start_d(pr, 0.5 * (lo + hi), x) && hy_ccd_newton_d(pr, x, 3)) {
            hy_ccd_box cb;
            int ok = 1;
            for (int d = 0; d < 3; d++) {
                cb.lo[d] = floor((x[d] - HY_CCD_CERT_HALF) * grid) / grid;
                cb.hi[d] = ceil((x[d] + HY_CCD_CERT_HALF) * grid) / grid;
                cb.level[d] = HY_CCD_CERT_GRID;
                if (!(cb.lo[d] >= 0.0 && cb.hi[d] <= 1.0)) ok = 0;
            }
            if (ok && cb.lo[0] >= lo - prec && cb.hi[0] - lo <= prec) {
                /* one box evaluation, counted against the cap */
                inf->boxes++;
                budget--;
                hy_ccd_problem_bound(pr, p, o);
                if (hy_ccd_certify_d(pr, &cb)) {
                    *t_out = lo;
                    return 1;
                }
            }
        }
        /* No certain root: most such slabs are a near miss in a common
         * plane, which the separating axes of the slab settle. */
        if (hy_ccd_slab_apart(p, is_vf, lo, hi, pm)) continue;
        if (budget < 1) { /* out of work: the conservative answer */
            inf->capped = 1;
            *t_out = lo;
            return 1;
        }
        hy_ccd_box sb = {{lo, 0.0, 0.0}, {hi, 1.0, 1.0}, {(unsigned char)R, 0, 0}};
        int n = 0;
        hy_ccd_heap_push(heap, &n, &sb);
        hy_ccd_stats st = {0, 0, 0, 1};
        hy_ccd_problem_bound(pr, p, o);
        int hit = hy_ccd_search_d(pr, heap, budget, t_out, &st);
        inf->boxes += st.boxes;
        budget -= st.boxes;
        if (!hit) continue;
        if (st.capped) {
            inf->capped = 1;
            return 1;
        }
        if (st.robust || rbudget < 1) return 1;
#if HY_CCD_HAVE_LD
        /* Re-check in long double from the boxes double could not exclude
         * (as in hy_ccd_query); excluding them all clears the slab. */
        if (!have_ld) {
            hy_ccd_problem_init_ld(&prl, p, is_vf, 0.0, o->accept_factor, o->refine_twist_rel, 0, 0.0);
            have_ld = 1;
        }
        hy_ccd_stats stl = st;
        double toi_l = *t_out;
        hit = hy_ccd_search_ld(&prl, heap, rbudget, &toi_l, &stl);
        inf->boxes += stl.boxes;
        inf->refine_boxes += stl.boxes;
        rbudget -= stl.boxes;
        if (!hit) continue;
        inf->capped = stl.capped;
        if (toi_l > *t_out) *t_out = toi_l;
        return 1;
#else
        (void)is_vf;
        return 1;
#endif
    }
    return 0;
}

/* 1 when two points of the primitives at time t (p as in
 * hy_ccd_query_core, positions interpolated linearly) are closer than r
 * (collision/closest.h). r must leave room for rounding: 32 eps of the
 * largest coordinate (the points lie within that of the primitives, their
 * distance within a few eps of the computed one). */
HY_HD hy_v3 hy_ccd_separation_at(const double* const* p, int is_vf, double t) {
    hy_v3 q[4];
    for (int i = 0; i < 4; i++) q[i] = v3_add(v3_scale(v3_load(p[i]), 1.0 - t), v3_scale(v3_load(p[4 + i]), t));
    return hy_closest_separation(q, is_vf);
}

HY_HD int hy_ccd_within_at(const double* const* p, int is_vf, double t, double r) {
    if (!(r > 0.0)) return 0;
    return v3_len2(hy_ccd_separation_at(p, is_vf, t)) < r * r; /* NaN: 0 */
}

/* 1 when the closest points at t = 0 are within r of each other in every
 * coordinate (r as in hy_ccd_within_at: each coordinate of the computed
 * separation is within the rounding that r leaves of the exact one's of
 * two points of the primitives). */
HY_HD int hy_ccd_box_within_at0(const double* const* p, int is_vf, double r) {
    if (!(r > 0.0)) return 0;
    hy_v3 s = hy_ccd_separation_at(p, is_vf, 0.0);
    return fabs(s.x) < r && fabs(s.y) < r && fabs(s.z) < r; /* NaN: 0 */
}

/* Conservative advancement with a contact distance md > 0 (tight queries):
 * from t = 0, take the closest points at t; within r_in (as
 * hy_ccd_within_at) is a contact at t. Else their separation n is a
 * direction along which every vertex pair's gap is linear in time, so the
 * latest time up to which all of them stay beyond md along n follows from
 * the gaps at both ends; the features cannot come within md before it, and
 * t moves there. Near a transversal crossing the steps shrink to rounding
 * (the distance at t is md itself); once a step is shorter than prec, a
 * contact at t + prec proves the first contact lies in [t, t + prec], so t
 * is the toi to that precision; with coarse > prec, a contact at
 * t + coarse once a step is shorter than coarse settles it as well (toi
 * t, to that precision only). Returns 1 (contact, toi in *t_out, every
 * earlier time excluded), 0 (apart for the whole step) or -1 (undecided: a
 * grazing approach that stalls, a closest-point direction that does not
 * separate at t; the box search decides).
 *
 * The vertex pairs' differences at both ends are the separating-axes
 * filter's (hy_sat_set, made once), and so is the bound on a gap's dot
 * product (8 eps of |n|_1 |w|_inf); md |n|_2 is rounded up; D covers the
 * subtractions that form the lower bounds, so ga, gb never exceed the exact
 * gaps' lower bounds at the two ends, and the crossing time of two such
 * bounds of opposite sign is a quotient of positive terms (a few eps
 * relative), moved inwards by 4 eps. */
#define HY_CCD_ADVANCE_STEPS 16
HY_HD int hy_ccd_advance(const double* const* p, int is_vf, double md, double r_in, double prec, double coarse,
                         double* t_out) {
    const double eps = DBL_EPSILON;
    int np = is_vf ? 3 : 4; /* vertex pairs across the features */
    double t = 0.0;
    if (!(r_in > 0.0)) return -1;
    hy_sat_set w; /* made once the first step is not already a contact */
    for (int it = 0; it < HY_CCD_ADVANCE_STEPS; it++) {
        hy_v3 n = hy_ccd_separation_at(p, is_vf, t);
        double n2 = v3_len2(n);
        if (n2 < r_in * r_in) {
            *t_out = t;
            return 1;
        }
        double an = fabs(n.x) + fabs(n.y) + fabs(n.z);
        if (!(an > 1e-140 && an < 1e140)) return -1;
        double T = md * (sqrt(n2) * (1.0 + 16.0 * eps)) * (1.0 + 8.0 * eps);
        double s_hi = 1.0, s_lo = 0.0;
        if (it == 0) hy_sat_set_make(&w, is_vf, p, p + 4);
        double err = 8.0 * eps * (an * w.aw) + 1e-290;
        for (int q = 0; q < np; q++) {
            /* the gap at s = 0 and at s = 1 (differences q and np + q) */
            double a = n.x * w.x[q] + n.y * w.y[q] + n.z * w.z[q];
            double b = n.x * w.x[np + q] + n.y * w.y[np + q] + n.z * w.z[np + q];
            double D = 4.0 * eps * (((fabs(a) + fabs(b)) + err) + T);
            double ga = (a - (err + T)) - D, gb = (b - (err + T)) - D;
            if (!(ga == ga && gb == gb)) return -1; /* NaN */
            if (ga > 0.0 && gb < 0.0)
                s_hi = hy_ccd_min(s_hi, ga / (ga - gb) * (1.0 - 4.0 * eps));
            else if (ga <= 0.0 && gb > 0.0)
                s_lo = hy_ccd_max(s_lo, -ga / (gb - ga) * (1.0 + 4.0 * eps) + 1e-300);
            else if (!(ga > 0.0))
                s_lo = 2.0; /* this pair's gap is never beyond md along n */
        }
        /* Along n the gaps stay beyond md on [s_lo, s_hi]. */
        int covers = s_lo <= t;
        if (covers && s_hi >= 1.0) return 0;
        double next = covers && s_hi > t ? s_hi : t;
        if (coarse > prec && next - t < coarse && hy_ccd_within_at(p, is_vf, hy_ccd_min(t + coarse, 1.0), r_in)) {
            *t_out = t;
            return 1;
        }
        if (next - t < prec) {
            if (hy_ccd_within_at(p, is_vf, hy_ccd_min(t + prec, 1.0), r_in)) {
                *t_out = t;
                return 1;
            }
            if (next - t < 0x1p-40) return -1;
        }
        t = next;
    }
    return -1;
}

/* hy_ccd_query with clamped options o (hy_ccd_options_clamp, never NULL),
 * t_out and inf never NULL (inf is zeroed here), and a heap of heap_cap
 * boxes. A NULL heap means none could be had: after the early-outs the
 * answer is then the conservative "collision at t = 0". A heap smaller
 * than hy_ccd_heap_boxes(o) returns HY_CCD_NEED_HEAP once the early-outs
 * have not decided (*t_out and inf untouched but for the zeroing). */
HY_HD int hy_ccd_query_core(int is_vf, const double x[8][3], double min_distance, const hy_ccd_options* o,
                            double* t_out, hy_ccd_info* inf, hy_ccd_box* heap, size_t heap_cap) {
    inf->boxes = 0;
    inf->refine_boxes = 0;
    inf->capped = 0;

    /* Non-finite input cannot be reasoned about: answer "collision" at t=0,
     * the conservative choice. A negative or NaN distance means touching. */
    double md = min_distance > 0.0 ? min_distance : 0.0;
    /* x * 0.0 stays 0 unless x is infinite or NaN. Six chains of sums and
     * of maxima (by coordinate, even and odd points) instead of one each:
     * the answer does not depend on the order, and one chain of 24
     * dependent adds was most of this loop's time. */
    double za = 0.0, zb = 0.0, zc = 0.0, zd = 0.0, ze = 0.0, zf = 0.0;
    double ma = 0.0, mb = 0.0, mc = 0.0, mdd = 0.0, me = 0.0, mf = 0.0;
    for (int i = 0; i < 8; i += 2) {
        const double* a = x[i];
        const double* b = x[i + 1];
        za += a[0] * 0.0;
        zb += a[1] * 0.0;
        zc += a[2] * 0.0;
        zd += b[0] * 0.0;
        ze += b[1] * 0.0;
        zf += b[2] * 0.0;
        ma = hy_ccd_max(ma, fabs(a[0])); /* fmax is a library call */
        mb = hy_ccd_max(mb, fabs(a[1]));
        mc = hy_ccd_max(mc, fabs(a[2]));
        mdd = hy_ccd_max(mdd, fabs(b[0]));
        me = hy_ccd_max(me, fabs(b[1]));
        mf = hy_ccd_max(mf, fabs(b[2]));
    }
    double z = ((za + zd) + (zb + ze)) + (zc + zf);
    double m = hy_ccd_max(hy_ccd_max(hy_ccd_max(ma, mdd), hy_ccd_max(mb, me)), hy_ccd_max(mc, mf));
    if (z != 0.0) {
        *t_out = 0.0;
        return 1;
    }
    if (!isfinite(md) || md >= 4.0 * m) {
        /* Every pair of points is within 2 sqrt(3) m < 4 m of each other. */
        *t_out = 0.0;
        return 1;
    }

    /* Scale by a power of two (exact up to underflow of coordinates below
     * 2^-800 of the largest, covered by DBL_MIN in the bound) so that the
     * cubic terms of the separating tests neither overflow nor underflow. */
    double scale = 1.0;
    if (m > 0.0 && (m > 0x1p200 || m < 0x1p-200)) {
        int e;
        frexp(m, &e);
        scale = ldexp(1.0, -e);
    }
    double y[8][3];
    const double* p[8];
    for (int i = 0; i < 8; i++) p[i] = x[i];
    if (scale != 1.0) {
        for (int i = 0; i < 8; i++) {
            for (int k = 0; k < 3; k++) y[i][k] = x[i][k] * scale;
            p[i] = y[i];
        }
        md *= scale;
    }

    /* Swept AABB early-out (exact comparisons). Vertex-face: the vertex's
     * two positions against the triangle's six; edge-edge: four against
     * four. */
    const double* sa[4];
    const double* sb[6];
    int na, nb;
    if (is_vf) {
        sa[0] = p[0];
        sa[1] = p[4];
        na = 2;
        sb[0] = p[1];
        sb[1] = p[2];
        sb[2] = p[3];
        sb[3] = p[5];
        sb[4] = p[6];
        sb[5] = p[7];
        nb = 6;
    } else {
        sa[0] = p[0];
        sa[1] = p[1];
        sa[2] = p[4];
        sa[3] = p[5];
        na = 4;
        sb[0] = p[2];
        sb[1] = p[3];
        sb[2] = p[6];
        sb[3] = p[7];
        nb = 4;
    }
    if (hy_ccd_aabb_apart(sa, na, sb, nb, md)) return 0;
    /* A vertex of one primitive on a vertex of the other at t=0 (duplicated
     * vertices, resting stacks) is certainly a contact, at t=0; the box
     * search would bisect down to rounding level around that corner of the
     * parameter domain. */
    {
        int split = is_vf ? 1 : 2;
        for (int i = 0; i < split; i++)
            for (int j = split; j < 4; j++)
                if (p[i][0] == p[j][0] && p[i][1] == p[j][1] && p[i][2] == p[j][2]) {
                    *t_out = 0.0;
                    return 1;
                }
    }

    /* Already within the distance at t = 0 (resting contacts, the bulk of
     * what a thickness adds): a contact at t = 0, the earliest time there
     * is. The box search would otherwise refine down to its precision
     * around a corner of the domain where the distance sits near md. */
    int tight = md > 0.0 && o->min_distance_slack == 0.0; /* as hy_ccd_problem.tight */
    double r_in = md * (1.0 - 8.0 * DBL_EPSILON) - 32.0 * DBL_EPSILON * (m * scale);
    /* Then, for the rest, conservative advancement: most approaches are
     * decided in a few closest-point steps, exactly in time. */
    if (tight && !o->need_toi) {
        /* Only the answer is wanted: a pair within md at the start, the
         * end or a quarter of the step has a contact, whatever its time
         * (advancement and the search would refine that time first,
         * step by shrinking step, for every contact). */
        const double ts[5] = {0.0, 1.0, 0.5, 0.25, 0.75};
        for (int i = 0; i < 5; i++)
            if (hy_ccd_within_at(p, is_vf, ts[i], r_in)) {
                *t_out = 0.0;
                return 1;
            }
    }
    if (tight) {
        /* (without a time to refine, an approach that slows down is
         * also tried a 64th of the step ahead) */
        double prec = hy_ccd_exp2i(-o->toi_bits);
        double coarse = o->need_toi ? prec : hy_ccd_max(prec, 0x1p-6);
        int adv = hy_ccd_advance(p, is_vf, md, r_in, prec, coarse, t_out);
        if (adv >= 0) return adv;
    } else if (hy_ccd_box_within_at0(p, is_vf, r_in) ||
               (md > 0.0 && o->min_distance_slack > 0.0 &&
                hy_ccd_within_at(p, is_vf, 0.0,
                                 md * (1.0 + o->min_distance_slack) * (1.0 - 8.0 * DBL_EPSILON) -
                                     32.0 * DBL_EPSILON * (m * scale)))) {
        /* With a distance slack the search below (its L1 bounds) decides
         * the rest, but a pair with two points closer than md in every
         * coordinate at t = 0 has its answer already: the box search
         * cannot exclude a box holding that point (along any d it is
         * within md |d|_1 of the origin), the heap pops the earliest time
         * first, so the search accepts (or gives up) at t = 0 — after
         * bisecting to toi_bits around the corner. The same answer and
         * time without the boxes: most of a resting contact's queries.
         * A pair within md (1 + slack) at t = 0 may count as a contact
         * (the slack's contract), and t = 0 is no later than any contact
         * it has: it is reported so without the search, which on a cloth
         * resting in layers (pairs held at 1.1 md by the response) spent
         * about a third of its boxes on such pairs, mostly to accept them
         * at t = 0 anyway. */
        *t_out = 0.0;
        return 1;
    }
    /* Within it at t = 1 or at a quarter of the step: a contact is
     * certain, only its time is left to find (hy_ccd_problem.certain). */
    int certain = 0;
    if (tight) {
        const double ts[4] = {1.0, 0.5, 0.25, 0.75};
        for (int i = 0; i < 4 && !certain; i++) certain = hy_ccd_within_at(p, is_vf, ts[i], r_in);
    }

    /* The second pass resumes from the first pass's pending boxes. */
    int refine = HY_CCD_HAVE_LD && o->refine_boxes > 0;
    if (!heap) { /* no room to search: the conservative answer */
        *t_out = 0.0;
        return 1;
    }
    if (heap_cap < hy_ccd_heap_boxes(o)) return HY_CCD_NEED_HEAP;
    hy_ccd_problem_d pr;
    hy_ccd_problem_frame_d(&pr, p, is_vf, md, o->toi_bits, o->min_distance_slack);
    pr.certain = certain;
    if (md == 0.0) {
        int ans = hy_ccd_slab_query(&pr, p, m * scale, is_vf, o, refine, heap, t_out, inf);
        if (ans >= 0) return ans;
    }
    hy_ccd_stats st = {0, 0, 0, 0};
    hy_ccd_problem_bound(&pr, p, o);
    int hit = hy_ccd_search_d(&pr, heap, o->max_boxes, t_out, &st);
    inf->boxes = st.boxes;
    inf->capped = st.capped;
#if HY_CCD_HAVE_LD
    /* Re-check a reported contact with 11 more bits and a finer twist
     * tolerance, resuming from the boxes double could not exclude (what it
     * excluded stays excluded). Most near misses below double resolution are
     * separated here; true contacts are accepted again after a few more
     * bisections. Its own cap keeps the cost bounded: past it the answer
     * stays "collision". */
    if (hit && refine && !st.robust && !st.capped) {
        hy_ccd_problem_ld prl;
        hy_ccd_problem_init_ld(&prl, p, is_vf, md, o->accept_factor, o->refine_twist_rel, 0, o->min_distance_slack);
        hy_ccd_stats stl = st;
        double toi_l = *t_out;
        hit = hy_ccd_search_ld(&prl, heap, o->refine_boxes, &toi_l, &stl);
        inf->boxes += stl.boxes;
        inf->refine_boxes = stl.boxes;
        inf->capped = stl.capped;
        /* Every pending box starts no earlier than toi_l, and excluded ones
         * hold no contact, so the later time is still safe. */
        if (hit && toi_l > *t_out) *t_out = toi_l;
    }
#endif
    return hit;
}

#endif
