/*
 * wl_notsc: threads that allocate, then forbid RDTSC for themselves
 * (prctl(PR_SET_TSC, PR_TSC_SIGSEGV): RDTSC is then SIGSEGV in that
 * thread), then go on allocating and freeing.  One thread forbids it
 * through prctl(), the other through syscall(SYS_prctl, ...).  Run bare,
 * it exits 0 wherever the kernel has the prctl; traced, it must too.
 * Prints "notsc: N allocations" (N = all of them) on success; exits 3
 * where the kernel refuses the prctl.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BEFORE 100
#define AFTER 2000

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
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	void *rc[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, i ? (void *)1 : NULL))
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &rc[i]);
	if (rc[0] || rc[1])
		return 3;
	printf("notsc: %d allocations\n", 2 * (BEFORE + AFTER));
	return 0;
}
