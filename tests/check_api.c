/*
 * check_api: include/memtrace.h, a program's own allocators.  The example
 * pool (tests/workloads/mt_pool.c) runs under the preload and without
 * it; its trace is held to the format (an "allocator" line before the
 * first "fn":"api" event, in every process's trace), its by_allocator
 * figures to what the pool says it did, and `report` and `gate` with
 * --allocator to that allocator's blocks.  The header itself must
 * compile cleanly as C and C++ and be installed by `make install`.  The
 * core (preload/mt_api.c) is driven directly too, for what a workload
 * cannot reach: every event's line, names, the table's limit.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../preload/mt_api.h"
#include "../preload/mt_trace.h"
#include "mt_test.h"
#include "mt_test_trace.h"

/* What the pool prints: "WHO: allocations A frees F resizes R remaps M
 * live_bytes L peak_live_bytes P". */
typedef struct {
	unsigned long long allocations, frees, resizes, remaps, live_bytes,
		peak_live_bytes;
} counts_t;

static void read_counts(const char *out, const char *who, counts_t *c)
{
	char key[32];
	const char *line;

	snprintf(key, sizeof(key), "%s: ", who);
	line = strstr(out, key);
	mt_quiet(line != NULL, "the pool printed no '%s' line: %s", who, out);
	mt_quiet(sscanf(line + strlen(key),
			"allocations %llu frees %llu resizes %llu remaps %llu "
			"live_bytes %llu peak_live_bytes %llu",
			&c->allocations, &c->frees, &c->resizes, &c->remaps,
			&c->live_bytes, &c->peak_live_bytes) == 6,
		 "the '%s' line does not parse: %s", who, line);
}

/* A traced run of the pool in a fresh directory: its trace is
 * dir/t.jsonl (a forked child's dir/t.PID.jsonl). */
typedef struct {
	char *dir, *trace;
	mt_test_run_t run;
} pool_run_t;

/* run_pool() with extra in the environment ("NAME=value" or NULL). */
static void run_pool_env(pool_run_t *p, const char *arg, const char *extra)
{
	char *prog = mt_test_workload("mt_pool");
	char *argv[] = { prog, (char *)arg, NULL };

	p->dir = mt_test_scratch();
	p->trace = mt_test_path(p->dir, "t.jsonl");
	mt_test_run_traced(&p->run, argv, p->trace, extra);
	mt_quiet(p->run.status == 0, "mt_pool exited %d: %s", p->run.status,
		 p->run.err);
	free(prog);
}

static void run_pool(pool_run_t *p, const char *arg)
{
	run_pool_env(p, arg, NULL);
}

static void pool_run_release(pool_run_t *p)
{
	mt_test_run_release(&p->run);
	free(p->trace);
}

/* In the trace at path: the line of the first "allocator" event of id 1
 * and of the first "fn":"api" event (0: none), and that every api event
 * names allocator 1. */
static void api_lines(const char *path, long *declared, long *first_api,
		      const char **name_out)
{
	static char name[64];
	char *text = mt_test_trace_text(path, NULL, 1), *line, *save = NULL;
	long n = 0;

	mt_quiet(text != NULL, "no trace %s", path);
	*declared = *first_api = 0;
	name[0] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		const char *kind, *fn;

		n++;
		mt_quiet(o != NULL, "line %ld of %s is no JSON: %s", n, path, line);
		kind = mt_test_json_str(o, "kind");
		fn = mt_test_json_opt_str(o, "fn");
		if (!strcmp(kind, "allocator") &&
		    mt_test_json_u64(o, "allocator_id") == 1) {
			mt_quiet(*declared == 0, "allocator 1 declared twice in %s "
				 "(lines %ld and %ld)", path, *declared, n);
			*declared = n;
			snprintf(name, sizeof(name), "%s", mt_test_json_str(o, "name"));
		}
		if (fn && !strcmp(fn, "api")) {
			mt_quiet(mt_test_json_u64(o, "allocator_id") == 1,
				 "an api event of another allocator: %s", line);
			if (!*first_api)
				*first_api = n;
		}
		json_object_put(o);
	}
	*name_out = name;
	free(text);
}

