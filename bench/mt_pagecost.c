/*
 * mt_pagecost: what the kernel and the machine charge a short process for
 * the pages it touches and the system calls it makes, printed by the
 * start benches (bench/run-start-bench, bench/split-start) beside their
 * figures; never part of make check.  A traced process's start is made of
 * these more than of instructions: on a guest whose hypervisor shadows its
 * page tables, even reading a page a forked child inherited costs a trap.
 *
 *   mt-pagecost   prints one line, ns each (medians of five runs):
 *                 syscall N fresh N cow N inherited_read N after_fork N
 *                 proc_self N
 *
 * syscall         getppid(2) through syscall(2)
 * fresh           the first write to a page of a new anonymous mapping
 * cow             a forked child's first write to a page its parent wrote
 * inherited_read  a forked child's first read of such a page
 * after_fork      the parent's first write to a page of its own once a
 *                 child it forked has exited: the fork left it read-only
 * proc_self       how much longer a forked child takes, fork to reaped,
 *                 when it reads /proc/self/exe and /proc/self/cmdline
 *                 (its first look at /proc/self makes the kernel build
 *                 the process's entries there, its exit takes them down)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGES 256
#define CHILDREN 200
#define CALLS 20000
#define RUNS 5
#define PAGE 4096

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v)
{
	qsort(v, RUNS, sizeof(*v), by_value);
	return v[RUNS / 2];
}

static double syscall_ns(void)
{
	double t = now_ns();

	for (int i = 0; i < CALLS; i++)
		syscall(SYS_getppid);
	return (now_ns() - t) / CALLS;
}

/* PAGES pages of a new anonymous mapping, each written once when
 * written is set; NULL when it cannot be mapped. */
static volatile char *map_pages(int written)
{
	volatile char *p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	for (int i = 0; written && i < PAGES; i++)
		p[(size_t)i * PAGE] = 1;
	return p;
}

/* One write (store) or read of each page of p, ns a page. */
static double touch_ns(volatile char *p, int store)
{
	double t = now_ns();

	for (int i = 0; i < PAGES; i++) {
		if (store)
			p[(size_t)i * PAGE] = 2;
		else
			(void)p[(size_t)i * PAGE];
	}
	return (now_ns() - t) / PAGES;
}

static double fresh_ns(void)
{
	volatile char *p = map_pages(0);
	double t;

	if (!p)
		return -1;
	t = touch_ns(p, 1);
	munmap((void *)p, PAGES * PAGE);
	return t;
}

/* A child's first write (cow) or read of each page its parent wrote; the
 * child sends its figure back through a pipe. */
static double child_ns(int store)
{
	volatile char *p = map_pages(1);
	double t = -1;
	int fds[2], status;
	pid_t pid;

	if (!p)
		return -1;
	if (pipe(fds) < 0)
		goto cleanup;
	pid = fork();
	if (pid == 0) {
		t = touch_ns(p, store);
		_exit(write(fds[1], &t, sizeof(t)) == sizeof(t) ? 0 : 1);
	}
	if (pid > 0) {
		if (read(fds[0], &t, sizeof(t)) != sizeof(t))
			t = -1;
		waitpid(pid, &status, 0);
	}
	close(fds[0]);
	close(fds[1]);
cleanup:
	munmap((void *)p, PAGES * PAGE);
	return t;
}

/* The parent's writes to pages it wrote before a fork, once the child
 * has exited without touching them. */
static double after_fork_ns(void)
{
	volatile char *p = map_pages(1);
	double t = -1;
	int status;
	pid_t pid;

	if (!p)
		return -1;
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		t = touch_ns(p, 1);
	munmap((void *)p, PAGES * PAGE);
	return t;
}

/* A forked child reaped, reading /proc/self first or not: ns. */
static double child_life_ns(int proc)
{
	double t = now_ns();
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (proc) {
			char buf[4096];
			int fd;

			if (readlink("/proc/self/exe", buf, sizeof(buf)) < 0)
				_exit(1);
			fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
			if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
				_exit(1);
			close(fd);
		}
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return now_ns() - t;
}

/* The mean over CHILDREN pairs, interleaved, of the difference. */
static double proc_self_ns(void)
{
	double sum = 0;

	for (int i = 0; i < CHILDREN; i++) {
		double with = child_life_ns(1), without = child_life_ns(0);

		if (with < 0 || without < 0)
			return -1;
		sum += with - without;
	}
	return sum / CHILDREN;
}

int main(void)
{
	double sc[RUNS], fr[RUNS], cow[RUNS], rd[RUNS], af[RUNS], ps[RUNS];

	for (int r = 0; r < RUNS; r++) {
		sc[r] = syscall_ns();
		fr[r] = fresh_ns();
		cow[r] = child_ns(1);
		rd[r] = child_ns(0);
		af[r] = after_fork_ns();
		ps[r] = proc_self_ns();
	}
	printf("syscall %.0f fresh %.0f cow %.0f inherited_read %.0f after_fork %.0f "
	       "proc_self %.0f\n",
	       median(sc), median(fr), median(cow), median(rd), median(af), median(ps));
	return 0;
}
