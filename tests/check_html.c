/*
 * check_html: `memtrace html TRACE`: the page is written whole, holds
 * nothing that fetches (no URL, no src=), carries the integrity verdict
 * and the summary's totals in its data, keeps every string of the trace
 * inside its data element, stays under 5 MiB on a big trace, and fails
 * on bad input as the other render commands do (status, no file).  The
 * browser tests (tests/browser/, make browser-check) open the page.
 */
#include <check.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mt_test.h"
#include "mt_test_trace.h"

#define DATA_OPEN "<script type=\"application/json\" id=\"memtrace-data\">"

/* The summary line of the trace at path, parsed. */
static json_object *summary_of(const char *path)
{
	mt_test_run_t r;
	json_object *o;
	char *nl;

	mt_test_memtrace_in(&r, NULL, "summary", path, "--top", "0", NULL);
	ck_assert_msg(r.status <= 1, "summary %s: %d: %s", path, r.status, r.err);
	if ((nl = strchr(r.out, '\n')))
		*nl = '\0';
	o = json_tokener_parse(r.out);
	ck_assert_msg(o != NULL, "summary is no JSON: %s", r.out);
	mt_test_run_release(&r);
	return o;
}

/* The page's data object, parsed. */
static json_object *data_of(const char *page)
{
	const char *from = strstr(page, DATA_OPEN), *to;
	json_object *o;
	char *text;

	ck_assert_msg(from != NULL, "no data element");
	from += strlen(DATA_OPEN);
	to = strstr(from, "</script>");
	ck_assert_msg(to != NULL, "the data element does not end");
	text = strndup(from, (size_t)(to - from));
	o = json_tokener_parse(text);
	ck_assert_msg(o != NULL, "the data is no JSON: %.300s", text);
	free(text);
	return o;
}

/* `memtrace html path -o DIR/page.html`, status want; the page's text,
 * or NULL when no file was written. */
static char *page_of(const char *path, int want, size_t *len)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "page.html");
	char *page;
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "html", path, "-o", out, NULL);
	ck_assert_msg(r.status == want, "html %s: status %d, not %d: %s", path,
		      r.status, want, r.err);
	ck_assert_uint_eq(r.out_len, 0);
	page = mt_test_read(out, len);
	mt_test_run_release(&r);
	free(out);
	return page;
}

/* Nothing in the page reaches outside it. */
static void assert_self_contained(const char *page)
{
	static const char *const never[] = {
		"http://", "https://", "src=", "<link", "@import", "url(http",
		"//cdn", "<iframe",
	};

	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		ck_assert_msg(!strcasestr(page, never[i]), "the page holds '%s'",
			      never[i]);
}

static uint64_t u64_of(json_object *o, const char *key)
{
	json_object *m = mt_test_json_member(o, key);

	ck_assert_msg(json_object_is_type(m, json_type_int), "'%s' is no integer",
		      key);
	return (uint64_t)json_object_get_uint64(m);
}

/* The data's verdict and totals are the summary's. */
static void assert_agrees_with_summary(json_object *data, const char *path)
{
	static const char *const keys[] = {
		"events", "threads", "allocations", "frees", "resizes", "remaps",
		"failed_allocations", "unknown_frees", "overlapping_allocs",
		"bytes_allocated", "bytes_freed", "live_allocations", "live_bytes",
		"peak_live_bytes", "peak_live_allocations", "peak_seq",
		"temporary_allocations", "duration_ns",
	};
	json_object *sum = summary_of(path);
	json_object *totals = mt_test_json_member(data, "totals");
	json_object *verdict = mt_test_json_member(data, "verdict");
	json_object *caveats = mt_test_json_member(verdict, "caveats");
	json_object *want = mt_test_json_member(sum, "caveats");

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		ck_assert_msg(u64_of(totals, keys[i]) == u64_of(sum, keys[i]),
			      "%s: html %ju, summary %ju", keys[i],
			      (uintmax_t)u64_of(totals, keys[i]),
			      (uintmax_t)u64_of(sum, keys[i]));
	ck_assert_str_eq(mt_test_json_str(verdict, "status"),
			 mt_test_json_str(sum, "status"));
	ck_assert_uint_eq(json_object_array_length(caveats),
			  json_object_array_length(want));
	for (size_t i = 0; i < json_object_array_length(want); i++)
		ck_assert_str_eq(mt_test_json_str(json_object_array_get_idx(caveats, i),
						  "name"),
				 json_object_get_string(json_object_array_get_idx(want, i)));
	json_object_put(sum);
}

