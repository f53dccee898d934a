/* The viewer: a GLFW window on the render (main) thread, the simulation on
 * a thread of its own (viewer/sim.c), mouse camera, keys, HUD, screenshots. */
#include "viewer/viewer.h"

#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stb_image_write.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sched_opts.h"
#include "sched/policy.h"
#include "viewer/camera.h"
#include "viewer/hud.h"
#include "viewer/rate.h"
#include "viewer/render.h"
#include "viewer/sim.h"

/* While the simulation is behind real time the window draws at most this
 * many frames per second, leaving the cores to the steps: with --realtime
 * frames are skipped, never steps. Input is still handled as it comes. */
#define BEHIND_DRAW_FPS 10.0

typedef struct app {
    const hy_viewer_options* opt;
    GLFWwindow* win;
    hy_viewer_sim* sim;
    const hy_viewer_topology* topo;
    hy_viewer_render* render;
    hy_viewer_hud* hud;
    const hy_viewer_frame* frame;
    hy_viewer_camera cam;
    float lo[3], hi[3]; /* scene bounds at load */
    int wireframe, help, hud_on, contacts;
    int realtime; /* the simulation chases the wall clock (--realtime, not in batch mode) */
    int drag; /* 0 none, 1 orbit, 2 pan */
    double mx, my;
    int want_screenshot, screenshot_count;
    hy_viewer_rate draws; /* drawn frames, for the draw FPS (glfwGetTime seconds) */
    int64_t draw_count;
    char scene_name[128];
    char note[768]; /* a transient line (screenshot saved, ...) */
    double note_until;
    int objects_by_kind[HY_OBJECT_MASS_SPRING + 1]; /* by hy_object_kind */
    int policy_index; /* of the last policy asked for with p, -1 = the start one */
} app;

/* The last GLFW error, for messages (GLFW reports on the calling thread:
 * here always the main thread). */
static char glfw_error[512];
static void on_glfw_error(int code, const char* text) {
    snprintf(glfw_error, sizeof glfw_error, "%s (GLFW error 0x%x)", text ? text : "unknown", (unsigned)code);
}

/* Ctrl-C (or SIGTERM) in the terminal closes the window as Esc does: the
 * simulation thread is stopped and joined, the trace written. */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

/* "cuda" with no GPU: one line, on the loaded world (sim.c knows no CLI) */
/* Said once, at the first load: a "cuda" resource or an integration GPU
 * that this machine does not have, each in one line. */
static void on_loaded(const hy_world* w, void* ctx) {
    const hy_viewer_sim_def* def = ctx;
    if (def->has_sched) hy_cli_sched_fallback("view", w);
    hy_integrate_stats is;
    if (def->integrate_devices && !hy_world_get_integrate_stats(w, &is) && is.fallback[0])
        fprintf(stderr, "hyphys view: %s\n", is.fallback);
}

/* ------------------------------------------------------------ bounds */

static void bounds_of(const float* p, int32_t n, float lo[3], float hi[3]) {
    for (int k = 0; k < 3; k++) lo[k] = 1e30f, hi[k] = -1e30f;
    for (int32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            float v = p[3 * (size_t)i + k];
            if (!isfinite(v)) continue;
            if (v < lo[k]) lo[k] = v;
            if (v > hi[k]) hi[k] = v;
        }
    for (int k = 0; k < 3; k++)
        if (lo[k] > hi[k]) lo[k] = -1.0f, hi[k] = 1.0f;
}

static void frame_camera(app* a, const float* positions) {
    int w, h;
    glfwGetFramebufferSize(a->win, &w, &h);
    bounds_of(positions, a->topo->vertex_count, a->lo, a->hi);
    hy_viewer_camera_frame(&a->cam, a->lo, a->hi, h > 0 ? (float)w / (float)h : 1.0f);
}

/* ------------------------------------------------------------ input */

static void set_note(app* a, const char* text) {
    /* a long note is cut to what the HUD holds */
    size_t n = strlen(text);
    if (n >= sizeof a->note) n = sizeof a->note - 1;
    memcpy(a->note, text, n);
    a->note[n] = '\0';
    a->note_until = glfwGetTime() + 4.0;
}

