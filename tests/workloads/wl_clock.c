/*
 * wl_clock: allocations whose times the program reads itself, for the
 * test that holds the trace's t to CLOCK_MONOTONIC
 * (test_trace_t_follows_clock_monotonic).
 *
 * In 20 rounds 3 ms apart (so every round's first event takes a new
 * anchor of the preload's clock, and the rest are extrapolated from it),
 * 8 mallocs of sizes 1000 + i, 120 us apart (the last of a round 0.84 ms
 * after its anchor, within the millisecond an anchor serves), each
 * between two clock_gettime() readings; then it prints "SIZE BEFORE
 * AFTER" for each, in nanoseconds, after the last one (printing
 * allocates).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 20
#define BURST 8

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

int main(void)
{
	static unsigned long long before[ROUNDS * BURST], after[ROUNDS * BURST];
	static void *p[ROUNDS * BURST];
	struct timespec gap = { 0, 3000000 };

	/* Past the preload's first millisecond, its calibration. */
	nanosleep(&gap, NULL);
	for (int r = 0; r < ROUNDS; r++) {
		for (int b = 0; b < BURST; b++) {
			int i = r * BURST + b;

			before[i] = now();
			p[i] = malloc(1000 + (size_t)i);
			after[i] = now();
			while (now() - after[i] < 120000)
				;
		}
		nanosleep(&gap, NULL);
	}
	for (int i = 0; i < ROUNDS * BURST; i++) {
		printf("%d %llu %llu\n", 1000 + i, before[i], after[i]);
		free(p[i]);
	}
	return 0;
}
