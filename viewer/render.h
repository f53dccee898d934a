/* Drawing the scene with OpenGL 3.3 core: lit meshes, a ground grid and a
 * background. Needs a current context; every call on the render thread. */
#ifndef HY_VIEWER_RENDER_H
#define HY_VIEWER_RENDER_H

#include <stddef.h>

#include "viewer/camera.h"
#include "viewer/sim.h"

typedef struct hy_viewer_render hy_viewer_render;

/* Build buffers for a topology. NULL on failure with a message in err. */
hy_viewer_render* hy_viewer_render_create(const hy_viewer_topology* topo, char* err, size_t err_size);
void hy_viewer_render_destroy(hy_viewer_render* r);
/* New positions (3 * vertex_count floats): upload them and recompute the
 * per-vertex normals from them. */
void hy_viewer_render_update(hy_viewer_render* r, const float* positions);
/* Ground grid in the plane y = `height`, covering about `extent` metres
 * around (cx, cz). */
void hy_viewer_render_set_ground(hy_viewer_render* r, float cx, float cz, float height, float extent);
/* Draw into the bound framebuffer of size w x h (pixels). */
/* Contact points to draw (3 floats each) when the draw call asks for them. */
void hy_viewer_render_set_contacts(hy_viewer_render* r, const float* points, int32_t count);
void hy_viewer_render_draw(hy_viewer_render* r, const hy_viewer_camera* cam, int w, int h, int wireframe,
                           int contacts);
/* Colour of object i (sRGB, 0..255): one fixed, saturated palette so every
 * object reads apart from the grey ground and background. */
void hy_viewer_object_color(int i, unsigned char rgb[3]);

/* Compile and link a vertex + fragment shader pair; 0 with a message in err. */
unsigned hy_viewer_program(const char* vs, const char* fs, char* err, size_t err_size);

#endif
