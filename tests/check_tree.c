/*
 * check_tree: `memtrace tree TRACE...`, the traces of a process tree
 * summed (analyzer/rows/mt_tree.h): its line's sums are the processes'
 * summaries added up, its status names the first trace that is not
 * complete, a trace that is not evidence is counted and adds nothing, a
 * line follows per process in the order given, and the exit statuses are
 * the other commands'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_test.h"

/* The lines memtrace printed, parsed; n of them. */
typedef struct {
	json_object *line[8];
	int n;
} lines_t;

static void parse_lines(lines_t *l, const char *out)
{
	char *copy = strdup(out), *save = NULL;

	memset(l, 0, sizeof(*l));
	for (char *s = strtok_r(copy, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		mt_quiet(l->n < 8, "more lines than expected: %s", out);
		l->line[l->n] = json_tokener_parse(s);
		mt_quiet(l->line[l->n] != NULL, "not JSON: %s", s);
		l->n++;
	}
	free(copy);
}

static void lines_release(lines_t *l)
{
	for (int i = 0; i < l->n; i++)
		json_object_put(l->line[i]);
}

/* memtrace summary TRACE --top 0, parsed. */
static json_object *summary_of(const char *trace)
{
	mt_test_run_t r;
	json_object *o;

	mt_test_memtrace_in(&r, NULL, "summary", trace, "--top", "0", NULL);
	o = json_tokener_parse(r.out);
	mt_quiet(o != NULL, "summary of %s: %s", trace, r.out);
	mt_test_run_release(&r);
	return o;
}

static const char *const summed[] = {
	"events", "allocations", "frees", "resizes", "remaps", "failed_allocations",
	"unknown_frees", "bytes_allocated", "bytes_freed", "live_allocations",
	"live_bytes", "peak_live_bytes", "temporary_allocations",
};

START_TEST(test_tree_sums_the_processes_and_writes_a_line_each)
{
	char *demo = mt_test_fixture("demo.jsonl");
	char *complete = mt_test_fixture("traces/complete.jsonl");
	char *killed = mt_test_fixture("traces/missing_stop_killed.jsonl");
	char *gap = mt_test_fixture("traces/sequence_gap.jsonl");
	const char *paths[] = { demo, complete, killed, gap };
	json_object *sums[4];
	mt_test_run_t r;
	lines_t l;

	for (int i = 0; i < 4; i++)
		sums[i] = summary_of(paths[i]);
	mt_test_memtrace_in(&r, NULL, "tree", "--json", demo, complete, killed, gap, NULL);
	mt_quiet_int_eq(r.status, 0);
	parse_lines(&l, r.out);
	mt_quiet_int_eq(l.n, 5);
	ck_assert_str_eq(mt_test_json_str(l.line[0], "schema"), "memtrace.tree/v1");
	mt_quiet_int_eq(mt_test_json_i64(l.line[0], "processes"), 4);
	mt_quiet_int_eq(mt_test_json_i64(l.line[0], "complete"), 2);
	mt_quiet_int_eq(mt_test_json_i64(l.line[0], "caveated"), 2);
	mt_quiet_int_eq(mt_test_json_i64(l.line[0], "invalid"), 0);
	/* The first trace that is not complete, in the order given. */
	ck_assert_str_eq(mt_test_json_str(l.line[0], "status"), "missing_stop_event");
	ck_assert_str_eq(mt_test_json_str(l.line[0], "trace"), killed);
	for (size_t f = 0; f < sizeof(summed) / sizeof(summed[0]); f++) {
		uint64_t want = 0;

		for (int i = 0; i < 4; i++)
			want += mt_test_json_u64(sums[i], summed[f]);
		mt_quiet(mt_test_json_u64(l.line[0], summed[f]) == want,
			 "%s: %ju, the processes' sum is %ju", summed[f],
			 (uintmax_t)mt_test_json_u64(l.line[0], summed[f]), (uintmax_t)want);
	}
	for (int i = 0; i < 4; i++) {
		json_object *p = l.line[1 + i];

		ck_assert_str_eq(mt_test_json_str(p, "schema"), "memtrace.process/v1");
		ck_assert_str_eq(mt_test_json_str(p, "trace"), paths[i]);
		ck_assert_str_eq(mt_test_json_str(p, "status"),
				 mt_test_json_str(sums[i], "status"));
		for (size_t f = 0; f < sizeof(summed) / sizeof(summed[0]); f++)
			mt_quiet(mt_test_json_u64(p, summed[f]) ==
					 mt_test_json_u64(sums[i], summed[f]),
				 "%s of %s", summed[f], paths[i]);
	}
	lines_release(&l);
	for (int i = 0; i < 4; i++)
		json_object_put(sums[i]);
	mt_test_run_release(&r);
	free(demo);
	free(complete);
	free(killed);
	free(gap);
}
END_TEST

/* A trace that is not evidence adds nothing: it is counted, its line
 * says why, and a complete tree's status is "complete" with no trace. */
START_TEST(test_tree_counts_a_trace_that_is_not_evidence_and_adds_nothing)
{
	char *complete = mt_test_fixture("traces/complete.jsonl");
	char *empty = mt_test_fixture("traces/invalid_empty.jsonl");
	json_object *one = summary_of(complete);
	mt_test_run_t r;
	lines_t l;

	mt_test_memtrace_in(&r, NULL, "tree", "--json", complete, NULL);
	mt_quiet_int_eq(r.status, 0);
	parse_lines(&l, r.out);
	ck_assert_str_eq(mt_test_json_str(l.line[0], "status"), "complete");
	ck_assert(json_object_is_type(mt_test_json_member(l.line[0], "trace"), json_type_null));
	lines_release(&l);
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, NULL, "tree", "--json", complete, empty, NULL);
	mt_quiet_int_eq(r.status, 0);
	parse_lines(&l, r.out);
	mt_quiet_int_eq(l.n, 3);
	mt_quiet_int_eq(mt_test_json_i64(l.line[0], "invalid"), 1);
	ck_assert_str_eq(mt_test_json_str(l.line[0], "status"), "invalid");
	ck_assert_str_eq(mt_test_json_str(l.line[0], "trace"), empty);
	mt_quiet_uint_eq(mt_test_json_u64(l.line[0], "allocations"),
			 mt_test_json_u64(one, "allocations"));
	ck_assert_str_eq(mt_test_json_str(l.line[2], "status"), "invalid");
	ck_assert_str_eq(mt_test_json_str(l.line[2], "message"), "the trace is empty");
	lines_release(&l);
	mt_test_run_release(&r);
	json_object_put(one);
	free(complete);
	free(empty);
}
END_TEST

