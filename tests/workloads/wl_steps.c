/*
 * wl_steps: a heap that grows in steps, for `memtrace top` to watch
 * live: it allocates STEP bytes (1 MiB by default), touches them, sleeps
 * 100 ms, STEPS times (30 by default: about 3 s), then exits with them
 * all live.  argv[1] and argv[2], when given, are STEPS and STEP.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_STEPS 1000

static void *grow(size_t step)
{
	void *p = malloc(step);

	if (p)
		memset(p, 1, step);
	return p;
}

int main(int argc, char **argv)
{
	static void *blocks[MAX_STEPS];
	long steps = argc > 1 ? atol(argv[1]) : 30;
	size_t step = argc > 2 ? (size_t)atol(argv[2]) : (size_t)1 << 20;
	const struct timespec pause = { 0, 100 * 1000 * 1000 };

	if (steps < 0 || steps > MAX_STEPS)
		return 2;
	for (long i = 0; i < steps; i++) {
		blocks[i] = grow(step);
		if (!blocks[i])
			return 1;
		nanosleep(&pause, NULL);
	}
	return 0;
}
