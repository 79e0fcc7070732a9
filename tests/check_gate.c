/*
 * check_gate: the CI commands gate, diff and repetitions (docs/ci-gates.md).
 *
 * The goldens of fixtures/gate/ are the commands' output on the hand-made
 * runs base.jsonl and new.jsonl (new.jsonl is base.jsonl from another
 * build at other addresses, with one more leak and one more allocation)
 * and the repetitions files reps_*.jsonl; fixtures/gate/README.md works
 * every figure out.  The commands run from a scratch directory holding
 * copies, so the paths they print are the relative ones of the goldens.
 * Real runs under the preload check site matching across ASLR, and every
 * command is swept over every allocation failure in process.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/gates/mt_ci.h"
#include "../analyzer/gates/mt_diff.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/gates/mt_gate.h"
#include "../analyzer/base/mt_mem.h"
#include "../analyzer/gates/mt_repetitions.h"
#include "../analyzer/base/mt_units.h"

/* ---- a scratch directory of copies, and commands run in it ---- */

static const char *const copied[] = {
	"base.jsonl", "new.jsonl", "reps_steady.jsonl", "reps_varying.jsonl",
};

static void copy_file(const char *from, const char *dir, const char *name)
{
	size_t len;
	char *data = mt_test_read(from, &len);
	char *to = mt_test_path(dir, name);

	mt_quiet(data != NULL, "cannot read %s", from);
	mt_test_write(to, data, len);
	free(data);
	free(to);
}

static char *scratch(void)
{
	char *dir = mt_test_scratch();

	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		char name[64], *from;

		snprintf(name, sizeof(name), "gate/%s", copied[i]);
		from = mt_test_fixture(name);
		copy_file(from, dir, copied[i]);
		free(from);
	}
	{
		char *from = mt_test_fixture("traces/missing_stop_killed.jsonl");

		copy_file(from, dir, "killed.jsonl");
		free(from);
	}
	return dir;
}

static void put(const char *dir, const char *name, const char *text)
{
	char *p = mt_test_path(dir, name);

	mt_test_write(p, text, strlen(text));
	free(p);
}

/* memtrace ARGS... (NULL-terminated) with dir as its working directory. */
static void memtrace_in(mt_test_run_t *r, const char *dir, ...)
{
	char *argv[40];
	char *mt = mt_test_memtrace();
	int n = 0;
	va_list ap;

	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = "cd \"$0\" && exec \"$@\"";
	argv[n++] = (char *)dir;
	argv[n++] = mt;
	va_start(ap, dir);
	while ((argv[n] = va_arg(ap, char *)) != NULL) {
		n++;
		ck_assert_int_lt(n, 39);
	}
	va_end(ap);
	mt_test_run(r, argv, NULL);
	free(mt);
}

#define MT(r, dir, ...) memtrace_in((r), (dir), __VA_ARGS__, (char *)NULL)

static void assert_status(const mt_test_run_t *r, int want)
{
	mt_quiet(r->status == want, "exit %d, want %d\nstdout:\n%s\nstderr:\n%s",
		 r->status, want, r->out, r->err);
}

/* Bad input: its status, nothing on stdout, a memtrace: line on stderr
 * that says what (expect). */
static void assert_refused(const mt_test_run_t *r, int want, const char *expect)
{
	assert_status(r, want);
	mt_quiet(r->out_len == 0, "stdout is not empty: %s", r->out);
	mt_quiet(!strncmp(r->err, "memtrace: ", 10) && strstr(r->err, expect),
		 "stderr does not say '%s': %s", expect, r->err);
}

static json_object *parse_json(const char *text)
{
	json_object *o = json_tokener_parse(text);

	mt_quiet(o && json_object_is_type(o, json_type_object),
		 "not one JSON object: %s", text);
	return o;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v;

	mt_quiet(json_object_object_get_ex(o, key, &v), "no %s in %s", key,
		 json_object_to_json_string(o));
	return v;
}

/* ---- the workloads, for real runs ---- */

/* Run a workload under the preload, its trace to dir/trace. */
static void traced(const char *dir, const char *trace, const char *name,
		   const char *arg)
{
	char pre[4096], out[4096];
	char *prog = mt_test_workload(name), *path = mt_test_path(dir, trace);
	char *argv[] = { prog, (char *)arg, NULL };
	char *env[] = { pre, out, NULL };
	mt_test_run_t r;

	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(out, sizeof(out), "MEMTRACE_OUTPUT=%s", path);
	mt_test_run(&r, argv, env);
	assert_status(&r, 0);
	mt_test_run_release(&r);
	free(prog);
	free(path);
}

/* The ip of a trace's frame 1, as written. */
static char *first_ip(const char *dir, const char *trace)
{
	char *path = mt_test_path(dir, trace);
	char *text = mt_test_read(path, NULL), *at, *end, *ip;

	mt_quiet_ptr_nonnull(text);
	at = strstr(text, "\"frame_id\":1,\"ip\":\"");
	mt_quiet_ptr_nonnull(at);
	at += strlen("\"frame_id\":1,\"ip\":\"");
	end = strchr(at, '"');
	ip = strndup(at, (size_t)(end - at));
	free(text);
	free(path);
	return ip;
}

static int aslr_on(void)
{
	char *s = mt_test_read("/proc/sys/kernel/randomize_va_space", NULL);
	int on = s && s[0] != '0';

	free(s);
	return on;
}

/* ================= units ================= */

START_TEST(test_sizes_are_1024_based_with_k_m_g_suffixes)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "0", 0 }, { "7192", 7192 }, { "512B", 512 }, { "16K", 16384 },
		{ "16k", 16384 }, { "16KiB", 16384 }, { "1.5K", 1536 },
		{ "6.1K", 6246 }, { "1M", 1048576 }, { "0.5M", 524288 },
		{ "2G", 2147483648u }, { "1GiB", 1073741824 },
		{ "1T", 1099511627776u }, { "1.0009765625K", 1025 },
		{ "18446744073709551615", UINT64_MAX },
	};
	static const char *const bad[] = {
		"", "K", "-1", "+1", "1KB", "1kb", "1Ki", "1.", ".5K", "1.5.K",
		"1 K", "16E", "16P", "18446744073709551616", "16777216T", "0x10",
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		mt_quiet(mt_units_parse_size(good[i].s, &v) == 0,
			 "'%s' refused", good[i].s);
		mt_quiet(v == good[i].v, "'%s' is %" PRIu64 ", want %" PRIu64,
			 good[i].s, v, good[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		mt_quiet(mt_units_parse_size(bad[i], &v) == -1 && v == 12345,
			 "'%s' accepted as %" PRIu64, bad[i], v);
	}
	mt_quiet_int_eq(mt_units_parse_count("10K", &v), -1);
	mt_quiet_int_eq(mt_units_parse_count("10", &v), 0);
	mt_quiet_uint_eq(v, 10);
}
END_TEST

START_TEST(test_thresholds_compare_exactly)
{
	uint64_t m;

	mt_quiet_int_eq(mt_units_parse_pct("49.42", &m), 0);
	mt_quiet_uint_eq(m, 49420);
	mt_quiet_int_eq(mt_units_parse_pct("5%", &m), 0);
	mt_quiet_uint_eq(m, 5000);
	mt_quiet_int_eq(mt_units_parse_pct("0.001", &m), 0);
	mt_quiet_uint_eq(m, 1);
	mt_quiet_int_eq(mt_units_parse_pct("1.2345", &m), -1);
	mt_quiet_int_eq(mt_units_parse_pct("-5", &m), -1);
	mt_quiet_int_eq(mt_units_parse_pct("abc", &m), -1);
	/* 4144 -> 6192 is +49.4208...% */
	ck_assert(mt_units_grew_beyond(4144, 6192, 49420));
	ck_assert(!mt_units_grew_beyond(4144, 6192, 49421));
	/* exactly 10%: not beyond 10% */
	ck_assert(!mt_units_grew_beyond(1000, 1100, 10000));
	ck_assert(mt_units_grew_beyond(1000, 1101, 10000));
	ck_assert(!mt_units_grew_beyond(1000, 900, 0));
	ck_assert(!mt_units_grew_beyond(0, 0, 0));
	/* growth from nothing passes any threshold */
	ck_assert(mt_units_grew_beyond(0, 1, UINT64_MAX));
	ck_assert(mt_units_grew_beyond(UINT64_MAX - 1, UINT64_MAX, 0));
}
END_TEST

/* ================= gate ================= */

START_TEST(test_gate_budgets_that_hold_exit_0)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "gate", "new.jsonl", "--max-peak", "7192", "--max-live",
	   "6.1K", "--max-allocations", "7");
	assert_status(&r, 0);
	ck_assert_str_eq(r.err, "");
	mt_test_assert_golden(r.out, r.out_len, "gate/gate_hold.txt");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_gate_names_each_failed_budget_with_its_limit_and_value)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "gate", "new.jsonl", "--max-peak", "8K", "--max-live", "4K",
	   "--max-allocations", "10", "--max-temporary", "2",
	   "--require-complete");
	assert_status(&r, 1);
	ck_assert_str_eq(r.err, "");
	mt_test_assert_golden(r.out, r.out_len, "gate/gate_fail.txt");
	mt_test_run_release(&r);
	/* One byte under a value fails it; the value itself holds. */
	MT(&r, dir, "gate", "new.jsonl", "--max-peak", "7191");
	assert_status(&r, 1);
	mt_quiet_ptr_nonnull(strstr(r.out, "FAIL --max-peak 7191 (7.0 KiB): "
			     "peak_live_bytes is 7192 (7.0 KiB), 1 (1 B) over\n"));
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "new.jsonl", "--max-allocations", "6");
	assert_status(&r, 1);
	mt_quiet_ptr_nonnull(strstr(r.out, "FAIL --max-allocations 6: allocations is 7, 1 over\n"
			     "     most calls: 3 from load_records (app) < main (app)\n"));
	mt_test_run_release(&r);
}
END_TEST

