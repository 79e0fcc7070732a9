/*
 * check_clock: the preload's clock (preload/mt_clock.h) is
 * CLOCK_MONOTONIC within a microsecond, read between two readings of
 * clock_gettime(), converted from the TSC where the machine allows it;
 * it never goes back, in a thread, between threads or after a fork; in a
 * thread that forbids RDTSC it is read without it (the vDSO's
 * clock_gettime would execute RDTSC where the clocksource is the TSC).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

enum { US = 1000, MS = 1000 * US };

static void sleep_ns(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

#define CLOCKSOURCE "/sys/devices/system/clocksource/clocksource0/current_clocksource"

/* Whether the machine lets the TSC stand for CLOCK_MONOTONIC, read here
 * as a test reads it: 1, or 0 with why. */
static int machine_tsc_usable(char *why, size_t cap)
{
#if defined(__x86_64__)
	char *cpuinfo = mt_test_read("/proc/cpuinfo", NULL);
	char *source = mt_test_read(CLOCKSOURCE, NULL);
	int usable = mt_clock_tsc_usable(cpuinfo, source && *source ? source : NULL,
					 mt_clock_vdso_in_user(), why, cap);

	free(cpuinfo);
	free(source);
	return usable;
#else
	snprintf(why, cap, "RDTSC is x86-64's (not this machine)");
	return 0;
#endif
}

/* Read the clock for ms milliseconds, and on until the TSC is in use
 * where the machine allows it (at most two seconds): the calibration
 * takes two readings a millisecond apart, and on a busy machine this
 * thread may be off its core for all of the ms after its first. */
static void read_for(uint64_t ms)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC), now;
	int usable = machine_tsc_usable((char[160]){ 0 }, 160);
	const char *why;

	do {
		mt_clock_now();
		now = clock_ns(CLOCK_MONOTONIC);
	} while (now - start < ms * MS ||
		 (usable && !mt_clock_tsc_in_use(&why) && now - start < 2000 * MS));
}

/* 1 when t is over a microsecond out of CLOCK_MONOTONIC read around it. */
static int off_clock(uint64_t before, uint64_t t, uint64_t after)
{
	return t + US < before || t > after + US;
}

/* Wait for the child pid, which must exit with 0 (its other statuses
 * say which of its checks failed). */
static void wait_child_ok(pid_t pid)
{
	int status;

	mt_quiet_int_eq(waitpid(pid, &status, 0), pid);
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "the child ended with status %#x", status);
}

