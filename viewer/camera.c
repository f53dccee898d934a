/* Orbit camera: spherical coordinates about a target point. */
#include "viewer/camera.h"

#include <math.h>
#include <string.h>

#define PI_F 3.14159265358979f

static void eye_dir(const hy_viewer_camera* c, float d[3]) {
    /* unit vector from the target towards the eye; y is up */
    d[0] = cosf(c->pitch) * sinf(c->yaw);
    d[1] = sinf(c->pitch);
    d[2] = cosf(c->pitch) * cosf(c->yaw);
}

static void cross(const float a[3], const float b[3], float o[3]) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static void normalize(float v[3]) {
    float n = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n > 0.0f) {
        v[0] /= n;
        v[1] /= n;
        v[2] /= n;
    }
}

void hy_viewer_camera_frame(hy_viewer_camera* c, const float lo[3], const float hi[3], float aspect) {
    float r2 = 0.0f;
    for (int k = 0; k < 3; k++) {
        c->target[k] = 0.5f * (lo[k] + hi[k]);
        float h = 0.5f * (hi[k] - lo[k]);
        r2 += h * h;
    }
    float r = sqrtf(r2);
    if (!(r > 1e-6f)) r = 1.0f;
    c->radius = r;
    c->fov_y = 45.0f * PI_F / 180.0f;
    /* a three-quarter view from slightly above, the usual way to read a 3D scene */
    c->yaw = 0.6f;
    c->pitch = 0.45f;
    /* the bounding sphere must fit the narrower of the two fields of view */
    float half = 0.5f * c->fov_y;
    if (aspect < 1.0f) half = atanf(tanf(half) * aspect);
    c->distance = 1.05f * r / sinf(half);
}

void hy_viewer_camera_orbit(hy_viewer_camera* c, float dx, float dy) {
    c->yaw -= 0.008f * dx;
    c->pitch += 0.008f * dy;
    const float lim = 0.5f * PI_F - 0.01f;
    if (c->pitch > lim) c->pitch = lim;
    if (c->pitch < -lim) c->pitch = -lim;
}

void hy_viewer_camera_pan(hy_viewer_camera* c, float dx, float dy, float h) {
    float d[3], up[3] = {0, 1, 0}, right[3], camup[3];
    eye_dir(c, d);
    cross(up, d, right);
    normalize(right);
    cross(d, right, camup);
    /* a point under the cursor at the target's depth follows the mouse */
    float scale = 2.0f * c->distance * tanf(0.5f * c->fov_y) / (h > 1.0f ? h : 1.0f);
    for (int k = 0; k < 3; k++) c->target[k] += scale * (-dx * right[k] + dy * camup[k]);
}

void hy_viewer_camera_zoom(hy_viewer_camera* c, float clicks) {
    c->distance *= powf(0.88f, clicks);
    float lo = 1e-3f * c->radius, hi = 1e3f * c->radius;
    if (c->distance < lo) c->distance = lo;
    if (c->distance > hi) c->distance = hi;
}

void hy_viewer_mat4_mul(const float a[16], const float b[16], float out[16]) {
    float r[16];
    for (int col = 0; col < 4; col++)
        for (int row = 0; row < 4; row++) {
            float s = 0.0f;
            for (int k = 0; k < 4; k++) s += a[k * 4 + row] * b[col * 4 + k];
            r[col * 4 + row] = s;
        }
    memcpy(out, r, sizeof r);
}

void hy_viewer_camera_matrices(const hy_viewer_camera* c, float aspect, float view[16], float proj[16], float eye[3]) {
    float d[3], up[3] = {0, 1, 0}, s[3], u[3], e[3];
    eye_dir(c, d);
    for (int k = 0; k < 3; k++) e[k] = c->target[k] + c->distance * d[k];
    if (eye) memcpy(eye, e, sizeof e);
    /* look-at: forward f = -d */
    cross(up, d, s);
    normalize(s);
    cross(d, s, u);
    memset(view, 0, sizeof(float) * 16);
    view[0] = s[0], view[4] = s[1], view[8] = s[2];
    view[1] = u[0], view[5] = u[1], view[9] = u[2];
    view[2] = d[0], view[6] = d[1], view[10] = d[2];
    view[12] = -(s[0] * e[0] + s[1] * e[1] + s[2] * e[2]);
    view[13] = -(u[0] * e[0] + u[1] * e[1] + u[2] * e[2]);
    view[14] = -(d[0] * e[0] + d[1] * e[1] + d[2] * e[2]);
    view[15] = 1.0f;
    /* clip planes follow the zoom so close-ups and overviews both keep depth precision */
    float zn = c->distance * 0.01f, zf = c->distance + 30.0f * c->radius;
    float f = 1.0f / tanf(0.5f * c->fov_y);
    memset(proj, 0, sizeof(float) * 16);
    proj[0] = f / aspect;
    proj[5] = f;
    proj[10] = (zf + zn) / (zn - zf);
    proj[11] = -1.0f;
    proj[14] = 2.0f * zf * zn / (zn - zf);
}
