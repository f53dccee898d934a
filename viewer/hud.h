/* Heads-up display: rectangles and stb_easy_font text in pixel coordinates
 * (origin top-left), batched and drawn in one call over the scene. */
#ifndef HY_VIEWER_HUD_H
#define HY_VIEWER_HUD_H

#include <stddef.h>

typedef struct hy_viewer_hud hy_viewer_hud;

hy_viewer_hud* hy_viewer_hud_create(char* err, size_t err_size);
void hy_viewer_hud_destroy(hy_viewer_hud* hud);
/* Start a batch for a framebuffer of w x h pixels; `scale` enlarges text. */
void hy_viewer_hud_begin(hy_viewer_hud* hud, int w, int h, float scale);
void hy_viewer_hud_rect(hy_viewer_hud* hud, float x, float y, float w, float h, const unsigned char rgba[4]);
/* Text at (x, y) (top-left of the first line); '\n' starts a new line.
 * Returns the width in pixels. */
float hy_viewer_hud_text(hy_viewer_hud* hud, float x, float y, const char* text, const unsigned char rgba[4]);
/* Size of a text in pixels at the batch's scale. */
float hy_viewer_hud_text_width(hy_viewer_hud* hud, const char* text);
float hy_viewer_hud_line_height(const hy_viewer_hud* hud);
/* Draw the batch (alpha-blended, no depth test). */
void hy_viewer_hud_end(hy_viewer_hud* hud);

#endif
