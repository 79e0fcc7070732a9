/*
 * mt_pingpong: what passing a cache line between two cores costs here,
 * printed by the bench scripts beside the load average (never part of
 * make check).  Two threads, pinned to the first two CPUs of the affinity
 * mask, take turns writing one counter on its own line, a million round
 * trips; it prints the median of five runs' ns per round trip.  On the
 * guests of docs/performance.md it ranges from about 80 to 1,900 ns
 * within an hour, and every figure with two busy threads moves with it.
 *
 *   mt-pingpong        prints "N" (ns), or "-" on one CPU
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRIPS 1000000L
#define RUNS 5

static _Alignas(64) atomic_long turn;
static int cpus[2];

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *other(void *arg)
{
	(void)arg;
	pin(cpus[1]);
	for (long i = 0; i < TRIPS; i++) {
		while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 1)
			;
		atomic_store_explicit(&turn, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

static double run(void)
{
	struct timespec a, b;
	pthread_t t;

	atomic_store(&turn, 0);
	if (pthread_create(&t, NULL, other, NULL))
		exit(1);
	pin(cpus[0]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < TRIPS; i++) {
		while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i)
			;
		atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
	}
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
	       (double)TRIPS;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

int main(void)
{
	cpu_set_t set;
	double ns[RUNS];
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	for (int i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	if (n < 2) {
		puts("-");
		return 0;
	}
	for (int r = 0; r < RUNS; r++)
		ns[r] = run();
	qsort(ns, RUNS, sizeof(ns[0]), cmp);
	printf("%.0f\n", ns[RUNS / 2]);
	return 0;
}
