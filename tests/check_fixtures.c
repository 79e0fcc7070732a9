/*
 * check_fixtures: golden files.  Every integrity status of format.md section 3
 * and every way a trace is not valid evidence has a trace under
 * fixtures/traces/; `memtrace check` and `memtrace summary` of it must
 * print fixtures/expected/<trace>.check.jsonl and <trace>.summary.jsonl
 * byte for byte.  Every row of the capture table (format.md section 5) and the
 * repetition table (section 6) has its golden row too.  Rows name paths,
 * so the row commands run in a scratch directory holding a copy of the
 * trace, with relative paths; the scratch directories themselves
 * (mt_test_scratch()) are tested here too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mt_test.h"



/* Copy fixtures/traces/<name> into dir under the same name. */
static void copy_trace(const char *dir, const char *name)
{
	char *rel = NULL, *src, *dst = mt_test_path(dir, name);
	char *data;
	size_t len;

	ck_assert_int_ne(asprintf(&rel, "traces/%s", name), -1);
	src = mt_test_fixture(rel);
	data = mt_test_read(src, &len);
	mt_quiet(data != NULL, "fixture %s is missing", src);
	mt_test_write(dst, data, len);
	free(data);
	free(src);
	free(dst);
	free(rel);
}

static void assert_file_golden(const char *dir, const char *file,
			       const char *golden)
{
	char *path = mt_test_path(dir, file);
	size_t len;
	char *data = mt_test_read(path, &len);

	mt_quiet(data != NULL, "%s was not written", path);
	mt_test_assert_golden(data, len, golden);
	free(data);
	free(path);
}

static void assert_absent(const char *dir, const char *file)
{
	char *path = mt_test_path(dir, file);

	mt_quiet(!mt_test_exists(path), "%s should not exist", path);
	free(path);
}

/*
 * A valid trace: `check` prints its golden verdict and exits 0 when
 * complete, 1 when caveated; `summary` prints its golden rows and exits 0.
 */
static void assert_valid_trace(const char *trace, int check_status)
{
	char *rel = NULL, *path, *golden = NULL;
	mt_test_run_t r;

	ck_assert_int_ne(asprintf(&rel, "traces/%s.jsonl", trace), -1);
	path = mt_test_fixture(rel);

	mt_test_memtrace_in(&r, NULL, "check", path, NULL);
	mt_quiet_int_eq(r.status, check_status);
	ck_assert_str_eq(r.err, "");
	ck_assert_int_ne(asprintf(&golden, "expected/%s.check.jsonl", trace), -1);
	mt_test_assert_golden(r.out, r.out_len, golden);
	mt_test_run_release(&r);
	free(golden);

	mt_test_memtrace_in(&r, NULL, "summary", path, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	ck_assert_int_ne(asprintf(&golden, "expected/%s.summary.jsonl", trace), -1);
	mt_test_assert_golden(r.out, r.out_len, golden);
	mt_test_run_release(&r);
	free(golden);

	free(path);
	free(rel);
}

/*
 * Not valid evidence: `check` prints status "invalid" with the reason and
 * exits 2; `summary` prints nothing on stdout, says why on stderr, exits 2.
 */
static void assert_invalid_trace(const char *trace)
{
	char *rel = NULL, *path, *golden = NULL;
	mt_test_run_t r;

	ck_assert_int_ne(asprintf(&rel, "traces/%s.jsonl", trace), -1);
	path = mt_test_fixture(rel);

	mt_test_memtrace_in(&r, NULL, "check", path, NULL);
	mt_quiet_int_eq(r.status, 2);
	ck_assert_int_ne(asprintf(&golden, "expected/%s.check.jsonl", trace), -1);
	mt_test_assert_golden(r.out, r.out_len, golden);
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, NULL, "summary", path, NULL);
	mt_quiet_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	mt_quiet_ptr_nonnull(strstr(r.err, "is not valid memtrace evidence"));
	mt_test_run_release(&r);

	free(golden);
	free(path);
	free(rel);
}

/* ---- integrity statuses ---- */

START_TEST(test_check_reports_complete_trace)
{
	assert_valid_trace("complete", 0);
}
END_TEST

START_TEST(test_check_reports_missing_start_event_naming_first_kind)
{
	assert_valid_trace("missing_start_event", 1);
}
END_TEST

/* A malformed first line is no trace.start, even one whose kind says so. */
START_TEST(test_check_reports_missing_start_when_first_line_is_malformed)
{
	assert_valid_trace("missing_start_malformed_first_line", 1);
}
END_TEST

