/*
 * check_run_lines: what memtrace-run prints, as mt_run_lines computes it
 * (analyzer/gates/mt_run_lines.h): the min/median/max table, the warning and
 * the verdict over the runs' figures; the allocation an out-of-memory
 * sweep run failed and its stack, and a sweep run's row and lines; and
 * `memtrace run`'s command line and output directory, refused as
 * memtrace-run refuses them.  check_run.c and check_sweep.c hold
 * memtrace-run's own lines end to end (a run's line among them).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/base/mt_buf.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/gates/mt_run_lines.h"

/* What an mt_run_lines call gave, in the words a command would: status 0
 * (found: 1 when not), 2 not the input it should be (why on err), 3
 * unreadable, 4 out of memory; out the lines it rendered. */
static void result(mt_test_run_t *r, int rc, const mt_buf_t *b, int found,
		   const char *why)
{
	r->status = rc == MT_OK ? !found : rc == MT_ECORRUPT ? 2 :
		    rc == MT_EIO ? 3 : 4;
	r->out = strdup(rc == MT_OK && b->data ? b->data : "");
	r->err = strdup(rc == MT_ECORRUPT ? why : "");
	mt_quiet_ptr_nonnull(r->out);
	mt_quiet_ptr_nonnull(r->err);
}

/* text written to dir/name. */
static void write_in(const char *dir, const char *name, const char *text)
{
	char *path = mt_test_path(dir, name);

	mt_test_write(path, text, strlen(text));
	free(path);
}

/* ---- the table over the runs ---- */

/* The table of the figures given, for CMD wl, rows in rows, as flags
 * (MT_RUN_LINES_*) say. */
static void table_of(mt_test_run_t *r, const char *dir, const char *figures,
		     const char *rows, int flags)
{
	char *path = mt_test_path(dir, "figures"), why[MT_RUN_LINES_WHY_MAX] = "";
	mt_buf_t b = MT_BUF_INIT;
	int err = 0;

	write_in(dir, "figures", figures);
	result(r, mt_run_lines_table(path, "wl", rows, flags, &b, &err, why,
				sizeof(why)), &b, 1, why);
	mt_buf_release(&b);
	free(path);
}

static void table(mt_test_run_t *r, const char *dir, const char *figures)
{
	table_of(r, dir, figures, "out/r.jsonl", 0);
}

/* The median of an even number of runs is the mean of the middle two,
 * rounded down; sizes as memtrace-run prints them. */
START_TEST(test_run_table_gives_min_median_max_of_the_summarized_runs)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	table(&r, dir, "0 summary_written complete 10 1024 0\n"
		       "0 summary_written complete 10 1024 0\n"
		       "0 summary_written complete 10 1024 0\n");
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out,
		"memtrace-run: 3 runs of wl, 3 summarized; rows in out/r.jsonl\n"
		"                          min       median          max\n"
		"  allocations              10           10           10\n"
		"  peak live           1.0 KiB      1.0 KiB      1.0 KiB\n"
		"  live at exit            0 B          0 B          0 B\n");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);

	table(&r, dir, "0 summary_written complete 1 100 0\n"
		       "0 summary_written complete 4 100 0\n"
		       "0 summary_written complete 2 100 0\n"
		       "0 workload_failed\n"
		       "0 summary_written complete 3 100 0\n");
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, "5 runs of wl, 4 summarized;"));
	mt_quiet_ptr_nonnull(strstr(r.out, "  allocations               1            2            4\n"));
	mt_quiet_ptr_nonnull(strstr(r.out, "memtrace-run: warning: the runs differ in "
				   "allocations (1 to 4); a deterministic workload "
				   "gives the same every run\n"));
	mt_test_run_release(&r);
}
END_TEST

