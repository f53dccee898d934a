/* `hyphys view SCENE`: the interactive viewer (viewer/). Built only with
 * GLFW and libepoxy (HY_HAVE_VIEWER); without them this file defines
 * nothing, the weak hy_cmd_view in cli/main.c stays NULL and the command is
 * absent from the table. */
#ifdef HY_HAVE_VIEWER

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "cli/cli.h"
#include "cli/sched_opts.h"
#include "viewer/viewer.h"

static void help(void) {
    printf("usage: hyphys view SCENE [options]\n\n"
           "Open SCENE (a .json file, or a name from scenes/: cloth_ball, nbody, fracture, ...) in a\n"
           "window and simulate it on a thread of its own: the window draws the newest finished step\n"
           "and answers input while a step runs.\n\n"
           "options:\n"
           "  --threads N         CPU worker threads (default: the scene's, else one per core)\n"
           "  --frames N          stop after N steps; with --screenshot, save and exit\n"
           "  --screenshot FILE   after --frames steps (default 0) render one frame off screen,\n"
           "                      write it as a PNG and exit 0 (no interaction)\n"
           "  --size WxH          window / screenshot size in pixels (default 1280x720)\n"
           "  --paused            start paused (space runs, n steps)\n"
           "  --contacts          start with the last step's contacts shown (key c)\n"
           "  --realtime          keep simulated time equal to wall time: wait when ahead; when\n"
           "                      behind, skip drawn frames (never steps) and say so (HUD, stderr)\n"
           "                      (default: step as fast as possible)\n"
           "  --no-hud            hide the statistics overlay\n"
           "  --camera Y,P[,Z]    start from yaw Y and pitch P (degrees) and zoom factor Z\n"
           "                      (default 34,26,1: framed on the scene from above right)\n"
           "  --integrate-sched P integration runtime policy (as hyphys run; default lp)\n"
           "  --integrate-pus N   integration PUs (as hyphys run; default: one per thread when the scene\n"
           "                      holds 2 solids per thread or more, else 1)\n"
           "  --integrate-devices LIST  GPUs as integration PUs too (as hyphys run: cuda:0,cuda:1); a\n"
           "                      GPU not present is said in one line and left out\n"
           HY_CLI_SCHED_HELP
           "\nkeys: space pause/run, n one step, r reset, w wireframe, c contacts, p next policy,\n"
           "      s screenshot,"
           "      f frame,"
           " h help overlay, Esc quit. Mouse: left drag orbit, right/middle drag pan, wheel zoom.\n"
           "See docs/guide/VIEWER.md. Needs a display with OpenGL 3.3 (xvfb-run works).\n");
}

