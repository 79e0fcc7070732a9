/*
 * check_suppress: the leak suppressions of report, gate and diff
 * (mt_suppress): LSan's pattern matching and file format, the default
 * list of glibc's runtime allocations, and what each command leaves out
 * of its live figures and says it left out, while the summary rows stay
 * raw.
 */
#include <stdlib.h>
#include <string.h>

#include "../analyzer/base/mt_error.h"
#include "../analyzer/gates/mt_suppress.h"
#include "mt_test.h"

/*
 * Four live sites under main: my_leak (100 bytes, and 7 freed),
 * _dl_allocate_tls in the loader (304), _IO_file_doallocate in libc (4096)
 * and cache_init (50).  The defaults leave out 4,400 bytes in 2 blocks.
 */
static const char trace_text[] =
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":100,\"ppid\":1,\"exe\":\"/bin/app\",\"argv\":[\"/bin/app\"],\"time_ns\":1,\"tool_version\":\"0.1.0\",\"stack_depth\":32}\n"
	"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}\n"
	"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1000\",\"symbol\":\"main\",\"offset\":\"0x10\",\"module\":\"/bin/app\",\"module_offset\":\"0x100\"}\n"
	"{\"v\":1,\"seq\":4,\"kind\":\"frame\",\"frame_id\":2,\"ip\":\"0x2000\",\"symbol\":\"my_leak\",\"offset\":\"0x10\",\"module\":\"/bin/app\",\"module_offset\":\"0x200\"}\n"
	"{\"v\":1,\"seq\":5,\"kind\":\"frame\",\"frame_id\":3,\"ip\":\"0x3000\",\"symbol\":\"_dl_allocate_tls\",\"offset\":\"0x10\",\"module\":\"/nonexistent/ld-linux-x86-64.so.2\",\"module_offset\":\"0x300\"}\n"
	"{\"v\":1,\"seq\":6,\"kind\":\"frame\",\"frame_id\":4,\"ip\":\"0x4000\",\"symbol\":\"_IO_file_doallocate\",\"offset\":\"0x10\",\"module\":\"/nonexistent/libc.so.6\",\"module_offset\":\"0x400\"}\n"
	"{\"v\":1,\"seq\":7,\"kind\":\"frame\",\"frame_id\":5,\"ip\":\"0x5000\",\"symbol\":\"cache_init\",\"offset\":\"0x10\",\"module\":\"/bin/app\",\"module_offset\":\"0x500\"}\n"
	"{\"v\":1,\"seq\":8,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[2,1]}\n"
	"{\"v\":1,\"seq\":9,\"kind\":\"stack\",\"stack_id\":2,\"frames\":[3,1]}\n"
	"{\"v\":1,\"seq\":10,\"kind\":\"stack\",\"stack_id\":3,\"frames\":[4,1]}\n"
	"{\"v\":1,\"seq\":11,\"kind\":\"stack\",\"stack_id\":4,\"frames\":[5,1]}\n"
	"{\"v\":1,\"seq\":12,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10000\",\"size\":100,\"fn\":\"malloc\",\"stack\":1,\"tid\":100,\"t\":1000}\n"
	"{\"v\":1,\"seq\":13,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x20000\",\"size\":304,\"fn\":\"malloc\",\"stack\":2,\"tid\":100,\"t\":2000}\n"
	"{\"v\":1,\"seq\":14,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x30000\",\"size\":4096,\"fn\":\"malloc\",\"stack\":3,\"tid\":100,\"t\":3000}\n"
	"{\"v\":1,\"seq\":15,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x40000\",\"size\":50,\"fn\":\"malloc\",\"stack\":4,\"tid\":100,\"t\":4000}\n"
	"{\"v\":1,\"seq\":16,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x90000\",\"size\":7,\"fn\":\"malloc\",\"stack\":1,\"tid\":100,\"t\":9000}\n"
	"{\"v\":1,\"seq\":17,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x90000\",\"fn\":\"free\",\"tid\":100,\"t\":9500}\n"
	"{\"v\":1,\"seq\":18,\"kind\":\"trace.stop\",\"reason\":\"exit\",\"dropped\":0,\"t\":10000}\n";

typedef struct {
	char *dir, *trace;
	mt_test_run_t r;
} fixture_t;

static void fixture_make(fixture_t *f)
{
	f->dir = mt_test_scratch();
	f->trace = mt_test_path(f->dir, "t.jsonl");
	mt_test_write(f->trace, trace_text, strlen(trace_text));
}

static void fixture_file(fixture_t *f, const char *name, const char *text)
{
	char *path = mt_test_path(f->dir, name);

	mt_test_write(path, text, strlen(text));
	free(path);
}

static void fixture_release(fixture_t *f)
{
	mt_test_run_release(&f->r);
	free(f->trace);
}

