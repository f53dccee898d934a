/* Orbit camera of the viewer and the little matrix math it needs.
 * Matrices are column-major float[16], as OpenGL takes them. */
#ifndef HY_VIEWER_CAMERA_H
#define HY_VIEWER_CAMERA_H

typedef struct hy_viewer_camera {
    float target[3];  /* point orbited about, m */
    float distance;   /* from target to eye, m */
    float yaw, pitch; /* radians; pitch kept inside (-pi/2, pi/2) */
    float fov_y;      /* vertical field of view, radians */
    float radius;     /* radius of the framed scene, m: sets the clip planes */
} hy_viewer_camera;

/* Frame a box: look at its centre from a distance that shows all of it. */
void hy_viewer_camera_frame(hy_viewer_camera* cam, const float lo[3], const float hi[3], float aspect);
/* Mouse motion in pixels (viewport height h): orbit, pan; wheel clicks: zoom. */
void hy_viewer_camera_orbit(hy_viewer_camera* cam, float dx, float dy);
void hy_viewer_camera_pan(hy_viewer_camera* cam, float dx, float dy, float h);
void hy_viewer_camera_zoom(hy_viewer_camera* cam, float clicks);
/* View and projection matrices; eye position out (may be NULL). */
void hy_viewer_camera_matrices(const hy_viewer_camera* cam, float aspect, float view[16], float proj[16],
                               float eye[3]);
void hy_viewer_mat4_mul(const float a[16], const float b[16], float out[16]);

#endif