/* Exit status and trace status, then each figure that varies, in order. */
START_TEST(test_run_table_warns_of_every_difference)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	table(&r, dir, "0 summary_written complete 3 100 10\n"
		       "137 summary_written missing_stop_event 3 2048 20\n");
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.out,
		"memtrace-run: warning: the runs differ in exit status, trace status, "
		"peak live (100 B to 2.0 KiB), live at exit (10 B to 20 B); a "
		"deterministic workload gives the same every run\n"));
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_run_table_with_no_summary_gives_no_table)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	table(&r, dir, "0 capture_missing\n");
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "memtrace-run: 1 run of wl, none left a summary; "
				"rows in out/r.jsonl\n");
	mt_test_run_release(&r);

	table(&r, dir, "1 workload_failed\n2 workload_failed\n");
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "memtrace-run: 2 runs of wl, none left a summary; "
				"rows in out/r.jsonl\n"
				"memtrace-run: warning: the runs differ in exit status; a "
				"deterministic workload gives the same every run\n");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_run_table_refuses_what_is_no_run_figures)
{
	static const char *const bad[] = {
		"", "0\n", "0 summary_written complete 1 2\n",
		"0 summary_written complete 1 2 x\n", "0 workload_failed extra\n",
		"0 summary_written complete 1 2 3 4\n",
	};
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		table(&r, dir, bad[i]);
		mt_quiet(r.status == 2, "'%s' gave %d", bad[i], r.status);
		ck_assert_str_eq(r.out, "");
		mt_quiet_ptr_nonnull(strstr(r.err, "run's figures"));
		mt_test_run_release(&r);
	}
	{
		mt_buf_t b = MT_BUF_INIT;
		char why[MT_RUN_LINES_WHY_MAX];
		int err = 0;

		mt_quiet_int_eq(mt_run_lines_table("/nonexistent/figures", "x", "x", 0,
					      &b, &err, why, sizeof(why)), MT_EIO);
		mt_quiet_int_eq(err, ENOENT);
		mt_buf_release(&b);
	}
}
END_TEST

/* --verdict: first the status memtrace-run ends with.  The first
 * non-zero exit wins over --strict; --strict takes the first run whose
 * trace fails it, with a last line; --quiet leaves the table out. */
START_TEST(test_run_table_verdict_gives_the_exit_status_first)
{
	static const struct {
		const char *figures;
		int strict;
		const char *out;
	} cases[] = {
		{ "0 summary_written complete 1 2 3\n", 0, "0\n" },
		{ "0 workload_failed\n3 workload_failed\n1 workload_failed\n",
		  MT_RUN_LINES_STRICT, "3\n" },
		{ "0 summary_written complete 1 2 3\n"
		  "0 summary_written missing_stop_event 1 2 3\n"
		  "0 capture_missing\n", MT_RUN_LINES_STRICT,
		  "1\nmemtrace-run: --strict: run 2's trace is missing_stop_event\n" },
		{ "0 summary_written missing_stop_event 1 2 3\n", 0, "0\n" },
		{ "0 workload_failed\n0 capture_missing\n", MT_RUN_LINES_STRICT,
		  "3\nmemtrace-run: --strict: run 2 left no trace\n" },
		{ "0 summary_invalid\n", MT_RUN_LINES_STRICT,
		  "2\nmemtrace-run: --strict: run 1's trace is not valid "
		  "memtrace evidence\n" },
		{ "137 summary_written missing_stop_event 1 2 3\n", MT_RUN_LINES_STRICT,
		  "137\n" },
	};
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		table_of(&r, dir, cases[i].figures, "r.jsonl", MT_RUN_LINES_VERDICT |
			 MT_RUN_LINES_QUIET | cases[i].strict);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.out, cases[i].out);
		ck_assert_str_eq(r.err, "");
		mt_test_run_release(&r);
	}
	/* Without --quiet the table comes between the two. */
	table_of(&r, dir, "0 summary_written missing_stop_event 1 2 3\n",
		 "r.jsonl", MT_RUN_LINES_VERDICT | MT_RUN_LINES_STRICT);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out,
		"1\n"
		"memtrace-run: 1 run of wl, 1 summarized; rows in r.jsonl\n"
		"                          min       median          max\n"
		"  allocations               1            1            1\n"
		"  peak live               2 B          2 B          2 B\n"
		"  live at exit            3 B          3 B          3 B\n"
		"memtrace-run: --strict: run 1's trace is missing_stop_event\n");
	mt_test_run_release(&r);
}
END_TEST