static void on_key(GLFWwindow* win, int key, int scancode, int action, int mods) {
    app* a = glfwGetWindowUserPointer(win);
    if (action == GLFW_RELEASE) return;
    if (action == GLFW_REPEAT && key != GLFW_KEY_N) return; /* only stepping repeats when held */
    switch (key) {
    case GLFW_KEY_ESCAPE: glfwSetWindowShouldClose(win, GLFW_TRUE); break;
    case GLFW_KEY_SPACE: hy_viewer_sim_set_paused(a->sim, !hy_viewer_sim_get_paused(a->sim)); break;
    case GLFW_KEY_N:
        /* one step: stop running first so the step is the only one */
        hy_viewer_sim_set_paused(a->sim, 1);
        hy_viewer_sim_request_step(a->sim);
        break;
    case GLFW_KEY_R:
        hy_viewer_sim_request_reset(a->sim);
        set_note(a, "reset: reloading the scene");
        break;
    case GLFW_KEY_W: a->wireframe = !a->wireframe; break;
    case GLFW_KEY_C: a->contacts = !a->contacts; break;
    case GLFW_KEY_P: {
        /* next policy of the registry, from the one running now */
        const hy_sched_policy_class* const* list = hy_sched_policy_list();
        int n = 0, cur = a->policy_index;
        while (list[n]) n++;
        if (cur < 0)
            for (int i = 0; i < n; i++)
                if (!strcmp(list[i]->name, a->frame->sched.policy[0] ? a->frame->sched.policy : "lp")) cur = i;
        a->policy_index = (cur + 1) % n;
        hy_viewer_sim_request_policy(a->sim, list[a->policy_index]->name);
        char note[128];
        snprintf(note, sizeof note, "policy -> %s (from the next step)", list[a->policy_index]->name);
        set_note(a, note);
        break;
    }
    case GLFW_KEY_S: a->want_screenshot = 1; break;
    case GLFW_KEY_H: a->help = !a->help; break;
    case GLFW_KEY_F: frame_camera(a, a->frame->positions); break;
    default: break;
    }
}

static void on_button(GLFWwindow* win, int button, int action, int mods) {
    app* a = glfwGetWindowUserPointer(win);
    if (action == GLFW_RELEASE) {
        a->drag = 0;
        return;
    }
    glfwGetCursorPos(win, &a->mx, &a->my);
    a->drag = button == GLFW_MOUSE_BUTTON_LEFT ? 1 : (button == GLFW_MOUSE_BUTTON_RIGHT || button == GLFW_MOUSE_BUTTON_MIDDLE) ? 2 : 0;
}

static void on_cursor(GLFWwindow* win, double x, double y) {
    app* a = glfwGetWindowUserPointer(win);
    float dx = (float)(x - a->mx), dy = (float)(y - a->my);
    a->mx = x;
    a->my = y;
    if (a->drag == 1) hy_viewer_camera_orbit(&a->cam, dx, dy);
    if (a->drag == 2) {
        int w, h;
        glfwGetWindowSize(win, &w, &h);
        hy_viewer_camera_pan(&a->cam, dx, dy, (float)h);
    }
}

static void on_scroll(GLFWwindow* win, double xoff, double yoff) {
    app* a = glfwGetWindowUserPointer(win);
    hy_viewer_camera_zoom(&a->cam, (float)yoff);
}

/* ------------------------------------------------------------ HUD */

static const unsigned char WHITE[4] = {235, 235, 240, 255};
static const unsigned char DIM[4] = {160, 165, 175, 255};
static const unsigned char WARN[4] = {255, 120, 100, 255};
static const unsigned char PANEL[4] = {0, 0, 0, 150};
static const unsigned char BAR_BACK[4] = {70, 72, 78, 200};
/* bars in a pale neutral tone: object colours stay the only saturated ones */
static const unsigned char BAR[4] = {200, 205, 215, 255};

