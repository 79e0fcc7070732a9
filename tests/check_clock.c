/*
 * check_clock: the preload's clock (preload/mt_clock.h) against
 * clock_gettime(CLOCK_MONOTONIC) read on either side of each reading.
 *
 * On a machine whose kernel keeps time with an invariant TSC ("tsc", or
 * "kvm-clock", the TSC as a hypervisor scales it) the readings
 * come from the TSC once a millisecond has passed, and must stay within
 * TOLERANCE_NS of the clock; elsewhere they are the clock's own, which the
 * same checks hold exactly.  Either way every test asserts which source
 * was used, from what /proc/cpuinfo and sysfs say of the machine.  The
 * tests of what becomes of the TSC once in use (kept over a long sleep,
 * dropped when set apart from the clock) need such a machine: elsewhere
 * they print a skip line saying what the machine has.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "../preload/mt_clock.h"
#include "mt_test.h"

/* Far above what an anchor's rate may stray in a millisecond (tens of
 * ns), far below what a wrong rate or anchor would give. */
#define TOLERANCE_NS 5000u

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What the machine says, read another way than mt_clock does: Linux
 * names CPUID 0x80000007's invariant-TSC bit "nonstop_tsc". */
static int machine_has_tsc_clock(void)
{
	char line[8192], src[16] = "";
	int flag = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "flags", 5) && strstr(line, " nonstop_tsc"))
				flag = 1;
		fclose(f);
	}
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  "r");
	if (f) {
		if (!fgets(src, sizeof(src), f))
			src[0] = '\0';
		fclose(f);
	}
	return flag && (!strcmp(src, "tsc\n") || !strcmp(src, "kvm-clock\n"));
}

/* For a test of what happens to the TSC once in use, which needs a
 * machine whose clock is kept with it: 1, or 0 after its skip line. */
static int tsc_clock_or_skip(const char *test)
{
	char line[8192], src[64] = "absent";
	int flag = 0;
	FILE *f;

	if (machine_has_tsc_clock())
		return 1;
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  "r");
	if (f) {
		if (fgets(src, sizeof(src), f))
			src[strcspn(src, "\n")] = '\0';
		fclose(f);
	}
	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "flags", 5) && strstr(line, " nonstop_tsc"))
				flag = 1;
		fclose(f);
	}
	mt_test_skip(test, "the TSC is never used here (clocksource %s, %s)",
		     src, flag ? "nonstop_tsc" : "no nonstop_tsc");
	return 0;
}

/* Read the clock for ms milliseconds, each reading between two of
 * clock_gettime()'s; returns the readings that strayed by more than
 * tolerance (0: none may), and counts all readings in *reads. */
static long sandwiched_for(unsigned ms, uint64_t tolerance, long *reads)
{
	uint64_t end = clock_ns() + (uint64_t)ms * 1000000u;
	long bad = 0, n = 0;

	for (;;) {
		uint64_t before = clock_ns();
		uint64_t t = mt_clock_now();
		uint64_t after = clock_ns();

		n++;
		if (t + tolerance < before || t > after + tolerance)
			bad++;
		if (after >= end)
			break;
	}
	*reads = n;
	return bad;
}

START_TEST(clock_told_not_to_use_the_tsc_reads_clock_gettime_exactly)
{
	long reads;

	mt_clock_init(0);
	ck_assert_int_eq(sandwiched_for(20, 0, &reads), 0);
	ck_assert_int_gt(reads, 1000);
	ck_assert_int_eq(mt_clock_uses_tsc(), 0);
}
END_TEST

START_TEST(clock_uses_the_tsc_only_where_the_kernel_keeps_time_with_it)
{
	ck_assert_int_eq(mt_clock_tsc_usable(), machine_has_tsc_clock());
}
END_TEST

START_TEST(clock_stays_within_microseconds_of_clock_monotonic)
{
	long reads;

	mt_clock_init(1);
	/* The first millisecond is clock_gettime()'s; 50 more cross about
	 * 50 anchors. */
	ck_assert_int_eq(sandwiched_for(50, TOLERANCE_NS, &reads), 0);
	ck_assert_int_gt(reads, 1000);
	ck_assert_int_eq(mt_clock_uses_tsc(), machine_has_tsc_clock());
}
END_TEST

/* Readings for 3 ms from a fresh calibration, a nap of ms milliseconds
 * with none, then readings for after_ms: all within the tolerance. */
