/*
 * mt_pool_threads: memtrace.h from several threads at once.  Each of
 * THREADS threads names an allocator of its own ("t0", "t1", ...) and one
 * they share ("shared"), all at the same moment, then reports ROUNDS
 * blocks of each, alloc and free, from a slab of its own.  It prints
 * nothing but a failure: a test reads the figures from the trace.
 *
 * Built like mt_pool, with -I include alone.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <memtrace.h>

#define THREADS 4
#define ROUNDS 2000
#define SLOTS 64

static pthread_barrier_t start;
static unsigned shared_ids[THREADS];

static void *worker(void *arg)
{
	long i = (long)arg;
	/* The thread's own slab: its blocks never overlap another's. */
	static char slab[THREADS][SLOTS * 32];
	memtrace_allocator_t own, shared;
	char name[8];

	snprintf(name, sizeof(name), "t%ld", i);
	pthread_barrier_wait(&start);
	own = memtrace_allocator(name);
	shared = memtrace_allocator("shared");
	shared_ids[i] = shared.id;
	for (int r = 0; r < ROUNDS; r++) {
		char *b = slab[i] + (r % SLOTS) * 32;

		memtrace_alloc(own, b, 16);
		memtrace_alloc(shared, b + 16, 8);
		memtrace_free(shared, b + 16);
		memtrace_free(own, b);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	if (pthread_barrier_init(&start, NULL, THREADS))
		return 1;
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i)) {
			perror("mt_pool_threads: pthread_create");
			return 1;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 1; i < THREADS; i++)
		if (shared_ids[i] != shared_ids[0]) {
			fprintf(stderr, "mt_pool_threads: 'shared' gave ids %u and %u\n",
				shared_ids[0], shared_ids[i]);
			return 1;
		}
	return 0;
}
