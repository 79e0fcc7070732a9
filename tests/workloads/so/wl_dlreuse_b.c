/*
 * wl_dlreuse_b: wl_dlreuse_a.c's plugin with a middle frame that has no
 * frame pointer, at the same offsets (see there).
 */
#define WL_DLREUSE_NO_FRAME_POINTER
#include "wl_dlreuse_a.c"