static void readings_around_a_nap(long ms, unsigned after_ms)
{
	struct timespec nap = { ms / 1000, ms % 1000 * 1000000 };
	long reads;

	mt_clock_init(1);
	ck_assert_int_eq(sandwiched_for(3, TOLERANCE_NS, &reads), 0);
	nanosleep(&nap, NULL);
	ck_assert_int_eq(sandwiched_for(after_ms, TOLERANCE_NS, &reads), 0);
}

/* A second and a half without a reading, as a program that allocates at
 * start and then waits: the next anchor is far from the one before, and
 * the rate's small error over that gap is no reason to drop the counter. */
START_TEST(clock_keeps_the_tsc_after_a_long_sleep)
{
	if (!tsc_clock_or_skip(__func__))
		return;
	readings_around_a_nap(1500, 3);
	ck_assert_int_eq(mt_clock_uses_tsc(), machine_has_tsc_clock());
}
END_TEST

START_TEST(clock_after_a_long_idle_anchors_again)
{
	struct timespec nap = { 0, 30 * 1000000 };

	/* 30 ms with no reading: the anchor's reach is long past. */
	readings_around_a_nap(30, 1);
	nanosleep(&nap, NULL);
	{
		uint64_t before = clock_ns(), t = mt_clock_now(), after = clock_ns();

		ck_assert_uint_ge(t + TOLERANCE_NS, before);
		ck_assert_uint_le(t, after + TOLERANCE_NS);
	}
	ck_assert_int_eq(mt_clock_uses_tsc(), machine_has_tsc_clock());
}
END_TEST

/* In a child of fork: recalibrated, still within microseconds, and
 * on the source the parent used (clock_gettime() stays so).  Exits 1 for
 * a reading astray, else 10 on the TSC, 20 on clock_gettime(). */