/* ---- memtrace run's command line ---- */

/* memtrace run ARGS... (NULL-terminated) in dir: stdout and status. */
static void run_options(mt_test_run_t *r, const char *dir, ...)
{
	const char *argv[24] = { "run" };
	int n = 1;
	va_list ap;

	va_start(ap, dir);
	while ((argv[n] = va_arg(ap, const char *)) != NULL)
		mt_quiet(++n < 23, "%s", "too many arguments");
	va_end(ap);
	mt_test_memtrace_in_argv(r, dir, NULL, argv);
}

START_TEST(test_run_help_is_memtrace_runs)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	/* --help wins over a bad option after it, and prints nothing else. */
	run_options(&r, dir, "--help", "--frobnicate", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(!strncmp(r.out, "usage: memtrace-run [-n N]", 26), "%s", r.out);
	mt_quiet_ptr_nonnull(strstr(r.out, "or hung, 1 one did.\n"));
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
}
END_TEST

/* Each bad command line: one line, memtrace-run's, and status 64. */
START_TEST(test_run_refuses_a_bad_command_line_as_memtrace_run_does)
{
	static const struct {
		const char *args[4], *says;
	} bad[] = {
		{ { "-n", "2", NULL }, "no command given" },
		{ { "--frobnicate", "--help", "x" }, "unknown option '--frobnicate'" },
		{ { "-o", "out", "-n", NULL }, "option '-n' needs a value" },
		{ { "-n", "0", "x", NULL }, "-n needs at least 1 run, not 0" },
		{ { "-n", "+1", "x", NULL }, "-n needs a whole number of runs, 1 or more, not '+1'" },
		{ { "--runs=", "x", NULL }, "-n needs a whole number of runs, 1 or more, not ''" },
		{ { "-n", "0000000001", "x", NULL }, "-n 0000000001: too many runs" },
		{ { "--stack-depth", "257", "x", NULL }, "--stack-depth needs a number from 0 to 256, not '257'" },
		{ { "-o", "", "x", NULL }, "-o needs a directory, not an empty string" },
		{ { "--oom-sweep", "--max", "0", "x" }, "--max needs a whole number from 1 to 999999999, not '0'" },
		{ { "--oom-sweep", "--timeout=1.5", "x", NULL }, "--timeout needs a whole number, 1 or more, not '1.5'" },
		{ { "--oom-sweep", "--strict", "x", NULL }, "--strict does not apply to --oom-sweep" },
		{ { "--max", "3", "x", NULL }, "--max and --timeout apply only to --oom-sweep" },
	};
	char *dir = mt_test_scratch();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mt_test_run_t r;
		char want[256];

		run_options(&r, dir, bad[i].args[0], bad[i].args[1],
			    bad[i].args[2], bad[i].args[3], NULL);
		snprintf(want, sizeof(want), "memtrace-run: %s (usage: "
			 "memtrace-run [-n N] [-o DIR] [--stack-depth D] [--sample B] "
			 "[--top-only] [--strict] [--quiet|--verbose] -- CMD [ARGS...])\n",
			 bad[i].says);
		mt_quiet(r.status == 64, "%s: %d", bad[i].says, r.status);
		ck_assert_str_eq(r.err, want);
		ck_assert_str_eq(r.out, "");
		mt_test_run_release(&r);
	}
}
END_TEST

/* ---- memtrace run's output directory ---- */

