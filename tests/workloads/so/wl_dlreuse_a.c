/*
 * wl_dlreuse_a: one of two plugins of the same size and layout whose
 * middle frame is unwound by different rules at the same offset.  Here
 * wl_dlreuse_mid keeps a frame pointer (CFA = rbp + 16 at its call);
 * wl_dlreuse_b.c's has none (CFA = rsp + 48).  A walker that kept this
 * one's rule for the other's return address would take the caller's
 * frame for its own and skip a frame.  Written in assembly so that the
 * call's return address is at the same offset in both.
 */
#include <stdlib.h>

/* The leaf, which allocates. */
__attribute__((noinline, used, visibility("hidden"))) void *wl_dlreuse_leaf(size_t n)
{
	return malloc(n);
}

void *wl_dlreuse_mid(size_t n) __attribute__((visibility("hidden")));

#ifndef WL_DLREUSE_NO_FRAME_POINTER
/* push, mov and sub: 8 bytes before the call; 5 after it (3 unreached). */
__asm__(".text\n"
	".type wl_dlreuse_mid, @function\n"
	"wl_dlreuse_mid:\n"
	".cfi_startproc\n"
	"\tpushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"\tmovq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"\tsubq $16, %rsp\n"
	"\tcall wl_dlreuse_leaf\n"
	"\tleave\n"
	".cfi_def_cfa %rsp, 8\n"
	"\tret\n"
	"\tnop\n\tnop\n\tnop\n"
	".cfi_endproc\n"
	".size wl_dlreuse_mid, .-wl_dlreuse_mid\n");
#else
/* sub and four nops: 8 bytes before the call; add and ret after it. */
__asm__(".text\n"
	".type wl_dlreuse_mid, @function\n"
	"wl_dlreuse_mid:\n"
	".cfi_startproc\n"
	"\tsubq $40, %rsp\n"
	".cfi_def_cfa_offset 48\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tcall wl_dlreuse_leaf\n"
	"\taddq $40, %rsp\n"
	".cfi_def_cfa_offset 8\n"
	"\tret\n"
	".cfi_endproc\n"
	".size wl_dlreuse_mid, .-wl_dlreuse_mid\n");
#endif

/* The plugin's entry point: three frames of the plugin's above malloc. */
__attribute__((noinline)) void *wl_dlreuse_alloc(size_t n)
{
	return wl_dlreuse_mid(n);
}
