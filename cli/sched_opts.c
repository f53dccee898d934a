/* Scheduling options and calibration for the command line. */
#include "cli/sched_opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "collision/collide.h"
#include "core/error.h"
#include "engine/tools.h"
#include "sched/cuda.h"
#include "sched/model.h"
#include "sched/proximity.h"

int hy_cli_sched_option(hy_cli_sched* o, const char* cmd, int argc, char** argv, int* i) {
    const char* a = argv[*i];
    const char* keys[] = {"--sched", "--devices", "--clock", "--profile", "--trace", "--fault"};
    int k = -1;
    for (int q = 0; q < 6; q++)
        if (!strcmp(a, keys[q])) k = q;
    if (k < 0) return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "hyphys %s: %s needs a value\n", cmd, a);
        return -1;
    }
    const char* v = argv[++*i];
    o->given = 1;
    switch (k) {
    case 0:
        if (!hy_sched_policy_find(v)) {
            fprintf(stderr, "hyphys %s: --sched: unknown policy '%s' (lp, lau10, tan09, ws, ws-exp, exhaustive)\n",
                    cmd, v);
            return -1;
        }
        o->policy = v;
        break;
    case 1:
        o->devices = v;
        break;
    case 2:
        if (strcmp(v, "real") && strcmp(v, "virtual")) {
            fprintf(stderr, "hyphys %s: --clock: expected real or virtual, got '%s'\n", cmd, v);
            return -1;
        }
        o->virtual_clock = !strcmp(v, "virtual");
        break;
    case 3:
        o->profile = v;
        break;
    case 5: {
        /* the form here; that DEVICE is one of the resources, when they are made */
        const char* at = strrchr(v, '@');
        char* end = NULL;
        long long step = at && at[1] ? strtoll(at + 1, &end, 10) : 0;
        if (!at || at == v || !end || *end || step < 1) {
            fprintf(stderr, "hyphys %s: --fault: expected DEVICE@STEP (a resource of --devices, a step >= 1), got '%s'\n",
                    cmd, v);
            return -1;
        }
        o->fault = v;
        break;
    }
    default:
        o->trace = v;
        break;
    }
    return 1;
}

void hy_cli_profile_path(int threads, char* buf, size_t cap) {
    const char* env = getenv("HYPHYS_PROFILE");
    if (env && *env) {
        snprintf(buf, cap, "%s", env);
        return;
    }
    char host[128] = "host";
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = '\0';
    for (char* c = host; *c; c++)
        if (*c == '/') *c = '_';
    const char* cache = getenv("XDG_CACHE_HOME");
    const char* home = getenv("HOME");
    /* "-v2": TRAVERSE costs per node pair tested; the unsuffixed files of
     * earlier builds hold them per front pair and are not read */
    if (cache && *cache)
        snprintf(buf, cap, "%s/hyphys/profile-%s-%dt-v2.json", cache, host, threads);
    else
        snprintf(buf, cap, "%s/.cache/hyphys/profile-%s-%dt-v2.json", home && *home ? home : ".", host, threads);
}

/* The calibration sample: a size x size cloth folded like an accordion into
 * six layers 3 mm apart (2 mm thick), each vertex then moved by up to 1.5 mm
 * in a random direction (fixed seed): lots of self-collision candidates of
 * every kind, a realistic share of contacts. */
