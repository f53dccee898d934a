/* LEAF jobs made and run where their TRAVERSE jobs ran: a device that
 * traversed a batch of front pairs keeps the candidates it found, turns
 * each into a LEAF job by reference against the step's positions it holds
 * (collision/leaf.h, hy_leaf_ref), evaluates them, and sends back only the
 * contacts and, per front pair, how many candidates and exact tests there
 * were. The CUDA kernels (collision/traverse.cu, hy_cuda_traverse_leaf in
 * collision/kernels.h) and the host twin below (hy_leaf_resident_run, which
 * a modeled device runs and the tests check) are built from the HY_HD steps
 * of this header, so both give the same contacts, in the same order, with
 * the same times of impact as the host's LEAF jobs on the same candidates.
 *
 * The steps, over a batch of n front pairs whose candidates lie at
 * pairs[off[s] .. off[s + 1]) for front pair s (the traversal's order):
 * 1. per candidate i (in parallel): its front pair (hy_leaf_segment), its
 *    distance md[s], then hy_leaf_resident_eval: the answer bits and time
 *    of impact exactly as hy_leaf_eval gives them;
 * 2. per front pair (in parallel): hy_leaf_front_count, its exact tests and
 *    contacts;
 * 3. an exclusive scan of the contact counts: where each front pair's
 *    contacts start;
 * 4. per front pair (in parallel): hy_leaf_front_compact writes its
 *    contacts there in candidate order.
 * Integer counts and a scan: the output does not depend on how the steps
 * are spread over threads. */
#ifndef HY_COLLISION_LEAF_RESIDENT_H
#define HY_COLLISION_LEAF_RESIDENT_H

#include <stdint.h>

#include "collision/leaf.h"
#include "collision/traverse.h"
#include "collision/traverse_hd.h"
#include "core/hd.h"

/* A contact found on the device: its feature pair (the candidate), its
 * front pair's index in the batch, its time of impact. 32 bytes. */
typedef struct hy_leaf_contact {
    hy_feature_pair pair;
    int32_t front;
    double toi;
} hy_leaf_contact;

/* The front pair candidate i belongs to: the s in [0, n) with
 * off[s] <= i < off[s + 1] (off: n + 1 non-decreasing offsets, off[0] <=
 * i < off[n]); with empty front pairs, the last of those starting at or
 * before i, which is the one holding it. */
HY_HD int64_t hy_leaf_segment(const int64_t* off, int64_t n, int64_t i) {
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (off[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Candidate p as the LEAF job by reference the host would make of it
 * (collision/collide_jobs.c), at distance md. */
HY_HD hy_leaf_ref hy_leaf_ref_of(const hy_feature_pair* p, double md) {
    hy_leaf_ref r;
    for (int j = 0; j < 4; j++) r.v[j] = p->v[j];
    r.is_vf = p->kind != HY_FEATURE_EE;
    r.pad = 0;
    r.min_distance = md;
    return r;
}

/* Step 1 for one candidate: hy_leaf_eval_ref of its job (bit 0 contact,
 * bit 1 exact test ran; *toi its time of impact, 1.0 without contact). */
HY_HD unsigned char hy_leaf_resident_eval(const hy_feature_pair* p, double md, const double* X0, const double* X1,
                                          const hy_ccd_options* opts, double* toi) {
    hy_leaf_ref r = hy_leaf_ref_of(p, md);
    return (unsigned char)hy_leaf_eval_ref(&r, X0, X1, opts, toi);
}

/* Step 2 for one front pair: exact tests and contacts among the answers
 * hit[begin .. end). */
HY_HD void hy_leaf_front_count(const unsigned char* hit, int64_t begin, int64_t end, int64_t* exact,
                               int64_t* contacts) {
    int64_t e = 0, c = 0;
    for (int64_t i = begin; i < end; i++) {
        e += hit[i] >> 1;
        c += hit[i] & 1;
    }
    *exact = e;
    *contacts = c;
}

/* Step 4 for front pair `front`: its contacts among candidates
 * [begin, end) written from out[0] on, in candidate order. */
HY_HD void hy_leaf_front_compact(const hy_feature_pair* pairs, const unsigned char* hit, const double* toi,
                                 int64_t begin, int64_t end, int32_t front, hy_leaf_contact* out) {
    int64_t m = 0;
    for (int64_t i = begin; i < end; i++) {
        if (!(hit[i] & 1)) continue;
        out[m].pair = pairs[i];
        out[m].front = front;
        out[m].toi = toi[i];
        m++;
    }
}

/* What a batch of n front pairs gives back: per front pair its candidates
 * and exact tests, where its contacts start (n + 1 offsets into contacts),
 * the traversal's counters, the bytes a device moved each way. Arrays
 * malloc'd, the caller's (hy_leaf_contacts_free). */
typedef struct hy_leaf_contacts {
    int64_t* candidates; /* n */
    int64_t* exact;      /* n */
    int64_t* offsets;    /* n + 1 */
    hy_leaf_contact* contacts;
    hy_trav_counts counts;
    int64_t bytes_up, bytes_down;
} hy_leaf_contacts;

#ifndef __CUDACC__
/* The host twin of the device's steps 1 to 4 over one batch: candidates
 * pairs[off[s] .. off[s + 1]) of front pair s (s < n) at distance md[s],
 * against positions X0, X1. Fills out's arrays (counts and bytes left to
 * the caller). HY_ERR_NOMEM, or HY_OK. */
hy_status hy_leaf_resident_run(const hy_feature_pair* pairs, const int64_t* off, int64_t n, const double* md,
                               const double* X0, const double* X1, const hy_ccd_options* opts, hy_leaf_contacts* out);
/* Frees c's arrays and empties it. */
void hy_leaf_contacts_free(hy_leaf_contacts* c);
#endif

#endif
