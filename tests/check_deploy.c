/*
 * check_deploy: the shapes a traced program is deployed in (a daemon, a container's pid 1, a subreaper, a service stopped by systemd, seccomp, no pidfd): the program runs as it does bare and its trace is whole.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/mt_ring.h"
#include "mt_test.h"
#include "mt_test_trace.h"

/*
 * Run PROG ARGS in a shape of tests/workloads/wl_launch.c (nopidfd,
 * nofile6, pid1), traced to trace.  Returns 0 with r filled, or 1 after
 * one skip line naming test when the machine cannot make the shape.
 */
static int run_launched(const char *test, mt_test_run_t *r, const char *shape,
			const char *trace, const char *prog, const char *arg1,
			const char *arg2)
{
	char *launch = mt_test_workload("wl_launch"), *path = mt_test_workload(prog);
	char preload[4096], out[4096];
	char *env[] = { preload, out, NULL };
	char *argv[] = { launch, (char *)shape, path, (char *)arg1, (char *)arg2, NULL };

	snprintf(preload, sizeof(preload), "WL_PRELOAD=%s/libmtpreload.so",
		 mt_test_build_dir());
	snprintf(out, sizeof(out), "MEMTRACE_OUTPUT=%s", trace);
	mt_test_run(r, argv, env);
	free(launch);
	free(path);
	if (r->status == 77 && strstr(r->err, "wl_launch: ")) {
		char *nl = strchr(r->err, '\n');

		if (nl)
			*nl = '\0';
		mt_test_skip(test, "the shape '%s' cannot be made here (%s)", shape,
			     r->err);
		mt_test_run_release(r);
		return 1;
	}
	return 0;
}

/* The trace holds every one of allocs allocations of size and frees
 * (when not 0), ends with reason, and memtrace check calls it complete. */
static void assert_whole(const char *trace, const char *reason, long size,
			 int allocs, int frees)
{
	char *status;

	mt_test_wait_trace_finished(trace);
	mt_test_assert_trace_whole(trace, reason);
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "complete");
	free(status);
	mt_quiet_int_eq(mt_test_trace_count(trace, "alloc", size), allocs);
	mt_quiet_int_eq(mt_test_trace_count(trace, "free", 0), frees);
}

/* wl_fill N in a shape: N malloc+free pairs, all in the trace. */
static void check_fill(const char *test, const char *shape, int n)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char arg[16], expect[64];
	mt_test_run_t r;

	snprintf(arg, sizeof(arg), "%d", n);
	snprintf(expect, sizeof(expect), "fill: %d\n", n);
	if (!run_launched(test, &r, shape, trace, "wl_fill", arg, NULL)) {
		mt_quiet(r.status == 0, "status %d, stderr: %s", r.status, r.err);
		ck_assert_str_eq(r.out, expect);
		assert_whole(trace, "exit", 100, n, n);
		mt_test_run_release(&r);
	}
	free(trace);
}

/* wl_steps 2 64 in a shape: two allocations 100 ms apart, then exit with
 * both live; few events, so a collector that took the program for gone
 * at its start would write almost nothing. */
static void check_steps(const char *test, const char *shape)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;

	if (!run_launched(test, &r, shape, trace, "wl_steps", "2", "64")) {
		mt_quiet(r.status == 0, "status %d, stderr: %s", r.status, r.err);
		mt_quiet(r.err_len == 0, "stderr: %s", r.err);
		assert_whole(trace, "exit", 64, 2, 0);
		mt_test_run_release(&r);
	}
	free(trace);
}

/* pidfd_open fails with ENOSYS (seccomp, as a container profile or a
 * kernel before 5.3 has it): the collector watches the program another
 * way and writes every one of 100,002 allocations and the stop. */
START_TEST(test_without_pidfd_open_a_long_trace_keeps_every_event)
{
	check_fill(__func__, "nopidfd", 100002);
}
END_TEST

START_TEST(test_without_pidfd_open_a_short_trace_is_complete)
{
	check_steps(__func__, "nopidfd");
}
END_TEST

