/*
 * wl_rawfork: children of _Fork(), the fork that runs no fork handlers.
 * One child allocates while its parent does, then execs itself ("exec"
 * argument); another is forked from a signal handler, allocates when the
 * handler has returned and leaves with exit(), destructors and all.
 * Sizes mark who allocated: parent 2222 (x1, leaked) and 5555 (x2000),
 * first child 3333 (x2000), exec'd child 4444 (x4, leaked), second child
 * 6666 (x3).  Last, 50 children are forked while a thread allocates (so
 * some inherit the tracer's lock held by a thread they do not have), and
 * each leaves with exit(): one that hangs there is killed by its alarm.
 */
#define _GNU_SOURCE /* _Fork */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t forked = -1;
static atomic_int stop;

static void on_usr1(int sig)
{
	(void)sig;
	forked = _Fork();
}

static int wait_ok(pid_t pid)
{
	int status;

	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static void churn(int n, size_t size)
{
	for (int i = 0; i < n; i++) {
		void *volatile p = malloc(size);

		free(p);
	}
}

static void *allocating(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		churn(100, 7777);
	return NULL;
}

int main(int argc, char **argv)
{
	void *volatile keep;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "exec")) {
		for (int i = 0; i < 4; i++)
			memset(malloc(4444), 4, 4444);
		return 0;
	}
	keep = malloc(2222);
	pid = _Fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		churn(2000, 3333);
		execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
		_exit(127);
	}
	churn(2000, 5555);
	if (!wait_ok(pid))
		return 2;
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	if (forked < 0)
		return 3;
	if (forked == 0) {
		churn(3, 6666);
		exit(0);
	}
	if (!wait_ok(forked))
		return 4;
	{
		pthread_t thread;

		if (pthread_create(&thread, NULL, allocating, NULL))
			return 6;
		for (int i = 0; i < 50; i++) {
			pid = _Fork();
			if (pid < 0)
				return 7;
			if (pid == 0) {
				alarm(10);
				exit(0);
			}
			if (!wait_ok(pid))
				return 8;
		}
		atomic_store(&stop, 1);
		pthread_join(thread, NULL);
	}
	(void)keep;
	if (write(1, "rawfork done\n", 13) != 13)
		return 5;
	return 0;
}
