/*
 * mt_test_jobs: the suites of `make check` side by side (mt_test_jobs.h).
 *
 * A suite's runner is a child of this process; it writes Check's output
 * and its tests' to an unlinked file, and last a line of its counts,
 * which this process takes off before it prints the rest.  A child holds
 * no descriptor but its 0, 1 and 2, as a serial run's tests did, so that
 * the tests of descriptors see what they always saw.
 */
#include "mt_test_jobs.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The last line of a suite's output: how many tests ran and failed. */
#define COUNTS "mt-test-jobs counts:"

typedef struct {
	const mt_test_suite_t *suite;
	pid_t pid;
	int fd;      /* its output, unlinked */
	int done;    /* it ended, status holds how */
	int status;
	double began, ended; /* CLOCK_MONOTONIC, s */
} job_t;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

unsigned mt_test_jobs_wanted(void)
{
	static const char *const serial_vars[] = {
		"CK_RUN_SUITE",      "CK_RUN_CASE",          "CK_INCLUDE_TAGS",
		"CK_EXCLUDE_TAGS",   "CK_LOG_FILE_NAME",     "CK_XML_LOG_FILE_NAME",
		"CK_TAP_LOG_FILE_NAME", NULL,
	};
	const char *s = getenv("MT_TEST_JOBS");
	const char *fork_mode = getenv("CK_FORK");
	cpu_set_t set;
	int cpus;

	if (s && *s) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (!errno && !*end && v >= 1 && v <= 64)
			return (unsigned)v;
	}
	for (size_t i = 0; serial_vars[i]; i++)
		if (getenv(serial_vars[i]))
			return 1;
	if (fork_mode && !strcmp(fork_mode, "no"))
		return 1;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	cpus = CPU_COUNT(&set);
	if (cpus < 1)
		return 1;
	return cpus > MT_TEST_JOBS_MAX ? MT_TEST_JOBS_MAX : (unsigned)cpus;
}

static int run_serial(const mt_test_suite_t *suites, size_t n)
{
	SRunner *sr = srunner_create(suites[0].make());
	int failed;

	for (size_t i = 1; i < n; i++)
		srunner_add_suite(sr, suites[i].make());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

/* The child's part: nothing but the suite's output on 0, 1 and 2. */
static void __attribute__((noreturn)) run_child(const job_t *j)
{
	SRunner *sr;

	if (dup2(j->fd, STDOUT_FILENO) < 0 || dup2(j->fd, STDERR_FILENO) < 0)
		_exit(127);
	if (close_range(3, ~0u, 0) != 0) {
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
			(void)close((int)fd);
	}
	/* Lines in the order they were written, Check's and the tests'. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	sr = srunner_create(j->suite->make());
	srunner_run_all(sr, CK_NORMAL);
	printf("%s %d %d\n", COUNTS, srunner_ntests_run(sr),
	       srunner_ntests_failed(sr));
	fflush(stdout);
	srunner_free(sr);
	_exit(0);
}

static int start(job_t *j)
{
	char path[] = "/tmp/mt-tests-XXXXXX";
	const char *dir = getenv("TMPDIR");
	char *tmpl = path;
	char buf[PATH_MAX];

	if (dir && *dir && strlen(dir) + sizeof("/mt-tests-XXXXXX") <= sizeof(buf)) {
		snprintf(buf, sizeof(buf), "%s/mt-tests-XXXXXX", dir);
		tmpl = buf;
	}
	j->fd = mkstemp(tmpl);
	if (j->fd < 0) {
		fprintf(stderr, "mt-tests: cannot create '%s': %s\n", tmpl,
			strerror(errno));
		return -1;
	}
	(void)unlink(tmpl);
	fflush(stdout);
	fflush(stderr);
	j->began = now();
	j->pid = fork();
	if (j->pid < 0) {
		fprintf(stderr, "mt-tests: cannot fork: %s\n", strerror(errno));
		close(j->fd);
		return -1;
	}
	if (!j->pid)
		run_child(j);
	return 0;
}

/* Print job j's output but its counts line, and say how it ended: the
 * tests that failed, plus one when the runner did not end as it should. */
static int finish(job_t *j, int *ran)
{
	char *text = NULL, *counts;
	size_t len = 0, cap = 0;
	int run = 0, failed = 0, have = 0;
	ssize_t k;

	if (lseek(j->fd, 0, SEEK_SET) == 0) {
		for (;;) {
			if (len + 65536 > cap) {
				char *more = realloc(text, cap + 65536 + 1);

				if (!more)
					break;
				text = more;
				cap += 65536;
			}
			k = read(j->fd, text + len, cap - len);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			len += (size_t)k;
		}
	}
	close(j->fd);
	if (text) {
		text[len] = '\0';
		counts = strstr(text, COUNTS);
		while (counts && strstr(counts + 1, COUNTS))
			counts = strstr(counts + 1, COUNTS);
		if (counts && sscanf(counts + strlen(COUNTS), "%d %d", &run,
				     &failed) == 2) {
			have = 1;
			len = (size_t)(counts - text);
		}
		fwrite(text, 1, len, stdout);
		free(text);
	}
	printf("(%.1f s)\n", j->ended - j->began);
	*ran += run;
	if (!have || !WIFEXITED(j->status) || WEXITSTATUS(j->status)) {
		if (WIFSIGNALED(j->status))
			printf("mt-tests: a suite's runner (pid %d) was killed by signal %d\n",
			       (int)j->pid, WTERMSIG(j->status));
		else
			printf("mt-tests: a suite's runner (pid %d) ended with status %d%s\n",
			       (int)j->pid, WIFEXITED(j->status) ? WEXITSTATUS(j->status) : -1,
			       have ? "" : " and no counts");
		failed++;
	}
	fflush(stdout);
	return failed;
}

int mt_test_jobs_run(const mt_test_suite_t *suites, size_t n, unsigned jobs)
{
	job_t *all;
	size_t *order, norder = 0, next = 0, printed = 0;
	unsigned running = 0;
	int failed = 0, ran = 0;

	if (jobs <= 1 || n <= 1)
		return run_serial(suites, n);
	all = calloc(n, sizeof(*all));
	order = calloc(n, sizeof(*order));
	if (!all || !order) {
		fprintf(stderr, "mt-tests: out of memory\n");
		free(all);
		free(order);
		return 1;
	}
	/* The long suites first, then the rest, each in the list's order. */
	for (int pass = 1; pass >= 0; pass--)
		for (size_t i = 0; i < n; i++)
			if (!!suites[i].long_running == pass)
				order[norder++] = i;
	for (size_t i = 0; i < n; i++) {
		all[i].suite = &suites[i];
		all[i].fd = -1;
	}
	while (printed < n) {
		pid_t pid;
		int status;

		while (running < jobs && next < n) {
			job_t *j = &all[order[next++]];

			if (start(j) != 0) {
				j->done = 1;
				j->status = 127 << 8;
				continue;
			}
			running++;
		}
		while (printed < n && all[printed].done) {
			if (all[printed].fd >= 0)
				failed += finish(&all[printed], &ran);
			else
				failed++;
			printed++;
		}
		if (printed == n)
			break;
		pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "mt-tests: waitpid: %s\n", strerror(errno));
			failed++;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (all[i].pid == pid && !all[i].done) {
				all[i].done = 1;
				all[i].status = status;
				all[i].ended = now();
				running--;
				break;
			}
		}
	}
	printf("All %zu suites, %u at a time: %d checks, %d failed\n", n, jobs,
	       ran, failed);
	free(all);
	free(order);
	return failed;
}