/* Exit statuses as the other commands': --strict gives the worst trace's
 * (2 not evidence over 1 caveated), a missing trace 3 with nothing
 * written, no trace 64. */
START_TEST(test_tree_exits_as_the_other_commands_do)
{
	char *complete = mt_test_fixture("traces/complete.jsonl");
	char *killed = mt_test_fixture("traces/missing_stop_killed.jsonl");
	char *empty = mt_test_fixture("traces/invalid_empty.jsonl");
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "tree", "--strict", complete, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "tree", "--strict", complete, killed, NULL);
	mt_quiet_int_eq(r.status, 1);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "tree", "--strict", killed, empty, complete, NULL);
	mt_quiet_int_eq(r.status, 2);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "tree", complete, "/nonexistent/memtrace.jsonl", NULL);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	mt_quiet(strstr(r.err, "cannot read '/nonexistent/memtrace.jsonl'") != NULL, "%s", r.err);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "tree", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_quiet(strstr(r.err, "missing TRACE argument") != NULL, "%s", r.err);
	mt_test_run_release(&r);
	free(complete);
	free(killed);
	free(empty);
}
END_TEST

Suite *mt_suite_tree(void)
{
	Suite *s = suite_create("tree");
	TCase *tc = tcase_create("tree");

	tcase_add_test(tc, test_tree_sums_the_processes_and_writes_a_line_each);
	tcase_add_test(tc, test_tree_counts_a_trace_that_is_not_evidence_and_adds_nothing);
	tcase_add_test(tc, test_tree_exits_as_the_other_commands_do);
	suite_add_tcase(s, tc);
	return s;
}
