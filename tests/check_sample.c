/*
 * check_sample: byte sampling (MEMTRACE_SAMPLE, format.md 2.1), from the
 * preload's countdown and set of sampled blocks, through the estimator,
 * to the summary, report, gate and diff of a sampled trace.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/model/mt_heap.h"
#include "../preload/mt_sample.h"
#include "mt_test.h"
#include "mt_test_trace.h"

/* ---- the preload's core ---- */

/* The draw's logarithm is libm's to 4e-16 (relative; absolute near 1),
 * over the draw's whole range, 2^-53 to 1, and beyond. */
START_TEST(test_sample_ln_is_libms_log)
{
	double worst = 0;

	for (double x = 0x1p-60; x < 0x1p+10; x *= 1.0009765625) {
		double want = log(x), got = mt_sample_ln(x);
		double err = fabs(got - want) / (fabs(want) > 1 ? fabs(want) : 1);

		if (err > worst)
			worst = err;
	}
	ck_assert_double_eq(mt_sample_ln(1), 0);
	mt_quiet(worst < 4e-16, "worst relative error %g", worst);
}
END_TEST

/* The preload loads no libm into the traced program (one library less to
 * map and relocate at every process's start): cat, which needs none,
 * lists its own maps with the preload in. */
START_TEST(test_the_preload_needs_no_libm)
{
	char *dir = mt_test_scratch(), pre[4096], out[4096];
	char *argv[] = { "/bin/cat", "/proc/self/maps", NULL };
	char *env[] = { pre, out, NULL };
	mt_test_run_t r;

	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(out, sizeof(out), "MEMTRACE_OUTPUT=%s/t.jsonl", dir);
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "cat: %s", r.err);
	mt_quiet(strstr(r.out, "libmtpreload.so") != NULL, "maps: %s", r.out);
	mt_quiet(strstr(r.out, "/libm.so") == NULL, "maps: %s", r.out);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_sample_parse_takes_bytes_and_binary_suffixes)
{
	ck_assert_uint_eq(mt_sample_parse("1"), 1);
	ck_assert_uint_eq(mt_sample_parse("524288"), 524288);
	ck_assert_uint_eq(mt_sample_parse("512K"), 524288);
	ck_assert_uint_eq(mt_sample_parse("512k"), 524288);
	ck_assert_uint_eq(mt_sample_parse("2M"), 2u << 20);
	ck_assert_uint_eq(mt_sample_parse("1G"), 1u << 30);
	/* Not a positive number of bytes: 0, which the preload reports. */
	ck_assert_uint_eq(mt_sample_parse(""), 0);
	ck_assert_uint_eq(mt_sample_parse("0"), 0);
	ck_assert_uint_eq(mt_sample_parse("-4"), 0);
	ck_assert_uint_eq(mt_sample_parse("+4"), 0);
	ck_assert_uint_eq(mt_sample_parse(" 4"), 0);
	ck_assert_uint_eq(mt_sample_parse("4 "), 0);
	ck_assert_uint_eq(mt_sample_parse("4KB"), 0);
	ck_assert_uint_eq(mt_sample_parse("4T"), 0);
	ck_assert_uint_eq(mt_sample_parse("0x10"), 0);
	ck_assert_uint_eq(mt_sample_parse("99999999999999999999"), 0);
	ck_assert_uint_eq(mt_sample_parse("9999999999G"), 0);
}
END_TEST

START_TEST(test_sample_set_holds_exactly_the_marked_blocks)
{
	static char block[4096] __attribute__((aligned(16)));
	/* Far apart: another leaf, another mid node. */
	const void *far[] = { (void *)0x10000, (void *)0x7ffff0000010,
			      (void *)0x40000000, (void *)0x40010000 };

	ck_assert_int_eq(mt_sample_marked(block), 0);
	ck_assert_int_eq(mt_sample_mark(block), 0);
	ck_assert_int_eq(mt_sample_marked(block), 1);
	/* The neighbours 16 bytes either side are other blocks. */
	ck_assert_int_eq(mt_sample_marked(block + 16), 0);
	ck_assert_int_eq(mt_sample_mark(block + 32), 0);
	ck_assert_int_eq(mt_sample_marked(block + 16), 0);
	ck_assert_int_eq(mt_sample_unmark(block), 1);
	ck_assert_int_eq(mt_sample_unmark(block), 0);
	ck_assert_int_eq(mt_sample_marked(block), 0);
	ck_assert_int_eq(mt_sample_marked(block + 32), 1);
	ck_assert_int_eq(mt_sample_unmark(block + 32), 1);
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		ck_assert_int_eq(mt_sample_marked(far[i]), 0);
		ck_assert_int_eq(mt_sample_mark(far[i]), 0);
	}
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++)
		ck_assert_int_eq(mt_sample_unmark(far[i]), 1);
	/* No bit above the 47-bit address space: never sampled. */
	ck_assert_int_eq(mt_sample_mark((void *)(1ull << 47)), -1);
	ck_assert_int_eq(mt_sample_marked((void *)(1ull << 47)), 0);
	ck_assert_int_eq(mt_sample_unmark((void *)(1ull << 47)), 0);
}
END_TEST

