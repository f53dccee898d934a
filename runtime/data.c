/* The data layer: memories, channels, cheapest paths and valid bits. */
#include "runtime/data.h"

#include "runtime/data_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hy_rt_memnet_init(hy_rt_memnet* net) {
    memset(net, 0, sizeof *net);
    net->nmem = 1;
    snprintf(net->names[HY_RT_HOST], sizeof net->names[0], "host");
}

int hy_rt_memnet_set_device(hy_rt_memnet* net, int32_t mem, int device) {
    if (!net || mem <= HY_RT_HOST || mem >= net->nmem || device < -1) {
        (void)hy_fail(HY_ERR_INVALID_ARG, "memory %d: not a device memory, or device %d", mem, device);
        return -1;
    }
    net->cuda[mem] = device >= 0 && device < hy_rt_dev_count() ? device + 1 : 0;
    return net->cuda[mem] > 0;
}

hy_status hy_rt_memnet_add_memory(hy_rt_memnet* net, const char* name, int32_t* out) {
    if (!net || !name) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_memnet_add_memory: NULL argument");
    if (net->nmem >= HY_RT_MAX_MEMS)
        return hy_fail(HY_ERR_INVALID_ARG, "memory '%s': at most %d memories", name, HY_RT_MAX_MEMS);
    snprintf(net->names[net->nmem], sizeof net->names[0], "%s", name);
    net->cuda[net->nmem] = 0;
    if (out) *out = net->nmem;
    net->nmem++;
    return HY_OK;
}

hy_status hy_rt_memnet_add_channel(hy_rt_memnet* net, int32_t a, int32_t b, double latency, double bandwidth) {
    if (!net) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_memnet_add_channel: NULL net");
    if (a < 0 || b < 0 || a >= net->nmem || b >= net->nmem || a == b)
        return hy_fail(HY_ERR_INVALID_ARG, "channel %d-%d: memories must be distinct and in [0, %d)", a, b,
                       net->nmem);
    if (!(latency >= 0) || !isfinite(latency) || !(bandwidth > 0) || !isfinite(bandwidth))
        return hy_fail(HY_ERR_INVALID_ARG, "channel %s-%s: latency must be >= 0 and bandwidth > 0, got %g s, %g B/s",
                       net->names[a], net->names[b], latency, bandwidth);
    if (net->nchannels >= HY_RT_MAX_CHANNELS)
        return hy_fail(HY_ERR_INVALID_ARG, "at most %d channels", HY_RT_MAX_CHANNELS);
    hy_rt_channel* c = &net->channels[net->nchannels++];
    c->a = a;
    c->b = b;
    c->latency = latency;
    c->bandwidth = bandwidth;
    c->bytes = 0;
    return HY_OK;
}

void hy_rt_memnet_reset_counts(hy_rt_memnet* net) {
    for (int32_t i = 0; i < net->nchannels; i++) net->channels[i].bytes = 0;
}

static double channel_cost(const hy_rt_channel* c, size_t bytes) { return c->latency + (double)bytes / c->bandwidth; }

/* Dijkstra rooted at `root`: dist[m] the cheapest time from m to root,
 * via[m] the first channel of that path (-1 at the root or unreachable).
 * Channels are undirected, so the tree rooted at the destination gives
 * every source's path at once. O(M^2 + M·C) on a graph of a few dozen. */
static void shortest_to(const hy_rt_memnet* net, int32_t root, size_t bytes, double* dist, int32_t* via) {
    int done[HY_RT_MAX_MEMS] = {0};
    for (int32_t m = 0; m < net->nmem; m++) {
        dist[m] = INFINITY;
        via[m] = -1;
    }
    dist[root] = 0;
    for (;;) {
        int32_t u = -1;
        for (int32_t m = 0; m < net->nmem; m++)
            if (!done[m] && isfinite(dist[m]) && (u < 0 || dist[m] < dist[u])) u = m;
        if (u < 0) break;
        done[u] = 1;
        for (int32_t i = 0; i < net->nchannels; i++) {
            const hy_rt_channel* c = &net->channels[i];
            int32_t v = c->a == u ? c->b : c->b == u ? c->a : -1;
            if (v < 0 || done[v]) continue;
            double d = dist[u] + channel_cost(c, bytes);
            if (d < dist[v]) {
                dist[v] = d;
                via[v] = i;
            }
        }
    }
}

