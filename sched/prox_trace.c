/* The proximity framework's trace: batches, scheduler calls and idle time
 * as Chrome trace events (see hy_prox_trace_open). */
#include "sched/proximity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sched/prox_internal.h"

/* ---- trace */

void hy_prox_trace_event(hy_prox* p, const char* name, const char* cat, int tid, double start, double dur,
                        const char* args) {
    if (!p->trace) return;
    fprintf(p->trace,
            "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f%s%s%s}",
            p->trace_events++ ? "," : "", name, cat, tid, 1e6 * (p->trace_base + start), 1e6 * dur,
            args ? ",\"args\":{" : "", args ? args : "", args ? "}" : "");
}

hy_status hy_prox_trace_open(hy_prox* p, const char* path) {
    hy_prox_trace_close(p);
    if (!path) return HY_OK;
    FILE* f = fopen(path, "w");
    if (!f) return hy_fail(HY_ERR_IO, "trace '%s': cannot open for writing: %s", path, strerror(errno));
    p->trace_path = strdup(path);
    if (!p->trace_path) {
        fclose(f);
        return hy_fail(HY_ERR_NOMEM, "trace '%s': out of memory", path);
    }
    p->trace = f;
    p->trace_events = 0;
    p->trace_base = 0.0;
    p->trace_open_wall = hy_sched_now();
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"clock\":\"%s\"},\"traceEvents\":[",
            p->clock == HY_CLOCK_VIRTUAL ? "virtual" : "real");
    for (int i = 0; i <= p->R; i++) {
        char name[96];
        if (i < p->R)
            snprintf(name, sizeof name, "%s%s", p->res[i].name, p->res[i].modeled ? " (modeled)" : "");
        else
            snprintf(name, sizeof name, "scheduler (%s)", p->policy->cls->name);
        fprintf(f, "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                p->trace_events++ ? "," : "", i, name);
    }
    return HY_OK;
}

hy_status hy_prox_trace_close(hy_prox* p) {
    if (!p->trace) return HY_OK;
    fprintf(p->trace, "\n]}\n");
    /* buffered writes fail at the flush (a full disk): fclose reports them */
    int bad = ferror(p->trace);
    int e = bad ? EIO : 0;
    if (fclose(p->trace) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    p->trace = NULL;
    hy_status s = bad ? hy_fail(HY_ERR_IO, "trace '%s': write failed: %s", p->trace_path, strerror(e)) : HY_OK;
    free(p->trace_path);
    p->trace_path = NULL;
    return s;
}
