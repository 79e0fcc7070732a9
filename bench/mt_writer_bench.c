/*
 * mt_writer_bench: what each way of writing trace lines costs, to choose
 * the preload's writer (docs/preload.md).  Writes the same N lines of a
 * typical alloc event through (a) mt_writer's shared mapping, (b) one
 * write(2) per line, which also survives SIGKILL, and (c) a 64 KiB
 * user-space buffer, which does not (shown for reference).  Prints the
 * median ns per line of five rounds of each, interleaved.
 *
 * usage: mt-writer-bench [LINES] [DIR]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../preload/mt_writer.h"

static const char line[] =
	"{\"v\":1,\"seq\":123456,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":"
	"\"0x55d0c2b002a0\",\"size\":48,\"fn\":\"malloc\",\"stack\":17,"
	"\"tid\":4242,\"t\":123456789}\n";

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double run_mmap(const char *path, long n)
{
	mt_writer_t w;
	double t = now();

	if (mt_writer_open(&w, path))
		exit(1);
	for (long i = 0; i < n; i++)
		mt_writer_write(&w, line, sizeof(line) - 1);
	mt_writer_close(&w);
	return (now() - t) / (double)n;
}

static double run_write(const char *path, long n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	double t = now();

	for (long i = 0; i < n; i++)
		if (write(fd, line, sizeof(line) - 1) < 0)
			exit(1);
	close(fd);
	return (now() - t) / (double)n;
}

static double run_buffered(const char *path, long n)
{
	static char buf[65536];
	size_t used = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	double t = now();

	for (long i = 0; i < n; i++) {
		if (used + sizeof(line) > sizeof(buf)) {
			if (write(fd, buf, used) < 0)
				exit(1);
			used = 0;
		}
		memcpy(buf + used, line, sizeof(line) - 1);
		used += sizeof(line) - 1;
	}
	if (write(fd, buf, used) < 0)
		exit(1);
	close(fd);
	return (now() - t) / (double)n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	double r[3][5];
	char path[4096];

	snprintf(path, sizeof(path), "%s/mt-writer-bench.%d", dir, (int)getpid());
	for (int round = 0; round < 5; round++) {
		r[0][round] = run_mmap(path, n);
		r[1][round] = run_write(path, n);
		r[2][round] = run_buffered(path, n);
	}
	unlink(path);
	for (int i = 0; i < 3; i++)
		qsort(r[i], 5, sizeof(double), cmp);
	printf("lines: %ld of %zu bytes, median of 5 interleaved rounds\n", n, sizeof(line) - 1);
	printf("mmap window (mt_writer, survives SIGKILL): %6.1f ns/line\n", r[0][2]);
	printf("write(2) per line (survives SIGKILL):      %6.1f ns/line\n", r[1][2]);
	printf("64 KiB user buffer (loses its tail):       %6.1f ns/line\n", r[2][2]);
	return 0;
}
