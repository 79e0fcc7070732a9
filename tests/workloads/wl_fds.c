/*
 * wl_fds: what a program sees of its descriptor table once it has
 * allocated (in main and in a thread of its own): the number its first
 * open() gets and the list of /proc/self/fd.  Traced, both must be what
 * they are bare.  Usage: wl_fds.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static __attribute__((noinline)) void *nest(int depth)
{
	void *p = depth ? nest(depth - 1) : malloc(48);

	__asm__ volatile("" ::: "memory");
	return p;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		free(nest(i % 9));
	return NULL;
}

static int by_number(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main(void)
{
	int fds[1024], n = 0, fd;
	struct dirent *e;
	pthread_t t;
	DIR *d;

	free(nest(3));
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
		return 1;
	fd = open("/dev/null", O_RDONLY);
	d = opendir("/proc/self/fd");
	if (!d)
		return 2;
	while ((e = readdir(d)) && n < 1024)
		if (e->d_name[0] != '.')
			fds[n++] = atoi(e->d_name);
	closedir(d);
	qsort(fds, (size_t)n, sizeof(fds[0]), by_number);
	printf("open %d\nfds", fd);
	for (int i = 0; i < n; i++)
		printf(" %d", fds[i]);
	printf("\n");
	return 0;
}
