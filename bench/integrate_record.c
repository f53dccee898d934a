/* Recordings of real runs (see integrate_record.h). */
#include "bench/integrate_record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/integrate_probe.h"
#include "hyphys/hyphys.h"

/* The solid index of id among the probed ones; -1 when it is not a solid. */
static int solid_index(const hy_integrate_probe* probe, int32_t n, hy_object_id id) {
    for (int32_t i = 0; i < n; i++)
        if (probe[i].id.index == id.index && probe[i].id.generation == id.generation) return i;
    return -1;
}

hy_status hy_irec_make(const char* scene_path, const char* params, int skip, int steps, const char* out_path,
                       uint64_t* hash) {
    if (!scene_path || !out_path || skip < 0 || steps < 1)
        return hy_fail(HY_ERR_INVALID_ARG, "recording: bad arguments (skip %d, steps %d)", skip, steps);
    hy_scene_options opt = hy_scene_options_default();
    opt.threads = 1; /* per-object costs of one core, as the modeled machines' reference */
    opt.parameters = params;
    hy_world* w = NULL;
    hy_status s = hy_scene_load(scene_path, &opt, &w);
    if (s) return s;
    hy_world_def def;
    s = hy_world_get_def(w, &def);
    FILE* f = NULL;
    if (!s) {
        f = fopen(out_path, "wx");
        if (!f)
            s = hy_fail(HY_ERR_IO, "recording '%s': cannot create (%s; an existing file is never overwritten)",
                        out_path, strerror(errno));
    }
    for (int k = 0; k < skip && !s; k++) s = hy_world_step(w, def.time_step, def.substeps);
    hy_integrate_probe probe[HY_REC_MAX_OBJ];
    int32_t attached[2 * HY_REC_MAX_PAIRS];
    int32_t n = 0, nattached = 0;
    const double dt = def.time_step / def.substeps;
    for (int k = 0; k < steps && !s; k++) {
        s = hy_world_probe_integration(w, dt, probe, HY_REC_MAX_OBJ, &n);
        if (!s && n < 1) s = hy_fail(HY_ERR_INVALID_ARG, "recording '%s': the scene has no solid", scene_path);
        if (!s && n > HY_REC_MAX_OBJ)
            s = hy_fail(HY_ERR_INVALID_ARG, "recording '%s': %d solids, at most %d", scene_path, n, HY_REC_MAX_OBJ);
        if (s) break;
        if (k == 0)
            fprintf(f,
                    "# hyphys integrate recording: scene %s%s%s, steps %d-%d of dt %g s (%d substeps), one thread "
                    "(CPU time), %d solids\n# object,step,index,particles,seconds,cg_iterations / pair,step,a,b\n",
                    scene_path, params && *params ? " " : "", params ? params : "", skip + 1, skip + steps,
                    def.time_step, def.substeps, n);
        for (int32_t i = 0; i < n; i++)
            fprintf(f, "object,%d,%d,%d,%.9f,%d\n", k, i, probe[i].particles, probe[i].cpu_seconds * def.substeps,
                    probe[i].cg_iterations * def.substeps);
        /* this step's interactions: the attached pairs, then the pairs
         * that touched in the last step (attached solids never collide) */
        s = hy_world_probe_attachments(w, attached, HY_REC_MAX_PAIRS, &nattached);
        if (!s && nattached > HY_REC_MAX_PAIRS)
            s = hy_fail(HY_ERR_INVALID_ARG, "recording '%s': more than %d attached pairs of solids", scene_path,
                        HY_REC_MAX_PAIRS);
        for (int32_t p = 0; p < nattached && !s; p++) fprintf(f, "pair,%d,%d,%d\n", k, attached[2 * p], attached[2 * p + 1]);
        hy_contact_events ev;
        if (!s) s = hy_world_get_contact_events(w, &ev);
        int npairs = s ? 0 : nattached;
        for (int64_t c = 0; c < ev.touching_count && !s; c++) {
            int a = solid_index(probe, n, ev.touching[c].a), b = solid_index(probe, n, ev.touching[c].b);
            if (a < 0 || b < 0 || a == b) continue;
            if (++npairs > HY_REC_MAX_PAIRS)
                s = hy_fail(HY_ERR_INVALID_ARG, "recording '%s': more than %d touching pairs of solids in step %d",
                            scene_path, HY_REC_MAX_PAIRS, skip + k + 1);
            else
                fprintf(f, "pair,%d,%d,%d\n", k, a < b ? a : b, a < b ? b : a);
        }
        if (!s) s = hy_world_step(w, def.time_step, def.substeps);
    }
    if (!s && hash) s = hy_world_hash(w, hash);
    if (f && fclose(f) != 0 && !s) s = hy_fail(HY_ERR_IO, "recording '%s': write failed", out_path);
    hy_world_destroy(w);
    return s;
}