START_TEST(test_clock_reads_clock_monotonic_and_realtime)
{
	for (int i = 0; i < 100000; i++) {
		uint64_t before = clock_ns(CLOCK_MONOTONIC), t = mt_clock_now();
		uint64_t after = clock_ns(CLOCK_MONOTONIC);

		mt_quiet(!off_clock(before, t, after), "%ju not within 1 us of [%ju, %ju]",
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
	wait_child_ok(pid);
#endif
}
END_TEST

/* Run in a child: which of the process's first readings of
 * CLOCK_REALTIME the kernel answered, under a filter that makes the
 * clock_gettime system call fail (the vDSO answers without it): bit i set
 * when reading i came back as 0.  Exits 3 when the filter cannot be
 * installed. */
static void read_under_a_filter(int locked_down, int fd)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	uint64_t kernel = 0;

	mt_clock_fork_child();
	if (locked_down)
		mt_clock_program_locks_down();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		_exit(3);
	for (int i = 0; i < 64; i++)
		if (!mt_clock_realtime())
			kernel |= 1ull << i;
	if (write(fd, &kernel, sizeof(kernel)) != sizeof(kernel))
		_exit(4);
	_exit(0);
}

static uint64_t kernel_readings(int locked_down)
{
	uint64_t kernel = UINT64_MAX;
	int fds[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		read_under_a_filter(locked_down, fds[1]);
	}
	close(fds[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 3) {
		close(fds[0]);
		return UINT64_MAX;
	}
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(read(fds[0], &kernel, sizeof(kernel)), sizeof(kernel));
	close(fds[0]);
	return kernel;
}

/* A short process reads the clock a few times, and its first reading
 * through the vDSO faults in the vDSO's pages: its first 16 go to the
 * kernel, the rest through the vDSO; a process that may be under a
 * seccomp filter asks the kernel for none. */
START_TEST(test_clock_a_process_asks_the_kernel_its_first_sixteen_readings)
{
	uint64_t kernel;

	if (!mt_clock_vdso_in_user()) {
		MT_TEST_SKIP("needs clock_gettime() answered in user space (the vDSO reads "
			     "this clocksource with a system call)");
		return;
	}
	kernel = kernel_readings(0);
	if (kernel == UINT64_MAX) {
		MT_TEST_SKIP("needs a process free to add a seccomp filter (prctl refused)");
		return;
	}
	mt_quiet(kernel == 0xffff, "readings the kernel answered: %#jx", (uintmax_t)kernel);
	kernel = kernel_readings(1);
	mt_quiet(kernel == 0, "readings the kernel answered after the lock-down: %#jx",
		 (uintmax_t)kernel);
}
END_TEST

/*
 * Ten seconds of readings in bursts, between pauses of a millisecond and
 * now and then of 20 (longer than the anchor's reach): each within a
 * microsecond of clock_gettime() around it, none before the last, and
 * the TSC in use from the first milliseconds to the end.
 */
START_TEST(test_clock_stays_within_a_microsecond_of_clock_monotonic_for_ten_seconds)
{
	uint64_t start, last = 0, readings = 0, worst_ahead = 0, worst_behind = 0;
	const char *why = NULL;
	char found[160];

	if (!machine_tsc_usable(found, sizeof(found))) {
		MT_TEST_SKIP("the TSC cannot stand for CLOCK_MONOTONIC here (%s)", found);
		return;
	}
	read_for(5);
	mt_quiet(mt_clock_tsc_in_use(&why), "the TSC is not in use: %s", why);
	start = clock_ns(CLOCK_MONOTONIC);
	for (int burst = 0; clock_ns(CLOCK_MONOTONIC) - start < 10000ull * MS; burst++) {
		for (int i = 0; i < 2000; i++, readings++) {
			uint64_t before = clock_ns(CLOCK_MONOTONIC), t = mt_clock_now();
			uint64_t after = clock_ns(CLOCK_MONOTONIC);

			if (t > after && t - after > worst_ahead)
				worst_ahead = t - after;
			if (t < before && before - t > worst_behind)
				worst_behind = before - t;
			mt_quiet(!off_clock(before, t, after) && t >= last,
				 "reading %ju: %ju not within 1 us of [%ju, %ju] "
				 "or before the last, %ju", (uintmax_t)readings,
				 (uintmax_t)t, (uintmax_t)before, (uintmax_t)after,
				 (uintmax_t)last);
			last = t;
		}
		sleep_ns(burst % 50 == 49 ? 20 * MS : MS);
	}
	mt_quiet(mt_clock_tsc_in_use(&why), "the TSC went out of use: %s", why);
	printf("clock: %ju readings in 10 s, at worst %ju ns ahead, %ju behind\n",
	       (uintmax_t)readings, (uintmax_t)worst_ahead, (uintmax_t)worst_behind);
}
END_TEST

enum { THREADS = 4 };

static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under order_lock: the readings that broke a promise, and the first. */
static uint64_t order_broken;
static char order_why[256];

/* Readings ordered by a lock, each thread taking turns. */
static void *order_main(void *arg)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC), mine = 0;

	(void)arg;
	while (clock_ns(CLOCK_MONOTONIC) - start < 300 * MS) {
		pthread_mutex_lock(&order_lock);
		for (int i = 0; i < 10; i++) {
			uint64_t before = clock_ns(CLOCK_MONOTONIC), t = mt_clock_now();
			uint64_t after = clock_ns(CLOCK_MONOTONIC);

			if ((off_clock(before, t, after) || t < mine) && !order_broken++)
				snprintf(order_why, sizeof(order_why),
					 "%ju not within 1 us of [%ju, %ju] or before "
					 "the thread's last, %ju", (uintmax_t)t,
					 (uintmax_t)before, (uintmax_t)after, (uintmax_t)mine);
			mine = t;
		}
		pthread_mutex_unlock(&order_lock);
	}
	return NULL;
}

/*
 * From the first reading (the calibration) on, across some 300 anchors,
 * four threads taking turns under a lock: each reading stays within a
 * microsecond of clock_gettime() around it, and none is before its own
 * thread's last.  Nothing orders raw readings between threads: an
 * event's counter, read unfenced, may come out earlier than another
 * thread's reading it follows, by as long as the lock's cache line took
 * to arrive (446 ns seen on an idle machine, 846 on a busy one).  The
 * trace never shows it: the collector holds t from going down along seq
 * (test_core_threads_write_t_in_seq_order).
 */
