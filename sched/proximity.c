/* The hybrid proximity framework's run-time loop (see proximity.h).
 *
 * Queues hold ranges of job ids in FIFO order: TRAVERSE ids are front
 * indices, LEAF ids positions in the caller's list. A policy answers counts
 * per (resource, type); the jobs of a type are dealt out from the front of
 * the producer's outgoing queue to resources 0, 1, ... in turn, so the same
 * counts always give the same jobs.
 *
 * Why a discrete-event loop and not one host thread per resource: every
 * resource of this build computes on the same CPU cores (modeled devices by
 * definition; the cuda backend runs a resource's batches as blocking
 * launches of the kernels the caller registered), so
 * threads per resource would only contend for those cores. The loop keeps
 * the framework's logic (queues, a scheduler call when a queue runs dry,
 * busy times, transfers) on one timeline and lets each batch use the whole
 * pool. */
#include "sched/proximity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sched/prox_internal.h"

/* ---- queues */

static int queue_push(queue* q, int64_t a, int64_t b) {
    if (b <= a) return 1;
    if (q->n > q->head && q->v[q->n - 1].b == a) {
        q->v[q->n - 1].b = b;
    } else {
        if (q->n == q->cap) {
            if (q->head > 0) {
                memmove(q->v, q->v + q->head, sizeof(range) * (size_t)(q->n - q->head));
                q->n -= q->head;
                q->head = 0;
            }
            if (q->n == q->cap) {
                int64_t cap = q->cap ? 2 * q->cap : 16;
                range* v = realloc(q->v, sizeof(range) * (size_t)cap);
                if (!v) return 0;
                q->v = v;
                q->cap = cap;
            }
        }
        q->v[q->n++] = (range){a, b};
    }
    q->jobs += b - a;
    return 1;
}

/* Move the first `count` jobs of src to dst. */
static int queue_move(queue* src, queue* dst, int64_t count) {
    while (count > 0 && src->head < src->n) {
        range* r = &src->v[src->head];
        int64_t take = r->b - r->a < count ? r->b - r->a : count;
        if (!queue_push(dst, r->a, r->a + take)) return 0;
        r->a += take;
        src->jobs -= take;
        count -= take;
        if (r->a == r->b) src->head++;
    }
    if (src->head == src->n) src->head = src->n = 0;
    return 1;
}

static void queue_clear(queue* q) { q->head = q->n = q->jobs = 0; }

/* ---- the loop */

/* Expected time of the jobs waiting in i's incoming queue. */
static double queued_time(const hy_prox* p, int i) {
    double t = 0.0;
    for (int j = 0; j < 2 * p->R; j++) t += hy_sched_time_launched(&p->model, i, j, p->in[i][j].jobs, p->launch[i][j]);
    return t;
}

static int incoming_empty(const hy_prox* p, int i) {
    for (int j = 0; j < 2 * p->R; j++)
        if (p->in[i][j].jobs) return 0;
    return 1;
}

static int64_t outgoing_jobs(const hy_prox* p) {
    int64_t n = 0;
    for (int k = 0; k < p->R; k++) n += p->out[k][0].jobs + p->out[k][1].jobs;
    return n;
}

/* The model of the live resources (after a failure): p->live[0..*L) their
 * indices, p->live_model their profiles as they stand (learned costs
 * included). */
static hy_status live_model(hy_prox* p, int* L) {
    hy_sched_model_init(&p->live_model);
    int n = 0;
    for (int i = 0; i < p->R; i++) {
        if (p->res[i].retired) continue;
        hy_status s = hy_sched_model_add(&p->live_model, &p->model.device[i]);
        if (s) return s;
        p->live[n++] = i;
    }
    memcpy(p->live_model.units, p->model.units, sizeof p->live_model.units);
    hy_sched_model_update(&p->live_model);
    *L = n;
    return HY_OK;
}

/* Ask the policy about the waiting jobs and the live resources (all of them
 * until one fails: then the problem is the live resources', types of
 * retired producers having handed their jobs on), and deal the answer out
 * to the resources' queues of jobs in flight. */
