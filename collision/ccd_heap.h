/* The CCD search's parameter boxes over (t, u, v) and the heap that hands
 * them out earliest time first (collision/ccd_root.h's search, the
 * touching-query seeds of collision/ccd_query.h). HY_HD. */
#ifndef HY_COLLISION_CCD_HEAP_H
#define HY_COLLISION_CCD_HEAP_H

#include "core/hd.h"

typedef struct hy_ccd_box {
    double lo[3], hi[3];    /* t, u, v */
    unsigned char level[3]; /* bisections so far per parameter */
} hy_ccd_box;

/* Earliest-first order: smaller t_lo, then the deeper box (depth-first). */
HY_HD int hy_ccd_box_before(const hy_ccd_box* a, const hy_ccd_box* b) {
    if (a->lo[0] != b->lo[0]) return a->lo[0] < b->lo[0];
    return a->level[0] + a->level[1] + a->level[2] > b->level[0] + b->level[1] + b->level[2];
}

HY_HD void hy_ccd_heap_push(hy_ccd_box* h, int* n, const hy_ccd_box* b) {
    int i = (*n)++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!hy_ccd_box_before(b, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = *b;
}

HY_HD hy_ccd_box hy_ccd_heap_pop(hy_ccd_box* h, int* n) {
    hy_ccd_box top = h[0];
    hy_ccd_box last = h[--(*n)];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        const hy_ccd_box* mb = &last;
        if (l < *n && hy_ccd_box_before(&h[l], mb)) {
            m = l;
            mb = &h[l];
        }
        if (r < *n && hy_ccd_box_before(&h[r], mb)) m = r;
        if (m == i) break;
        h[i] = h[m];
        i = m;
    }
    if (*n > 0) h[i] = last;
    return top;
}

#endif