static void draw_help(app* a, int w, int h) {
    static const char* lines[] = {
        "mouse   left drag: orbit   right/middle drag: pan   wheel: zoom",
        "space   pause / run",
        "n       one step (pauses)",
        "r       reset: reload the scene file",
        "w       wireframe over the shaded meshes",
        "c       show the last step's contacts (yellow points)",
        "p       next scheduling policy (lp, lau10, tan09, ws, ws-exp, exhaustive)",
        "s       save a screenshot PNG in the current folder",
        "f       frame the scene again",
        "h       show / hide this help",
        "Esc     quit",
    };
    int n = (int)(sizeof lines / sizeof lines[0]);
    float lh = hy_viewer_hud_line_height(a->hud) * 1.15f, tw = 0.0f;
    for (int i = 0; i < n; i++) {
        float x = hy_viewer_hud_text_width(a->hud, lines[i]);
        if (x > tw) tw = x;
    }
    float pad = lh, bw = tw + 2 * pad, bh = lh * (float)(n + 2) + pad;
    float x0 = 0.5f * ((float)w - bw), y0 = 0.5f * ((float)h - bh);
    hy_viewer_hud_rect(a->hud, x0, y0, bw, bh, PANEL);
    hy_viewer_hud_text(a->hud, x0 + pad, y0 + pad, "keys", WHITE);
    for (int i = 0; i < n; i++) hy_viewer_hud_text(a->hud, x0 + pad, y0 + pad + lh * (float)(i + 1.5f), lines[i], WHITE);
}

