/* The traversal front's answers kept across the detection rounds of one
 * step (collision/collide.c).
 *
 * The rounds of a step share X0; between two rounds the response moves a
 * few hundred of a cloth's vertices, so most of the traversal front's node
 * pairs see exactly the positions they saw before. A front pair's output,
 * its candidates, their exact-test answers and so its contacts, depends
 * only on the triangles below its two nodes (their positions at both ends,
 * boxes, normal cones and self-culling marks, all functions of those
 * positions) and on the pair's contact distance. So a pair whose two
 * subtrees hold no vertex moved since the round that answered it is given
 * that answer again instead of being run: the round's contacts, candidate
 * and exact-test counts are the ones a full traversal would give, and a
 * step's result does not change.
 *
 * A pair is known by its two objects' slots, its two node indices and the
 * two trees' build numbers (a rebuild renumbers nodes); the node indices
 * of one build are stable, and a refit keeps the tree. The memo lives for
 * one step: the first round of a step (a new X0) empties it. */
#ifndef HY_COLLISION_FRONT_MEMO_H
#define HY_COLLISION_FRONT_MEMO_H

#include <stdint.h>

#include "collision/bvh.h"
#include "collision/contact.h"
#include "collision/traverse.h"

typedef struct hy_front_memo hy_front_memo;

hy_front_memo* hy_front_memo_create(void);
void hy_front_memo_destroy(hy_front_memo* m);

/* A new step: nothing is kept. */
void hy_front_memo_clear(hy_front_memo* m);

/* After hy_traverse_begin of detection round `round` (1 = the step's
 * first): front pairs whose answer is kept are dropped from t's front
 * (hy_traverse_keep), the rest stay in order to be run. job_lo/job_hi:
 * the object slots of each traversal job, bvh: the trees per slot,
 * deforms: per slot 1 when a round may move some of its vertices (pairs
 * of two rigid objects, whose trees change only as a whole, are run and
 * not kept), vertex_round: per global vertex the round its X1 last
 * changed. *front gets the pairs left to run. */
hy_status hy_front_memo_select(hy_front_memo* m, hy_traverser* t, const int32_t* job_lo, const int32_t* job_hi,
                               hy_bvh* const* bvh, const unsigned char* deforms, const int32_t* vertex_round,
                               int32_t round, int64_t* front);

/* After the round's exact tests: run pair f (numbered as after select)
 * had `candidates` candidates, `exact` exact tests and the contacts given
 * (count of them). Call once per run pair, in any order. */
hy_status hy_front_memo_record(hy_front_memo* m, int64_t f, int64_t candidates, int64_t exact,
                               const hy_contact* contacts, int64_t count);

/* The pairs kept from earlier rounds, for the caller to give their
 * contacts and counts again: pair i of hy_front_memo_kept_count. */
int64_t hy_front_memo_kept_count(const hy_front_memo* m);
void hy_front_memo_kept(const hy_front_memo* m, int64_t i, int32_t* job, int64_t* candidates, int64_t* exact,
                        const hy_contact** contacts, int64_t* count);

/* End of the round: the run and kept pairs become the memo the next
 * round reads. HY_ERR_NOMEM leaves the memo empty (the next round runs
 * every pair). */
hy_status hy_front_memo_end(hy_front_memo* m);

#endif