static hy_status call_scheduler(hy_prox* p, double t, double* dt) {
    int R = p->R;
    const hy_sched_model* M = &p->model;
    const int* live = p->live;
    if (p->failures) {
        hy_status s = live_model(p, &R);
        if (s) return s;
        M = &p->live_model;
    }
    int J = 2 * R;
    double w0 = hy_sched_now();
    hy_sched_problem_init(&p->prob, M);
    for (int a = 0; a < R; a++) {
        int i = live[a];
        double b = (p->running[i] ? p->end[i] - t : 0.0) + queued_time(p, i);
        p->prob.busy[a] = b > 0.0 ? b : 0.0;
        int wait = hy_sched_batches_stay_open(p->running[i], p->end[i] - t, p->last_call);
        p->prob.engaged[a] = (uint8_t)(p->ran[i] > 0 || !incoming_empty(p, i));
        for (int j = 0; j < J; j++)
            p->prob.open[a][j] =
                (uint8_t)(wait && p->in[i][hy_job_type(live[hy_job_type_producer(j)], hy_job_type_kind(j))].jobs > 0);
    }
    for (int j = 0; j < J; j++) p->prob.jobs[j] = p->out[live[hy_job_type_producer(j)]][hy_job_type_kind(j)].jobs;
    p->prob.next_round = p->traverse_made != NULL;
    hy_status s = hy_sched_policy_assign(p->policy, &p->prob, &p->a);
    if (s) return s;
    for (int j = 0; j < J; j++) {
        hy_job_kind kind = hy_job_type_kind(j);
        int k = live[hy_job_type_producer(j)], type = hy_job_type(k, kind);
        queue* src = &p->out[k][kind];
        for (int a = 0; a < R; a++) {
            int i = live[a];
            if (p->a.count[a][j] > 0) p->launch[i][type] = p->a.launch[a][j];
            if (!queue_move(src, &p->fly[i][type], p->a.count[a][j]))
                return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
        }
    }
    double wall = hy_sched_now() - w0;
    *dt = p->clock == HY_CLOCK_VIRTUAL ? hy_sched_call_time(p->policy->cls, &p->prob, p->a.iterations) : wall;
    p->last_call = *dt;
    p->stats.calls++;
    p->stats.iterations += p->a.iterations;
    p->stats.sched_time += *dt;
    p->stats.sched_wall += wall;
    double* by = p->stats.call_types[hy_sched_problem_types(&p->prob)];
    by[0] += 1.0;
    by[1] += wall;
    by[2] += *dt;
    if (p->trace) {
        char args[160];
        snprintf(args, sizeof args, "\"policy\":\"%s\",\"iterations\":%d,\"expected_makespan_us\":%.3f",
                 p->policy->cls->name, p->a.iterations, 1e6 * p->a.makespan);
        hy_prox_trace_event(p, "schedule", "scheduler", p->R, t, *dt, args);
    }
    return HY_OK;
}

static hy_status deliver(hy_prox* p) {
    for (int i = 0; i < p->R; i++)
        for (int j = 0; j < 2 * p->R; j++) {
            queue* f = &p->fly[i][j];
            if (!queue_move(f, &p->in[i][j], f->jobs))
                return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
        }
    return HY_OK;
}

/* ---- failures */

static int live_count(const hy_prox* p) {
    int n = 0;
    for (int i = 0; i < p->R; i++) n += !p->res[i].retired;
    return n;
}

/* Jobs of type j in q back to their producer's outgoing queue (the host's
 * when the producer is retired), for the next scheduler call. */
static int hand_back(hy_prox* p, queue* q, int j) {
    int k = hy_job_type_producer(j);
    if (p->res[k].retired) k = p->host;
    return queue_move(q, &p->out[k][hy_job_type_kind(j)], q->jobs);
}

/* Batch q (type j) failed on resource i at time t (the message is set):
 * i is retired, and its jobs (the batch's, those waiting for it or on
 * their way, those it made) go back to be scheduled again. */
