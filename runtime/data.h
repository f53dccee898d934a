/* The data layer: one copy of each handle per memory, a valid bit per copy,
 * and the device connectivity graph that transfers follow.
 *
 * Memories are the host (always memory 0), each GPU and each modeled
 * device's memory; channels join two memories with a latency and a
 * bandwidth (both directions). Acquiring a handle for reading in a memory
 * whose copy is stale copies it from the valid copy that is cheapest to
 * reach, along the cheapest path (Dijkstra over the small graph; the cost of
 * a channel for b bytes is latency + b / bandwidth), and leaves every memory
 * on the way holding a valid copy. Acquiring for writing clears every other
 * valid bit. Each channel counts the bytes it carried; the caller resets the
 * counts (per step).
 *
 * A memory placed on a CUDA GPU (hy_rt_memnet_set_device) holds its
 * copies in that GPU's memory (cudaMalloc, runtime/data_cuda.h) and moves
 * them with cudaMemcpy; every other memory (a modeled device's, a GPU
 * twin's, any memory where this build or machine has no GPU) holds host
 * buffers: copies are real memcpys, their times are modeled.
 *
 * Threads: a net and the handles using it are used from one thread at a
 * time. */
#ifndef HY_RUNTIME_DATA_H
#define HY_RUNTIME_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define HY_RT_MAX_MEMS 32
#define HY_RT_MAX_CHANNELS 64
#define HY_RT_HOST 0

typedef struct hy_rt_channel {
    int32_t a, b;         /* the two memories */
    double latency;       /* seconds per transfer */
    double bandwidth;     /* bytes per second, > 0 */
    int64_t bytes;        /* carried since the last reset, both directions */
} hy_rt_channel;

typedef struct hy_rt_memnet {
    int32_t nmem, nchannels;
    char names[HY_RT_MAX_MEMS][16];
    /* 1 + the CUDA GPU holding memory m's copies; 0 (a zeroed net): host buffers */
    int32_t cuda[HY_RT_MAX_MEMS];
    hy_rt_channel channels[HY_RT_MAX_CHANNELS];
} hy_rt_memnet;

/* A net holding the host memory only. */
void hy_rt_memnet_init(hy_rt_memnet* net);
hy_status hy_rt_memnet_add_memory(hy_rt_memnet* net, const char* name, int32_t* out);
hy_status hy_rt_memnet_add_channel(hy_rt_memnet* net, int32_t a, int32_t b, double latency, double bandwidth);
void hy_rt_memnet_reset_counts(hy_rt_memnet* net);
/* Memory `mem` (not the host) is CUDA GPU `device`'s: its copies are
 * allocated there. Where this build or machine has no such GPU
 * (hy_rt_dev_count) it keeps host buffers and 0 is returned; 1 when it is
 * on the GPU. -1 (HY_ERR_INVALID_ARG raised) for the host or a bad index. */
int hy_rt_memnet_set_device(hy_rt_memnet* net, int32_t mem, int device);

/* The cheapest path from memory `from` to `to` for `bytes` bytes: its
 * channels in order into path[] (at most HY_RT_MAX_MEMS - 1), its modeled
 * time into *time. Returns the number of channels, 0 when from == to, -1
 * when `to` cannot be reached. Ties go to the path found first (lower
 * memory indices), so the choice is deterministic. */
int32_t hy_rt_memnet_path(const hy_rt_memnet* net, int32_t from, int32_t to, size_t bytes, int32_t* path,
                          double* time);

/* One handle's copies. copy[HY_RT_HOST] is the caller's buffer; the others
 * are allocated on first use and freed by hy_rt_data_free. */
typedef struct hy_rt_data {
    size_t bytes;
    void* copy[HY_RT_MAX_MEMS];
    uint32_t valid;       /* bit m: copy[m] holds the current data */
    uint32_t allocated;   /* bit m: copy[m] is ours to free */
    uint32_t on_device;   /* bit m: copy[m] is GPU memory, of device[m] */
    int32_t device[HY_RT_MAX_MEMS];
} hy_rt_data;

void hy_rt_data_init(hy_rt_data* d, void* host, size_t bytes);
void hy_rt_data_free(hy_rt_data* d);

/* Acquire handle d in memory `mem` for `mode` (1 read, 2 write, 3 both, as
 * hy_rt_mode): *ptr is the copy to use there; *time (may be NULL) gains the
 * modeled time of the transfers made. HY_ERR_NOMEM, or HY_ERR_INVALID_ARG
 * when no valid copy can reach `mem`, or a GPU's failure (HY_ERR_INTERNAL,
 * named). A GPU copy is device memory: only that GPU's kernels read it. */
hy_status hy_rt_data_acquire(hy_rt_memnet* net, hy_rt_data* d, int32_t mem, int mode, void** ptr, double* time);

#endif
