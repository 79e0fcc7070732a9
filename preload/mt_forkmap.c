/*
 * mt_forkmap: a shared anonymous mapping aligned to its size
 * (mt_forkmap.h).  It must never map anything the program could see as
 * its own: no descriptor, nothing private.
 */
#include "mt_forkmap.h"

#include <stdint.h>
#include <sys/mman.h>

void *mt_forkmap_make(size_t bytes)
{
	char *p = mmap(NULL, 2 * bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *aligned;
	size_t head_gap;

	if (p == MAP_FAILED)
		return NULL;
	aligned = (char *)(((uintptr_t)p + bytes - 1) & ~(uintptr_t)(bytes - 1));
	head_gap = (size_t)(aligned - p);
	if (head_gap)
		munmap(p, head_gap);
	if (bytes - head_gap)
		munmap(aligned + bytes, bytes - head_gap);
	return aligned;
}