static hy_status retire(hy_prox* p, int i, int j, queue* q, double t) {
    char why[160];
    snprintf(why, sizeof why, "%s", hy_last_error());
    p->res[i].retired = 1;
    if (p->host == i) p->host = hy_prox_pick_host(p);
    int64_t jobs = q->jobs;
    int ok = hand_back(p, q, j);
    for (int jj = 0; jj < 2 * p->R && ok; jj++) {
        jobs += p->in[i][jj].jobs + p->fly[i][jj].jobs;
        ok = hand_back(p, &p->in[i][jj], jj) && hand_back(p, &p->fly[i][jj], jj);
    }
    for (int k = 0; k < HY_JOB_KINDS && ok; k++) ok = hand_back(p, &p->out[i][k], hy_job_type(i, (hy_job_kind)k));
    if (!ok) return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
    if (p->traverse_made) *p->traverse_made = 0;
    p->failures++;
    snprintf(p->failure, sizeof p->failure,
             "%s failed in step %lld (%s): its %lld unfinished job%s run elsewhere, and the run goes on without it",
             p->res[i].name, (long long)p->step, why, (long long)jobs, jobs == 1 ? "" : "s");
    if (p->trace) {
        char args[224];
        snprintf(args, sizeof args, "\"jobs\":%lld,\"step\":%lld", (long long)jobs, (long long)p->step);
        hy_prox_trace_event(p, "failed", "failure", i, t, 0.0, args);
    }
    return HY_OK;
}

/* Start a batch on idle resource i: all its incoming jobs of one type (or
 * the first launch[i][j] of them, where the policy launches in chunks),
 * TRAVERSE types first. The work is done now; the timeline sees it end at
 * t + its cost. */
