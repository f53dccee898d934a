/* hyphys bench fem: the corotational FEM step (solvers/fem.h) alone, timed
 * on the fem_beam geometry, at one and at two threads.
 *
 * The beam is a grid of N x N x 5N cubic cells (N = 15 by default: 16 x 16
 * x 76 nodes, 19,456 vertices, 101,250 tetrahedra), 0.2 x 0.2 x 1 m of a
 * soft rubber (E = 1 MPa, nu = 0.45, 1000 kg/m^3), clamped at x = 0 and
 * bending under gravity with dt = 10 ms. Each step runs exactly the given
 * number of CG iterations (tolerance 0), so the figure is the cost of a
 * step whatever the convergence: rotations, forces, right-hand side,
 * preconditioner, the CG iterations and the commit. The same steps run at
 * each thread count from the same start; the final states' hashes are
 * printed so a reader sees the results do not depend on the threads. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "core/hash.h"
#include "core/pool.h"
#include "core/tetmesh.h"
#include "hyphys/hyphys.h"
#include "solvers/fem.h"

void hy_bench_fem_help(void);
int hy_bench_fem_main(int argc, char** argv);

#define WHO "hyphys bench fem"

void hy_bench_fem_help(void) {
    printf("usage: hyphys bench fem [--threads N] [--steps N] [--cg-iterations N] [--cells N] [--device cuda:N] [--json]\n\n"
           "Times the corotational FEM step on the fem_beam geometry: N x N x 5N cubic cells\n"
           "(Kuhn's six tetrahedra each; N = 15: 16 x 16 x 76 nodes, 101,250 tetrahedra), clamped at\n"
           "one end, bending under gravity, dt = 10 ms, a fixed number of CG iterations per step.\n"
           "Integration only: no collision, no world.\n\n"
           "  --threads N         one thread count (default: 1 then 2, the same steps)\n"
           "  --steps N           steps timed per thread count (default 20)\n"
           "  --cg-iterations N   CG iterations per step (default 10)\n"
           "  --cells N           cells through the beam's height (default 15)\n"
           "  --device cuda:N     the element and vertex passes on GPU N (the CG's vector\n"
           "                      operations stay on the host threads; the same bits)\n"
           "  --json              one JSON object on stdout\n");
}

/* CPU time of the whole process (all its threads), seconds: beside the
 * wall clock, it shows how much a shared machine took from a run. */
static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One thread count's run. */
typedef struct fem_run {
    long threads;
    double median_ms, min_ms, mean_ms;
    double cpu_ms; /* median CPU time per step, all threads together */
    uint64_t hash; /* of the final positions and velocities */
    int32_t cg_iterations;
    double residual; /* the last step's relative CG residual */
} fem_run;

static int run_beam(const hy_tetmesh* mesh, const int32_t* fixed, int32_t nfix, long threads, long steps,
                    long cg_iterations, int device, fem_run* out) {
    const hy_fem_params p = {.young = 1e6, .poisson = 0.45, .density = 1000.0};
    const double g[3] = {0.0, -9.81, 0.0}, dt = 0.01;
    int32_t nv = mesh->vertex_count;
    size_t n = 3 * (size_t)nv;
    hy_fem_model* m = NULL;
    hy_pool* pool = hy_pool_create((int)threads);
    double* x = malloc(n * sizeof *x);
    double* v = calloc(n, sizeof *v);
    double* ms = malloc(2 * (size_t)steps * sizeof *ms); /* wall, then CPU */
    int rc = HY_EXIT_OK;
    if (!pool || !x || !v || !ms) {
        fprintf(stderr, WHO ": out of memory\n");
        rc = HY_EXIT_RUNTIME;
    } else if (hy_fem_model_create(mesh->positions, nv, mesh->tets, mesh->tet_count, &p, fixed, nfix, &m)) {
        fprintf(stderr, WHO ": %s\n", hy_last_error());
        rc = HY_EXIT_RUNTIME;
    } else if (device >= 0 && hy_fem_set_device(m, device)) {
        fprintf(stderr, WHO ": %s\n", hy_last_error());
        rc = HY_EXIT_RUNTIME;
    }
    if (rc == HY_EXIT_OK) {
        memcpy(x, mesh->positions, n * sizeof *x);
        hy_fem_solve_stats st = {0};
        for (long s = 0; s < steps; s++) {
            double t = hy_cli_now(), cpu = cpu_now();
            if (hy_fem_solve(m, pool, x, v, dt, g, NULL, (int32_t)cg_iterations, 0.0, x, v, &st)) {
                fprintf(stderr, WHO ": step %ld: %s\n", s + 1, hy_last_error());
                rc = HY_EXIT_RUNTIME;
                break;
            }
            ms[s] = 1000.0 * (hy_cli_now() - t);
            ms[steps + s] = 1000.0 * (cpu_now() - cpu);
        }
        if (rc == HY_EXIT_OK) {
            out->threads = threads;
            out->median_ms = hy_cli_percentile(ms, steps, 50.0);
            out->cpu_ms = hy_cli_percentile(ms + steps, steps, 50.0);
            out->min_ms = ms[0];
            out->mean_ms = 0.0;
            for (long s = 0; s < steps; s++) {
                out->min_ms = ms[s] < out->min_ms ? ms[s] : out->min_ms;
                out->mean_ms += ms[s] / (double)steps;
            }
            out->hash = hy_fnv1a(hy_fnv1a(HY_FNV1A_INIT, x, n * sizeof *x), v, n * sizeof *v);
            out->cg_iterations = st.cg_iterations;
            out->residual = st.cg_relative_residual;
            if (device >= 0 && hy_fem_device(m) != device) {
                fprintf(stderr, WHO ": the GPU was dropped during the run\n");
                rc = HY_EXIT_RUNTIME;
            }
        }
    }
    hy_fem_model_destroy(m);
    hy_pool_destroy(pool);
    free(x);
    free(v);
    free(ms);
    return rc;
}

