/* The modeled executor: a discrete-event run of one step under a virtual
 * clock, with partition ownership, stealing and measured costs. */
#include "runtime/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/hash.h"
#include "runtime/map.h"
#include "runtime/policy.h"
#include "runtime/queues.h"

/* The threshold starts where both kinds are equally fast and moves by 10%
 * per failed steal round: enough to cross a few partitions' ratios within a
 * step, small enough not to swing past them. */
#define THRESHOLD_START 1.0
#define THRESHOLD_STEP 1.1

hy_status hy_rt_sim_create(const hy_rt_machine* m, const char* policy, uint64_t seed, hy_rt_sim** out) {
    if (!m || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_sim_create: NULL argument");
    *out = NULL;
    if (m->npu < 1) return hy_fail(HY_ERR_INVALID_ARG, "machine %s has no PU", m->name);
    const hy_rt_policy_class* cls;
    hy_status s = hy_rt_policy_lookup(policy, &cls);
    if (s) return s;
    hy_rt_sim* sim = calloc(1, sizeof *sim);
    if (!sim) return hy_fail(HY_ERR_NOMEM, "out of memory creating a sim");
    sim->m = *m;
    sim->policy = cls;
    sim->rng = seed;
    sim->threshold = THRESHOLD_START;
    sim->threshold_step = THRESHOLD_STEP;
    for (int k = 0; k < HY_RT_PU_KINDS; k++) {
        sim->fit[k].setup = sim->fit[k].prior_setup = 0;
        sim->fit[k].unit = 1;
    }
    for (int32_t q = m->npu - 1; q >= 0; q--) sim->fit[m->pu[q].kind].setup = sim->fit[m->pu[q].kind].prior_setup =
                                                  m->pu[q].overhead;
    *out = sim;
    return HY_OK;
}

void hy_rt_sim_destroy(hy_rt_sim* s) {
    if (!s) return;
    free(s->owner);
    free(s->cost);
    free(s->kind_time);
    free(s->est_time);
    free(s->eligible);
    free(s->edges);
    free(s->adj_start);
    free(s->adj);
    free(s->part_tasks);
    free(s->part_work);
    free(s->part_bytes);
    free(s->task_rank);
    free(s->bkind);
    free(s->bcount);
    free(s->paid);
    free(s->join);
    free(s);
}

void hy_rt_sim_set_trace(hy_rt_sim* s, hy_rt_trace* t) {
    s->trace = t;
    if (!t) return;
    char name[64];
    for (int32_t q = 0; q < s->m.npu; q++) {
        snprintf(name, sizeof name, "%s (modeled)", s->m.pu[q].name);
        hy_rt_trace_track(t, q, name);
    }
    snprintf(name, sizeof name, "scheduler (%s)", s->policy->name);
    hy_rt_trace_track(t, s->m.npu, name);
}

double hy_rt_wall_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t hy_rt_random(uint64_t* x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int32_t hy_rt_sim_count_kind(const hy_rt_sim* s, hy_rt_pu_kind k) {
    int32_t n = 0;
    for (int32_t q = 0; q < s->m.npu; q++) n += s->m.pu[q].kind == k;
    return n;
}

int hy_rt_sim_in_affinity(const hy_rt_sim* s, int32_t q, int32_t p) {
    if (s->adj_start[p] == s->adj_start[p + 1]) return 1;
    int owns = 0;
    for (int32_t i = s->adj_start[p]; i < s->adj_start[p + 1]; i++)
        if (s->owner[s->adj[i]] == q) return 1;
    for (int32_t p2 = 0; p2 < s->npart && !owns; p2++) owns = s->owner[p2] == q;
    /* a PU that owns nothing has no data to keep together: without this,
     * a PU whose partitions were all stolen would never be in a list again */
    return !owns;
}

void hy_rt_sim_map_round_robin(hy_rt_sim* s, const uint8_t* part_mask, unsigned kind_mask) {
    int32_t pus[HY_RT_MAX_PUS], np = 0;
    for (int32_t q = 0; q < s->m.npu; q++)
        if (kind_mask & (1u << s->m.pu[q].kind)) pus[np++] = q;
    if (!np) return;
    for (int32_t p = 0; p < s->npart; p++)
        if (!part_mask || part_mask[p]) s->owner[p] = pus[p % np];
}

hy_status hy_rt_sim_map_metis(hy_rt_sim* s, const uint8_t* part_mask, unsigned kind_mask) {
    int32_t pus[HY_RT_MAX_PUS], np = 0;
    double speed[HY_RT_MAX_PUS];
    for (int32_t q = 0; q < s->m.npu; q++)
        if (kind_mask & (1u << s->m.pu[q].kind)) {
            speed[np] = s->m.pu[q].speed;
            pus[np++] = q;
        }
    if (!np || !s->npart) return HY_OK;
    int single = kind_mask == 1u || kind_mask == 2u ? (kind_mask == 2u) : -1;
    int32_t* index = malloc((size_t)s->npart * sizeof *index);
    int32_t* verts = malloc((size_t)s->npart * sizeof *verts);
    int32_t* part = malloc((size_t)s->npart * sizeof *part);
    double* cost = malloc((size_t)s->npart * sizeof *cost);
    hy_rt_pedge* e = malloc((size_t)(s->nedges ? s->nedges : 1) * sizeof *e);
    hy_status st = HY_OK;
    if (!index || !verts || !part || !cost || !e) {
        st = hy_fail(HY_ERR_NOMEM, "out of memory mapping %d partitions", s->npart);
        goto done;
    }
    /* Both kinds in one map: METIS balances one weight per partition against
     * one target weight per PU, so both must be in one unit. A partition
     * weighs its time on a CPU (measured, else modeled) and a PU's speed is
     * the time the partitions take on a CPU over the time they take on the
     * PU's kind: what the PUs really deliver on this workload, launch costs
     * included, rather than their nominal speeds (a GPU of speed 6 paying
     * 50 us a task is slower than a core on small objects). */
    int mixed = 0;
    for (int32_t i = 1; i < np; i++) mixed |= s->m.pu[pus[i]].kind != s->m.pu[pus[0]].kind;
    if (mixed) {
        double on[HY_RT_PU_KINDS] = {0, 0};
        int32_t first[HY_RT_PU_KINDS] = {-1, -1};
        for (int32_t i = np - 1; i >= 0; i--) first[s->m.pu[pus[i]].kind] = pus[i];
        for (int32_t p = 0; p < s->npart; p++)
            if (!part_mask || part_mask[p])
                for (int k = 0; k < HY_RT_PU_KINDS; k++) on[k] += hy_rt_sim_part_time(s, p, (hy_rt_pu_kind)k);
        for (int32_t i = 0; i < np && on[HY_RT_CPU] > 0; i++) {
            const hy_rt_pu* pu = &s->m.pu[pus[i]];
            if (on[pu->kind] > 0) speed[i] = on[HY_RT_CPU] / on[pu->kind] * (pu->speed / s->m.pu[first[pu->kind]].speed);
        }
    }
    int32_t nv = 0, ne = 0;
    for (int32_t p = 0; p < s->npart; p++) {
        index[p] = -1;
        if (part_mask && !part_mask[p]) continue;
        double c = mixed ? hy_rt_sim_part_time(s, p, HY_RT_CPU)
                   : single >= 0 && s->kind_time[2 * p + single] >= 0 ? s->kind_time[2 * p + single]
                                                                       : s->cost[p];
        cost[nv] = c;
        verts[nv] = p;
        index[p] = nv++;
    }
    for (int32_t i = 0; i < s->nedges; i++) {
        int32_t a = index[s->edges[i].a], b = index[s->edges[i].b];
        if (a < 0 || b < 0) continue;
        e[ne].a = a;
        e[ne].b = b;
        e[ne].bytes = s->edges[i].bytes;
        ne++;
    }
    int calls = 0;
    st = hy_rt_map(nv, cost, ne, e, np, speed, part, &calls);
    s->stats.metis_calls += calls;
    if (!st)
        for (int32_t i = 0; i < nv; i++) s->owner[verts[i]] = pus[part[i]];
done:
    free(index);
    free(verts);
    free(part);
    free(cost);
    free(e);
    return st;
}

/* Grow the per-partition arrays to n; new partitions have no owner, their
 * submitted work as cost and no measurement. */
static hy_status grow_partitions(hy_rt_sim* s, const hy_rt_graph* g) {
    int32_t n = g->npartitions;
    if (n > s->cap_part) {
        int32_t c = s->cap_part ? s->cap_part : 16;
        while (c < n) c *= 2;
        int32_t* owner = realloc(s->owner, (size_t)c * sizeof *owner);
        if (owner) s->owner = owner;
        double* cost = realloc(s->cost, (size_t)c * sizeof *cost);
        if (cost) s->cost = cost;
        double* kt = realloc(s->kind_time, (size_t)c * 2 * sizeof *kt);
        if (kt) s->kind_time = kt;
        double* et = realloc(s->est_time, (size_t)c * 2 * sizeof *et);
        if (et) s->est_time = et;
        uint8_t* el = realloc(s->eligible, (size_t)c);
        if (el) s->eligible = el;
        int32_t* pt = realloc(s->part_tasks, (size_t)c * sizeof *pt);
        if (pt) s->part_tasks = pt;
        double* pw = realloc(s->part_work, (size_t)c * sizeof *pw);
        if (pw) s->part_work = pw;
        double* pb = realloc(s->part_bytes, (size_t)c * sizeof *pb);
        if (pb) s->part_bytes = pb;
        int32_t* as = realloc(s->adj_start, ((size_t)c + 1) * sizeof *as);
        if (as) s->adj_start = as;
        const hy_rt_kind** bk = realloc(s->bkind, (size_t)c * HY_RT_BATCH_KINDS * sizeof *bk);
        if (bk) s->bkind = bk;
        int32_t* bc = realloc(s->bcount, (size_t)c * HY_RT_BATCH_KINDS * sizeof *bc);
        if (bc) s->bcount = bc;
        double* pd = realloc(s->paid, (size_t)c * sizeof *pd);
        if (pd) s->paid = pd;
        double* jn = realloc(s->join, (size_t)c * sizeof *jn);
        if (jn) s->join = jn;
        if (!owner || !cost || !kt || !et || !el || !as || !pt || !pw || !pb || !bk || !bc || !pd || !jn)
            return hy_fail(HY_ERR_NOMEM, "out of memory for %d partitions", n);
        for (int32_t p = s->cap_part; p < c; p++) {
            s->owner[p] = -1;
            s->cost[p] = -1;
            s->kind_time[2 * p] = s->kind_time[2 * p + 1] = -1;
            s->paid[p] = s->join[p] = 0;
        }
        s->cap_part = c;
    }
    if (g->ntasks > s->cap_tasks) {
        int32_t c = s->cap_tasks ? s->cap_tasks : 64;
        while (c < g->ntasks) c *= 2;
        int32_t* tr = realloc(s->task_rank, (size_t)c * sizeof *tr);
        if (!tr) return hy_fail(HY_ERR_NOMEM, "out of memory for %d tasks", g->ntasks);
        s->task_rank = tr;
        s->cap_tasks = c;
    }
    for (int32_t p = 0; p < n; p++)
        if (s->cost[p] < 0) s->cost[p] = g->partition_work[p];
    s->npart = n;
    return HY_OK;
}

/* Which kinds each task and partition can run on here: a modeled GPU runs
 * the CPU implementation in the CUDA one's place, so it needs both; a
 * team's real GPU (real_gpus) needs the CUDA one only. */
static unsigned task_kinds(const hy_rt_sim* s, const hy_rt_kind* k) {
    return (k->cpu_fn ? 1u << HY_RT_CPU : 0u) |
           (k->cuda_fn && (k->cpu_fn || s->real_gpus) ? 1u << HY_RT_GPU : 0u);
}

/* For batched launches: each task's rank among its partition's tasks of its
 * kind, and each partition's kinds with their task counts (a partition
 * with more kinds than HY_RT_BATCH_KINDS gets count -1 in its first slot:
 * it shares no launch). */
static void batch_ranks(hy_rt_sim* s, const hy_rt_graph* g) {
    if (!s->batch) return;
    for (int32_t i = 0; i < s->npart * HY_RT_BATCH_KINDS; i++) {
        s->bkind[i] = NULL;
        s->bcount[i] = 0;
    }
    for (int32_t t = 0; t < g->ntasks; t++) {
        int32_t p = g->tasks[t].partition, i = 0;
        const hy_rt_kind** bk = &s->bkind[HY_RT_BATCH_KINDS * p];
        int32_t* bc = &s->bcount[HY_RT_BATCH_KINDS * p];
        s->task_rank[t] = -1;
        if (bc[0] < 0) continue;
        while (i < HY_RT_BATCH_KINDS && bk[i] && bk[i] != g->tasks[t].kind) i++;
        if (i == HY_RT_BATCH_KINDS) {
            bc[0] = -1;
            continue;
        }
        bk[i] = g->tasks[t].kind;
        s->task_rank[t] = bc[i]++;
    }
}

int hy_rt_sim_batchable(const hy_rt_sim* s, int32_t p) {
    return s->batch && s->batch[p] && s->bcount[HY_RT_BATCH_KINDS * p] >= 0;
}

/* The partitions sharing the launch of partition p's task of kind k and
 * rank r on GPU q, the partitions placed as owner[] says: p itself and
 * every other batchable partition on q with a task of that kind and rank. */
static int32_t sharers(const hy_rt_sim* s, const int32_t* owner, int32_t q, int32_t p, const hy_rt_kind* k,
                       int32_t r) {
    int32_t m = 1;
    for (int32_t p2 = 0; p2 < s->npart; p2++) {
        if (p2 == p || owner[p2] != q || !hy_rt_sim_batchable(s, p2)) continue;
        for (int i = 0; i < HY_RT_BATCH_KINDS && s->bkind[HY_RT_BATCH_KINDS * p2 + i]; i++)
            if (s->bkind[HY_RT_BATCH_KINDS * p2 + i] == k) {
                m += s->bcount[HY_RT_BATCH_KINDS * p2 + i] > r;
                break;
            }
    }
    return m;
}

/* The share of its per-task cost that task t pays on GPU q: 1 / its
 * sharers under the current owners; 1 when t's partition is not batchable. */
static double launch_share(const hy_rt_sim* s, const hy_rt_graph* g, int32_t q, int32_t t) {
    const hy_rt_task* task = &g->tasks[t];
    if (!hy_rt_sim_batchable(s, task->partition) || s->task_rank[t] < 0) return 1.0;
    return 1.0 / sharers(s, s->owner, q, task->partition, task->kind, s->task_rank[t]);
}

double hy_rt_sim_launches(const hy_rt_sim* s, const int32_t* owner, int32_t p, int32_t q) {
    if (s->m.pu[q].kind != HY_RT_GPU || !hy_rt_sim_batchable(s, p)) return s->part_tasks[p];
    double n = 0;
    for (int i = 0; i < HY_RT_BATCH_KINDS && s->bkind[HY_RT_BATCH_KINDS * p + i]; i++)
        for (int32_t r = 0; r < s->bcount[HY_RT_BATCH_KINDS * p + i]; r++)
            n += 1.0 / sharers(s, owner, q, p, s->bkind[HY_RT_BATCH_KINDS * p + i], r);
    return n;
}

void hy_rt_sim_join_launches(hy_rt_sim* s) {
    for (int32_t p = 0; p < s->npart; p++) {
        s->join[p] = s->part_tasks[p];
        if (!hy_rt_sim_batchable(s, p)) continue;
        int32_t own = s->owner[p];
        if (own >= 0 && s->m.pu[own].kind == HY_RT_GPU) {
            s->join[p] = hy_rt_sim_launches(s, s->owner, p, own);
            continue;
        }
        for (int32_t q = 0; q < s->m.npu; q++)
            if (s->m.pu[q].kind == HY_RT_GPU) s->join[p] = fmin(s->join[p], hy_rt_sim_launches(s, s->owner, p, q));
    }
}

/* t, a time of p on a GPU that paid `paid` launches, with those replaced
 * by `now` (the first GPU's overhead each: the profiles' GPUs share one). */
static double relaunch(const hy_rt_sim* s, int32_t p, double t, double paid, double now) {
    if (!hy_rt_sim_batchable(s, p)) return t;
    for (int32_t q = 0; q < s->m.npu; q++)
        if (s->m.pu[q].kind == HY_RT_GPU) return t + s->m.pu[q].overhead * (now - paid);
    return t;
}

double hy_rt_sim_rebatch(const hy_rt_sim* s, int32_t p, double t, double paid) {
    return relaunch(s, p, t, paid, s->join[p]);
}

static hy_status check_and_estimate(hy_rt_sim* s, const hy_rt_graph* g) {
    unsigned present = 0;
    int32_t first[HY_RT_PU_KINDS] = {-1, -1};
    for (int32_t q = s->m.npu - 1; q >= 0; q--) {
        present |= 1u << s->m.pu[q].kind;
        first[s->m.pu[q].kind] = q;
    }
    for (int32_t p = 0; p < s->npart; p++) {
        s->eligible[p] = 3;
        s->est_time[2 * p] = s->est_time[2 * p + 1] = 0;
        s->part_tasks[p] = 0;
        s->part_work[p] = 0;
        s->part_bytes[p] = 0;
    }
    /* a handle's bytes count once for the partition that writes it (the
     * last one to, where several do: the others' copies go stale anyway) */
    int32_t* writer = malloc((size_t)(g->nhandles ? g->nhandles : 1) * sizeof *writer);
    if (!writer) return hy_fail(HY_ERR_NOMEM, "sim: out of memory for %d handles", g->nhandles);
    for (int32_t h = 0; h < g->nhandles; h++) writer[h] = -1;
    for (int32_t t = 0; t < g->ntasks; t++) {
        const hy_rt_task* task = &g->tasks[t];
        for (int i = 0; i < task->kind->nargs; i++)
            if (task->kind->modes[i] & HY_RT_W) writer[task->handles[i]] = task->partition;
    }
    for (int32_t h = 0; h < g->nhandles; h++)
        if (writer[h] >= 0) s->part_bytes[writer[h]] += (double)g->handles[h].data.bytes;
    free(writer);
    for (int32_t t = 0; t < g->ntasks; t++) {
        const hy_rt_task* task = &g->tasks[t];
        unsigned k = task_kinds(s, task->kind);
        if (!(k & present))
            return hy_fail(HY_ERR_UNSUPPORTED,
                           "task %d (kind %s) has no implementation for any PU of machine %s%s", t, task->kind->name,
                           s->m.name, task->kind->cpu_fn || s->real_gpus ? "" : " (a modeled GPU needs the CPU implementation)");
        s->eligible[task->partition] &= (uint8_t)k;
        s->part_tasks[task->partition]++;
        s->part_work[task->partition] += task->work;
        for (int kind = 0; kind < HY_RT_PU_KINDS; kind++)
            if (first[kind] >= 0) s->est_time[2 * task->partition + kind] += hy_rt_machine_task_time(&s->m, first[kind], task);
    }
    for (int32_t p = 0; p < s->npart; p++)
        if (!(s->eligible[p] & present))
            return hy_fail(HY_ERR_UNSUPPORTED, "partition %d: its tasks share no kind of PU of machine %s", p,
                           s->m.name);
    batch_ranks(s, g);
    return HY_OK;
}

/* The partition graph, its CSR and signature; 1 in *changed when it differs
 * from the last step's. */
static hy_status build_partition_graph(hy_rt_sim* s, const hy_rt_graph* g, int* changed) {
    free(s->edges);
    s->edges = NULL;
    hy_status st = hy_rt_graph_partition_edges(g, &s->edges, &s->nedges);
    if (st) return st;
    free(s->adj);
    s->adj = malloc((size_t)(2 * s->nedges + 1) * sizeof *s->adj);
    if (!s->adj) return hy_fail(HY_ERR_NOMEM, "out of memory for the partition graph");
    for (int32_t p = 0; p <= s->npart; p++) s->adj_start[p] = 0;
    for (int32_t i = 0; i < s->nedges; i++) {
        s->adj_start[s->edges[i].a + 1]++;
        s->adj_start[s->edges[i].b + 1]++;
    }
    for (int32_t p = 0; p < s->npart; p++) s->adj_start[p + 1] += s->adj_start[p];
    int32_t* fill = calloc((size_t)s->npart + 1, sizeof *fill);
    if (!fill) return hy_fail(HY_ERR_NOMEM, "out of memory for the partition graph");
    uint64_t sig = hy_fnv1a(HY_FNV1A_INIT, &s->npart, sizeof s->npart);
    for (int32_t i = 0; i < s->nedges; i++) {
        int32_t a = s->edges[i].a, b = s->edges[i].b;
        s->adj[s->adj_start[a] + fill[a]++] = b;
        s->adj[s->adj_start[b] + fill[b]++] = a;
        sig = hy_fnv1a(sig, &a, sizeof a);
        sig = hy_fnv1a(sig, &b, sizeof b);
    }
    free(fill);
    *changed = s->step == 0 || sig != s->graph_sig;
    s->graph_sig = sig;
    return HY_OK;
}

/* Partitions whose owner cannot run them go, in index order, to the PU that
 * can and has the least modeled load. */
static void fix_owners(hy_rt_sim* s) {
    double load[HY_RT_MAX_PUS] = {0};
    for (int32_t p = 0; p < s->npart; p++) {
        int32_t q = s->owner[p];
        if (q >= 0 && q < s->m.npu && (s->eligible[p] & (1u << s->m.pu[q].kind)))
            load[q] += s->est_time[2 * p + s->m.pu[q].kind];
        else
            s->owner[p] = -1;
    }
    for (int32_t p = 0; p < s->npart; p++) {
        if (s->owner[p] >= 0) continue;
        int32_t best = -1;
        for (int32_t q = 0; q < s->m.npu; q++)
            if ((s->eligible[p] & (1u << s->m.pu[q].kind)) && (best < 0 || load[q] < load[best])) best = q;
        s->owner[p] = best;
        load[best] += s->est_time[2 * p + s->m.pu[best].kind];
    }
}

void hy_rt_sim_move_cost(const hy_rt_sim* s, const int32_t* from, const int32_t* to, double* load) {
    int32_t path[HY_RT_MAX_MEMS];
    for (int32_t p = 0; p < s->npart; p++) {
        if (from[p] < 0 || from[p] == to[p]) continue;
        double t = 0;
        if (hy_rt_memnet_path(&s->m.net, s->m.pu[from[p]].mem, s->m.pu[to[p]].mem, (size_t)s->part_bytes[p], path,
                              &t) > 0)
            load[to[p]] += t;
    }
}

double hy_rt_sim_expected(const hy_rt_sim* s, const int32_t* owner, int32_t p, int32_t q) {
    const hy_rt_cost_fit* f = &s->fit[s->m.pu[q].kind];
    return f->setup * hy_rt_sim_launches(s, owner ? owner : s->owner, p, q) +
           f->unit * s->part_work[p] / s->m.pu[q].speed;
}

/* Learning (hy_rt_cost_fit): older steps weigh half as much per step; the
 * bounds keep one odd step from sending the model far from the machine's
 * constants. */
#define FIT_DECAY 0.5
#define FIT_RANGE 16.0
#define FIT_SETUP_MAX 1e-3

static void fit_add(hy_rt_cost_fit* f, double n, double w, double y) {
    f->nn += n * n;
    f->nw += n * w;
    f->ww += w * w;
    f->ny += n * y;
    f->wy += w * y;
    f->samples++;
}

static void fit_solve(hy_rt_cost_fit* f) {
    if (!(f->ww > 0)) return;
    double setup_max = fmax(FIT_RANGE * f->prior_setup, FIT_SETUP_MAX);
    double det = f->nn * f->ww - f->nw * f->nw;
    double setup = f->setup, unit;
    if (det > 0.01 * f->nn * f->ww) { /* task counts spread enough to tell setup from unit */
        setup = (f->ny * f->ww - f->wy * f->nw) / det;
        setup = fmin(fmax(setup, 0.0), setup_max);
    }
    unit = (f->wy - setup * f->nw) / f->ww;
    f->setup = setup;
    f->unit = fmin(fmax(unit, 1.0 / FIT_RANGE), FIT_RANGE);
}

/* Each partition ran on the PU that owns it at the end of the step (a
 * partition is stolen before its own work starts; at most an interaction
 * it ran first for others ran elsewhere). The model is of computing:
 * xfer[p] (may be NULL), the transfers a partition's tasks waited for, is
 * left out. Those follow from where the data was, not from the partition
 * and the kind: a partition moved by a re-plan pays its data's trip once,
 * and the transfers of cut edges, every step, are valued by the plans
 * themselves (policy_lp.c); absorbed into setup and unit they were counted
 * twice, and a re-plan's one-off moves skewed the model for steps after. */
static void learn(hy_rt_sim* s, const uint8_t* ran_on, const double* measured, const double* xfer,
                  const double* launches) {
    for (int k = 0; k < HY_RT_PU_KINDS; k++) {
        hy_rt_cost_fit* f = &s->fit[k];
        f->nn *= FIT_DECAY;
        f->nw *= FIT_DECAY;
        f->ww *= FIT_DECAY;
        f->ny *= FIT_DECAY;
        f->wy *= FIT_DECAY;
    }
    for (int32_t p = 0; p < s->npart; p++) {
        if (!ran_on[p]) continue;
        int32_t q = s->owner[p];
        fit_add(&s->fit[s->m.pu[q].kind], launches ? launches[p] : s->part_tasks[p],
                s->part_work[p] / s->m.pu[q].speed, measured[p] - (xfer ? xfer[p] : 0.0));
    }
    for (int k = 0; k < HY_RT_PU_KINDS; k++) fit_solve(&s->fit[k]);
}

/* ---- the event loop */

typedef struct event {
    double t;
    int32_t task;
} event;

static int event_before(const event* a, const event* b) { return a->t < b->t || (a->t == b->t && a->task < b->task); }

static void heap_push(event* h, int32_t* n, event e) {
    int32_t i = (*n)++;
    while (i > 0 && event_before(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static event heap_pop(event* h, int32_t* n) {
    event top = h[0], last = h[--(*n)];
    int32_t i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && event_before(&h[c + 1], &h[c])) c++;
        if (!event_before(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

typedef struct run_state {
    hy_rt_graph* g;
    hy_rt_queues q;
    uint8_t* ran_on;    /* per partition: bit k = a task ran on kind k */
    double* measured;   /* per partition: modeled time of its tasks this step */
    double* xfer;       /* per partition: of which transfers */
    double* launches;   /* per partition: per-task costs paid, in units of one (batch shares summed) */
    event* heap;
    int32_t nheap;
    double pu_time[HY_RT_MAX_PUS];
    uint8_t parked[HY_RT_MAX_PUS];
    uint8_t failed[HY_RT_MAX_PUS]; /* has failed to steal since it last ran a task */
} run_state;

static hy_status start_task(hy_rt_sim* s, run_state* r, int32_t q, int32_t t) {
    hy_rt_task* task = &r->g->tasks[t];
    const hy_rt_pu* pu = &s->m.pu[q];
    void* bufs[HY_RT_MAX_ARGS];
    double xfer = 0;
    for (int i = 0; i < task->kind->nargs; i++) {
        double before = xfer;
        const hy_rt_data* d = &r->g->handles[task->handles[i]].data;
        hy_status st = hy_rt_data_acquire(&s->m.net, &r->g->handles[task->handles[i]].data, pu->mem,
                                          (int)task->kind->modes[i], &bufs[i], &xfer);
        if (st) return st;
        if (s->trace && xfer > before) {
            char args[96];
            snprintf(args, sizeof args, "\"handle\":%d,\"bytes\":%zu,\"task\":%d", task->handles[i], d->bytes, t);
            hy_rt_trace_span(s->trace, "transfer", "transfer", q, r->pu_time[q] + before, xfer - before, args);
        }
    }
    /* a modeled GPU computes with the CPU implementation */
    task->kind->cpu_fn(bufs, task->arg);
    /* (the sum in hy_rt_machine_task_time's order: unbatched tasks keep their bits) */
    double share = pu->kind == HY_RT_GPU ? launch_share(s, r->g, q, t) : 1.0;
    if (pu->kind == HY_RT_GPU) s->stats.gpu_launches += share;
    double run = xfer + (share * pu->overhead + task->work / pu->speed);
    double finish = r->pu_time[q] + run;
    if (s->trace) {
        char args[64];
        snprintf(args, sizeof args, "\"task\":%d,\"partition\":%d", t, task->partition);
        hy_rt_trace_span(s->trace, task->kind->name, "task", q, r->pu_time[q] + xfer, run - xfer, args);
    }
    hy_rt_queues_start(&r->q, r->g, t);
    r->failed[q] = 0;
    r->ran_on[task->partition] |= (uint8_t)(1u << pu->kind);
    r->measured[task->partition] += run;
    r->xfer[task->partition] += xfer;
    r->launches[task->partition] += share;
    s->stats.busy[q] += run;
    s->stats.pu_tasks[q]++;
    s->stats.transfer_time += xfer;
    r->pu_time[q] = finish;
    heap_push(r->heap, &r->nheap, (event){finish, t});
    return HY_OK;
}

/* Partition p's time on a PU of kind k (measured, else estimated) with, on
 * a GPU, `now` launches in place of those it paid. */
static double kind_time_with(const hy_rt_sim* s, int32_t p, hy_rt_pu_kind k, double now) {
    double t = s->kind_time[2 * p + k];
    if (k != HY_RT_GPU) return t >= 0 ? t : s->est_time[2 * p + k];
    return t >= 0 ? relaunch(s, p, t, s->paid[p], now)
                  : relaunch(s, p, s->est_time[2 * p + k], s->part_tasks[p], now);
}

double hy_rt_sim_part_time(const hy_rt_sim* s, int32_t p, hy_rt_pu_kind k) {
    return kind_time_with(s, p, k, s->join[p]);
}

double hy_rt_sim_pu_time(const hy_rt_sim* s, int32_t p, int32_t q) {
    hy_rt_pu_kind k = s->m.pu[q].kind;
    int own_batch = k == HY_RT_GPU && hy_rt_sim_batchable(s, p);
    return kind_time_with(s, p, k, own_batch ? hy_rt_sim_launches(s, s->owner, p, q) : s->join[p]);
}

int hy_rt_sim_faster_on_thief(const hy_rt_sim* s, const hy_rt_queues* qs, int32_t q, int32_t v, int32_t p,
                              double now, double victim_free) {
    double victim = victim_free > now ? victim_free : now;
    for (int32_t p2 = 0; p2 < p; p2++) {
        if (s->owner[p2] != v) continue;
        int32_t total = qs->pstart[p2 + 1] - qs->pstart[p2], left = 0;
        for (int32_t i = qs->cursor[p2]; i < qs->pstart[p2 + 1]; i++) left += !qs->started[qs->plist[i]];
        if (total) victim += hy_rt_sim_pu_time(s, p2, v) * (double)left / (double)total;
    }
    victim += hy_rt_sim_pu_time(s, p, v);
    return now + s->m.steal_cost + hy_rt_sim_pu_time(s, p, q) < victim;
}

/* One steal round of idle PU q: the ready task of the partition it took, or
 * -1. The thief starts that task at once, as a thread of the real team does
 * (runtime/team.c): a stolen partition left waiting for the thief's next
 * turn could be stolen back, and two idle PUs of a kind would pass it
 * between them for ever, each steal advancing only the thief's clock. */
static int32_t steal(hy_rt_sim* s, run_state* r, int32_t q) {
    if (!s->policy->may_steal || s->m.npu < 2) return -1;
    if (s->policy->steal_when_dry && hy_rt_queues_unstarted(&r->q, s->owner, q)) return -1;
    unsigned kind = 1u << s->m.pu[q].kind;
    for (int32_t a = 0; a < s->m.npu - 1; a++) {
        int32_t v = (int32_t)(hy_rt_random(&s->rng) % (uint64_t)(s->m.npu - 1));
        if (v >= q) v++;
        for (int32_t p = 0; p < s->npart; p++) {
            if (s->owner[p] != v || r->q.pstarted[p] || !(s->eligible[p] & kind)) continue;
            int32_t ready = hy_rt_queues_ready(&r->q, p);
            if (ready < 0) continue;
            if (!s->policy->may_steal(s, q, p)) continue;
            if (s->policy->steal_only_if_faster &&
                (s->m.pu[q].kind != s->m.pu[v].kind || s->policy->steal_only_if_faster > 1) &&
                !hy_rt_sim_faster_on_thief(s, &r->q, q, v, p, r->pu_time[q], r->pu_time[v]))
                continue;
            int outside = !hy_rt_sim_in_affinity(s, q, p);
            s->stats.steals_outside_affinity += outside;
            if (s->trace) {
                char args[96];
                snprintf(args, sizeof args, "\"partition\":%d,\"victim\":%d,\"outside_affinity\":%d", p, v,
                         outside);
                hy_rt_trace_instant(s->trace, "steal", "steal", q, r->pu_time[q], args);
            }
            s->owner[p] = q;
            s->stats.steals++;
            r->pu_time[q] += s->m.steal_cost;
            return ready;
        }
    }
    /* The policy hears of one failure per idle spell: a PU waiting through
     * many completions would otherwise count each of them. */
    s->stats.steal_fails++;
    if (s->policy->steal_failed && !r->failed[q]) s->policy->steal_failed(s, q);
    r->failed[q] = 1;
    return -1;
}

static hy_status run_events(hy_rt_sim* s, run_state* r) {
    hy_rt_graph* g = r->g;
    int32_t done = 0;
    while (done < g->ntasks) {
        int32_t q = -1;
        for (int32_t i = 0; i < s->m.npu; i++)
            if (!r->parked[i] && (q < 0 || r->pu_time[i] < r->pu_time[q])) q = i;
        /* finish what ends before the next PU acts, waking the waiting ones */
        if (r->nheap && (q < 0 || r->heap[0].t <= r->pu_time[q])) {
            event e = heap_pop(r->heap, &r->nheap);
            done++;
            if (e.t > s->stats.makespan) s->stats.makespan = e.t;
            hy_rt_queues_finish(&r->q, g, e.task);
            for (int32_t i = 0; i < s->m.npu; i++)
                if (r->parked[i]) {
                    r->parked[i] = 0;
                    r->pu_time[i] = e.t;
                }
            continue;
        }
        if (q < 0)
            return hy_fail(HY_ERR_INTERNAL, "sim: %d of %d tasks cannot start on machine %s", g->ntasks - done,
                           g->ntasks, s->m.name);
        int32_t t = hy_rt_queues_pick(&r->q, s->owner, q);
        if (t < 0) t = steal(s, r, q);
        if (t >= 0) {
            hy_status st = start_task(s, r, q, t);
            if (st) return st;
        } else {
            r->parked[q] = 1;
        }
    }
    return HY_OK;
}

hy_status hy_rt_sim_begin_step(hy_rt_sim* s, const hy_rt_graph* g) {
    memset(&s->stats, 0, sizeof s->stats);
    hy_status st = grow_partitions(s, g);
    if (!st) st = check_and_estimate(s, g);
    int changed = 0;
    if (!st) st = build_partition_graph(s, g, &changed);
    if (st) return st;
    hy_rt_memnet_reset_counts(&s->m.net);
    double w0 = s->trace ? hy_rt_wall_seconds() : 0;
    hy_rt_sim_join_launches(s);
    if ((st = s->policy->map(s, changed))) return st;
    fix_owners(s);
    hy_rt_sim_join_launches(s);
    if (s->trace && (s->stats.remapped || s->stats.metis_calls)) {
        char args[128];
        snprintf(args, sizeof args, "\"metis_calls\":%d,\"remapped\":%d,\"wall_us\":%.1f,\"step\":%lld",
                 s->stats.metis_calls, s->stats.remapped, 1e6 * (hy_rt_wall_seconds() - w0), (long long)s->step);
        hy_rt_trace_instant(s->trace, s->stats.metis_calls ? "map (METIS)" : "map", "map", s->m.npu, 0.0, args);
    }
    return HY_OK;
}

static void end_step(hy_rt_sim* s, const hy_rt_graph* g, const uint8_t* ran_on, const double* measured,
                     const double* xfer, const double* launches) {
    /* a partition that ran on one kind gives that kind's time */
    for (int32_t p = 0; p < s->npart; p++) {
        if (!ran_on[p]) continue;
        s->cost[p] = measured[p];
        if (ran_on[p] == 1u << HY_RT_CPU) s->kind_time[2 * p + HY_RT_CPU] = measured[p];
        if (ran_on[p] == 1u << HY_RT_GPU) {
            s->kind_time[2 * p + HY_RT_GPU] = measured[p];
            s->paid[p] = launches ? launches[p] : s->part_tasks[p];
        }
    }
    learn(s, ran_on, measured, xfer, launches);
    if (s->trace) s->trace->base += s->stats.makespan;
    s->stats.tasks = g->ntasks;
    s->stats.threshold = s->threshold;
    for (int32_t c = 0; c < s->m.net.nchannels; c++) s->stats.channel_bytes[c] = s->m.net.channels[c].bytes;
    s->step++;
}

void hy_rt_sim_end_step(hy_rt_sim* s, const hy_rt_graph* g, const uint8_t* ran_on, const double* measured) {
    end_step(s, g, ran_on, measured, NULL, NULL);
}

hy_status hy_rt_sim_step(hy_rt_sim* s, hy_rt_graph* g, hy_rt_step_stats* stats) {
    if (!s || !g) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_sim_step: NULL argument");
    if (g->ntasks == 0) {
        memset(&s->stats, 0, sizeof s->stats);
        s->step++;
        if (stats) *stats = s->stats;
        return HY_OK;
    }
    hy_status st = hy_rt_sim_begin_step(s, g);
    if (st) return st;

    int32_t n = g->ntasks, P = s->npart;
    run_state r;
    memset(&r, 0, sizeof r);
    r.g = g;
    r.ran_on = calloc((size_t)(P ? P : 1), 1);
    r.measured = calloc((size_t)(P ? P : 1), sizeof *r.measured);
    r.xfer = calloc((size_t)(P ? P : 1), sizeof *r.xfer);
    r.launches = calloc((size_t)(P ? P : 1), sizeof *r.launches);
    r.heap = malloc((size_t)(n ? n : 1) * sizeof *r.heap);
    if (!r.ran_on || !r.measured || !r.xfer || !r.launches || !r.heap) {
        st = hy_fail(HY_ERR_NOMEM, "sim: out of memory for %d tasks", n);
        goto done;
    }
    if ((st = hy_rt_queues_fill(&r.q, g, P))) goto done;

    if ((st = run_events(s, &r))) goto done;

    /* results back on the host (bytes counted, time not charged) */
    for (int32_t h = 0; h < g->nhandles; h++) {
        void* ptr;
        if ((st = hy_rt_data_acquire(&s->m.net, &g->handles[h].data, HY_RT_HOST, HY_RT_R, &ptr, NULL))) goto done;
    }
    end_step(s, g, r.ran_on, r.measured, r.xfer, r.launches);
    if (stats) *stats = s->stats;
done:
    hy_rt_queues_free(&r.q);
    free(r.ran_on);
    free(r.measured);
    free(r.xfer);
    free(r.launches);
    free(r.heap);
    return st;
}