/* by_allocator's entry of allocator 1 in `memtrace summary path`. */
static void pool_figures(const char *path, counts_t *c)
{
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "summary", (char *)path, "--top", "0", NULL };
	json_object *row, *list, *e = NULL;
	mt_test_run_t r;

	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "memtrace summary exited %d: %s", r.status, r.err);
	row = json_tokener_parse(r.out);
	mt_quiet(row != NULL, "no summary line: %s", r.out);
	list = mt_test_json_member(row, "by_allocator");
	for (size_t i = 0; i < json_object_array_length(list); i++)
		if (mt_test_json_u64(json_object_array_get_idx(list, i),
				     "allocator_id") == 1)
			e = json_object_array_get_idx(list, i);
	mt_quiet(e != NULL, "no allocator 1 in by_allocator: %s", r.out);
	ck_assert_str_eq(mt_test_json_str(e, "name"), "pool");
	c->allocations = mt_test_json_u64(e, "allocations");
	c->frees = mt_test_json_u64(e, "frees");
	c->resizes = mt_test_json_u64(e, "resizes");
	c->remaps = mt_test_json_u64(e, "remaps");
	c->live_bytes = mt_test_json_u64(e, "live_bytes");
	c->peak_live_bytes = mt_test_json_u64(e, "peak_live_bytes");
	json_object_put(row);
	mt_test_run_release(&r);
	free(mt);
}

static void assert_counts_eq(const counts_t *got, const counts_t *want)
{
	ck_assert_uint_eq(got->allocations, want->allocations);
	ck_assert_uint_eq(got->frees, want->frees);
	ck_assert_uint_eq(got->resizes, want->resizes);
	ck_assert_uint_eq(got->remaps, want->remaps);
	ck_assert_uint_eq(got->live_bytes, want->live_bytes);
	ck_assert_uint_eq(got->peak_live_bytes, want->peak_live_bytes);
}

START_TEST(test_pool_trace_is_complete_and_declares_the_pool_before_its_first_event)
{
	pool_run_t p;
	char *status;
	const char *name;
	long declared, first_api;

	run_pool(&p, NULL);
	status = mt_test_check_status(p.trace);
	ck_assert_str_eq(status, "complete");
	api_lines(p.trace, &declared, &first_api, &name);
	ck_assert_int_gt(declared, 0);
	ck_assert_int_gt(first_api, declared);
	ck_assert_str_eq(name, "pool");
	free(status);
	pool_run_release(&p);
}
END_TEST

START_TEST(test_by_allocator_holds_what_the_pool_says_it_did)
{
	pool_run_t p;
	counts_t want, got;

	run_pool(&p, NULL);
	read_counts(p.run.out, "pool", &want);
	ck_assert_uint_gt(want.resizes, 0);
	ck_assert_uint_gt(want.remaps, 0);
	ck_assert_uint_gt(want.live_bytes, 0);
	pool_figures(p.trace, &got);
	assert_counts_eq(&got, &want);
	pool_run_release(&p);
}
END_TEST

/* Sampling (MEMTRACE_SAMPLE) is the C library's: a program's own
 * allocators are recorded whole and weigh themselves, so the pool's
 * figures are exact in a sampled trace too (format.md 2.1). */
START_TEST(test_a_sampled_trace_records_the_pool_whole)
{
	pool_run_t p;
	counts_t want, got;
	json_object *start;

	run_pool_env(&p, NULL, "MEMTRACE_SAMPLE=1M");
	start = mt_test_trace_start(p.trace);
	ck_assert_uint_eq(mt_test_json_u64(start, "sample_bytes"), 1u << 20);
	read_counts(p.run.out, "pool", &want);
	pool_figures(p.trace, &got);
	assert_counts_eq(&got, &want);
	json_object_put(start);
	pool_run_release(&p);
}
END_TEST