static hy_status start_batch(hy_prox* p, int i, double t, const hy_prox_work* work) {
    int J = 2 * p->R;
    if (p->res[i].retired) return HY_OK;
    for (int pass = 0; pass < HY_JOB_KINDS; pass++)
        for (int j = pass; j < J; j += 2) {
            int64_t n = p->in[i][j].jobs;
            if (n == 0) continue;
            if (p->launch[i][j] > 0 && n > p->launch[i][j]) n = p->launch[i][j];
            queue* q = &p->batch;
            queue_clear(q);
            if (!queue_move(&p->in[i][j], q, n))
                return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
            hy_job_kind kind = hy_job_type_kind(j);
            double w0 = hy_sched_now();
            hy_status s = HY_OK;
            const hy_backend* be = hy_backend_get(p->res[i].kind);
            const hy_job_kind_ops* ops = &work->kinds[kind];
            int64_t made = 0, units = -1;
            double copies = 0.0;
            if (p->traverse_made) *p->traverse_made = 0;
            /* an injected fault strikes before the batch starts, as a
             * device that stops answering would */
            int fault = i == p->fault_resource && p->step >= p->fault_step;
            if (fault) {
                p->fault_resource = -1;
                s = hy_fail(HY_ERR_INTERNAL, "injected fault, %s batch of %lld job%s", ops->name ? ops->name : "a",
                            (long long)n, n == 1 ? "" : "s");
            } else if (kind == HY_JOB_TRAVERSE) {
                if (n > p->ids_cap) {
                    int64_t* ids = realloc(p->ids, sizeof(int64_t) * (size_t)n);
                    if (!ids) return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for %lld ids", (long long)n);
                    p->ids = ids;
                    p->ids_cap = n;
                }
                int64_t k = 0;
                for (int64_t r = q->head; r < q->n; r++)
                    for (int64_t id = q->v[r].a; id < q->v[r].b; id++) p->ids[k++] = id;
                hy_batch b = {.kind = kind, .ids = p->ids, .n = n, .work = -1};
                s = be->run_batch(&p->res[i], i, ops, work->ctx, &b);
                made = b.made;
                units = b.work;
                copies = b.transfer;
                if (!s && made < 0) s = hy_fail(HY_ERR_INTERNAL, "proximity framework: negative LEAF count");
                if (!s && p->traverse_made && *p->traverse_made < 0)
                    s = hy_fail(HY_ERR_INTERNAL, "proximity framework: negative TRAVERSE count");
            } else {
                for (int64_t r = q->head; r < q->n && !s; r++) {
                    hy_batch b = {.kind = kind, .first = q->v[r].a, .n = q->v[r].b - q->v[r].a, .work = -1};
                    s = be->run_batch(&p->res[i], i, ops, work->ctx, &b);
                    copies += b.transfer;
                }
            }
            if (s && (fault || be->may_fail) && live_count(p) > 1) return retire(p, i, j, q, t);
            queue_clear(q);
            if (s) return s;
            double wall = hy_sched_now() - w0;
            if (units < 0) units = n; /* not reported (LEAF: one test a job) */
            /* a run's first batch on a resource pays its engage cost: charged
             * where modeled, part of the measured time where real */
            int first = p->ran[i]++ == 0;
            double engage = p->res[i].modeled && first ? p->model.device[i].engage : 0.0;
            double dt = p->res[i].modeled ? engage + hy_sched_time_work(&p->model, i, j, n, (double)units) : wall;
            int k = hy_job_type_producer(j);
            double trans = p->res[i].modeled ? p->model.trans[i][j] * (double)n
                           : copies > 0.0 ? fmin(copies, dt)
                                                                     : 0.0;
            if (p->trace) {
                char args[160];
                if (t > p->last_end[i]) hy_prox_trace_event(p, "idle", "idle", i, p->last_end[i], t - p->last_end[i], NULL);
                snprintf(args, sizeof args, "\"jobs\":%lld,\"producer\":\"%s\",\"made\":%lld,\"work\":%lld",
                         (long long)n, p->res[k].name, (long long)made, (long long)units);
                if (trans > 0.0) hy_prox_trace_event(p, "transfer", "transfer", i, t, trans, args);
                hy_prox_trace_event(p, kind == HY_JOB_TRAVERSE ? "TRAVERSE" : "LEAF", "batch", i, t + trans, dt - trans, args);
            }
            p->running[i] = 1;
            p->end[i] = t + dt;
            p->made_first[i] = p->leaf_next;
            p->made[i] = made;
            p->leaf_next += made;
            p->made_traverse_first[i] = p->traverse_next;
            p->made_traverse[i] = kind == HY_JOB_TRAVERSE && p->traverse_made ? *p->traverse_made : 0;
            p->traverse_next += p->made_traverse[i];
            if (!p->res[i].modeled) {
                double* L = p->learn[i][kind];
                double x = (double)units, y = dt - trans, copy = trans, jobs = (double)n;
                if (first && p->model.device[i].kind == HY_DEVICE_GPU) {
                    /* what a run's first batch on a GPU takes beyond the
                     * line (copies included: the trees it sent) teaches its
                     * engage cost; the line learns from the rest */
                    const hy_device_costs* c = &p->model.device[i].cost[kind];
                    double line = c->setup + c->proc * x + (p->model.device[i].staged ? c->upload * jobs : 0.0);
                    p->learn_engage[i][0] += dt - line;
                    p->learn_engage[i][1] += 1.0;
                    y = fmax(dt - p->model.device[i].engage, 0.0) - (p->model.device[i].staged ? c->upload * jobs : 0.0);
                    copy = jobs = 0.0;
                }
                L[L_N] += 1.0;
                L[L_X] += x;
                L[L_Y] += y;
                L[L_XX] += x * x;
                L[L_XY] += x * y;
                L[L_COPY] += copy;
                L[L_JOBS] += jobs;
            }
            p->stats.busy[i] += dt;
            p->stats.transfer[i] += trans;
            if (p->res[i].modeled) p->stats.setup[i] += p->model.setup[i][j] + engage;
            p->stats.jobs[i][kind] += n;
            if (kind == HY_JOB_TRAVERSE) {
                p->stats.traverse_work += units;
                p->seen_traverse_jobs += n;
                p->seen_traverse_work += units;
            }
            p->stats.batches++;
            return HY_OK;
        }
    return HY_OK;
}

hy_status hy_prox_run(hy_prox* p, int64_t traverse_jobs, const hy_prox_work* work) {
    return hy_prox_run_rounds(p, traverse_jobs, work, NULL);
}

