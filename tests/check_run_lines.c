/*
 * check_run_lines: the commands memtrace-run asks for what it prints
 * (analyzer/gates/mt_run_lines.h): run-line, a run's figures and its line from
 * its repetition row or its tree of traces; run-table, the min/median/max
 * table and the warning over the runs' figures; oom-fail, the allocation
 * an out-of-memory sweep run failed and its stack, and with --exit the
 * run's row and lines; run-options, memtrace-run's command line as shell
 * assignments; run-dir, its output directory made ready.  check_run.c and
 * check_sweep.c hold memtrace-run's own lines end to end.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mt_test.h"

/* A fixture copied into dir under name. */
static void copy_fixture(const char *dir, const char *fixture, const char *name)
{
	char *from = mt_test_fixture(fixture), *to = mt_test_path(dir, name);
	size_t len;
	char *data = mt_test_read(from, &len);

	mt_quiet_ptr_nonnull(data);
	mt_test_write(to, data, len);
	free(data);
	free(from);
	free(to);
}

/* text written to dir/name. */
static void write_in(const char *dir, const char *name, const char *text)
{
	char *path = mt_test_path(dir, name);

	mt_test_write(path, text, strlen(text));
	free(path);
}

/* The repetition row of trace (exit code code) appended to dir/r.jsonl. */
static void add_row(const char *dir, const char *trace, const char *code)
{
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "repetition", "--capture", trace, "--out",
			    "r.jsonl", "--index", "1", "--exit-code", code, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
}

/* ---- run-line ---- */

START_TEST(test_run_line_gives_the_rows_figures)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_fixture(dir, "traces/complete.jsonl", "a.1.jsonl");
	add_row(dir, "a.1.jsonl", "0");
	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "3",
			    "--exit", "0", "r.jsonl", "a.1.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "0 summary_written complete 3 192 64\n"
				"run 1/3: exit 0, 3 allocations, peak 192 B, complete\n");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_run_line_names_the_signal_and_keeps_the_status)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_fixture(dir, "traces/missing_stop_killed.jsonl", "a.1.jsonl");
	add_row(dir, "a.1.jsonl", "0");
	mt_test_memtrace_in(&r, dir, "run-line", "--index", "2", "--runs", "2",
			    "--exit", "137", "--signal", "KILL", "r.jsonl",
			    "a.1.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "137 summary_written missing_stop_event 2 150 50\n"
				"run 2/2: killed by SIGKILL, 2 allocations, peak 150 B, "
				"missing_stop_event\n");
	mt_test_run_release(&r);
}
END_TEST

/* The rows without a summary, and a file with no row at all. */
START_TEST(test_run_line_says_the_state_of_a_run_without_summary)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_fixture(dir, "traces/complete.jsonl", "a.1.jsonl");
	add_row(dir, "a.1.jsonl", "3");
	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "1",
			    "--exit", "3", "r.jsonl", "a.1.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "3 workload_failed\n"
				"run 1/1: exit 3, workload_failed (trace not summarized)\n");
	mt_test_run_release(&r);

	add_row(dir, "none.jsonl", "0");
	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "1",
			    "--exit", "0", "r.jsonl", "none.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "0 capture_missing\nrun 1/1: exit 0, "
				"capture_missing (no trace: a static or set-user-ID program?)\n");
	mt_test_run_release(&r);

	copy_fixture(dir, "traces/invalid_not_json.jsonl", "bad.jsonl");
	add_row(dir, "bad.jsonl", "0");
	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "1",
			    "--exit", "0", "r.jsonl", "bad.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "0 summary_invalid\nrun 1/1: exit 0, summary_invalid\n");
	mt_test_run_release(&r);

	write_in(dir, "empty.jsonl", "");
	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "1",
			    "--exit", "0", "empty.jsonl", "a.1.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "0 -\nrun 1/1: exit 0, no row\n");
	mt_test_run_release(&r);
}
END_TEST

/* With child traces: the tree's sums, its status and which trace, and
 * under --verbose a line per process. */