/* ulimit -n 6: the ring and the pidfd still get their numbers in the
 * collector. */
START_TEST(test_under_ulimit_n_6_a_long_trace_keeps_every_event)
{
	check_fill(__func__, "nofile6", 100002);
}
END_TEST

START_TEST(test_under_ulimit_n_6_a_short_trace_is_complete)
{
	check_steps(__func__, "nofile6");
}
END_TEST

/* Whether process pid has exited (not reaped: it may be a zombie). */
static int exited(pid_t pid, int *status)
{
	pid_t got = waitpid(pid, status, WNOHANG);

	mt_quiet(got >= 0, "waitpid %d: %s", (int)pid, strerror(errno));
	return got == pid;
}

/*
 * The collector started by hand, as the preload starts it, on a ring of
 * 64 empty slots, for program, with /dev/null on fd 4 and its command
 * line saying fd 4 is the program's pidfd: it must take nothing but a
 * pidfd for one.  It watches the program another way, and sees its end
 * while it is a zombie its parent has not reaped yet.
 */
START_TEST(test_the_collector_takes_only_a_pidfd_for_one_and_sees_an_unreaped_end)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char collector[4096], pid_s[24];
	size_t len = MT_RING_HDR_SIZE + 64 * MT_RING_SLOT;
	int ring, gate[2], st;
	mt_ring_hdr_t *h;
	pid_t program, pid;
	time_t end;

	snprintf(collector, sizeof(collector), "%s/memtrace-collector", mt_test_build_dir());
	ring = memfd_create("memtrace-ring", MFD_CLOEXEC);
	mt_quiet(ring >= 0 && ftruncate(ring, (off_t)len) == 0, "memfd: %s", strerror(errno));
	h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, 0);
	mt_quiet(h != MAP_FAILED, "mmap: %s", strerror(errno));
	h->magic = MT_RING_MAGIC;
	h->nslots = 64;
	mt_quiet_int_eq(pipe2(gate, O_CLOEXEC), 0);
	program = fork();
	ck_assert_int_ge(program, 0);
	if (program == 0) {
		char c;

		close(gate[1]);
		_exit(read(gate[0], &c, 1) == 0 ? 0 : 1);
	}
	close(gate[0]);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)program);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(ring, 3) < 0 || dup2(null, 4) < 0)
			_exit(125);
		execl(collector, "memtrace-collector", trace, "1", pid_s, "4", (char *)NULL);
		_exit(126);
	}
	end = time(NULL) + 10;
	while (atomic_load(&h->state) == MT_RING_STARTING) {
		mt_quiet(!exited(pid, &st), "the collector ended at its start: status %#x", st);
		mt_quiet(time(NULL) < end, "the collector never opened %s", trace);
		usleep(1000);
	}
	mt_quiet_int_eq(atomic_load(&h->state), MT_RING_WRITING);
	/* Many naps later the program runs, and so does its collector. */
	usleep(300 * 1000);
	mt_quiet(!exited(pid, &st), "the collector ended while the program ran: status %#x", st);
	mt_quiet_int_eq(atomic_load(&h->state), MT_RING_WRITING);
	/* The program ends, and stays a zombie until the collector is done. */
	close(gate[1]);
	end = time(NULL) + 10;
	while (!exited(pid, &st)) {
		mt_quiet(time(NULL) < end, "the collector never saw the program's end");
		usleep(1000);
	}
	mt_quiet(WIFEXITED(st) && WEXITSTATUS(st) == 0, "collector status %#x", st);
	mt_quiet_int_eq(atomic_load(&h->state), MT_RING_DONE);
	mt_quiet_int_eq(waitpid(program, &st, 0), program);
	mt_quiet(WIFEXITED(st) && WEXITSTATUS(st) == 0, "program status %#x", st);
	munmap(h, len);
	close(ring);
	free(trace);
}
END_TEST