START_TEST(test_html_writes_a_self_contained_page)
{
	char *path = mt_test_fixture("demo.jsonl"), *page;
	size_t len;

	page = page_of(path, 0, &len);
	ck_assert_msg(page != NULL, "no page written");
	ck_assert_msg(!strncmp(page, "<!DOCTYPE html>\n", 16), "no doctype");
	ck_assert_msg(len > 16 && !strcmp(page + len - 8, "</html>\n"),
		      "the page does not end with </html>");
	assert_self_contained(page);
	/* Three elements of script and style, each its own. */
	ck_assert_msg(strstr(page, "<style>") && strstr(page, DATA_OPEN) &&
		      strstr(page, "<script>\n"), "a part is missing");
	free(page);
	free(path);
}
END_TEST

START_TEST(test_html_holds_the_verdict_and_the_summary_totals)
{
	static const char *const fixtures[] = {
		"demo.jsonl", "traces/complete.jsonl", "traces/several_caveats.jsonl",
		"traces/missing_stop_killed.jsonl", "report/app.jsonl",
	};

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		char *path = mt_test_fixture(fixtures[i]), *page;
		json_object *data;
		size_t len;

		page = page_of(path, 0, &len);
		ck_assert_msg(page != NULL, "%s: no page", fixtures[i]);
		data = data_of(page);
		assert_agrees_with_summary(data, path);
		json_object_put(data);
		free(page);
		free(path);
	}
}
END_TEST

START_TEST(test_html_of_a_caveated_trace_says_so_first_and_exits_1_under_strict)
{
	char *path = mt_test_fixture("traces/several_caveats.jsonl");
	char *page, *caveated;
	mt_test_run_t r;
	size_t len;

	page = page_of(path, 0, &len);
	json_object_put(data_of(page));
	caveated = strstr(page, "\"status\":\"");
	ck_assert_msg(caveated && strncmp(caveated, "\"status\":\"complete\"", 19),
		      "the verdict is not caveated");
	mt_test_memtrace_in(&r, NULL, "html", "--strict", path, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.out, "</html>") != NULL, "no page on stdout");
	mt_test_run_release(&r);
	free(page);
	free(path);
}
END_TEST

/* A symbol that would end the data element and start a script of its
 * own stays a string of the data. */
