/*
 * wl_stress: 8 threads allocating, reallocating and freeing at random
 * while the main thread forks children that allocate.
 *
 * Sizes mark who did what, so check_stress counts each event exactly:
 *   workers: malloc of 1000..1999 bytes, realloc to 2000..2999 bytes, free;
 *   children: malloc of 7777 bytes (CHILD_ALLOCS), half of them freed.
 * Each worker keeps SLOTS blocks and picks one at random every round; at the
 * end it frees what it holds.  On success the program prints
 *   stress: allocs=A reallocs=R frees=F forks=N
 * with the workers' totals, and exits 0; a child that fails exits 1 and the
 * program exits 2.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 8
#define ROUNDS 3000
#define SLOTS 16
#define FORKS 8
#define CHILD_ALLOCS 40

typedef struct {
	unsigned seed;
	unsigned long allocs, reallocs, frees;
} worker_t;

static atomic_int started;

static unsigned next(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void *stress_worker(void *arg)
{
	worker_t *w = arg;
	char *slot[SLOTS] = { 0 };

	atomic_fetch_add(&started, 1);
	for (int i = 0; i < ROUNDS; i++) {
		unsigned r = next(&w->seed);
		int s = (int)(r % SLOTS);

		if (!slot[s]) {
			slot[s] = malloc(1000 + (r >> 4) % 1000);
			if (!slot[s])
				abort();
			slot[s][0] = 1;
			w->allocs++;
		} else if (r & 1 << 12) {
			char *p = realloc(slot[s], 2000 + (r >> 4) % 1000);

			if (!p)
				abort();
			p[1] = 2;
			slot[s] = p;
			w->reallocs++;
		} else {
			free(slot[s]);
			slot[s] = NULL;
			w->frees++;
		}
	}
	for (int s = 0; s < SLOTS; s++)
		if (slot[s]) {
			free(slot[s]);
			w->frees++;
		}
	return NULL;
}

static void child(void)
{
	char *p[CHILD_ALLOCS];

	for (int i = 0; i < CHILD_ALLOCS; i++) {
		p[i] = malloc(7777);
		if (!p[i])
			exit(1);
		memset(p[i], i, 7777);
	}
	for (int i = 0; i < CHILD_ALLOCS; i += 2)
		free(p[i]);
	exit(0); /* a normal exit: the trace gets its stop */
}

int main(void)
{
	pthread_t t[THREADS];
	worker_t w[THREADS];
	pid_t kids[FORKS];
	unsigned long allocs = 0, reallocs = 0, frees = 0;
	int failed = 0;
	char out[128];
	int n;

	for (int i = 0; i < THREADS; i++) {
		w[i] = (worker_t){ .seed = 7919u * (unsigned)(i + 1) };
		if (pthread_create(&t[i], NULL, stress_worker, &w[i]))
			return 3;
	}
	/* Fork while every worker is busy. */
	while (atomic_load(&started) < THREADS)
		sched_yield();
	for (int i = 0; i < FORKS; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			return 4;
		if (kids[i] == 0)
			child();
	}
	for (int i = 0; i < FORKS; i++) {
		int status;

		if (waitpid(kids[i], &status, 0) != kids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		allocs += w[i].allocs;
		reallocs += w[i].reallocs;
		frees += w[i].frees;
	}
	if (failed)
		return 2;
	n = snprintf(out, sizeof(out),
		     "stress: allocs=%lu reallocs=%lu frees=%lu forks=%d\n",
		     allocs, reallocs, frees, FORKS);
	if (write(1, out, (size_t)n) != n)
		return 5;
	return 0;
}