/* A block of size s is sampled with probability 1 - exp(-s/B): counted
 * over many draws, within five standard deviations. */
START_TEST(test_sample_takes_a_block_with_probability_one_minus_exp)
{
	const size_t sizes[] = { 64, 4096, 65536 };
	const uint64_t bytes = 65536;
	const int draws = 200000;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double p = -expm1(-(double)sizes[i] / (double)bytes), sd;
		int taken = 0;

		mt_sample_init(bytes, 42 + i);
		mt_sample_seed(1234 + i);
		for (int d = 0; d < draws; d++)
			taken += mt_sample_take(sizes[i]);
		sd = sqrt(draws * p * (1 - p));
		mt_quiet(fabs(taken - draws * p) <= 5 * sd + 1,
			 "size %zu: %d of %d sampled, expected %.1f (sd %.1f)",
			 sizes[i], taken, draws, draws * p, sd);
	}
	/* A block of 40 B or more is always sampled, to within e^-40. */
	mt_sample_init(bytes, 7);
	for (int d = 0; d < 1000; d++)
		ck_assert_int_eq(mt_sample_take(40 * bytes), 1);
	mt_sample_init(0, 0);
}
END_TEST

/* The estimator, on a generated stream of known sizes: over 100 seeds the
 * mean estimate of bytes and of blocks is within 1 % of the truth (the
 * bound is some 8 standard errors of that mean: a seed's estimate has a
 * spread of about 3 %), and no single seed is off by more than 15 %. */
START_TEST(test_sample_estimates_bytes_and_blocks_without_bias)
{
	const uint64_t bytes = 65536;
	const int n = 60000, seeds = 100;
	double sum_bytes = 0, sum_blocks = 0;
	uint64_t true_bytes = 0;
	mt_heap_t h;

	mt_heap_init(&h);
	h.sample_bytes = bytes;
	for (int s = 0; s < seeds; s++) {
		uint64_t gen = 0x9e3779b97f4a7c15ull, est_bytes = 0, est_blocks = 0;

		mt_sample_init(bytes, 0);
		mt_sample_seed((uint64_t)s * 7919 + 1);
		for (int i = 0; i < n; i++) {
			size_t size;

			gen ^= gen << 13, gen ^= gen >> 7, gen ^= gen << 17;
			/* 16 B to 1 MiB, log-uniform: many small, a few big. */
			size = ((size_t)1 << (4 + gen % 17)) + (size_t)(gen >> 40) % 16;
			if (!s)
				true_bytes += size;
			if (mt_sample_take(size)) {
				est_bytes += mt_heap_weight_bytes(&h, size);
				est_blocks += mt_heap_weight_count(&h, size, (uint64_t)i);
			}
		}
		mt_quiet(fabs((double)est_bytes / (double)true_bytes - 1) < 0.15,
			 "seed %d: %llu bytes estimated, %llu true", s,
			 (unsigned long long)est_bytes, (unsigned long long)true_bytes);
		sum_bytes += (double)est_bytes;
		sum_blocks += (double)est_blocks;
	}
	mt_quiet(fabs(sum_bytes / seeds / (double)true_bytes - 1) < 0.01,
		 "mean %.0f bytes estimated, %llu true", sum_bytes / seeds,
		 (unsigned long long)true_bytes);
	mt_quiet(fabs(sum_blocks / seeds / n - 1) < 0.01,
		 "mean %.0f blocks estimated, %d true", sum_blocks / seeds, n);
	mt_heap_release(&h);
	mt_sample_init(0, 0);
}
END_TEST

