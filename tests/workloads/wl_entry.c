/*
 * wl_entry: every allocation entry point once, with counts the test knows.
 * It writes with write(2), never stdio, so libc makes no allocation of its
 * own and the trace holds exactly the calls below:
 *   allocations 13 (malloc 1, calloc 1, realloc(NULL) 1, reallocarray(NULL) 1,
 *   posix_memalign 1, aligned_alloc 1, memalign 1, valloc 1, pvalloc 1,
 *   leak_here 1, keep 1, and the two grown blocks' first allocations)
 * See tests/check_preload.c for the exact expectations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) void *leak_here(size_t n)
{
	void *p = malloc(n);

	memset(p, 0xab, n);
	return p;
}

/* volatile: the compiler must not see the failures coming. */
static volatile size_t huge = SIZE_MAX / 2, all = SIZE_MAX;
/* volatile too: GCC turns realloc(NULL, n) into malloc(n) otherwise. */
static void *volatile null_ptr;

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(99);
}

int main(void)
{
	void *p, *q;
	int rc;

	p = malloc(10);
	free(p);
	p = calloc(4, 25);
	free(p);
	p = realloc(null_ptr, 30);       /* alloc, fn realloc */
	p = realloc(p, 20);              /* shrinks in place: resize */
	q = malloc(64);                  /* a neighbour, so the next grow moves */
	p = realloc(p, 1 << 20);         /* grows into mmap: remap */
	p = realloc(p, 0);               /* frees: free, fn realloc */
	free(q);
	p = reallocarray(null_ptr, 8, 8); /* alloc, fn reallocarray */
	p = reallocarray(p, 4, 8);       /* resize */
	free(p);
	rc = posix_memalign(&p, 64, 200);
	if (rc)
		return 2;
	free(p);
	free(aligned_alloc(128, 256));
	free(memalign(32, 48));
	free(valloc(100));
	free(pvalloc(100));
	p = malloc(40);
	if (malloc_usable_size(p) < 40)
		return 3;
	free(p);
	/* Failures: too big for any allocator, and an overflowing product. */
	if (malloc(huge) != NULL || errno != ENOMEM)
		return 4;
	errno = 0;
	if (reallocarray(null_ptr, all, 2) != NULL || errno != ENOMEM)
		return 5;
	leak_here(7000);
	say("entry points done\n");
	return 0;
}
