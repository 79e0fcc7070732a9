/*
 * mt_churn: the preload benchmark's churn workload (issue 5): 2 threads x
 * 2.5 million malloc/realloc/free operations over 64 slots each.
 */
#include <pthread.h>
#include <stdlib.h>

#define OPS 2500000

static void *worker(void *arg)
{
	void *slot[64] = { 0 };
	unsigned s = 1 + (unsigned)(size_t)arg;

	for (int i = 0; i < OPS; i++) {
		int k;

		s = s * 1103515245 + 12345;
		k = (s >> 16) & 63;
		switch (i % 3) {
		case 0:
			free(slot[k]);
			slot[k] = malloc(16 + (s >> 24));
			break;
		case 1:
			slot[k] = realloc(slot[k], 32 + (s >> 25));
			break;
		default:
			free(slot[k]);
			slot[k] = NULL;
		}
	}
	for (int k = 0; k < 64; k++)
		free(slot[k]);
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(size_t)i))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
