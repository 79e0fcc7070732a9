/*
 * mt_churn: the preload benchmark's churn workload: THREADS
 * threads x OPS malloc/realloc/free operations over 64 slots each.
 *
 *   mt-churn [-s] [-t THREADS] [-n OPS]  (defaults: 2 threads, 2500000 ops)
 *
 * The 8-thread workload of bench/run-preload-bench is this program with
 * -t 8; its spawn workload is -s: each thread started once the one before
 * has ended, as a server starts a thread for each piece of work.  It
 * prints a checksum of the sizes it asked for, the same bare and under
 * any tracer, so the harness can tell a traced run went to its end; it
 * must never depend on addresses or timing for that output.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 8192

static long ops = 2500000;

typedef struct {
	unsigned seed;
	unsigned long long requested; /* sum of the sizes asked for */
} worker_t;

static void *worker(void *arg)
{
	worker_t *w = arg;
	void *slot[64] = { 0 };
	unsigned s = w->seed;

	for (long i = 0; i < ops; i++) {
		int k;
		size_t n;

		s = s * 1103515245 + 12345;
		k = (s >> 16) & 63;
		switch (i % 3) {
		case 0:
			free(slot[k]);
			n = 16 + (s >> 24);
			slot[k] = malloc(n);
			break;
		case 1:
			n = 32 + (s >> 25);
			slot[k] = realloc(slot[k], n);
			break;
		default:
			n = 0;
			free(slot[k]);
			slot[k] = NULL;
		}
		w->requested += n;
	}
	for (int k = 0; k < 64; k++)
		free(slot[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t t[MAX_THREADS];
	static worker_t w[MAX_THREADS];
	unsigned long long sum = 0;
	long threads = 2;
	int c, serial = 0;

	while ((c = getopt(argc, argv, "st:n:")) != -1) {
		switch (c) {
		case 's':
			serial = 1;
			break;
		case 't':
			threads = strtol(optarg, NULL, 10);
			break;
		case 'n':
			ops = strtol(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: mt-churn [-s] [-t THREADS] [-n OPS]\n");
			return 64;
		}
	}
	if (threads < 1 || threads > MAX_THREADS || ops < 0) {
		fprintf(stderr, "mt-churn: threads must be 1..%d, ops >= 0\n", MAX_THREADS);
		return 64;
	}
	for (long i = 0; i < threads; i++) {
		w[i].seed = 1 + (unsigned)i;
		if (pthread_create(&t[i], NULL, worker, &w[i]))
			return 1;
		if (serial)
			pthread_join(t[i], NULL);
	}
	for (long i = 0; i < threads; i++) {
		if (!serial)
			pthread_join(t[i], NULL);
		sum += w[i].requested;
	}
	printf("churn: %ld threads x %ld ops, %llu bytes requested\n", threads, ops, sum);
	return 0;
}
