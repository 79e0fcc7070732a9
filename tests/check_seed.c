/*
 * check_seed: the four tests of the seed (the Zig module whose capture
 * and repetition rows memtrace reproduces: a capture's row from its
 * trace, and a repetition's rows appended run by run), ported to run
 * the real build/memtrace in a scratch directory: a complete capture, a
 * truncated and a missing one, repetition rows that keep every run's
 * summary, and the repetition surviving every allocation failure (swept
 * through the CLI with MEMTRACE_ANALYZER_FAIL_AT).  The same sweep is run
 * on an appending repetition and on a capture, whose seed code returns
 * OutOfMemory the same way.
 */
#include <dirent.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_test.h"

/* The row the seed's tests expect for the minimal trace at index 1: the
 * summary is format.md section 4's example, byte for byte. */
#define MINIMAL_SUMMARY                                                        \
	"{\"schema\":\"memtrace.summary/v1\",\"status\":\"complete\","         \
	"\"message\":null,\"caveats\":[],\"format_version\":1,\"events\":3,"   \
	"\"threads\":0,\"allocations\":0,\"frees\":0,\"resizes\":0,"           \
	"\"remaps\":0,\"failed_allocations\":0,\"unknown_frees\":0,"           \
	"\"overlapping_allocs\":0,\"malformed_events\":0,"                     \
	"\"bytes_allocated\":0,\"bytes_freed\":0,\"live_allocations\":0,"      \
	"\"live_bytes\":0,\"peak_live_bytes\":0,\"peak_live_allocations\":0,"  \
	"\"peak_seq\":0,\"temporary_allocations\":0,\"duration_ns\":0,"        \
	"\"by_allocator\":[{\"allocator_id\":0,\"name\":\"libc\","             \
	"\"allocations\":0,\"frees\":0,\"resizes\":0,\"remaps\":0,"            \
	"\"live_bytes\":0,\"peak_live_bytes\":0}]}"

#define MINIMAL_ROW(index)                                                     \
	"{\"schema\":\"tiny.profiling.allocation-repetition/v1\","             \
	"\"execution_index\":" #index ",\"exit_code\":0,"                      \
	"\"state\":\"summary_written\",\"summary\":" MINIMAL_SUMMARY "}\n"

#define REPETITION_SCHEMA "tiny.profiling.allocation-repetition/v1"

/* The seed's truncated trace: no trace.stop, every line whole. */
#define TRUNCATED_TRACE                                  \
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n" \
	"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n"


static char *write_trace(const char *dir, const char *name, const char *text)
{
	char *path = mt_test_path(dir, name);

	mt_test_write(path, text, strlen(text));
	return path;
}

/* Parse one JSONL row (the whole of s but its newline). */
static struct json_object *parse_row(const char *s)
{
	struct json_object *o;
	size_t len = strlen(s);

	mt_quiet(len > 0 && s[len - 1] == '\n', "not one line: %s", s);
	mt_quiet(memchr(s, '\n', len - 1) == NULL, "more than one line: %s",
		 s);
	o = json_tokener_parse(s);
	mt_quiet(o != NULL, "not JSON: %s", s);
	ck_assert(json_object_is_type(o, json_type_object));
	return o;
}

static void assert_str_field(struct json_object *o, const char *key,
			     const char *expected)
{
	struct json_object *v = mt_test_json_member(o, key);

	mt_quiet(json_object_is_type(v, json_type_string),
		 "%s is not a string", key);
	ck_assert_str_eq(json_object_get_string(v), expected);
}

static void assert_null_field(struct json_object *o, const char *key)
{
	mt_quiet(mt_test_json_member(o, key) == NULL, "%s is not null", key);
}

static size_t count_occurrences(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* The names in dir, sorted, joined by spaces. */
static char *list_dir(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	size_t cap = 1, len = 0;
	char *out;

	ck_assert_int_ge(n, 0);
	for (int i = 0; i < n; i++)
		cap += strlen(names[i]->d_name) + 1;
	out = malloc(cap);
	mt_quiet_ptr_nonnull(out);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (strcmp(name, ".") && strcmp(name, "..")) {
			len += (size_t)sprintf(out + len, "%s%s", len ? " " : "",
					       name);
		}
		free(names[i]);
	}
	free(names);
	return out;
}

