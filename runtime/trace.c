/* Chrome trace events for the integration runtime (see trace.h). */
#include "runtime/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/sim.h" /* hy_rt_wall_seconds */

hy_status hy_rt_trace_open(const char* path, const char* clock, hy_rt_trace** out) {
    if (!path || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_trace_open: NULL argument");
    *out = NULL;
    hy_rt_trace* t = calloc(1, sizeof *t);
    if (t) t->path = malloc(strlen(path) + 1);
    if (!t || !t->path) {
        free(t);
        return hy_fail(HY_ERR_NOMEM, "trace '%s': out of memory", path);
    }
    strcpy(t->path, path);
    t->f = fopen(path, "w");
    if (!t->f) {
        int e = errno;
        free(t->path);
        free(t);
        return hy_fail(HY_ERR_IO, "trace '%s': cannot open for writing: %s", path, strerror(e));
    }
    fprintf(t->f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"clock\":\"%s\"},\"traceEvents\":[",
            clock ? clock : "real");
    t->pid = 1;
    t->owns = 1;
    t->clock0 = hy_rt_wall_seconds();
    *out = t;
    return HY_OK;
}

hy_status hy_rt_trace_attach(FILE* f, const char* path, int pid, const char* process, hy_rt_trace** out) {
    if (!f || !out || pid < 1) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_trace_attach: NULL stream or pid %d < 1", pid);
    *out = NULL;
    const char* name = path ? path : "trace";
    hy_rt_trace* t = calloc(1, sizeof *t);
    if (t) t->path = malloc(strlen(name) + 1);
    if (!t || !t->path) {
        free(t);
        return hy_fail(HY_ERR_NOMEM, "trace '%s': out of memory", name);
    }
    strcpy(t->path, name);
    t->f = f;
    t->pid = pid;
    t->events = 1; /* the other writer's come first */
    fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"%s\"}}", pid,
            process ? process : "integration");
    *out = t;
    return HY_OK;
}

hy_status hy_rt_trace_close(hy_rt_trace* t) {
    if (!t) return HY_OK;
    if (!t->owns) {
        hy_status s = ferror(t->f) ? hy_fail(HY_ERR_IO, "trace '%s': write failed", t->path) : HY_OK;
        free(t->path);
        free(t);
        return s;
    }
    fprintf(t->f, "\n]}\n");
    /* buffered writes fail at the flush (a full disk): fclose reports them */
    int bad = ferror(t->f);
    int e = bad ? EIO : 0;
    if (fclose(t->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    hy_status s = bad ? hy_fail(HY_ERR_IO, "trace '%s': write failed: %s", t->path, strerror(e)) : HY_OK;
    free(t->path);
    free(t);
    return s;
}

void hy_rt_trace_track(hy_rt_trace* t, int tid, const char* name) {
    fprintf(t->f, "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
            t->events++ ? "," : "", t->pid, tid, name);
}

void hy_rt_trace_span(hy_rt_trace* t, const char* name, const char* cat, int tid, double start, double dur,
                      const char* args) {
    fprintf(t->f,
            "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f%s%s%s}",
            t->events++ ? "," : "", name, cat, t->pid, tid, 1e6 * (t->base + start), 1e6 * dur, args ? ",\"args\":{" : "",
            args ? args : "", args ? "}" : "");
}

void hy_rt_trace_instant(hy_rt_trace* t, const char* name, const char* cat, int tid, double ts, const char* args) {
    fprintf(t->f, "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f%s%s%s}",
            t->events++ ? "," : "", name, cat, t->pid, tid, 1e6 * (t->base + ts), args ? ",\"args\":{" : "",
            args ? args : "", args ? "}" : "");
}
