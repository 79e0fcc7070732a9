/*
 * wl_thread_churn: N threads (argv[1], default 200) started one after
 * another, as a server starts one for each piece of work, each allocating
 * and freeing 10 blocks (sizes 500..509) from the same nested frames;
 * then "ok".  With "fork" (argv[2]), it then forks a child that starts
 * 20 such threads and exits 0, and waits for it.  With "together", the N
 * threads run at once instead: once each has allocated its blocks (and
 * waits), it prints "rss_anon_kib K", the process's RssAnon, then "ok".
 * Exits 1 when a thread cannot be made, 2 when the child failed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static __attribute__((noinline)) void *nest(int depth, size_t size)
{
	void *p = depth ? nest(depth - 1, size) : malloc(size);

	__asm__ volatile("" ::: "memory");
	return p;
}

static pthread_barrier_t all_allocated, all_go;

static void *work(void *arg)
{
	for (int i = 0; i < 10; i++)
		free(nest(i % 3, 500 + (size_t)i));
	return arg;
}

static void *work_together(void *arg)
{
	work(arg);
	pthread_barrier_wait(&all_allocated);
	pthread_barrier_wait(&all_go);
	return arg;
}

/* n threads at once; the process's RssAnon while they all wait. */
static int together(int n)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	char line[256];
	FILE *f;

	if (!t || pthread_barrier_init(&all_allocated, NULL, (unsigned)n + 1) ||
	    pthread_barrier_init(&all_go, NULL, (unsigned)n + 1))
		return -1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, work_together, NULL))
			return -1;
	pthread_barrier_wait(&all_allocated);
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "RssAnon:", 8))
			printf("rss_anon_kib %ld\n", strtol(line + 8, NULL, 10));
	if (f)
		fclose(f);
	pthread_barrier_wait(&all_go);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	return 0;
}

static int threads(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, work, NULL) || pthread_join(t, NULL))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc > 2 && !strcmp(argv[2], "together")) {
		if (together(atoi(argv[1])) < 0)
			return 1;
		puts("ok");
		return 0;
	}
	if (threads(argc > 1 ? atoi(argv[1]) : 200) < 0)
		return 1;
	if (argc > 2 && !strcmp(argv[2], "fork")) {
		pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0)
			_exit(threads(20) < 0 ? 1 : 0);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return 2;
	}
	puts("ok");
	return 0;
}