static hy_world* calibration_world(int threads, int size, double** X0, double** X1) {
    hy_world_def wd = hy_world_def_default();
    wd.threads = threads;
    hy_world* w = NULL;
    hy_mesh* grid = NULL;
    if (hy_world_create(&wd, &w) || hy_mesh_grid(size, size, 1.0, 1.0, &grid)) {
        hy_world_destroy(w);
        return NULL;
    }
    hy_mesh_view v = hy_mesh_get_view(grid);
    size_t n = (size_t)v.vertex_count;
    double* p = malloc(sizeof(double) * 3 * n);
    double* q = malloc(sizeof(double) * 3 * n);
    if (!p || !q) {
        free(p);
        free(q);
        hy_mesh_destroy(grid);
        hy_world_destroy(w);
        return NULL;
    }
    double lo = v.positions[0], hi = v.positions[0];
    for (size_t k = 0; k < n; k++) {
        lo = fmin(lo, v.positions[3 * k]);
        hi = fmax(hi, v.positions[3 * k]);
    }
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < n; k++) {
        double u = (v.positions[3 * k] - lo) / (hi - lo) * 6.0;
        int layer = u >= 6.0 ? 5 : (int)u;
        double local = u - layer;
        if (layer % 2) local = 1.0 - local;
        p[3 * k] = local / 6.0;
        p[3 * k + 1] = 0.003 * layer;
        p[3 * k + 2] = v.positions[3 * k + 2];
        for (int c = 0; c < 3; c++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            q[3 * k + c] = p[3 * k + c] + 0.0015 * ((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        }
    }
    hy_cloth_def cd = hy_cloth_def_default();
    cd.mesh = v;
    cd.mesh.positions = p;
    hy_cloth_id id;
    hy_status s = hy_cloth_add(w, &cd, &id);
    hy_mesh_destroy(grid);
    if (!s) s = hy_world_collision_sync(w);
    if (s) {
        free(p);
        free(q);
        hy_world_destroy(w);
        return NULL;
    }
    *X0 = p;
    *X1 = q;
    return w;
}

/* 1 when a profile can be saved at path (its folder made if missing): a
 * writable file, or a writable folder to create it in. Checked before the
 * seconds of measuring, whose fit an unwritable path would otherwise lose;
 * errno says why not. */
static int can_save(const char* path) { return hy_cli_make_dirs(path, 1, NULL) && hy_cli_can_write(path); }

/* The fit of one job kind as JSON: constants, correlations and points
 * ([units, us] on the cpu; [units, us, jobs, copies us] on a GPU). */
static void print_kind_json(const char* name, const hy_calib_kind* c, int gpu) {
    printf("\"%s\":{\"setup_us\":%.4f,\"proc_us\":%.6f,\"r\":%.6f", name, 1e6 * c->setup, 1e6 * c->proc, c->r);
    if (gpu) printf(",\"upload_us\":%.6f,\"r_copy\":%.6f", 1e6 * c->upload, c->r_copy);
    printf(",\"points\":[");
    for (int i = 0; i < c->points; i++) {
        printf("%s[%.0f,%.3f", i ? "," : "", c->n[i], 1e6 * c->t[i]);
        if (gpu) printf(",%.0f,%.3f", c->jobs[i], 1e6 * c->copy[i]);
        printf("]");
    }
    printf("]}");
}

int hy_cli_calibrate(int threads, int repeats, int size, const char* path, int quiet, int json) {
    if (!can_save(path)) {
        fprintf(stderr, "hyphys calibrate: cannot save a profile at '%s': %s (nothing measured)\n", path,
                strerror(errno));
        return HY_EXIT_USAGE;
    }
    double *X0 = NULL, *X1 = NULL;
    hy_world* w = calibration_world(threads, size, &X0, &X1);
    if (!w) {
        fprintf(stderr, "hyphys calibrate: cannot build the sample: %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    int nthreads = hy_cli_threads(w);
    /* the cpu resource, then every GPU present */
    int gpus = hy_cuda_device_count();
    if (gpus > HY_SCHED_MAX_RESOURCES - 1) gpus = HY_SCHED_MAX_RESOURCES - 1;
    int R = 1 + gpus;
    hy_calibration* cal = calloc((size_t)R, sizeof *cal);
    hy_status s = cal ? HY_OK : hy_fail(HY_ERR_NOMEM, "out of memory");
    /* a GPU that cannot be calibrated is left out, with a line; the cpu's
     * failure ends it */
    int* gpu = calloc((size_t)R, sizeof *gpu); /* the GPU device of kept slot r > 0 (slot 0: the cpu) */
    if (!s && !gpu) s = hy_fail(HY_ERR_NOMEM, "out of memory");
    int kept = 0;
    for (int r = 0; r < R && !s; r++) {
        int device = r - 1;
        hy_status sr = hy_world_calibrate(w, X0, X1, device, repeats, &cal[kept]);
        if (sr && device < 0) {
            s = sr;
        } else if (sr) {
            fprintf(stderr, "hyphys calibrate: cuda:%d left out of the profile: %s\n", device, hy_last_error());
        } else {
            gpu[kept++] = device;
        }
    }
    R = kept;
    gpus = kept > 0 ? kept - 1 : 0;
    hy_world_destroy(w);
    free(X0);
    free(X1);
    if (s) {
        fprintf(stderr, "hyphys calibrate: %s\n", hy_last_error());
        free(cal);
        free(gpu);
        return HY_EXIT_RUNTIME;
    }
    hy_sched_model m;
    hy_sched_model_init(&m);
    char names[HY_SCHED_MAX_RESOURCES][48];
    for (int r = 0; r < R && !s; r++) {
        hy_device_profile d;
        memset(&d, 0, sizeof d);
        if (r == 0) {
            snprintf(d.name, sizeof d.name, "cpu");
            d.kind = HY_DEVICE_CPU;
            d.cores = nthreads;
        } else {
            snprintf(d.name, sizeof d.name, "cuda:%d", gpu[r]);
            d.kind = HY_DEVICE_GPU;
            d.cores = 1;
            d.staged = 1; /* every batch copies its jobs in and its outputs out (collision/kernels.h) */
        }
        snprintf(names[r], sizeof names[r], "%s", d.name);
        for (int k = 0; k < HY_JOB_KINDS; k++) {
            d.cost[k].setup = cal[r].kind[k].setup;
            d.cost[k].proc = cal[r].kind[k].proc;
            d.cost[k].upload = cal[r].kind[k].upload;
        }
        s = hy_sched_model_add(&m, &d);
    }
    if (!s && !hy_cli_make_dirs(path, 1, NULL)) s = hy_fail(HY_ERR_IO, "%s: cannot create its folder: %s", path, strerror(errno));
    if (!s) s = hy_sched_model_save(&m, path);
    static const char* kinds[2] = {"traverse", "leaf"};
    if (s) {
        /* the path was checked first, so this is rare (a full disk, a
         * folder removed meanwhile): the fit still goes out, to stderr */
        fprintf(stderr, "hyphys calibrate: %s\n", hy_last_error());
        for (int r = 0; r < R; r++)
            for (int k = 0; k < 2; k++)
                fprintf(stderr, "  not saved: %s %s setup %.3f us, proc %.5f us, upload %.5f us (r %.6f)\n", names[r],
                        kinds[k], 1e6 * cal[r].kind[k].setup, 1e6 * cal[r].kind[k].proc,
                        1e6 * cal[r].kind[k].upload, cal[r].kind[k].r);
        free(cal);
        free(gpu);
        return HY_EXIT_RUNTIME;
    }
    if (json) {
        /* the cpu's fit at the top level, each GPU's in "gpus" */
        printf("{\"resource\":\"cpu\",\"threads\":%d,\"profile\":", nthreads);
        hy_cli_json_string(stdout, path);
        printf(",\"front\":%lld,\"leaves\":%lld", (long long)cal[0].front, (long long)cal[0].leaves);
        for (int k = 0; k < 2; k++) {
            printf(",");
            print_kind_json(kinds[k], &cal[0].kind[k], 0);
        }
        printf(",\"cuda\":");
        hy_cli_json_string(stdout, hy_cuda_status());
        printf(",\"gpus\":[");
        for (int r = 1; r < R; r++) {
            char model[128] = "";
            hy_cuda_device_name(gpu[r], model, sizeof model);
            printf("%s{\"resource\":\"%s\",\"device\":", r > 1 ? "," : "", names[r]);
            hy_cli_json_string(stdout, model);
            for (int k = 0; k < 2; k++) {
                printf(",");
                print_kind_json(kinds[k], &cal[r].kind[k], 1);
            }
            printf("}");
        }
        printf("]}\n");
    } else if (!quiet) {
        printf("calibrated on a folded %dx%d cloth: %lld TRAVERSE, %lld LEAF jobs\n", size, size,
               (long long)cal[0].front, (long long)cal[0].leaves);
        printf("%-9s %-9s %12s %12s %12s %10s %7s\n", "resource", "job", "setup us", "proc us", "upload us", "r",
               "points");
        for (int r = 0; r < R; r++)
            for (int k = 0; k < 2; k++) {
                const hy_calib_kind* c = &cal[r].kind[k];
                printf("%-9s %-9s %12.3f %12.5f %12.5f %10.6f %7d\n", names[r], kinds[k], 1e6 * c->setup,
                       1e6 * c->proc, 1e6 * c->upload, c->r, c->points);
            }
        printf("(cpu: %d threads; proc per node pair tested / per test; upload per job: a GPU's copies)\n", nthreads);
        if (gpus == 0) printf("no GPU calibrated: %s\n", hy_cuda_status());
        printf("profile saved to %s\n", path);
    }
    free(cal);
    free(gpu);
    return HY_EXIT_OK;
}

int hy_cli_sched_def(const hy_cli_sched* o, const char* cmd, int threads, int quiet, hy_sched_def* d, char* path,
                     size_t cap) {
    *d = hy_sched_def_default();
    if (o->policy) d->policy = o->policy;
    if (o->devices) d->devices = o->devices;
    d->virtual_clock = o->virtual_clock;
    d->trace = o->trace;
    d->profile = o->profile;
    d->fault = o->fault;
    int need = hy_prox_needs_profile(d->devices, o->virtual_clock ? HY_CLOCK_VIRTUAL : HY_CLOCK_REAL);
    if (need < 0) {
        fprintf(stderr, "hyphys %s: --devices: %s\n", cmd, hy_last_error());
        return HY_EXIT_USAGE;
    }
    if (need && !d->profile) {
        hy_cli_profile_path(threads, path, cap);
        struct stat sb;
        int found = stat(path, &sb) == 0, stale = 0;
        char missing[64] = "";
        if (found) {
            /* made before this GPU was there (or by an older hyphys): it
             * would be refused, so it is made again */
            hy_sched_model m;
            stale = hy_sched_model_load(path, &m) == HY_OK &&
                    hy_prox_profile_missing(d->devices, &m, missing, sizeof missing) == 1;
        }
        if (!found || stale) {
            if (stale)
                fprintf(stderr, "hyphys %s: the profile %s has no '%s': calibrating again\n", cmd, path, missing);
            else
                fprintf(stderr, "hyphys %s: no calibrated profile for this machine at %d threads: calibrating first\n",
                        cmd, threads);
            int rc = hy_cli_calibrate(threads, 5, 64, path, 1, 0);
            if (rc) return rc;
            fprintf(stderr, "hyphys %s: profile saved to %s\n", cmd, path);
        } else if (!quiet) {
            fprintf(stderr, "hyphys %s: profile %s\n", cmd, path);
        }
        d->profile = path;
    }
    return HY_EXIT_OK;
}

int hy_cli_sched_apply(const hy_cli_sched* o, const char* cmd, hy_world* w, int quiet, char* desc, size_t cap) {
    hy_sched_def d;
    char path[4096];
    int rc = hy_cli_sched_def(o, cmd, hy_cli_threads(w), quiet, &d, path, sizeof path);
    if (rc) return rc;
    hy_status s = hy_world_set_scheduling(w, &d);
    if (s) {
        /* nothing has run yet: what failed is what the user named (a
         * device, a profile or trace path), unless memory ran out */
        fprintf(stderr, "hyphys %s: %s\n", cmd, hy_last_error());
        return s == HY_ERR_NOMEM || s == HY_ERR_INTERNAL ? HY_EXIT_RUNTIME : HY_EXIT_USAGE;
    }
    hy_cli_sched_fallback(cmd, w);
    const struct hy_prox* prox = hy_world_prox(w);
    if (prox) hy_prox_describe(prox, desc, cap);
    else snprintf(desc, cap, "?");
    return HY_EXIT_OK;
}

void hy_cli_sched_fallback(const char* cmd, const hy_world* w) {
    hy_sched_info info;
    if (hy_world_get_scheduling(w, &info) || !info.fell_back) return;
    char names[512] = "";
    size_t n = 0;
    for (int i = 0; i < info.resource_count && n < sizeof names; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", info.resource[i].name);
    fprintf(stderr, "hyphys %s: %s; collision jobs on %s\n", cmd, info.fallback, names);
}

void hy_cli_sched_failures(const char* cmd, const hy_world* w, int* said) {
    hy_sched_info info;
    if (hy_world_get_scheduling(w, &info) || info.failures <= *said) return;
    *said = info.failures;
    fprintf(stderr, "hyphys %s: %s\n", cmd, info.failure);
}