/* A failed budget's hint names C++ frames as report does, demangled: a
 * trace of one 64-byte block from operator new, called from
 * app::make_widget(int), by the mangled names the preload records. */
START_TEST(test_gate_hint_demangles_cxx_names)
{
	static const char trace[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":7}\n"
		"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n"
		"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1001\","
		"\"symbol\":\"_Znwm\",\"offset\":\"0x1c\",\"module\":\"/lib/libstdc++.so.6\","
		"\"module_offset\":\"0x1001\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"frame\",\"frame_id\":2,\"ip\":\"0x2002\","
		"\"symbol\":\"_ZN3app11make_widgetEi\",\"offset\":\"0x10\","
		"\"module\":\"/bin/app\",\"module_offset\":\"0x2002\"}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1,2]}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x5000\","
		"\"size\":64,\"fn\":\"malloc\",\"stack\":1,\"tid\":7}\n"
		"{\"v\":1,\"seq\":7,\"kind\":\"trace.stop\"}\n";
	char *dir = mt_test_scratch(), *path = mt_test_path(dir, "cxx.jsonl");
	mt_test_run_t r;

	mt_test_write(path, trace, sizeof(trace) - 1);
	MT(&r, dir, "gate", "cxx.jsonl", "--max-allocations", "0");
	assert_status(&r, 1);
	mt_quiet(strstr(r.out, " from operator new(unsigned long) (libstdc++.so.6) < "
			       "app::make_widget(int) (app)\n") != NULL,
		 "no demangled hint in:\n%s", r.out);
	mt_test_run_release(&r);
	free(path);
}
END_TEST

/* fixtures/report/realloc.jsonl, copied into dir: sites whose calls are
 * reallocs (its README works them out): read_line 2 allocations and 5
 * calls, make_buf 1 and 1, grow 0 and 2. */
static void copy_realloc_trace(const char *dir)
{
	char *from = mt_test_fixture("report/realloc.jsonl");

	copy_file(from, dir, "realloc.jsonl");
	free(from);
}

/* Under a failed --max-allocations, the site with the most calls, its
 * reallocs included (heaptrack counts a realloc as a call), from a
 * trace; a summary file's site lines count their allocations alone. */
START_TEST(test_gate_counts_a_sites_reallocs_as_calls)
{
	char *dir = scratch();
	mt_test_run_t r;

	copy_realloc_trace(dir);
	MT(&r, dir, "gate", "realloc.jsonl", "--max-allocations", "2");
	assert_status(&r, 1);
	ck_assert_str_eq(r.out,
			 "FAIL --max-allocations 2: allocations is 3, 1 over\n"
			 "     most calls: 5 from read_line (churn) < main (churn)\n"
			 "memtrace gate: realloc.jsonl: 1 of 1 budget failed\n");
	mt_test_run_release(&r);
	MT(&r, dir, "summary", "realloc.jsonl", "--include-zero-live", "-o",
	   "realloc.summary.jsonl");
	assert_status(&r, 0);
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "realloc.summary.jsonl", "--max-allocations", "2");
	assert_status(&r, 1);
	mt_quiet_ptr_nonnull(strstr(r.out, "     most calls: 2 from read_line (churn) < main (churn)\n"));
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_gate_require_complete_fails_on_a_caveated_trace)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "gate", "killed.jsonl", "--max-live", "100", "--require-complete");
	assert_status(&r, 1);
	mt_test_assert_golden(r.out, r.out_len, "gate/gate_caveated.txt");
	mt_test_run_release(&r);
	/* Without it the budgets are judged on what the trace holds. */
	MT(&r, dir, "gate", "killed.jsonl", "--max-live", "100");
	assert_status(&r, 0);
	ck_assert_str_eq(r.out,
			 "ok   --max-live 100 (100 B): live_bytes is 50 (50 B)\n"
			 "note: the trace is missing_stop_event: its figures cover only "
			 "the events it holds (--require-complete fails on it)\n"
			 "memtrace gate: killed.jsonl: 1 budget holds\n");
	mt_test_run_release(&r);
}
END_TEST

/* The golden with its last line's path replaced. */
static char *golden_for(const char *golden, const char *from, const char *to)
{
	char *path = mt_test_fixture(golden);
	char *text = mt_test_read(path, NULL), *at, *out;
	size_t n;

	mt_quiet_ptr_nonnull(text);
	at = strstr(text, from);
	mt_quiet_ptr_nonnull(at);
	n = strlen(text) - strlen(from) + strlen(to) + 1;
	out = malloc(n);
	mt_quiet_ptr_nonnull(out);
	snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	free(text);
	free(path);
	return out;
}

START_TEST(test_gate_reads_a_summary_written_earlier_as_it_reads_the_trace)
{
	char *dir = scratch();
	char *want = golden_for("gate/gate_fail.txt", "gate: new.jsonl:",
				"gate: new.summary.jsonl:");
	mt_test_run_t r;

	MT(&r, dir, "summary", "new.jsonl", "--top", "100", "--include-zero-live",
	   "-o", "new.summary.jsonl");
	assert_status(&r, 0);
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "new.summary.jsonl", "--max-peak", "8K", "--max-live",
	   "4K", "--max-allocations", "10", "--max-temporary", "2",
	   "--require-complete");
	assert_status(&r, 1);
	ck_assert_str_eq(r.out, want);
	mt_test_run_release(&r);
	/* capture's summary: the summary line alone, so no site to name. */
	MT(&r, dir, "capture", "--capture", "new.jsonl", "--summary", "capture.jsonl");
	assert_status(&r, 0);
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "capture.jsonl", "--max-live", "4K");
	assert_status(&r, 1);
	ck_assert_str_eq(r.out,
			 "FAIL --max-live 4096 (4.0 KiB): live_bytes is 6192 (6.0 KiB), "
			 "2096 (2.0 KiB) over\n"
			 "memtrace gate: capture.jsonl: 1 of 1 budget failed\n");
	mt_test_run_release(&r);
	free(want);
}
END_TEST

START_TEST(test_gate_sizes_print_as_read)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "gate", "new.jsonl", "--max-peak", "7K", "--max-live", "1G");
	assert_status(&r, 1);
	mt_quiet_ptr_nonnull(strstr(r.out, "FAIL --max-peak 7168 (7.0 KiB): "
			     "peak_live_bytes is 7192 (7.0 KiB), 24 (24 B) over\n"));
	mt_quiet_ptr_nonnull(strstr(r.out, "ok   --max-live 1073741824 (1.0 GiB): "));
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "new.jsonl", "--max-peak=0.5M");
	assert_status(&r, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, "ok   --max-peak 524288 (512.0 KiB): "));
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_gate_bad_input_has_its_own_exit_status)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "gate", "absent.jsonl", "--max-live", "1");
	assert_refused(&r, MT_EXIT_MISSING, "cannot read 'absent.jsonl'");
	mt_test_run_release(&r);
	put(dir, "empty.jsonl", "");
	MT(&r, dir, "gate", "empty.jsonl", "--max-live", "1");
	assert_refused(&r, MT_EXIT_INVALID, "not valid memtrace evidence: the trace is empty");
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "reps_steady.jsonl", "--max-live", "1");
	assert_refused(&r, MT_EXIT_INVALID, "it is a repetitions file (read it with "
					    "'memtrace repetitions')");
	mt_test_run_release(&r);
	put(dir, "bad.summary.jsonl",
	    "{\"schema\":\"memtrace.summary/v1\",\"status\":\"complete\","
	    "\"message\":null}\n");
	MT(&r, dir, "gate", "bad.summary.jsonl", "--max-live", "1");
	assert_refused(&r, MT_EXIT_INVALID, "line 1 is not a summary line: its "
					    "\"events\" is missing");
	mt_test_run_release(&r);
	/* The summary line, then the three sites with live bytes. */
	MT(&r, dir, "summary", "new.jsonl", "-o", "s.jsonl");
	mt_test_run_release(&r);
	{
		char *p = mt_test_path(dir, "s.jsonl");
		FILE *f = fopen(p, "a");

		mt_quiet_ptr_nonnull(f);
		fputs("{\"schema\":\"memtrace.site/v1\",\"rank\":9}\n", f);
		fclose(f);
		free(p);
	}
	MT(&r, dir, "gate", "s.jsonl", "--max-live", "1");
	assert_refused(&r, MT_EXIT_INVALID, "line 5 is not a site line");
	mt_test_run_release(&r);

	MT(&r, dir, "gate", "new.jsonl");
	assert_refused(&r, MT_EXIT_USAGE, "no budget given");
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "new.jsonl", "--max-live", "1KB");
	assert_refused(&r, MT_EXIT_USAGE, "--max-live needs a size");
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "new.jsonl", "--max-allocations", "-1");
	assert_refused(&r, MT_EXIT_USAGE, "--max-allocations needs a whole number");
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "new.jsonl", "--max-frees", "1");
	assert_refused(&r, MT_EXIT_USAGE, "unknown option '--max-frees'");
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "new.jsonl", "base.jsonl", "--max-live", "1");
	assert_refused(&r, MT_EXIT_USAGE, "unexpected argument 'base.jsonl'");
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "--max-live");
	assert_refused(&r, MT_EXIT_USAGE, "option '--max-live' needs a value");
	mt_test_run_release(&r);
}
END_TEST