static int view_main(int argc, char** argv) {
    hy_viewer_options o;
    memset(&o, 0, sizeof o);
    o.frames = -1;
    o.width = 1280;
    o.height = 720;
    o.realtime = 0;
    o.hud = 1;
    int frames_given = 0;
    hy_cli_sched so;
    memset(&so, 0, sizeof so);
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        int sc = hy_cli_sched_option(&so, "view", argc, argv, &i);
        if (sc < 0) return HY_EXIT_USAGE;
        if (sc > 0 && so.fault) {
            fprintf(stderr, "hyphys view: --fault is an option of hyphys run\n");
            return HY_EXIT_USAGE;
        }
        if (sc > 0) continue;
        if (!strcmp(a, "--threads")) {
            if (!hy_cli_parse_int("--threads", v, 1, 256, &n)) return HY_EXIT_USAGE;
            o.threads = (int32_t)n;
            i++;
        } else if (!strcmp(a, "--frames")) {
            if (!hy_cli_parse_int("--frames", v, 0, 100000000, &n)) return HY_EXIT_USAGE;
            o.frames = n;
            frames_given = 1;
            i++;
        } else if (!strcmp(a, "--screenshot")) {
            if (!v || !*v) {
                fprintf(stderr, "hyphys view: --screenshot needs a file name\n");
                return HY_EXIT_USAGE;
            }
            o.screenshot = v;
            i++;
        } else if (!strcmp(a, "--size")) {
            int w = 0, h = 0;
            char tail = 0;
            if (!v || sscanf(v, "%dx%d%c", &w, &h, &tail) != 2 || w < 64 || h < 64 || w > 8192 || h > 8192) {
                fprintf(stderr, "hyphys view: --size must be WxH with 64 <= W, H <= 8192, got '%s'\n", v ? v : "");
                return HY_EXIT_USAGE;
            }
            o.width = w;
            o.height = h;
            i++;
        } else if (!strcmp(a, "--camera")) {
            float c[3] = {0.0f, 0.0f, 1.0f};
            char tail = 0;
            int got = v ? sscanf(v, "%f,%f,%f%c", &c[0], &c[1], &c[2], &tail) : 0;
            if ((got != 2 && got != 3) || !(c[2] > 0.0f) || !(c[2] < 1000.0f) || !(c[0] > -1e4f && c[0] < 1e4f) ||
                !(c[1] >= -90.0f && c[1] <= 90.0f)) {
                fprintf(stderr, "hyphys view: --camera must be YAW,PITCH[,ZOOM] in degrees, pitch in [-90, 90], "
                        "zoom > 0, got '%s'\n", v ? v : "");
                return HY_EXIT_USAGE;
            }
            o.camera_set = 1;
            memcpy(o.camera, c, sizeof c);
            i++;
        } else if (!strcmp(a, "--integrate-sched")) {
            if (!v || !*v) {
                fprintf(stderr, "hyphys view: --integrate-sched needs a policy\n");
                return HY_EXIT_USAGE;
            }
            o.integrate_sched = v;
            i++;
        } else if (!strcmp(a, "--integrate-pus")) {
            if (!hy_cli_parse_int("--integrate-pus", v, 1, 32, &n)) return HY_EXIT_USAGE;
            o.integrate_pus = (int32_t)n;
            i++;
        } else if (!strcmp(a, "--integrate-devices")) {
            if (!v || !*v) {
                fprintf(stderr, "hyphys view: --integrate-devices needs a list (cuda:0)\n");
                return HY_EXIT_USAGE;
            }
            o.integrate_devices = v;
            i++;
        } else if (!strcmp(a, "--paused")) {
            o.paused = 1;
        } else if (!strcmp(a, "--contacts")) {
            o.contacts = 1;
        } else if (!strcmp(a, "--realtime")) {
            o.realtime = 1;
        } else if (!strcmp(a, "--fast")) {
            o.realtime = 0; /* the default; accepted from the days real time was */
        } else if (!strcmp(a, "--no-hud")) {
            o.hud = 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "hyphys view: unknown option '%s' (see hyphys view --help)\n", a);
            return HY_EXIT_USAGE;
        } else if (!o.scene_path) {
            o.scene_path = a;
        } else {
            fprintf(stderr, "hyphys view: one scene at a time, got '%s' and '%s'\n", o.scene_path, a);
            return HY_EXIT_USAGE;
        }
    }
    if (!o.scene_path) {
        fprintf(stderr, "hyphys view: no scene given (usage: hyphys view SCENE [options])\n");
        return HY_EXIT_USAGE;
    }
    o.scene_path = hy_cli_find_scene("view", o.scene_path); /* "nbody" finds scenes/nbody.json, as in `run` */
    if (!o.scene_path) return HY_EXIT_USAGE;
    if (o.screenshot && !frames_given) o.frames = 0;
    /* a picture that could not be saved is known now, not after the steps */
    if (o.screenshot && !hy_cli_can_write(o.screenshot)) {
        fprintf(stderr, "hyphys view: --screenshot: cannot write '%s': %s\n", o.screenshot, strerror(errno));
        return HY_EXIT_USAGE;
    }
    /* the profile is named by thread count: the world's default is one per core */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    static char profile[4096];
    int rc = hy_cli_sched_def(&so, "view", o.threads > 0 ? (int)o.threads : (int)(cores > 0 ? cores : 1), 0,
                              &o.sched, profile, sizeof profile);
    if (rc) return rc;
    return hy_viewer_run(&o);
}

const hy_command hy_cmd_view = {"view", "open a scene in an interactive window (GLFW + OpenGL 3.3)", view_main, help};

#else
/* ISO C wants at least one declaration in a translation unit; this one
 * defines no symbol, so hy_cmd_view stays the weak NULL of cli/main.c. */
typedef int hy_cmd_view_not_built;
#endif /* HY_HAVE_VIEWER */
