/*
 * check_clock: the preload's clock (preload/mt_clock.h) is
 * CLOCK_MONOTONIC itself, read between two readings of clock_gettime();
 * in a thread that forbids RDTSC it is read without it (the vDSO's
 * clock_gettime would execute RDTSC where the clocksource is the TSC).
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../preload/mt_clock.h"
#include "mt_test.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

START_TEST(test_clock_reads_clock_monotonic_and_realtime)
{
	for (int i = 0; i < 100000; i++) {
		uint64_t before = clock_ns(CLOCK_MONOTONIC), t = mt_clock_now();
		uint64_t after = clock_ns(CLOCK_MONOTONIC);

		mt_quiet(before <= t && t <= after, "%ju not in [%ju, %ju]",
			 (uintmax_t)t, (uintmax_t)before, (uintmax_t)after);
	}
	{
		uint64_t before = clock_ns(CLOCK_REALTIME), t = mt_clock_realtime();
		uint64_t after = clock_ns(CLOCK_REALTIME);

		mt_quiet(before <= t && t <= after, "realtime %ju not in [%ju, %ju]",
			 (uintmax_t)t, (uintmax_t)before, (uintmax_t)after);
	}
}
END_TEST

/* In a child, so that a RDTSC made after all kills the child, not the
 * suite: the thread forbids it, then reads the clock a while. */
START_TEST(test_clock_in_a_thread_that_forbids_rdtsc_makes_the_system_call)
{
#if defined(__x86_64__)
	pid_t pid = fork();
	int status;

	mt_quiet(pid >= 0, "fork failed");
	if (pid == 0) {
		uint64_t last = 0;

		alarm(30);
		if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) != 0)
			_exit(3);
		mt_clock_thread_tsc_changed();
		if (mt_clock_thread_tsc_ok() || !mt_clock_thread_forbids_tsc())
			_exit(4);
		for (int i = 0; i < 10000; i++) {
			uint64_t t = mt_clock_now();

			if (t < last || !mt_clock_realtime())
				_exit(5);
			last = t;
		}
		_exit(0);
	}
	mt_quiet_int_eq(waitpid(pid, &status, 0), pid);
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "the child ended with status %#x", status);
#endif
}
END_TEST

Suite *mt_suite_clock(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("clock");

	tcase_add_test(tc, test_clock_reads_clock_monotonic_and_realtime);
	tcase_add_test(tc, test_clock_in_a_thread_that_forbids_rdtsc_makes_the_system_call);
	suite_add_tcase(s, tc);
	return s;
}