START_TEST(test_capture_writes_complete_canonical_integrity)
{
	char *dir = mt_test_scratch();
	char *capture = write_trace(dir, "allocations.jsonl",
				    MT_TEST_MINIMAL_TRACE);
	char *summary_path = mt_test_path(dir, "summary.jsonl");
	const char *args[] = { "capture", "--capture", capture, "--summary",
			       summary_path, NULL };
	struct json_object *row;
	mt_test_run_t r;
	char *summary;

	mt_test_memtrace_in_argv(&r, dir, NULL, args);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	row = parse_row(r.out);
	assert_str_field(row, "kind", "allocation_trace");
	assert_str_field(row, "tool", "lib/memtrace");
	assert_str_field(row, "scope", "direct");
	assert_str_field(row, "capture_path", capture);
	assert_str_field(row, "summary_path", summary_path);
	assert_str_field(row, "state", "summary_written");
	assert_null_field(row, "caveat_kind");
	assert_null_field(row, "caveat_message");
	json_object_put(row);

	summary = mt_test_read(summary_path, NULL);
	mt_quiet_ptr_nonnull(summary);
	mt_quiet_ptr_nonnull(strstr(summary, "\"status\":\"complete\""));
	/* The summary the capture writes is --top 0 --include-zero-live:
	 * format.md section 4's example, one line. */
	ck_assert_str_eq(summary, MINIMAL_SUMMARY "\n");
	free(summary);

	mt_test_run_release(&r);
	free(summary_path);
	free(capture);
}
END_TEST

START_TEST(test_capture_surfaces_tail_truncation_and_missing_artifacts)
{
	char *dir = mt_test_scratch();
	char *capture = write_trace(dir, "truncated.jsonl", TRUNCATED_TRACE);
	char *summary_path = mt_test_path(dir, "summary.jsonl");
	const char *partial_args[] = { "capture", "--capture", capture,
				       "--summary", summary_path, NULL };
	const char *missing_args[] = { "capture", "--capture", "missing.jsonl",
				       "--summary", summary_path, NULL };
	struct json_object *row;
	mt_test_run_t r;
	char *summary;

	mt_test_memtrace_in_argv(&r, dir, NULL, partial_args);
	mt_quiet_int_eq(r.status, 0);
	row = parse_row(r.out);
	assert_str_field(row, "state", "summary_written");
	assert_str_field(row, "caveat_kind", "missing_stop_event");
	assert_str_field(row, "caveat_message",
			 "no trace.stop after line 2: the process may have "
			 "been killed");
	json_object_put(row);
	mt_test_run_release(&r);
	summary = mt_test_read(summary_path, NULL);
	mt_quiet_ptr_nonnull(summary);
	mt_quiet_ptr_nonnull(strstr(summary,
			     "\"status\":\"missing_stop_event\""));
	free(summary);

	mt_test_memtrace_in_argv(&r, dir, NULL, missing_args);
	mt_quiet_int_eq(r.status, 0);
	row = parse_row(r.out);
	assert_str_field(row, "capture_path", "missing.jsonl");
	assert_str_field(row, "state", "capture_missing");
	assert_str_field(row, "caveat_kind", "allocation_trace_missing");
	assert_str_field(row, "caveat_message",
			 "allocation tracing was requested but produced no "
			 "trace artifact");
	json_object_put(row);
	mt_test_run_release(&r);

	free(summary_path);
	free(capture);
}
END_TEST

