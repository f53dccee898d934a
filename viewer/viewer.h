/* The interactive viewer behind `hyphys view`. Only this command opens a
 * window; everything else in hyphys runs without a display. */
#ifndef HY_VIEWER_VIEWER_H
#define HY_VIEWER_VIEWER_H

#include <stdint.h>

#include "hyphys/hyphys.h"

typedef struct hy_viewer_options {
    const char* scene_path;
    int32_t threads;        /* > 0 overrides the scene's worker count */
    int64_t frames;         /* stop stepping after this many steps; < 0 = never */
    const char* screenshot; /* with frames: save a PNG after them and exit */
    int width, height;      /* window size, pixels */
    int realtime;           /* 1 = simulated time follows the wall clock (--realtime); 0 = as fast as it can */
    int hud;                /* 1 = draw the HUD */
    int paused;             /* start paused */
    int contacts;           /* start with the contact points shown (key c) */
    int camera_set;         /* 1 = use `camera` instead of the default view angle */
    float camera[3];        /* yaw and pitch in degrees, zoom factor (> 1 closer; 0 = framed) */
    hy_sched_def sched;     /* scheduling of the collision jobs (hy_sched_def_default() if unset) */
    const char* integrate_sched; /* integrate phase's runtime policy; NULL: lp */
    int32_t integrate_pus;       /* integration PUs; 0: the world's default (hy_world_set_integrate_sched) */
    const char* integrate_devices; /* GPUs as integration PUs too ("cuda:0"); NULL: none */
} hy_viewer_options;

/* Open the window and run until it closes (or the screenshot is saved).
 * Returns the process exit code: 0 ok, 1 runtime failure (no display, no
 * OpenGL 3.3, a failed step in screenshot mode), 2 bad input (the scene). */
int hy_viewer_run(const hy_viewer_options* options);

#endif