/* ================= diff ================= */

START_TEST(test_diff_matches_sites_across_runs_at_different_addresses)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "diff", "base.jsonl", "new.jsonl");
	assert_status(&r, 1);
	ck_assert_str_eq(r.err, "");
	mt_test_assert_golden(r.out, r.out_len, "gate/diff.txt");
	mt_test_run_release(&r);
}
END_TEST

/* A site's allocations in diff are its calls, reallocs included, when
 * both runs are traces: NEW is realloc.jsonl with one more block made by
 * make_buf and moved to grow by a realloc, so grow's calls go from 2 to 3
 * though it allocates nothing.  Against a summary file, whose site lines
 * count alloc events alone, both runs count alloc events. */
START_TEST(test_diff_counts_a_sites_reallocs_as_calls)
{
	static const char more[] =
		"{\"v\":1,\"seq\":20,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x7000\",\"size\":32,\"fn\":\"malloc\",\"stack\":2,\"tid\":77,\"t\":2000}\n"
		"{\"v\":1,\"seq\":21,\"kind\":\"remap\",\"allocator_id\":0,\"ptr\":\"0x7000\",\"new_ptr\":\"0x8000\",\"size\":1000,\"fn\":\"realloc\",\"stack\":3,\"tid\":77,\"t\":2100}\n"
		"{\"v\":1,\"seq\":22,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x8000\",\"fn\":\"free\",\"tid\":77,\"t\":2200}\n"
		"{\"v\":1,\"seq\":23,\"kind\":\"trace.stop\",\"reason\":\"exit\",\"dropped\":0,\"t\":2300}\n";
	char *dir = scratch(), *path, *base, *stop, *now = NULL;
	mt_test_run_t r;

	copy_realloc_trace(dir);
	path = mt_test_path(dir, "realloc.jsonl");
	base = mt_test_read(path, NULL);
	mt_quiet_ptr_nonnull(base);
	stop = strstr(base, "{\"v\":1,\"seq\":20,\"kind\":\"trace.stop\"");
	mt_quiet_ptr_nonnull(stop);
	ck_assert_int_ne(asprintf(&now, "%.*s%s", (int)(stop - base), base, more), -1);
	put(dir, "more.jsonl", now);

	MT(&r, dir, "diff", "realloc.jsonl", "more.jsonl");
	assert_status(&r, 0);
	mt_quiet_ptr_nonnull(strstr(r.out,
		"sites by growth at the peak: 2 changed, 1 unchanged:\n"
		"  at peak 0 B (2.0 KiB -> 2.0 KiB), live 0 B (0 B -> 0 B), allocated +1000 B (2.9 KiB -> 3.9 KiB), allocations +1 (2 -> 3)\n"
		"      grow (churn) < main (churn)\n"
		"  at peak 0 B (0 B -> 0 B), live 0 B (0 B -> 0 B), allocated +32 B (32 B -> 64 B), allocations +1 (1 -> 2)\n"
		"      make_buf (churn) < main (churn)\n"));
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "realloc.jsonl", "more.jsonl", "--json");
	assert_status(&r, 0);
	mt_quiet_ptr_nonnull(strstr(r.out,
		"\"sites\":[{\"base\":{\"allocations\":2,\"bytes_allocated\":3000,"
		"\"live_allocations\":0,\"live_bytes\":0,\"bytes_at_peak\":2000},"
		"\"new\":{\"allocations\":3,"));
	mt_test_run_release(&r);

	/* The trace against its own summary: read_line's 3 reallocs are no
	 * change. */
	MT(&r, dir, "summary", "realloc.jsonl", "--include-zero-live", "-o",
	   "realloc.summary.jsonl");
	assert_status(&r, 0);
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "realloc.summary.jsonl", "realloc.jsonl");
	assert_status(&r, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, "sites by growth of their own peaks: 0 "
				    "changed, 3 unchanged\n"));
	mt_test_run_release(&r);

	free(now);
	free(base);
	free(path);
}
END_TEST

START_TEST(test_diff_json_is_one_json_object)
{
	char *dir = scratch();
	mt_test_run_t r;
	json_object *o;

	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--json");
	assert_status(&r, 1);
	mt_test_assert_golden(r.out, r.out_len, "gate/diff.json");
	mt_quiet_int_eq(strchr(r.out, '\n') - r.out, (long)r.out_len - 1);
	o = parse_json(r.out);
	mt_quiet_int_eq((int)json_object_array_length(get(o, "regressed")), 2);
	mt_quiet_int_eq((int)json_object_array_length(get(o, "sites")), 2);
	json_object_put(o);
	mt_test_run_release(&r);
}
END_TEST

/* The regressed fields of diff --json at a threshold, "," joined. */
static void regressed_at(const char *dir, const char *pct, int want_status,
			 const char *want)
{
	mt_test_run_t r;
	json_object *o, *list;
	char got[256] = "";

	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--json", "--threshold", pct);
	assert_status(&r, want_status);
	o = parse_json(r.out);
	list = get(o, "regressed");
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		if (i)
			strcat(got, ",");
		strcat(got, json_object_get_string(json_object_array_get_idx(list, i)));
	}
	mt_quiet(!strcmp(got, want), "--threshold %s: regressed [%s], want [%s]",
		 pct, got, want);
	json_object_put(o);
	mt_test_run_release(&r);
}

START_TEST(test_diff_threshold_is_the_growth_allowed)
{
	char *dir = scratch();
	mt_test_run_t r;

	/* peak_live_bytes grew 39.81%, live_bytes 49.42% */
	regressed_at(dir, "0", 1, "peak_live_bytes,live_bytes");
	regressed_at(dir, "39.8", 1, "peak_live_bytes,live_bytes");
	regressed_at(dir, "39.82", 1, "live_bytes");
	regressed_at(dir, "49.42", 1, "live_bytes");
	regressed_at(dir, "49.421", 0, "");
	regressed_at(dir, "50%", 0, "");
	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--threshold", "50", "--top", "0");
	assert_status(&r, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, "sites by growth at the peak: 2 changed, "
			     "2 unchanged; the first 0 (--top)\nmemtrace diff: "
			     "neither peak_live_bytes nor live_bytes grew beyond "
			     "the threshold of 50% and 1.0 KiB\n"));
	mt_test_run_release(&r);
	/* Shrinking is no regression: NEW to BASE. */
	MT(&r, dir, "diff", "new.jsonl", "base.jsonl");
	assert_status(&r, 0);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_diff_of_two_runs_of_one_program_matches_every_site)
{
	char *dir = mt_test_scratch();
	char *ip1, *ip2;
	mt_test_run_t r;

	traced(dir, "a.jsonl", "wl_demo", "200");
	traced(dir, "b.jsonl", "wl_demo", "200");
	ip1 = first_ip(dir, "a.jsonl");
	ip2 = first_ip(dir, "b.jsonl");
	if (aslr_on())
		mt_quiet(strcmp(ip1, ip2), "both runs at %s: ASLR did nothing", ip1);
	MT(&r, dir, "diff", "a.jsonl", "b.jsonl");
	assert_status(&r, 0);
	mt_quiet(strstr(r.out, "sites by growth at the peak: 0 changed, ") != NULL,
		 "sites changed between two runs:\n%s", r.out);
	mt_test_run_release(&r);
	/* And from their summary files. */
	MT(&r, dir, "summary", "a.jsonl", "--top", "1000", "--include-zero-live",
	   "-o", "a.summary.jsonl");
	mt_test_run_release(&r);
	MT(&r, dir, "summary", "b.jsonl", "--top", "1000", "--include-zero-live",
	   "-o", "b.summary.jsonl");
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "a.summary.jsonl", "b.summary.jsonl");
	assert_status(&r, 0);
	mt_quiet(strstr(r.out, "sites by growth of their own peaks: 0 changed, ") != NULL,
		 "sites changed between two summaries:\n%s", r.out);
	mt_test_run_release(&r);
	free(ip1);
	free(ip2);
}
END_TEST

/* peak_live_bytes's change from a to b, as diff --json gives it. */
static int64_t peak_change(const char *dir, const char *a, const char *b)
{
	mt_test_run_t r;
	json_object *o;
	int64_t v;

	MT(&r, dir, "diff", a, b, "--json", "--threshold", "0", "--min-growth", "0");
	o = parse_json(r.out);
	v = json_object_get_int64(get(get(get(o, "totals"), "peak_live_bytes"),
				      "change"));
	json_object_put(o);
	mt_test_run_release(&r);
	return v;
}

/* wl_jitter's runs differ by 1 to 63 bytes, as runs of real programs do
 * (docs/ci-gates.md has the figures): diff's default tolerance takes
 * them for noise, and gate for complete runs; only an exact diff fails. */