START_TEST(test_repetition_retains_every_process_summary)
{
	char *dir = mt_test_scratch();
	char *capture = write_trace(dir, "allocations.jsonl",
				    MT_TEST_MINIMAL_TRACE);
	char *reps = mt_test_path(dir, "allocations.repetitions.jsonl");
	mt_test_run_t r;
	char *rows, *second;

	for (int index = 1; index <= 2; index++) {
		char num[16];
		const char *args[] = { "repetition", "--capture", capture,
				       "--out", reps, "--index", num, NULL };

		snprintf(num, sizeof(num), "%d", index);
		mt_test_memtrace_in_argv(&r, dir, NULL, args);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.out, "");
		ck_assert_str_eq(r.err, "");
		mt_test_run_release(&r);
	}
	rows = mt_test_read(reps, NULL);
	mt_quiet_ptr_nonnull(rows);
	mt_quiet_uint_eq(count_occurrences(rows, REPETITION_SCHEMA), 2);
	mt_quiet_ptr_nonnull(strstr(rows, "\"execution_index\":1"));
	mt_quiet_ptr_nonnull(strstr(rows, "\"execution_index\":2"));
	mt_quiet_ptr_nonnull(strstr(rows, "\"resizes\":0"));
	mt_quiet_ptr_nonnull(strstr(rows, "\"remaps\":0"));
	/* Row by row: each keeps its own run's whole summary. */
	second = strchr(rows, '\n');
	mt_quiet_ptr_nonnull(second);
	second++;
	mt_quiet_int_eq(strncmp(rows, MINIMAL_ROW(1), strlen(MINIMAL_ROW(1))), 0);
	ck_assert_str_eq(second, MINIMAL_ROW(2));
	free(rows);

	free(reps);
	free(capture);
}
END_TEST

/* The highest N the sweep tries before calling the analyzer endless. */
#define SWEEP_LIMIT 100000

START_TEST(test_repetition_survives_every_allocation_failure)
{
	char *dir = mt_test_scratch();
	char *capture = write_trace(dir, "allocations.jsonl",
				    MT_TEST_MINIMAL_TRACE);
	char *reps = mt_test_path(dir, "repetitions.jsonl");
	const char *args[] = { "repetition", "--capture", capture, "--out",
			       reps, "--index", "1", NULL };
	unsigned long n;
	mt_test_run_t r;
	char *listing;

	for (n = 1; n < SWEEP_LIMIT; n++) {
		char var[64];
		char *env[] = { var, NULL };

		snprintf(var, sizeof(var), "MEMTRACE_ANALYZER_FAIL_AT=%lu", n);
		mt_test_memtrace_in_argv(&r, dir, env, args);
		if (r.status == 0)
			break;
		mt_quiet(r.status == 4,
			 "allocation %lu failed: exit %d, stderr: %s", n,
			 r.status, r.err);
		mt_quiet(strstr(r.err, "out of memory") != NULL,
			 "allocation %lu failed: stderr says %s", n, r.err);
		ck_assert_str_eq(r.out, "");
		/* No row, and no temporary file either. */
		listing = list_dir(dir);
		mt_quiet(!strcmp(listing, "allocations.jsonl"),
			 "allocation %lu failed and left: %s", n, listing);
		free(listing);
		mt_test_run_release(&r);
	}
	mt_quiet(n < SWEEP_LIMIT, "the sweep never reached a clean run");
	/* The analyzer allocates: the sweep failed some allocations. */
	mt_quiet_uint_gt(n, 1);
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	mt_test_assert_file_eq(reps, MINIMAL_ROW(1));
	listing = list_dir(dir);
	ck_assert_str_eq(listing, "allocations.jsonl repetitions.jsonl");
	free(listing);

	free(reps);
	free(capture);
}
END_TEST

/* The same sweep at index 2: a failing run must leave the rows already
 * there untouched, not append half a row. */