START_TEST(test_clock_in_threads_taking_turns_stays_within_a_microsecond)
{
	pthread_t t[THREADS];
	const char *why = NULL;
	char found[160];

	for (int i = 0; i < THREADS; i++)
		mt_quiet_int_eq(pthread_create(&t[i], NULL, order_main, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	mt_quiet(!order_broken, "%ju readings broke it, the first: %s",
		 (uintmax_t)order_broken, order_why);
	if (machine_tsc_usable(found, sizeof(found)))
		mt_quiet(mt_clock_tsc_in_use(&why), "the TSC is not in use: %s", why);
}
END_TEST

/* A child keeps its parent's calibration: its first reading is no
 * earlier than the parent's last, and it reads the TSC on, anchoring
 * anew, within a microsecond. */
START_TEST(test_clock_never_goes_back_after_fork)
{
	const char *why = NULL;
	char found[160];
	int usable = machine_tsc_usable(found, sizeof(found));
	uint64_t parent;
	pid_t pid;

	read_for(5);
	parent = mt_clock_now();
	pid = fork();
	mt_quiet(pid >= 0, "fork failed");
	if (pid == 0) {
		uint64_t last = mt_clock_now(), start = clock_ns(CLOCK_MONOTONIC);

		if (last < parent)
			_exit(3);
		while (clock_ns(CLOCK_MONOTONIC) - start < 50 * MS) {
			uint64_t before = clock_ns(CLOCK_MONOTONIC), t = mt_clock_now();
			uint64_t after = clock_ns(CLOCK_MONOTONIC);

			if (t < last)
				_exit(4);
			if (off_clock(before, t, after))
				_exit(5);
			last = t;
		}
		_exit(usable && !mt_clock_tsc_in_use(&why) ? 6 : 0);
	}
	wait_child_ok(pid);
}
END_TEST

/*
 * A process that reads the clock a few times never judges the machine
 * (its files and the vDSO's timing cost what the TSC saves over some
 * 4,096 readings), however long it lives; one that reads it more judges
 * it, and converts the TSC where the machine allows it.  In a child, as
 * the judging is once a process.
 */
START_TEST(test_clock_a_process_that_reads_it_a_few_times_never_judges_the_machine)
{
	const char *why = "";
	char found[160];
	int usable = machine_tsc_usable(found, sizeof(found));
	pid_t pid;

	mt_clock_tsc_in_use(&why);
	if (strcmp(why, "the machine is not judged yet") != 0) {
		MT_TEST_SKIP("this process has judged the machine already (%s)", why);
		return;
	}
	pid = fork();
	mt_quiet(pid >= 0, "fork failed");
	if (pid == 0) {
		alarm(30);
		for (int i = 0; i < 100; i++) {
			mt_clock_now();
			sleep_ns(100 * US);
		}
		if (mt_clock_tsc_in_use(&why) || strcmp(why, "the machine is not judged yet") != 0)
			_exit(3);
		for (int i = 0; i < 5000; i++)
			mt_clock_now();
		read_for(5);
		if (usable ? !mt_clock_tsc_in_use(&why) :
		    mt_clock_tsc_in_use(&why) || !strcmp(why, "the machine is not judged yet"))
			_exit(4);
		_exit(0);
	}
	wait_child_ok(pid);
}
END_TEST

/* A thread that reads the TSC, forbids it, reads the clock by the system
 * call, allows it again and reads the TSC: in a child (a RDTSC made
 * while forbidden kills it), and never going back across the changes. */
START_TEST(test_clock_a_thread_that_changes_its_rdtsc_setting_never_goes_back)
{
#if defined(__x86_64__)
	char found[160];
	int usable = machine_tsc_usable(found, sizeof(found));
	pid_t pid = fork();

	mt_quiet(pid >= 0, "fork failed");
	if (pid == 0) {
		const char *why;
		uint64_t last;

		alarm(30);
		read_for(5);
		if (usable && !mt_clock_tsc_in_use(&why))
			_exit(3);
		last = mt_clock_now();
		for (int round = 0; round < 4; round++) {
			int forbid = round % 2 == 0;

			if (prctl(PR_SET_TSC, forbid ? PR_TSC_SIGSEGV : PR_TSC_ENABLE) != 0)
				_exit(4);
			mt_clock_thread_tsc_changed();
			if (mt_clock_thread_tsc_ok() == forbid || (forbid && mt_clock_tsc_in_use(&why)))
				_exit(5);
			for (int i = 0; i < 20000; i++) {
				uint64_t t = mt_clock_now();

				if (t < last)
					_exit(6);
				last = t;
			}
		}
		_exit(usable && !mt_clock_tsc_in_use(&why) ? 7 : 0);
	}
	wait_child_ok(pid);
#else
	MT_TEST_SKIP("RDTSC is x86-64's (not this machine)");
#endif
}
END_TEST

static const char cpuinfo_head[] =
	"processor\t: 0\nvendor_id\t: AuthenticAMD\n"
	"vmx flags\t: constant_tsc nonstop_tsc\n";

static int usable_with_vdso(const char *flags, const char *source, int vdso_in_user,
			    char *why, size_t cap)
{
	static char text[1024];

	snprintf(text, sizeof(text), "%sflags\t\t: %s\nbugs\t\t: sysret_ss_attrs\n"
		 "\nprocessor\t: 1\nflags\t\t: constant_tsc nonstop_tsc\n",
		 cpuinfo_head, flags);
	return mt_clock_tsc_usable(text, source, vdso_in_user, why, cap);
}

static int usable_with(const char *flags, const char *source, char *why, size_t cap)
{
	return usable_with_vdso(flags, source, 1, why, cap);
}

START_TEST(test_clock_falls_back_where_the_cpuinfo_flags_lack_an_invariant_tsc)
{
	char why[160];

	mt_quiet_int_eq(usable_with("fpu tsc constant_tsc rep_good nopl", "tsc\n", why, sizeof(why)), 0);
	ck_assert_str_eq(why, "/proc/cpuinfo's flags lack nonstop_tsc");
	mt_quiet_int_eq(usable_with("fpu tsc nonstop_tsc_s3 nonstop_tsc", "tsc\n", why, sizeof(why)), 0);
	ck_assert_str_eq(why, "/proc/cpuinfo's flags lack constant_tsc");
	mt_quiet_int_eq(usable_with("", "tsc\n", why, sizeof(why)), 0);
	ck_assert_str_eq(why, "/proc/cpuinfo's flags lack constant_tsc");
	mt_quiet_int_eq(mt_clock_tsc_usable("processor\t: 0\n", "tsc\n", 1, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "no flags line in /proc/cpuinfo");
	mt_quiet_int_eq(mt_clock_tsc_usable(NULL, "tsc\n", 1, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "/proc/cpuinfo not readable");
}
END_TEST

START_TEST(test_clock_falls_back_where_the_clocksource_is_not_the_tsc)
{
	char why[160];

	mt_quiet_int_eq(usable_with("constant_tsc nonstop_tsc", "hpet\n", why, sizeof(why)), 0);
	ck_assert_str_eq(why, "the kernel's clocksource is hpet, not the TSC's");
	mt_quiet_int_eq(usable_with("constant_tsc nonstop_tsc", "acpi_pm\n", why, sizeof(why)), 0);
	ck_assert_str_eq(why, "the kernel's clocksource is acpi_pm, not the TSC's");
	mt_quiet_int_eq(usable_with("constant_tsc nonstop_tsc", "tsc-early\n", why, sizeof(why)), 0);
	ck_assert_str_eq(why, "the kernel's clocksource is tsc-early, not the TSC's");
	mt_quiet_int_eq(usable_with("constant_tsc nonstop_tsc", "kvm-clock-x\n", why, sizeof(why)), 0);
	ck_assert_str_eq(why, "the kernel's clocksource is kvm-clock-x, not the TSC's");
	mt_quiet_int_eq(usable_with("constant_tsc nonstop_tsc", NULL, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "the kernel's clocksource not readable");
}
END_TEST

/* kvm-clock and Hyper-V's TSC page are the TSC scaled by the hypervisor,
 * in step on every CPU only while the vDSO reads them itself. */
START_TEST(test_clock_falls_back_where_the_vdso_reads_a_hypervisor_clock_by_system_call)
{
	char why[160];

	mt_quiet_int_eq(usable_with_vdso("constant_tsc nonstop_tsc", "kvm-clock\n", 0,
					 why, sizeof(why)), 0);
	ck_assert_str_eq(why, "the kernel's clocksource is kvm-clock, which the vDSO reads "
			 "by a system call");
	mt_quiet_int_eq(usable_with_vdso("constant_tsc nonstop_tsc",
					 "hyperv_clocksource_tsc_page\n", 0, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "the kernel's clocksource is hyperv_clocksource_tsc_page, which "
			 "the vDSO reads by a system call");
	mt_quiet_int_eq(usable_with_vdso("constant_tsc", "kvm-clock\n", 1, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "/proc/cpuinfo's flags lack nonstop_tsc");
}
END_TEST

START_TEST(test_clock_takes_the_tsc_where_it_is_invariant_and_the_clocksource)
{
	char why[160] = "";

	mt_quiet_int_eq(usable_with("fpu tsc constant_tsc nonstop_tsc tsc_known_freq", "tsc\n",
				    why, sizeof(why)), 1);
	mt_quiet_int_eq(usable_with("nonstop_tsc constant_tsc", "tsc", why, sizeof(why)), 1);
	mt_quiet_int_eq(usable_with_vdso("nonstop_tsc constant_tsc", "tsc\n", 0, why,
					 sizeof(why)), 1);
}
END_TEST

START_TEST(test_clock_takes_the_tsc_where_the_vdso_reads_a_hypervisor_clock_itself)
{
	char why[160] = "";

	mt_quiet_int_eq(usable_with_vdso("constant_tsc nonstop_tsc", "kvm-clock\n", 1, why,
					 sizeof(why)), 1);
	mt_quiet_int_eq(usable_with_vdso("constant_tsc nonstop_tsc",
					 "hyperv_clocksource_tsc_page", 1, why, sizeof(why)), 1);
}
END_TEST

/* Whether the vDSO reads the clock itself is the machine's (printed; the
 * ten-second test holds the verdict where it says yes).  A thread that
 * forbids RDTSC is never timed, as the vDSO may execute it: it is told no
 * while no thread has timed it.  Timed once, the answer stays the
 * process's, as its verdict on the clock does.  In a child that has timed
 * nothing yet. */
START_TEST(test_clock_never_times_the_vdso_in_a_thread_that_forbids_rdtsc)
{
#if defined(__x86_64__)
	char *source;
	pid_t pid = fork();

	mt_quiet(pid >= 0, "fork failed");
	if (pid == 0) {
		int in_user;

		if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) != 0)
			_exit(3);
		if (mt_clock_vdso_in_user())
			_exit(4);
		if (prctl(PR_SET_TSC, PR_TSC_ENABLE) != 0)
			_exit(3);
		in_user = mt_clock_vdso_in_user();
		for (int i = 0; i < 100; i++)
			if (mt_clock_vdso_in_user() != in_user)
				_exit(5);
		_exit(0);
	}
	wait_child_ok(pid);
	source = mt_test_read(CLOCKSOURCE, NULL);
	printf("clock: the vDSO %s the %.*s clocksource itself\n",
	       mt_clock_vdso_in_user() ? "reads" : "does not read",
	       source ? (int)strcspn(source, "\n") : 7, source ? source : "unknown");
	free(source);
#else
	MT_TEST_SKIP("RDTSC is x86-64's (not this machine)");
#endif
}
END_TEST

Suite *mt_suite_clock(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("clock");

	tcase_add_test(tc, test_clock_reads_clock_monotonic_and_realtime);
	tcase_add_test(tc, test_clock_in_a_thread_that_forbids_rdtsc_makes_the_system_call);
	tcase_add_test(tc, test_clock_a_process_asks_the_kernel_its_first_sixteen_readings);
	tcase_add_test(tc, test_clock_stays_within_a_microsecond_of_clock_monotonic_for_ten_seconds);
	tcase_add_test(tc, test_clock_in_threads_taking_turns_stays_within_a_microsecond);
	tcase_add_test(tc, test_clock_never_goes_back_after_fork);
	tcase_add_test(tc, test_clock_a_thread_that_changes_its_rdtsc_setting_never_goes_back);
	tcase_add_test(tc, test_clock_a_process_that_reads_it_a_few_times_never_judges_the_machine);
	tcase_add_test(tc, test_clock_falls_back_where_the_cpuinfo_flags_lack_an_invariant_tsc);
	tcase_add_test(tc, test_clock_falls_back_where_the_clocksource_is_not_the_tsc);
	tcase_add_test(tc, test_clock_falls_back_where_the_vdso_reads_a_hypervisor_clock_by_system_call);
	tcase_add_test(tc, test_clock_takes_the_tsc_where_it_is_invariant_and_the_clocksource);
	tcase_add_test(tc, test_clock_takes_the_tsc_where_the_vdso_reads_a_hypervisor_clock_itself);
	tcase_add_test(tc, test_clock_never_times_the_vdso_in_a_thread_that_forbids_rdtsc);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
