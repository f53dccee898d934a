/* Partition mapping: METIS k-way with its traps handled, greedy otherwise. */
#include "runtime/map.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef HY_HAVE_METIS
#include <metis.h>
#endif

int hy_rt_map_have_metis(void) {
#ifdef HY_HAVE_METIS
    return 1;
#else
    return 0;
#endif
}

typedef struct ranked {
    double key;
    int32_t index;
} ranked;

/* larger key first, then lower index */
static int cmp_ranked(const void* x, const void* y) {
    const ranked* a = x;
    const ranked* b = y;
    if (a->key != b->key) return a->key < b->key ? 1 : -1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Longest processing time first: each partition, costliest first, to the PU
 * where it would finish first. */
static hy_status map_greedy(int32_t nv, const double* cost, int32_t np, const double* speed, int32_t* part) {
    ranked* r = malloc((size_t)nv * sizeof *r);
    double* load = calloc((size_t)np, sizeof *load);
    if (!r || !load) {
        free(r);
        free(load);
        return hy_fail(HY_ERR_NOMEM, "out of memory mapping %d partitions", nv);
    }
    for (int32_t v = 0; v < nv; v++) r[v] = (ranked){cost[v], v};
    qsort(r, (size_t)nv, sizeof *r, cmp_ranked);
    for (int32_t i = 0; i < nv; i++) {
        int32_t best = 0;
        double best_t = INFINITY;
        for (int32_t p = 0; p < np; p++) {
            double t = (load[p] + r[i].key) / speed[p];
            if (t < best_t) {
                best_t = t;
                best = p;
            }
        }
        part[r[i].index] = best;
        load[best] += r[i].key;
    }
    free(r);
    free(load);
    return HY_OK;
}

/* One each: costliest partition to the fastest PU. */
static hy_status map_one_each(int32_t nv, const double* cost, int32_t np, const double* speed, int32_t* part) {
    ranked* rv = malloc((size_t)nv * sizeof *rv);
    ranked* rp = malloc((size_t)np * sizeof *rp);
    if (!rv || !rp) {
        free(rv);
        free(rp);
        return hy_fail(HY_ERR_NOMEM, "out of memory mapping %d partitions", nv);
    }
    for (int32_t v = 0; v < nv; v++) rv[v] = (ranked){cost[v], v};
    for (int32_t p = 0; p < np; p++) rp[p] = (ranked){speed[p], p};
    qsort(rv, (size_t)nv, sizeof *rv, cmp_ranked);
    qsort(rp, (size_t)np, sizeof *rp, cmp_ranked);
    for (int32_t i = 0; i < nv; i++) part[rv[i].index] = rp[i].index;
    free(rv);
    free(rp);
    return HY_OK;
}

#define METIS_MIN_PER_PU 4

#ifdef HY_HAVE_METIS
static pthread_mutex_t g_metis_lock = PTHREAD_MUTEX_INITIALIZER;

/* 0 on success (part filled), 1 when METIS failed (caller falls back). */
static int map_metis(int32_t nv, const double* cost, int32_t ne, const hy_rt_pedge* edges, int32_t np,
                     const double* speed, int32_t* part, hy_status* status) {
    *status = HY_OK;
    idx_t* xadj = calloc((size_t)nv + 1, sizeof *xadj);
    idx_t* adj = malloc((size_t)(2 * ne) * sizeof *adj);
    idx_t* adjw = malloc((size_t)(2 * ne) * sizeof *adjw);
    idx_t* vw = malloc((size_t)nv * sizeof *vw);
    idx_t* out = malloc((size_t)nv * sizeof *out);
    real_t* tp = malloc((size_t)np * sizeof *tp);
    idx_t* fill = calloc((size_t)nv, sizeof *fill);
    int failed = 1;
    if (!xadj || !adj || !adjw || !vw || !out || !tp || !fill) {
        *status = hy_fail(HY_ERR_NOMEM, "out of memory mapping %d partitions", nv);
        goto done;
    }
    /* integer weights: costs on 1..10001, bytes on 1..1001 */
    double cmax = 0, bmax = 0, ssum = 0;
    for (int32_t v = 0; v < nv; v++) cmax = fmax(cmax, cost[v]);
    for (int32_t e = 0; e < ne; e++) bmax = fmax(bmax, (double)edges[e].bytes);
    for (int32_t v = 0; v < nv; v++) vw[v] = 1 + (idx_t)llround(cmax > 0 ? cost[v] / cmax * 10000.0 : 0);
    for (int32_t e = 0; e < ne; e++) {
        xadj[edges[e].a + 1]++;
        xadj[edges[e].b + 1]++;
    }
    for (int32_t v = 0; v < nv; v++) xadj[v + 1] += xadj[v];
    for (int32_t e = 0; e < ne; e++) {
        idx_t w = 1 + (idx_t)llround(bmax > 0 ? (double)edges[e].bytes / bmax * 1000.0 : 0);
        int32_t a = edges[e].a, b = edges[e].b;
        adj[xadj[a] + fill[a]] = b;
        adjw[xadj[a] + fill[a]++] = w;
        adj[xadj[b] + fill[b]] = a;
        adjw[xadj[b] + fill[b]++] = w;
    }
    /* target weights in float summing to 1: the last takes the remainder */
    for (int32_t p = 0; p < np; p++) ssum += speed[p];
    real_t acc = 0;
    for (int32_t p = 0; p + 1 < np; p++) {
        tp[p] = (real_t)(speed[p] / ssum);
        acc += tp[p];
    }
    tp[np - 1] = (real_t)1 - acc;
    if (tp[np - 1] <= 0) goto done;
    idx_t n = nv, ncon = 1, nparts = np, objval = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1;
    options[METIS_OPTION_NUMBERING] = 0;
    pthread_mutex_lock(&g_metis_lock);
    /* Recursive bisection up to 8 parts, as METIS's manual advises: on a
     * 64-partition grid onto 8 PUs it finds the same cut as k-way in a
     * third to a sixth of the time (~0.1-0.2 ms against ~0.6 ms here). */
    int r = np <= 8 ? METIS_PartGraphRecursive(&n, &ncon, xadj, adj, vw, NULL, adjw, &nparts, tp, NULL, options,
                                               &objval, out)
                    : METIS_PartGraphKway(&n, &ncon, xadj, adj, vw, NULL, adjw, &nparts, tp, NULL, options, &objval,
                                          out);
    pthread_mutex_unlock(&g_metis_lock);
    if (r != METIS_OK) goto done;
    for (int32_t v = 0; v < nv; v++)
        if (out[v] < 0 || out[v] >= np) goto done;
    for (int32_t v = 0; v < nv; v++) part[v] = (int32_t)out[v];
    failed = 0;
done:
    free(xadj);
    free(adj);
    free(adjw);
    free(vw);
    free(out);
    free(tp);
    free(fill);
    return failed;
}
#endif

hy_status hy_rt_map(int32_t nv, const double* cost, int32_t ne, const hy_rt_pedge* edges, int32_t np,
                    const double* speed, int32_t* part, int* metis_calls) {
    if (nv < 0 || ne < 0 || np < 1 || (nv && (!cost || !part)) || (ne && !edges) || !speed)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_map: %d partitions, %d edges, %d PUs", nv, ne, np);
    for (int32_t p = 0; p < np; p++)
        if (!(speed[p] > 0) || !isfinite(speed[p]))
            return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_map: PU %d has speed %g, expected > 0", p, speed[p]);
    for (int32_t v = 0; v < nv; v++)
        if (!(cost[v] >= 0) || !isfinite(cost[v]))
            return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_map: partition %d has cost %g, expected >= 0", v, cost[v]);
    for (int32_t e = 0; e < ne; e++)
        if (edges[e].a < 0 || edges[e].a >= edges[e].b || edges[e].b >= nv || edges[e].bytes < 0)
            return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_map: edge %d (%d, %d) must have 0 <= a < b < %d", e,
                           edges[e].a, edges[e].b, nv);
    if (nv == 0) return HY_OK;
    if (np == 1) {
        for (int32_t v = 0; v < nv; v++) part[v] = 0;
        return HY_OK;
    }
    if (nv <= np) return map_one_each(nv, cost, np, speed, part);
#ifdef HY_HAVE_METIS
    /* METIS only with a few partitions per PU: with fewer, its recursive
     * bisection can leave a side with fewer vertices than parts (skewed
     * costs or speeds), which it reports on stdout ("Cannot bisect a graph
     * with 0 vertices", "too many parts") before failing */
    if (ne > 0 && nv >= METIS_MIN_PER_PU * np) {
        hy_status s;
        if (metis_calls) (*metis_calls)++;
        if (!map_metis(nv, cost, ne, edges, np, speed, part, &s)) return HY_OK;
        if (s) return s;
    }
#endif
    return map_greedy(nv, cost, np, speed, part);
}
