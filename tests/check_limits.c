/*
 * check_limits: resource limits and outputs a user may set (RLIMIT_FSIZE,
 * an output that cannot be a trace): a trace where one can be written,
 * else one clear line that names the cause, for the whole tree, and the
 * program's output and status as they are bare.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mt_test.h"
#include "mt_test_trace.h"

/* `bash -c SCRIPT` (bash's ulimit -f counts KiB; dash's counts 512-byte
 * blocks) with $W the workload wl_fill and $P the preload's
 * LD_PRELOAD entry, in directory dir (the shell itself untraced). */
static void run_sh(mt_test_run_t *r, const char *dir, const char *script)
{
	char *fill = mt_test_workload("wl_fill");
	char cmd[8192], w[4200], p[4200];
	char *argv[] = { "/bin/bash", "-c", cmd, NULL };
	char *env[] = { w, p, NULL };

	snprintf(w, sizeof(w), "W=%s", fill);
	snprintf(p, sizeof(p), "P=LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(cmd, sizeof(cmd), "cd '%s' && %s", dir, script);
	mt_test_run(r, argv, env);
	free(fill);
}

/* The number of lines of s. */
static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* A program whose address space is full (RLIMIT_AS, every page mapped)
 * allocates from 600 new call sites: the tracer's frame and stack tables
 * cannot grow, so the stacks past them go without an id, counted in the
 * trace's dropped, and the program runs on as it does bare.  The tracer
 * once asked again for the frame's id for as long as the space stayed
 * full, inside the hook, where it held every signal. */
START_TEST(test_a_full_address_space_drops_new_stacks_and_the_program_runs_on)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *w = mt_test_workload("wl_asfull");
	char preload[4200], output[4200], *status;
	char *argv[] = { w, NULL };
	char *env[] = { preload, output, NULL };
	mt_test_run_t bare, r;

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s", trace);
	mt_test_run(&bare, argv, NULL);
	ck_assert_int_eq(bare.status, 0);
	mt_test_run(&r, argv, env);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, bare.out);
	ck_assert_str_eq(r.out, "asfull: 600\n");
	mt_test_assert_trace_whole(trace, "exit");
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "events_dropped");
	/* Every allocation is in the trace, with a stack or without. */
	ck_assert_int_ge(mt_test_trace_count(trace, "alloc", 0), 600);
	free(status);
	mt_test_run_release(&bare);
	mt_test_run_release(&r);
	free(w);
	free(trace);
}
END_TEST

START_TEST(test_a_file_size_limit_below_the_ring_still_gives_a_trace)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;

	/* 200 KiB: below the ring's 16 MiB, above what 100 blocks write. */
	run_sh(&r, dir, "ulimit -f 200 && env \"$P\" MEMTRACE_OUTPUT=t.jsonl \"$W\" 100");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fill: 100\n");
	ck_assert_msg(r.err_len == 0, "stderr: %s", r.err);
	mt_test_assert_trace_whole(trace, "exit");
	ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 100), 100);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_a_trace_cut_by_the_file_size_limit_names_the_limit)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	struct stat st;
	mt_test_run_t r;

	run_sh(&r, dir, "ulimit -f 200 && env \"$P\" MEMTRACE_OUTPUT=t.jsonl \"$W\" 100000");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fill: 100000\n");
	ck_assert_msg(strstr(r.err, "memtrace: cannot write the trace: File too large"),
		      "stderr: %s", r.err);
	ck_assert_int_eq(count_lines(r.err), 1);
	ck_assert_int_eq(stat(trace, &st), 0);
	ck_assert_msg(st.st_size > 0 && st.st_size <= 200 * 1024, "size %lld",
		      (long long)st.st_size);
	mt_test_assert_trace_cut(trace);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_a_file_size_limit_below_the_smallest_ring_says_so)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;

	run_sh(&r, dir, "ulimit -f 8 && env \"$P\" MEMTRACE_OUTPUT=t.jsonl \"$W\" 100");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fill: 100\n");
	ck_assert_str_eq(r.err,
			 "memtrace: cannot make the ring: the file size limit (ulimit -f) "
			 "is 8192 bytes, below the 12288 bytes the smallest ring needs; "
			 "the program runs untraced\n");
	ck_assert(!mt_test_exists(trace));
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

