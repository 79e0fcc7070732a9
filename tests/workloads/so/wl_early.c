/*
 * wl_early: a library preloaded *before* libmtpreload.so whose constructor
 * allocates (5555 bytes, kept) before memtrace's own constructor has run:
 * the first hook must start tracing by itself.
 */
#include <stdlib.h>
#include <string.h>

void *wl_early_block;

__attribute__((constructor)) static void wl_early_start(void)
{
	wl_early_block = malloc(5555);
	memset(wl_early_block, 5, 5555);
}