int hy_bench_fem_main(int argc, char** argv) {
    long threads = 0, steps = 20, cg_iterations = 10, cells = 15; /* threads 0: 1 then 2 */
    int json = 0, device = -1;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--device")) {
            long d = 0;
            if (i + 1 >= argc || strncmp(argv[i + 1], "cuda:", 5) || !hy_cli_parse_int(a, argv[i + 1] + 5, 0, 63, &d)) {
                fprintf(stderr, WHO ": --device needs cuda:N\n");
                return HY_EXIT_USAGE;
            }
            device = (int)d;
            i++;
        } else if (!strcmp(a, "--threads") || !strcmp(a, "--steps") || !strcmp(a, "--cg-iterations") ||
                   !strcmp(a, "--cells")) {
            if (i + 1 >= argc) {
                fprintf(stderr, WHO ": %s needs a value\n", a);
                return HY_EXIT_USAGE;
            }
            const char* v = argv[++i];
            int ok = !strcmp(a, "--threads")   ? hy_cli_parse_int(a, v, 1, 256, &threads)
                     : !strcmp(a, "--steps")   ? hy_cli_parse_int(a, v, 1, 100000, &steps)
                     : !strcmp(a, "--cells")   ? hy_cli_parse_int(a, v, 1, 64, &cells)
                                               : hy_cli_parse_int(a, v, 1, 100000, &cg_iterations);
            if (!ok) return HY_EXIT_USAGE;
        } else {
            fprintf(stderr, WHO ": unknown option '%s' (try --help)\n", a);
            return HY_EXIT_USAGE;
        }
    }
    const double origin[3] = {0, 0, 0}, size[3] = {1.0, 0.2, 0.2};
    hy_tetmesh* mesh = NULL;
    if (hy_tetmesh_box(origin, size, 5 * (int32_t)cells, (int32_t)cells, (int32_t)cells, &mesh)) {
        fprintf(stderr, WHO ": %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    int32_t nv = mesh->vertex_count, nfix = 0;
    int32_t* fixed = malloc((size_t)nv * sizeof *fixed);
    if (!fixed) {
        hy_tetmesh_destroy(mesh);
        fprintf(stderr, WHO ": out of memory\n");
        return HY_EXIT_RUNTIME;
    }
    for (int32_t k = 0; k < nv; k++)
        if (mesh->positions[3 * k] == 0.0) fixed[nfix++] = k;
    fem_run runs[2];
    int nruns = threads ? 1 : 2, rc = HY_EXIT_OK;
    for (int r = 0; r < nruns && rc == HY_EXIT_OK; r++)
        rc = run_beam(mesh, fixed, nfix, threads ? threads : r + 1, steps, cg_iterations, device, &runs[r]);
    char dname[16] = "cpu";
    if (device >= 0) snprintf(dname, sizeof dname, "cuda:%d", device);
    if (rc == HY_EXIT_OK) {
        if (json) {
            printf("{\"geometry\":\"fem_beam\",\"cells\":[%ld,%ld,%ld],\"vertices\":%d,\"tetrahedra\":%d,"
                   "\"steps\":%ld,\"cg_iterations\":%ld,\"device\":\"%s\",\"runs\":[",
                   5 * cells, cells, cells, nv, mesh->tet_count, steps, cg_iterations, dname);
            for (int r = 0; r < nruns; r++)
                printf("%s{\"threads\":%ld,\"ms_per_step\":{\"median\":%.3f,\"min\":%.3f,\"mean\":%.3f},"
                       "\"cpu_ms_per_step\":%.3f,"
                       "\"cg_relative_residual\":%.3e,\"hash\":\"%016" PRIx64 "\"}",
                       r ? "," : "", runs[r].threads, runs[r].median_ms, runs[r].min_ms, runs[r].mean_ms,
                       runs[r].cpu_ms, runs[r].residual, runs[r].hash);
            printf("]}\n");
        } else {
            printf("fem_beam: %ld x %ld x %ld cells, %d vertices, %d tetrahedra; %ld steps of %ld CG iterations%s\n",
                   5 * cells, cells, cells, nv, mesh->tet_count, steps, cg_iterations,
                   device >= 0 ? "; element and vertex passes on the GPU" : "");
            for (int r = 0; r < nruns; r++)
                printf("  %ld thread%s: %8.2f ms per step (median; min %.2f, mean %.2f; CPU %.2f ms, all threads), "
                       "last residual %.2e, state %016" PRIx64 "\n",
                       runs[r].threads, runs[r].threads == 1 ? " " : "s", runs[r].median_ms, runs[r].min_ms,
                       runs[r].mean_ms, runs[r].cpu_ms, runs[r].residual, runs[r].hash);
        }
    }
    free(fixed);
    hy_tetmesh_destroy(mesh);
    return rc;
}
