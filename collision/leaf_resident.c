/* The host twin of a device's LEAF jobs made from its own traversal
 * (collision/leaf_resident.h): the same HY_HD steps, run one after the
 * other. */
#include "collision/leaf_resident.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void hy_leaf_contacts_free(hy_leaf_contacts* c) {
    if (!c) return;
    free(c->candidates);
    free(c->exact);
    free(c->offsets);
    free(c->contacts);
    memset(c, 0, sizeof *c);
}

hy_status hy_leaf_resident_run(const hy_feature_pair* pairs, const int64_t* off, int64_t n, const double* md,
                               const double* X0, const double* X1, const hy_ccd_options* opts, hy_leaf_contacts* out) {
    int64_t total = n > 0 ? off[n] - off[0] : 0;
    size_t slots = (size_t)(n > 0 ? n : 1);
    out->candidates = malloc(sizeof(int64_t) * slots);
    out->exact = malloc(sizeof(int64_t) * slots);
    out->offsets = malloc(sizeof(int64_t) * (slots + 1));
    unsigned char* hit = malloc((size_t)(total > 0 ? total : 1));
    double* toi = malloc(sizeof(double) * (size_t)(total > 0 ? total : 1));
    out->contacts = NULL;
    if (!out->candidates || !out->exact || !out->offsets || !hit || !toi) {
        free(hit);
        free(toi);
        hy_leaf_contacts_free(out);
        return hy_fail(HY_ERR_NOMEM, "out of memory for the LEAF jobs of %lld candidates", (long long)total);
    }
    /* step 1, per candidate (indices relative to off[0], as on the device) */
    for (int64_t i = 0; i < total; i++) {
        int64_t s = hy_leaf_segment(off, n, off[0] + i);
        hit[i] = hy_leaf_resident_eval(&pairs[i], md[s], X0, X1, opts, &toi[i]);
    }
    /* steps 2 and 3 */
    int64_t* contacts = out->candidates; /* the contact counts, until the scan */
    out->offsets[0] = 0;
    for (int64_t s = 0; s < n; s++) {
        hy_leaf_front_count(hit, off[s] - off[0], off[s + 1] - off[0], &out->exact[s], &contacts[s]);
        out->offsets[s + 1] = out->offsets[s] + contacts[s];
    }
    for (int64_t s = 0; s < n; s++) out->candidates[s] = off[s + 1] - off[s];
    /* step 4 */
    int64_t nc = n > 0 ? out->offsets[n] : 0;
    out->contacts = malloc(sizeof *out->contacts * (size_t)(nc > 0 ? nc : 1));
    if (!out->contacts) {
        free(hit);
        free(toi);
        hy_leaf_contacts_free(out);
        return hy_fail(HY_ERR_NOMEM, "out of memory for %lld contacts", (long long)nc);
    }
    for (int64_t s = 0; s < n; s++)
        hy_leaf_front_compact(pairs, hit, toi, off[s] - off[0], off[s + 1] - off[0], (int32_t)s,
                              out->contacts + out->offsets[s]);
    free(hit);
    free(toi);
    return HY_OK;
}
