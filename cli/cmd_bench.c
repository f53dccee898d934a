/* hyphys bench: benchmarks by subject. Each subject lives in bench/ and is
 * linked only if its file is built (weak symbols), like the commands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#define HY_WEAK __attribute__((weak))
/* argv[0] is the subject name ("ccd", "step", "sched", "integrate", "fem", "soak"); returns the exit code. */
extern int hy_bench_ccd_main(int argc, char** argv) HY_WEAK;
extern void hy_bench_ccd_help(void) HY_WEAK;
extern int hy_bench_step_main(int argc, char** argv) HY_WEAK;
extern void hy_bench_step_help(void) HY_WEAK;
extern int hy_bench_sched_main(int argc, char** argv) HY_WEAK;
extern void hy_bench_sched_help(void) HY_WEAK;
extern int hy_bench_integrate_main(int argc, char** argv) HY_WEAK;
extern void hy_bench_integrate_help(void) HY_WEAK;
extern int hy_bench_fem_main(int argc, char** argv) HY_WEAK;
extern void hy_bench_fem_help(void) HY_WEAK;
extern int hy_bench_soak_main(int argc, char** argv) HY_WEAK;
extern void hy_bench_soak_help(void) HY_WEAK;

typedef struct bench_subject {
    const char* name;
    const char* summary;
    int (*main)(int argc, char** argv);
    void (*help)(void);
} bench_subject;

static int subjects(bench_subject* out) {
    bench_subject all[] = {
        {"ccd", "collision detection over a scene's recorded sequence: CCD frames per second", hy_bench_ccd_main,
         hy_bench_ccd_help},
        {"step", "the simulation's whole step over a scene's sequence: steps per second, median/p95 step",
         hy_bench_step_main, hy_bench_step_help},
        {"sched", "scheduling quality and modeled throughput of the policies", hy_bench_sched_main,
         hy_bench_sched_help},
        {"integrate", "the integration runtime: modeled gpus/bars/mixed experiments, real CPU PUs, overhead",
         hy_bench_integrate_main, hy_bench_integrate_help},
        {"fem", "the corotational FEM step alone on the fem_beam geometry: ms per step at 1 and 2 threads",
         hy_bench_fem_main, hy_bench_fem_help},
        {"soak", "a long run's health: state finite, no intersections, energy bounded (not timed)",
         hy_bench_soak_main, hy_bench_soak_help},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i].main) out[n++] = all[i];
    return n;
}

static void bench_help(void) {
    bench_subject s[8];
    int n = subjects(s);
    printf("usage: hyphys bench SUBJECT [options]\n       hyphys bench SUBJECT --help\n\nsubjects:\n");
    for (int i = 0; i < n; i++) printf("  %-8s %s\n", s[i].name, s[i].summary);
    printf("\nFigures measured with these are recorded in docs/PERFORMANCE.md.\n");
}

static int bench_main(int argc, char** argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        bench_help();
        return argc < 2 ? HY_EXIT_USAGE : HY_EXIT_OK;
    }
    bench_subject s[8];
    int n = subjects(s);
    for (int i = 0; i < n; i++) {
        if (strcmp(argv[1], s[i].name) != 0) continue;
        for (int k = 2; k < argc; k++)
            if ((!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) && s[i].help) {
                s[i].help();
                return HY_EXIT_OK;
            }
        return s[i].main(argc - 1, argv + 1);
    }
    fprintf(stderr, "hyphys bench: unknown subject '%s' (try 'hyphys bench --help')\n", argv[1]);
    return HY_EXIT_USAGE;
}

const hy_command hy_cmd_bench = {"bench", "run a benchmark (ccd, step, sched, integrate, fem, soak)", bench_main, bench_help};