START_TEST(test_diff_and_gate_accept_two_runs_of_one_program)
{
	char *dir = mt_test_scratch();
	const char *base = "a.jsonl", *now = "b.jsonl";
	int64_t change = 0;
	mt_test_run_t r;

	traced(dir, "a.jsonl", "wl_jitter", NULL);
	for (int i = 0; i < 10 && !change; i++) {
		traced(dir, "b.jsonl", "wl_jitter", NULL);
		change = peak_change(dir, "a.jsonl", "b.jsonl");
	}
	mt_quiet(change != 0, "%s", "ten runs of wl_jitter with the same peak");
	if (change < 0) {
		base = "b.jsonl";
		now = "a.jsonl";
	}
	MT(&r, dir, "diff", base, now);
	assert_status(&r, 0);
	mt_quiet(strstr(r.out, "memtrace diff: neither peak_live_bytes nor "
			"live_bytes grew beyond the threshold of 1% and 1.0 KiB\n") != NULL,
		 "two runs of one program regressed:\n%s", r.out);
	mt_test_run_release(&r);
	MT(&r, dir, "diff", base, now, "--threshold", "0", "--min-growth", "0");
	assert_status(&r, 1);
	mt_test_run_release(&r);
	for (int i = 0; i < 2; i++) {
		MT(&r, dir, "gate", i ? now : base, "--require-complete");
		assert_status(&r, 0);
		mt_test_run_release(&r);
	}
}
END_TEST

/* --min-growth is a floor in bytes beside the percentage: a figure
 * regresses when it grows by more than both; growth from 0 always does. */
START_TEST(test_diff_min_growth_is_the_bytes_allowed)
{
	char *dir = scratch();
	mt_test_run_t r;

	/* Both figures grew by 2048 bytes. */
	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--threshold", "0",
	   "--min-growth", "2K", "--top", "0");
	assert_status(&r, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, "grew beyond the threshold of 0% and 2.0 KiB\n"));
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--threshold", "0",
	   "--min-growth", "2047", "--top", "0");
	assert_status(&r, 1);
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--min-growth", "2KB");
	assert_refused(&r, MT_EXIT_USAGE, "--min-growth needs a size");
	mt_test_run_release(&r);
}
END_TEST

/* wl_inl3 (-O2): inner -> middle -> main, each always_inline, so one
 * return address stands for three functions.  diff's and gate's lists
 * of frames give each level its own frame, as report does, never main
 * alone. */
START_TEST(test_diff_and_gate_list_each_inlined_level_as_a_frame)
{
	static const char chain[] = "inner (wl_inl3) < middle (wl_inl3) < main (wl_inl3) < ";
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	traced(dir, "a.jsonl", "o2/wl_inl3", NULL);
	traced(dir, "b.jsonl", "o2/wl_inl3", "one more argument");
	/* One argument more: one byte more, still live at exit. */
	MT(&r, dir, "diff", "a.jsonl", "b.jsonl", "--threshold", "0",
	   "--min-growth", "0");
	assert_status(&r, 1);
	mt_quiet(strstr(r.out, "  at peak +1 B (17 B -> 18 B), live +1 B (17 B -> 18 B)") &&
		 strstr(r.out, chain), "no inline chain:\n%s", r.out);
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "a.jsonl", "b.jsonl", "--threshold", "0",
	   "--min-growth", "0", "--format", "github");
	mt_quiet(strstr(r.out, chain) != NULL, "no inline chain:\n%s", r.out);
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "b.jsonl", "--max-live", "1");
	assert_status(&r, 1);
	mt_quiet(strstr(r.out, "most live bytes: 18 B in 1 block from ") &&
		 strstr(r.out, chain), "no inline chain:\n%s", r.out);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_diff_ranks_sites_by_their_growth_at_the_peak)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	traced(dir, "small.jsonl", "wl_demo", "100");
	traced(dir, "big.jsonl", "wl_demo", "3000");
	MT(&r, dir, "diff", "small.jsonl", "big.jsonl", "--top", "1");
	assert_status(&r, 1);
	/* The records buffer doubles past 16 KiB and is what the peak
	 * holds more of; the short-lived lines grow most in bytes
	 * allocated and calls, but hold 64 B at the peak. */
	mt_quiet(strstr(r.out, "peak_live_bytes            12.1 KiB     40.1 KiB"
			"    +28.1 KiB  +232.6%  REGRESSED\n") &&
		 strstr(r.out, "sites by growth at the peak: 3 changed, 2 unchanged; "
			"the first 1 (--top):\n"
			"  at peak +32.0 KiB (0 B -> 32.0 KiB), live 0 B (0 B -> 0 B), "
			"allocated +62.0 KiB (1.9 KiB -> 63.9 KiB), allocations +5 (4 -> 9)\n"
			"      load_records (wl_demo) < main (wl_demo)"),
		 "not the records buffer first:\n%s", r.out);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_diff_bad_input_has_its_own_exit_status)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "diff", "base.jsonl");
	assert_refused(&r, MT_EXIT_USAGE, "missing NEW argument");
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "absent.jsonl", "new.jsonl");
	assert_refused(&r, MT_EXIT_MISSING, "cannot read 'absent.jsonl'");
	mt_test_run_release(&r);
	put(dir, "junk.jsonl", "not json\n");
	MT(&r, dir, "diff", "base.jsonl", "junk.jsonl");
	assert_refused(&r, MT_EXIT_INVALID, "'junk.jsonl' is not valid memtrace evidence");
	mt_test_run_release(&r);
	/* A saved summary whose site names a symbol in overlong UTF-8, which
	 * json-c alone accepts. */
	MT(&r, dir, "summary", "base.jsonl", "-o", "base.sum.jsonl");
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	{
		char *path = mt_test_path(dir, "base.sum.jsonl"), *text, *at, *bad;
		size_t len;

		text = mt_test_read(path, &len);
		mt_quiet_ptr_nonnull(text);
		at = strstr(text, "\"symbol\":\"");
		mt_quiet_ptr_nonnull(at);
		bad = malloc(len + 3);
		mt_quiet_ptr_nonnull(bad);
		at += strlen("\"symbol\":\"");
		memcpy(bad, text, (size_t)(at - text));
		memcpy(bad + (at - text), "\xc0\xaf", 2);
		memcpy(bad + (at - text) + 2, at, len - (size_t)(at - text) + 1);
		put(dir, "overlong.sum.jsonl", bad);
		free(bad);
		free(text);
		free(path);
	}
	MT(&r, dir, "diff", "base.sum.jsonl", "overlong.sum.jsonl");
	assert_refused(&r, MT_EXIT_INVALID, "it is not valid UTF-8");
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--threshold", "-5");
	assert_refused(&r, MT_EXIT_USAGE, "--threshold needs a percentage");
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--threshold", "1.2345");
	assert_refused(&r, MT_EXIT_USAGE, "--threshold needs a percentage");
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--top", "x");
	assert_refused(&r, MT_EXIT_USAGE, "--top needs a number");
	mt_test_run_release(&r);
}
END_TEST

/* ================= CI outputs: --junit and --format github ================= */

/* The file at dir/name, its suite's and cases' times made "0.000" (the
 * command's own time varies), for a golden; each time must be seconds
 * with three decimals. */
static char *junit_of(const char *dir, const char *name)
{
	char *path = mt_test_path(dir, name), *text = mt_test_read(path, NULL);
	char *at;

	mt_quiet(text != NULL, "no JUnit file %s", path);
	for (at = text; (at = strstr(at, " time=\"")) != NULL;) {
		char *v = at + strlen(" time=\""), *e = v;

		while (*e >= '0' && *e <= '9')
			e++;
		mt_quiet(e > v && e[0] == '.' && e[1] >= '0' && e[1] <= '9' &&
			 e[2] >= '0' && e[2] <= '9' && e[3] >= '0' && e[3] <= '9' &&
			 e[4] == '"', "a time is not seconds with three decimals: %.20s", at);
		/* "0.000" is never longer than what it replaces. */
		memmove(v + 5, e + 4, strlen(e + 4) + 1);
		memcpy(v, "0.000", 5);
		at = v + 5;
	}
	free(path);
	return text;
}

/* xmllint --schema fixtures/junit.xsd dir/name must say it validates. */
static void assert_valid_junit(const char *dir, const char *name)
{
	char *xsd = mt_test_fixture("junit.xsd"), *path = mt_test_path(dir, name);
	char *argv[] = { "/bin/sh", "-c", "exec xmllint --noout --schema \"$0\" \"$1\"",
			 xsd, path, NULL };
	mt_test_run_t r;

	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status != 127, "xmllint is missing (scripts/install-deps "
		 "installs libxml2-utils): %s", r.err);
	/* Check's messages are short: xmllint's first lines say enough. */
	mt_quiet(r.status == 0, "%s does not validate against junit.xsd "
		 "(exit %d):\n%.1500s", name, r.status, r.err);
	mt_test_run_release(&r);
	free(xsd);
	free(path);
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *at = text; (at = strstr(at, needle)) != NULL; at++)
		n++;
	return n;
}

/* dir holds nothing but the scratch copies and what names lists. */
static void assert_nothing_left(const char *dir)
{
	char *argv[] = { "/bin/sh", "-c", "cd \"$0\" && ls -A", (char *)dir, NULL };
	mt_test_run_t r;

	mt_test_run(&r, argv, NULL);
	assert_status(&r, 0);
	mt_quiet(!strstr(r.out, ".tmp.") && !strstr(r.out, ".xml"),
		 "a file was left behind:\n%s", r.out);
	mt_test_run_release(&r);
}