START_TEST(test_run_line_sums_the_tree_of_a_run_with_child_traces)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_fixture(dir, "traces/complete.jsonl", "a.1.jsonl");
	copy_fixture(dir, "traces/missing_stop_killed.jsonl", "a.1.77.jsonl");
	copy_fixture(dir, "traces/invalid_empty.jsonl", "a.1.78.jsonl");
	add_row(dir, "a.1.jsonl", "0");
	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "2",
			    "--exit", "0", "r.jsonl", "a.1.jsonl", "a.1.77.jsonl",
			    NULL);
	mt_quiet_int_eq(r.status, 0);
	/* The row's status (the workload's own trace), the tree's figures. */
	ck_assert_str_eq(r.out, "0 summary_written complete 5 342 114\n"
				"run 1/2: exit 0, 2 processes: 5 allocations, peak 342 B, "
				"missing_stop_event in a.1.77.jsonl (a.1.jsonl and 1 child trace)\n");
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "2",
			    "--exit", "0", "--verbose", "r.jsonl", "a.1.jsonl",
			    "a.1.77.jsonl", "a.1.78.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "0 summary_written complete 5 342 114\n"
				"run 1/2: exit 0, 3 processes: 5 allocations, peak 342 B, "
				"missing_stop_event in a.1.77.jsonl (a.1.jsonl and 2 child traces)\n"
				"  a.1.jsonl: 3 allocations, peak 192 B, complete\n"
				"  a.1.77.jsonl: 2 allocations, peak 150 B, missing_stop_event\n"
				"  a.1.78.jsonl: invalid\n");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_run_line_refuses_a_bad_command_line_and_missing_files)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_fixture(dir, "traces/complete.jsonl", "a.1.jsonl");
	add_row(dir, "a.1.jsonl", "0");
	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--exit", "0",
			    "r.jsonl", "a.1.jsonl", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_quiet_ptr_nonnull(strstr(r.err, "--index, --runs and --exit are required"));
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, dir, "run-line", "--index", "x", "--runs", "1",
			    "--exit", "0", "r.jsonl", "a.1.jsonl", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_quiet_ptr_nonnull(strstr(r.err, "--index needs a whole number, not 'x'"));
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "1",
			    "--exit", "0", "r.jsonl", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "1",
			    "--exit", "0", "nowhere.jsonl", "a.1.jsonl", NULL);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);

	/* A child trace that cannot be read: nothing printed but why. */
	mt_test_memtrace_in(&r, dir, "run-line", "--index", "1", "--runs", "1",
			    "--exit", "0", "r.jsonl", "a.1.jsonl", "a.1.9.jsonl",
			    NULL);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot read 'a.1.9.jsonl'"));
	mt_test_run_release(&r);
}
END_TEST

/* ---- run-table ---- */

static void table(mt_test_run_t *r, const char *dir, const char *figures)
{
	write_in(dir, "figures", figures);
	mt_test_memtrace_in(r, dir, "run-table", "--command", "./bin/wl",
			    "--rows", "out/r.jsonl", "figures", NULL);
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
		mt_quiet_ptr_nonnull(strstr(r.err, "is not a list of run figures"));
		mt_test_run_release(&r);
	}
	mt_test_memtrace_in(&r, dir, "run-table", "--rows", "x", "figures", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "run-table", "--command", "x", "--rows", "x",
			    "nowhere", NULL);
	mt_quiet_int_eq(r.status, 3);
	mt_test_run_release(&r);
}
END_TEST

/* --verdict: first the status memtrace-run ends with.  The first
 * non-zero exit wins over --strict; --strict takes the first run whose
 * trace fails it, with a last line; --quiet leaves the table out. */