START_TEST(test_pool_runs_the_same_without_the_preload)
{
	pool_run_t p;
	char *prog = mt_test_workload("mt_pool");
	char *argv[] = { prog, NULL };
	mt_test_run_t bare;

	run_pool(&p, NULL);
	mt_test_run(&bare, argv, NULL);
	ck_assert_int_eq(bare.status, 0);
	ck_assert_str_eq(bare.out, p.run.out);
	ck_assert_str_eq(bare.err, "");
	mt_test_run_release(&bare);
	pool_run_release(&p);
	free(prog);
}
END_TEST

START_TEST(test_pool_links_no_memtrace_library)
{
	char *prog = mt_test_workload("mt_pool");
	char *readelf[] = { "/bin/sh", "-c", "exec readelf -d \"$0\"", prog, NULL };
	char *nm[] = { "/bin/sh", "-c", "exec nm -u \"$0\"", prog, NULL };
	mt_test_run_t r;

	mt_test_run(&r, readelf, NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(strstr(r.out, "(NEEDED)") != NULL, "no NEEDED entry: %s", r.out);
	mt_quiet(!strstr(r.out, "mtpreload") && !strstr(r.out, "memtrace") &&
			 !strstr(r.out, "libdl"),
		 "the pool links a library of memtrace's or libdl: %s", r.out);
	mt_test_run_release(&r);
	mt_test_run(&r, nm, NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(!strstr(r.out, "memtrace"), "the pool needs a memtrace symbol: %s",
		 r.out);
	mt_test_run_release(&r);
	free(prog);
}
END_TEST

/* memtrace ARGS... in dir; the varargs end with NULL. */
static void memtrace(mt_test_run_t *r, const char *dir, const char *const *args)
{
	mt_test_memtrace_in_argv(r, dir, NULL, args);
}

/* html takes --allocator as report does: the page's totals are the
 * pool's, and a name the trace lacks is a usage error. */
START_TEST(test_html_allocator_shows_that_allocators_figures_alone)
{
	pool_run_t p;
	mt_test_run_t r;
	counts_t want;
	const char *pool[] = { "html", "t.jsonl", "--allocator", "pool", "-o", "p.html", NULL };
	const char *none[] = { "html", "t.jsonl", "--allocator", "arena", "-o", "n.html", NULL };
	char *path, *page, *from, *to;
	json_object *data, *totals;

	run_pool(&p, NULL);
	read_counts(p.run.out, "pool", &want);
	memtrace(&r, p.dir, pool);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	path = mt_test_path(p.dir, "p.html");
	page = mt_test_read(path, NULL);
	ck_assert(page != NULL);
	from = strstr(page, "id=\"memtrace-data\">");
	ck_assert(from != NULL);
	from = strchr(from, '>') + 1;
	to = strstr(from, "</script>");
	*to = '\0';
	data = json_tokener_parse(from);
	ck_assert(data != NULL);
	totals = mt_test_json_member(data, "totals");
	ck_assert_uint_eq(mt_test_json_u64(totals, "allocations"), want.allocations);
	ck_assert_uint_eq(mt_test_json_u64(totals, "frees"), want.frees);
	ck_assert_uint_eq(mt_test_json_u64(totals, "live_bytes"), want.live_bytes);
	json_object_put(data);
	free(page);
	free(path);
	memtrace(&r, p.dir, none);
	ck_assert_int_eq(r.status, 64);
	mt_quiet(strstr(r.err, "no allocator 'arena' in 't.jsonl'") != NULL, "%s", r.err);
	mt_test_run_release(&r);
	path = mt_test_path(p.dir, "n.html");
	ck_assert(!mt_test_exists(path));
	free(path);
	pool_run_release(&p);
}
END_TEST

START_TEST(test_report_allocator_shows_that_allocators_sites_alone)
{
	pool_run_t p;
	mt_test_run_t r;
	const char *all[] = { "report", "t.jsonl", NULL };
	const char *pool[] = { "report", "t.jsonl", "--allocator", "pool", NULL };
	const char *libc[] = { "report", "t.jsonl", "--allocator", "libc", NULL };

	run_pool(&p, NULL);
	memtrace(&r, p.dir, all);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "make_node"));
	ck_assert_ptr_nonnull(strstr(r.out, "pool_init"));
	ck_assert_ptr_nonnull(strstr(r.out, "  pool (id 1)"));
	mt_test_run_release(&r);

	memtrace(&r, p.dir, pool);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "Allocator: pool alone"));
	ck_assert_ptr_nonnull(strstr(r.out, "make_node"));
	ck_assert_ptr_nonnull(strstr(r.out, "make_buffer"));
	ck_assert_ptr_null(strstr(r.out, "pool_init"));
	ck_assert_ptr_null(strstr(r.out, "libc_site"));
	ck_assert_ptr_null(strstr(r.out, "libc (id 0)"));
	mt_test_run_release(&r);

	memtrace(&r, p.dir, libc);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "pool_init"));
	ck_assert_ptr_null(strstr(r.out, "make_node"));
	ck_assert_ptr_null(strstr(r.out, "pool (id 1)"));
	mt_test_run_release(&r);
	pool_run_release(&p);
}
END_TEST