static int32_t other_end(const hy_rt_channel* c, int32_t m) { return c->a == m ? c->b : c->a; }

int32_t hy_rt_memnet_path(const hy_rt_memnet* net, int32_t from, int32_t to, size_t bytes, int32_t* path,
                          double* time) {
    double dist[HY_RT_MAX_MEMS];
    int32_t via[HY_RT_MAX_MEMS];
    if (time) *time = 0;
    if (from == to) return 0;
    shortest_to(net, to, bytes, dist, via);
    if (!isfinite(dist[from])) return -1;
    int32_t n = 0;
    for (int32_t m = from; m != to; m = other_end(&net->channels[via[m]], m)) path[n++] = via[m];
    if (time) *time = dist[from];
    return n;
}

void hy_rt_data_init(hy_rt_data* d, void* host, size_t bytes) {
    memset(d, 0, sizeof *d);
    d->bytes = bytes;
    d->copy[HY_RT_HOST] = host;
    d->valid = 1u << HY_RT_HOST;
}

void hy_rt_data_free(hy_rt_data* d) {
    for (int32_t m = 0; m < HY_RT_MAX_MEMS; m++) {
        if (!(d->allocated & (1u << m))) continue;
        if (d->on_device & (1u << m)) hy_rt_dev_free(d->device[m], d->copy[m]);
        else free(d->copy[m]);
        d->copy[m] = NULL;
    }
    d->allocated = d->on_device = 0;
}

static hy_status ensure_copy(const hy_rt_memnet* net, hy_rt_data* d, int32_t m) {
    if (d->copy[m]) return HY_OK;
    if (net->cuda[m] > 0) {
        hy_status s = hy_rt_dev_alloc(net->cuda[m] - 1, d->bytes, &d->copy[m]);
        if (s) return s;
        d->device[m] = net->cuda[m] - 1;
        d->allocated |= 1u << m;
        d->on_device |= 1u << m;
        return HY_OK;
    }
    d->copy[m] = malloc(d->bytes ? d->bytes : 1);
    if (!d->copy[m]) return hy_fail(HY_ERR_NOMEM, "out of memory for a %zu-byte copy in memory %d", d->bytes, m);
    d->allocated |= 1u << m;
    return HY_OK;
}

hy_status hy_rt_data_acquire(hy_rt_memnet* net, hy_rt_data* d, int32_t mem, int mode, void** ptr, double* time) {
    if (mem < 0 || mem >= net->nmem) return hy_fail(HY_ERR_INVALID_ARG, "acquire: no memory %d", mem);
    hy_status s = ensure_copy(net, d, mem);
    if (s) return s;
    /* Reading a stale copy: bring the data from the cheapest valid copy,
     * hop by hop; every memory passed through keeps a valid copy. */
    if ((mode & 1) && !(d->valid & (1u << mem))) {
        double dist[HY_RT_MAX_MEMS];
        int32_t via[HY_RT_MAX_MEMS];
        shortest_to(net, mem, d->bytes, dist, via);
        int32_t src = -1;
        for (int32_t m = 0; m < net->nmem; m++)
            if ((d->valid & (1u << m)) && isfinite(dist[m]) && (src < 0 || dist[m] < dist[src])) src = m;
        if (src < 0)
            return hy_fail(HY_ERR_INVALID_ARG, "acquire: no valid copy of a %zu-byte handle reaches memory %s",
                           d->bytes, net->names[mem]);
        for (int32_t m = src; m != mem;) {
            hy_rt_channel* c = &net->channels[via[m]];
            int32_t next = other_end(c, m);
            if ((s = ensure_copy(net, d, next))) return s;
            if (d->bytes && ((d->on_device >> next) & 1u || (d->on_device >> m) & 1u)) {
                if ((s = hy_rt_dev_copy(d->copy[next], d->copy[m], d->bytes))) return s;
            } else if (d->bytes) {
                memcpy(d->copy[next], d->copy[m], d->bytes);
            }
            c->bytes += (int64_t)d->bytes;
            if (time) *time += channel_cost(c, d->bytes);
            d->valid |= 1u << next;
            m = next;
        }
    }
    if (mode & 2) d->valid = 1u << mem;
    *ptr = d->copy[mem];
    return HY_OK;
}