START_TEST(test_run_makes_the_directory_and_refuses_what_it_cannot_use)
{
	char *dir = mt_test_scratch(), *made;
	mt_test_run_t r;
	struct stat st;

	/* Made with its parents; '%' reaches the preload escaped. */
	run_options(&r, dir, "-q", "-o", "a%d/b", "--", "true", NULL);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.err);
	made = mt_test_path(dir, "a%d/b/allocations.1.jsonl.zst");
	mt_quiet(!stat(made, &st) && S_ISREG(st.st_mode), "%s", "no a%d/b's trace");
	mt_test_run_release(&r);
	/* "%p" is refused before anything is made. */
	run_options(&r, dir, "-o", "c/x%p", "--", "true", NULL);
	mt_quiet_int_eq(r.status, 73);
	ck_assert_str_eq(r.err, "memtrace-run: cannot use 'c/x%p' as the output "
				"directory: the preload cannot name child traces "
				"under a path that holds '%p'\n");
	mt_test_run_release(&r);
	write_in(dir, "file", "x");
	run_options(&r, dir, "-o", "file", "--", "true", NULL);
	mt_quiet_int_eq(r.status, 73);
	ck_assert_str_eq(r.err, "memtrace-run: cannot use 'file' as the output "
				"directory: it is not a directory\n");
	mt_test_run_release(&r);
	run_options(&r, dir, "-o", "file/under", "--", "true", NULL);
	mt_quiet_int_eq(r.status, 73);
	ck_assert_str_eq(r.err, "memtrace-run: cannot create the output "
				"directory 'file/under'\n");
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);
	free(made);
}
END_TEST

/* ---- the sweep's failed allocation ---- */

#define START "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":7}\n" \
	      "{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n"

static void frames(char *buf, size_t cap, int n)
{
	size_t len = 0;

	len += (size_t)snprintf(buf + len, cap - len, START);
	for (int i = 1; i <= n; i++)
		len += (size_t)snprintf(buf + len, cap - len,
			"{\"v\":1,\"seq\":%d,\"kind\":\"frame\",\"frame_id\":%d,"
			"\"ip\":\"0x%x\",\"symbol\":\"f%d\",\"offset\":\"0x1\","
			"\"module\":\"/lib/m%d.so\",\"module_offset\":\"0x1\"}\n",
			2 + i, i, 0x1000 + i, i, i);
	len += (size_t)snprintf(buf + len, cap - len,
		"{\"v\":1,\"seq\":%d,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[",
		3 + n);
	for (int i = 1; i <= n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%d",
					i > 1 ? "," : "", i);
	len += (size_t)snprintf(buf + len, cap - len, "]}\n"
		"{\"v\":1,\"seq\":%d,\"kind\":\"alloc\",\"allocator_id\":0,"
		"\"ptr\":\"0x5000\",\"size\":8,\"fn\":\"malloc\",\"stack\":1,\"tid\":7}\n"
		"{\"v\":1,\"seq\":%d,\"kind\":\"alloc.fail\",\"allocator_id\":0,"
		"\"size\":1536,\"fn\":\"calloc\",\"stack\":1,\"fail_at\":2,\"tid\":7}\n",
		4 + n, 5 + n);
	mt_quiet(len < cap, "%s", "trace too long");
}

/* mt_run_lines_oom() on dir/t.jsonl, allocation n. */
static void oom_fail(mt_test_run_t *r, const char *dir, uint64_t n)
{
	char *path = mt_test_path(dir, "t.jsonl");
	mt_buf_t b = MT_BUF_INIT;
	int found = 0, err = 0, rc;

	rc = mt_run_lines_oom(path, n, &b, &found, &err);
	result(r, rc, &b, found, "");
	mt_buf_release(&b);
	free(path);
}

START_TEST(test_oom_fail_prints_the_call_and_its_stack)
{
	char *dir = mt_test_scratch(), trace[8192];
	mt_test_run_t r;

	frames(trace, sizeof(trace), 2);
	write_in(dir, "t.jsonl", trace);
	oom_fail(&r, dir, 2);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "calloc of 1.5 KiB\nf1 (m1.so) < f2 (m2.so)\n");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
}
END_TEST

/* A trace whose one stack is operator new called from app::make_widget(int),
 * by their mangled names, as the preload records them: one 64-byte block
 * live, then a failed 1536-byte call (fail_at 2). */