START_TEST(test_run_table_verdict_gives_the_exit_status_first)
{
	static const struct {
		const char *figures, *flag, *out;
	} cases[] = {
		{ "0 summary_written complete 1 2 3\n", NULL, "0\n" },
		{ "0 workload_failed\n3 workload_failed\n1 workload_failed\n",
		  "--strict", "3\n" },
		{ "0 summary_written complete 1 2 3\n"
		  "0 summary_written missing_stop_event 1 2 3\n"
		  "0 capture_missing\n", "--strict",
		  "1\nmemtrace-run: --strict: run 2's trace is missing_stop_event\n" },
		{ "0 summary_written missing_stop_event 1 2 3\n", NULL, "0\n" },
		{ "0 workload_failed\n0 capture_missing\n", "--strict",
		  "3\nmemtrace-run: --strict: run 2 left no trace\n" },
		{ "0 summary_invalid\n", "--strict",
		  "2\nmemtrace-run: --strict: run 1's trace is not valid "
		  "memtrace evidence\n" },
		{ "137 summary_written missing_stop_event 1 2 3\n", "--strict",
		  "137\n" },
	};
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_in(dir, "figures", cases[i].figures);
		mt_test_memtrace_in(&r, dir, "run-table", "--verdict", "--quiet",
				    "--command", "wl", "--rows", "r.jsonl",
				    "figures", cases[i].flag, NULL);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.out, cases[i].out);
		ck_assert_str_eq(r.err, "");
		mt_test_run_release(&r);
	}
	/* Without --quiet the table comes between the two. */
	write_in(dir, "figures", "0 summary_written missing_stop_event 1 2 3\n");
	mt_test_memtrace_in(&r, dir, "run-table", "--verdict", "--strict",
			    "--command", "wl", "--rows", "r.jsonl", "figures", NULL);
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
	/* --strict and --quiet say nothing without --verdict. */
	mt_test_memtrace_in(&r, dir, "run-table", "--strict", "--command", "wl",
			    "--rows", "r.jsonl", "figures", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_test_run_release(&r);
}
END_TEST

/* ---- run-options ---- */

/* run-options -- ARGS...: stdout and status. */
static void run_options(mt_test_run_t *r, const char *dir, ...)
{
	const char *argv[24] = { "run-options", "--" };
	int n = 2;
	va_list ap;

	va_start(ap, dir);
	while ((argv[n] = va_arg(ap, const char *)) != NULL)
		mt_quiet(++n < 23, "%s", "too many arguments");
	va_end(ap);
	mt_test_memtrace_in_argv(r, dir, NULL, argv);
}

START_TEST(test_run_options_prints_the_settings_and_the_shift_to_cmd)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	run_options(&r, dir, "-n3", "--output=it's/", "--stack-depth", "007",
		    "-v", "--", "ls", "-l", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "runs='3'\ndir='it'\\''s'\ndepth='7'\nsample=''\n"
				"strict='0'\nquiet='0'\nverbose='1'\nsweep='0'\n"
				"sweep_max=''\nsweep_timeout=''\nshift 6\n");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	/* Defaults; options end at the first argument that is none. */
	run_options(&r, dir, "--oom-sweep", "-q", "ls", "-n", "2", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "runs='1'\ndir='memtrace-out'\ndepth=''\nsample=''\n"
				"strict='0'\nquiet='1'\nverbose='0'\nsweep='1'\n"
				"sweep_max=''\nsweep_timeout='10'\nshift 2\n");
	mt_test_run_release(&r);
	/* --help: shell code that prints memtrace-run's help, then exits. */
	run_options(&r, dir, "--help", "--frobnicate", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(!strncmp(r.out, "printf '%s' 'usage: memtrace-run [-n N]", 39),
		 "%s", r.out);
	mt_quiet_ptr_nonnull(strstr(r.out, "or hung, 1 one did.\n'\nexit 0\n"));
	mt_test_run_release(&r);
}
END_TEST

/* Each bad command line: one line, memtrace-run's, and status 64. */
START_TEST(test_run_options_refuses_as_memtrace_run_does)
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
			 "[--strict] [--quiet|--verbose] -- CMD [ARGS...])\n",
			 bad[i].says);
		mt_quiet(r.status == 64, "%s: %d", bad[i].says, r.status);
		ck_assert_str_eq(r.err, want);
		ck_assert_str_eq(r.out, "");
		mt_test_run_release(&r);
	}
}
END_TEST

/* ---- run-dir ---- */

