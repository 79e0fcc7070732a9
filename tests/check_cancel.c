/*
 * check_cancel: a thread cancelled anywhere in an allocation leaves the tracer consistent: no cancellation point inside a hook acts.
 */
#include <stdlib.h>

#include "mt_test.h"
#include "mt_test_trace.h"

/* wl_cancel: cancels at every point of an allocation loop, a cancel
 * pending when malloc is called, then a fork.  Traced it ends as bare
 * (an alarm ends it otherwise), and both traces, the program's and its
 * child's, are complete, the last allocation in the program's. */
START_TEST(test_cancelled_threads_leave_the_tracer_able_to_fork)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_cancel"), *status;
	char *argv[] = { prog, "60", NULL };
	mt_test_run_t bare, traced;

	mt_test_run(&bare, argv, NULL);
	ck_assert_int_eq(bare.status, 0);
	mt_test_run_traced(&traced, argv, trace, NULL);
	ck_assert_msg(traced.status == 0, "traced: status %d (bare 0), stderr: %s",
		      traced.status, traced.err);
	ck_assert_str_eq(traced.out, "done\n");
	ck_assert_str_eq(traced.err, "");
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "complete");
	free(status);
	ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 4242), 1);
	ck_assert_uint_eq(mt_test_assert_traces_complete(dir), 2);
	mt_test_run_release(&bare);
	mt_test_run_release(&traced);
	free(prog);
	free(trace);
}
END_TEST

Suite *mt_suite_cancel(void)
{
	Suite *s = suite_create("cancel");
	TCase *tc = tcase_create("cancel");

	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_cancelled_threads_leave_the_tracer_able_to_fork);
	suite_add_tcase(s, tc);
	return s;
}
