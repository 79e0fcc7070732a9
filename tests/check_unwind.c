/*
 * check_unwind: the fast unwinder (preload/mt_unwind_cache.c) gives the
 * stacks libunwind gives.  Each test runs a program under
 * MEMTRACE_UNWIND=verify, which walks every event's stack with both and
 * says so on the first difference: the test asserts no difference was
 * said, that the fast walker walked (MEMTRACE_STATS=1's unwind line), and
 * that every trace is complete.  The programs are the stacks that break
 * unwinders: longjmp, swapcontext, sigaltstack, C++ exceptions, threads,
 * deep recursion, at -O0 and -O2, and python3 and sqlite3.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mt_test.h"

/* Every trace in dir passes memtrace check; returns how many. */
static int traces_complete(const char *dir)
{
	char *mt = mt_test_memtrace();
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	mt_quiet_ptr_nonnull(d);
	while ((e = readdir(d))) {
		char *trace;
		mt_test_run_t r;

		if (e->d_name[0] == '.')
			continue;
		trace = mt_test_path(dir, e->d_name);
		{
			char *argv[] = { mt, "check", trace, NULL };

			mt_test_run(&r, argv, NULL);
		}
		mt_quiet(r.status == 0, "trace %s is not complete: %s%s", e->d_name, r.out,
			 r.err);
		mt_test_run_release(&r);
		free(trace);
		n++;
	}
	closedir(d);
	free(mt);
	return n;
}

/* Run argv under the preload with MEMTRACE_UNWIND=verify (and env):
 * exit 0, no difference said, the fast walker used, a complete trace. */
static void verify_run(char *const argv[], const char *env1)
{
	char preload[4096], output[4096], *env[8];
	char *dir = mt_test_scratch(), *traces = mt_test_path(dir, "traces");
	const char *line;
	uint64_t fast = 0, slow = 0;
	mt_test_run_t r;
	int n = 0;

	mt_quiet_int_eq(mkdir(traces, 0700), 0);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s/t.%%p.jsonl", traces);
	env[n++] = preload;
	env[n++] = output;
	env[n++] = "MEMTRACE_UNWIND=verify";
	env[n++] = "MEMTRACE_STATS=1";
	if (env1)
		env[n++] = (char *)env1;
	env[n] = NULL;
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "%s exited %d: %s", argv[0], r.status, r.err);
	mt_quiet(!strstr(r.err, "differ"), "%s: %s", argv[0], r.err);
	line = strstr(r.err, "memtrace: unwind: fast ");
	mt_quiet(line && sscanf(line, "memtrace: unwind: fast %" SCNu64 " libunwind %" SCNu64,
				&fast, &slow) == 2,
		 "%s: no unwind line: %s", argv[0], r.err);
	mt_quiet(fast > 0, "%s: the fast walker walked no stack (%" PRIu64 " left to libunwind)",
		 argv[0], slow);
	mt_quiet(traces_complete(traces) >= 1, "%s left no trace", argv[0]);
	mt_test_run_release(&r);
	free(traces);
}

/* The workload tests/workloads/name at -O0, then at -O2, in mode. */
static void verify_both_builds(const char *name, char *mode)
{
	char o2[256];
	char *w = mt_test_workload(name), *w2;

	snprintf(o2, sizeof(o2), "o2/%s", name);
	w2 = mt_test_workload(o2);
	{
		char *argv[] = { w, mode, NULL };

		verify_run(argv, NULL);
	}
	{
		char *argv[] = { w2, mode, NULL };

		verify_run(argv, NULL);
	}
	free(w);
	free(w2);
}

START_TEST(test_longjmp_out_of_allocating_frames_unwinds_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "longjmp");
}
END_TEST

START_TEST(test_swapcontext_coroutines_unwind_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "swapcontext");
}
END_TEST

START_TEST(test_a_signal_handler_on_sigaltstack_unwinds_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "sigaltstack");
}
END_TEST

START_TEST(test_eight_threads_unwind_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "threads");
}
END_TEST

START_TEST(test_a_recursion_deeper_than_a_stack_unwinds_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "recurse");
}
END_TEST

START_TEST(test_cxx_throw_and_catch_through_allocating_frames_unwinds_as_libunwind_does)
{
	verify_both_builds("wl_unwind_throw", NULL);
}
END_TEST

START_TEST(test_python3_unwinds_as_libunwind_does)
{
	char *argv[] = { "/usr/bin/python3", "-S", "-c",
			 "import json\n"
			 "d = {str(i): [i, str(i) * 3, {'k': i}] for i in range(60000)}\n"
			 "s = json.dumps(d)\n"
			 "e = json.loads(s)\n"
			 "print(len(sorted(e.items())))\n",
			 NULL };

	if (access(argv[0], X_OK))
		MT_TEST_SKIP("needs %s (not found)", argv[0]);
	verify_run(argv, "PYTHONMALLOC=malloc");
}
END_TEST

START_TEST(test_sqlite3_unwinds_as_libunwind_does)
{
	char *argv[] = { "/usr/bin/sqlite3", ":memory:",
			 "create table t(a integer primary key, b text);"
			 "with recursive c(x) as (select 1 union all select x + 1 from c "
			 "where x < 30000) insert into t select x, hex(randomblob(16)) from c;"
			 "create index tb on t(b);"
			 "select count(*) from t;",
			 NULL };

	if (access(argv[0], X_OK))
		MT_TEST_SKIP("needs %s (not found)", argv[0]);
	verify_run(argv, NULL);
}
END_TEST

Suite *mt_suite_unwind(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("verify");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_longjmp_out_of_allocating_frames_unwinds_as_libunwind_does);
	tcase_add_test(tc, test_swapcontext_coroutines_unwind_as_libunwind_does);
	tcase_add_test(tc, test_a_signal_handler_on_sigaltstack_unwinds_as_libunwind_does);
	tcase_add_test(tc, test_eight_threads_unwind_as_libunwind_does);
	tcase_add_test(tc, test_a_recursion_deeper_than_a_stack_unwinds_as_libunwind_does);
	tcase_add_test(tc,
		       test_cxx_throw_and_catch_through_allocating_frames_unwinds_as_libunwind_does);
	tcase_add_test(tc, test_python3_unwinds_as_libunwind_does);
	tcase_add_test(tc, test_sqlite3_unwinds_as_libunwind_does);
	suite_add_tcase(s, tc);
	return s;
}