START_TEST(test_gate_allocator_holds_that_allocators_peak_to_the_budget)
{
	pool_run_t p;
	counts_t c;
	mt_test_run_t r;
	char at[32], below[32];
	const char *holds[] = { "gate", "t.jsonl", "--allocator", "pool",
				"--max-peak", at, NULL };
	const char *fails[] = { "gate", "t.jsonl", "--allocator", "pool",
				"--max-peak", below, NULL };
	const char *whole[] = { "gate", "t.jsonl", "--max-peak", at, NULL };

	run_pool(&p, NULL);
	read_counts(p.run.out, "pool", &c);
	snprintf(at, sizeof(at), "%llu", c.peak_live_bytes);
	snprintf(below, sizeof(below), "%llu", c.peak_live_bytes - 1);
	memtrace(&r, p.dir, holds);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "t.jsonl (allocator pool): 1 budget holds"));
	mt_test_run_release(&r);
	memtrace(&r, p.dir, fails);
	ck_assert_int_eq(r.status, 1);
	mt_test_run_release(&r);
	/* The whole heap holds the pool's arena too: far over. */
	memtrace(&r, p.dir, whole);
	ck_assert_int_eq(r.status, 1);
	mt_test_run_release(&r);
	pool_run_release(&p);
}
END_TEST

START_TEST(test_unknown_allocator_is_a_usage_error_that_lists_the_traces)
{
	pool_run_t p;
	mt_test_run_t r;
	const char *report[] = { "report", "t.jsonl", "--allocator", "arena", NULL };
	const char *gate[] = { "gate", "t.jsonl", "--allocator", "arena",
			       "--max-peak", "1M", NULL };

	run_pool(&p, NULL);
	memtrace(&r, p.dir, report);
	ck_assert_int_eq(r.status, 64);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.err, "memtrace: no allocator 'arena' in "
					    "'t.jsonl'; its allocators: 'libc', 'pool'\n"));
	ck_assert_ptr_nonnull(strstr(r.err, "usage: memtrace report"));
	mt_test_run_release(&r);
	memtrace(&r, p.dir, gate);
	ck_assert_int_eq(r.status, 64);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.err, "its allocators: 'libc', 'pool'\n"));
	ck_assert_ptr_nonnull(strstr(r.err, "usage: memtrace gate"));
	mt_test_run_release(&r);
	pool_run_release(&p);
}
END_TEST

START_TEST(test_gate_allocator_on_a_summary_file_is_a_usage_error)
{
	pool_run_t p;
	mt_test_run_t r;
	const char *summary[] = { "summary", "t.jsonl", "-o", "s.jsonl", NULL };
	const char *gate[] = { "gate", "s.jsonl", "--allocator", "pool",
			       "--max-peak", "1M", NULL };

	run_pool(&p, NULL);
	memtrace(&r, p.dir, summary);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	memtrace(&r, p.dir, gate);
	ck_assert_int_eq(r.status, 64);
	ck_assert_ptr_nonnull(strstr(r.err, "--allocator needs a trace"));
	mt_test_run_release(&r);
	pool_run_release(&p);
}
END_TEST