/*
 * A process killed while its collector starts (before its trace.start is
 * in the ring) recorded nothing: the collector removes the file it made
 * rather than leave an empty, invalid trace.  The program here records
 * nothing and ends; its trace name is a derived one (ROOT 0).
 */
START_TEST(test_a_program_that_ends_before_its_first_record_leaves_no_file)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.9.jsonl");
	char collector[4096], pid_s[24];
	size_t len = MT_RING_HDR_SIZE + 64 * MT_RING_SLOT;
	int ring, st;
	mt_ring_hdr_t *h;
	pid_t program, pid;
	time_t end;

	snprintf(collector, sizeof(collector), "%s/memtrace-collector", mt_test_build_dir());
	ring = memfd_create("memtrace-ring", MFD_CLOEXEC);
	mt_quiet(ring >= 0 && ftruncate(ring, (off_t)len) == 0, "memfd: %s", strerror(errno));
	h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, 0);
	mt_quiet(h != MAP_FAILED, "mmap: %s", strerror(errno));
	h->magic = MT_RING_MAGIC;
	h->nslots = 64;
	program = fork();
	ck_assert_int_ge(program, 0);
	if (program == 0)
		_exit(0);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)program);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (dup2(ring, 3) < 0)
			_exit(125);
		execl(collector, "memtrace-collector", trace, "0", pid_s, "-", (char *)NULL);
		_exit(126);
	}
	end = time(NULL) + 10;
	while (!exited(pid, &st)) {
		mt_quiet(time(NULL) < end, "the collector never saw the program's end");
		usleep(1000);
	}
	mt_quiet(WIFEXITED(st) && WEXITSTATUS(st) == 0, "collector status %#x", st);
	mt_quiet_int_eq(atomic_load(&h->state), MT_RING_DONE);
	ck_assert_msg(!mt_test_exists(trace), "%s was left behind", trace);
	mt_quiet_int_eq(waitpid(program, &st, 0), program);
	munmap(h, len);
	close(ring);
	free(trace);
}
END_TEST


/*
 * systemctl stop: SIGTERM to every process of the service, the collector
 * first.  The collector outlives it and finishes the trace once the
 * program has died of it: a stop with reason signal, and every
 * malloc+free pair wl_burst had counted as finished.
 */
START_TEST(test_sigterm_to_the_program_and_its_collector_keeps_the_trace_whole)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *count = mt_test_path(dir, "count"), *prog = mt_test_workload("wl_burst");
	char preload[4096], out[4096];
	_Atomic uint64_t *done;
	pid_t pid, collector = 0;
	uint64_t finished;
	int fd, st;
	time_t end;

	fd = open(count, O_RDWR | O_CREAT, 0600);
	mt_quiet(fd >= 0 && ftruncate(fd, 4096) == 0, "%s: %s", count, strerror(errno));
	done = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	mt_quiet(done != MAP_FAILED, "mmap: %s", strerror(errno));
	close(fd);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so",
		 mt_test_build_dir());
	snprintf(out, sizeof(out), "MEMTRACE_OUTPUT=%s", trace);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		putenv(preload);
		putenv(out);
		execl(prog, prog, count, (char *)NULL);
		_exit(127);
	}
	end = time(NULL) + 30;
	while (atomic_load(done) < 10000 || !(collector = mt_test_find_collector(pid))) {
		mt_quiet(time(NULL) < end, "wl_burst finished %ju pairs, collector %d",
			 (uintmax_t)atomic_load(done), (int)mt_test_find_collector(pid));
		usleep(1000);
	}
	mt_quiet_int_eq(kill(collector, SIGTERM), 0);
	mt_quiet_int_eq(kill(pid, SIGTERM), 0);
	mt_quiet_int_eq(waitpid(pid, &st, 0), pid);
	mt_quiet(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "wl_burst: status %#x", st);
	finished = atomic_load(done);
	mt_test_wait_trace_finished(trace);
	mt_test_assert_trace_whole(trace, "signal");
	{
		char *status = mt_test_check_status(trace);

		ck_assert_str_eq(status, "complete");
		free(status);
	}
	mt_quiet_uint_ge((uintmax_t)mt_test_trace_count(trace, "alloc", 4242), finished);
	mt_quiet_uint_ge((uintmax_t)mt_test_trace_count(trace, "free", 0), finished);
	munmap((void *)done, 4096);
	free(prog);
	free(count);
	free(trace);
}
END_TEST