static void draw_hud(app* a, int w, int h) {
    const hy_viewer_frame* f = a->frame;
    const hy_viewer_topology* t = a->topo;
    /* text grows with the window: stb_easy_font glyphs are ~7 px tall */
    float scale = (float)h / 600.0f;
    if (scale < 1.0f) scale = 1.0f;
    if (scale > 3.0f) scale = 3.0f;
    hy_viewer_hud_begin(a->hud, w, h, scale);
    if (!a->hud_on) {
        if (a->help) draw_help(a, w, h);
        hy_viewer_hud_end(a->hud);
        return;
    }
    char lines[17][768];
    const unsigned char* colors[17];
    int n = 0;
    char msg[512];
    int failed = hy_viewer_sim_get_message(a->sim, msg, sizeof msg);
    int paused = hy_viewer_sim_get_paused(a->sim);
    int done = hy_viewer_sim_is_done(a->sim);
    const char* state = failed ? "stopped on an error" : done ? "stopped (frame limit)" : paused ? "paused" : "running";

#define LINE(c, ...) (snprintf(lines[n], sizeof lines[n], __VA_ARGS__), colors[n] = (c), n++)
    LINE(WHITE, "%s   %d objects (%d cloth, %d bodies, %d obstacles, %d solids)   %d vertices, %d triangles",
         a->scene_name, (int)t->object_count, a->objects_by_kind[HY_OBJECT_CLOTH], a->objects_by_kind[HY_OBJECT_BODY],
         a->objects_by_kind[HY_OBJECT_OBSTACLE],
         a->objects_by_kind[HY_OBJECT_FEM] + a->objects_by_kind[HY_OBJECT_MASS_SPRING], (int)t->vertex_count,
         (int)t->triangle_count);
    LINE(WHITE, "step %lld   t = %.3f s   %s", (long long)f->step, f->sim_time, state);
    hy_viewer_sim_rates rates;
    hy_viewer_sim_get_rates(a->sim, &rates);
    {
        /* both over the last second; the steps/s falls while a long step runs */
        char sim[96], drawn[64];
        if (!rates.stepping && rates.steps_per_s <= 0.0)
            snprintf(sim, sizeof sim, "sim %s", failed || done ? "stopped" : "paused");
        else
            snprintf(sim, sizeof sim, "sim %.1f steps/s (%.2gx real time%s)", rates.steps_per_s,
                     rates.realtime_factor, a->realtime ? ", --realtime" : "");
        if (a->draw_count < 2) snprintf(drawn, sizeof drawn, "draw - fps (off screen)");
        else snprintf(drawn, sizeof drawn, "draw %.1f fps", hy_viewer_rate_get(&a->draws, glfwGetTime(), 1.0));
        LINE(WHITE, "%s   %s   last step %.2f ms", sim, drawn, f->stats.ms_total);
    }
    if (rates.behind)
        LINE(WARN, "behind real time: %.2gx (drawing at most %.0f fps)", rates.realtime_factor, BEHIND_DRAW_FPS);
    LINE(WHITE, "contacts %lld   candidates %lld   exact tests %lld   CG iterations %d   bonds %d",
         (long long)f->stats.contacts, (long long)f->stats.candidates, (long long)f->stats.exact_tests,
         (int)f->stats.cg_iterations, (int)f->bonds);
    {
        char res[512];
        size_t k = 0;
        res[0] = '\0';
        for (int i = 0; i < f->resource_count && k < sizeof res; i++)
            k += (size_t)snprintf(res + k, sizeof res - k, "%s%s%s", i ? ", " : "", f->resources[i].name,
                                  f->resources[i].modeled ? " (modeled)" : "");
        if (f->resource_count == 0) snprintf(res, sizeof res, "cpu (%d threads)", (int)t->threads);
        LINE(WHITE, "policy %s   %s clock   collision jobs %.2f ms   scheduler %lld calls   resources: %s",
             f->sched.policy[0] ? f->sched.policy : "lp", f->sched.virtual_clock ? "virtual" : "real",
             f->sched.makespan_ms, (long long)f->sched.calls, res);
    }
    {
        /* the integrate phase: each PU's busy time and tasks, the objects
         * stolen, and the groups that ran on all threads */
        const hy_integrate_stats* is = &f->integrate;
        char pus[512];
        size_t k = 0;
        pus[0] = '\0';
        for (int q = 0; q < is->pus && q < HY_INTEGRATE_MAX_PUS && k < sizeof pus; q++)
            k += (size_t)snprintf(pus + k, sizeof pus - k, "   cpu%d %.2f ms (%d tasks)", q, is->busy_ms[q],
                                  (int)is->tasks[q]);
        /* coupled groups too large to place ran on all threads, outside the PUs */
        if (is->wide_tasks > 0 && k < sizeof pus)
            k += (size_t)snprintf(pus + k, sizeof pus - k, "   all threads %.2f ms (%d group%s)", is->wide_ms,
                                  (int)is->wide_tasks, is->wide_tasks == 1 ? "" : "s");
        LINE(WHITE, "integration %s on %d PU%s   steals %d   METIS %d%s", is->policy, (int)is->pus,
             is->pus == 1 ? "" : "s", (int)is->steals, (int)is->metis_calls, pus);
    }
    if (msg[0]) LINE(WARN, "%s", msg);
    if (a->note[0] && glfwGetTime() < a->note_until) LINE(WHITE, "%s", a->note);
#undef LINE

    float lh = hy_viewer_hud_line_height(a->hud) * 1.2f, pad = 0.6f * lh;
    float tw = 0.0f;
    for (int i = 0; i < n; i++) {
        float x = hy_viewer_hud_text_width(a->hud, lines[i]);
        if (x > tw) tw = x;
    }
    /* phase bars: the share of the last step each phase took; then resource
     * bars: each resource's busy share of the step's collision jobs. */
    const float label_w = hy_viewer_hud_text_width(a->hud, "integrate  "), bar_w = 60.0f * scale;
    float bars_w = label_w + bar_w + hy_viewer_hud_text_width(a->hud, "  000.00 ms");
    if (bars_w > tw) tw = bars_w;
    int nres = f->resource_count;
    float res_label_w = label_w;
    for (int r = 0; r < nres; r++) {
        char name[32];
        snprintf(name, sizeof name, "%.20s  ", f->resources[r].name);
        float wn = hy_viewer_hud_text_width(a->hud, name);
        if (wn > res_label_w) res_label_w = wn;
    }
    float panel_h = pad * 2 + lh * (float)(n + 1 + HY_PHASE_COUNT + (nres ? nres + 1 : 0)) + lh * 0.8f;
    hy_viewer_hud_rect(a->hud, 0, 0, tw + 2 * pad, panel_h, PANEL);
    float y = pad;
    for (int i = 0; i < n; i++, y += lh) hy_viewer_hud_text(a->hud, pad, y, lines[i], colors[i]);
    hy_viewer_hud_text(a->hud, pad, y, "phase times of the last step (bar: share of the step)", DIM);
    y += lh;
    for (int p = 0; p < HY_PHASE_COUNT; p++, y += lh) {
        double ms = f->stats.ms[p];
        double share = f->stats.ms_total > 0.0 ? ms / f->stats.ms_total : 0.0;
        if (share > 1.0) share = 1.0;
        if (!(share >= 0.0)) share = 0.0;
        char v[64];
        hy_viewer_hud_text(a->hud, pad, y, hy_phase_name((hy_phase)p), WHITE);
        float bh = 0.6f * hy_viewer_hud_line_height(a->hud), bx = pad + label_w;
        hy_viewer_hud_rect(a->hud, bx, y, bar_w, bh, BAR_BACK);
        hy_viewer_hud_rect(a->hud, bx, y, (float)share * bar_w, bh, BAR);
        snprintf(v, sizeof v, "  %.2f ms", ms);
        hy_viewer_hud_text(a->hud, bx + bar_w, y, v, WHITE);
    }
    if (nres) {
        hy_viewer_hud_text(a->hud, pad, y, "resources: busy share of the collision jobs", DIM);
        y += lh;
    }
    for (int r = 0; r < nres; r++, y += lh) {
        const hy_resource_stats* rs = &f->resources[r];
        double share = f->sched.makespan_ms > 0.0 ? rs->busy_ms / f->sched.makespan_ms : 0.0;
        if (share > 1.0) share = 1.0;
        if (!(share >= 0.0)) share = 0.0;
        char v[96], name[24];
        snprintf(name, sizeof name, "%.20s", rs->name);
        hy_viewer_hud_text(a->hud, pad, y, name, WHITE);
        float bh = 0.6f * hy_viewer_hud_line_height(a->hud), bx = pad + res_label_w;
        hy_viewer_hud_rect(a->hud, bx, y, bar_w, bh, BAR_BACK);
        hy_viewer_hud_rect(a->hud, bx, y, (float)share * bar_w, bh, BAR);
        snprintf(v, sizeof v, "  %.0f%%  %.2f ms", 100.0 * share, rs->busy_ms);
        hy_viewer_hud_text(a->hud, bx + bar_w, y, v, WHITE);
    }
    hy_viewer_hud_text(a->hud, pad, y + 0.2f * lh, "h: help", DIM);
    if (a->help) draw_help(a, w, h);
    hy_viewer_hud_end(a->hud);
}