START_TEST(test_sample_weights_are_the_formats)
{
	mt_heap_t h;

	mt_heap_init(&h);
	/* Not sampled: a block stands for itself. */
	ck_assert_uint_eq(mt_heap_weight_bytes(&h, 100), 100);
	ck_assert_uint_eq(mt_heap_weight_count(&h, 100, 1), 1);
	h.sample_bytes = 4096;
	/* 1 / (1 - exp(-64/4096)) = 64.5013..., times 64 = 4128.08...;
	 * 1 / (1 - exp(-1)) = 1.58198, times 4096 = 6479.8.  Blocks round
	 * down or up, up as often as the fraction says. */
	ck_assert_uint_eq(mt_heap_weight_bytes(&h, 64), 4128);
	ck_assert_uint_eq(mt_heap_weight_bytes(&h, 4096), 6480);
	{
		uint64_t n64 = 0, n4096 = 0, c;

		for (uint64_t serial = 1; serial <= 100000; serial++) {
			c = mt_heap_weight_count(&h, 64, serial);
			ck_assert(c == 64 || c == 65);
			n64 += c;
			c = mt_heap_weight_count(&h, 4096, serial);
			ck_assert(c == 1 || c == 2);
			n4096 += c;
			/* The same block weighs the same at its free. */
			ck_assert_uint_eq(mt_heap_weight_count(&h, 4096, serial), c);
		}
		mt_quiet(fabs((double)n64 / 100000 - 64.5013) < 0.01, "%llu", (unsigned long long)n64);
		mt_quiet(fabs((double)n4096 / 100000 - 1.58198) < 0.01, "%llu", (unsigned long long)n4096);
	}
	/* Far above the mean: itself. */
	ck_assert_uint_eq(mt_heap_weight_count(&h, 1u << 30, 1), 1);
	ck_assert_uint_eq(mt_heap_weight_bytes(&h, 1u << 30), 1u << 30);
	ck_assert_uint_eq(mt_heap_weight_bytes(&h, UINT64_MAX), UINT64_MAX);
	/* A block of no bytes is one block of no bytes. */
	ck_assert_uint_eq(mt_heap_weight_count(&h, 0, 1), 1);
	ck_assert_uint_eq(mt_heap_weight_bytes(&h, 0), 0);
	mt_heap_release(&h);
}
END_TEST

/* ---- sampled traces from the preload ---- */

typedef struct {
	char *dir, *trace;
	json_object *summary;
	mt_test_run_t run;
} traced_t;

/* Run wl_sample SCALE under the preload with extra ("NAME=value" or
 * NULL), check that it ran as bare, and summarize its trace. */
static void trace_sample(traced_t *t, const char *scale, const char *extra)
{
	char *prog = mt_test_workload("wl_sample");
	char *argv[] = { prog, (char *)scale, NULL };
	char *mt = mt_test_memtrace();
	char *sargv[] = { mt, "summary", NULL, NULL };
	mt_test_run_t s;

	t->dir = mt_test_scratch();
	t->trace = mt_test_path(t->dir, "t.jsonl.zst");
	mt_test_run_traced(&t->run, argv, t->trace, extra);
	mt_quiet_int_eq(t->run.status, 0);
	mt_quiet(!strcmp(t->run.out, "done\n"), "wl_sample printed '%s'", t->run.out);
	sargv[2] = t->trace;
	mt_test_run(&s, sargv, NULL);
	mt_quiet_int_eq(s.status, 0);
	t->summary = json_tokener_parse(s.out);
	mt_quiet(t->summary != NULL, "not a summary: %s", s.out);
	mt_test_run_release(&s);
	free(mt);
	free(prog);
}

static void traced_release(traced_t *t)
{
	json_object_put(t->summary);
	mt_test_run_release(&t->run);
	free(t->trace);
}

static int64_t field(json_object *o, const char *key)
{
	json_object *v;

	mt_quiet(json_object_object_get_ex(o, key, &v), "no %s", key);
	return json_object_get_int64(v);
}

START_TEST(test_sampling_is_off_by_default)
{
	traced_t t, empty;
	json_object *start;

	trace_sample(&t, "1", NULL);
	trace_sample(&empty, "1", "MEMTRACE_SAMPLE=");
	start = mt_test_trace_start(t.trace);
	ck_assert(!json_object_object_get_ex(start, "sample_bytes", NULL));
	ck_assert(!json_object_object_get_ex(t.summary, "sample_bytes", NULL));
	/* Every one of the 20,000 mallocs, 5,000 reallocs and 20,000 frees. */
	ck_assert_int_eq(field(t.summary, "allocations"), 20000);
	ck_assert_int_eq(field(empty.summary, "allocations"), 20000);
	ck_assert_int_eq(field(empty.summary, "frees"), field(t.summary, "frees"));
	ck_assert_int_eq(field(empty.summary, "bytes_allocated"),
			 field(t.summary, "bytes_allocated"));
	ck_assert_str_eq(t.run.err, "");
	json_object_put(start);
	traced_release(&t);
	traced_release(&empty);
}
END_TEST

/* With a mean of one byte every block of 64 bytes or more is sampled
 * (but with probability e^-64) and weighs exactly itself: the figures are
 * those of a full trace, through mallocs, reallocs and frees. */
