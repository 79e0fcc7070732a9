/*
 * wl_reaper reap N [subreaper]: forks N children that each allocate 5151
 * bytes and exit, then reaps with wait() until ECHILD and prints "pid P
 * reaped R" (P its getpid(), R every pid wait() gave it); subreaper:
 * it becomes a child subreaper first.
 * wl_reaper spin N: allocates and frees N blocks of 4243 bytes, prints
 * "allocated N" (flushed), then allocates on until it is killed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 5, reaped = 0;
	pid_t p;

	if (argc > 1 && !strcmp(argv[1], "spin")) {
		for (int i = 0; i < n; i++)
			free(malloc(4243));
		printf("allocated %d\n", n);
		fflush(stdout);
		for (;;)
			free(malloc(4244));
	}
	if (argc > 3 && !strcmp(argv[3], "subreaper") &&
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		perror("prctl");
		return 3;
	}
	for (int i = 0; i < n; i++) {
		p = fork();
		if (p < 0)
			return 1;
		if (p == 0) {
			free(malloc(5151));
			exit(0);
		}
	}
	while ((p = wait(NULL)) > 0 || errno == EINTR)
		if (p > 0)
			reaped++;
	if (errno != ECHILD)
		return 1;
	printf("pid %d reaped %d\n", (int)getpid(), reaped);
	return 0;
}