START_TEST(test_forked_child_declares_the_pool_in_its_own_trace)
{
	pool_run_t p;
	char **names;
	size_t n;
	const char *name;
	long declared, first_api;
	counts_t want, got;

	run_pool(&p, "fork");
	names = mt_test_traces(p.dir, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(mt_test_assert_traces_complete(p.dir), 2);
	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(p.dir, names[i]);
		int child = strcmp(names[i], "t.jsonl") != 0;

		api_lines(path, &declared, &first_api, &name);
		ck_assert_int_gt(declared, 0);
		ck_assert_int_gt(first_api, declared);
		ck_assert_str_eq(name, "pool");
		read_counts(p.run.out, child ? "child" : "pool", &want);
		pool_figures(path, &got);
		assert_counts_eq(&got, &want);
		free(path);
	}
	mt_test_traces_release(names, n);
	pool_run_release(&p);
}
END_TEST

/* Threads name allocators and report blocks all at once: each allocator
 * is declared once, before its first event, the same name gives the same
 * id in every thread, and no event is lost. */
START_TEST(test_threads_declare_each_allocator_once_before_its_events)
{
	char *prog = mt_test_workload("mt_pool_threads");
	char *argv[] = { prog, NULL };
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *mt = mt_test_memtrace();
	char *summary[] = { mt, "summary", trace, "--top", "0",
			    "--include-zero-live", NULL };
	char *text, *line, *save = NULL, *status;
	long declared[8] = { 0 }, first[8] = { 0 }, n = 0;
	json_object *row, *list;
	mt_test_run_t r;

	mt_test_run_traced(&r, argv, trace, NULL);
	mt_quiet(r.status == 0, "mt_pool_threads exited %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "complete");
	text = mt_test_trace_text(trace, NULL, 1);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		const char *kind = mt_test_json_str(o, "kind");
		uint64_t id;

		n++;
		if (strcmp(kind, "allocator") && !mt_test_json_opt_str(o, "fn")) {
			json_object_put(o);
			continue;
		}
		id = mt_test_json_u64(o, "allocator_id");
		mt_quiet(id < 8, "allocator id %llu: %s", (unsigned long long)id, line);
		if (!strcmp(kind, "allocator")) {
			mt_quiet(!declared[id], "allocator %llu declared twice",
				 (unsigned long long)id);
			declared[id] = n;
		} else if (id && !first[id]) {
			first[id] = n;
		}
		json_object_put(o);
	}
	for (int id = 1; id <= 5; id++) {
		mt_quiet(declared[id] > 0, "allocator %d never declared", id);
		mt_quiet(first[id] > declared[id], "allocator %d used at line %ld, "
			 "declared at line %ld", id, first[id], declared[id]);
	}
	ck_assert_int_eq(declared[6], 0);

	mt_test_run(&r, summary, NULL);
	ck_assert_int_eq(r.status, 0);
	row = json_tokener_parse(r.out);
	list = mt_test_json_member(row, "by_allocator");
	ck_assert_uint_eq(json_object_array_length(list), 6);
	for (size_t i = 1; i < 6; i++) {
		json_object *e = json_object_array_get_idx(list, i);
		/* ROUNDS (2000) blocks a thread, of its own and of the
		 * shared one. */
		uint64_t want = strcmp(mt_test_json_str(e, "name"), "shared") ? 2000 : 8000;

		ck_assert_uint_eq(mt_test_json_u64(e, "allocations"), want);
		ck_assert_uint_eq(mt_test_json_u64(e, "frees"), want);
		ck_assert_uint_eq(mt_test_json_u64(e, "live_bytes"), 0);
	}
	json_object_put(row);
	mt_test_run_release(&r);
	free(status);
	free(text);
	free(mt);
	free(trace);
	free(prog);
}
END_TEST