START_TEST(test_sampling_every_byte_records_what_full_tracing_records)
{
	static const char *const same[] = {
		"events", "allocations", "frees", "resizes", "remaps",
		"unknown_frees", "bytes_allocated", "bytes_freed",
		"live_allocations", "live_bytes", "peak_live_bytes",
		"peak_live_allocations",
	};
	traced_t full, sampled;
	json_object *start;

	trace_sample(&full, "1", NULL);
	trace_sample(&sampled, "1", "MEMTRACE_SAMPLE=1");
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		mt_quiet(field(full.summary, same[i]) == field(sampled.summary, same[i]),
			 "%s: %lld in full, %lld sampled", same[i],
			 (long long)field(full.summary, same[i]),
			 (long long)field(sampled.summary, same[i]));
	ck_assert_int_eq(field(sampled.summary, "sample_bytes"), 1);
	/* Which blocks were temporary is not known of a sampled trace. */
	ck_assert_int_eq(field(sampled.summary, "temporary_allocations"), 0);
	start = mt_test_trace_start(sampled.trace);
	ck_assert_int_eq(field(start, "sample_bytes"), 1);
	json_object_put(start);
	traced_release(&full);
	traced_release(&sampled);
}
END_TEST

/* At a mean of 1 KiB, of a stream of 160,000 mallocs and 40,000
 * reallocs (some 3.6 GB), the blocks of 40 KiB or more always sampled,
 * most of the smaller ones too: the estimates land within 5 % of the
 * full trace's (the spread of the noisiest, the count of reallocs, is
 * about 1 %), and every free the trace holds is of a block it holds. */
START_TEST(test_sampled_trace_estimates_the_full_traces_figures)
{
	static const char *const near[] = {
		"allocations", "resizes", "remaps", "bytes_allocated",
		"bytes_freed", "live_bytes", "peak_live_bytes",
	};
	double frees, reallocs, est;
	traced_t full, sampled;
	char *status;

	trace_sample(&full, "8", NULL);
	trace_sample(&sampled, "8", "MEMTRACE_SAMPLE=1K");
	status = mt_test_check_status(sampled.trace);
	ck_assert_str_eq(status, "complete");
	free(status);
	ck_assert_int_eq(field(sampled.summary, "sample_bytes"), 1024);
	ck_assert_int_eq(field(sampled.summary, "unknown_frees"), 0);
	ck_assert_int_eq(field(sampled.summary, "overlapping_allocs"), 0);
	mt_quiet(field(sampled.summary, "events") < field(full.summary, "events") * 3 / 4,
		 "sampling kept %lld of %lld events",
		 (long long)field(sampled.summary, "events"),
		 (long long)field(full.summary, "events"));
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		double f = (double)field(full.summary, near[i]);
		double s = (double)field(sampled.summary, near[i]);

		mt_quiet(fabs(s / f - 1) < 0.05, "%s: %.0f in full, %.0f estimated",
			 near[i], f, s);
	}
	/* A realloc whose new block is not sampled ends a sampled block
	 * with a free: frees estimates frees plus some of the reallocs. */
	frees = (double)field(full.summary, "frees");
	reallocs = (double)(field(full.summary, "resizes") + field(full.summary, "remaps"));
	est = (double)field(sampled.summary, "frees");
	mt_quiet(est > 0.95 * frees && est < 1.05 * (frees + reallocs),
		 "frees: %.0f in full (and %.0f reallocs), %.0f estimated", frees, reallocs, est);
	traced_release(&full);
	traced_release(&sampled);
}
END_TEST

START_TEST(test_a_bad_sample_value_warns_once_and_records_everything)
{
	traced_t t;
	json_object *start;

	trace_sample(&t, "1", "MEMTRACE_SAMPLE=lots");
	ck_assert_str_eq(t.run.err, "memtrace: MEMTRACE_SAMPLE is not a number of bytes: "
				    "'lots'; every allocation is recorded\n");
	start = mt_test_trace_start(t.trace);
	ck_assert(!json_object_object_get_ex(start, "sample_bytes", NULL));
	ck_assert_int_eq(field(t.summary, "allocations"), 20000);
	json_object_put(start);
	traced_release(&t);
}
END_TEST

/* Threads free each other's blocks, and forked children and exec'd images
 * write traces of their own: every trace is complete, sampled at the same
 * mean, and frees only blocks it holds. */
START_TEST(test_sampled_threads_and_forks_write_complete_traces)
{
	const char *const names[] = { "wl_threads", "wl_fork" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "trace.jsonl");
		char *prog = mt_test_workload(names[i]);
		char *argv[] = { prog, NULL };
		char **files;
		size_t n, complete;
		mt_test_run_t r;

		mt_test_run_traced(&r, argv, trace, "MEMTRACE_SAMPLE=64");
		mt_quiet_int_eq(r.status, 0);
		complete = mt_test_assert_traces_complete(dir);
		files = mt_test_traces(dir, &n);
		mt_quiet(n == complete && n >= (i ? 4u : 1u), "%s: %zu traces", names[i], n);
		for (size_t k = 0; k < n; k++) {
			char *path = mt_test_path(dir, files[k]);
			json_object *start = mt_test_trace_start(path);
			char *mt = mt_test_memtrace();
			char *sargv[] = { mt, "summary", "--top", "0", path, NULL };
			mt_test_run_t s;
			json_object *sum;

			ck_assert_int_eq(field(start, "sample_bytes"), 64);
			mt_test_run(&s, sargv, NULL);
			sum = json_tokener_parse(s.out);
			mt_quiet(sum != NULL, "%s: %s", files[k], s.out);
			ck_assert_int_eq(field(sum, "unknown_frees"), 0);
			json_object_put(sum);
			json_object_put(start);
			mt_test_run_release(&s);
			free(mt);
			free(path);
		}
		mt_test_traces_release(files, n);
		mt_test_run_release(&r);
		free(prog);
		free(trace);
	}
}
END_TEST