START_TEST(test_html_keeps_the_trace_strings_inside_its_data)
{
	static const char trace[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":1,\"stack_depth\":32}\n"
		"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}\n"
		"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1000\","
		"\"symbol\":\"</script><script>alert(1)</script><!--\",\"offset\":\"0x4\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1]}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\","
		"\"size\":64,\"fn\":\"malloc\",\"stack\":1,\"tid\":1,\"t\":10}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"trace.stop\",\"reason\":\"exit\",\"dropped\":0,\"t\":20}\n";
	mt_test_file_t f;
	json_object *data, *strings;
	char *page;
	size_t len;
	int found = 0;

	mt_test_file_write(&f, trace, sizeof(trace) - 1);
	page = page_of(f.path, 0, &len);
	ck_assert_msg(!strstr(page, "alert(1)</script>"), "the symbol ends the data");
	ck_assert_msg(!strstr(page, "<!--\""), "the symbol opens a comment");
	data = data_of(page);
	strings = mt_test_json_member(data, "strings");
	for (size_t i = 0; i < json_object_array_length(strings); i++)
		found |= !strcmp(json_object_get_string(json_object_array_get_idx(strings, i)),
				 "</script><script>alert(1)</script><!--");
	ck_assert_msg(found, "the symbol is not among the strings");
	json_object_put(data);
	free(page);
	mt_test_file_done(&f);
}
END_TEST

/* The leaked bytes of the page's sites, summed. */
static uint64_t leaked_of(json_object *data)
{
	json_object *sites = mt_test_json_member(data, "sites");
	uint64_t sum = 0;

	for (size_t i = 0; i < json_object_array_length(sites); i++)
		sum += (uint64_t)json_object_get_int64(
			mt_test_json_member(json_object_array_get_idx(sites, i), "leaked"));
	return sum;
}

/* stdio's buffer is a default suppression (mt_suppress.h): the page
 * leaks only the program's own block, and says what it left out, as
 * report does; --no-default-suppressions leaks both. */
START_TEST(test_html_leaves_suppressed_sites_out_of_the_leaked_figures)
{
	static const char trace[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":1,\"stack_depth\":32}\n"
		"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}\n"
		"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1000\",\"symbol\":\"_IO_file_doallocate\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"frame\",\"frame_id\":2,\"ip\":\"0x2000\",\"symbol\":\"mine\"}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1]}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"stack\",\"stack_id\":2,\"frames\":[2]}\n"
		"{\"v\":1,\"seq\":7,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\","
		"\"size\":4096,\"fn\":\"malloc\",\"stack\":1,\"tid\":1,\"t\":10}\n"
		"{\"v\":1,\"seq\":8,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x2000\","
		"\"size\":64,\"fn\":\"malloc\",\"stack\":2,\"tid\":1,\"t\":20}\n"
		"{\"v\":1,\"seq\":9,\"kind\":\"trace.stop\",\"reason\":\"exit\",\"dropped\":0,\"t\":30}\n";
	mt_test_file_t f;
	json_object *data;
	mt_test_run_t r;
	char *out, *page;

	mt_test_file_write(&f, trace, sizeof(trace) - 1);
	out = mt_test_path(f.dir, "page.html");
	mt_test_memtrace_in(&r, NULL, "html", f.path, "-o", out, NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	page = mt_test_read(out, NULL);
	data = data_of(page);
	ck_assert_str_eq(json_object_get_string(mt_test_json_member(data, "left_out")),
			 "left out: 4.0 KiB in 1 block from 1 site, known runtime "
			 "allocations (suppressions)");
	ck_assert_uint_eq(leaked_of(data), 64);
	json_object_put(data);
	free(page);
	mt_test_memtrace_in(&r, NULL, "html", f.path, "-o", out,
			    "--no-default-suppressions", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	page = mt_test_read(out, NULL);
	data = data_of(page);
	ck_assert(json_object_is_type(mt_test_json_member(data, "left_out"), json_type_null));
	ck_assert_uint_eq(leaked_of(data), 4160);
	json_object_put(data);
	free(page);
	free(out);
	mt_test_file_done(&f);
}
END_TEST

/* A trace of many deep stacks of long names, far past what a page
 * may hold: the page stays under 5 MiB, still whole. */
START_TEST(test_html_stays_under_5_mib_on_a_big_trace)
{
	enum { STACKS = 20000, DEPTH = 32, EVENTS = 200000 };
	char *dir = mt_test_scratch(), *path = mt_test_path(dir, "big.jsonl");
	FILE *f = fopen(path, "w");
	uint64_t seq = 1, t = 0;
	json_object *data;
	char *page, name[400];
	size_t len;

	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"v\":1,\"seq\":%ju,\"kind\":\"trace.start\",\"pid\":1,"
		   "\"stack_depth\":%d}\n", (uintmax_t)seq++, DEPTH);
	fprintf(f, "{\"v\":1,\"seq\":%ju,\"kind\":\"allocator\",\"allocator_id\":0,"
		   "\"name\":\"libc\"}\n", (uintmax_t)seq++);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	/* Frame s * DEPTH + d: a name of 300 bytes and more of its own. */
	for (int s = 0; s < STACKS; s++) {
		for (int d = 0; d < DEPTH; d++)
			fprintf(f, "{\"v\":1,\"seq\":%ju,\"kind\":\"frame\",\"frame_id\":%d,"
				   "\"ip\":\"0x%x\",\"symbol\":\"fn_%d_%d_%.300s\"}\n",
				(uintmax_t)seq++, s * DEPTH + d + 1, s * DEPTH + d + 1,
				s, d, name);
		fprintf(f, "{\"v\":1,\"seq\":%ju,\"kind\":\"stack\",\"stack_id\":%d,"
			   "\"frames\":[", (uintmax_t)seq++, s + 1);
		for (int d = 0; d < DEPTH; d++)
			fprintf(f, "%s%d", d ? "," : "", s * DEPTH + d + 1);
		fprintf(f, "]}\n");
	}
	for (int e = 0; e < EVENTS; e++) {
		int s = (int)(mt_test_rng() % STACKS);

		t += 1000 + mt_test_rng() % 1000;
		if (e % 3 == 2)
			fprintf(f, "{\"v\":1,\"seq\":%ju,\"kind\":\"free\",\"allocator_id\":0,"
				   "\"ptr\":\"0x%x\",\"fn\":\"free\",\"tid\":1,\"t\":%ju}\n",
				(uintmax_t)seq++, (e - 1) * 16 + 16, (uintmax_t)t);
		else
			fprintf(f, "{\"v\":1,\"seq\":%ju,\"kind\":\"alloc\",\"allocator_id\":0,"
				   "\"ptr\":\"0x%x\",\"size\":%d,\"fn\":\"malloc\",\"stack\":%d,"
				   "\"tid\":1,\"t\":%ju}\n",
				(uintmax_t)seq++, e * 16 + 16, 16 + e % 4096, s + 1,
				(uintmax_t)t);
	}
	fprintf(f, "{\"v\":1,\"seq\":%ju,\"kind\":\"trace.stop\",\"reason\":\"exit\","
		   "\"dropped\":0,\"t\":%ju}\n", (uintmax_t)seq, (uintmax_t)t + 1);
	ck_assert_int_eq(fclose(f), 0);

	page = page_of(path, 0, &len);
	ck_assert_msg(page != NULL, "no page");
	ck_assert_msg(len <= 5u << 20, "the page is %zu bytes", len);
	data = data_of(page);
	assert_agrees_with_summary(data, path);
	ck_assert_uint_le(json_object_array_length(mt_test_json_member(data, "sites")),
			  4 * 50 + 50);
	ck_assert_uint_gt(json_object_array_length(mt_test_json_member(data, "sites")), 0);
	ck_assert_uint_gt(json_object_array_length(mt_test_json_member(
				  mt_test_json_member(data, "flame"), "nodes")), 0);
	json_object_put(data);
	free(page);
	free(path);
}
END_TEST

START_TEST(test_html_of_a_real_workload_has_its_sites_and_their_series)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl.zst");
	char *prog = mt_test_workload("wl_demo"), *page;
	char *argv[] = { prog, NULL };
	json_object *data, *sites;
	mt_test_run_t r;
	size_t len, with_series = 0;

	mt_test_run_traced(&r, argv, trace, NULL);
	ck_assert_msg(r.status == 0, "wl_demo ended with %d: %s", r.status, r.err);
	ck_assert_msg(access(trace, F_OK) == 0, "wl_demo left no trace (%s); its stderr: %s",
		      strerror(errno), r.err);
	page = page_of(trace, 0, &len);
	assert_self_contained(page);
	data = data_of(page);
	assert_agrees_with_summary(data, trace);
	sites = mt_test_json_member(data, "sites");
	for (size_t i = 0; i < json_object_array_length(sites); i++)
		with_series += json_object_is_type(mt_test_json_member(
			json_object_array_get_idx(sites, i), "series"), json_type_array);
	ck_assert_uint_gt(with_series, 0);
	ck_assert_msg(strstr(page, "\"parse_config\""), "no parse_config frame");
	json_object_put(data);
	free(page);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* fixtures/report/app.jsonl's frames have no line (its modules are
 * gone): each site has a label of its own, a frame without a line is
 * "0xOFFSET in MODULE" and says no source file, never the module's path
 * as if it were one; the xstrdup wrapper is passed over. */
START_TEST(test_html_labels_each_site_and_names_no_module_as_a_file)
{
	char *trace = mt_test_fixture("report/app.jsonl"), *page;
	json_object *data, *sites, *strs;
	size_t len, n;
	const char *labels[64];
	int saw_offset = 0, saw_load_config = 0;

	page = page_of(trace, 0, &len);
	data = data_of(page);
	sites = mt_test_json_member(data, "sites");
	strs = mt_test_json_member(data, "strings");
	n = json_object_array_length(sites);
	ck_assert_uint_gt(n, 2);
	ck_assert_uint_le(n, 64);
	for (size_t i = 0; i < n; i++) {
		json_object *site = json_object_array_get_idx(sites, i);
		json_object *stack = mt_test_json_member(site, "stack");

		labels[i] = json_object_get_string(json_object_array_get_idx(
			strs, (size_t)json_object_get_int64(
				mt_test_json_member(site, "label"))));
		for (size_t k = 0; k < i; k++)
			ck_assert_msg(strcmp(labels[i], labels[k]),
				      "two sites labelled %s", labels[i]);
		saw_load_config |= !strcmp(labels[i], "load_config+0x20 in app");
		for (size_t f = 0; f < json_object_array_length(stack); f++) {
			json_object *frame = json_object_array_get_idx(stack, f);
			const char *name = json_object_get_string(json_object_array_get_idx(
				strs, (size_t)json_object_get_int64(
					json_object_array_get_idx(frame, 0))));
			const char *where = json_object_get_string(json_object_array_get_idx(
				strs, (size_t)json_object_get_int64(
					json_object_array_get_idx(frame, 1))));

			ck_assert_msg(!strstr(where, "/nonexistent/"),
				      "%s is 'at' its module %s", name, where);
			saw_offset |= !strcmp(name, "0x1360 in app");
		}
	}
	ck_assert_msg(saw_offset, "no frame named 0x1360 in app");
	ck_assert_msg(saw_load_config, "xstrdup's caller names no site");
	json_object_put(data);
	free(page);
	free(trace);
}
END_TEST

/* Whether the report of path with --alloc-fn pattern names a site
 * label ("     site: LABEL"). */
static int report_names(const char *path, const char *pattern, const char *label)
{
	mt_test_run_t r;
	char *line = NULL;
	int found;

	mt_test_memtrace_in(&r, NULL, "report", "--alloc-fn", pattern, path, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert(asprintf(&line, "\n     site: %s\n", label) > 0);
	found = strstr(r.out, line) != NULL;
	free(line);
	mt_test_run_release(&r);
	return found;
}

/* --alloc-fn means in html what it means in report: the functions it
 * names are passed over as the allocator is, so the page's labels are
 * the report's with the same patterns; a bad pattern is a usage error. */
START_TEST(test_html_passes_over_an_alloc_fn_as_the_report_does)
{
	char *trace = mt_test_fixture("report/app.jsonl");
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "page.html"), *page;
	json_object *data, *sites, *strs;
	mt_test_run_t r;
	int saw_main = 0;

	mt_test_memtrace_in(&r, NULL, "html", "--alloc-fn", "^load_config$", trace,
			    "-o", out, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	page = mt_test_read(out, NULL);
	ck_assert_ptr_nonnull(page);
	data = data_of(page);
	sites = mt_test_json_member(data, "sites");
	strs = mt_test_json_member(data, "strings");
	ck_assert_uint_gt(json_object_array_length(sites), 2);
	for (size_t i = 0; i < json_object_array_length(sites); i++) {
		const char *label = json_object_get_string(json_object_array_get_idx(
			strs, (size_t)json_object_get_int64(mt_test_json_member(
				json_object_array_get_idx(sites, i), "label"))));

		mt_quiet(strncmp(label, "load_config", 11), "a site named by "
			 "the --alloc-fn it passes over: %s", label);
		mt_quiet(report_names(trace, "^load_config$", label),
			 "the report with the same --alloc-fn names no site %s", label);
		saw_main |= !strncmp(label, "main+0x10 in app", 16);
	}
	ck_assert_msg(saw_main, "load_config's caller names no site");
	json_object_put(data);
	free(page);
	mt_test_memtrace_in(&r, NULL, "html", "--alloc-fn", "(", trace, "-o", out, NULL);
	mt_quiet(r.status == 64 && strstr(r.err, "--alloc-fn"),
		 "a bad pattern: %d %s", r.status, r.err);
	mt_test_run_release(&r);
	free(out);
	free(trace);
}
END_TEST

START_TEST(test_html_refuses_what_is_not_evidence_and_writes_no_file)
{
	char *invalid = mt_test_fixture("traces/invalid_not_json.jsonl");
	char *dir = mt_test_scratch(), *missing = mt_test_path(dir, "nope.jsonl");
	size_t len;
	mt_test_run_t r;

	ck_assert_ptr_null(page_of(invalid, 2, &len));
	ck_assert_ptr_null(page_of(missing, 3, &len));
	mt_test_memtrace_in(&r, NULL, "html", invalid, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_uint_eq(r.out_len, 0);
	ck_assert(strstr(r.err, "is not valid memtrace evidence") != NULL);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "html", missing, NULL);
	ck_assert_int_eq(r.status, 3);
	ck_assert(strstr(r.err, "cannot read '") != NULL);
	mt_test_run_release(&r);
	free(missing);
	free(invalid);
}
END_TEST

START_TEST(test_html_usage_errors_exit_64_and_help_prints_the_usage)
{
	char *path = mt_test_fixture("demo.jsonl");
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "html", NULL);
	ck_assert_int_eq(r.status, 64);
	ck_assert_msg(!strncmp(r.err, "memtrace: missing TRACE argument\n", 33),
		      "stderr: %s", r.err);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "html", path, "--top", "3", NULL);
	ck_assert_int_eq(r.status, 64);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "html", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(!strncmp(r.out, "usage: memtrace html TRACE", 26), "%s", r.out);
	mt_test_run_release(&r);
	free(path);
}
END_TEST

/* Every allocation of the analyzer failing in turn: out of memory (4)
 * with no output, or the whole page. */
START_TEST(test_html_survives_every_allocation_failure)
{
	char *path = mt_test_fixture("demo.jsonl");
	const char *args[] = { "html", path, NULL };

	mt_test_sweep_allocation_failures(args, "html");
	free(path);
}
END_TEST

/* Each run of the analyzer hashes with a seed of its own (mt_map.c): the
 * page and the exports must not follow the table's order.  Five runs of
 * each on a trace of several sites give the same bytes. */
START_TEST(test_html_and_the_exports_of_a_trace_are_the_same_every_run)
{
	static const char *const cmds[][3] = {
		{ "html", "-o", "out" }, { "export", "pprof", "-o" },
		{ "export", "speedscope", "-o" }, { "export", "dhat", "-o" },
	};
	char *dir = mt_test_scratch(), *trace = mt_test_fixture("demo.jsonl");

	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		char *first = NULL;
		size_t first_len = 0;

		for (int i = 0; i < 5; i++) {
			char *out = mt_test_path(dir, i ? "again" : "first"), *data;
			mt_test_run_t r;
			size_t len;

			if (!strcmp(cmds[c][0], "html"))
				mt_test_memtrace_in(&r, NULL, "html", trace, "-o", out, NULL);
			else
				mt_test_memtrace_in(&r, NULL, "export", cmds[c][1], trace, "-o", out,
						    NULL);
			mt_quiet(r.status == 0, "%s %s: %d %s", cmds[c][0], cmds[c][1], r.status,
				 r.err);
			mt_test_run_release(&r);
			data = mt_test_read(out, &len);
			if (!first) {
				first = data;
				first_len = len;
			} else {
				mt_quiet(len == first_len && !memcmp(data, first, len),
					 "%s %s: run %d differs from run 1", cmds[c][0],
					 cmds[c][1], i + 1);
				free(data);
			}
			free(out);
		}
		free(first);
	}
	free(trace);
}
END_TEST