START_TEST(test_make_install_installs_the_header)
{
	char *dir = mt_test_scratch();
	char *header = mt_test_path(dir, "include/memtrace.h");
	char *source = mt_test_path(mt_test_source_dir(), "include/memtrace.h");
	char *want = mt_test_read(source, NULL);
	char cmd[8192];
	/* The suite may run under make: its child make must not take the
	 * jobserver of ours. */
	char *env[] = { "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", NULL };
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	mt_test_run_t r;

	snprintf(cmd, sizeof(cmd),
		 "exec make -s --no-print-directory -C '%s' install PREFIX='%s' BUILD='%s'",
		 mt_test_source_dir(), dir, mt_test_build_dir());
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "make install exited %d: %s", r.status, r.err);
	ck_assert(want != NULL);
	mt_test_assert_file_eq(header, want);
	mt_test_run_release(&r);
	free(want);
	free(source);
	free(header);
}
END_TEST

/* A program that uses every call, with -Wall -Wextra -Werror -pedantic
 * as C11 and as C++ (file name's extension: .c or .cpp). */
static void compile_header(const char *compiler, const char *std, const char *ext)
{
	static const char program[] =
		"#include <memtrace.h>\n"
		"int main(void)\n"
		"{\n"
		"\tmemtrace_allocator_t a = memtrace_allocator(\"arena\");\n"
		"\tstatic char block[64];\n"
		"\tmemtrace_alloc(a, block, 16);\n"
		"\tmemtrace_realloc(a, block, block + 32, 24);\n"
		"\tmemtrace_free(a, block + 32);\n"
		"\treturn 0;\n"
		"}\n";
	char *dir = mt_test_scratch();
	char file[64], cmd[8192], *path, *include;
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	mt_test_run_t r;

	snprintf(file, sizeof(file), "use%s", ext);
	path = mt_test_path(dir, file);
	include = mt_test_path(mt_test_source_dir(), "include");
	mt_test_write(path, program, sizeof(program) - 1);
	snprintf(cmd, sizeof(cmd),
		 "exec %s %s -Wall -Wextra -Werror -pedantic -fsyntax-only -I '%s' '%s'",
		 compiler, std, include, path);
	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "%s did not take memtrace.h: %s", cmd, r.err);
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	free(include);
	free(path);
}

START_TEST(test_header_compiles_as_c11_with_warnings_as_errors)
{
	compile_header("gcc", "-std=c11", ".c");
}
END_TEST

START_TEST(test_header_compiles_as_cxx_with_warnings_as_errors)
{
	compile_header("g++", "-std=c++11", ".cpp");
}
END_TEST

/* ---- the core, driven directly ---- */

static int count(const char *data, const char *needle)
{
	int n = 0;

	for (const char *p = data; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* memtrace check's verdict of the trace at path is complete. */
static void assert_complete(const char *path)
{
	char *status = mt_test_check_status(path);

	ck_assert_str_eq(status, "complete");
	free(status);
}

START_TEST(test_core_writes_api_events_with_their_allocator_and_fn_api)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	uint32_t id;
	char *data;

	mt_quiet_int_eq(mt_trace_start(trace, 0), 0);
	id = mt_api_allocator("pool");
	ck_assert_uint_eq(id, 1);
	mt_api_alloc(id, (void *)0x1000, 32, NULL, 0);
	mt_api_realloc(id, (void *)0x1000, (void *)0x1000, 48, NULL, 0);
	mt_api_realloc(id, (void *)0x1000, (void *)0x2000, 4096, NULL, 0);
	mt_api_realloc(id, NULL, (void *)0x3000, 16, NULL, 0);
	mt_api_realloc(id, (void *)0x3000, NULL, 0, NULL, 0);
	mt_api_realloc(id, (void *)0x2000, NULL, 8192, NULL, 0); /* failed: nothing */
	mt_api_alloc(id, NULL, 8, NULL, 0);                     /* nothing */
	mt_api_free(id, NULL);                                  /* nothing */
	mt_api_alloc(0, (void *)0x5000, 8, NULL, 0);            /* no allocator */
	mt_api_alloc(7, (void *)0x5000, 8, NULL, 0);            /* never given */
	mt_api_free(id, (void *)0x2000);
	mt_trace_stop("api");

	data = mt_test_read(trace, NULL);
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"allocator\",\"allocator_id\":1,\"name\":\"pool\"}"));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"alloc\",\"allocator_id\":1,\"ptr\":\"0x1000\",\"size\":32,\"fn\":\"api\",\"tid\":"));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"resize\",\"allocator_id\":1,\"ptr\":\"0x1000\",\"size\":48,\"fn\":\"api\",\"tid\":"));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"remap\",\"allocator_id\":1,\"ptr\":\"0x1000\",\"new_ptr\":\"0x2000\",\"size\":4096,\"fn\":\"api\",\"tid\":"));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"alloc\",\"allocator_id\":1,\"ptr\":\"0x3000\",\"size\":16,\"fn\":\"api\",\"tid\":"));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"free\",\"allocator_id\":1,\"ptr\":\"0x3000\",\"fn\":\"api\",\"tid\":"));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"free\",\"allocator_id\":1,\"ptr\":\"0x2000\",\"fn\":\"api\",\"tid\":"));
	mt_quiet_int_eq(count(data, "\"fn\":\"api\""), 6);
	mt_quiet_ptr_null(strstr(data, "0x5000"));
	mt_quiet_ptr_null(strstr(data, "\"align\""));
	assert_complete(trace);
	free(data);
	free(trace);
}
END_TEST