static const char cxx_trace[] =
	START
	"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1001\","
	"\"symbol\":\"_Znwm\",\"offset\":\"0x1c\",\"module\":\"/lib/libstdc++.so.6\","
	"\"module_offset\":\"0x1001\"}\n"
	"{\"v\":1,\"seq\":4,\"kind\":\"frame\",\"frame_id\":2,\"ip\":\"0x2002\","
	"\"symbol\":\"_ZN3app11make_widgetEi\",\"offset\":\"0x10\",\"module\":\"/bin/app\","
	"\"module_offset\":\"0x2002\"}\n"
	"{\"v\":1,\"seq\":5,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1,2]}\n"
	"{\"v\":1,\"seq\":6,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x5000\","
	"\"size\":64,\"fn\":\"malloc\",\"stack\":1,\"tid\":7}\n"
	"{\"v\":1,\"seq\":7,\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":1536,"
	"\"fn\":\"calloc\",\"stack\":1,\"fail_at\":2,\"tid\":7}\n";

/* The sweep's stack names C++ frames as report does, demangled. */
START_TEST(test_oom_fail_demangles_cxx_names)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_in(dir, "t.jsonl", cxx_trace);
	oom_fail(&r, dir, 2);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "calloc of 1.5 KiB\noperator new(unsigned long) "
				"(libstdc++.so.6) < app::make_widget(int) (app)\n");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
}
END_TEST

/* At most 8 frames, as the sweep always printed them. */
START_TEST(test_oom_fail_names_at_most_eight_frames)
{
	char *dir = mt_test_scratch(), trace[16384];
	mt_test_run_t r;

	frames(trace, sizeof(trace), 11);
	write_in(dir, "t.jsonl", trace);
	oom_fail(&r, dir, 2);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "calloc of 1.5 KiB\nf1 (m1.so) < f2 (m2.so) < "
				"f3 (m3.so) < f4 (m4.so) < f5 (m5.so) < f6 (m6.so) < "
				"f7 (m7.so) < f8 (m8.so) < ... (3 more)\n");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_oom_fail_says_when_no_stack_was_recorded)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_in(dir, "t.jsonl", START
		 "{\"v\":1,\"seq\":3,\"kind\":\"alloc.fail\",\"allocator_id\":0,"
		 "\"size\":100,\"fn\":\"malloc\",\"fail_at\":1,\"tid\":7}\n");
	oom_fail(&r, dir, 1);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "malloc of 100 B\n(no stack recorded)\n");
	mt_test_run_release(&r);
}
END_TEST

/* Exit 1, and nothing printed, when allocation N never came (nor for an
 * alloc.fail of another N, nor a line that only mentions it). */
START_TEST(test_oom_fail_finds_nothing_when_allocation_n_did_not_fail)
{
	char *dir = mt_test_scratch(), trace[8192];
	mt_test_run_t r;

	frames(trace, sizeof(trace), 2);
	write_in(dir, "t.jsonl", trace);
	oom_fail(&r, dir, 3);
	mt_quiet_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	{
		char *t = mt_test_path(dir, "t.jsonl");

		mt_quiet_int_eq(unlink(t), 0);
		free(t);
	}
	oom_fail(&r, dir, 1);
	mt_quiet_int_eq(r.status, 3);
	mt_test_run_release(&r);
}
END_TEST

/* ---- a sweep run's row and lines ---- */

/* mt_run_lines_oom_line() in dir on t.jsonl (allocation 2 failed there: calloc
 * of 1.5 KiB), log t.log, for run n that ended as the rest say. */
static void oom_run(mt_test_run_t *r, const char *dir, uint64_t n,
		    uint64_t exit, const char *signal, const char *hung,
		    int stopped, int quiet)
{
	mt_run_lines_oom_run_t run = {
		.n = n, .exit = exit, .signal = signal, .hung = hung,
		.stopped = stopped, .quiet = quiet, .trace = "t.jsonl",
		.log = "t.log",
	};
	mt_buf_t b = MT_BUF_INIT;
	int err = 0;

	/* The lines name the files as given: relative to dir. */
	mt_quiet_int_eq(chdir(dir), 0);
	result(r, mt_run_lines_oom_line(&run, &b, &err), &b, 1, "");
	mt_buf_release(&b);
}

