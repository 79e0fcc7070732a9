/*
 * wl_forkwait: allocates 4040 bytes, then 4,096 blocks of 24 bytes that
 * it keeps (the readings of the clock before its calibration is due),
 * sleeps 5 ms (past the calibration, a millisecond on), allocates 4141
 * bytes, then forks a child that does the same with 4242 bytes and
 * exits; waits for it and prints "done" (exit 1 and why, otherwise).
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

static void *kept[2][4096];

/* 4,096 events, each a reading of the tracer's clock. */
static void keep_many(int who)
{
	for (int i = 0; i < 4096; i++)
		kept[who][i] = malloc(24);
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
	keep_many(0);
	pause_5ms();
	alloc_free(4141);
	p = fork();
	if (p < 0) {
		printf("fork: %s\n", strerror(errno));
		return 1;
	}
	if (p == 0) {
		keep_many(1);
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