/* ------------------------------------------------------------ drawing */

static void draw(app* a, int w, int h) {
    hy_viewer_render_draw(a->render, &a->cam, w, h, a->wireframe, a->contacts);
    draw_hud(a, w, h);
}

/* stb's PNG bytes into a file, noting a failed write (a full disk):
 * stbi_write_png itself checks neither fwrite nor fclose. */
typedef struct png_sink {
    FILE* f;
    int bad; /* errno of the first failed write, else 0 */
} png_sink;

static void png_write(void* ctx, void* data, int size) {
    png_sink* k = ctx;
    if (size > 0 && fwrite(data, 1, (size_t)size, k->f) != (size_t)size && !k->bad) k->bad = errno ? errno : EIO;
}

static int write_png(const char* path, int w, int h, const unsigned char* pixels, char* err, size_t err_size) {
    FILE* f = fopen(path, "wb");
    if (!f) {
        snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
        return 0;
    }
    png_sink k = {f, 0};
    int ok = stbi_write_png_to_func(png_write, &k, w, h, 3, pixels, 3 * w) != 0;
    int closed = fclose(f), e = errno;
    if (!ok) snprintf(err, err_size, "cannot encode the PNG for %s", path);
    else if (k.bad || closed != 0)
        snprintf(err, err_size, "writing %s failed: %s", path, strerror(k.bad ? k.bad : e));
    return ok && !k.bad && closed == 0;
}

/* Render one frame off screen at w x h and write it as a PNG. An FBO (with
 * 4x multisampling when the driver has it) rather than the window's back
 * buffer: a hidden or covered window has no defined pixels to read. */