/* The row first, then the lines the sweep always printed: a crash or a
 * hang with the failed call's stack and the run's files, an exit in one
 * line (none under --quiet), a stopped run in one line even so.  Exit 0
 * whether or not allocation N failed. */
START_TEST(test_oom_fail_exit_gives_the_row_and_the_runs_lines)
{
	char *dir = mt_test_scratch(), trace[8192];
	mt_test_run_t r;

	frames(trace, sizeof(trace), 2);
	write_in(dir, "t.jsonl", trace);
	oom_run(&r, dir, 2, 139, "SEGV", NULL, 0, 0);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fail crash\n"
				"N=2 calloc of 1.5 KiB: killed by SIGSEGV (crash)\n"
				"    at f1 (m1.so) < f2 (m2.so)\n"
				"    trace t.jsonl, output t.log\n");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	oom_run(&r, dir, 2, 137, "KILL", "10", 0, 0);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fail hang\n"
				"N=2 calloc of 1.5 KiB: timed out after 10 s (hang)\n"
				"    at f1 (m1.so) < f2 (m2.so)\n"
				"    trace t.jsonl, output t.log\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, 2, 0, NULL, NULL, 0, 0);
	ck_assert_str_eq(r.out, "fail clean\nN=2 calloc of 1.5 KiB: exit 0 (clean)\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, 2, 1, NULL, NULL, 0, 1);
	ck_assert_str_eq(r.out, "fail error\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, 2, 130, "INT", NULL, 1, 1);
	ck_assert_str_eq(r.out, "fail stopped\n"
				"N=2 calloc of 1.5 KiB: stopped (memtrace-run was "
				"interrupted)\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, 3, 2, NULL, NULL, 0, 0);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "none error\nN=3 no allocation 3 to fail: exit 2 (error)\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, 3, 134, "ABRT", NULL, 0, 0);
	ck_assert_str_eq(r.out, "none crash\n"
				"N=3 no allocation 3 to fail: killed by SIGABRT (crash)\n"
				"    trace t.jsonl, output t.log\n");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_oom_fail_exit_cannot_read_a_missing_trace)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	oom_run(&r, dir, 2, 0, NULL, NULL, 0, 0);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);
}
END_TEST

Suite *mt_suite_run_lines(void)
{
	Suite *s = suite_create("run_lines");
	TCase *tab = tcase_create("table");
	TCase *opts = tcase_create("run");
	TCase *oom = tcase_create("oom");
	TCase *oline = tcase_create("oom line");

	tcase_add_test(tab, test_run_table_gives_min_median_max_of_the_summarized_runs);
	tcase_add_test(tab, test_run_table_warns_of_every_difference);
	tcase_add_test(tab, test_run_table_with_no_summary_gives_no_table);
	tcase_add_test(tab, test_run_table_refuses_what_is_no_run_figures);
	tcase_add_test(tab, test_run_table_verdict_gives_the_exit_status_first);
	suite_add_tcase(s, tab);
	tcase_add_test(opts, test_run_help_is_memtrace_runs);
	tcase_add_test(opts, test_run_refuses_a_bad_command_line_as_memtrace_run_does);
	tcase_add_test(opts, test_run_makes_the_directory_and_refuses_what_it_cannot_use);
	suite_add_tcase(s, opts);
	tcase_add_test(oom, test_oom_fail_prints_the_call_and_its_stack);
	tcase_add_test(oom, test_oom_fail_demangles_cxx_names);
	tcase_add_test(oom, test_oom_fail_names_at_most_eight_frames);
	tcase_add_test(oom, test_oom_fail_says_when_no_stack_was_recorded);
	tcase_add_test(oom, test_oom_fail_finds_nothing_when_allocation_n_did_not_fail);
	suite_add_tcase(s, oom);
	tcase_add_test(oline, test_oom_fail_exit_gives_the_row_and_the_runs_lines);
	tcase_add_test(oline, test_oom_fail_exit_cannot_read_a_missing_trace);
	suite_add_tcase(s, oline);
	return s;
}
