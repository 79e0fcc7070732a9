/*
 * wl_gate: 1000 allocations of 3131 bytes, "ready" on stdout, then it
 * waits for stdin to end (a test kills the collector meanwhile), then
 * 100,000 malloc(3232)+free pairs, "done 100000" and exit status 7:
 * whatever happened to its collector, the program runs to this end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	static void *keep[1000];
	char buf[64];
	long n = 0;

	for (int i = 0; i < 1000; i++) {
		keep[i] = malloc(3131);
		if (!keep[i])
			return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	for (int i = 0; i < 100000; i++) {
		char *p = malloc(3232);

		if (!p)
			return 1;
		p[0] = 1;
		free(p);
		n++;
	}
	for (int i = 0; i < 1000; i++)
		free(keep[i]);
	printf("done %ld\n", n);
	return 7;
}