Suite *mt_suite_html(void)
{
	Suite *s = suite_create("html");
	TCase *tc = tcase_create("html");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_html_writes_a_self_contained_page);
	tcase_add_test(tc, test_html_holds_the_verdict_and_the_summary_totals);
	tcase_add_test(tc, test_html_of_a_caveated_trace_says_so_first_and_exits_1_under_strict);
	tcase_add_test(tc, test_html_keeps_the_trace_strings_inside_its_data);
	tcase_add_test(tc, test_html_leaves_suppressed_sites_out_of_the_leaked_figures);
	tcase_add_test(tc, test_html_stays_under_5_mib_on_a_big_trace);
	tcase_add_test(tc, test_html_of_a_real_workload_has_its_sites_and_their_series);
	tcase_add_test(tc, test_html_labels_each_site_and_names_no_module_as_a_file);
	tcase_add_test(tc, test_html_passes_over_an_alloc_fn_as_the_report_does);
	tcase_add_test(tc, test_html_refuses_what_is_not_evidence_and_writes_no_file);
	tcase_add_test(tc, test_html_usage_errors_exit_64_and_help_prints_the_usage);
	tcase_add_test(tc, test_html_survives_every_allocation_failure);
	tcase_add_test(tc, test_html_and_the_exports_of_a_trace_are_the_same_every_run);
	suite_add_tcase(s, tc);
	return s;
}
