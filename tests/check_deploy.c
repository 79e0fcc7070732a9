/*
 * check_deploy: the shapes a traced program is deployed in (a daemon, a container's pid 1, a subreaper, a service stopped by systemd, seccomp, no pidfd): the program runs as it does bare and its trace is whole.
 */
#include <stdlib.h>

#include "mt_test.h"
#include "mt_test_trace.h"

static void add_lockdown_tests(Suite *s);

Suite *mt_suite_deploy(void)
{
	Suite *s = suite_create("deploy");

	add_lockdown_tests(s);

	return s;
}

/* ---- programs that lock themselves down (seccomp) ---- */

/* wl_seccomp allocates, locks its system calls down to a strict allowlist
 * (every other call kills it), allocates from new call sites and exits 5
 * with its stdout still buffered.  Traced, it ends as bare: status 5, all
 * its output, and a complete trace with every allocation, those after the
 * lock-down too: the tracer's paths after start need no other call. */
START_TEST(test_a_program_that_locks_itself_down_ends_as_bare)
{
	char *dir = mt_test_tmpdir(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_seccomp"), *status;
	char *argv[] = { prog, NULL };
	mt_test_run_t bare, traced;

	mt_test_run(&bare, argv, NULL);
	if (bare.status == 77) {
		MT_TEST_SKIP("seccomp filters cannot be installed here (%s)", bare.err);
		goto out;
	}
	ck_assert_int_eq(bare.status, 5);
	mt_test_run_traced(&traced, argv, trace, NULL);
	ck_assert_msg(traced.status == 5, "traced: status %d (bare 5), stderr: %s",
		      traced.status, traced.err);
	ck_assert_str_eq(traced.out, bare.out);
	ck_assert_str_eq(traced.err, "");
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "complete");
	free(status);
	ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 111), 1000);
	ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 555), 1000);
	ck_assert_int_eq(mt_test_trace_count(trace, "free", 0), 2000);
	mt_test_run_release(&traced);
out:
	mt_test_run_release(&bare);
	free(prog);
	free(trace);
	mt_test_rmdir(dir);
	free(dir);
}
END_TEST

/* The same, the allocations after the lock-down made in a thread started
 * after it (the filter allows what a thread's start needs bare): the new
 * thread's first event asks the kernel nothing either. */
START_TEST(test_a_thread_started_after_the_lock_down_is_traced)
{
	char *dir = mt_test_tmpdir(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_seccomp"), *status;
	char *argv[] = { prog, "thread", NULL };
	mt_test_run_t bare, traced;

	mt_test_run(&bare, argv, NULL);
	if (bare.status == 77) {
		MT_TEST_SKIP("seccomp filters cannot be installed here (%s)", bare.err);
		goto out;
	}
	ck_assert_int_eq(bare.status, 5);
	mt_test_run_traced(&traced, argv, trace, NULL);
	ck_assert_msg(traced.status == 5, "traced: status %d (bare 5), stderr: %s",
		      traced.status, traced.err);
	ck_assert_str_eq(traced.out, bare.out);
	ck_assert_str_eq(traced.err, "");
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "complete");
	free(status);
	ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 111), 1000);
	ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 555), 1000);
	mt_test_run_release(&traced);
out:
	mt_test_run_release(&bare);
	free(prog);
	free(trace);
	mt_test_rmdir(dir);
	free(dir);
}
END_TEST

/* The same program with a filter that refuses (EPERM) what it does not
 * allow, loading a library after the lock-down: the tracer cannot read
 * the new module's file (its child is refused), so tracing stops with
 * one line; the program's status and output are as bare, and its trace
 * holds what came before. */
START_TEST(test_a_refused_system_call_stops_tracing_with_one_line)
{
	char *dir = mt_test_tmpdir(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_seccomp"), *lib;
	char *argv[] = { prog, NULL, NULL };
	mt_test_run_t bare, traced;

	lib = mt_test_path(mt_test_build_dir(), "workloads/libwl_strippable.so");
	argv[1] = lib;
	mt_test_run(&bare, argv, NULL);
	if (bare.status == 77) {
		MT_TEST_SKIP("seccomp filters cannot be installed here (%s)", bare.err);
		goto out;
	}
	ck_assert_int_eq(bare.status, 5);
	mt_test_run_traced(&traced, argv, trace, NULL);
	ck_assert_msg(traced.status == 5, "traced: status %d (bare 5), stderr: %s",
		      traced.status, traced.err);
	ck_assert_str_eq(traced.out, bare.out);
	ck_assert_str_eq(traced.err, "memtrace: a system call the tracer needs was refused "
				     "(clone: Operation not permitted); tracing stops, the "
				     "program runs on\n");
	mt_test_wait_trace_finished(trace);
	ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 111), 1000);
	ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 4444), 0);
	mt_test_run_release(&traced);
out:
	mt_test_run_release(&bare);
	free(prog);
	free(lib);
	free(trace);
	mt_test_rmdir(dir);
	free(dir);
}
END_TEST

static void add_lockdown_tests(Suite *s)
{
	TCase *tc = tcase_create("lockdown");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_a_program_that_locks_itself_down_ends_as_bare);
	tcase_add_test(tc, test_a_thread_started_after_the_lock_down_is_traced);
	tcase_add_test(tc, test_a_refused_system_call_stops_tracing_with_one_line);
	suite_add_tcase(s, tc);
}
