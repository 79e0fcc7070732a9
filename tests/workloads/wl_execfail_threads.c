/*
 * wl_execfail_threads: two threads allocate (malloc(4343) + free, 20,000
 * times each) while the main thread tries 200 execs that fail (ENOENT),
 * each after a malloc(4444).  Every failed exec's trace.stop must be taken
 * back, and the threads' events around it kept, in order.  Prints
 * "execs failed 200" and exits 0.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *churn(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++)
		free(malloc(4343));
	return NULL;
}

int main(void)
{
	char *args[] = { "absent", NULL };
	pthread_t t[2];
	int failed = 0;

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, churn, NULL))
			return 1;
	for (int i = 0; i < 200; i++) {
		free(malloc(4444));
		execv("/nonexistent/memtrace-absent", args);
		failed += errno == ENOENT;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("execs failed %d\n", failed);
	return failed == 200 ? 0 : 1;
}