START_TEST(test_run_dir_makes_the_directory_and_escapes_its_path)
{
	char *dir = mt_test_scratch(), *made, want[4096];
	mt_test_run_t r;
	struct stat st;

	mt_test_memtrace_in(&r, dir, "run-dir", "a%d/b", NULL);
	mt_quiet_int_eq(r.status, 0);
	made = mt_test_path(dir, "a%d/b");
	mt_quiet(!stat(made, &st) && S_ISDIR(st.st_mode), "%s", "no a%d/b");
	/* The physical path, as the test's directory may be reached through
	 * a link. */
	mt_quiet_ptr_nonnull(realpath(dir, want));
	strcat(want, "/a%%d/b/\n");
	ck_assert_str_eq(r.out, want);
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	/* "%p" is refused before anything is made. */
	mt_test_memtrace_in(&r, dir, "run-dir", "c/x%p", NULL);
	mt_quiet_int_eq(r.status, 73);
	ck_assert_str_eq(r.err, "memtrace-run: cannot use 'c/x%p' as the output "
				"directory: the preload cannot name child traces "
				"under a path that holds '%p'\n");
	mt_test_run_release(&r);
	write_in(dir, "file", "x");
	mt_test_memtrace_in(&r, dir, "run-dir", "file", NULL);
	mt_quiet_int_eq(r.status, 73);
	ck_assert_str_eq(r.err, "memtrace-run: cannot use 'file' as the output "
				"directory: it is not a directory\n");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "run-dir", "file/under", NULL);
	mt_quiet_int_eq(r.status, 73);
	ck_assert_str_eq(r.err, "memtrace-run: cannot create the output "
				"directory 'file/under'\n");
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);
	free(made);
}
END_TEST

/* ---- oom-fail ---- */

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

START_TEST(test_oom_fail_prints_the_call_and_its_stack)
{
	char *dir = mt_test_scratch(), trace[8192];
	mt_test_run_t r;

	frames(trace, sizeof(trace), 2);
	write_in(dir, "t.jsonl", trace);
	mt_test_memtrace_in(&r, dir, "oom-fail", "t.jsonl", "2", NULL);
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
	mt_test_memtrace_in(&r, dir, "oom-fail", "t.jsonl", "2", NULL);
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
	mt_test_memtrace_in(&r, dir, "oom-fail", "t.jsonl", "2", NULL);
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
	mt_test_memtrace_in(&r, dir, "oom-fail", "t.jsonl", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "malloc of 100 B\n(no stack recorded)\n");
	mt_test_run_release(&r);
}
END_TEST

/* Exit 1, and nothing printed, when allocation N never came (nor for an
 * alloc.fail of another N, nor a line that only mentions it). */
START_TEST(test_oom_fail_exits_1_when_allocation_n_did_not_fail)
{
	char *dir = mt_test_scratch(), trace[8192];
	mt_test_run_t r;

	frames(trace, sizeof(trace), 2);
	write_in(dir, "t.jsonl", trace);
	mt_test_memtrace_in(&r, dir, "oom-fail", "t.jsonl", "3", NULL);
	mt_quiet_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "oom-fail", "t.jsonl", "0", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "oom-fail", "nowhere.jsonl", "1", NULL);
	mt_quiet_int_eq(r.status, 3);
	mt_test_run_release(&r);
}
END_TEST

/* ---- oom-fail --exit: a sweep run's row and lines ---- */

/* Run oom-fail --log t.log in dir on t.jsonl (allocation 2 failed there:
 * calloc of 1.5 KiB) with the options given, NULL-terminated, and N. */