/* A FIFO is refused as a trace: its children, which would derive
 * fifo.PID, are not traced either, and the tree says so once. */
START_TEST(test_a_refused_output_is_refused_for_the_whole_tree)
{
	char *dir = mt_test_scratch(), *fifo = mt_test_path(dir, "out.jsonl");
	struct dirent *e;
	mt_test_run_t r;
	DIR *d;

	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	run_sh(&r, dir, "env \"$P\" MEMTRACE_OUTPUT=out.jsonl /bin/sh -c "
			"'\"$W\" 10; \"$W\" 20 & wait; /bin/sh -c \"\\\"$W\\\" 30\"'");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fill: 10\nfill: 20\nfill: 30\n");
	ck_assert_msg(count_lines(r.err) == 1 && strstr(r.err, "cannot open trace"),
		      "stderr: %s", r.err);
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		ck_assert_msg(!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
				      !strcmp(e->d_name, "out.jsonl"),
			      "a trace was written: %s", e->d_name);
	closedir(d);
	mt_test_run_release(&r);
	free(fifo);
}
END_TEST

/* The refused process takes only this library out of LD_PRELOAD: the
 * program's own preloads stay for its children. */
START_TEST(test_a_refused_tree_keeps_the_programs_other_preloads)
{
	char *dir = mt_test_scratch();
	char script[8192];
	mt_test_run_t r;

	snprintf(script, sizeof(script),
		 "LD_PRELOAD='%s/workloads/libwl_early.so %s/libmtpreload.so' "
		 "MEMTRACE_COLLECTOR=/nonexistent/collector /bin/sh -c 'echo \"$LD_PRELOAD\"'",
		 mt_test_build_dir(), mt_test_build_dir());
	run_sh(&r, dir, script);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out + strlen(r.out) - strlen("/workloads/libwl_early.so\n"),
			 "/workloads/libwl_early.so\n");
	ck_assert_msg(!strstr(r.out, "libmtpreload"), "stdout: %s", r.out);
	ck_assert_int_eq(count_lines(r.err), 1);
	mt_test_run_release(&r);
}
END_TEST

/* Processes that share a stderr: each message arrives whole, never
 * interleaved with another's ("memtrace: memtrace: cannot ..."). */
START_TEST(test_messages_of_concurrent_processes_are_whole_lines)
{
	char *dir = mt_test_scratch();
	const char *expect = "memtrace: cannot start the collector "
			     "'/nonexistent/collector': No such file or directory; "
			     "the program runs untraced";
	int lines = 0;
	mt_test_run_t r;

	run_sh(&r, dir, "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 "
			"21 22 23 24 25 26 27 28 29 30 31 32; do "
			"env \"$P\" MEMTRACE_COLLECTOR=/nonexistent/collector \"$W\" 1 >/dev/null & "
			"done; wait");
	ck_assert_int_eq(r.status, 0);
	for (char *line = strtok(r.err, "\n"); line; line = strtok(NULL, "\n")) {
		ck_assert_str_eq(line, expect);
		lines++;
	}
	ck_assert_int_eq(lines, 32);
	mt_test_run_release(&r);
}
END_TEST

Suite *mt_suite_limits(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("limits");

	tcase_add_test(tc, test_a_file_size_limit_below_the_ring_still_gives_a_trace);
	tcase_add_test(tc, test_a_full_address_space_drops_new_stacks_and_the_program_runs_on);
	tcase_add_test(tc, test_a_trace_cut_by_the_file_size_limit_names_the_limit);
	tcase_add_test(tc, test_a_file_size_limit_below_the_smallest_ring_says_so);
	tcase_add_test(tc, test_a_refused_output_is_refused_for_the_whole_tree);
	tcase_add_test(tc, test_a_refused_tree_keeps_the_programs_other_preloads);
	tcase_add_test(tc, test_messages_of_concurrent_processes_are_whole_lines);
	suite_add_tcase(s, tc);
	return s;
}