START_TEST(test_check_reports_sequence_gap_with_expected_and_found)
{
	assert_valid_trace("sequence_gap", 1);
}
END_TEST

START_TEST(test_check_skips_and_counts_malformed_events_without_gap)
{
	assert_valid_trace("malformed_event", 1);
}
END_TEST

START_TEST(test_check_reports_missing_stop_of_killed_process)
{
	assert_valid_trace("missing_stop_killed", 1);
}
END_TEST

START_TEST(test_check_drops_last_line_without_newline)
{
	assert_valid_trace("missing_stop_cut_line", 1);
}
END_TEST

START_TEST(test_check_drops_unterminated_stop_line)
{
	assert_valid_trace("missing_stop_unterminated_stop", 1);
}
END_TEST

START_TEST(test_check_drops_invalid_last_line_as_cut_off_tail)
{
	assert_valid_trace("missing_stop_invalid_last_line", 1);
}
END_TEST

START_TEST(test_check_reports_zero_padded_tail_of_killed_process)
{
	assert_valid_trace("zero_padded_tail", 1);
}
END_TEST

START_TEST(test_check_reports_zero_padded_tail_after_cut_line)
{
	assert_valid_trace("zero_padded_cut_line", 1);
}
END_TEST

START_TEST(test_check_ignores_zero_padding_after_stop)
{
	assert_valid_trace("complete_zero_padded", 0);
}
END_TEST

START_TEST(test_check_reports_events_after_stop_and_summarizes_them)
{
	assert_valid_trace("events_after_stop", 1);
}
END_TEST

START_TEST(test_check_reports_events_dropped_by_writer)
{
	assert_valid_trace("events_dropped", 1);
}
END_TEST

START_TEST(test_check_lists_every_caveat_in_spec_order)
{
	assert_valid_trace("several_caveats", 1);
}
END_TEST

START_TEST(test_check_lists_missing_stop_among_several_caveats)
{
	assert_valid_trace("several_caveats_cut_off", 1);
}
END_TEST

/* ---- not valid evidence ---- */

START_TEST(test_check_rejects_empty_file)
{
	assert_invalid_trace("invalid_empty");
}
END_TEST

START_TEST(test_check_rejects_file_of_only_zero_bytes)
{
	assert_invalid_trace("invalid_only_zero_bytes");
}
END_TEST

START_TEST(test_check_rejects_first_line_not_json)
{
	assert_invalid_trace("invalid_not_json");
}
END_TEST

START_TEST(test_check_rejects_first_line_without_v)
{
	assert_invalid_trace("invalid_missing_v");
}
END_TEST

START_TEST(test_check_rejects_first_line_without_seq)
{
	assert_invalid_trace("invalid_missing_seq");
}
END_TEST

START_TEST(test_check_rejects_first_line_without_kind)
{
	assert_invalid_trace("invalid_missing_kind");
}
END_TEST

START_TEST(test_check_rejects_format_version_2)
{
	assert_invalid_trace("invalid_version_2");
}
END_TEST

/* ---- the capture table, format.md section 5 ---- */

START_TEST(test_capture_row_of_complete_trace_is_summary_written)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_trace(dir, "complete.jsonl");
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "complete.jsonl", "--summary",
	       "complete.summary.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	mt_test_assert_golden(r.out, r.out_len,
			      "expected/capture_complete.row.jsonl");
	/* The summary is written with --top 0 --include-zero-live. */
	assert_file_golden(dir, "complete.summary.jsonl",
			   "expected/capture_complete.summary.jsonl");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_capture_row_of_caveated_trace_names_its_status)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_trace(dir, "missing_stop_killed.jsonl");
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "missing_stop_killed.jsonl",
	       "--summary", "killed.summary.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	mt_test_assert_golden(r.out, r.out_len,
			      "expected/capture_caveated.row.jsonl");
	assert_file_golden(dir, "killed.summary.jsonl",
			   "expected/capture_caveated.summary.jsonl");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_capture_row_of_missing_trace_is_capture_missing)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "capture", "--capture", "absent.jsonl", "--summary",
	       "absent.summary.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_assert_golden(r.out, r.out_len,
			      "expected/capture_missing.row.jsonl");
	assert_absent(dir, "absent.summary.jsonl");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_capture_row_of_invalid_trace_is_summary_invalid)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_trace(dir, "invalid_not_json.jsonl");
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "invalid_not_json.jsonl",
	       "--summary", "invalid.summary.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_assert_golden(r.out, r.out_len,
			      "expected/capture_invalid.row.jsonl");
	assert_absent(dir, "invalid.summary.jsonl");
	mt_test_run_release(&r);
}
END_TEST

