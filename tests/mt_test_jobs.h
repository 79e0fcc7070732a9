/*
 * mt_test_jobs: `make check`'s suites run side by side, a process for
 * each suite, as many at once as the machine has CPUs for (at most
 * MT_TEST_JOBS_MAX), so that a test waiting on a child, a timer or a
 * pipe leaves the other core to the next suite.
 *
 * Each suite runs as it would alone: its own Check runner in its own
 * process, its tests forked one at a time and in order, its output
 * (Check's, and the skip: lines tests print) kept in a file of its own.
 * The outputs are printed whole and in the list's order, whatever order
 * the suites end in, so that a run reads as a serial one does; then one
 * line of totals.  A suite whose runner dies counts as failed and says so.
 *
 * It must never change what a test sees but the company of other suites'
 * processes: no test of one suite shares a file, a name or a process with
 * another's (each makes its own directories; a collector is found by its
 * program's pid).
 */
#ifndef MT_TEST_JOBS_H
#define MT_TEST_JOBS_H

#include <check.h>
#include <stddef.h>

#define MT_TEST_JOBS_MAX 4

typedef struct {
	Suite *(*make)(void);
	/* Started first when running side by side: a suite that takes
	 * minutes, so that it does not start last and run alone. */
	int long_running;
} mt_test_suite_t;

/*
 * How many suites to run at once: MT_TEST_JOBS when set to a whole number
 * of 1 or more; 1 whenever the environment asks Check for one suite, one
 * case, tags, a log file or no fork (those are Check's to honour, in one
 * runner); else the CPUs this process may run on, at most
 * MT_TEST_JOBS_MAX.
 */
unsigned mt_test_jobs_wanted(void);

/*
 * Run the n suites, jobs at a time (1: in one Check runner, as a serial
 * run always did).  Returns the number of tests that failed, plus one for
 * each suite whose runner died.
 */
int mt_test_jobs_run(const mt_test_suite_t *suites, size_t n, unsigned jobs);

#endif