/* ---- what people read of a sampled trace ---- */

/* A sampled trace written by hand: two blocks of 64 bytes at a mean of
 * 4096, one freed; each stands for 4128 bytes and 64.5 blocks, 64 or 65
 * by the block's serial (the first two serials give 64). */
static const char sampled_trace[] =
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"stack_depth\":32,\"sample_bytes\":4096}\n"
	"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}\n"
	"{\"v\":1,\"seq\":3,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1000\",\"size\":64,\"fn\":\"malloc\",\"tid\":1,\"t\":1000}\n"
	"{\"v\":1,\"seq\":4,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x2000\",\"size\":64,\"fn\":\"malloc\",\"tid\":1,\"t\":2000}\n"
	"{\"v\":1,\"seq\":5,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x1000\",\"tid\":1,\"t\":3000}\n"
	"{\"v\":1,\"seq\":6,\"kind\":\"trace.stop\",\"reason\":\"exit\",\"t\":4000}\n";

START_TEST(test_sampled_summary_scales_and_gives_its_mean_and_standard_errors)
{
	mt_test_file_t f;
	mt_test_run_t r;

	mt_test_file_write(&f, sampled_trace, sizeof(sampled_trace) - 1);
	mt_test_memtrace_in(&r, f.dir, "summary", "trace.jsonl", "--top", "0", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out,
		"{\"schema\":\"memtrace.summary/v1\",\"status\":\"complete\",\"message\":null,"
		"\"caveats\":[],\"format_version\":1,\"events\":6,\"threads\":1,"
		"\"allocations\":128,\"frees\":64,\"resizes\":0,\"remaps\":0,"
		"\"failed_allocations\":0,\"unknown_frees\":0,\"overlapping_allocs\":0,"
		"\"malformed_events\":0,\"bytes_allocated\":8256,\"bytes_freed\":4128,"
		"\"live_allocations\":64,\"live_bytes\":4128,\"peak_live_bytes\":8256,"
		"\"peak_live_allocations\":128,\"peak_seq\":4,\"temporary_allocations\":0,"
		"\"duration_ns\":4000,\"by_allocator\":[{\"allocator_id\":0,\"name\":\"libc\","
		"\"allocations\":128,\"frees\":64,\"resizes\":0,\"remaps\":0,"
		"\"live_bytes\":4128,\"peak_live_bytes\":8256}],\"sample_bytes\":4096,"
		"\"allocations_stderr\":91,\"frees_stderr\":64,\"resizes_stderr\":0,"
		"\"remaps_stderr\":0,\"bytes_allocated_stderr\":5793,"
		"\"bytes_freed_stderr\":4096,\"live_allocations_stderr\":64,"
		"\"live_bytes_stderr\":4096,\"peak_live_bytes_stderr\":5793,"
		"\"peak_live_allocations_stderr\":91}\n");
	mt_test_run_release(&r);
	mt_test_file_done(&f);
}
END_TEST

/* The text of file name in dir (the test fails without one). */
static char *read_in(const char *dir, const char *name)
{
	char *path = mt_test_path(dir, name), *text = mt_test_read(path, NULL);

	mt_quiet(text != NULL, "no %s", path);
	free(path);
	return text;
}

/*
 * The standard errors of sampled_trace, by hand: at a mean of 4096 a
 * block of 64 bytes is recorded with p = 1 - exp(-1/64) = 0.0155036, so
 * each recorded one adds 64^2 (1 - p) / p^2 = 16776874.7 to a byte
 * figure's variance and (1 - p) / p^2 = 4095.92 to a count's.  Two
 * blocks were allocated (both live at the peak), one freed, one left:
 * sqrt(2 * 16776874.7) = 5792.6 and sqrt(2 * 4095.92) = 90.5 for the
 * allocated and the peak, sqrt(16776874.7) = 4096.0 and sqrt(4095.92) =
 * 64.0 for the freed and the live.  The test computes the same apart,
 * with libm, and compares each field.
 */