static int save_screenshot(app* a, const char* path, int w, int h, char* err, size_t err_size) {
    GLuint fbo[2] = {0, 0}, rb[3] = {0, 0, 0};
    int ok = 0;
    unsigned char* pixels = malloc(3 * (size_t)w * (size_t)h);
    if (!pixels) {
        snprintf(err, err_size, "out of memory for a %dx%d screenshot", w, h);
        return 0;
    }
    glGenFramebuffers(2, fbo);
    glGenRenderbuffers(3, rb);
    for (int samples = 4; samples >= 0 && !ok; samples -= 4) {
        glBindFramebuffer(GL_FRAMEBUFFER, fbo[0]);
        glBindRenderbuffer(GL_RENDERBUFFER, rb[0]);
        glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples, GL_RGBA8, w, h);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb[0]);
        glBindRenderbuffer(GL_RENDERBUFFER, rb[1]);
        glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples, GL_DEPTH_COMPONENT24, w, h);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, rb[1]);
        ok = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    }
    if (ok) {
        draw(a, w, h);
        /* resolve into a single-sample buffer, then read it */
        glBindFramebuffer(GL_FRAMEBUFFER, fbo[1]);
        glBindRenderbuffer(GL_RENDERBUFFER, rb[2]);
        glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb[2]);
        ok = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
        if (ok) {
            glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo[0]);
            glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbo[1]);
            glBlitFramebuffer(0, 0, w, h, 0, 0, w, h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
            glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo[1]);
            glPixelStorei(GL_PACK_ALIGNMENT, 1);
            glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, pixels);
            ok = glGetError() == GL_NO_ERROR;
        }
    }
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteRenderbuffers(3, rb);
    glDeleteFramebuffers(2, fbo);
    if (!ok) {
        snprintf(err, err_size, "could not render off screen for the screenshot");
        free(pixels);
        return 0;
    }
    /* OpenGL rows go bottom-up, PNG rows top-down */
    stbi_flip_vertically_on_write(1);
    ok = write_png(path, w, h, pixels, err, err_size);
    free(pixels);
    return ok;
}

/* ------------------------------------------------------------ setup */

static int open_window(app* a, int visible) {
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_SAMPLES, 4);
    glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
    char title[256];
    snprintf(title, sizeof title, "hyphys view - %s", a->scene_name);
    a->win = glfwCreateWindow(a->opt->width, a->opt->height, title, NULL, NULL);
    if (!a->win) {
        /* some drivers refuse the multisampled format; try once without */
        glfwWindowHint(GLFW_SAMPLES, 0);
        a->win = glfwCreateWindow(a->opt->width, a->opt->height, title, NULL, NULL);
    }
    if (!a->win) {
        fprintf(stderr, "hyphys view: cannot create an OpenGL 3.3 core window: %s\n",
                glfw_error[0] ? glfw_error : "unknown reason");
        return 0;
    }
    glfwMakeContextCurrent(a->win);
    int version = epoxy_gl_version();
    if (version < 33) {
        fprintf(stderr, "hyphys view: OpenGL 3.3 is needed, the driver gives %d.%d (%s)\n", version / 10, version % 10,
                (const char*)glGetString(GL_RENDERER));
        return 0;
    }
    glfwSwapInterval(1);
    glfwSetWindowUserPointer(a->win, a);
    glfwSetKeyCallback(a->win, on_key);
    glfwSetMouseButtonCallback(a->win, on_button);
    glfwSetCursorPosCallback(a->win, on_cursor);
    glfwSetScrollCallback(a->win, on_scroll);
    return 1;
}

static void base_name(const char* path, char* out, size_t size) {
    const char* s = strrchr(path, '/');
    snprintf(out, size, "%s", s ? s + 1 : path);
}

