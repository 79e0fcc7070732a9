/*
 * wl_notsc: threads that allocate, then forbid RDTSC for themselves
 * (prctl(PR_SET_TSC, PR_TSC_SIGSEGV): RDTSC is then SIGSEGV in that
 * thread), then go on allocating and freeing.  One thread forbids it
 * through prctl(), the other through syscall(SYS_prctl, ...).  Run bare,
 * it exits 0 wherever the kernel has the prctl; traced, it must too.
 * With argv[1] "fork", each thread then forks a child that allocates
 * and exits 0 (its thread forbids RDTSC too: the setting is inherited),
 * and waits for it.  Prints "notsc: N allocations" (N = all of the
 * parent's) on success; exits 3 where the kernel refuses the prctl, 4
 * when a child did not exit 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BEFORE 100
#define AFTER 2000

static int forking;

static void *work(void *arg)
{
	int how = 0;

	for (int i = 0; i < BEFORE; i++)
		free(malloc(48));
	if (arg ? syscall(SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0
		: prctl(PR_SET_TSC, PR_TSC_SIGSEGV) != 0)
		return (void *)1;
	if (prctl(PR_GET_TSC, &how) != 0 || how != PR_TSC_SIGSEGV)
		return (void *)1;
	for (int i = 0; i < AFTER; i++)
		free(malloc(64 + (size_t)i % 512));
	if (forking) {
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			free(malloc(32));
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return (void *)2;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	void *rc[2];

	forking = argc > 1 && !strcmp(argv[1], "fork");

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, i ? (void *)1 : NULL))
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &rc[i]);
	if (rc[0] == (void *)2 || rc[1] == (void *)2)
		return 4;
	if (rc[0] || rc[1])
		return 3;
	printf("notsc: %d allocations\n", 2 * (BEFORE + AFTER));
	return 0;
}