/*
 * Run argv under `memtrace record` (a pid-namespace init cannot be traced
 * by plain LD_PRELOAD: its collector would be its child), its traces named
 * after output (MEMTRACE_OUTPUT, which record keeps).
 */
static void run_recorded(mt_test_run_t *r, char *const argv[], const char *output)
{
	char *args[16], env_out[4200];
	char *env[] = { env_out, NULL };
	size_t n = 0;

	args[n++] = mt_test_memtrace();
	args[n++] = "record";
	args[n++] = "--";
	for (size_t i = 0; argv[i] && n < 15; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	snprintf(env_out, sizeof(env_out), "MEMTRACE_OUTPUT=%s", output);
	mt_test_run(r, args, env);
	free(args[0]);
}

/*
 * A SIGTERM that pid 1 of a pid namespace sends itself: bare, the kernel
 * drops it (init has no handler for it) and the program runs on; traced,
 * it runs on and so does its trace: the allocations after the signal are
 * in it and it ends with reason exit.
 */
START_TEST(test_sigterm_to_a_namespace_init_leaves_its_trace_running)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *launch = mt_test_workload("wl_launch"), *prog = mt_test_workload("wl_selfterm");
	char *init = mt_test_path(dir, "t.1.1.jsonl");
	char *argv[] = { launch, "pid1", prog, "1000", NULL };
	mt_test_run_t r;

	run_recorded(&r, argv, trace);
	if (r.status == 77 && strstr(r.err, "wl_launch: ")) {
		r.err[strcspn(r.err, "\n")] = '\0';
		MT_TEST_SKIP("the shape 'pid1' cannot be made here (%s)", r.err);
	} else {
		mt_quiet(r.status == 0, "status %d, stderr: %s", r.status, r.err);
		ck_assert_str_eq(r.out, "survived\n");
		/* The launcher's trace is t.jsonl, its child's until it execs
		 * t.1.jsonl (pid 1 in its namespace), pid 1's program's
		 * t.1.1.jsonl. */
		assert_whole(init, "exit", 64, 2000, 2000);
	}
	mt_test_run_release(&r);
	free(init);
	free(launch);
	free(prog);
	free(trace);
}
END_TEST

/*
 * The same from a process that becomes pid 1 after its tracing started:
 * wl_selfterm makes the namespaces itself and forks into them, its child
 * inheriting the hidden handler; the child's trace runs on all the same.
 */
START_TEST(test_sigterm_to_a_process_forked_as_init_leaves_its_trace_running)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_selfterm"), *child;
	char *argv[] = { prog, "1000", "ns", NULL };
	mt_test_run_t r;
	char **names;
	size_t n;

	run_recorded(&r, argv, trace);
	if (r.status == 77 && strstr(r.err, "wl_selfterm: ")) {
		r.err[strcspn(r.err, "\n")] = '\0';
		MT_TEST_SKIP("user and pid namespaces cannot be made here (%s)", r.err);
		goto done;
	}
	mt_quiet(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "survived\n");
	/* The parent's own trace, and its child's, pid 1 in its namespace. */
	names = mt_test_traces(dir, &n);
	mt_quiet_int_eq(n, 2);
	ck_assert_str_eq(names[0], "t.1.jsonl");
	child = mt_test_path(dir, names[0]);
	assert_whole(child, "exit", 64, 2000, 2000);
	free(child);
	mt_test_traces_release(names, n);
done:
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

static void add_lockdown_tests(Suite *s);

