/*
 * wl_fullring: 4 threads each make 12,500 malloc(8181)+free pairs,
 * 50,000 allocations in all, as fast as they can: with a ring of 64
 * slots they wait for the collector over and over.  Prints "done 50000".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define ROUNDS 12500

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		char *p = malloc(8181);

		p[0] = 1;
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("done %d\n", THREADS * ROUNDS);
	return 0;
}