START_TEST(test_repetition_append_survives_every_allocation_failure)
{
	char *dir = mt_test_scratch();
	char *capture = write_trace(dir, "allocations.jsonl",
				    MT_TEST_MINIMAL_TRACE);
	char *reps = mt_test_path(dir, "repetitions.jsonl");
	const char *args[] = { "repetition", "--capture", capture, "--out",
			       reps, "--index", "2", NULL };
	unsigned long n;
	mt_test_run_t r;

	mt_test_write(reps, MINIMAL_ROW(1), strlen(MINIMAL_ROW(1)));
	for (n = 1; n < SWEEP_LIMIT; n++) {
		char var[64];
		char *env[] = { var, NULL };
		char *listing;

		snprintf(var, sizeof(var), "MEMTRACE_ANALYZER_FAIL_AT=%lu", n);
		mt_test_memtrace_in_argv(&r, dir, env, args);
		if (r.status == 0)
			break;
		mt_quiet(r.status == 4,
			 "allocation %lu failed: exit %d, stderr: %s", n,
			 r.status, r.err);
		mt_quiet_ptr_nonnull(strstr(r.err, "out of memory"));
		mt_test_assert_file_eq(reps, MINIMAL_ROW(1));
		listing = list_dir(dir);
		ck_assert_str_eq(listing, "allocations.jsonl repetitions.jsonl");
		free(listing);
		mt_test_run_release(&r);
	}
	mt_quiet(n < SWEEP_LIMIT, "the sweep never reached a clean run");
	mt_quiet_uint_gt(n, 1);
	mt_test_run_release(&r);
	mt_test_assert_file_eq(reps, MINIMAL_ROW(1) MINIMAL_ROW(2));

	free(reps);
	free(capture);
}
END_TEST

/* appendCapture returns OutOfMemory too: the capture through every
 * allocation failure writes no summary and no row. */
START_TEST(test_capture_survives_every_allocation_failure)
{
	char *dir = mt_test_scratch();
	char *capture = write_trace(dir, "allocations.jsonl",
				    MT_TEST_MINIMAL_TRACE);
	char *summary = mt_test_path(dir, "summary.jsonl");
	char *rows = mt_test_path(dir, "captures.jsonl");
	const char *args[] = { "capture", "--capture", capture, "--summary",
			       summary, "--append", rows, NULL };
	unsigned long n;
	mt_test_run_t r;
	char *listing, *row = NULL;

	for (n = 1; n < SWEEP_LIMIT; n++) {
		char var[64];
		char *env[] = { var, NULL };

		snprintf(var, sizeof(var), "MEMTRACE_ANALYZER_FAIL_AT=%lu", n);
		mt_test_memtrace_in_argv(&r, dir, env, args);
		if (r.status == 0)
			break;
		mt_quiet(r.status == 4,
			 "allocation %lu failed: exit %d, stderr: %s", n,
			 r.status, r.err);
		mt_quiet_ptr_nonnull(strstr(r.err, "out of memory"));
		listing = list_dir(dir);
		mt_quiet(!strcmp(listing, "allocations.jsonl"),
			 "allocation %lu failed and left: %s", n, listing);
		free(listing);
		mt_test_run_release(&r);
	}
	mt_quiet(n < SWEEP_LIMIT, "the sweep never reached a clean run");
	mt_quiet_uint_gt(n, 1);
	mt_test_run_release(&r);
	mt_test_assert_file_eq(summary, MINIMAL_SUMMARY "\n");
	ck_assert_int_ne(asprintf(&row,
				  "{\"kind\":\"allocation_trace\",\"tool\":"
				  "\"lib/memtrace\",\"scope\":\"direct\","
				  "\"capture_path\":\"%s\",\"summary_path\":"
				  "\"%s\",\"state\":\"summary_written\","
				  "\"caveat_kind\":null,\"caveat_message\":null}\n",
				  capture, summary), -1);
	mt_test_assert_file_eq(rows, row);
	free(row);

	free(rows);
	free(summary);
	free(capture);
}
END_TEST

Suite *mt_suite_seed(void)
{
	Suite *s = suite_create("seed");
	TCase *capture = tcase_create("capture");
	TCase *repetition = tcase_create("repetition");
	TCase *oom = tcase_create("allocation_failure");

	tcase_add_test(capture, test_capture_writes_complete_canonical_integrity);
	tcase_add_test(capture, test_capture_surfaces_tail_truncation_and_missing_artifacts);
	suite_add_tcase(s, capture);

	tcase_add_test(repetition, test_repetition_retains_every_process_summary);
	suite_add_tcase(s, repetition);

	/* Dozens of runs of the binary each. */
	tcase_set_timeout(oom, 60);
	tcase_add_test(oom, test_repetition_survives_every_allocation_failure);
	tcase_add_test(oom, test_repetition_append_survives_every_allocation_failure);
	tcase_add_test(oom, test_capture_survives_every_allocation_failure);
	suite_add_tcase(s, oom);
	return s;
}