Suite *mt_suite_deploy(void)
{
	Suite *s = suite_create("deploy");
	TCase *pidfd = tcase_create("no_pidfd");
	TCase *signals = tcase_create("operator_signals");

	tcase_add_test(pidfd, test_without_pidfd_open_a_long_trace_keeps_every_event);
	tcase_add_test(pidfd, test_without_pidfd_open_a_short_trace_is_complete);
	tcase_add_test(pidfd, test_under_ulimit_n_6_a_long_trace_keeps_every_event);
	tcase_add_test(pidfd, test_under_ulimit_n_6_a_short_trace_is_complete);
	tcase_add_test(pidfd, test_the_collector_takes_only_a_pidfd_for_one_and_sees_an_unreaped_end);
	tcase_add_test(pidfd, test_a_program_that_ends_before_its_first_record_leaves_no_file);
	suite_add_tcase(s, pidfd);
	tcase_add_test(signals, test_sigterm_to_the_program_and_its_collector_keeps_the_trace_whole);
	tcase_add_test(signals, test_sigterm_to_a_namespace_init_leaves_its_trace_running);
	tcase_add_test(signals, test_sigterm_to_a_process_forked_as_init_leaves_its_trace_running);
	suite_add_tcase(s, signals);

	add_lockdown_tests(s);

	return s;
}

/* ---- programs that lock themselves down (seccomp) ---- */

/* wl_seccomp with argv run bare, then traced into trace: 0 after a skip
 * line where seccomp filters cannot be installed; else 1, both exited 5
 * with the same stdout, the traced run's stderr is err, and *traced is the
 * caller's to release. */
static int run_bare_and_traced(const char *test, char *const argv[], const char *trace,
			       const char *err, mt_test_run_t *traced)
{
	mt_test_run_t bare;

	mt_test_run(&bare, argv, NULL);
	if (bare.status == 77) {
		mt_test_skip(test, "seccomp filters cannot be installed here (%s)", bare.err);
		mt_test_run_release(&bare);
		return 0;
	}
	ck_assert_int_eq(bare.status, 5);
	mt_test_run_traced(traced, argv, trace, NULL);
	ck_assert_msg(traced->status == 5, "traced: status %d (bare 5), stderr: %s",
		      traced->status, traced->err);
	ck_assert_str_eq(traced->out, bare.out);
	ck_assert_str_eq(traced->err, err);
	mt_test_run_release(&bare);
	return 1;
}

static void assert_complete(const char *trace)
{
	char *status = mt_test_check_status(trace);

	ck_assert_str_eq(status, "complete");
	free(status);
}

/* wl_seccomp allocates, locks its system calls down to a strict allowlist
 * (every other call kills it), allocates from new call sites and exits 5
 * with its stdout still buffered.  Traced, it ends as bare: status 5, all
 * its output, and a complete trace with every allocation, those after the
 * lock-down too: the tracer's paths after start need no other call. */
START_TEST(test_a_program_that_locks_itself_down_ends_as_bare)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_seccomp");
	char *argv[] = { prog, NULL };
	mt_test_run_t traced;

	if (run_bare_and_traced(__func__, argv, trace, "", &traced)) {
		assert_complete(trace);
		ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 111), 1000);
		ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 555), 1000);
		ck_assert_int_eq(mt_test_trace_count(trace, "free", 0), 2000);
		mt_test_run_release(&traced);
	}
	free(prog);
	free(trace);
}
END_TEST

/* The same, the allocations after the lock-down made in a thread started
 * after it (the filter allows what a thread's start needs bare): the new
 * thread's first event asks the kernel nothing either. */
START_TEST(test_a_thread_started_after_the_lock_down_is_traced)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_seccomp");
	char *argv[] = { prog, "thread", NULL };
	mt_test_run_t traced;

	if (run_bare_and_traced(__func__, argv, trace, "", &traced)) {
		assert_complete(trace);
		ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 111), 1000);
		ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 555), 1000);
		mt_test_run_release(&traced);
	}
	free(prog);
	free(trace);
}
END_TEST

