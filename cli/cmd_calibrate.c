/* hyphys calibrate: fit the expected-time model of the cpu resource and of
 * every GPU present. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sched_opts.h"
#include "hyphys/hyphys.h"

static void help(void) {
    printf("usage: hyphys calibrate [options]\n\n"
           "Measure the TRAVERSE and LEAF jobs of the cpu resource and of every GPU present\n"
           "(cuda:N) over batch sizes (1, 2, 4, ... TRAVERSE; 1, 4, 16, ... LEAF) on a folded\n"
           "cloth, keep the median of the repeats per size, fit T(n) = setup + proc * n by least\n"
           "squares (n: node pairs tested for TRAVERSE, tests for LEAF), on a GPU with its\n"
           "host<->device copies fitted apart per job (upload), print the constants with the\n"
           "correlation of the fit and save a profile (JSON, microseconds). Runs with more than\n"
           "one resource or the virtual clock load it, or calibrate first.\n\n"
           "options:\n"
           "  --threads N    worker threads, 0 = one per core (default 0)\n"
           "  --repeats N    timings per batch size, the median kept (default 5)\n"
           "  --size N       cloth of N x N vertices (default 64)\n"
           "  --output FILE  where to save (default $HYPHYS_PROFILE, else\n"
           "                 ~/.cache/hyphys/profile-HOST-Nt-v2.json, N = threads)\n"
           "  --json         print the fit as JSON\n\n"
           "exit codes: 0 ok, 1 runtime failure, 2 bad usage\n");
}

static int calibrate_main(int argc, char** argv) {
    long threads = 0, repeats = 5, size = 64;
    const char* output = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--threads")) {
            if (!hy_cli_parse_int("--threads", i + 1 < argc ? argv[++i] : NULL, 0, 256, &threads)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--repeats")) {
            if (!hy_cli_parse_int("--repeats", i + 1 < argc ? argv[++i] : NULL, 1, 99, &repeats)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--size")) {
            if (!hy_cli_parse_int("--size", i + 1 < argc ? argv[++i] : NULL, 16, 1024, &size)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--output")) {
            if (i + 1 >= argc) return fprintf(stderr, "hyphys calibrate: --output needs a file\n"), HY_EXIT_USAGE;
            output = argv[++i];
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "hyphys calibrate: unknown option '%s' (see hyphys calibrate --help)\n", a);
            return HY_EXIT_USAGE;
        }
    }
    char path[4096];
    if (output) {
        snprintf(path, sizeof path, "%s", output);
    } else {
        /* the default name carries the thread count the world will use */
        hy_world_def wd = hy_world_def_default();
        wd.threads = (int32_t)threads;
        hy_world* w = NULL;
        if (hy_world_create(&wd, &w)) {
            fprintf(stderr, "hyphys calibrate: %s\n", hy_last_error());
            return HY_EXIT_RUNTIME;
        }
        hy_cli_profile_path(hy_cli_threads(w), path, sizeof path);
        hy_world_destroy(w);
    }
    return hy_cli_calibrate((int)threads, (int)repeats, (int)size, path, 0, json);
}

const hy_command hy_cmd_calibrate = {"calibrate", "fit the job cost model of the cpu and each GPU; save a profile",
                                     calibrate_main, help};
