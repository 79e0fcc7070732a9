/*
 * wl_threads: 8 threads allocating, reallocating and freeing at once.
 * Sizes 1000..1063 are used by the workers only, so the test counts
 * exactly their events: 8 * 2000 allocs, 8 * 2000 reallocs, 8 * 2000 frees.
 * The main thread allocates sizes 2000..2031 alone before it starts them
 * and with them after, 2000 times each: 4000 allocs and 4000 frees.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 8
#define ROUNDS 2000

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(size_t)arg;

	for (int i = 0; i < ROUNDS; i++) {
		char *p = malloc(1000 + (size_t)(seed + i) % 32);

		p[0] = 1;
		p = realloc(p, 1032 + (size_t)(seed * 7 + i) % 32);
		p[1] = 2;
		free(p);
	}
	return NULL;
}

static void main_allocates(int from)
{
	for (int i = from; i < from + ROUNDS; i++) {
		volatile char *p = malloc(2000 + (size_t)i % 32);

		p[0] = 1;
		free((void *)p);
	}
}

int main(void)
{
	pthread_t t[THREADS];

	main_allocates(0);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(size_t)i))
			return 1;
	main_allocates(ROUNDS);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (write(1, "threads done\n", 13) != 13)
		return 2;
	return 0;
}