static int child_after_fork(int allow_tsc)
{
	long reads;
	pid_t pid;
	int status;

	mt_clock_init(allow_tsc);
	sandwiched_for(3, TOLERANCE_NS, &reads);
	pid = fork();
	if (pid == 0) {
		long bad;

		mt_clock_fork_child();
		bad = sandwiched_for(5, TOLERANCE_NS, &reads);
		_exit(bad ? 1 : mt_clock_uses_tsc() ? 10 : 20);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(clock_in_a_fork_child_calibrates_again_on_the_parents_source)
{
	int want = machine_has_tsc_clock() ? 10 : 20;

	ck_assert_int_eq(child_after_fork(1), want);
	ck_assert_int_eq(child_after_fork(0), 20);
}
END_TEST

static atomic_long thread_bad, thread_reads;

static void *read_sandwiched(void *arg)
{
	long reads, bad = sandwiched_for(40, TOLERANCE_NS, &reads);

	(void)arg;
	atomic_fetch_add(&thread_bad, bad);
	atomic_fetch_add(&thread_reads, reads);
	return NULL;
}

START_TEST(clock_threads_reading_while_anchors_change_stay_within_microseconds)
{
	pthread_t t[4];

	mt_clock_init(1);
	atomic_store(&thread_bad, 0);
	atomic_store(&thread_reads, 0);
	/* Started during the calibration, so some read through the switch
	 * to the TSC, and all race each other's anchors. */
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, read_sandwiched, NULL), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	long bad = atomic_load(&thread_bad), reads = atomic_load(&thread_reads);

	ck_assert_int_eq(bad, 0);
	ck_assert_int_gt(reads, 4000);
	ck_assert_int_eq(mt_clock_uses_tsc(), machine_has_tsc_clock());
}
END_TEST

/* The time-stamp counter as mt_clock reads it (0 where there is none). */
static uint64_t counter_now(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return 0;
#endif
}

/*
 * Where counter_set_apart() puts this thread's counter, decided the moment
 * the counter is set (tsc0: what it read just before mt_clock_init()).
 * "Behind" must mean behind the anchor in place, whatever the scheduler
 * does: a counter set back by a fixed count but read only after a longer
 * pause (a slow first read of /proc/cpuinfo, a preemption) is ahead of
 * the anchor, within its reach, and its readings are wrong until the
 * next anchor drops it: what mt_clock.h allows, not what these tests
 * check.  Half the run back is tens of milliseconds behind any anchor and
 * as far ahead of the first reading.
 */
enum apart { FAR_AHEAD, HALF_THE_RUN_BACK, BEHIND_THE_FIRST_READING };

#define APART_RUN_MS 100u

static int64_t apart_cycles(enum apart where, uint64_t tsc0)
{
	uint64_t now = counter_now();

	switch (where) {
	case FAR_AHEAD:
		/* 2^24 cycles: milliseconds, past an anchor's reach. */
		return (int64_t)1 << 24;
	case HALF_THE_RUN_BACK:
		return -(int64_t)((now - tsc0) / 2);
	case BEHIND_THE_FIRST_READING:
		/* Half the counter's value: far behind the calibration's
		 * first reading, whatever the uptime (a fixed count could
		 * take a young machine's counter past zero). */
		return -(int64_t)(now / 2);
	}
	return 0;
}

/* This thread's counter is set apart, once the TSC is in use: every
 * reading must still be the clock's, and the counter is dropped. */
static void counter_set_apart(const char *test, enum apart where)
{
	int tsc = tsc_clock_or_skip(test);
	uint64_t tsc0 = counter_now();
	long reads;

	if (!tsc)
		return;

	mt_clock_init(1);
	ck_assert_int_eq(sandwiched_for(APART_RUN_MS, TOLERANCE_NS, &reads), 0);
	/* Nothing slow between the last reading and the skew: the system
	 * calls of machine_has_tsc_clock() were made before. */
	ck_assert_int_eq(mt_clock_uses_tsc(), tsc);
	mt_clock_test_skew(apart_cycles(where, tsc0));
	ck_assert_int_eq(sandwiched_for(5, TOLERANCE_NS, &reads), 0);
	mt_clock_test_skew(0);
	ck_assert_int_eq(mt_clock_uses_tsc(), 0);
	/* For good: the counter put right is not taken back. */
	ck_assert_int_eq(sandwiched_for(5, TOLERANCE_NS, &reads), 0);
	ck_assert_int_eq(mt_clock_uses_tsc(), 0);
}

START_TEST(clock_drops_a_counter_running_ahead_of_the_clock)
{
	counter_set_apart(__func__, FAR_AHEAD);
}
END_TEST

START_TEST(clock_drops_a_counter_a_little_ahead_of_the_clock)
{
	/* 2^19 cycles: hundreds of microseconds, within an anchor's reach,
	 * so the readings are that much ahead until the next anchor (not
	 * checked: the first sandwich below ignores them), which drops the
	 * counter.  It would take a pause of a thousand times as long
	 * before the skew for the anchor's allowance to cover it. */
	long reads;

	if (!tsc_clock_or_skip(__func__))
		return;
	mt_clock_init(1);
	ck_assert_int_eq(sandwiched_for(5, TOLERANCE_NS, &reads), 0);
	mt_clock_test_skew((int64_t)1 << 19);
	sandwiched_for(5, UINT64_MAX / 2, &reads);
	mt_clock_test_skew(0);
	ck_assert_int_eq(mt_clock_uses_tsc(), 0);
	ck_assert_int_eq(sandwiched_for(5, 0, &reads), 0);
}
END_TEST

START_TEST(clock_drops_a_counter_behind_the_clock)
{
	counter_set_apart(__func__, HALF_THE_RUN_BACK);
}
END_TEST

START_TEST(clock_drops_a_counter_behind_its_first_reading)
{
	counter_set_apart(__func__, BEHIND_THE_FIRST_READING);
}
END_TEST

Suite *mt_suite_clock(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("clock");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, clock_told_not_to_use_the_tsc_reads_clock_gettime_exactly);
	tcase_add_test(tc, clock_uses_the_tsc_only_where_the_kernel_keeps_time_with_it);
	tcase_add_test(tc, clock_stays_within_microseconds_of_clock_monotonic);
	tcase_add_test(tc, clock_after_a_long_idle_anchors_again);
	tcase_add_test(tc, clock_keeps_the_tsc_after_a_long_sleep);
	tcase_add_test(tc, clock_in_a_fork_child_calibrates_again_on_the_parents_source);
	tcase_add_test(
		tc, clock_threads_reading_while_anchors_change_stay_within_microseconds);
	tcase_add_test(tc, clock_drops_a_counter_running_ahead_of_the_clock);
	tcase_add_test(tc, clock_drops_a_counter_a_little_ahead_of_the_clock);
	tcase_add_test(tc, clock_drops_a_counter_behind_the_clock);
	tcase_add_test(tc, clock_drops_a_counter_behind_its_first_reading);
	suite_add_tcase(s, tc);
	return s;
}