hy_status hy_prox_run_rounds(hy_prox* p, int64_t traverse_jobs, const hy_prox_work* work, int64_t* traverse_made) {
    if (!p || !work || !work->kinds || !work->kinds[HY_JOB_TRAVERSE].run[HY_RESOURCE_CPU] || !work->kinds[HY_JOB_LEAF].run[HY_RESOURCE_CPU] ||
        traverse_jobs < 0)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_prox_run: bad argument");
    p->traverse_made = traverse_made;
    int R = p->R;
    for (int i = 0; i < R; i++) {
        p->running[i] = 0;
        p->end[i] = p->last_end[i] = 0.0;
        for (int k = 0; k < HY_JOB_KINDS; k++) queue_clear(&p->out[i][k]);
        for (int j = 0; j < 2 * R; j++) {
            queue_clear(&p->in[i][j]);
            queue_clear(&p->fly[i][j]);
        }
    }
    if (p->trace && p->clock == HY_CLOCK_REAL) p->trace_base = hy_sched_now() - p->trace_open_wall;
    p->leaf_next = 0;
    memset(p->ran, 0, sizeof p->ran);
    p->traverse_next = traverse_jobs;
    memset(p->made_traverse, 0, sizeof p->made_traverse);
    memset(p->launch, 0, sizeof p->launch);
    if (!queue_push(&p->out[p->host][HY_JOB_TRAVERSE], 0, traverse_jobs))
        return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
    double t = 0.0, sched_end = 0.0;
    /* the front, made by the host before any job exists */
    if (work->front_work > 0 && p->res[p->host].modeled) {
        int j = hy_job_type(p->host, HY_JOB_TRAVERSE);
        t = hy_sched_time_work(&p->model, p->host, j, 1, (double)work->front_work);
        p->stats.busy[p->host] += t;
        p->stats.traverse_work += work->front_work;
        p->last_end[p->host] = t;
        if (p->trace) {
            char args[64];
            snprintf(args, sizeof args, "\"work\":%lld", (long long)work->front_work);
            hy_prox_trace_event(p, "front", "batch", p->host, 0.0, t, args);
        }
    }
    int in_flight = 0;
    hy_status s = HY_OK;
    for (;;) {
        if (in_flight && sched_end <= t) {
            s = deliver(p);
            if (s) break;
            in_flight = 0;
        }
        for (int i = 0; i < R && !s; i++)
            if (!p->running[i]) s = start_batch(p, i, t, work);
        if (s) break;
        if (!in_flight && outgoing_jobs(p) > 0) {
            int dry = 0;
            for (int i = 0; i < R; i++) dry |= !p->res[i].retired && incoming_empty(p, i);
            if (dry) {
                double dt = 0.0;
                s = call_scheduler(p, t, &dt);
                if (s) break;
                in_flight = 1;
                sched_end = t + dt;
                continue; /* deliver at once when the call took no time */
            }
        }
        /* next event */
        double next = INFINITY;
        for (int i = 0; i < R; i++)
            if (p->running[i] && p->end[i] < next) next = p->end[i];
        if (in_flight && sched_end < next) next = sched_end;
        if (next == INFINITY) break;
        t = next;
        for (int i = 0; i < R; i++) {
            if (!p->running[i] || p->end[i] > t) continue;
            p->running[i] = 0;
            p->last_end[i] = p->end[i];
            if (p->made[i] &&
                !queue_push(&p->out[i][HY_JOB_LEAF], p->made_first[i], p->made_first[i] + p->made[i])) {
                s = hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
                break;
            }
            p->made[i] = 0;
            if (p->made_traverse[i] &&
                !queue_push(&p->out[i][HY_JOB_TRAVERSE], p->made_traverse_first[i],
                            p->made_traverse_first[i] + p->made_traverse[i])) {
                s = hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
                break;
            }
            p->made_traverse[i] = 0;
        }
        if (s) break;
    }
    if (!s && outgoing_jobs(p) > 0)
        s = hy_fail(HY_ERR_INTERNAL, "proximity framework: %lld jobs left unassigned", (long long)outgoing_jobs(p));
    if (s) return s;
    if (p->trace)
        for (int i = 0; i < R; i++)
            if (t > p->last_end[i]) hy_prox_trace_event(p, "idle", "idle", i, p->last_end[i], t - p->last_end[i], NULL);
    /* The next run's expected TRAVERSE cost: the mean units per job so
     * far (a pure function of the runs' counts: repeatable). */
    if (p->seen_traverse_jobs > 0)
        p->model.units[HY_JOB_TRAVERSE] = (double)p->seen_traverse_work / (double)p->seen_traverse_jobs;
    hy_prox_learn_costs(p);
    hy_sched_model_update(&p->model);
    p->stats.runs++;
    p->stats.makespan += t;
    if (p->clock == HY_CLOCK_VIRTUAL) p->trace_base += t;
    return HY_OK;
}