START_TEST(test_core_gives_one_id_per_name_counting_from_1)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *data;

	mt_quiet_int_eq(mt_trace_start(trace, 0), 0);
	ck_assert_uint_eq(mt_api_allocator("pool"), 1);
	ck_assert_uint_eq(mt_api_allocator("arena"), 2);
	ck_assert_uint_eq(mt_api_allocator("pool"), 1);
	ck_assert_uint_eq(mt_api_allocator(""), 3);
	ck_assert_uint_eq(mt_api_allocator(NULL), 0);
	mt_trace_stop("api");
	data = mt_test_read(trace, NULL);
	mt_quiet_int_eq(count(data, "\"kind\":\"allocator\""), 4); /* libc's too */
	mt_quiet_ptr_nonnull(strstr(data, "\"allocator_id\":2,\"name\":\"arena\"}"));
	mt_quiet_ptr_nonnull(strstr(data, "\"allocator_id\":3,\"name\":\"\"}"));
	assert_complete(trace);
	free(data);
	free(trace);
}
END_TEST

START_TEST(test_core_writes_any_name_as_valid_json)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	static const char name[] = "a \"quoted\"\\ name\n\twith \x01 controls";
	char longer[400];
	char *data, *line, *save = NULL;
	int seen = 0;

	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	mt_quiet_int_eq(mt_trace_start(trace, 0), 0);
	ck_assert_uint_eq(mt_api_allocator(name), 1);
	ck_assert_uint_eq(mt_api_allocator(longer), 2);
	/* Names alike in their first 255 bytes are one allocator. */
	longer[300] = 'y';
	ck_assert_uint_eq(mt_api_allocator(longer), 2);
	mt_trace_stop("api");
	data = mt_test_read(trace, NULL);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		uint64_t id;

		mt_quiet(o != NULL, "not JSON: %s", line);
		if (strcmp(mt_test_json_str(o, "kind"), "allocator") ||
		    !(id = mt_test_json_u64(o, "allocator_id"))) {
			json_object_put(o);
			continue;
		}
		if (id == 1)
			ck_assert_str_eq(mt_test_json_str(o, "name"), name);
		else
			ck_assert_uint_eq(strlen(mt_test_json_str(o, "name")), 255);
		seen++;
		json_object_put(o);
	}
	ck_assert_int_eq(seen, 2);
	assert_complete(trace);
	free(data);
	free(trace);
}
END_TEST

