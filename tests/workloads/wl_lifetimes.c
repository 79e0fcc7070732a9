/*
 * wl_lifetimes: allocations whose every figure of a block's life is
 * known, for the DHAT export's tests.  Each site is one malloc (or
 * realloc) in a function of its own, called from one place:
 *
 *   alloc_before   4 x 50,000 B, freed before the peak
 *   alloc_shrinks  1 x 5,000 B freed, then 3 x 100 B live to the end:
 *                  its most bytes (5,000) are in 1 block
 *   alloc_grown    100 B, then regrow reallocs it to 1,000 B
 *   alloc_held     8 x 1,000 B, live across the peak for 50 ms
 *   alloc_peak     3 x 100,000 B: the last one makes the global peak;
 *                  live for 50 ms
 *   alloc_leaked   2 x 10 B, never freed, 20 ms before the end
 *
 * The blocks of alloc_held, alloc_peak and regrow are freed after the
 * 50 ms pause.  Exits 0, or 1 when an allocation fails.
 */
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static void pause_ms(long ms)
{
	const struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static NOINLINE void *alloc_before(size_t n) { return malloc(n); }
static NOINLINE void *alloc_shrinks(size_t n) { return malloc(n); }
static NOINLINE void *alloc_grown(size_t n) { return malloc(n); }
static NOINLINE void *regrow(void *p, size_t n) { return realloc(p, n); }
static NOINLINE void *alloc_held(size_t n) { return malloc(n); }
static NOINLINE void *alloc_peak(size_t n) { return malloc(n); }
static NOINLINE void *alloc_leaked(size_t n) { return malloc(n); }

/* The blocks live to the end, where the program can still reach them. */
void *wl_shrinks[3], *wl_leaked[2];

int main(void)
{
	void *before[4], *held[8], *peak[3], *grown;

	for (int i = 0; i < 4; i++)
		if (!(before[i] = alloc_before(50000)))
			return 1;
	for (int i = 0; i < 4; i++)
		free(before[i]);
	for (int i = 0; i < 4; i++) {
		void *p = alloc_shrinks(i ? 100 : 5000);

		if (!p)
			return 1;
		if (i)
			wl_shrinks[i - 1] = p;
		else
			free(p);
	}
	if (!(grown = alloc_grown(100)) || !(grown = regrow(grown, 1000)))
		return 1;
	for (int i = 0; i < 8; i++)
		if (!(held[i] = alloc_held(1000)))
			return 1;
	for (int i = 0; i < 3; i++)
		if (!(peak[i] = alloc_peak(100000)))
			return 1;
	pause_ms(50);
	for (int i = 0; i < 3; i++)
		free(peak[i]);
	for (int i = 0; i < 8; i++)
		free(held[i]);
	free(grown);
	for (int i = 0; i < 2; i++)
		if (!(wl_leaked[i] = alloc_leaked(10)))
			return 1;
	pause_ms(20);
	return 0;
}
