/*
 * wl_cancel: threads with deferred cancellation cancelled anywhere in an
 * allocation loop, and one whose cancel is pending when it calls malloc;
 * then a fork (the child allocates and exits) and one last allocation of
 * 4242 bytes.  Bare, every cancel acts at the loop's own cancellation
 * point and the program prints "done" at once; traced, a cancel must
 * never act inside the tracer.  An alarm ends a hung run (status
 * 128 + SIGALRM).  Usage: wl_cancel [ROUNDS].
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int cancelled, enabled;

static __attribute__((noinline)) void *nest(int depth, size_t size)
{
	void *p = depth ? nest(depth - 1, size) : malloc(size);

	__asm__ volatile("" ::: "memory");
	return p;
}

static void *looper(void *arg)
{
	unsigned i = (unsigned)(long)arg;

	for (;;) {
		free(nest(i % 17, 16 + i % 300));
		i++;
		pthread_testcancel();
	}
	return NULL;
}

/* Cancelled while it cannot be; then it can, and allocates first. */
static void *pending(void *arg)
{
	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (!atomic_load(&cancelled))
		;
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	atomic_store(&enabled, 1);
	for (int i = 0; i < 20; i++)
		free(nest(i, 100 + i));
	pthread_testcancel();
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40, st;
	pthread_t t;
	void *ret;
	pid_t pid;

	alarm(60);
	for (int r = 0; r < rounds; r++) {
		struct timespec ts = { 0, (r % 10) * 37000 };

		if (pthread_create(&t, NULL, looper, (void *)(long)r))
			return 1;
		nanosleep(&ts, NULL);
		pthread_cancel(t);
		if (pthread_join(t, &ret) || ret != PTHREAD_CANCELED)
			return 2;
	}
	for (int r = 0; r < 4; r++) {
		atomic_store(&cancelled, 0);
		if (pthread_create(&t, NULL, pending, NULL))
			return 3;
		pthread_cancel(t);
		atomic_store(&cancelled, 1);
		if (pthread_join(t, &ret) || ret != PTHREAD_CANCELED)
			return 4;
	}
	pid = fork();
	if (pid < 0)
		return 5;
	if (pid == 0) {
		free(nest(5, 333));
		exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 6;
	free(nest(2, 4242));
	printf("done\n");
	return 0;
}
