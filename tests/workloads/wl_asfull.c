/*
 * wl_asfull: a program that fills its address space, then allocates from
 * 600 call sites, each a new frame for a tracer: it lowers RLIMIT_AS to
 * what it has mapped and a little more, maps pages until the kernel
 * refuses one, and makes its 600 small allocations out of the heap room
 * it kept.  A tracer's tables can no longer grow; the program must run on
 * as it does bare.  Prints "asfull: N" (the allocations that succeeded,
 * 600 bare) with write(2), since stdio could allocate, and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define SITES 600

static void *volatile held[SITES];
static int got;

/* One call site each: a distinct return address in many(), sites 0x000
 * to 0x257 (wl_manyfns.c's way of spelling many). */
#define CALL(i) (got += (held[i] = malloc(16 + (i) % 5)) != NULL)
#define S(x, y, z) CALL(0x##x##y##z);
#define S16(x, y) S(x, y, 0) S(x, y, 1) S(x, y, 2) S(x, y, 3) S(x, y, 4) S(x, y, 5) \
	S(x, y, 6) S(x, y, 7) S(x, y, 8) S(x, y, 9) S(x, y, a) S(x, y, b) S(x, y, c) \
	S(x, y, d) S(x, y, e) S(x, y, f)
#define S256(x) S16(x, 0) S16(x, 1) S16(x, 2) S16(x, 3) S16(x, 4) S16(x, 5) S16(x, 6) \
	S16(x, 7) S16(x, 8) S16(x, 9) S16(x, a) S16(x, b) S16(x, c) S16(x, d) S16(x, e) \
	S16(x, f)

__attribute__((noinline)) static void many(void)
{
	S256(0) S256(1)
	S16(2, 0) S16(2, 1) S16(2, 2) S16(2, 3) S16(2, 4)
	S(2, 5, 0) S(2, 5, 1) S(2, 5, 2) S(2, 5, 3) S(2, 5, 4) S(2, 5, 5) S(2, 5, 6) S(2, 5, 7)
}

int main(void)
{
	long pages = 0, resident = 0;
	struct rlimit lim;
	char msg[64];
	FILE *f = fopen("/proc/self/statm", "r");
	int n;

	if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
		return 2;
	fclose(f);
	/* Heap room for the 600 blocks, kept in the heap once freed. */
	free(malloc(100000));
	lim.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256 << 10);
	lim.rlim_max = RLIM_INFINITY;
	if (setrlimit(RLIMIT_AS, &lim) != 0)
		return 2;
	while (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
	       MAP_FAILED)
		;
	many();
	n = snprintf(msg, sizeof(msg), "asfull: %d\n", got);
	if (write(1, msg, (size_t)n) != n)
		return 3;
	return 0;
}