START_TEST(test_a_sampled_summarys_standard_errors_are_its_estimators)
{
	double p = -expm1(-64.0 / 4096.0);
	double vb = 64.0 * 64.0 * (1 - p) / (p * p), vc = (1 - p) / (p * p);
	const struct {
		const char *field;
		double var;
		long long by_hand;
	} want[] = {
		{ "allocations_stderr", 2 * vc, 91 },
		{ "frees_stderr", vc, 64 },
		{ "resizes_stderr", 0, 0 },
		{ "remaps_stderr", 0, 0 },
		{ "bytes_allocated_stderr", 2 * vb, 5793 },
		{ "bytes_freed_stderr", vb, 4096 },
		{ "live_allocations_stderr", vc, 64 },
		{ "live_bytes_stderr", vb, 4096 },
		{ "peak_live_bytes_stderr", 2 * vb, 5793 },
		{ "peak_live_allocations_stderr", 2 * vc, 91 },
	};
	mt_test_file_t f;
	mt_test_run_t r;
	json_object *row;

	mt_test_file_write(&f, sampled_trace, sizeof(sampled_trace) - 1);
	mt_test_memtrace_in(&r, f.dir, "summary", "trace.jsonl", "--top", "0", NULL);
	ck_assert_int_eq(r.status, 0);
	row = json_tokener_parse(r.out);
	ck_assert_ptr_nonnull(row);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		mt_quiet(field(row, want[i].field) == llround(sqrt(want[i].var)) &&
			 field(row, want[i].field) == want[i].by_hand,
			 "%s: %lld, want %lld (%.3f)", want[i].field,
			 (long long)field(row, want[i].field), want[i].by_hand,
			 sqrt(want[i].var));
	}
	json_object_put(row);
	mt_test_run_release(&r);
	mt_test_file_done(&f);
}
END_TEST

/* A peak that a program's own allocator (recorded whole) makes keeps
 * the variance of its moment: two sampled blocks of 64 bytes make a
 * first peak (8256 bytes, +- 5793), one is freed, then a pool block of
 * 5000 bytes makes a higher one, of which one sampled block is an
 * estimate (+- 4096). */
