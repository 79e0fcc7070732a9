/*
 * wl_jitter: a program whose runs differ by a few bytes, as real ones do
 * (a path, a pid, a time in a string): one block of 64 KiB plus 1 to 64
 * bytes taken from the clock, kept to the end (so both the peak and the
 * bytes live at exit vary), and 100 blocks of 100 bytes freed at once.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(void)
{
	struct timespec ts;
	size_t jitter;
	char *kept;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	jitter = 1 + (size_t)ts.tv_nsec % 64;
	kept = malloc(65536 + jitter);
	if (!kept)
		return 1;
	memset(kept, 1, 65536 + jitter);
	for (int i = 0; i < 100; i++) {
		char *p = malloc(100);

		if (!p)
			return 1;
		memset(p, i, 100);
		free(p);
	}
	return kept[jitter] == 1 ? 0 : 1;
}