/* The same program with its first allocation after the lock-down: the
 * tracer reads the module table when the program installs its filter
 * (the hook sees it), not at the first frame it names, which would open
 * /proc/self/maps under a filter that kills whatever opens a file. */
START_TEST(test_a_program_whose_first_allocation_follows_its_lock_down_is_traced)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_seccomp"), *data;
	char *argv[] = { prog, "first", NULL };
	mt_test_run_t traced;

	if (run_bare_and_traced(__func__, argv, trace, "", &traced)) {
		assert_complete(trace);
		ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 555), 1000);
		data = mt_test_read(trace, NULL);
		ck_assert_ptr_nonnull(strstr(data, "\"symbol\":\"after_a\""));
		free(data);
		mt_test_run_release(&traced);
	}
	free(prog);
	free(trace);
}
END_TEST

/* The machine's clock is judged when the program installs its filter,
 * as the reading of its files could be refused, or fatal, after it: the
 * exiting thread's account (MEMTRACE_STATS) gives the machine's verdict,
 * never "not judged yet" (a process judges only once it has read the
 * clock 4,096 times, and this one reads it fewer times) nor the verdict
 * of a filter that came first.  Alone and with a thread. */
START_TEST(test_a_program_that_locks_itself_down_judges_the_clock_first)
{
	static const char *const how[] = { "first", "thread" };
	char *dir = mt_test_scratch(), *prog = mt_test_workload("wl_seccomp");

	for (size_t i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		char *argv[] = { prog, (char *)how[i], NULL };
		char *trace = mt_test_path(dir, how[i]);
		mt_test_run_t traced;
		const char *line;

		mt_test_run_traced(&traced, argv, trace, "MEMTRACE_STATS=1");
		free(trace);
		if (traced.status == 77) {
			mt_test_skip(__func__, "seccomp filters cannot be installed here (%s)",
				     traced.err);
			mt_test_run_release(&traced);
			break;
		}
		ck_assert_msg(traced.status == 5, "%s: status %d, stderr: %s", how[i],
			      traced.status, traced.err);
		line = strstr(traced.err, "memtrace: clock: ");
		ck_assert_msg(line, "%s: no clock line: %s", how[i], traced.err);
		ck_assert_msg(!strstr(line, "not judged yet") && !strstr(line, "seccomp"),
			      "%s: %s", how[i], traced.err);
		mt_test_run_release(&traced);
	}
	free(prog);
}
END_TEST

/* The same program with a filter that refuses (EPERM) what it does not
 * allow, loading a library after the lock-down: the tracer cannot read
 * the new module's file (its child is refused), so tracing stops with
 * one line; the program's status and output are as bare, and its trace
 * holds what came before. */
START_TEST(test_a_refused_system_call_stops_tracing_with_one_line)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_seccomp");
	char *lib = mt_test_path(mt_test_build_dir(), "workloads/libwl_strippable.so");
	char *argv[] = { prog, lib, NULL };
	mt_test_run_t traced;

	if (run_bare_and_traced(__func__, argv, trace,
				"memtrace: a system call the tracer needs was refused "
				"(clone: Operation not permitted); tracing stops, the "
				"program runs on\n",
				&traced)) {
		mt_test_wait_trace_finished(trace);
		ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 111), 1000);
		ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 4444), 0);
		mt_test_run_release(&traced);
	}
	free(prog);
	free(lib);
	free(trace);
}
END_TEST

static void add_lockdown_tests(Suite *s)
{
	TCase *tc = tcase_create("lockdown");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_a_program_that_locks_itself_down_ends_as_bare);
	tcase_add_test(tc, test_a_thread_started_after_the_lock_down_is_traced);
	tcase_add_test(tc, test_a_program_whose_first_allocation_follows_its_lock_down_is_traced);
	tcase_add_test(tc, test_a_program_that_locks_itself_down_judges_the_clock_first);
	tcase_add_test(tc, test_a_refused_system_call_stops_tracing_with_one_line);
	suite_add_tcase(s, tc);
}