START_TEST(test_a_peak_a_pool_makes_has_the_standard_error_of_its_moment)
{
	static const char trace[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"sample_bytes\":4096}\n"
		"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n"
		"{\"v\":1,\"seq\":3,\"kind\":\"allocator\",\"allocator_id\":1,\"name\":\"pool\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1000\",\"size\":64,\"fn\":\"malloc\"}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x2000\",\"size\":64,\"fn\":\"malloc\"}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x1000\"}\n"
		"{\"v\":1,\"seq\":7,\"kind\":\"alloc\",\"allocator_id\":1,\"ptr\":\"0x9000\",\"size\":5000,\"fn\":\"api\"}\n"
		"{\"v\":1,\"seq\":8,\"kind\":\"trace.stop\",\"reason\":\"exit\"}\n";
	mt_test_file_t f;
	mt_test_run_t r;
	json_object *row;

	mt_test_file_write(&f, trace, sizeof(trace) - 1);
	mt_test_memtrace_in(&r, f.dir, "summary", "trace.jsonl", "--top", "0", NULL);
	ck_assert_int_eq(r.status, 0);
	row = json_tokener_parse(r.out);
	ck_assert_ptr_nonnull(row);
	ck_assert_int_eq(field(row, "peak_live_bytes"), 4128 + 5000);
	ck_assert_int_eq(field(row, "peak_seq"), 7);
	ck_assert_int_eq(field(row, "peak_live_bytes_stderr"), 4096);
	ck_assert_int_eq(field(row, "live_bytes_stderr"), 4096);
	ck_assert_int_eq(field(row, "bytes_allocated_stderr"), 5793);
	json_object_put(row);
	mt_test_run_release(&r);
	mt_test_file_done(&f);
}
END_TEST

/* The same trace without sample_bytes is a full one: its summary has
 * no standard error, and no view prints one. */
START_TEST(test_an_unsampled_trace_has_no_standard_errors)
{
	const char *start = strstr(sampled_trace, ",\"sample_bytes\":4096");
	mt_test_file_t f;
	mt_test_run_t r;
	char *full = NULL;

	ck_assert(asprintf(&full, "%.*s%s", (int)(start - sampled_trace), sampled_trace,
			   start + strlen(",\"sample_bytes\":4096")) > 0);
	mt_test_file_write(&f, full, strlen(full));
	mt_test_memtrace_in(&r, f.dir, "summary", "trace.jsonl", "--top", "0", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(!strstr(r.out, "stderr") && !strstr(r.out, "sample_bytes") &&
		 strstr(r.out, ",\"peak_live_bytes\":128}]}\n"), "summary: %s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "report", "trace.jsonl", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(!strstr(r.out, "+-"), "report: %s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "top", "trace.jsonl", "--once", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(!strstr(r.out, "+-"), "top: %s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "plot", "trace.jsonl", "-o", "plot.svg", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "html", "trace.jsonl", "-o", "page.html", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	{
		char *svg = read_in(f.dir, "plot.svg"), *page = read_in(f.dir, "page.html");

		mt_quiet(!strstr(svg, "+-"), "plot: %.3000s", svg);
		mt_quiet(!strstr(page, "allocations_stderr\":"), "html: %.3000s", page);
		free(svg);
		free(page);
	}
	mt_test_file_done(&f);
	free(full);
}
END_TEST

START_TEST(test_report_gate_plot_html_and_diff_say_a_sampled_traces_figures_are_estimates)
{
	mt_test_file_t f;
	mt_test_run_t r;

	mt_test_file_write(&f, sampled_trace, sizeof(sampled_trace) - 1);
	mt_test_memtrace_in(&r, f.dir, "report", "trace.jsonl", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(strstr(r.out, "\nSampled: one allocation recorded per 4.0 KiB allocated, "
			       "on average (MEMTRACE_SAMPLE=4096)\n"
			       "  Every count and size below is an estimate") != NULL,
		 "report: %s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "gate", "trace.jsonl", "--max-live", "1M", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(strstr(r.out, "note: the trace is sampled (one allocation recorded per "
			       "4.0 KiB allocated, on average): its figures are estimates\n") != NULL,
		 "gate: %s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "plot", "trace.jsonl", "-o", "plot.svg", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	{
		char *svg_path = mt_test_path(f.dir, "plot.svg"), *svg = mt_test_read(svg_path, NULL);

		mt_quiet(svg && strstr(svg, "; estimates, one allocation sampled per 4.0 KiB</text>"),
			 "plot: %s", svg ? svg : "(no file)");
		free(svg);
		free(svg_path);
	}
	mt_test_memtrace_in(&r, f.dir, "html", "trace.jsonl", "-o", "page.html", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	{
		char *page_path = mt_test_path(f.dir, "page.html"), *page = mt_test_read(page_path, NULL);

		mt_quiet(page && strstr(page, ",\"sample_bytes\":4096,") &&
			 strstr(page, "every count and size below is an estimate"),
			 "html: %s", page ? page : "(no file)");
		free(page);
		free(page_path);
	}
	mt_test_memtrace_in(&r, f.dir, "diff", "trace.jsonl", "trace.jsonl", NULL);
	mt_quiet(strstr(r.out, "note: BASE is sampled (") && strstr(r.out, "note: NEW is sampled ("),
		 "diff: %s", r.out);
	mt_test_run_release(&r);
	mt_test_file_done(&f);
}
END_TEST

/* Every view that shows sampled_trace's totals follows each with its
 * standard error, the summary's (5793 bytes is 5.7 KiB). */
START_TEST(test_every_view_gives_a_sampled_totals_standard_error)
{
	mt_test_file_t f;
	mt_test_run_t r;
	char *text;

	mt_test_file_write(&f, sampled_trace, sizeof(sampled_trace) - 1);
	mt_test_memtrace_in(&r, f.dir, "report", "trace.jsonl", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(strstr(r.out, "\n  allocations             128 +- 91\n") &&
		 strstr(r.out, "\n  frees                   64 +- 64\n") &&
		 strstr(r.out, "\n  bytes allocated         8.1 KiB (8256 bytes) +- 5.7 KiB\n") &&
		 strstr(r.out, "\n  peak heap               8.1 KiB (8256 bytes) +- 5.7 KiB, "
			       "first reached at seq 4\n") &&
		 strstr(r.out, "\n  peak live blocks        128 +- 91\n") &&
		 strstr(r.out, "\n  leaked                  4.0 KiB (4128 bytes) +- 4.0 KiB "
			       "in 64 +- 64 blocks,"),
		 "report: %.3000s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "top", "trace.jsonl", "--once", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(strstr(r.out, "\n  live        4.0 KiB (4128 bytes) +- 4.0 KiB in 64 +- 64 blocks\n") &&
		 strstr(r.out, "\n  peak        8.1 KiB (8256 bytes) +- 5.7 KiB in 128 +- 91 blocks\n") &&
		 strstr(r.out, "\n  allocated   8.1 KiB (8256 bytes) +- 5.7 KiB in 128 +- 91 "
			       "allocations, 64 +- 64 frees\n"),
		 "top: %.3000s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, f.dir, "plot", "trace.jsonl", "-o", "plot.svg", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	text = read_in(f.dir, "plot.svg");
	mt_quiet(strstr(text, ">peak 8.1 KiB +- 5.7 KiB (seq 4), 4.0 KiB +- 4.0 KiB live at "
			      "the end; 128 +- 91 allocations, 64 +- 64 frees in "),
		 "plot: %.3000s", text);
	free(text);
	/* The page's totals are the summary's, standard errors included;
	 * its script prints each after its figure (the browser tests see
	 * the page drawn). */
	mt_test_memtrace_in(&r, f.dir, "html", "trace.jsonl", "-o", "page.html", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	text = read_in(f.dir, "page.html");
	mt_quiet(strstr(text, ",\"sample_bytes\":4096,\"allocations_stderr\":91,"
			      "\"frees_stderr\":64,\"resizes_stderr\":0,\"remaps_stderr\":0,"
			      "\"bytes_allocated_stderr\":5793,\"bytes_freed_stderr\":4096,"
			      "\"live_allocations_stderr\":64,\"live_bytes_stderr\":4096,"
			      "\"peak_live_bytes_stderr\":5793,"
			      "\"peak_live_allocations_stderr\":91}") &&
		 strstr(text, "' +- '"),
		 "html: %.3000s", text);
	free(text);
	mt_test_file_done(&f);
}
END_TEST

/* A tree of sampled processes and memtrace-run's line of a sampled run
 * give the standard errors of their allocations and peak: two processes
 * sampled independently, so their variances add (two of sampled_trace:
 * 128 +- 91 allocations and a peak of 8.1 KiB +- 5.7 KiB each). */
START_TEST(test_a_sampled_tree_and_runs_line_give_their_standard_errors)
{
	mt_test_file_t f;
	mt_test_run_t r;
	char *copy, *dir = mt_test_scratch(), *demo = mt_test_workload("wl_demo");
	const char *run[] = { "run", "--sample", "4K", "-o", "out", "--", demo, NULL };

	mt_test_file_write(&f, sampled_trace, sizeof(sampled_trace) - 1);
	copy = mt_test_path(f.dir, "child.jsonl");
	mt_test_write(copy, sampled_trace, sizeof(sampled_trace) - 1);
	mt_test_memtrace_in(&r, f.dir, "tree", "trace.jsonl", "child.jsonl", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(strstr(r.out, "2 processes: 256 +- 128 allocations, peak 16.1 KiB +- 8.0 KiB, "
			       "complete") &&
		 strstr(r.out, ": 128 +- 91 allocations, peak 8.1 KiB +- 5.7 KiB, complete"),
		 "tree: %.3000s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in_argv(&r, dir, NULL, run);
	ck_assert_int_eq(r.status, 0);
	mt_quiet(strstr(r.err, "run 1/1: exit 0, ") && strstr(r.err, " allocations, peak ") &&
		 strstr(r.err, " +- "), "run: %.3000s", r.err);
	mt_test_run_release(&r);
	free(copy);
	free(demo);
	mt_test_file_done(&f);
}
END_TEST

Suite *mt_suite_sample(void)
{
	Suite *s = suite_create("sample");
	TCase *core = tcase_create("core"), *preload = tcase_create("preload"),
	      *read = tcase_create("read");

	tcase_add_test(core, test_sample_ln_is_libms_log);
	tcase_add_test(core, test_the_preload_needs_no_libm);
	tcase_add_test(core, test_sample_parse_takes_bytes_and_binary_suffixes);
	tcase_add_test(core, test_sample_set_holds_exactly_the_marked_blocks);
	tcase_add_test(core, test_sample_takes_a_block_with_probability_one_minus_exp);
	tcase_add_test(core, test_sample_estimates_bytes_and_blocks_without_bias);
	tcase_add_test(core, test_sample_weights_are_the_formats);
	suite_add_tcase(s, core);
	tcase_add_test(preload, test_sampling_is_off_by_default);
	tcase_add_test(preload, test_sampling_every_byte_records_what_full_tracing_records);
	tcase_add_test(preload, test_sampled_trace_estimates_the_full_traces_figures);
	tcase_add_test(preload, test_a_bad_sample_value_warns_once_and_records_everything);
	tcase_add_test(preload, test_sampled_threads_and_forks_write_complete_traces);
	suite_add_tcase(s, preload);
	tcase_add_test(read, test_sampled_summary_scales_and_gives_its_mean_and_standard_errors);
	tcase_add_test(read, test_a_sampled_summarys_standard_errors_are_its_estimators);
	tcase_add_test(read, test_an_unsampled_trace_has_no_standard_errors);
	tcase_add_test(read, test_a_peak_a_pool_makes_has_the_standard_error_of_its_moment);
	tcase_add_test(read, test_every_view_gives_a_sampled_totals_standard_error);
	tcase_add_test(read, test_a_sampled_tree_and_runs_line_give_their_standard_errors);
	tcase_add_test(read, test_report_gate_plot_html_and_diff_say_a_sampled_traces_figures_are_estimates);
	suite_add_tcase(s, read);
	return s;
}