START_TEST(test_patterns_match_as_lsan_matches_a_suppression)
{
	ck_assert(mt_suppress_glob("alloc", "_dl_allocate_tls"));
	ck_assert(mt_suppress_glob("_dl_*_tls", "_dl_allocate_tls"));
	ck_assert(mt_suppress_glob("^_dl_", "_dl_allocate_tls"));
	ck_assert(!mt_suppress_glob("^allocate", "_dl_allocate_tls"));
	ck_assert(mt_suppress_glob("tls$", "_dl_allocate_tls"));
	ck_assert(!mt_suppress_glob("tls$", "_dl_allocate_tls_init"));
	ck_assert(mt_suppress_glob("^_dl_allocate_tls$", "_dl_allocate_tls"));
	ck_assert(mt_suppress_glob("*", ""));
	ck_assert(mt_suppress_glob("libc.so*", "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	ck_assert(!mt_suppress_glob("a*b*c", "acb"));
	ck_assert(mt_suppress_glob("a**c$", "xabc"));
}
END_TEST

START_TEST(test_suppression_files_take_leak_lines_and_skip_comments)
{
	static const char text[] = "# a comment\n\n  leak:cache_*  \r\n"
				   "race:other\nleak:^main$";
	mt_suppress_t s = MT_SUPPRESS_INIT;
	char why[128];

	ck_assert_int_eq(mt_suppress_parse(&s, text, strlen(text), why,
					   sizeof(why)), MT_OK);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_str_eq(s.patterns[0], "cache_*");
	ck_assert_str_eq(s.patterns[1], "^main$");
	ck_assert(mt_suppress_frame(&s, "cache_init", NULL));
	ck_assert(mt_suppress_frame(&s, NULL, "main"));
	ck_assert(!mt_suppress_frame(&s, NULL, "/lib/main"));
	ck_assert(!mt_suppress_frame(&s, "my_leak", "/bin/app"));
	ck_assert_int_eq(mt_suppress_parse(&s, "just words\n", 11, why,
					   sizeof(why)), 1);
	ck_assert_str_eq(why, "line 1 is not KIND:PATTERN (leak:PATTERN)");
	ck_assert_int_eq(mt_suppress_parse(&s, "#x\nleak:\n", 9, why,
					   sizeof(why)), 1);
	ck_assert_str_eq(why, "line 2 has an empty pattern");
	mt_suppress_release(&s);
}
END_TEST

START_TEST(test_default_list_names_glibc_runtime_allocations_only)
{
	mt_suppress_t s = MT_SUPPRESS_INIT;

	ck_assert_int_eq(mt_suppress_add_defaults(&s), MT_OK);
	ck_assert(mt_suppress_frame(&s, "_dl_allocate_tls", NULL));
	ck_assert(mt_suppress_frame(&s, "_dl_allocate_tls_init", NULL));
	ck_assert(mt_suppress_frame(&s, "allocate_dtv", NULL));
	ck_assert(mt_suppress_frame(&s, "__libc_setup_tls", NULL));
	ck_assert(mt_suppress_frame(&s, "_IO_file_doallocate", NULL));
	ck_assert(!mt_suppress_frame(&s, "malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	ck_assert(!mt_suppress_frame(&s, "main", "/bin/app"));
	mt_suppress_release(&s);
}
END_TEST

START_TEST(test_report_leaves_runtime_allocations_out_of_leaked)
{
	fixture_t f;
	char *leaked, *calls;

	fixture_make(&f);
	mt_test_memtrace_in(&f.r, f.dir, "report", "t.jsonl", NULL);
	ck_assert_int_eq(f.r.status, 0);
	ck_assert_ptr_nonnull(strstr(f.r.out,
		"  leaked                  150 B in 2 blocks, still live at the end of the trace\n"
		"                          left out: 4.3 KiB in 2 blocks from 2 sites, "
		"known runtime allocations (suppressions)\n"));
	ck_assert_ptr_nonnull(strstr(f.r.out, "  #1 100 B leaked in 1 block (66.6% of all leaked)\n"));
	ck_assert_ptr_nonnull(strstr(f.r.out, "  #2 50 B leaked in 1 block (33.3% of all leaked)\n"));
	leaked = strstr(f.r.out, "\nLeaked:");
	ck_assert_ptr_nonnull(leaked);
	calls = strstr(leaked, "\nCalls:");
	ck_assert_ptr_nonnull(calls);
	*calls = '\0'; /* the Leaked list alone: two sites */
	ck_assert_ptr_null(strstr(leaked, "#3 "));
	/* The other figures are the trace's. */
	ck_assert_ptr_nonnull(strstr(f.r.out, "  peak heap               4.5 KiB (4557 bytes)"));
	fixture_release(&f);
}
END_TEST

START_TEST(test_report_takes_a_suppressions_file_and_drops_the_defaults)
{
	fixture_t f;

	fixture_make(&f);
	fixture_file(&f, "s.supp", "# ours\nleak:cache_*\n");
	mt_test_memtrace_in(&f.r, f.dir, "report", "t.jsonl", "--suppressions",
			    "s.supp", "--no-default-suppressions", NULL);
	ck_assert_int_eq(f.r.status, 0);
	ck_assert_ptr_nonnull(strstr(f.r.out,
		"  leaked                  4.4 KiB (4500 bytes) in 3 blocks, still live at the end of the trace\n"
		"                          left out: 50 B in 1 block from 1 site, "
		"known runtime allocations (suppressions)\n"));
	fixture_release(&f);
}
END_TEST

START_TEST(test_a_bad_or_missing_suppressions_file_is_an_error)
{
	fixture_t f;

	fixture_make(&f);
	fixture_file(&f, "bad.supp", "leak:ok\nnot a suppression\n");
	mt_test_memtrace_in(&f.r, f.dir, "report", "t.jsonl", "--suppressions",
			    "bad.supp", NULL);
	ck_assert_int_eq(f.r.status, 64);
	ck_assert_ptr_nonnull(strstr(f.r.err, "memtrace: --suppressions 'bad.supp': "
					      "line 2 is not KIND:PATTERN"));
	ck_assert_str_eq(f.r.out, "");
	mt_test_run_release(&f.r);
	mt_test_memtrace_in(&f.r, f.dir, "gate", "t.jsonl", "--max-live", "1",
			    "--suppressions", "none.supp", NULL);
	ck_assert_int_eq(f.r.status, 3);
	ck_assert_ptr_nonnull(strstr(f.r.err, "cannot read 'none.supp'"));
	fixture_release(&f);
}
END_TEST

START_TEST(test_gate_max_live_leaves_runtime_allocations_out_and_says_so)
{
	fixture_t f;

	fixture_make(&f);
	mt_test_memtrace_in(&f.r, f.dir, "gate", "t.jsonl", "--max-live", "150",
			    NULL);
	ck_assert_int_eq(f.r.status, 0);
	ck_assert_ptr_nonnull(strstr(f.r.out,
		"ok   --max-live 150 (150 B): live_bytes is 150 (150 B) (left out: "
		"4.3 KiB in 2 blocks from 2 sites, known runtime allocations "
		"(suppressions))\n"));
	mt_test_run_release(&f.r);
	mt_test_memtrace_in(&f.r, f.dir, "gate", "t.jsonl", "--max-live", "150",
			    "--no-default-suppressions", NULL);
	ck_assert_int_eq(f.r.status, 1);
	ck_assert_ptr_nonnull(strstr(f.r.out, "FAIL --max-live 150 (150 B): "
					      "live_bytes is 4550 (4.4 KiB)"));
	ck_assert_ptr_null(strstr(f.r.out, "left out"));
	fixture_release(&f);
}
END_TEST

START_TEST(test_diff_says_what_it_left_out_of_each_run)
{
	fixture_t f;

	fixture_make(&f);
	mt_test_memtrace_in(&f.r, f.dir, "diff", "t.jsonl", "t.jsonl", NULL);
	ck_assert_int_eq(f.r.status, 0);
	ck_assert_ptr_nonnull(strstr(f.r.out,
		"BASE left out: 4.3 KiB in 2 blocks from 2 sites, known runtime "
		"allocations (suppressions)\n"
		"NEW left out: 4.3 KiB in 2 blocks from 2 sites, known runtime "
		"allocations (suppressions)\n"));
	ck_assert_ptr_nonnull(strstr(f.r.out, "  live_bytes                    150 B        150 B"));
	fixture_release(&f);
}
END_TEST

START_TEST(test_summary_rows_stay_raw)
{
	fixture_t f;

	fixture_make(&f);
	mt_test_memtrace_in(&f.r, f.dir, "summary", "t.jsonl", NULL);
	ck_assert_int_eq(f.r.status, 0);
	ck_assert_ptr_nonnull(strstr(f.r.out, "\"live_allocations\":4,\"live_bytes\":4550,"));
	fixture_release(&f);
}
END_TEST

Suite *mt_suite_suppress(void)
{
	Suite *s = suite_create("suppress");
	TCase *tc = tcase_create("suppress");

	tcase_add_test(tc, test_patterns_match_as_lsan_matches_a_suppression);
	tcase_add_test(tc, test_suppression_files_take_leak_lines_and_skip_comments);
	tcase_add_test(tc, test_default_list_names_glibc_runtime_allocations_only);
	tcase_add_test(tc, test_report_leaves_runtime_allocations_out_of_leaked);
	tcase_add_test(tc, test_report_takes_a_suppressions_file_and_drops_the_defaults);
	tcase_add_test(tc, test_a_bad_or_missing_suppressions_file_is_an_error);
	tcase_add_test(tc, test_gate_max_live_leaves_runtime_allocations_out_and_says_so);
	tcase_add_test(tc, test_diff_says_what_it_left_out_of_each_run);
	tcase_add_test(tc, test_summary_rows_stay_raw);
	suite_add_tcase(s, tc);
	return s;
}