void hy_irec_free(hy_irec* r) {
    free(r->seconds);
    free(r->cg);
    free(r->pair_start);
    free(r->pairs);
    memset(r, 0, sizeof *r);
}

/* Two passes: sizes and checks, then the values. */
hy_status hy_irec_load(const char* path, hy_irec* r) {
    memset(r, 0, sizeof *r);
    FILE* f = fopen(path, "r");
    if (!f) return hy_fail(HY_ERR_IO, "recording '%s': cannot open", path);
    char line[512];
    int ln = 0, nobj = 0, nsteps = 0, last_pair_step = 0;
    long npairs = 0;
    hy_status s = HY_OK;
    /* first pass: sizes and checks */
    while (!s && fgets(line, sizeof line, f)) {
        ln++;
        if (line[0] == '#' || line[0] == '\n') {
            const char* sc = strstr(line, "scene ");
            if (ln == 1 && sc) sscanf(sc + 6, "%63[^,]", r->scene);
            continue;
        }
        int k, i, a, b, np, cg;
        double sec;
        if (sscanf(line, "object,%d,%d,%d,%lf,%d", &k, &i, &np, &sec, &cg) == 5) {
            if (k < 0 || k > nsteps || i < 0 || i >= HY_REC_MAX_OBJ || np < 1 || !(sec >= 0) || cg < 0 ||
                (k == 0 && i != nobj) || (k > 0 && (i >= nobj || np != r->n[i])))
                s = hy_fail(HY_ERR_PARSE, "%s:%d: object row out of order or out of range", path, ln);
            else if (k == 0) {
                r->n[i] = np;
                nobj++;
            }
            if (k == nsteps) nsteps++;
        } else if (sscanf(line, "pair,%d,%d,%d", &k, &a, &b) == 3) {
            if (k < last_pair_step || k >= nsteps || a < 0 || b <= a || b >= nobj)
                s = hy_fail(HY_ERR_PARSE,
                            "%s:%d: pair row out of range or order (need 0 <= a < b < %d, a recorded step, steps "
                            "in order)", path, ln, nobj);
            last_pair_step = k;
            npairs++;
        } else {
            s = hy_fail(HY_ERR_PARSE, "%s:%d: expected object,step,index,particles,seconds,cg or pair,step,a,b",
                        path, ln);
        }
    }
    if (!s && (nobj < 1 || nsteps < 1)) s = hy_fail(HY_ERR_PARSE, "%s: no object rows", path);
    if (s) {
        fclose(f);
        return s;
    }
    r->nobj = nobj;
    r->nsteps = nsteps;
    r->seconds = calloc((size_t)nobj * (size_t)nsteps, sizeof *r->seconds);
    r->cg = calloc((size_t)nobj * (size_t)nsteps, sizeof *r->cg);
    r->pair_start = calloc((size_t)nsteps + 1, sizeof *r->pair_start);
    r->pairs = malloc(2 * (size_t)(npairs ? npairs : 1) * sizeof *r->pairs);
    uint8_t* seen = calloc((size_t)nobj * (size_t)nsteps, 1);
    if (!r->seconds || !r->cg || !r->pair_start || !r->pairs || !seen) s = hy_fail(HY_ERR_NOMEM, "%s: out of memory", path);
    /* second pass: values; pairs per step counted, then placed */
    rewind(f);
    ln = 0;
    long np = 0;
    while (!s && fgets(line, sizeof line, f)) {
        ln++;
        int k, i, a, b, cnt, cg;
        double sec;
        if (sscanf(line, "object,%d,%d,%d,%lf,%d", &k, &i, &cnt, &sec, &cg) == 5) {
            if (seen[k * nobj + i]++) s = hy_fail(HY_ERR_PARSE, "%s:%d: object %d of step %d twice", path, ln, i, k);
            r->seconds[k * nobj + i] = sec;
            r->cg[k * nobj + i] = cg;
        } else if (sscanf(line, "pair,%d,%d,%d", &k, &a, &b) == 3) {
            r->pair_start[k + 1]++;
            r->pairs[2 * np] = a;
            r->pairs[2 * np + 1] = b;
            np++;
        }
    }
    fclose(f);
    for (int k = 0; !s && k < nsteps * nobj; k++)
        if (!seen[k]) s = hy_fail(HY_ERR_PARSE, "%s: step %d lacks object %d", path, k / nobj, k % nobj);
    free(seen);
    for (int k = 0; !s && k < nsteps; k++) {
        r->pair_start[k + 1] += r->pair_start[k];
        if (r->pair_start[k + 1] - r->pair_start[k] > HY_REC_MAX_PAIRS)
            s = hy_fail(HY_ERR_PARSE, "%s: step %d has more than %d pairs", path, k, HY_REC_MAX_PAIRS);
    }
    if (s) hy_irec_free(r);
    return s;
}