START_TEST(test_gate_junit_has_a_test_case_per_budget_and_validates)
{
	char *dir = scratch(), *xml;
	mt_test_run_t r;

	MT(&r, dir, "gate", "new.jsonl", "--max-peak", "8K", "--max-live", "4K",
	   "--max-allocations", "10", "--max-temporary", "2",
	   "--require-complete", "--junit", "gate.xml");
	/* The option changes neither the status nor the report. */
	assert_status(&r, 1);
	ck_assert_str_eq(r.err, "");
	mt_test_assert_golden(r.out, r.out_len, "gate/gate_fail.txt");
	mt_test_run_release(&r);
	assert_valid_junit(dir, "gate.xml");
	xml = junit_of(dir, "gate.xml");
	mt_test_assert_golden(xml, strlen(xml), "gate/gate_fail.junit.xml");
	free(xml);
}
END_TEST

START_TEST(test_gate_junit_of_budgets_that_hold_has_no_failure)
{
	char *dir = scratch(), *xml;
	mt_test_run_t r;

	MT(&r, dir, "gate", "new.jsonl", "--max-peak", "7192", "--max-live",
	   "6.1K", "--max-allocations", "7", "--junit", "gate.xml");
	assert_status(&r, 0);
	mt_test_assert_golden(r.out, r.out_len, "gate/gate_hold.txt");
	mt_test_run_release(&r);
	assert_valid_junit(dir, "gate.xml");
	xml = junit_of(dir, "gate.xml");
	mt_quiet(strstr(xml, "<testsuite name=\"memtrace gate new.jsonl\" tests=\"3\" "
			"failures=\"0\" errors=\"0\" skipped=\"0\" time=\"0.000\">") &&
		 count_of(xml, "<testcase ") == 3 && !strstr(xml, "<failure") &&
		 strstr(xml, "<system-out>--max-peak 7192 (7.0 KiB): "
			"peak_live_bytes is 7192 (7.0 KiB)</system-out>"),
		 "not three passed cases:\n%.3000s", xml);
	free(xml);
}
END_TEST

/* A caveated trace's note, which the text report prints above its
 * verdict, is the suite's own output. */
START_TEST(test_gate_junit_carries_the_notes_as_the_suites_output)
{
	char *dir = scratch(), *xml;
	mt_test_run_t r;

	MT(&r, dir, "gate", "killed.jsonl", "--max-live", "100", "--junit", "gate.xml");
	assert_status(&r, 0);
	mt_test_run_release(&r);
	assert_valid_junit(dir, "gate.xml");
	xml = junit_of(dir, "gate.xml");
	mt_quiet(strstr(xml, "    </testcase>\n    <system-out>note: the trace is "
			"missing_stop_event: its figures cover only the events it "
			"holds (--require-complete fails on it)\n</system-out>\n"
			"  </testsuite>\n"),
		 "no note as the suite's system-out:\n%.3000s", xml);
	free(xml);
}
END_TEST

/* A site's symbol with markup, quotes and a control character, and a
 * trace whose name has them and a byte that is not UTF-8: the file is
 * still well-formed, valid, and says each of them. */
START_TEST(test_gate_junit_escapes_markup_quotes_controls_and_bad_utf8)
{
	char *dir = scratch(), *path, *text, *at, *xml;
	static const char weird[] = "w<&\"'\xff.jsonl";
	mt_test_run_t r;
	size_t len;

	path = mt_test_path(dir, "new.jsonl");
	text = mt_test_read(path, &len);
	at = strstr(text, "\"symbol\":\"parse_config\"");
	mt_quiet_ptr_nonnull(at);
	{
		static const char sym[] = "\"symbol\":\"operator<<&\\\"x\\\"'\\u0001\"";
		size_t head = (size_t)(at - text), old = strlen("\"symbol\":\"parse_config\"");
		char *edited = malloc(len + sizeof(sym));

		mt_quiet_ptr_nonnull(edited);
		memcpy(edited, text, head);
		memcpy(edited + head, sym, sizeof(sym) - 1);
		memcpy(edited + head + sizeof(sym) - 1, at + old, len - head - old);
		free(path);
		path = mt_test_path(dir, weird);
		mt_test_write(path, edited, len - old + sizeof(sym) - 1);
		free(edited);
	}
	MT(&r, dir, "gate", weird, "--max-live", "4K", "--junit", "gate.xml");
	assert_status(&r, 1);
	mt_quiet(strstr(r.out, "from operator<<&\"x\"'"), "the site is not the "
		 "edited one:\n%s", r.out);
	mt_test_run_release(&r);
	assert_valid_junit(dir, "gate.xml");
	xml = junit_of(dir, "gate.xml");
	/* In an attribute: every markup character and quote a reference,
	 * the control character '?', the stray byte U+FFFD. */
	mt_quiet(strstr(xml, "<testsuite name=\"memtrace gate w&lt;&amp;&quot;&apos;"
			"\xef\xbf\xbd.jsonl\"") &&
		 strstr(xml, "message=\"--max-live 4096 (4.0 KiB): live_bytes is 6192 "
			"(6.0 KiB), 2096 (2.0 KiB) over; most live bytes: 4.0 KiB "
			"in 1 block from operator&lt;&lt;&amp;&quot;x&quot;&apos;? "
			"(app) &lt; main (app)\"") &&
		 /* In text, quotes need no reference. */
		 strstr(xml, ">--max-live 4096 (4.0 KiB): live_bytes is 6192 "
			"(6.0 KiB), 2096 (2.0 KiB) over; most live bytes: 4.0 KiB "
			"in 1 block from operator&lt;&lt;&amp;\"x\"'? (app) &lt; "
			"main (app)</failure>"),
		 "not escaped as XML:\n%.3000s", xml);
	free(xml);
	free(text);
	free(path);
}
END_TEST

START_TEST(test_xml_escaping_leaves_no_byte_xml_cannot_hold)
{
	static const struct {
		const char *in;
		int attr;
		const char *out;
	} cases[] = {
		{ "a<b>&c", 0, "a&lt;b&gt;&amp;c" },
		{ "\"q\" 'a'", 0, "\"q\" 'a'" },
		{ "\"q\" 'a'", 1, "&quot;q&quot; &apos;a&apos;" },
		{ "l1\nl2\tx\ry", 0, "l1\nl2\tx&#13;y" },
		{ "l1\nl2\tx\ry", 1, "l1&#10;l2&#9;x&#13;y" },
		{ "\x01\x1b\x7f", 0, "???" },
		{ "bad \xff \xc0\xaf end", 0, "bad \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd end" },
		{ "cut \xe2\x82", 1, "cut \xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xef\xbf\xbe", 0, "\xef\xbf\xbd" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 1,
		  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mt_buf_t b = MT_BUF_INIT;

		mt_quiet_int_eq(mt_ci_add_xml(&b, cases[i].in, strlen(cases[i].in),
					      cases[i].attr), MT_OK);
		mt_quiet(b.len == strlen(cases[i].out) &&
			 !memcmp(b.data, cases[i].out, b.len),
			 "case %zu: '%.*s', want '%s'", i, (int)b.len, b.data,
			 cases[i].out);
		mt_buf_release(&b);
	}
}
END_TEST

START_TEST(test_github_escaping_follows_the_workflow_command_rules)
{
	static const struct {
		const char *in;
		int prop;
		const char *out;
	} cases[] = {
		{ "50% of a:b,c", 0, "50%25 of a:b,c" },
		{ "50% of a:b,c", 1, "50%25 of a%3Ab%2Cc" },
		{ "l1\r\nl2", 0, "l1%0D%0Al2" },
		{ "l1\r\nl2", 1, "l1%0D%0Al2" },
		{ "::error::x", 0, "::error::x" },
		{ "\x1b[31m", 0, "?[31m" },
		{ "bad \xff", 1, "bad \xef\xbf\xbd" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mt_buf_t b = MT_BUF_INIT;

		mt_quiet_int_eq(mt_ci_add_github(&b, cases[i].in, strlen(cases[i].in),
						 cases[i].prop), MT_OK);
		mt_quiet(b.len == strlen(cases[i].out) &&
			 !memcmp(b.data, cases[i].out, b.len),
			 "case %zu: '%.*s', want '%s'", i, (int)b.len, b.data,
			 cases[i].out);
		mt_buf_release(&b);
	}
}
END_TEST

START_TEST(test_gate_junit_write_that_fails_leaves_no_file)
{
	char *dir = scratch(), *sub;
	mt_test_run_t r;

	/* A directory that does not exist: the temporary file cannot be
	 * made. */
	MT(&r, dir, "gate", "new.jsonl", "--max-live", "4K", "--junit",
	   "absent/gate.xml");
	assert_refused(&r, MT_EXIT_CANTCREAT,
		       "cannot write 'absent/gate.xml': No such file or directory");
	mt_test_run_release(&r);
	/* A directory in the way: the rename is refused, the temporary file
	 * removed, the directory left as it was. */
	sub = mt_test_path(dir, "report.xml");
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	MT(&r, dir, "gate", "new.jsonl", "--max-live", "8K", "--junit",
	   "report.xml");
	assert_refused(&r, MT_EXIT_CANTCREAT, "cannot write 'report.xml': Is a directory");
	mt_test_run_release(&r);
	ck_assert_int_eq(rmdir(sub), 0);
	assert_nothing_left(dir);
	free(sub);
}
END_TEST

START_TEST(test_gate_format_github_prints_an_error_per_failed_budget)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "gate", "new.jsonl", "--max-peak", "8K", "--max-live", "4K",
	   "--max-allocations", "10", "--max-temporary", "2",
	   "--require-complete", "--format", "github");
	assert_status(&r, 1);
	ck_assert_str_eq(r.err, "");
	mt_test_assert_golden(r.out, r.out_len, "gate/gate_fail.github.txt");
	mt_test_run_release(&r);
	/* A caveated trace: its note is a warning; the verdict of budgets
	 * that hold, a notice. */
	MT(&r, dir, "gate", "killed.jsonl", "--max-live", "100", "--format", "github");
	assert_status(&r, 0);
	mt_test_assert_golden(r.out, r.out_len, "gate/gate_caveated.github.txt");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_gate_format_github_prints_a_notice_when_every_budget_holds)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "gate", "new.jsonl", "--max-peak", "7192", "--max-live",
	   "6.1K", "--max-allocations", "7", "--format", "github");
	assert_status(&r, 0);
	ck_assert_str_eq(r.out, "::notice title=memtrace gate::memtrace gate: "
			 "new.jsonl: 3 budgets hold\n");
	mt_test_run_release(&r);
	/* --format text is the report, byte for byte. */
	MT(&r, dir, "gate", "new.jsonl", "--max-peak", "7192", "--max-live",
	   "6.1K", "--max-allocations", "7", "--format", "text");
	assert_status(&r, 0);
	mt_test_assert_golden(r.out, r.out_len, "gate/gate_hold.txt");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_gate_format_is_text_or_github)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "gate", "new.jsonl", "--max-live", "4K", "--format", "junit");
	assert_refused(&r, MT_EXIT_USAGE, "--format needs text or github, not 'junit'");
	mt_test_run_release(&r);
	MT(&r, dir, "gate", "new.jsonl", "--max-live", "4K", "--junit");
	assert_refused(&r, MT_EXIT_USAGE, "option '--junit' needs a value");
	mt_test_run_release(&r);
}
END_TEST