/* ---- the repetition table, format.md section 6 ---- */

START_TEST(test_repetition_row_of_failed_workload_has_no_summary)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	/* The trace is there and complete: a failed workload is still
	 * workload_failed. */
	copy_trace(dir, "complete.jsonl");
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "complete.jsonl", "--out",
	       "reps.jsonl", "--index", "1", "--exit-code", "139", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "");
	assert_file_golden(dir, "reps.jsonl",
			   "expected/repetition_workload_failed.jsonl");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_repetition_row_of_missing_trace_is_capture_missing)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "absent.jsonl", "--out",
	       "reps.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	assert_file_golden(dir, "reps.jsonl",
			   "expected/repetition_capture_missing.jsonl");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_repetition_row_of_invalid_trace_is_summary_invalid)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_trace(dir, "invalid_version_2.jsonl");
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "invalid_version_2.jsonl",
	       "--out", "reps.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	assert_file_golden(dir, "reps.jsonl",
			   "expected/repetition_summary_invalid.jsonl");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_repetition_row_embeds_summary_of_valid_trace)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_trace(dir, "complete.jsonl");
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "complete.jsonl", "--out",
	       "reps.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "");
	ck_assert_str_eq(r.err, "");
	assert_file_golden(dir, "reps.jsonl",
			   "expected/repetition_summary_written.jsonl");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_repetition_embeds_same_line_capture_writes)
{
	char *dir = mt_test_scratch();
	char *path, *summary, *row, *embedded;
	mt_test_run_t r;
	size_t slen;

	copy_trace(dir, "missing_stop_killed.jsonl");
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "missing_stop_killed.jsonl",
	       "--summary", "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "missing_stop_killed.jsonl",
	       "--out", "reps.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);

	path = mt_test_path(dir, "s.jsonl");
	summary = mt_test_read(path, &slen);
	free(path);
	path = mt_test_path(dir, "reps.jsonl");
	row = mt_test_read(path, NULL);
	free(path);
	mt_quiet_ptr_nonnull(summary);
	mt_quiet_ptr_nonnull(row);
	mt_quiet_uint_gt(slen, 1);
	mt_quiet_int_eq(summary[slen - 1], '\n');
	summary[slen - 1] = '\0';
	embedded = strstr(row, ",\"summary\":");
	mt_quiet_ptr_nonnull(embedded);
	embedded += strlen(",\"summary\":");
	/* The summary line, less its newline, then the row's closing. */
	mt_quiet_int_eq(strncmp(embedded, summary, slen - 1), 0);
	ck_assert_str_eq(embedded + slen - 1, "}\n");
	free(summary);
	free(row);
}
END_TEST

START_TEST(test_repetition_index_1_replaces_file)
{
	char *dir = mt_test_scratch();
	char *out = mt_test_path(dir, "reps.jsonl");
	static const char stale[] =
		"{\"stale\":1}\n{\"stale\":2}\n{\"stale\":3}\n";
	mt_test_run_t r;

	copy_trace(dir, "complete.jsonl");
	mt_test_write(out, stale, strlen(stale));
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "complete.jsonl", "--out",
	       "reps.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	assert_file_golden(dir, "reps.jsonl",
			   "expected/repetition_summary_written.jsonl");
	mt_test_run_release(&r);
	free(out);
}
END_TEST

START_TEST(test_repetition_later_index_appends_row)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	copy_trace(dir, "complete.jsonl");
	copy_trace(dir, "missing_stop_killed.jsonl");
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "complete.jsonl", "--out",
	       "reps.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "missing_stop_killed.jsonl",
	       "--out", "reps.jsonl", "--index", "2", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "absent.jsonl", "--out",
	       "reps.jsonl", "--index", "3", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	assert_file_golden(dir, "reps.jsonl",
			   "expected/repetition_appended.jsonl");
}
END_TEST

/* The scratch directory every test stands on: gone, with what it holds,
 * once the process that asked for it exits, and not before, even when a
 * process it forked exits first (that one removes only its own). */
