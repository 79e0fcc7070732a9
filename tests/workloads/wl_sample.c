/*
 * wl_sample: a known allocation stream for the sampling tests, the same
 * in every run: SCALE x 20,000 steps over a window of 1,000 live blocks,
 * each step freeing a slot's block and allocating a new one of 64 bytes
 * to 128 KiB (log-uniform, from a fixed generator), every fourth grown or
 * shrunk by realloc.  Sizes start at 64 bytes: with MEMTRACE_SAMPLE=1 every
 * block is sampled but with probability e^-64.  It writes with write(2),
 * never stdio, so libc allocates nothing of its own, and prints "done".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW 1000

static uint64_t state = 0x243f6a8885a308d3ull;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* 64 B to 128 KiB, log-uniform. */
static size_t pick_size(void)
{
	unsigned shift = 6 + (unsigned)(next() % 11);

	return ((size_t)1 << shift) + (size_t)(next() % ((size_t)1 << shift));
}

int main(int argc, char **argv)
{
	static void *slot[WINDOW];
	long scale = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 0; i < scale * 20000; i++) {
		size_t k = (size_t)(next() % WINDOW);
		void *p;

		free(slot[k]);
		p = malloc(pick_size());
		if (!p)
			return 1;
		if (i % 4 == 0) {
			void *q = realloc(p, pick_size());

			if (!q)
				return 1;
			p = q;
		}
		memset(p, 1, 64);
		slot[k] = p;
	}
	for (size_t k = 0; k < WINDOW / 2; k++)
		free(slot[k]);
	if (write(1, "done\n", 5) != 5)
		return 1;
	return 0;
}
