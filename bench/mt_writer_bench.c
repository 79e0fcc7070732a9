/*
 * mt_writer_bench: what each way of writing trace lines costs, to choose
 * the preload's writer (docs/preload.md).  Writes the same N lines of a
 * typical alloc event through (a) mt_writer's shared mapping, driven as
 * mt_trace drives it (the next window made ahead with no lock held, the
 * old one unmapped after), (b) the same writer never asked to make a
 * window ahead, so every page is faulted in by the copies, (c) a
 * window made ahead (fallocate, map, MADV_POPULATE_WRITE; 4 KiB pages
 * that stay in the page cache), copied into and unmapped, (d) one
 * write(2) per line, which also survives SIGKILL, (e) a 64 KiB user-space
 * buffer, which does not (shown for reference), and (f) the copy alone,
 * into memory already mapped.  Prints the median ns per line of five
 * rounds of each, interleaved.
 *
 * usage: mt-writer-bench [LINES] [DIR]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../preload/mt_writer.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

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

/* path created empty for a run, or the bench ends with why. */
static int open_fresh(const char *path, int flags)
{
	int fd = open(path, flags | O_CREAT | O_TRUNC, 0600);

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

static double run_mmap(const char *path, long n, int ahead)
{
	mt_writer_t w;
	double t = now();
	int rc = mt_writer_open(&w, path);

	if (rc) {
		fprintf(stderr, "%s: %s\n", path, strerror(-rc));
		exit(1);
	}
	for (long i = 0; i < n; i++) {
		mt_writer_write(&w, line, sizeof(line) - 1);
		if (ahead) {
			/* What mt_trace does once its lock is released. */
			mt_writer_release(mt_writer_take_retired(&w));
			if (mt_writer_wanted(&w))
				mt_writer_prepare(&w);
		}
	}
	mt_writer_close(&w);
	return (now() - t) / (double)n;
}

static double run_write(const char *path, long n)
{
	int fd = open_fresh(path, O_WRONLY);
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
	int fd = open_fresh(path, O_WRONLY);
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

/* Windows of 4 KiB pages, kept cached: each reserved with fallocate,
 * mapped shared, faulted in for writing, copied into and unmapped; its
 * page cache stays. */
static double run_4k_cached(const char *path, long n)
{
	uint64_t bytes = (uint64_t)n * (sizeof(line) - 1), done = 0;
	int fd = open_fresh(path, O_RDWR);
	double t = now();

	for (uint64_t off = 0; off < bytes; off += MT_WRITER_WINDOW) {
		char *p;

		if (fallocate(fd, 0, (off_t)off, MT_WRITER_WINDOW) < 0)
			exit(1);
		p = mmap(NULL, MT_WRITER_WINDOW, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, (off_t)off);
		if (p == MAP_FAILED)
			exit(1);
		/* Before Linux 5.14 there is no MADV_POPULATE_WRITE: the
		 * copies fault the pages in. */
		madvise(p, MT_WRITER_WINDOW, MADV_POPULATE_WRITE);
		for (size_t pos = 0; done < bytes &&
				     pos + sizeof(line) - 1 <= MT_WRITER_WINDOW;
		     pos += sizeof(line) - 1, done += sizeof(line) - 1)
			memcpy(p + pos, line, sizeof(line) - 1);
		munmap(p, MT_WRITER_WINDOW);
	}
	if (ftruncate(fd, (off_t)done) < 0)
		exit(1);
	close(fd);
	return (now() - t) / (double)n;
}

/* The copy's: the lines into one window of memory already faulted in,
 * over and over (the bytes stay in memory, not in the caches). */
static double run_copy(long n)
{
	static char win[MT_WRITER_WINDOW];
	size_t pos = 0;
	double t;

	memset(win, 1, sizeof(win));
	t = now();
	for (long i = 0; i < n; i++) {
		if (pos + sizeof(line) > sizeof(win))
			pos = 0;
		memcpy(win + pos, line, sizeof(line) - 1);
		pos += sizeof(line) - 1;
	}
	__asm__ volatile("" : : "r"(win) : "memory"); /* the copies count */
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
	double r[6][5];
	char path[4096];

	snprintf(path, sizeof(path), "%s/mt-writer-bench.%d", dir, (int)getpid());
	for (int round = 0; round < 5; round++) {
		r[0][round] = run_mmap(path, n, 1);
		r[1][round] = run_mmap(path, n, 0);
		r[2][round] = run_4k_cached(path, n);
		r[3][round] = run_write(path, n);
		r[4][round] = run_buffered(path, n);
		r[5][round] = run_copy(n);
	}
	unlink(path);
	for (int i = 0; i < 6; i++)
		qsort(r[i], 5, sizeof(double), cmp);
	printf("lines: %ld of %zu bytes, median of 5 interleaved rounds\n", n, sizeof(line) - 1);
	printf("mapped windows (mt_writer, survives SIGKILL):\n");
	printf("  made ahead, as the preload runs it:      %6.1f ns/line\n", r[0][2]);
	printf("  never made ahead (faulted by the copies): %6.1f ns/line\n", r[1][2]);
	printf("  4 KiB pages, kept cached:                %6.1f ns/line\n", r[2][2]);
	printf("write(2) per line (survives SIGKILL):      %6.1f ns/line\n", r[3][2]);
	printf("64 KiB user buffer (loses its tail):       %6.1f ns/line\n", r[4][2]);
	printf("the copy alone, into memory already mapped: %5.1f ns/line\n", r[5][2]);
	return 0;
}
