/* BVH validation: every node's box holds its children's and its
 * triangles', counts and links agree (hy_bvh_check). */
#include "collision/bvh.h"

#include <float.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "collision/bvh_internal.h"

/* ---- validation */

static int contains(const hy_aabb* outer, const hy_aabb* inner) {
    for (int k = 0; k < 3; k++)
        if (inner->lo[k] < outer->lo[k] || inner->hi[k] > outer->hi[k]) return 0;
    return 1;
}

int hy_bvh_check(const hy_bvh* b) {
    if (!b || b->node_count < 1) {
        hy_fail(HY_ERR_INTERNAL, "bvh: empty");
        return 0;
    }
    int32_t nt = b->triangle_count;
    uint8_t* hit = calloc((size_t)nt, 1);
    int32_t* parent_of = malloc(sizeof(int32_t) * (size_t)b->node_count);
    if (!hit || !parent_of) {
        free(hit);
        free(parent_of);
        hy_fail(HY_ERR_NOMEM, "bvh check: out of memory");
        return 0;
    }
    for (int32_t i = 0; i < b->node_count; i++) parent_of[i] = -1;
    int good = 1;
    for (int32_t i = 0; i < b->node_count && good; i++) {
        const hy_bvh_node* n = &b->nodes[i];
        if (n->count) {
            if (n->first < 0 || n->count < 0 || n->first + n->count > nt) {
                good = 0;
                hy_fail(HY_ERR_INTERNAL, "bvh: leaf %d range [%d, +%d) out of [0, %d)", i, n->first, n->count, nt);
                break;
            }
            for (int32_t j = 0; j < n->count; j++) {
                int32_t t = b->order[n->first + j];
                if (t < 0 || t >= nt || hit[t]++ || !contains(&n->box, &b->triangle_boxes[t])) {
                    good = 0;
                    hy_fail(HY_ERR_INTERNAL, "bvh: leaf %d: triangle %d out of range, repeated or outside the box", i,
                            t);
                    break;
                }
            }
        } else {
            if (n->first <= i || n->first + 1 >= b->node_count) {
                good = 0;
                hy_fail(HY_ERR_INTERNAL, "bvh: node %d children %d not after it", i, n->first);
                break;
            }
            for (int j = 0; j < 2; j++) {
                int32_t ch = n->first + j;
                if (parent_of[ch] != -1 || !contains(&n->box, &b->nodes[ch].box)) {
                    good = 0;
                    hy_fail(HY_ERR_INTERNAL, "bvh: node %d child %d shared or outside the box", i, ch);
                    break;
                }
                parent_of[ch] = i;
            }
        }
    }
    for (int32_t t = 0; t < nt && good; t++)
        if (!hit[t]) {
            good = 0;
            hy_fail(HY_ERR_INTERNAL, "bvh: triangle %d in no leaf", t);
        }
    for (int32_t i = 1; i < b->node_count && good; i++)
        if (parent_of[i] < 0) {
            good = 0;
            hy_fail(HY_ERR_INTERNAL, "bvh: node %d unreachable", i);
        }
    free(hit);
    free(parent_of);
    return good;
}