START_TEST(test_a_scratch_directory_is_removed_when_its_test_process_exits)
{
	char path[4096];
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	mt_quiet_int_eq(pipe(fds), 0);
	pid = fork();
	mt_quiet(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char *dir = mt_test_scratch(), *file = mt_test_path(dir, "held");
		pid_t child;

		close(fds[0]);
		mt_test_write(file, "x", 1);
		child = fork();
		if (child == 0)
			exit(0);
		if (child < 0 || waitpid(child, &status, 0) != child)
			_exit(3);
		if (!mt_test_exists(file))
			_exit(2);
		if (write(fds[1], dir, strlen(dir)) != (ssize_t)strlen(dir))
			_exit(3);
		exit(0);
	}
	close(fds[1]);
	n = read(fds[0], path, sizeof(path) - 1);
	close(fds[0]);
	mt_quiet_int_eq(waitpid(pid, &status, 0), pid);
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "the test process ended with status %d (2: its directory was "
		 "removed when its own child exited)", status);
	mt_quiet(n > 0, "no directory named");
	path[n] = '\0';
	mt_quiet(!mt_test_exists(path), "%s is still there after its process exited",
		 path);
}
END_TEST

Suite *mt_suite_fixtures(void)
{
	Suite *s = suite_create("fixtures");
	TCase *integrity = tcase_create("integrity");
	TCase *invalid = tcase_create("invalid");
	TCase *capture = tcase_create("capture");
	TCase *repetition = tcase_create("repetition");
	TCase *scratch = tcase_create("scratch");

	tcase_add_test(integrity, test_check_reports_complete_trace);
	tcase_add_test(integrity, test_check_reports_missing_start_event_naming_first_kind);
	tcase_add_test(integrity, test_check_reports_missing_start_when_first_line_is_malformed);
	tcase_add_test(integrity, test_check_reports_sequence_gap_with_expected_and_found);
	tcase_add_test(integrity, test_check_skips_and_counts_malformed_events_without_gap);
	tcase_add_test(integrity, test_check_reports_missing_stop_of_killed_process);
	tcase_add_test(integrity, test_check_drops_last_line_without_newline);
	tcase_add_test(integrity, test_check_drops_unterminated_stop_line);
	tcase_add_test(integrity, test_check_drops_invalid_last_line_as_cut_off_tail);
	tcase_add_test(integrity, test_check_reports_zero_padded_tail_of_killed_process);
	tcase_add_test(integrity, test_check_reports_zero_padded_tail_after_cut_line);
	tcase_add_test(integrity, test_check_ignores_zero_padding_after_stop);
	tcase_add_test(integrity, test_check_reports_events_after_stop_and_summarizes_them);
	tcase_add_test(integrity, test_check_reports_events_dropped_by_writer);
	tcase_add_test(integrity, test_check_lists_every_caveat_in_spec_order);
	tcase_add_test(integrity, test_check_lists_missing_stop_among_several_caveats);
	suite_add_tcase(s, integrity);

	tcase_add_test(invalid, test_check_rejects_empty_file);
	tcase_add_test(invalid, test_check_rejects_file_of_only_zero_bytes);
	tcase_add_test(invalid, test_check_rejects_first_line_not_json);
	tcase_add_test(invalid, test_check_rejects_first_line_without_v);
	tcase_add_test(invalid, test_check_rejects_first_line_without_seq);
	tcase_add_test(invalid, test_check_rejects_first_line_without_kind);
	tcase_add_test(invalid, test_check_rejects_format_version_2);
	suite_add_tcase(s, invalid);

	tcase_add_test(capture, test_capture_row_of_complete_trace_is_summary_written);
	tcase_add_test(capture, test_capture_row_of_caveated_trace_names_its_status);
	tcase_add_test(capture, test_capture_row_of_missing_trace_is_capture_missing);
	tcase_add_test(capture, test_capture_row_of_invalid_trace_is_summary_invalid);
	suite_add_tcase(s, capture);

	tcase_add_test(repetition, test_repetition_row_of_failed_workload_has_no_summary);
	tcase_add_test(repetition, test_repetition_row_of_missing_trace_is_capture_missing);
	tcase_add_test(repetition, test_repetition_row_of_invalid_trace_is_summary_invalid);
	tcase_add_test(repetition, test_repetition_row_embeds_summary_of_valid_trace);
	tcase_add_test(repetition, test_repetition_embeds_same_line_capture_writes);
	tcase_add_test(repetition, test_repetition_index_1_replaces_file);
	tcase_add_test(repetition, test_repetition_later_index_appends_row);
	suite_add_tcase(s, repetition);

	tcase_add_test(scratch, test_a_scratch_directory_is_removed_when_its_test_process_exits);
	suite_add_tcase(s, scratch);
	return s;
}
