/*
 * check_jobs: the runner of `make check` side by side (mt_test_jobs):
 * each suite's output whole and in the list's order, whatever order the
 * suites end in; the totals; a failed test and a runner that dies both
 * counted; and when it runs one runner.  Each test runs small suites of
 * its own through mt_test_jobs_run(), its output caught in a file.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mt_test.h"
#include "mt_test_jobs.h"

/* The inner suites' tests. */
START_TEST(inner_slow_pass)
{
	usleep(300 * 1000); /* so that the next suite ends first */
}
END_TEST

START_TEST(inner_pass)
{
}
END_TEST

START_TEST(inner_fail)
{
	ck_abort_msg("inner failure on purpose");
}
END_TEST

static Suite *one(const char *name, const TTest *t1, const TTest *t2)
{
	Suite *s = suite_create(name);
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, t1);
	if (t2)
		tcase_add_test(tc, t2);
	suite_add_tcase(s, tc);
	return s;
}

static Suite *suite_first(void)
{
	return one("first", inner_slow_pass, inner_pass);
}

static Suite *suite_second(void)
{
	return one("second", inner_pass, inner_fail);
}

static Suite *suite_dies(void)
{
	/* The runner itself dies, before it runs anything. */
	raise(SIGKILL);
	return NULL;
}

static Suite *suite_third(void)
{
	return one("third", inner_pass, NULL);
}

/* Run suites through mt_test_jobs_run() with Check's selectors unset;
 * *failed gets its result, the output is returned (malloc'd). */
static char *run_jobs(const mt_test_suite_t *suites, size_t n, unsigned jobs,
		      int *failed)
{
	static const char *const vars[] = { "CK_RUN_SUITE", "CK_RUN_CASE",
					    "CK_INCLUDE_TAGS", "CK_EXCLUDE_TAGS" };
	char *saved[4];
	char path[] = "/tmp/mt-check-jobs-XXXXXX";
	int fd = mkstemp(path), out = dup(STDOUT_FILENO);
	char *text;

	mt_quiet(fd >= 0 && out >= 0, "mkstemp or dup failed");
	for (size_t i = 0; i < 4; i++) {
		const char *v = getenv(vars[i]);

		saved[i] = v ? strdup(v) : NULL;
		unsetenv(vars[i]);
	}
	fflush(stdout);
	mt_quiet_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	*failed = mt_test_jobs_run(suites, n, jobs);
	fflush(stdout);
	mt_quiet_int_eq(dup2(out, STDOUT_FILENO), STDOUT_FILENO);
	close(out);
	close(fd);
	for (size_t i = 0; i < 4; i++) {
		if (saved[i])
			setenv(vars[i], saved[i], 1);
		free(saved[i]);
	}
	/* NUL-terminated, as mt_test_read() always returns. */
	text = mt_test_read(path, NULL);
	unlink(path);
	mt_quiet_ptr_nonnull(text);
	return text;
}

/* Two suites at once, the first ending last: their outputs in the list's
 * order, whole, then the totals; the failed test counted. */
START_TEST(test_jobs_print_each_suite_whole_in_the_lists_order)
{
	const mt_test_suite_t suites[] = { { suite_first, 0 }, { suite_second, 0 } };
	int failed;
	char *text = run_jobs(suites, 2, 2, &failed);
	char *first = strstr(text, "Running suite(s): first");
	char *second = strstr(text, "Running suite(s): second");
	char *fail = strstr(text, "inner failure on purpose");
	char *total = strstr(text, "All 2 suites, 2 at a time: 4 checks, 1 failed");

	mt_quiet_int_eq(failed, 1);
	mt_quiet(first && second && fail && total, "output:\n%s", text);
	mt_quiet(first < second && second < fail && fail < total,
		 "out of order:\n%s", text);
	mt_quiet(strstr(first, "100%: Checks: 2, Failures: 0, Errors: 0") < second,
		 "first's result not before second's output:\n%s", text);
	mt_quiet(!strstr(text, "mt-test-jobs counts:"), "counts line printed:\n%s", text);
	free(text);
}
END_TEST

/* A runner killed before it runs a test counts as a failure and says so;
 * the suites after it still run. */
START_TEST(test_jobs_count_a_runner_that_dies_as_a_failure)
{
	const mt_test_suite_t suites[] = { { suite_dies, 1 }, { suite_third, 0 } };
	int failed;
	char *text = run_jobs(suites, 2, 2, &failed);

	mt_quiet_int_eq(failed, 1);
	mt_quiet(strstr(text, "was killed by signal 9") != NULL, "output:\n%s", text);
	mt_quiet(strstr(text, "Running suite(s): third") != NULL, "output:\n%s", text);
	mt_quiet(strstr(text, "All 2 suites, 2 at a time: 1 checks, 1 failed") != NULL,
		 "output:\n%s", text);
	free(text);
}
END_TEST

/* One job is one Check runner for all the suites, as a serial run. */
START_TEST(test_jobs_one_job_is_one_runner)
{
	const mt_test_suite_t suites[] = { { suite_third, 0 }, { suite_second, 0 } };
	int failed;
	char *text = run_jobs(suites, 2, 1, &failed);

	mt_quiet_int_eq(failed, 1);
	mt_quiet(strstr(text, "Running suite(s): third\n second") != NULL, "output:\n%s", text);
	mt_quiet(strstr(text, "All ") == NULL, "output:\n%s", text);
	free(text);
}
END_TEST

/* Check's own selectors and log files keep one runner; MT_TEST_JOBS sets
 * the count; else the CPUs, at most MT_TEST_JOBS_MAX. */
START_TEST(test_jobs_wanted_follows_the_environment)
{
	unsetenv("MT_TEST_JOBS");
	unsetenv("CK_RUN_SUITE");
	unsetenv("CK_XML_LOG_FILE_NAME");
	unsetenv("CK_FORK");
	mt_quiet(mt_test_jobs_wanted() >= 1 && mt_test_jobs_wanted() <= MT_TEST_JOBS_MAX,
		 "%u jobs", mt_test_jobs_wanted());
	mt_quiet_int_eq(mt_test_jobs_wanted(),
			mt_test_cpus() < MT_TEST_JOBS_MAX ? mt_test_cpus() : MT_TEST_JOBS_MAX);
	setenv("MT_TEST_JOBS", "3", 1);
	mt_quiet_int_eq(mt_test_jobs_wanted(), 3);
	setenv("MT_TEST_JOBS", "x", 1);
	setenv("CK_RUN_SUITE", "mem", 1);
	mt_quiet_int_eq(mt_test_jobs_wanted(), 1);
	unsetenv("CK_RUN_SUITE");
	setenv("CK_XML_LOG_FILE_NAME", "/tmp/x.xml", 1);
	mt_quiet_int_eq(mt_test_jobs_wanted(), 1);
	unsetenv("CK_XML_LOG_FILE_NAME");
	setenv("CK_FORK", "no", 1);
	mt_quiet_int_eq(mt_test_jobs_wanted(), 1);
}
END_TEST

Suite *mt_suite_jobs(void)
{
	Suite *s = suite_create("jobs");
	TCase *tc = tcase_create("jobs");

	tcase_add_test(tc, test_jobs_print_each_suite_whole_in_the_lists_order);
	tcase_add_test(tc, test_jobs_count_a_runner_that_dies_as_a_failure);
	tcase_add_test(tc, test_jobs_one_job_is_one_runner);
	tcase_add_test(tc, test_jobs_wanted_follows_the_environment);
	suite_add_tcase(s, tc);
	return s;
}
