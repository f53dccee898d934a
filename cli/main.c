/* hyphys: the command line. One table of commands; each lives in its own
 * cli/cmd_<name>.c. A command whose file is not built (the viewer without
 * GLFW, say) is simply absent from the table and from --help. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "hyphys/hyphys.h"

#define HY_WEAK __attribute__((weak))
extern const hy_command hy_cmd_run HY_WEAK;
extern const hy_command hy_cmd_bench HY_WEAK;
extern const hy_command hy_cmd_ccd_eval HY_WEAK;
extern const hy_command hy_cmd_ccd_frames HY_WEAK;
extern const hy_command hy_cmd_calibrate HY_WEAK;
extern const hy_command hy_cmd_view HY_WEAK;
extern const hy_command hy_cmd_info HY_WEAK;

static const hy_command* const* commands(void) {
    static const hy_command* table[16];
    static int built = 0;
    if (!built) {
        const hy_command* all[] = {&hy_cmd_run,  &hy_cmd_bench, &hy_cmd_ccd_eval, &hy_cmd_ccd_frames,
                                   &hy_cmd_calibrate, &hy_cmd_view, &hy_cmd_info};
        int n = 0;
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            if (all[i]) table[n++] = all[i];
        table[n] = NULL;
        built = 1;
    }
    return table;
}

static void usage(FILE* f) {
    fprintf(f,
            "hyphys %d.%d.%d - physics simulation engine (cloth, rigid, N-body, fracture) with CCD\n\n"
            "usage: hyphys COMMAND [options]\n       hyphys COMMAND --help\n\ncommands:\n",
            HY_VERSION_MAJOR, HY_VERSION_MINOR, HY_VERSION_PATCH);
    for (const hy_command* const* c = commands(); *c; c++) fprintf(f, "  %-12s %s\n", (*c)->name, (*c)->summary);
    fprintf(f, "\nexit codes: 0 ok, 1 runtime failure, 2 bad usage or input\n");
}

int main(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return HY_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        if (argc >= 3 && strcmp(argv[1], "help") == 0) {
            for (const hy_command* const* c = commands(); *c; c++)
                if (!strcmp((*c)->name, argv[2])) {
                    (*c)->help();
                    return HY_EXIT_OK;
                }
        }
        usage(stdout);
        return HY_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("hyphys %d.%d.%d\n", HY_VERSION_MAJOR, HY_VERSION_MINOR, HY_VERSION_PATCH);
        return HY_EXIT_OK;
    }
    for (const hy_command* const* c = commands(); *c; c++) {
        if (strcmp((*c)->name, argv[1]) != 0) continue;
        /* bench dispatches to subjects, which have help of their own */
        int own_help = !strcmp((*c)->name, "bench");
        for (int i = 2; i < argc && !own_help; i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                (*c)->help();
                return HY_EXIT_OK;
            }
        int rc = (*c)->main(argc - 1, argv + 1);
        /* what went to stdout (a summary, JSON) may have failed to reach
         * it, a full disk or a closed pipe: that is a failure, never 0 */
        int e = fflush(stdout) != 0 ? errno : 0;
        if (e || ferror(stdout)) {
            fprintf(stderr, "hyphys %s: writing the output failed: %s\n", argv[1], e ? strerror(e) : "write error");
            if (rc == HY_EXIT_OK) rc = HY_EXIT_RUNTIME;
        }
        return rc;
    }
    fprintf(stderr, "hyphys: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return HY_EXIT_USAGE;
}
