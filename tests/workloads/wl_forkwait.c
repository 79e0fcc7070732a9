/*
 * wl_forkwait: allocates 4040 bytes, sleeps 5 ms (past the clock's first
 * calibration, a millisecond in), allocates 4141 bytes, then forks a
 * child that sleeps 5 ms, allocates 4242 bytes and exits; waits for it
 * and prints "done" (exit 1 and why, otherwise).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pause_5ms(void)
{
	struct timespec ts = { 0, 5000000 };

	nanosleep(&ts, NULL);
}

static void alloc_free(size_t n)
{
	char *volatile p = malloc(n);

	free(p);
}

int main(void)
{
	int st;
	pid_t p;

	alloc_free(4040);
	pause_5ms();
	alloc_free(4141);
	p = fork();
	if (p < 0) {
		printf("fork: %s\n", strerror(errno));
		return 1;
	}
	if (p == 0) {
		pause_5ms();
		alloc_free(4242);
		exit(0);
	}
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("the child failed\n");
		return 1;
	}
	printf("done\n");
	return 0;
}
