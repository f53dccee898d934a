/* Mapping partitions onto PUs with METIS (recursive bisection up to 8 PUs,
 * k-way beyond; target part weights).
 *
 * Vertices are partitions weighted by their measured cost, edges the data
 * they share (bytes), and the target part weights the PUs' speeds. METIS's
 * traps are handled here rather than left to the caller:
 * - one PU: every partition goes to it, METIS is not called;
 * - no more partitions than PUs: METIS is not called either; the costliest
 *   partition goes to the fastest PU and so on, one each;
 * - no edges at all (objects that never touch): longest-processing-time
 *   greedy over the speeds, METIS not called (it has nothing to cut);
 * - fewer than 4 partitions per PU: the same greedy map; METIS's recursive
 *   bisection can then leave a side with fewer vertices than parts, which
 *   it reports on stdout (corrupting a bench's JSON) before failing;
 * - disconnected graphs with edges: METIS runs without the contiguity
 *   option, which fails on them;
 * - target weights are floats that METIS wants summing to 1: normalised in
 *   float with the last one taking the remainder;
 * - METIS keeps global state: calls are serialised by a mutex, so any
 *   thread may call;
 * - a METIS error or a part out of range falls back to the greedy map.
 * Weights are scaled to integers (at least 1) as METIS needs; the seed is
 * fixed, so the same input gives the same map. */
#ifndef HY_RUNTIME_MAP_H
#define HY_RUNTIME_MAP_H

#include "runtime/task.h"

/* nv partitions with costs cost[] (>= 0), ne edges (a < b, both < nv) onto
 * np PUs with speeds speed[] (> 0): part[v] in [0, np). *metis_calls (may be
 * NULL) gains the METIS calls made (0 or 1). */
hy_status hy_rt_map(int32_t nv, const double* cost, int32_t ne, const hy_rt_pedge* edges, int32_t np,
                    const double* speed, int32_t* part, int* metis_calls);

/* 1 when this build links METIS (otherwise every map is the greedy one). */
int hy_rt_map_have_metis(void);

#endif
