/* Job streams of the hybrid proximity framework recorded from real runs, for
 * the throughput half of `hyphys bench sched`.
 *
 * A stream holds, per replayed frame and per traversal round r, how many
 * TRAVERSE jobs (BVH node pairs) run in round r and how many LEAF jobs
 * (elementary tests) become available in round r, made by the traversal
 * jobs of round r - 1. Round 0 is the BVH front the framework starts from:
 * the root pair of every traversal job of collision/frames.c (each connected
 * component against itself, each pair of components whose swept boxes meet)
 * that passes its root test.
 *
 * How the rounds are found: each frame pair of the recording goes through
 * the real whole-step pipeline (hy_frames_run: BVH refit or rebuild,
 * traversal, filters, exact tests) and then its BVHs are traversed again
 * breadth first by a copy of the expansion of collision/traverse_hd.h kept
 * in sched_stream.c (the same single-precision gates on node and triangle
 * pairs, the same self-collision culling when on), one whole round at a
 * time, so round r is the set of node pairs at depth r. A leaf-leaf node
 * pair's triangle pairs with overlapping gates are counted in its round;
 * the sum over rounds equals hy_frames_stats.triangle_pairs (checked, with
 * a warning if not). LEAF jobs are what the framework's LEAF jobs are in a
 * step (collision/collide.c): the feature pairs the traversal emits
 * (hy_frames_stats.candidates), each then run through the separating-axes
 * filter and the exact test; they are spread over the rounds in proportion
 * to their triangle pairs (largest remainder), since the pipeline counts
 * them per frame, not per node pair. (Stream version 1 counted only the
 * exact tests left after the filters, 0.6 a cloth_ball frame against
 * ~321 K candidates: a stream of TRAVERSE jobs alone. Version 2 was
 * recorded before self culling worked with a thickness, the bench's
 * 1 mm: cloth_ball's cloth then made some 40 times the leaf work.)
 *
 * File: NAME/jobs.csv beside the recording, written on first use and
 * reused after while it is the current pipeline's: before reuse its first
 * two frames are recorded again (hy_job_stream_matches) and a stream whose
 * rounds differ there (made by a pipeline since changed: the BVH build or
 * refit, the traversal, the filters) is recorded again, as is a file of an
 * older version:
 *   # hyphys job stream 3 thickness=T frames=F
 *   frame,round,traverse,triangle_pairs,leaf
 *   0,0,3,0,0
 *   ... */
#ifndef HY_BENCH_SCHED_STREAM_H
#define HY_BENCH_SCHED_STREAM_H

#include <stdint.h>

#include "engine/export.h"
#include "hyphys/hyphys.h"

/* Most rounds a frame may have in a saved stream: a round is one level of
 * the traversal, so a real frame has at most the two trees' depths summed
 * (~30-60 in the benchmark scenes). */
#define HY_JOB_STREAM_MAX_ROUNDS 4096

typedef struct hy_job_round {
    int64_t traverse;       /* TRAVERSE jobs run in this round */
    int64_t triangle_pairs; /* triangle pairs with overlapping boxes found by the previous round's leaf pairs */
    int64_t leaf;           /* LEAF jobs (feature pairs to test) made by the previous round */
} hy_job_round;

typedef struct hy_job_stream {
    int32_t frames;
    int32_t* first;      /* frames + 1 entries: frame f's rounds are rounds[first[f] .. first[f + 1]) */
    hy_job_round* rounds;
    int64_t round_count;
    double thickness;
} hy_job_stream;

/* Replay frames 0..frames of rec (frames pairs) with contact distance
 * `thickness` and record the stream; threads for the pipeline (>= 1). */
hy_status hy_job_stream_record(const hy_recording* rec, int32_t frames, double thickness, int threads,
                               hy_job_stream* out);
hy_status hy_job_stream_save(const hy_job_stream* s, const char* path);
/* HY_ERR_IO when the file is missing; HY_ERR_PARSE naming the line when it is
 * malformed. */
hy_status hy_job_stream_load(const char* path, hy_job_stream* out);
void hy_job_stream_free(hy_job_stream* s);
/* *same = 1 when the first two frames of s (one where s or rec has no
 * more) have the rounds that recording them again from rec (>= 2 frames)
 * gives with this build's pipeline: frame 0 builds the trees, frame 1
 * refits them, so this tells a stream made by the current code from one
 * made before a change to the BVH build or refit, the traversal or the
 * filters. */
hy_status hy_job_stream_matches(const hy_job_stream* s, const hy_recording* rec, int threads, int* same);

#endif