/* The line of wl_demo.c that holds needle, from 1. */
static unsigned line_of(const char *needle)
{
	char *path = mt_test_path(mt_test_source_dir(), "tests/workloads/wl_demo.c");
	char *text = mt_test_read(path, NULL), *at;
	unsigned line = 1;

	mt_quiet_ptr_nonnull(text);
	at = strstr(text, needle);
	mt_quiet(at != NULL, "no '%s' in wl_demo.c", needle);
	for (char *c = text; c < at; c++)
		line += *c == '\n';
	free(text);
	free(path);
	return line;
}

/* A real run: the heaviest site's file, relative to the directory gate
 * runs in (a CI job's checkout), and the line of its allocation. */
START_TEST(test_gate_names_the_heaviest_sites_file_and_line)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *junit = mt_test_path(dir, "gate.xml");
	char want[512], *xml;
	mt_test_run_t r;

	traced(dir, "demo.jsonl", "wl_demo", "100");
	MT(&r, mt_test_source_dir(), "gate", trace, "--max-live", "0",
	   "--format", "github", "--junit", junit);
	assert_status(&r, 1);
	snprintf(want, sizeof(want), "::error file=tests/workloads/wl_demo.c,"
		 "line=%u,title=memtrace gate --max-live::--max-live 0 (0 B): "
		 "live_bytes is ", line_of("table = calloc(1024"));
	mt_quiet(!strncmp(r.out, want, strlen(want)), "want %s...\ngot %s",
		 want, r.out);
	snprintf(want, sizeof(want), "from parse_config (wl_demo) < main "
		 "(wl_demo)");
	mt_quiet_ptr_nonnull(strstr(r.out, want));
	mt_test_run_release(&r);
	assert_valid_junit(dir, "gate.xml");
	xml = junit_of(dir, "gate.xml");
	snprintf(want, sizeof(want), ", at tests/workloads/wl_demo.c:%u\" type=\"budget\">",
		 line_of("table = calloc(1024"));
	mt_quiet(strstr(xml, want), "no '%s' in\n%.3000s", want, xml);
	free(xml);
	free(trace);
	free(junit);
}
END_TEST

START_TEST(test_diff_junit_has_a_test_case_per_deciding_figure)
{
	char *dir = scratch(), *xml;
	mt_test_run_t r;

	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--junit", "diff.xml");
	assert_status(&r, 1);
	ck_assert_str_eq(r.err, "");
	mt_test_assert_golden(r.out, r.out_len, "gate/diff.txt");
	mt_test_run_release(&r);
	assert_valid_junit(dir, "diff.xml");
	xml = junit_of(dir, "diff.xml");
	mt_test_assert_golden(xml, strlen(xml), "gate/diff.junit.xml");
	free(xml);
	/* --json and --junit together: each output whole. */
	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--json", "--junit", "diff.xml");
	assert_status(&r, 1);
	mt_test_assert_golden(r.out, r.out_len, "gate/diff.json");
	mt_test_run_release(&r);
	assert_valid_junit(dir, "diff.xml");
}
END_TEST

START_TEST(test_diff_junit_of_runs_within_the_threshold_has_no_failure)
{
	char *dir = scratch(), *xml;
	mt_test_run_t r;

	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--threshold", "50",
	   "--junit", "diff.xml");
	assert_status(&r, 0);
	mt_test_run_release(&r);
	assert_valid_junit(dir, "diff.xml");
	xml = junit_of(dir, "diff.xml");
	mt_quiet(count_of(xml, "<testcase ") == 2 && !strstr(xml, "<failure") &&
		 strstr(xml, "failures=\"0\"") &&
		 strstr(xml, "<system-out>live_bytes went from 4.0 KiB to 6.0 KiB "
			"(+49.4%), within the threshold of 50% and 1.0 KiB</system-out>"),
		 "not two passed cases:\n%.3000s", xml);
	free(xml);
}
END_TEST

START_TEST(test_diff_format_github_names_the_site_that_grew_most)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--format", "github");
	assert_status(&r, 1);
	ck_assert_str_eq(r.err, "");
	mt_test_assert_golden(r.out, r.out_len, "gate/diff.github.txt");
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "base.jsonl", "base.jsonl", "--format", "github");
	assert_status(&r, 0);
	ck_assert_str_eq(r.out, "::notice title=memtrace diff::memtrace diff: "
			 "neither peak_live_bytes nor live_bytes grew beyond the "
			 "threshold of 1%25 and 1.0 KiB\n");
	mt_test_run_release(&r);
}
END_TEST

/* Two real runs: the site whose own peak grew most, with its line. */
START_TEST(test_diff_format_github_of_real_runs_names_file_and_line)
{
	char *dir = mt_test_scratch(), *small = mt_test_path(dir, "small.jsonl");
	char *big = mt_test_path(dir, "big.jsonl");
	char want[512];
	mt_test_run_t r;

	traced(dir, "small.jsonl", "wl_demo", "100");
	traced(dir, "big.jsonl", "wl_demo", "3000");
	MT(&r, mt_test_source_dir(), "diff", small, big, "--format", "github");
	assert_status(&r, 1);
	snprintf(want, sizeof(want), "::error file=tests/workloads/wl_demo.c,"
		 "line=%u,title=memtrace diff peak_live_bytes::peak_live_bytes grew from ",
		 line_of("grown = realloc(records"));
	mt_quiet(!strncmp(r.out, want, strlen(want)), "want %s...\ngot %s",
		 want, r.out);
	mt_test_run_release(&r);
	free(small);
	free(big);
}
END_TEST

START_TEST(test_diff_json_and_format_github_are_refused_together)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--json", "--format", "github");
	assert_refused(&r, MT_EXIT_USAGE, "--json and --format github are two outputs");
	mt_test_run_release(&r);
	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--format", "xml");
	assert_refused(&r, MT_EXIT_USAGE, "--format needs text or github, not 'xml'");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_diff_junit_write_that_fails_leaves_no_file)
{
	char *dir = scratch(), *sub;
	mt_test_run_t r;

	MT(&r, dir, "diff", "base.jsonl", "new.jsonl", "--junit", "absent/diff.xml");
	assert_refused(&r, MT_EXIT_CANTCREAT,
		       "cannot write 'absent/diff.xml': No such file or directory");
	mt_test_run_release(&r);
	sub = mt_test_path(dir, "report.xml");
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	MT(&r, dir, "diff", "base.jsonl", "base.jsonl", "--junit", "report.xml");
	assert_refused(&r, MT_EXIT_CANTCREAT, "cannot write 'report.xml': Is a directory");
	mt_test_run_release(&r);
	ck_assert_int_eq(rmdir(sub), 0);
	assert_nothing_left(dir);
	free(sub);
}
END_TEST

/* ================= repetitions ================= */

START_TEST(test_repetitions_of_steady_runs_flag_nothing)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "repetitions", "reps_steady.jsonl");
	assert_status(&r, 0);
	mt_test_assert_golden(r.out, r.out_len, "gate/reps_steady.txt");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_repetitions_flag_each_field_that_varies)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "repetitions", "reps_varying.jsonl");
	assert_status(&r, 1);
	mt_test_assert_golden(r.out, r.out_len, "gate/reps_varying.txt");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_repetitions_json_is_one_json_object)
{
	char *dir = scratch();
	mt_test_run_t r;
	json_object *o;

	MT(&r, dir, "repetitions", "reps_varying.jsonl", "--json");
	assert_status(&r, 1);
	mt_test_assert_golden(r.out, r.out_len, "gate/reps_varying.json");
	o = parse_json(r.out);
	mt_quiet_int_eq((int)json_object_array_length(get(o, "metrics")), 19);
	mt_quiet_int_eq((int)json_object_array_length(get(o, "varying")), 7);
	json_object_put(o);
	mt_test_run_release(&r);
}
END_TEST

