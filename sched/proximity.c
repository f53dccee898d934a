/* The hybrid proximity framework's run-time loop (see proximity.h).
 *
 * Queues hold ranges of job ids in FIFO order: TRAVERSE ids are front
 * indices, LEAF ids positions in the caller's list. A policy answers counts
 * per (resource, type); the jobs of a type are dealt out from the front of
 * the producer's outgoing queue to resources 0, 1, ... in turn, so the same
 * counts always give the same jobs.
 *
 * Two loops. Under the virtual clock (and the real clock with cpu
 * resources only) a discrete-event loop keeps the framework's logic
 * (queues, a scheduler call when a queue runs dry, busy times, transfers)
 * on one timeline, each batch running on the caller's thread and using the
 * whole pool. Under the real clock with fed resources (GPUs, modeled
 * devices) run_fed drives the same queues on the wall clock, each fed
 * resource's device parts on its own thread (prox_feed.c). */
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

/* The batch of resource i ended at t + dt (dt: its time on the run's
 * timeline) with status s: a failure on a resource that may fail retires
 * it; otherwise its stats, trace and learning, and its made jobs numbered
 * (released at its end). */
static hy_status end_batch(hy_prox* p, int i, hy_status s, double dt, double wall) {
    flight* fl = &p->fl[i];
    int j = fl->j;
    int64_t n = fl->n;
    double t = fl->t;
    hy_job_kind kind = hy_job_type_kind(j);
    const hy_backend* be = hy_backend_get(p->res[i].kind);
    if (s && (fl->fault || be->may_fail) && live_count(p) > 1) return retire(p, i, j, &fl->q, t);
    queue_clear(&fl->q);
    if (s) return s;
    int64_t made = fl->b.made, units = fl->b.work;
    double copies = fl->b.transfer;
    if (!s && made < 0) return hy_fail(HY_ERR_INTERNAL, "proximity framework: negative LEAF count");
    if (units < 0) units = n; /* not reported (LEAF: one test a job) */
    double engage = p->res[i].modeled && fl->first ? p->model.device[i].engage : 0.0;
    if (p->res[i].modeled && dt < 0.0) dt = engage + hy_sched_time_work(&p->model, i, j, n, (double)units);
    if (dt < 0.0) dt = wall;
    int k = hy_job_type_producer(j);
    double trans = p->res[i].modeled ? p->model.trans[i][j] * (double)n : copies > 0.0 ? fmin(copies, dt) : 0.0;
    if (p->trace) {
        char args[256];
        if (t > p->last_end[i]) hy_prox_trace_event(p, "idle", "idle", i, p->last_end[i], t - p->last_end[i], NULL);
        int len = snprintf(args, sizeof args, "\"jobs\":%lld,\"producer\":\"%s\",\"made\":%lld,\"work\":%lld",
                           (long long)n, p->res[k].name, (long long)made, (long long)units);
        /* a GPU's bytes per channel: host to device, device to host */
        if (p->model.device[i].kind == HY_DEVICE_GPU && len > 0 && (size_t)len < sizeof args)
            snprintf(args + len, sizeof args - (size_t)len, ",\"bytes_up\":%lld,\"bytes_down\":%lld",
                     (long long)fl->b.bytes_up, (long long)fl->b.bytes_down);
        if (trans > 0.0) hy_prox_trace_event(p, "transfer", "transfer", i, t, trans, args);
        hy_prox_trace_event(p, kind == HY_JOB_TRAVERSE ? "TRAVERSE" : "LEAF", "batch", i, t + trans, dt - trans, args);
    }
    p->running[i] = 1;
    p->end[i] = t + dt;
    p->made_first[i] = p->leaf_next;
    p->made[i] = made;
    p->leaf_next += made;
    p->made_traverse_first[i] = p->traverse_next;
    p->made_traverse[i] = kind == HY_JOB_TRAVERSE ? fl->made_traverse : 0;
    p->traverse_next += p->made_traverse[i];
    if (!p->res[i].modeled) {
        double* L = p->learn[i][kind];
        double x = (double)units, y = dt - trans, copy = trans, jobs = (double)n;
        if (fl->first && p->model.device[i].kind == HY_DEVICE_GPU) {
            /* what a run's first batch on a GPU takes beyond the line
             * (copies included: the trees it sent) teaches its engage
             * cost; the line learns from the rest */
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
    if (p->model.device[i].kind == HY_DEVICE_GPU) { /* a CPU's jobs stay in host memory */
        p->stats.bytes_up[i] += fl->b.bytes_up;
        p->stats.bytes_down[i] += fl->b.bytes_down;
    }
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

/* The TRAVERSE jobs the part of a batch just run made (hy_prox_run_rounds's
 * counter, zeroed before each part that may add to it), into its flight. */
static hy_status take_made(hy_prox* p, int i) {
    if (!p->traverse_made) return HY_OK;
    p->fl[i].made_traverse += *p->traverse_made;
    *p->traverse_made = 0;
    if (p->fl[i].made_traverse < 0) return hy_fail(HY_ERR_INTERNAL, "proximity framework: negative TRAVERSE count");
    return HY_OK;
}

/* The second half of a batch run in parts, on the caller's thread: the
 * kind's finish (taking the outputs, or freeing the stage after a failure),
 * then, where the device part could not take the batch, the host function. */
static hy_status finish_parts(hy_prox* p, int i) {
    flight* fl = &p->fl[i];
    hy_job_kind kind = hy_job_type_kind(fl->j);
    hy_resource_kind bk = p->res[i].kind;
    hy_status s = fl->ops->finish[bk] ? fl->ops->finish[bk](fl->ctx, i, &p->res[i], &fl->b) : fl->b.status;
    fl->b.stage = NULL;
    if (s != HY_ERR_UNSUPPORTED || fl->b.status != HY_ERR_UNSUPPORTED) return s;
    if (p->traverse_made) *p->traverse_made = 0;
    fl->b = (hy_batch){.kind = kind, .ids = fl->b.ids, .first = fl->b.first, .n = fl->b.n, .work = -1};
    return fl->ops->run[HY_RESOURCE_CPU](fl->ctx, i, &p->res[i], &fl->b);
}

/* Start a batch on idle resource i: all its incoming jobs of one type (or
 * the first launch[i][j] of them, where the policy launches in chunks),
 * TRAVERSE types first. Its preparation (or all of it) runs now on the
 * caller's thread; in a fed run, a fed resource's device part goes to its
 * feeder and the batch ends when the feeder is done (hy_prox_feed_collect);
 * otherwise the batch ends at t + its cost on the timeline. *started says
 * whether there was a batch to start. */
static hy_status start_batch(hy_prox* p, int i, double t, const hy_prox_work* work, int fed, int* started) {
    int J = 2 * p->R;
    *started = 0;
    if (p->res[i].retired) return HY_OK;
    for (int pass = 0; pass < HY_JOB_KINDS; pass++)
        for (int j = pass; j < J; j += 2) {
            int64_t n = p->in[i][j].jobs;
            if (n == 0) continue;
            if (p->launch[i][j] > 0 && n > p->launch[i][j]) n = p->launch[i][j];
            const hy_backend* be = hy_backend_get(p->res[i].kind);
            /* a fed resource's LEAF batch is one range of the list, which
             * its device part takes on its thread */
            const range* r0 = &p->in[i][j].v[p->in[i][j].head];
            if (fed && be->fed && hy_job_type_kind(j) == HY_JOB_LEAF && r0->b - r0->a < n) n = r0->b - r0->a;
            flight* fl = &p->fl[i];
            queue_clear(&fl->q);
            if (!queue_move(&p->in[i][j], &fl->q, n))
                return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
            *started = 1;
            hy_job_kind kind = hy_job_type_kind(j);
            fl->j = j;
            fl->n = n;
            fl->t = t;
            fl->w0 = hy_sched_now();
            fl->first = p->ran[i]++ == 0;
            fl->ops = &work->kinds[kind];
            fl->ctx = work->ctx;
            fl->split = 0;
            fl->made_traverse = 0;
            fl->b = (hy_batch){.kind = kind, .n = n, .work = -1};
            hy_status s = HY_OK;
            if (p->traverse_made) *p->traverse_made = 0;
            /* an injected fault strikes before the batch starts, as a
             * device that stops answering would */
            fl->fault = i == p->fault_resource && p->step >= p->fault_step;
            if (fl->fault) {
                p->fault_resource = -1;
                s = hy_fail(HY_ERR_INTERNAL, "injected fault, %s batch of %lld job%s",
                            fl->ops->name ? fl->ops->name : "a", (long long)n, n == 1 ? "" : "s");
                return end_batch(p, i, s, 0.0, 0.0);
            }
            if (kind == HY_JOB_TRAVERSE) {
                if (n > fl->ids_cap) {
                    int64_t* ids = realloc(fl->ids, sizeof(int64_t) * (size_t)n);
                    if (!ids) return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for %lld ids", (long long)n);
                    fl->ids = ids;
                    fl->ids_cap = n;
                }
                int64_t k = 0;
                for (int64_t r = fl->q.head; r < fl->q.n; r++)
                    for (int64_t id = fl->q.v[r].a; id < fl->q.v[r].b; id++) fl->ids[k++] = id;
                fl->b.ids = fl->ids;
                s = be->run_batch(&p->res[i], i, fl->ops, work->ctx, &fl->b);
            } else {
                /* LEAF: one batch per range of the list (a range is what
                 * a kind's function takes); several ranges run whole, one
                 * after the other, their copies and bytes summed */
                int64_t ranges = fl->q.n - fl->q.head, up = 0, down = 0;
                double copies = 0.0;
                for (int64_t r = fl->q.head; r < fl->q.n && !s; r++) {
                    fl->b = (hy_batch){.kind = kind, .first = fl->q.v[r].a, .n = fl->q.v[r].b - fl->q.v[r].a, .work = -1};
                    s = be->run_batch(&p->res[i], i, fl->ops, work->ctx, &fl->b);
                    if (ranges == 1) break;
                    if (!s && fl->b.stage && fl->ops->device[p->res[i].kind]) {
                        fl->b.status = fl->ops->device[p->res[i].kind](work->ctx, i, &p->res[i], &fl->b);
                        s = finish_parts(p, i);
                    }
                    copies += fl->b.transfer;
                    up += fl->b.bytes_up;
                    down += fl->b.bytes_down;
                }
                if (ranges > 1)
                    fl->b = (hy_batch){.kind = kind, .first = fl->q.v[fl->q.head].a, .n = n, .work = -1,
                                       .transfer = copies, .bytes_up = up, .bytes_down = down};
            }
            fl->split = !s && fl->b.stage && fl->ops->device[p->res[i].kind];
            if (!s) s = take_made(p, i);
            if (!s && fed && be->fed && (fl->split || p->res[i].modeled)) {
                /* expected end, for the scheduler's busy times until it ends */
                p->running[i] = 1;
                p->end[i] = t + hy_sched_time(&p->model, i, j, n);
                return hy_prox_feed_post(p, i);
            }
            if (!s && fl->split) {
                fl->b.status = fl->ops->device[p->res[i].kind](work->ctx, i, &p->res[i], &fl->b);
                s = finish_parts(p, i);
                hy_status ms = take_made(p, i);
                if (!s) s = ms;
            }
            double wall = hy_sched_now() - fl->w0;
            return end_batch(p, i, s, -1.0, wall);
        }
    return HY_OK;
}

/* Release what resource i's ended batch made into its outgoing queues. */
static hy_status release(hy_prox* p, int i) {
    p->running[i] = 0;
    p->last_end[i] = p->end[i];
    if (p->made[i] && !queue_push(&p->out[i][HY_JOB_LEAF], p->made_first[i], p->made_first[i] + p->made[i]))
        return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
    p->made[i] = 0;
    if (p->made_traverse[i] && !queue_push(&p->out[i][HY_JOB_TRAVERSE], p->made_traverse_first[i],
                                           p->made_traverse_first[i] + p->made_traverse[i]))
        return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
    p->made_traverse[i] = 0;
    return HY_OK;
}

static int any_dry(const hy_prox* p) {
    for (int i = 0; i < p->R; i++)
        if (!p->res[i].retired && incoming_empty(p, i)) return 1;
    return 0;
}

/* A batch back from its feeder after the run failed: it delivers nothing,
 * its stage is freed (its finish, told it failed). */
static void abandon(hy_prox* p, int i) {
    flight* fl = &p->fl[i];
    p->running[i] = 0;
    queue_clear(&fl->q);
    if (!fl->split) return;
    if (!fl->b.status) fl->b.status = HY_ERR_INTERNAL;
    hy_job_fn finish = fl->ops->finish[p->res[i].kind];
    if (finish) (void)finish(fl->ctx, i, &p->res[i], &fl->b);
    fl->b.stage = NULL;
}

/* A run whose fed resources (GPUs, modeled devices under the real clock)
 * work beside the caller's thread: it schedules, runs the CPU's batches on
 * the pool and the preparation and finish of every batch, while each fed
 * resource's feeder runs its batches' device parts (or waits out their
 * modeled time). The timeline is the wall clock from the run's start, so
 * the makespan is the run's measured wall time. The scheduler's answer is
 * delivered when the call returns (it took its time on this thread while
 * the feeders went on). */
static hy_status run_fed(hy_prox* p, const hy_prox_work* work, double* makespan) {
    int R = p->R;
    double t0 = p->run_wall0;
    int done[HY_SCHED_MAX_RESOURCES];
    double end_wall[HY_SCHED_MAX_RESOURCES];
    hy_status s = HY_OK;
    int waiting = 0; /* feeders out */
    int block = 0;   /* nothing else to do: wait for a feeder */
    for (;;) {
        int progress = 0;
        /* batches the feeders finished: their finish, their end */
        int got = waiting ? hy_prox_feed_collect(p, done, end_wall, block) : 0;
        if (got > 0) {
            waiting -= got;
            progress = 1;
            for (int i = 0; i < R; i++) {
                if (!done[i]) continue;
                if (s) { /* the run failed: what came back is dropped */
                    abandon(p, i);
                    continue;
                }
                flight* fl = &p->fl[i];
                if (p->traverse_made) *p->traverse_made = 0;
                hy_status bs = fl->split ? finish_parts(p, i) : fl->b.status;
                hy_status ms = take_made(p, i);
                if (!bs) bs = ms;
                double wall = end_wall[i] - fl->w0;
                /* on the timeline it ends when its feeder said so (a
                 * modeled batch: its modeled time from its start) */
                double dt = p->res[i].modeled ? -1.0 : end_wall[i] - t0 - fl->t;
                p->running[i] = 0;
                s = end_batch(p, i, bs, dt, wall);
            }
            if (s) break;
        }
        block = 0;
        double t = hy_sched_now() - t0;
        for (int i = 0; i < R && !s; i++)
            if (p->running[i] && !p->pending[i] && p->end[i] <= t) {
                s = release(p, i);
                progress = 1;
            }
        if (s) break;
        if (outgoing_jobs(p) > 0 && any_dry(p)) {
            double dt = 0.0;
            s = call_scheduler(p, t, &dt);
            if (!s) s = deliver(p);
            if (s) break;
            progress = 1;
        }
        for (int i = 0; i < R && !s; i++) {
            if (p->running[i]) continue;
            int started = 0;
            s = start_batch(p, i, hy_sched_now() - t0, work, 1, &started);
            if (started) progress = 1;
            if (!s && p->pending[i]) waiting++;
        }
        if (s) break;
        int busy = 0;
        for (int i = 0; i < R; i++) busy |= p->running[i];
        if (!busy && outgoing_jobs(p) == 0) {
            int left = 0;
            for (int i = 0; i < R; i++) left |= !p->res[i].retired && !incoming_empty(p, i);
            if (!left) break;
        }
        if (progress) continue;
        if (waiting) {
            block = 1;
            continue;
        }
        /* a batch on this thread ends in the future (a modeled host's
         * front): wait for it */
        double next = INFINITY;
        for (int i = 0; i < R; i++)
            if (p->running[i] && !p->pending[i] && p->end[i] < next) next = p->end[i];
        if (next == INFINITY) {
            s = hy_fail(HY_ERR_INTERNAL, "proximity framework: a fed run stalled with %lld jobs waiting",
                        (long long)outgoing_jobs(p));
            break;
        }
        hy_prox_sleep_until(t0 + next);
    }
    if (s) {
        /* let every feeder finish before the caller's data goes away; a
         * batch cut short delivers nothing */
        while (waiting > 0) {
            waiting -= hy_prox_feed_collect(p, done, end_wall, 1);
            for (int i = 0; i < R; i++)
                if (done[i]) abandon(p, i);
        }
        return s;
    }
    *makespan = hy_sched_now() - t0;
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
    p->run_wall0 = hy_sched_now();
    if (p->trace && p->clock == HY_CLOCK_REAL) p->trace_base = p->run_wall0 - p->trace_open_wall;
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
    if (hy_prox_fed_run(p)) {
        /* the timeline is the wall clock: a modeled host's front takes its
         * time for real */
        if (t > 0.0) hy_prox_sleep_until(p->run_wall0 + t);
        s = run_fed(p, work, &t);
        in_flight = -1;
    }
    for (; in_flight >= 0;) {
        if (in_flight && sched_end <= t) {
            s = deliver(p);
            if (s) break;
            in_flight = 0;
        }
        for (int i = 0; i < R && !s; i++) {
            int started = 0;
            if (!p->running[i]) s = start_batch(p, i, t, work, 0, &started);
        }
        if (s) break;
        if (!in_flight && outgoing_jobs(p) > 0 && any_dry(p)) {
            double dt = 0.0;
            s = call_scheduler(p, t, &dt);
            if (s) break;
            in_flight = 1;
            sched_end = t + dt;
            continue; /* deliver at once when the call took no time */
        }
        /* next event */
        double next = INFINITY;
        for (int i = 0; i < R; i++)
            if (p->running[i] && p->end[i] < next) next = p->end[i];
        if (in_flight && sched_end < next) next = sched_end;
        if (next == INFINITY) break;
        t = next;
        for (int i = 0; i < R && !s; i++)
            if (p->running[i] && p->end[i] <= t) s = release(p, i);
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