int hy_viewer_run(const hy_viewer_options* opt) {
    app a;
    memset(&a, 0, sizeof a);
    a.policy_index = -1;
    a.opt = opt;
    a.hud_on = opt->hud;
    a.contacts = opt->contacts;
    base_name(opt->scene_path, a.scene_name, sizeof a.scene_name);
    int batch = opt->screenshot != NULL;
    int code = HY_EXIT_RUNTIME;

    /* a display first: it is cheap to check and the scene may be slow to load */
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) {
        fprintf(stderr,
                "hyphys view: cannot open a window: %s\n"
                "hyphys view: the viewer needs a display (set DISPLAY, or run it under xvfb-run); "
                "the other commands run without one\n",
                glfw_error[0] ? glfw_error : "GLFW failed to initialise");
        return HY_EXIT_RUNTIME;
    }

    hy_viewer_sim_def def;
    memset(&def, 0, sizeof def);
    def.scene_path = opt->scene_path;
    def.options = hy_scene_options_default();
    if (opt->threads > 0) def.options.threads = opt->threads;
    def.max_steps = opt->frames;
    def.realtime = batch ? 0 : opt->realtime;
    def.paused = batch ? 0 : opt->paused;
    def.has_sched = opt->sched.cookie != 0;
    def.sched = opt->sched;
    def.integrate_sched = opt->integrate_sched;
    def.integrate_pus = opt->integrate_pus;
    def.integrate_devices = opt->integrate_devices;
    def.loaded = on_loaded;
    def.ctx = &def;
    a.realtime = def.realtime;
    hy_status st = hy_viewer_sim_create(&def, &a.sim);
    if (st != HY_OK) {
        fprintf(stderr, "hyphys view: %s\n", hy_last_error()); /* the loader's message names the file */
        glfwTerminate();
        return st == HY_ERR_IO || st == HY_ERR_PARSE || st == HY_ERR_INVALID_ARG || st == HY_ERR_BAD_DEF
                   ? HY_EXIT_USAGE
                   : HY_EXIT_RUNTIME;
    }
    a.topo = hy_viewer_sim_get_topology(a.sim);
    for (int32_t i = 0; i < a.topo->object_count; i++) {
        int k = (int)a.topo->objects[i].kind;
        if (k >= 1 && k <= HY_OBJECT_MASS_SPRING) a.objects_by_kind[k]++;
    }

    char err[1024] = "";
    if (!open_window(&a, !batch)) goto done;
    a.render = hy_viewer_render_create(a.topo, err, sizeof err);
    if (a.render) a.hud = hy_viewer_hud_create(err, sizeof err);
    if (!a.render || !a.hud) {
        fprintf(stderr, "hyphys view: %s\n", err);
        goto done;
    }
    hy_viewer_sim_acquire(a.sim, &a.frame);
    hy_viewer_render_update(a.render, a.frame->positions);
    hy_viewer_render_set_contacts(a.render, a.frame->contacts, a.frame->contact_count);
    frame_camera(&a, a.frame->positions);
    if (opt->camera_set) {
        const float deg = 3.14159265f / 180.0f;
        a.cam.yaw = opt->camera[0] * deg;
        a.cam.pitch = opt->camera[1] * deg;
        hy_viewer_camera_orbit(&a.cam, 0.0f, 0.0f); /* clamps the pitch */
        if (opt->camera[2] > 0.0f) a.cam.distance /= opt->camera[2];
    }
    {
        float ext = fmaxf(a.hi[0] - a.lo[0], a.hi[2] - a.lo[2]);
        float size = fmaxf(ext, a.hi[1] - a.lo[1]);
        /* a little below the lowest point, so a ground obstacle does not z-fight the grid */
        hy_viewer_render_set_ground(a.render, 0.5f * (a.lo[0] + a.hi[0]), 0.5f * (a.lo[2] + a.hi[2]),
                                    a.lo[1] - 0.005f * size, 3.0f * fmaxf(ext, 0.5f * size));
    }
    if (!hy_viewer_sim_start(a.sim)) {
        fprintf(stderr, "hyphys view: cannot start the simulation thread\n");
        goto done;
    }

    if (batch) {
        /* run the steps, then one frame off screen; events keep the window alive */
        while (!hy_viewer_sim_is_done(a.sim) && !glfwWindowShouldClose(a.win)) glfwWaitEventsTimeout(0.05);
        char msg[512];
        if (hy_viewer_sim_get_message(a.sim, msg, sizeof msg)) {
            fprintf(stderr, "hyphys view: %s\n", msg);
            goto done;
        }
        hy_viewer_sim_acquire(a.sim, &a.frame);
        hy_viewer_render_update(a.render, a.frame->positions);
        hy_viewer_render_set_contacts(a.render, a.frame->contacts, a.frame->contact_count);
        int w = a.opt->width, h = a.opt->height;
        if (!save_screenshot(&a, opt->screenshot, w, h, err, sizeof err)) {
            fprintf(stderr, "hyphys view: %s\n", err);
            goto done;
        }
        /* the state hash is that of `hyphys run SCENE --frames N`: the picture is of step N */
        printf("screenshot: %s (%dx%d) after %lld steps, state hash %016llx, %d objects, colours", opt->screenshot,
               w, h, (long long)a.frame->step, (unsigned long long)a.frame->state_hash, (int)a.topo->object_count);
        int ncol = a.topo->object_count < 8 ? (int)a.topo->object_count : 8;
        for (int i = 0; i < ncol; i++) {
            unsigned char c[3];
            hy_viewer_object_color(i, c);
            printf("%s#%02x%02x%02x", i ? "," : " ", c[0], c[1], c[2]);
        }
        printf("\n");
        code = HY_EXIT_OK;
        goto done;
    }

    /* interactive loop: never waits for a step, only for events when idle */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    double t_start = glfwGetTime(), longest = 0.0, last = t_start;
    hy_viewer_rate_restart(&a.draws, t_start);
    while (!glfwWindowShouldClose(a.win) && !interrupted) {
        hy_viewer_sim_rates rates;
        hy_viewer_sim_get_rates(a.sim, &rates);
        int idle = !rates.stepping;
        if (idle) {
            glfwWaitEventsTimeout(0.1); /* a paused scene need not redraw 60 times a second */
        } else if (rates.behind && glfwGetTime() - last < 1.0 / BEHIND_DRAW_FPS) {
            /* behind real time: skip this frame, handle input until the next one is due */
            glfwWaitEventsTimeout(last + 1.0 / BEHIND_DRAW_FPS - glfwGetTime());
            continue;
        } else {
            glfwPollEvents();
        }
        if (hy_viewer_sim_acquire(a.sim, &a.frame)) {
            hy_viewer_render_update(a.render, a.frame->positions);
            hy_viewer_render_set_contacts(a.render, a.frame->contacts, a.frame->contact_count);
        }
        int w, h;
        glfwGetFramebufferSize(a.win, &w, &h);
        if (w <= 0 || h <= 0) continue; /* minimised */
        if (a.want_screenshot) {
            a.want_screenshot = 0;
            char path[512];
            char stem[128];
            snprintf(stem, sizeof stem, "%s", a.scene_name);
            char* dot = strrchr(stem, '.');
            if (dot) *dot = '\0';
            do {
                snprintf(path, sizeof path, "hyphys-%s-%06lld-%d.png", stem, (long long)a.frame->step,
                         a.screenshot_count++);
            } while (access(path, F_OK) == 0 && a.screenshot_count < 10000);
            char line[1100]; /* "screenshot failed: " + err[1024] */
            if (save_screenshot(&a, path, w, h, err, sizeof err))
                snprintf(line, sizeof line, "saved %s", path);
            else
                snprintf(line, sizeof line, "screenshot failed: %s", err);
            printf("hyphys view: %s\n", line);
            set_note(&a, line);
        }
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        draw(&a, w, h);
        glfwSwapBuffers(a.win);
        double now = glfwGetTime();
        /* the first frames compile shaders in the driver: not a steady-state figure */
        if (!idle && !rates.behind && a.draw_count >= 10 && now - last > longest) longest = now - last;
        last = now;
        hy_viewer_rate_note(&a.draws, now);
        a.draw_count++;
    }
    {
        /* one line on exit: how the two threads kept up with each other */
        double secs = glfwGetTime() - t_start;
        printf("hyphys view: %lld frames drawn in %.1f s (%.1f fps, longest %.1f ms after the first 10); "
               "at step %lld, last step %.1f ms\n",
               (long long)a.draw_count, secs, secs > 0 ? (double)a.draw_count / secs : 0.0, 1e3 * longest,
               (long long)a.frame->step, a.frame->stats.ms_total);
    }
    code = HY_EXIT_OK;

done:
    /* the window goes at once; a step under way (it may take seconds) ends
     * before the thread is joined. The simulation stops before its
     * snapshots' GL users go away. */
    if (a.win) glfwHideWindow(a.win);
    if (hy_viewer_sim_destroy(a.sim) && code == HY_EXIT_OK) code = HY_EXIT_RUNTIME;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (a.win) {
        glfwMakeContextCurrent(a.win);
        hy_viewer_hud_destroy(a.hud);
        hy_viewer_render_destroy(a.render);
        glfwDestroyWindow(a.win);
    }
    glfwTerminate();
    return code;
}