/* memtrace-run -n 3 -o dir/out -- workload args..., then repetitions. */
static void run_three(mt_test_run_t *r, const char *dir, const char *name,
		      const char *arg)
{
	char *script = mt_test_path(mt_test_source_dir(), "scripts/memtrace-run");
	char *out = mt_test_path(dir, "out"), *prog = mt_test_workload(name);
	char *reps = mt_test_path(out, "allocations.repetitions.jsonl");
	char an[4096], pre[4096];
	char *argv[] = { script, "-q", "-n", "3", "-o", out, "--", prog,
			 (char *)arg, NULL };
	char *env[] = { an, pre, NULL };
	mt_test_run_t run;

	snprintf(an, sizeof(an), "MEMTRACE_ANALYZER=%s/memtrace", mt_test_build_dir());
	snprintf(pre, sizeof(pre), "MEMTRACE_PRELOAD=%s/libmtpreload.so",
		 mt_test_build_dir());
	mt_test_run(&run, argv, env);
	assert_status(&run, 0);
	mt_test_run_release(&run);
	MT(r, dir, "repetitions", reps);
	free(script);
	free(out);
	free(prog);
	free(reps);
}

START_TEST(test_repetitions_read_what_memtrace_run_writes)
{
	char *dir = mt_test_scratch();
	char *counter = mt_test_path(dir, "counter");
	mt_test_run_t r;

	run_three(&r, dir, "wl_run_steady", NULL);
	assert_status(&r, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, " 3 summarized\n"));
	mt_quiet_ptr_nonnull(strstr(r.out, "\nmemtrace repetitions: nothing varies "
			     "between the runs\n"));
	mt_test_run_release(&r);
	/* wl_run_counter makes k allocations in run k. */
	dir = mt_test_scratch();
	free(counter);
	counter = mt_test_path(dir, "counter");
	run_three(&r, dir, "wl_run_counter", counter);
	assert_status(&r, 1);
	mt_quiet(strstr(r.out, "allocations (") && strstr(r.out, "VARIES"),
		 "no variation flagged:\n%s", r.out);
	mt_test_run_release(&r);
	free(counter);
}
END_TEST

START_TEST(test_repetitions_bad_input_has_its_own_exit_status)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "repetitions", "absent.jsonl");
	assert_refused(&r, MT_EXIT_MISSING, "cannot read 'absent.jsonl'");
	mt_test_run_release(&r);
	put(dir, "empty.jsonl", "");
	MT(&r, dir, "repetitions", "empty.jsonl");
	assert_refused(&r, MT_EXIT_INVALID, "'empty.jsonl' is not a repetitions file: "
					    "it holds no row");
	mt_test_run_release(&r);
	MT(&r, dir, "repetitions", "base.jsonl");
	assert_refused(&r, MT_EXIT_INVALID, "line 1 is not a repetition row: its schema");
	mt_test_run_release(&r);
	put(dir, "row.jsonl",
	    "{\"schema\":\"tiny.profiling.allocation-repetition/v1\",\"execution_index\":1,"
	    "\"exit_code\":0,\"state\":\"workload_failed\",\"summary\":null}\n"
	    "{\"schema\":\"tiny.profiling.allocation-repetition/v1\",\"execution_index\":2,"
	    "\"exit_code\":0,\"state\":\"summary_written\",\"summary\":{\"schema\":"
	    "\"memtrace.summary/v1\",\"status\":\"complete\",\"message\":null}}\n");
	MT(&r, dir, "repetitions", "row.jsonl");
	assert_refused(&r, MT_EXIT_INVALID, "line 2 is not a repetition row: its "
					    "\"events\" is missing");
	mt_test_run_release(&r);
	put(dir, "cut.jsonl",
	    "{\"schema\":\"tiny.profiling.allocation-repetition/v1\",\"execution_index\":1,"
	    "\"exit_code\":0,\"state\":\"workload_failed\",\"summary\":null}");
	MT(&r, dir, "repetitions", "cut.jsonl");
	assert_refused(&r, MT_EXIT_INVALID, "line 1 is not a repetition row: it is cut off");
	mt_test_run_release(&r);
	MT(&r, dir, "repetitions");
	assert_refused(&r, MT_EXIT_USAGE, "missing FILE argument");
	mt_test_run_release(&r);
	MT(&r, dir, "repetitions", "reps_steady.jsonl", "--top", "3");
	assert_refused(&r, MT_EXIT_USAGE, "unknown option '--top'");
	mt_test_run_release(&r);
}
END_TEST

/* ================= every allocation failure, in process ================= */

#define MAX_SWEEP 100000

typedef int (*cmd_fn)(int, char **);

/* Run cmd with stdout and stderr to files; returns the status and the
 * stdout text (malloc'd) in *out. */
static int run_captured(cmd_fn cmd, int argc, char *const args[], char **out,
			char **err)
{
	char *argv[16];
	FILE *o = tmpfile(), *e = tmpfile();
	int saved_out = dup(1), saved_err = dup(2), status;
	long n;

	ck_assert(o && e && saved_out >= 0 && saved_err >= 0);
	ck_assert_int_lt(argc, 16);
	memcpy(argv, args, (size_t)(argc + 1) * sizeof(*argv)); /* getopt permutes argv */
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(o), 1);
	dup2(fileno(e), 2);
	status = cmd(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	for (int i = 0; i < 2; i++) {
		FILE *f = i ? e : o;
		char **dst = i ? err : out;

		n = ftell(f);
		ck_assert_int_ge(n, 0);
		*dst = malloc((size_t)n + 1);
		mt_quiet_ptr_nonnull(*dst);
		rewind(f);
		mt_quiet_uint_eq(fread(*dst, 1, (size_t)n, f), (size_t)n);
		(*dst)[n] = '\0';
		fclose(f);
	}
	return status;
}

/*
 * Make the Nth allocation fail, N = 1, 2, ..., until the command no longer
 * fails: meanwhile it must exit 4, say so, print nothing on stdout and
 * leak nothing; the last run must print what an unfailed run prints.
 */
static void sweep(cmd_fn cmd, int argc, char *const args[], int want, int sticky)
{
	char *ref_out, *ref_err, *out, *err;
	int64_t before = mt_mem_outstanding();
	uint64_t calls_ref, n;
	int rc;

	mt_mem_fail_at(0, 0);
	rc = run_captured(cmd, argc, args, &ref_out, &ref_err);
	calls_ref = mt_mem_calls();
	mt_quiet(rc == want, "the unfailed run exits %d, want %d: %s", rc,
		 want, ref_err);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_quiet_uint_gt(calls_ref, 3);
	for (n = 1; n <= MAX_SWEEP; n++) {
		uint64_t calls;

		mt_mem_fail_at(n, sticky);
		rc = run_captured(cmd, argc, args, &out, &err);
		calls = mt_mem_calls();
		mt_mem_fail_at(0, 0);
		mt_quiet(mt_mem_outstanding() == before,
			 "%s N=%" PRIu64 ": %" PRId64 " blocks leaked", args[0], n,
			 mt_mem_outstanding() - before);
		if (calls < n) {
			/* The failure never came: the unfailed result. */
			mt_quiet(rc == want && !strcmp(out, ref_out),
				 "%s N=%" PRIu64 ": exit %d, output differs",
				 args[0], n, rc);
			free(out);
			free(err);
			break;
		}
		mt_quiet(rc == MT_EXIT_NOMEM, "%s N=%" PRIu64 ": exit %d, want 4: %s",
			 args[0], n, rc, err);
		mt_quiet(out[0] == '\0', "%s N=%" PRIu64 ": stdout holds %s",
			 args[0], n, out);
		mt_quiet(strstr(err, "memtrace: out of memory\n") != NULL,
			 "%s N=%" PRIu64 ": stderr is '%s'", args[0], n, err);
		free(out);
		free(err);
	}
	mt_quiet_uint_eq(n, calls_ref + 1);
	free(ref_out);
	free(ref_err);
}

/* Run the sweep from the scratch directory (the commands take relative
 * paths); Check forks each test, so the chdir stays in it. */
#define SWEEP_IN_SCRATCH(cmd, want, ...)                                       \
	do {                                                                   \
		char *dir_ = scratch();                                        \
		char *args_[16] = { __VA_ARGS__, NULL };                       \
		int argc_ = 0;                                                 \
		while (args_[argc_])                                           \
			argc_++;                                               \
		mt_quiet_int_eq(chdir(dir_), 0);                              \
		sweep((cmd), argc_, args_, (want), 0);                         \
		sweep((cmd), argc_, args_, (want), 1);                         \
		mt_quiet_int_eq(chdir("/"), 0);                               \
	} while (0)

START_TEST(test_gate_survives_every_allocation_failure)
{
	SWEEP_IN_SCRATCH(mt_gate_cmd, 1, "gate", "new.jsonl", "--max-live", "4K",
			 "--max-allocations", "6", "--max-peak", "1K");
}
END_TEST

START_TEST(test_gate_on_a_summary_survives_every_allocation_failure)
{
	char *dir = scratch();
	mt_test_run_t r;

	MT(&r, dir, "summary", "new.jsonl", "--top", "9", "--include-zero-live",
	   "-o", "s.jsonl");
	mt_test_run_release(&r);
	mt_quiet_int_eq(chdir(dir), 0);
	{
		char *args[] = { "gate", "s.jsonl", "--max-live", "4K", NULL };

		sweep(mt_gate_cmd, 4, args, 1, 0);
		sweep(mt_gate_cmd, 4, args, 1, 1);
	}
	mt_quiet_int_eq(chdir("/"), 0);
}
END_TEST

