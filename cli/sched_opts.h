/* Scheduling options shared by `hyphys run`, `hyphys view` and
 * `hyphys calibrate`: --sched, --devices, --clock, --profile, --trace, and
 * the machine's calibrated profile (loaded, or measured first). */
#ifndef HY_CLI_SCHED_OPTS_H
#define HY_CLI_SCHED_OPTS_H

#include <stddef.h>

#include "hyphys/hyphys.h"

typedef struct hy_cli_sched {
    const char* policy;  /* NULL = lp */
    const char* devices; /* NULL = cpu */
    int virtual_clock;
    const char* profile; /* NULL = the machine's default profile when one is needed */
    const char* trace;
    const char* fault; /* DEVICE@STEP, checked for form; NULL = none */
    int given; /* any of the above was on the command line */
} hy_cli_sched;

/* Option help lines for the commands that take them. */
#define HY_CLI_SCHED_HELP                                                                                         \
    "  --sched NAME        scheduling policy: lp (default), lau10, tan09, ws, ws-exp, exhaustive\n"               \
    "  --devices LIST      resources: cpu (default), cuda, cuda:N, model:NAME (gtx285, gtx480, gtx580,\n"         \
    "                      c2075, cpu-m1, cpu-m2, or a profile .json), comma separated\n"                         \
    "  --clock real|virtual  virtual: discrete-event clock, every batch charged its modeled time\n"               \
    "  --profile FILE      calibrated profile of this machine (default: see hyphys calibrate --help)\n"           \
    "  --trace FILE        write Chrome/Perfetto trace events of the collision jobs and of the\n"                 \
    "                      integrate phase (its tasks, steals, METIS maps: one track per PU)\n"

/* --fault, which `hyphys run` takes (it says when a resource failed). */
#define HY_CLI_FAULT_HELP                                                                                         \
    "  --fault DEVICE@STEP make resource DEVICE (e.g. model:gtx285) fail at its first batch in step STEP:\n"      \
    "                      its jobs run on the others and the run goes on without it (needs another)\n"

/* argv[*i] is one of the options: consume it (and its value), return 1;
 * not one: return 0; bad value: print an error naming the option, return -1. */
int hy_cli_sched_option(hy_cli_sched* o, const char* cmd, int argc, char** argv, int* i);

/* The default profile path for `threads` workers: $HYPHYS_PROFILE, else
 * $XDG_CACHE_HOME (or ~/.cache)/hyphys/profile-HOST-Nt-v2.json (TRAVERSE per node pair). */
void hy_cli_profile_path(int threads, char* buf, size_t cap);

/* Calibrate the cpu resource with `threads` workers and save the profile at
 * `path` (its folder made if missing). Prints the fit unless quiet. Exit code:
 * HY_EXIT_USAGE, before anything is measured, when path cannot be written. */
int hy_cli_calibrate(int threads, int repeats, int size, const char* path, int quiet, int json);

/* Fill *def from o for a world of `threads` workers; when the device list
 * needs a profile and none was given, the machine's default one is used, or
 * made first (calibration, said on stderr). path (cap bytes) holds the
 * profile path def points to. Exit code. */
int hy_cli_sched_def(const hy_cli_sched* o, const char* cmd, int threads, int quiet, hy_sched_def* def, char* path,
                     size_t cap);

/* Set the world's scheduling from o; when the device list needs a profile
 * and none was given, load the machine's default one or calibrate first and
 * say so (on stderr). Writes a one-line description into desc. Exit code. */
int hy_cli_sched_apply(const hy_cli_sched* o, const char* cmd, hy_world* w, int quiet, char* desc, size_t cap);

/* When w's device list asked for what is not there ("cuda" with no GPU),
 * say so in one line on stderr, naming the resources used instead. */
void hy_cli_sched_fallback(const char* cmd, const hy_world* w);

/* When a resource of w failed since the last call (*said: the failures
 * said so far, 0 at first), say so in one line on stderr. */
void hy_cli_sched_failures(const char* cmd, const hy_world* w, int* said);

#endif