START_TEST(test_core_names_at_most_256_allocators)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char name[16], line[256];
	FILE *said = tmpfile();
	int saved;

	ck_assert_ptr_nonnull(said);
	mt_quiet_int_eq(mt_trace_start(trace, 0), 0);
	for (uint32_t i = 1; i <= MT_API_MAX_ALLOCATORS; i++) {
		snprintf(name, sizeof(name), "a%u", i);
		mt_quiet_int_eq(mt_api_allocator(name), i);
	}
	/* It says so on stderr, once: kept out of the suite's output, and
	 * read back. */
	fflush(stderr);
	saved = dup(2);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(said), 2), 0);
	ck_assert_uint_eq(mt_api_allocator("one more"), 0);
	ck_assert_uint_eq(mt_api_allocator("and more"), 0);
	ck_assert_int_ge(dup2(saved, 2), 0);
	close(saved);
	rewind(said);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), said));
	ck_assert_str_eq(line, "memtrace: more than 256 allocators named through "
			       "memtrace.h; the others are not traced\n");
	ck_assert_ptr_null(fgets(line, sizeof(line), said));
	fclose(said);
	ck_assert_uint_eq(mt_api_allocator("a256"), 256);
	mt_trace_stop("api");
	assert_complete(trace);
	free(trace);
}
END_TEST

/* A new trace (a forked child's, or here a second one of the process)
 * declares an allocator anew, before its first event there. */
START_TEST(test_core_declares_an_allocator_again_in_a_new_trace)
{
	char *dir = mt_test_scratch(), *first = mt_test_path(dir, "1.jsonl");
	char *second = mt_test_path(dir, "2.jsonl");
	uint32_t id;
	char *data, *decl, *ev;

	mt_quiet_int_eq(mt_trace_start(first, 0), 0);
	id = mt_api_allocator("pool");
	mt_api_alloc(id, (void *)0x1000, 32, NULL, 0);
	mt_trace_stop("api");
	mt_quiet_int_eq(mt_trace_start(second, 0), 0);
	mt_api_free(id, (void *)0x1000);
	mt_api_alloc(id, (void *)0x2000, 8, NULL, 0);
	mt_trace_stop("api");
	data = mt_test_read(second, NULL);
	decl = strstr(data, "\"kind\":\"allocator\",\"allocator_id\":1,\"name\":\"pool\"}");
	ev = strstr(data, "\"fn\":\"api\"");
	mt_quiet_ptr_nonnull(decl);
	mt_quiet_ptr_nonnull(ev);
	ck_assert(decl < ev);
	mt_quiet_int_eq(count(data, "\"allocator_id\":1,\"name\""), 1);
	assert_complete(first);
	assert_complete(second);
	free(data);
	free(second);
	free(first);
}
END_TEST

Suite *mt_suite_api(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("memtrace.h");

	tcase_add_test(tc, test_pool_trace_is_complete_and_declares_the_pool_before_its_first_event);
	tcase_add_test(tc, test_by_allocator_holds_what_the_pool_says_it_did);
	tcase_add_test(tc, test_a_sampled_trace_records_the_pool_whole);
	tcase_add_test(tc, test_pool_runs_the_same_without_the_preload);
	tcase_add_test(tc, test_pool_links_no_memtrace_library);
	tcase_add_test(tc, test_report_allocator_shows_that_allocators_sites_alone);
	tcase_add_test(tc, test_html_allocator_shows_that_allocators_figures_alone);
	tcase_add_test(tc, test_gate_allocator_holds_that_allocators_peak_to_the_budget);
	tcase_add_test(tc, test_unknown_allocator_is_a_usage_error_that_lists_the_traces);
	tcase_add_test(tc, test_gate_allocator_on_a_summary_file_is_a_usage_error);
	tcase_add_test(tc, test_forked_child_declares_the_pool_in_its_own_trace);
	tcase_add_test(tc, test_threads_declare_each_allocator_once_before_its_events);
	tcase_add_test(tc, test_make_install_installs_the_header);
	tcase_add_test(tc, test_header_compiles_as_c11_with_warnings_as_errors);
	tcase_add_test(tc, test_header_compiles_as_cxx_with_warnings_as_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("core");
	tcase_add_test(tc, test_core_writes_api_events_with_their_allocator_and_fn_api);
	tcase_add_test(tc, test_core_gives_one_id_per_name_counting_from_1);
	tcase_add_test(tc, test_core_writes_any_name_as_valid_json);
	tcase_add_test(tc, test_core_names_at_most_256_allocators);
	tcase_add_test(tc, test_core_declares_an_allocator_again_in_a_new_trace);
	suite_add_tcase(s, tc);
	return s;
}