static void oom_run(mt_test_run_t *r, const char *dir, const char *n, ...)
{
	const char *argv[16] = { "oom-fail", "--log", "t.log" };
	int argc = 3;
	va_list ap;

	va_start(ap, n);
	for (const char *a; (a = va_arg(ap, const char *));)
		argv[argc++] = a;
	va_end(ap);
	argv[argc++] = "t.jsonl";
	argv[argc++] = n;
	argv[argc] = NULL;
	mt_test_memtrace_in_argv(r, dir, NULL, argv);
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
	oom_run(&r, dir, "2", "--exit", "139", "--signal", "SEGV", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fail crash\n"
				"N=2 calloc of 1.5 KiB: killed by SIGSEGV (crash)\n"
				"    at f1 (m1.so) < f2 (m2.so)\n"
				"    trace t.jsonl, output t.log\n");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	oom_run(&r, dir, "2", "--exit", "137", "--signal", "KILL", "--hung",
		 "10", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fail hang\n"
				"N=2 calloc of 1.5 KiB: timed out after 10 s (hang)\n"
				"    at f1 (m1.so) < f2 (m2.so)\n"
				"    trace t.jsonl, output t.log\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, "2", "--exit", "0", NULL);
	ck_assert_str_eq(r.out, "fail clean\nN=2 calloc of 1.5 KiB: exit 0 (clean)\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, "2", "--exit", "1", "-q", NULL);
	ck_assert_str_eq(r.out, "fail error\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, "2", "--exit", "130", "--signal", "INT", "--stopped",
		 "--quiet", NULL);
	ck_assert_str_eq(r.out, "fail stopped\n"
				"N=2 calloc of 1.5 KiB: stopped (memtrace-run was "
				"interrupted)\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, "3", "--exit", "2", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "none error\nN=3 no allocation 3 to fail: exit 2 (error)\n");
	mt_test_run_release(&r);
	oom_run(&r, dir, "3", "--exit", "134", "--signal", "ABRT", NULL);
	ck_assert_str_eq(r.out, "none crash\n"
				"N=3 no allocation 3 to fail: killed by SIGABRT (crash)\n"
				"    trace t.jsonl, output t.log\n");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_oom_fail_exit_refuses_a_bad_command_line_and_a_missing_trace)
{
	char *dir = mt_test_scratch(), trace[8192];
	mt_test_run_t r;

	frames(trace, sizeof(trace), 2);
	write_in(dir, "t.jsonl", trace);
	oom_run(&r, dir, "2", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_quiet_ptr_nonnull(strstr(r.err, "need --exit"));
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "oom-fail", "--quiet", "t.jsonl", "2", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_test_run_release(&r);
	oom_run(&r, dir, "0", "--exit", "0", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_test_run_release(&r);
	oom_run(&r, dir, "2", "--exit", "x", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_test_run_release(&r);
	oom_run(&r, dir, "2", "--exit", "0", "--hung", "soon", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_test_run_release(&r);
	oom_run(&r, dir, "2", "--exit", "0", "--signal", "", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "oom-fail", "--exit", "0", "t.jsonl", "2",
			    NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_quiet_ptr_nonnull(strstr(r.err, "--exit needs --log"));
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "oom-fail", "--exit", "0", "--log", "t.log",
			    "nowhere.jsonl", "2", NULL);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "oom-fail", "--help", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, "   or: memtrace oom-fail --exit"));
	mt_test_run_release(&r);
}
END_TEST

/* ---- out of memory ---- */

/* Run args in dir with its Nth allocation failing, N = 1, 2, ... until it
 * succeeds: each failure is exit 4, one "out of memory" line and nothing
 * on stdout (no half line for memtrace-run to print). */
static void every_allocation_fails_cleanly(const char *dir,
					   const char *const args[])
{
	int n;

	for (n = 1; n < 2000; n++) {
		char fail[48];
		char *const env[] = { fail, NULL };
		mt_test_run_t r;
		int status;

		snprintf(fail, sizeof(fail), "MEMTRACE_ANALYZER_FAIL_AT=%d", n);
		mt_test_memtrace_in_argv(&r, dir, env, args);
		status = r.status;
		if (status) {
			mt_quiet(status == 4, "%s at N=%d: exit %d: %s", args[0],
				 n, status, r.err);
			ck_assert_str_eq(r.err, "memtrace: out of memory\n");
			ck_assert_str_eq(r.out, "");
		}
		mt_test_run_release(&r);
		if (!status)
			break;
	}
	mt_quiet(n > 1 && n < 2000, "%s: the sweep ended at N=%d", args[0], n);
}

START_TEST(test_runs_commands_fail_cleanly_at_every_allocation)
{
	static const char *const line[] = {
		"run-line", "--index", "1", "--runs", "1", "--exit", "0",
		"--verbose", "r.jsonl", "a.1.jsonl", "a.1.77.jsonl", NULL,
	};
	static const char *const tab[] = {
		"run-table", "--command", "wl", "--rows", "r.jsonl", "figures", NULL,
	};
	static const char *const verdict[] = {
		"run-table", "--verdict", "--strict", "--command", "wl", "--rows",
		"r.jsonl", "figures", NULL,
	};
	static const char *const opts[] = {
		"run-options", "--", "-n", "2", "-o", "it's", "ls", NULL,
	};
	static const char *const rdir[] = { "run-dir", "out%d", NULL };
	static const char *const oom[] = { "oom-fail", "t.jsonl", "2", NULL };
	static const char *const oline[] = {
		"oom-fail", "--exit", "139", "--signal", "SEGV", "--log", "t.log",
		"t.jsonl", "2", NULL,
	};
	char *dir = mt_test_scratch(), trace[8192];

	copy_fixture(dir, "traces/complete.jsonl", "a.1.jsonl");
	copy_fixture(dir, "traces/missing_stop_killed.jsonl", "a.1.77.jsonl");
	add_row(dir, "a.1.jsonl", "0");
	every_allocation_fails_cleanly(dir, line);
	write_in(dir, "figures", "0 summary_written complete 1 2 3\n"
				 "1 workload_failed\n");
	every_allocation_fails_cleanly(dir, tab);
	write_in(dir, "figures", "0 summary_written missing_stop_event 1 2 3\n");
	every_allocation_fails_cleanly(dir, verdict);
	every_allocation_fails_cleanly(dir, opts);
	every_allocation_fails_cleanly(dir, rdir);
	frames(trace, sizeof(trace), 2);
	write_in(dir, "t.jsonl", trace);
	every_allocation_fails_cleanly(dir, oom);
	every_allocation_fails_cleanly(dir, oline);
}
END_TEST

Suite *mt_suite_run_lines(void)
{
	Suite *s = suite_create("run_lines");
	TCase *line = tcase_create("run-line");
	TCase *tab = tcase_create("run-table");
	TCase *opts = tcase_create("run-options");
	TCase *rdir = tcase_create("run-dir");
	TCase *oom = tcase_create("oom-fail");
	TCase *oline = tcase_create("oom-fail --exit");
	TCase *nomem = tcase_create("out-of-memory");

	tcase_add_test(line, test_run_line_gives_the_rows_figures);
	tcase_add_test(line, test_run_line_names_the_signal_and_keeps_the_status);
	tcase_add_test(line, test_run_line_says_the_state_of_a_run_without_summary);
	tcase_add_test(line, test_run_line_sums_the_tree_of_a_run_with_child_traces);
	tcase_add_test(line, test_run_line_refuses_a_bad_command_line_and_missing_files);
	suite_add_tcase(s, line);
	tcase_add_test(tab, test_run_table_gives_min_median_max_of_the_summarized_runs);
	tcase_add_test(tab, test_run_table_warns_of_every_difference);
	tcase_add_test(tab, test_run_table_with_no_summary_gives_no_table);
	tcase_add_test(tab, test_run_table_refuses_what_is_no_run_figures);
	tcase_add_test(tab, test_run_table_verdict_gives_the_exit_status_first);
	suite_add_tcase(s, tab);
	tcase_add_test(opts, test_run_options_prints_the_settings_and_the_shift_to_cmd);
	tcase_add_test(opts, test_run_options_refuses_as_memtrace_run_does);
	suite_add_tcase(s, opts);
	tcase_add_test(rdir, test_run_dir_makes_the_directory_and_escapes_its_path);
	suite_add_tcase(s, rdir);
	tcase_add_test(oom, test_oom_fail_prints_the_call_and_its_stack);
	tcase_add_test(oom, test_oom_fail_demangles_cxx_names);
	tcase_add_test(oom, test_oom_fail_names_at_most_eight_frames);
	tcase_add_test(oom, test_oom_fail_says_when_no_stack_was_recorded);
	tcase_add_test(oom, test_oom_fail_exits_1_when_allocation_n_did_not_fail);
	suite_add_tcase(s, oom);
	tcase_add_test(oline, test_oom_fail_exit_gives_the_row_and_the_runs_lines);
	tcase_add_test(oline, test_oom_fail_exit_refuses_a_bad_command_line_and_a_missing_trace);
	suite_add_tcase(s, oline);
	tcase_add_test(nomem, test_runs_commands_fail_cleanly_at_every_allocation);
	suite_add_tcase(s, nomem);
	return s;
}
