/*
 * wl_threadfork: 8 threads each make 2000 malloc(7171)+free pairs; threads
 * 0, 2, 4 and 6 fork a child half way, which makes 300 malloc(7272)+free
 * pairs (while its parent's other threads go on allocating) and exits;
 * the thread waits for it.  Prints "child PID" for each child, in no
 * particular order, then "done".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 8
#define ROUNDS 2000
#define CHILD_ROUNDS 300

static pid_t kids[THREADS];
static int bad;

static void *worker(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < ROUNDS; i++) {
		char *p = malloc(7171);

		p[0] = 1;
		free(p);
		if (i == ROUNDS / 2 && id % 2 == 0) {
			pid_t c = fork();
			int st;

			if (c == 0) {
				for (int j = 0; j < CHILD_ROUNDS; j++) {
					char *q = malloc(7272);

					q[0] = 2;
					free(q);
				}
				exit(0);
			}
			if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ||
			    WEXITSTATUS(st) != 0)
				bad = 1;
			kids[id] = c;
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < THREADS; i++)
		if (kids[i])
			printf("child %d\n", (int)kids[i]);
	printf("done\n");
	return bad;
}
