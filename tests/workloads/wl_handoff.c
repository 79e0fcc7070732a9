/*
 * wl_handoff: one thread allocates blocks of 5555 bytes and hands each to
 * another thread, which frees it; the allocator gives the freed addresses
 * back to the first thread soon after.  So a free and the allocation that
 * gets its address back are made by two threads close in time: in the
 * trace the free must come first, or the address is live twice (an
 * overlapping alloc) and the block's own free unknown.  Prints
 * "handoff N" (200,000 blocks) and exits 0.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define N 200000
#define QUEUE 64

static void *_Atomic queue[QUEUE];

static void *consume(void *arg)
{
	(void)arg;
	for (long i = 0; i < N; i++) {
		void *_Atomic *slot = &queue[i % QUEUE];
		void *p;

		while (!(p = atomic_exchange(slot, NULL)))
			;
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, consume, NULL))
		return 1;
	for (long i = 0; i < N; i++) {
		void *_Atomic *slot = &queue[i % QUEUE];
		void *p = malloc(5555);

		if (!p)
			return 1;
		while (atomic_load(slot))
			;
		atomic_store(slot, p);
	}
	pthread_join(t, NULL);
	printf("handoff %d\n", N);
	return 0;
}