START_TEST(test_diff_survives_every_allocation_failure)
{
	SWEEP_IN_SCRATCH(mt_diff_cmd, 1, "diff", "base.jsonl", "new.jsonl");
}
END_TEST

START_TEST(test_diff_json_survives_every_allocation_failure)
{
	SWEEP_IN_SCRATCH(mt_diff_cmd, 1, "diff", "base.jsonl", "new.jsonl", "--json");
}
END_TEST

/* A JUnit file and workflow commands: each failed run leaves no file
 * (sweep() sees stdout empty; the file is replaced whole or not at all). */
START_TEST(test_gate_ci_outputs_survive_every_allocation_failure)
{
	SWEEP_IN_SCRATCH(mt_gate_cmd, 1, "gate", "new.jsonl", "--max-live", "4K",
			 "--max-allocations", "6", "--require-complete",
			 "--junit", "gate.xml", "--format", "github");
}
END_TEST

START_TEST(test_diff_ci_outputs_survive_every_allocation_failure)
{
	SWEEP_IN_SCRATCH(mt_diff_cmd, 1, "diff", "base.jsonl", "new.jsonl",
			 "--junit", "diff.xml", "--format", "github");
}
END_TEST

START_TEST(test_repetitions_survive_every_allocation_failure)
{
	SWEEP_IN_SCRATCH(mt_repetitions_cmd, 1, "repetitions", "reps_varying.jsonl");
}
END_TEST

START_TEST(test_repetitions_json_survive_every_allocation_failure)
{
	SWEEP_IN_SCRATCH(mt_repetitions_cmd, 1, "repetitions", "reps_varying.jsonl",
			 "--json");
}
END_TEST

/* One name for a frame wherever a line names it: a
 * frame of a stripped module, with no symbol, is "0xOFFSET in MODULE" in
 * gate (from the trace and from its summary), diff, flamegraph and report
 * (which gives the module's full path), and a C++ symbol is demangled in
 * each. */
START_TEST(test_a_frame_without_a_symbol_reads_the_same_in_every_command)
{
	static const char trace[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":1,\"stack_depth\":32}\n"
		"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}\n"
		"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x7f0000001234\","
		"\"module\":\"/usr/lib/libstripped.so\",\"module_offset\":\"0x1234\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"frame\",\"frame_id\":2,\"ip\":\"0x555500001000\","
		"\"symbol\":\"_ZN3app5buildB5cxx11Ei\",\"offset\":\"0x10\",\"module\":\"/usr/bin/app\","
		"\"module_offset\":\"0x1000\"}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1,2]}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\","
		"\"size\":4096,\"fn\":\"malloc\",\"stack\":1,\"tid\":1,\"t\":10}\n"
		"{\"v\":1,\"seq\":7,\"kind\":\"trace.stop\",\"reason\":\"exit\",\"dropped\":0,\"t\":20}\n";
	mt_test_file_t f;
	mt_test_run_t r;

	mt_test_file_write(&f, trace, sizeof(trace) - 1);
	mt_test_memtrace_in(&r, f.dir, "gate", "trace.jsonl", "--max-live", "1", NULL);
	ck_assert_int_eq(r.status, 1);
	mt_quiet(strstr(r.out, "from 0x1234 in libstripped.so < app::build[abi:cxx11](int) (app)\n"),
		 "gate: %s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "summary", "trace.jsonl", "--top", "5", "-o", "s.jsonl", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "gate", "s.jsonl", "--max-live", "1", NULL);
	mt_quiet(strstr(r.out, "from 0x1234 in libstripped.so < app::build[abi:cxx11](int) (app)\n"),
		 "gate of the summary: %s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "flamegraph", "--folded", "trace.jsonl", NULL);
	ck_assert_str_eq(r.out, "app::build[abi:cxx11](int);0x1234 in libstripped.so 1\n");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "report", "trace.jsonl", NULL);
	mt_quiet(strstr(r.out, "0x1234 in /usr/lib/libstripped.so\n") &&
		 strstr(r.out, "app::build[abi:cxx11](int)+0x10 in /usr/bin/app\n"),
		 "report: %s", r.out);
	mt_test_run_release(&r);
	mt_test_file_done(&f);
}
END_TEST

Suite *mt_suite_gate(void)
{
	Suite *s = suite_create("gate");
	TCase *units = tcase_create("units");
	TCase *gate = tcase_create("gate");
	TCase *diff = tcase_create("diff");
	TCase *reps = tcase_create("repetitions");
	TCase *ci = tcase_create("ci_outputs");
	TCase *oom = tcase_create("every_allocation_failure");

	tcase_add_test(units, test_sizes_are_1024_based_with_k_m_g_suffixes);
	tcase_add_test(units, test_thresholds_compare_exactly);
	tcase_add_test(gate, test_gate_budgets_that_hold_exit_0);
	tcase_add_test(gate, test_a_frame_without_a_symbol_reads_the_same_in_every_command);
	tcase_add_test(gate, test_gate_names_each_failed_budget_with_its_limit_and_value);
	tcase_add_test(gate, test_gate_require_complete_fails_on_a_caveated_trace);
	tcase_add_test(gate, test_gate_hint_demangles_cxx_names);
	tcase_add_test(gate, test_gate_reads_a_summary_written_earlier_as_it_reads_the_trace);
	tcase_add_test(gate, test_gate_sizes_print_as_read);
	tcase_add_test(gate, test_gate_bad_input_has_its_own_exit_status);
	tcase_add_test(gate, test_gate_counts_a_sites_reallocs_as_calls);
	tcase_add_test(diff, test_diff_matches_sites_across_runs_at_different_addresses);
	tcase_add_test(diff, test_diff_json_is_one_json_object);
	tcase_add_test(diff, test_diff_threshold_is_the_growth_allowed);
	tcase_add_test(diff, test_diff_of_two_runs_of_one_program_matches_every_site);
	tcase_add_test(diff, test_diff_ranks_sites_by_their_growth_at_the_peak);
	tcase_add_test(diff, test_diff_and_gate_list_each_inlined_level_as_a_frame);
	tcase_add_test(diff, test_diff_and_gate_accept_two_runs_of_one_program);
	tcase_add_test(diff, test_diff_min_growth_is_the_bytes_allowed);
	tcase_add_test(diff, test_diff_bad_input_has_its_own_exit_status);
	tcase_add_test(diff, test_diff_counts_a_sites_reallocs_as_calls);
	tcase_add_test(ci, test_gate_junit_has_a_test_case_per_budget_and_validates);
	tcase_add_test(ci, test_gate_junit_of_budgets_that_hold_has_no_failure);
	tcase_add_test(ci, test_gate_junit_carries_the_notes_as_the_suites_output);
	tcase_add_test(ci, test_gate_junit_escapes_markup_quotes_controls_and_bad_utf8);
	tcase_add_test(ci, test_xml_escaping_leaves_no_byte_xml_cannot_hold);
	tcase_add_test(ci, test_github_escaping_follows_the_workflow_command_rules);
	tcase_add_test(ci, test_gate_junit_write_that_fails_leaves_no_file);
	tcase_add_test(ci, test_gate_format_github_prints_an_error_per_failed_budget);
	tcase_add_test(ci, test_gate_format_github_prints_a_notice_when_every_budget_holds);
	tcase_add_test(ci, test_gate_format_is_text_or_github);
	tcase_add_test(ci, test_gate_names_the_heaviest_sites_file_and_line);
	tcase_add_test(ci, test_diff_junit_has_a_test_case_per_deciding_figure);
	tcase_add_test(ci, test_diff_junit_of_runs_within_the_threshold_has_no_failure);
	tcase_add_test(ci, test_diff_format_github_names_the_site_that_grew_most);
	tcase_add_test(ci, test_diff_format_github_of_real_runs_names_file_and_line);
	tcase_add_test(ci, test_diff_json_and_format_github_are_refused_together);
	tcase_add_test(ci, test_diff_junit_write_that_fails_leaves_no_file);
	tcase_add_test(reps, test_repetitions_of_steady_runs_flag_nothing);
	tcase_add_test(reps, test_repetitions_flag_each_field_that_varies);
	tcase_add_test(reps, test_repetitions_json_is_one_json_object);
	tcase_add_test(reps, test_repetitions_read_what_memtrace_run_writes);
	tcase_add_test(reps, test_repetitions_bad_input_has_its_own_exit_status);
	tcase_set_timeout(oom, 120);
	tcase_add_test(oom, test_gate_survives_every_allocation_failure);
	tcase_add_test(oom, test_gate_on_a_summary_survives_every_allocation_failure);
	tcase_add_test(oom, test_diff_survives_every_allocation_failure);
	tcase_add_test(oom, test_diff_json_survives_every_allocation_failure);
	tcase_add_test(oom, test_gate_ci_outputs_survive_every_allocation_failure);
	tcase_add_test(oom, test_diff_ci_outputs_survive_every_allocation_failure);
	tcase_add_test(oom, test_repetitions_survive_every_allocation_failure);
	tcase_add_test(oom, test_repetitions_json_survive_every_allocation_failure);
	suite_add_tcase(s, units);
	suite_add_tcase(s, gate);
	suite_add_tcase(s, diff);
	suite_add_tcase(s, ci);
	suite_add_tcase(s, reps);
	suite_add_tcase(s, oom);
	return s;
}
