/*
 * check_export: `memtrace export FORMAT TRACE`: folded is the flame
 * graph's output byte for byte; speedscope's and DHAT's JSON, parsed back
 * with json-c, have the fields their readers require and totals that
 * agree with the summary's, on the fixtures and on a real workload's
 * compressed trace; pprof's profile is read back by `go tool pprof`
 * (Debian's golang-go, which `make deps` installs) with the summary's
 * totals, and its bytes on a tiny fixture are a golden file worked out by
 * hand; the encoder (mt_protobuf) writes the wire format's own examples;
 * usage errors and --help.  The browser tests (tests/browser/, `make
 * browser-check`) open the speedscope and DHAT files in their viewers.
 */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>
#include <zlib.h>

#include "mt_test.h"
#include "mt_test_trace.h"
#include "../analyzer/base/mt_buf.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/export/mt_protobuf.h"

/* The summary line of the trace at path, parsed. */
static json_object *summary_of(const char *path)
{
	mt_test_run_t r;
	json_object *o;
	char *nl;

	mt_test_memtrace_in(&r, NULL, "summary", path, "--top", "0", NULL);
	ck_assert_msg(r.status == 0, "summary %s: %d: %s", path, r.status, r.err);
	if ((nl = strchr(r.out, '\n')))
		*nl = '\0';
	o = json_tokener_parse(r.out);
	ck_assert_msg(o != NULL, "summary is no JSON: %s", r.out);
	mt_test_run_release(&r);
	return o;
}

/* `memtrace export fmt path`, exit 0, parsed. */
static json_object *export_of(const char *fmt, const char *path)
{
	mt_test_run_t r;
	json_object *o;

	mt_test_memtrace_in(&r, NULL, "export", fmt, path, NULL);
	ck_assert_msg(r.status == 0, "export %s %s: %d: %s", fmt, path,
		      r.status, r.err);
	ck_assert_msg(r.out_len && r.out[r.out_len - 1] == '\n',
		      "export %s: no final newline", fmt);
	o = json_tokener_parse(r.out);
	ck_assert_msg(o != NULL, "export %s is no JSON: %.300s", fmt, r.out);
	mt_test_run_release(&r);
	return o;
}

static json_object *member_of_type(json_object *o, const char *key,
				   json_type type)
{
	json_object *m = mt_test_json_member(o, key);

	ck_assert_msg(json_object_is_type(m, type), "'%s' is a %s, not a %s",
		      key, json_type_to_name(json_object_get_type(m)),
		      json_type_to_name(type));
	return m;
}

/* An array of integers in [lo, hi), not empty. */
static void assert_indices(json_object *a, size_t lo, size_t hi)
{
	size_t n = json_object_array_length(a);

	mt_quiet(n > 0, "an empty stack");
	for (size_t i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(a, i);

		mt_quiet(json_object_is_type(x, json_type_int),
			 "a frame index is no integer");
		mt_quiet(json_object_get_int64(x) >= (int64_t)lo &&
			 json_object_get_int64(x) < (int64_t)hi,
			 "frame index %jd out of [%zu, %zu)",
			 (intmax_t)json_object_get_int64(x), lo, hi);
	}
}

/* speedscope's profiles, in the document's order, and their units. */
static const char *const speedscope_profiles[][2] = {
	{ "bytes live at the peak", "bytes" },
	{ "bytes leaked", "bytes" },
	{ "bytes allocated", "bytes" },
	{ "allocation calls", "none" },
};
#define SPEEDSCOPE_PROFILES 4

/*
 * speedscope's schema (file-format-schema.json): $schema, shared.frames
 * (each with a string name, optional string file and integer line) and
 * profiles, each sampled with name, unit, startValue, endValue, samples
 * and weights of one length.  Returns the profiles' weight sums in
 * speedscope_profiles' order.
 */
static void check_speedscope(json_object *d, uint64_t sums[SPEEDSCOPE_PROFILES])
{
	json_object *frames, *profiles;
	size_t nframes;

	ck_assert_str_eq(mt_test_json_str(d, "$schema"),
			 "https://www.speedscope.app/file-format-schema.json");
	frames = member_of_type(member_of_type(d, "shared", json_type_object),
				"frames", json_type_array);
	nframes = json_object_array_length(frames);
	for (size_t i = 0; i < nframes; i++) {
		json_object *f = json_object_array_get_idx(frames, i), *m;

		mt_quiet(json_object_is_type(f, json_type_object), "frame %zu", i);
		member_of_type(f, "name", json_type_string);
		if (json_object_object_get_ex(f, "file", &m))
			mt_quiet(json_object_is_type(m, json_type_string), "file");
		if (json_object_object_get_ex(f, "line", &m))
			mt_quiet(json_object_is_type(m, json_type_int), "line");
	}
	profiles = member_of_type(d, "profiles", json_type_array);
	ck_assert_uint_eq(json_object_array_length(profiles), SPEEDSCOPE_PROFILES);
	for (size_t p = 0; p < SPEEDSCOPE_PROFILES; p++) {
		json_object *prof = json_object_array_get_idx(profiles, p);
		json_object *samples, *weights;
		uint64_t sum = 0;

		ck_assert_str_eq(mt_test_json_str(prof, "type"), "sampled");
		ck_assert_str_eq(mt_test_json_str(prof, "name"),
				 speedscope_profiles[p][0]);
		ck_assert_str_eq(mt_test_json_str(prof, "unit"),
				 speedscope_profiles[p][1]);
		ck_assert_int_eq(mt_test_json_i64(prof, "startValue"), 0);
		samples = member_of_type(prof, "samples", json_type_array);
		weights = member_of_type(prof, "weights", json_type_array);
		ck_assert_uint_eq(json_object_array_length(samples),
				  json_object_array_length(weights));
		for (size_t i = 0; i < json_object_array_length(samples); i++) {
			json_object *w = json_object_array_get_idx(weights, i);

			assert_indices(json_object_array_get_idx(samples, i), 0,
				       nframes);
			mt_quiet(json_object_get_int64(w) > 0, "a weight of 0");
			sum += (uint64_t)json_object_get_int64(w);
		}
		ck_assert_uint_eq(mt_test_json_u64(prof, "endValue"), sum);
		sums[p] = sum;
	}
	ck_assert_int_eq(mt_test_json_i64(d, "activeProfileIndex"), 0);
	member_of_type(d, "name", json_type_string);
	ck_assert(!strncmp(mt_test_json_str(d, "exporter"), "memtrace ", 9));
}

/* speedscope's profiles sum to the summary's peak, leaked (live at the
 * end), allocated bytes and calls. */
static void assert_speedscope_totals(json_object *sum,
				     const uint64_t w[SPEEDSCOPE_PROFILES])
{
	ck_assert_uint_eq(w[0], mt_test_json_u64(sum, "peak_live_bytes"));
	ck_assert_uint_eq(w[1], mt_test_json_u64(sum, "live_bytes"));
	ck_assert_uint_eq(w[2], mt_test_json_u64(sum, "bytes_allocated"));
	ck_assert_uint_eq(w[3], mt_test_json_u64(sum, "allocations") +
					mt_test_json_u64(sum, "resizes") +
					mt_test_json_u64(sum, "remaps"));
}

/* What a site list sums to, from DHAT's program points. */
typedef struct {
	uint64_t tb, tbk, gb, gbk, eb, ebk;
} dhat_sums_t;

/*
 * The fields dh_view.js's checkFields requires, with their types, for
 * mode heap with bklt and without bkacc, and none of bkacc's; every
 * program point's figures and frames (indices into ftbl, never its
 * [root]).  No figure of bytes comes without its blocks (dh_view's "avg
 * size ∞ bytes"), and no lifetime is longer than the trace.
 */
static dhat_sums_t check_dhat(json_object *d)
{
	static const char *const ints[] = { "dhatFileVersion", "tuth", "pid",
					    "te", "tg" };
	static const char *const strs[] = { "mode", "verb", "tu", "Mtu", "cmd" };
	static const char *const pp_ints[] = { "tb", "tbk", "tl", "mb", "mbk",
					       "gb", "gbk", "eb", "ebk" };
	json_object *pps, *ftbl;
	dhat_sums_t s = { 0 };
	size_t nftbl;

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		member_of_type(d, ints[i], json_type_int);
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		member_of_type(d, strs[i], json_type_string);
	ck_assert_int_eq(mt_test_json_i64(d, "dhatFileVersion"), 2);
	ck_assert_str_eq(mt_test_json_str(d, "mode"), "heap");
	ck_assert(json_object_get_boolean(member_of_type(d, "bklt", json_type_boolean)));
	ck_assert(!json_object_get_boolean(member_of_type(d, "bkacc", json_type_boolean)));
	ck_assert_uint_ge(mt_test_json_u64(d, "te"), mt_test_json_u64(d, "tg"));
	ftbl = member_of_type(d, "ftbl", json_type_array);
	nftbl = json_object_array_length(ftbl);
	ck_assert_uint_ge(nftbl, 1);
	ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(ftbl, 0)),
			 "[root]");
	for (size_t i = 0; i < nftbl; i++)
		mt_quiet(json_object_is_type(json_object_array_get_idx(ftbl, i),
					     json_type_string), "ftbl[%zu]", i);
	pps = member_of_type(d, "pps", json_type_array);
	for (size_t i = 0; i < json_object_array_length(pps); i++) {
		json_object *pp = json_object_array_get_idx(pps, i);

		for (size_t k = 0; k < sizeof(pp_ints) / sizeof(pp_ints[0]); k++)
			member_of_type(pp, pp_ints[k], json_type_int);
		mt_quiet(mt_test_json_u64(pp, "mb") <= mt_test_json_u64(pp, "tb"),
			 "mb > tb");
		mt_quiet(!json_object_object_get_ex(pp, "rb", NULL) &&
			 !json_object_object_get_ex(pp, "wb", NULL) &&
			 !json_object_object_get_ex(pp, "acc", NULL),
			 "reads or writes without bkacc");
		for (size_t k = 0; k < 4; k++) {
			static const char *const pair[][2] = {
				{ "tb", "tbk" }, { "mb", "mbk" },
				{ "gb", "gbk" }, { "eb", "ebk" } };

			mt_quiet(!mt_test_json_u64(pp, pair[k][0]) ==
				 !mt_test_json_u64(pp, pair[k][1]),
				 "%s %ju in %s %ju blocks", pair[k][0],
				 (uintmax_t)mt_test_json_u64(pp, pair[k][0]),
				 pair[k][1],
				 (uintmax_t)mt_test_json_u64(pp, pair[k][1]));
		}
		mt_quiet(mt_test_json_u64(pp, "tl") <=
			 mt_test_json_u64(pp, "tbk") * mt_test_json_u64(d, "te"),
			 "tl %ju past tbk x te",
			 (uintmax_t)mt_test_json_u64(pp, "tl"));
		assert_indices(member_of_type(pp, "fs", json_type_array), 1,
			       nftbl);
		s.tb += mt_test_json_u64(pp, "tb");
		s.tbk += mt_test_json_u64(pp, "tbk");
		s.gb += mt_test_json_u64(pp, "gb");
		s.gbk += mt_test_json_u64(pp, "gbk");
		s.eb += mt_test_json_u64(pp, "eb");
		s.ebk += mt_test_json_u64(pp, "ebk");
	}
	return s;
}

/* speedscope's and DHAT's totals against the summary of the trace at
 * path. */
static void assert_totals(const char *path)
{
	json_object *sum = summary_of(path), *sp = export_of("speedscope", path);
	json_object *dh = export_of("dhat", path);
	uint64_t w[SPEEDSCOPE_PROFILES];
	dhat_sums_t d;

	check_speedscope(sp, w);
	assert_speedscope_totals(sum, w);
	d = check_dhat(dh);
	ck_assert_uint_eq(d.tb, mt_test_json_u64(sum, "bytes_allocated"));
	/* A realloc makes a block, as the heap counts them. */
	ck_assert_uint_eq(d.tbk, mt_test_json_u64(sum, "allocations") +
					 mt_test_json_u64(sum, "resizes") +
					 mt_test_json_u64(sum, "remaps"));
	ck_assert_uint_eq(d.gb, mt_test_json_u64(sum, "peak_live_bytes"));
	ck_assert_uint_le(d.gbk, mt_test_json_u64(sum, "peak_live_allocations"));
	ck_assert(!d.gb == !d.gbk);
	ck_assert_uint_eq(d.eb, mt_test_json_u64(sum, "live_bytes"));
	ck_assert_uint_eq(d.ebk, mt_test_json_u64(sum, "live_allocations"));
	ck_assert_uint_eq(mt_test_json_u64(dh, "te"),
			  mt_test_json_u64(sum, "duration_ns"));
	json_object_put(dh);
	json_object_put(sp);
	json_object_put(sum);
}

static void assert_folded_is_flamegraph(const char *path)
{
	mt_test_run_t f, e;

	mt_test_memtrace_in(&f, NULL, "flamegraph", "--folded", path, NULL);
	mt_test_memtrace_in(&e, NULL, "export", "folded", path, NULL);
	ck_assert_int_eq(f.status, 0);
	ck_assert_int_eq(e.status, 0);
	ck_assert_uint_eq(e.out_len, f.out_len);
	ck_assert(!memcmp(e.out, f.out, f.out_len));
	mt_test_run_release(&e);
	mt_test_run_release(&f);
}

START_TEST(test_export_folded_is_the_flamegraph_output_byte_for_byte)
{
	static const char *const names[] = { "demo.jsonl", "report/app.jsonl",
					     "report/realloc.jsonl",
					     "report/empty.jsonl" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = mt_test_fixture(names[i]);

		assert_folded_is_flamegraph(path);
		free(path);
	}
}
END_TEST

START_TEST(test_export_speedscope_follows_the_schema_and_the_summary_totals)
{
	char *path = mt_test_fixture("report/app.jsonl");
	json_object *sum = summary_of(path), *d = export_of("speedscope", path);
	uint64_t w[SPEEDSCOPE_PROFILES];

	check_speedscope(d, w);
	assert_speedscope_totals(sum, w);
	/* The program trace.start names: it has no ppid. */
	ck_assert_str_eq(mt_test_json_str(d, "name"),
			 "/nonexistent/memtrace-fixture/app --serve (pid 4242)");
	json_object_put(d);
	json_object_put(sum);
	free(path);
}
END_TEST

/* The weight in speedscope profile p of the sample whose innermost
 * frame is named fn; 0 when there is none, a failure when two. */
static uint64_t speedscope_weight_of(json_object *d, size_t p, const char *fn)
{
	json_object *frames = json_object_object_get(
		json_object_object_get(d, "shared"), "frames");
	json_object *prof = json_object_array_get_idx(
		json_object_object_get(d, "profiles"), p);
	json_object *samples = json_object_object_get(prof, "samples");
	json_object *weights = json_object_object_get(prof, "weights");
	uint64_t w = 0;
	int found = 0;

	for (size_t i = 0; i < json_object_array_length(samples); i++) {
		json_object *st = json_object_array_get_idx(samples, i);
		json_object *inner = json_object_array_get_idx(
			frames, json_object_get_int(json_object_array_get_idx(
					st, json_object_array_length(st) - 1)));

		if (strcmp(mt_test_json_str(inner, "name"), fn))
			continue;
		ck_assert_msg(!found, "two samples in %s", fn);
		found = 1;
		w = (uint64_t)json_object_get_int64(json_object_array_get_idx(weights, i));
	}
	return w;
}

/*
 * The profiles a user looks for first, on wl_lifetimes, whose blocks are
 * known: "bytes live at the peak" weighs each site by its bytes at the
 * peak and sums to the summary's peak_live_bytes, "bytes leaked" by its
 * bytes live at the end and sums to live_bytes; a site with none is in
 * neither.
 */
START_TEST(test_export_speedscope_has_the_peak_and_the_leaked_bytes_by_site)
{
	static const struct {
		const char *fn;
		uint64_t peak, leaked;
	} want[] = {
		{ "alloc_before", 0, 0 },   { "alloc_shrinks", 300, 300 },
		{ "alloc_grown", 0, 0 },    { "regrow", 1000, 0 },
		{ "alloc_held", 8000, 0 },  { "alloc_peak", 300000, 0 },
		{ "alloc_leaked", 0, 20 },
	};
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_lifetimes");
	char *argv[] = { prog, NULL };
	uint64_t w[SPEEDSCOPE_PROFILES];
	json_object *d, *sum;
	mt_test_run_t r;

	mt_test_run_traced(&r, argv, trace, NULL);
	ck_assert_msg(r.status == 0, "wl_lifetimes ended with %d: %s", r.status,
		      r.err);
	d = export_of("speedscope", trace);
	sum = summary_of(trace);
	check_speedscope(d, w);
	assert_speedscope_totals(sum, w);
	ck_assert_uint_ge(w[0], 309300);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_msg(speedscope_weight_of(d, 0, want[i].fn) == want[i].peak,
			      "%s: %ju bytes at the peak, not %ju", want[i].fn,
			      (uintmax_t)speedscope_weight_of(d, 0, want[i].fn),
			      (uintmax_t)want[i].peak);
		ck_assert_msg(speedscope_weight_of(d, 1, want[i].fn) == want[i].leaked,
			      "%s: %ju bytes leaked, not %ju", want[i].fn,
			      (uintmax_t)speedscope_weight_of(d, 1, want[i].fn),
			      (uintmax_t)want[i].leaked);
	}
	json_object_put(sum);
	json_object_put(d);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* Samples are root first, named as the folded stacks name them: each
 * sample of the calls profile, its names joined by ';', is a line of the
 * folded output. */
START_TEST(test_export_speedscope_stacks_are_the_folded_stacks_root_first)
{
	char *path = mt_test_fixture("report/app.jsonl");
	json_object *d = export_of("speedscope", path);
	json_object *frames = json_object_object_get(
		json_object_object_get(d, "shared"), "frames");
	json_object *prof = json_object_array_get_idx(
		json_object_object_get(d, "profiles"), 3);
	json_object *samples = json_object_object_get(prof, "samples");
	mt_test_run_t f;

	mt_test_memtrace_in(&f, NULL, "flamegraph", "--folded", path, NULL);
	ck_assert_int_eq(f.status, 0);
	for (size_t i = 0; i < json_object_array_length(samples); i++) {
		json_object *s = json_object_array_get_idx(samples, i);
		mt_test_bytes_t line = { 0 };

		mt_test_bytes_add(&line, "\n", 1);
		for (size_t k = 0; k < json_object_array_length(s); k++) {
			json_object *fr = json_object_array_get_idx(
				frames, json_object_get_int(
						json_object_array_get_idx(s, k)));
			const char *name = mt_test_json_str(fr, "name");

			if (k)
				mt_test_bytes_add(&line, ";", 1);
			mt_test_bytes_add(&line, name, strlen(name));
		}
		mt_test_bytes_add(&line, " ", 2); /* and its NUL */
		ck_assert_msg(strstr(f.out, line.data + 1) == f.out ||
			      strstr(f.out, line.data),
			      "'%s' is no folded line of %s", line.data + 1, f.out);
		free(line.data);
	}
	mt_test_run_release(&f);
	json_object_put(d);
	free(path);
}
END_TEST

START_TEST(test_export_dhat_has_the_fields_dh_view_reads_and_the_site_totals)
{
	static const char *const names[] = { "demo.jsonl", "report/app.jsonl",
					     "report/realloc.jsonl" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = mt_test_fixture(names[i]);

		assert_totals(path);
		free(path);
	}
}
END_TEST

/* DHAT's frames are innermost first, as Valgrind writes them; a frame
 * of the table reads "0xIP: NAME (...)". */
START_TEST(test_export_dhat_frames_are_innermost_first)
{
	char *path = mt_test_fixture("demo.jsonl");
	json_object *d = export_of("dhat", path);
	json_object *ftbl = json_object_object_get(d, "ftbl");
	json_object *pp = json_object_array_get_idx(
		json_object_object_get(d, "pps"), 0);
	json_object *fs = json_object_object_get(pp, "fs");
	const char *first = json_object_get_string(json_object_array_get_idx(
		ftbl, json_object_get_int(json_object_array_get_idx(fs, 0))));
	const char *last = json_object_get_string(json_object_array_get_idx(
		ftbl, json_object_get_int(json_object_array_get_idx(
			      fs, json_object_array_length(fs) - 1))));

	/* demo.jsonl's first site: xstrdup <- parse_config <- main. */
	ck_assert_msg(!strncmp(first, "0x", 2) && strstr(first, ": xstrdup"),
		      "innermost frame '%s'", first);
	ck_assert_msg(strstr(last, ": main") != NULL, "outermost frame '%s'", last);
	json_object_put(d);
	free(path);
}
END_TEST

/* The program point of DHAT document d whose innermost frame is function
 * fn ("0xIP: fn (FILE:LINE)"); fails when there is none or two. */
static json_object *dhat_pp_of(json_object *d, const char *fn)
{
	json_object *ftbl = json_object_object_get(d, "ftbl");
	json_object *pps = json_object_object_get(d, "pps"), *found = NULL;
	char needle[128];

	snprintf(needle, sizeof(needle), ": %s (", fn);
	for (size_t i = 0; i < json_object_array_length(pps); i++) {
		json_object *pp = json_object_array_get_idx(pps, i);
		json_object *fs = json_object_object_get(pp, "fs");
		const char *inner = json_object_get_string(json_object_array_get_idx(
			ftbl, json_object_get_int(json_object_array_get_idx(fs, 0))));

		if (strstr(inner, needle)) {
			ck_assert_msg(!found, "two program points in %s", fn);
			found = pp;
		}
	}
	ck_assert_msg(found != NULL, "no program point in %s", fn);
	return found;
}

/*
 * wl_lifetimes's sites, whose blocks it documents: every figure of each
 * program point, and lifetimes at least as long as the program's pauses
 * (t is rounded down to a microsecond: 49 ms for a 50 ms pause).
 */
START_TEST(test_export_dhat_has_the_known_figures_of_a_workloads_blocks)
{
	static const struct {
		const char *fn;
		uint64_t tb, tbk, mb, mbk, gb, gbk, eb, ebk, tl_min;
	} want[] = {
		{ "alloc_before", 200000, 4, 200000, 4, 0, 0, 0, 0, 0 },
		{ "alloc_shrinks", 5300, 4, 5000, 1, 300, 3, 300, 3, 3 * 69 },
		{ "alloc_grown", 100, 1, 100, 1, 0, 0, 0, 0, 0 },
		{ "regrow", 1000, 1, 1000, 1, 1000, 1, 0, 0, 49 },
		{ "alloc_held", 8000, 8, 8000, 8, 8000, 8, 0, 0, 8 * 49 },
		{ "alloc_peak", 300000, 3, 300000, 3, 300000, 3, 0, 0, 3 * 49 },
		{ "alloc_leaked", 20, 2, 20, 2, 0, 0, 20, 2, 2 * 19 },
	};
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_lifetimes");
	char *argv[] = { prog, NULL };
	json_object *d, *sum;
	mt_test_run_t r;

	mt_test_run_traced(&r, argv, trace, NULL);
	ck_assert_msg(r.status == 0, "wl_lifetimes ended with %d: %s", r.status,
		      r.err);
	d = export_of("dhat", trace);
	sum = summary_of(trace);
	check_dhat(d);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		json_object *pp = dhat_pp_of(d, want[i].fn);
		const uint64_t got[] = {
			mt_test_json_u64(pp, "tb"), mt_test_json_u64(pp, "tbk"),
			mt_test_json_u64(pp, "mb"), mt_test_json_u64(pp, "mbk"),
			mt_test_json_u64(pp, "gb"), mt_test_json_u64(pp, "gbk"),
			mt_test_json_u64(pp, "eb"), mt_test_json_u64(pp, "ebk"),
		};
		const uint64_t exp[] = { want[i].tb, want[i].tbk, want[i].mb,
					 want[i].mbk, want[i].gb, want[i].gbk,
					 want[i].eb, want[i].ebk };
		static const char *const names[] = { "tb", "tbk", "mb", "mbk",
						     "gb", "gbk", "eb", "ebk" };

		for (size_t k = 0; k < sizeof(exp) / sizeof(exp[0]); k++)
			ck_assert_msg(got[k] == exp[k], "%s: %s %ju, not %ju",
				      want[i].fn, names[k], (uintmax_t)got[k],
				      (uintmax_t)exp[k]);
		ck_assert_msg(mt_test_json_u64(pp, "tl") >= want[i].tl_min * 1000000,
			      "%s: tl %ju ns, less than %ju ms", want[i].fn,
			      (uintmax_t)mt_test_json_u64(pp, "tl"),
			      (uintmax_t)want[i].tl_min);
	}
	/* The peak is the third alloc_peak block; 70 ms of pauses follow. */
	ck_assert_uint_eq(mt_test_json_u64(d, "te"),
			  mt_test_json_u64(sum, "duration_ns"));
	ck_assert_uint_ge(mt_test_json_u64(d, "te") - mt_test_json_u64(d, "tg"),
			  69 * 1000000);
	ck_assert_uint_gt(mt_test_json_u64(d, "tg"), 0);
	json_object_put(sum);
	json_object_put(d);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* A real program's compressed trace: wl_demo under the preload. */
START_TEST(test_export_of_a_real_workload_agrees_with_its_summary)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl.zst");
	char *prog = mt_test_workload("wl_demo");
	char *argv[] = { prog, NULL };
	mt_test_run_t r;

	mt_test_run_traced(&r, argv, trace, NULL);
	ck_assert_msg(r.status == 0, "wl_demo ended with %d: %s", r.status, r.err);
	assert_totals(trace);
	assert_folded_is_flamegraph(trace);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

START_TEST(test_export_rejects_an_unknown_format)
{
	char *path = mt_test_fixture("demo.jsonl");
	mt_test_run_t r;

	static const char want[] = "memtrace: unknown export format 'perfetto' "
				   "(folded, speedscope, dhat or pprof)\n\n"
				   "usage: memtrace export FORMAT TRACE";

	mt_test_memtrace_in(&r, NULL, "export", "perfetto", path, NULL);
	ck_assert_int_eq(r.status, 64);
	ck_assert_uint_eq(r.out_len, 0);
	ck_assert_msg(!strncmp(r.err, want, strlen(want)), "stderr: %s", r.err);
	mt_test_run_release(&r);
	free(path);
}
END_TEST

START_TEST(test_export_usage_errors_exit_64)
{
	char *path = mt_test_fixture("demo.jsonl");
	struct {
		const char *args[4], *message;
	} cases[] = {
		{ { NULL }, "memtrace: missing FORMAT argument\n" },
		{ { "dhat", NULL }, "memtrace: missing TRACE argument\n" },
		{ { "dhat", path, "--metric", NULL }, "memtrace: unknown option '--metric'\n" },
		{ { "dhat", path, path, NULL }, "memtrace: unexpected argument '" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[6] = { "export" };
		mt_test_run_t r;

		memcpy(args + 1, cases[i].args, sizeof(cases[i].args));
		mt_test_memtrace_in_argv(&r, NULL, NULL, args);
		ck_assert_msg(r.status == 64, "case %zu: status %d", i, r.status);
		ck_assert_msg(!strncmp(r.err, cases[i].message,
				       strlen(cases[i].message)),
			      "case %zu: stderr: %s", i, r.err);
		ck_assert_uint_eq(r.out_len, 0);
		mt_test_run_release(&r);
	}
	free(path);
}
END_TEST

START_TEST(test_export_help_prints_the_usage)
{
	const char *const forms[][3] = { { "--help" }, { "dhat", "--help" },
					 { "pprof", "x", "--help" } };

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *args[5] = { "export", forms[i][0], forms[i][1],
					forms[i][2], NULL };
		mt_test_run_t r;

		mt_test_memtrace_in_argv(&r, NULL, NULL, args);
		ck_assert_int_eq(r.status, 0);
		ck_assert_msg(!strncmp(r.out, "usage: memtrace export FORMAT TRACE", 35),
			      "stdout: %s", r.out);
		ck_assert(strstr(r.out, "speedscope") && strstr(r.out, "dhat") &&
			  strstr(r.out, "pprof"));
		ck_assert_uint_eq(r.err_len, 0);
		mt_test_run_release(&r);
	}
}
END_TEST

START_TEST(test_export_writes_its_output_file_and_refuses_what_is_not_evidence)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "p.json");
	char *path = mt_test_fixture("demo.jsonl");
	mt_test_file_t bad;
	mt_test_run_t r, s;

	mt_test_memtrace_in(&r, NULL, "export", "-o", out, "speedscope", path, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(r.out_len, 0);
	mt_test_memtrace_in(&s, NULL, "export", "speedscope", path, NULL);
	mt_test_assert_file_eq(out, s.out);
	mt_test_run_release(&s);
	mt_test_run_release(&r);
	mt_test_file_write(&bad, "not a trace\n", 12);
	mt_test_memtrace_in(&r, NULL, "export", "dhat", bad.path, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_uint_eq(r.out_len, 0);
	ck_assert(strstr(r.err, "is not valid memtrace evidence") != NULL);
	mt_test_run_release(&r);
	mt_test_file_done(&bad);
	free(path);
	free(out);
}
END_TEST

/* Every allocation of the analyzer failing in turn
 * (MEMTRACE_ANALYZER_FAIL_AT): each run is out of memory (4) with no
 * output, or the whole export. */
START_TEST(test_export_survives_every_allocation_failure)
{
	static const char *const fmts[] = { "speedscope", "dhat", "pprof" };
	char *path = mt_test_fixture("report/app.jsonl");

	for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
		const char *args[] = { "export", fmts[f], path, NULL };

		mt_test_sweep_allocation_failures(args, fmts[f]);
	}
	free(path);
}
END_TEST

/* ---- pprof ---- */

/* The n bytes at p, gunzipped (one gzip member, whole). */
static mt_test_bytes_t gunzip(const char *p, size_t n)
{
	mt_test_bytes_t out = { 0 };
	unsigned char chunk[4096];
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = inflate(&z, Z_NO_FLUSH);
		mt_quiet(zr == Z_OK || zr == Z_STREAM_END,
			 "the export is no gzip stream: zlib says %d", zr);
		mt_test_bytes_add(&out, chunk, sizeof(chunk) - z.avail_out);
	} while (zr != Z_STREAM_END);
	ck_assert_uint_eq(z.avail_in, 0);
	inflateEnd(&z);
	return out;
}

/* The bytes a golden .hex file spells: hex pairs, "text", # comments. */
static mt_test_bytes_t read_hex(const char *name)
{
	char *path = mt_test_fixture(name);
	size_t len;
	char *text = mt_test_read(path, &len);
	mt_test_bytes_t out = { 0 };

	mt_quiet(text != NULL, "golden file %s is missing", path);
	for (size_t i = 0; i < len;) {
		if (text[i] == '#') {
			while (i < len && text[i] != '\n')
				i++;
		} else if (isspace((unsigned char)text[i])) {
			i++;
		} else if (text[i] == '"') {
			size_t end = i + 1;

			while (end < len && text[end] != '"')
				end++;
			mt_quiet(end < len, "%s: a string never ends", path);
			mt_test_bytes_add(&out, text + i + 1, end - i - 1);
			i = end + 1;
		} else {
			unsigned int byte;
			char pair[3] = { text[i], i + 1 < len ? text[i + 1] : 0, 0 };
			unsigned char c;

			mt_quiet(isxdigit((unsigned char)pair[0]) &&
					 isxdigit((unsigned char)pair[1]) &&
					 sscanf(pair, "%2x", &byte) == 1,
				 "%s: '%s' is no hex byte", path, pair);
			c = (unsigned char)byte;
			mt_test_bytes_add(&out, &c, 1);
			i += 2;
		}
	}
	free(text);
	free(path);
	return out;
}

/* The first differing byte of two buffers, for a message. */
static size_t first_difference(const char *a, size_t na, const char *b,
			       size_t nb)
{
	size_t i = 0;

	while (i < na && i < nb && a[i] == b[i])
		i++;
	return i;
}

static void assert_bytes_eq(const mt_test_bytes_t *got, const char *want,
			    size_t nwant, const char *what)
{
	size_t at = first_difference(got->data, got->len, want, nwant);

	mt_quiet(got->len == nwant && at == nwant,
		 "%s: %zu bytes, want %zu; first difference at byte %zu "
		 "(0x%02x, want 0x%02x)", what, got->len, nwant, at,
		 at < got->len ? (unsigned char)got->data[at] : 0,
		 at < nwant ? (unsigned char)want[at] : 0);
}

/* The protocol buffers documentation's own examples of the wire format,
 * and what proto3 leaves out. */
START_TEST(test_proto_encodes_the_wire_formats_examples)
{
	static const uint64_t packed[] = { 3, 270, 86942 };
	mt_buf_t b = MT_BUF_INIT;
	mt_test_bytes_t got;

	ck_assert_int_eq(mt_protobuf_add_uint(&b, 1, 150), MT_OK);
	ck_assert_int_eq(mt_protobuf_add_bytes(&b, 2, "testing", 7), MT_OK);
	ck_assert_int_eq(mt_protobuf_add_packed(&b, 4, packed, 3), MT_OK);
	ck_assert_int_eq(mt_protobuf_add_int(&b, 2, -2), MT_OK);
	/* Defaults are not written: 0, false, an empty packed list. */
	ck_assert_int_eq(mt_protobuf_add_uint(&b, 1, 0), MT_OK);
	ck_assert_int_eq(mt_protobuf_add_int(&b, 1, 0), MT_OK);
	ck_assert_int_eq(mt_protobuf_add_bool(&b, 7, 0), MT_OK);
	ck_assert_int_eq(mt_protobuf_add_packed(&b, 4, packed, 0), MT_OK);
	/* A field number past 15 takes a two-byte tag; an empty string is
	 * still written. */
	ck_assert_int_eq(mt_protobuf_add_bytes(&b, 16, "", 0), MT_OK);
	ck_assert_int_eq(mt_protobuf_add_bool(&b, 7, 1), MT_OK);
	got = (mt_test_bytes_t){ 0 };
	mt_test_bytes_add(&got, b.data, b.len);
	assert_bytes_eq(&got,
			"\x08\x96\x01"
			"\x12\x07testing"
			"\x22\x06\x03\x8e\x02\x9e\xa7\x05"
			"\x10\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01"
			"\x82\x01\x00"
			"\x38\x01",
			36, "encoded fields");
	free(got.data);
	mt_buf_release(&b);
}
END_TEST

/* Each string once, "" at 0, in the order first asked for. */
START_TEST(test_proto_string_table_gives_each_string_one_index)
{
	mt_protobuf_strtab_t t;
	mt_buf_t b = MT_BUF_INIT;
	mt_test_bytes_t got = { 0 };
	int64_t i;

	ck_assert_int_eq(mt_protobuf_strtab_init(&t), MT_OK);
	ck_assert_int_eq(mt_protobuf_strtab_index(&t, "main", 4, &i), MT_OK);
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(mt_protobuf_strtab_index(&t, "", 0, &i), MT_OK);
	ck_assert_int_eq(i, 0);
	ck_assert_int_eq(mt_protobuf_strtab_index(&t, "mainly", 4, &i), MT_OK);
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(mt_protobuf_strtab_index(&t, "x", 1, &i), MT_OK);
	ck_assert_int_eq(i, 2);
	ck_assert_int_eq(mt_protobuf_strtab_add(&b, 6, &t), MT_OK);
	mt_test_bytes_add(&got, b.data, b.len);
	assert_bytes_eq(&got, "\x32\x00\x32\x04main\x32\x01x", 11,
			"string table");
	free(got.data);
	mt_buf_release(&b);
	mt_protobuf_strtab_release(&t);
}
END_TEST

/* `memtrace export pprof path`, exit 0, gunzipped. */
static mt_test_bytes_t pprof_of(const char *path)
{
	mt_test_run_t r;
	mt_test_bytes_t raw;

	mt_test_memtrace_in(&r, NULL, "export", "pprof", path, NULL);
	ck_assert_msg(r.status == 0, "export pprof %s: %d: %s", path, r.status,
		      r.err);
	raw = gunzip(r.out, r.out_len);
	mt_test_run_release(&r);
	return raw;
}

START_TEST(test_export_pprof_of_the_tiny_fixture_is_its_golden_bytes)
{
	char *path = mt_test_fixture("export/tiny.jsonl");
	mt_test_bytes_t got = pprof_of(path), want = read_hex("export/tiny.pprof.hex");

	assert_bytes_eq(&got, want.data, want.len, "export pprof tiny.jsonl");
	free(want.data);
	free(got.data);
	free(path);
}
END_TEST

/* `go tool pprof ARGS... file`, with a home and a build cache of its own
 * in dir (go wants both writable); its output.  Fails when go is
 * missing: `make deps` installs golang-go. */
static void go_pprof(mt_test_run_t *r, const char *dir, const char *args,
		     const char *file)
{
	char *home = mt_test_path(dir, "gohome");
	char script[512];
	char env0[4096], env1[4096];
	char *env[] = { env0, env1, NULL };
	char *argv[] = { "/bin/sh", "-c", script, "sh", (char *)file, NULL };

	snprintf(script, sizeof(script),
		 "command -v go >/dev/null || { echo 'go is missing: "
		 "make deps installs golang-go' >&2; exit 127; }; "
		 "exec go tool pprof -symbolize=none %s \"$1\"", args);
	snprintf(env0, sizeof(env0), "HOME=%s", home);
	snprintf(env1, sizeof(env1), "GOCACHE=%s/cache", home);
	mt_test_run(r, argv, env);
	ck_assert_msg(r->status == 0, "go tool pprof %s: %d: %s", args,
		      r->status, r->err);
	free(home);
}

/* The sums of the four values over the samples of `go tool pprof -raw`:
 * the lines between the sample types' line and "Locations". */
static void raw_sums(const char *raw, uint64_t sums[4])
{
	const char *p = strstr(raw, "\nSamples:\n");
	int in = 0;

	memset(sums, 0, 4 * sizeof(sums[0]));
	mt_quiet(p != NULL, "no samples in pprof's output: %s", raw);
	p = strchr(p + 1, '\n') + 1;
	mt_quiet(!strncmp(p, "alloc_objects/count alloc_space/bytes "
			  "inuse_objects/count inuse_space/bytes\n", 76),
		 "sample types: %.80s", p);
	for (p = strchr(p, '\n') + 1; *p && strncmp(p, "Locations", 9);
	     p = strchr(p, '\n') + 1) {
		uintmax_t v[4];

		mt_quiet(sscanf(p, "%ju %ju %ju %ju:", &v[0], &v[1], &v[2],
				&v[3]) == 4,
			 "no sample line: %.80s", p);
		for (int i = 0; i < 4; i++)
			sums[i] += v[i];
		in++;
	}
	mt_quiet(in > 0, "pprof read no sample");
}

/* Export path as pprof, read it back with go tool pprof -raw: its
 * totals are the summary's.  The raw text is returned for more checks. */
static char *assert_pprof_totals(const char *path)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "p.pb.gz");
	json_object *sum = summary_of(path);
	mt_test_run_t e, g;
	uint64_t sums[4];
	char *raw;

	mt_test_memtrace_in(&e, NULL, "export", "pprof", path, "-o", out, NULL);
	ck_assert_msg(e.status == 0, "export pprof %s: %d: %s", path,
		      e.status, e.err);
	go_pprof(&g, dir, "-raw", out);
	raw_sums(g.out, sums);
	ck_assert_uint_eq(sums[0], mt_test_json_u64(sum, "allocations"));
	ck_assert_uint_eq(sums[1], mt_test_json_u64(sum, "bytes_allocated"));
	ck_assert_uint_eq(sums[2], mt_test_json_u64(sum, "live_allocations"));
	ck_assert_uint_eq(sums[3], mt_test_json_u64(sum, "live_bytes"));
	raw = strdup(g.out);
	mt_test_run_release(&g);
	mt_test_run_release(&e);
	json_object_put(sum);
	free(out);
	return raw;
}

START_TEST(test_export_pprof_read_by_go_tool_pprof_has_the_summary_totals)
{
	static const char *const names[] = { "demo.jsonl", "report/app.jsonl",
					     "report/realloc.jsonl",
					     "export/tiny.jsonl" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = mt_test_fixture(names[i]);

		free(assert_pprof_totals(path));
		free(path);
	}
}
END_TEST

/* `-top -sample_index=alloc_space` ranks functions by bytes: app.jsonl's
 * handle_request (calloc 4000, resized to 6000, and 2048 more) first, and
 * the stack without frames is "[no stack]". */
START_TEST(test_export_pprof_top_ranks_functions_by_the_chosen_sample_type)
{
	char *path = mt_test_fixture("report/app.jsonl");
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "p.pb.gz");
	mt_test_run_t e, g;
	const char *line;

	mt_test_memtrace_in(&e, NULL, "export", "pprof", path, "-o", out, NULL);
	ck_assert_int_eq(e.status, 0);
	go_pprof(&g, dir, "-top -sample_index=alloc_space", out);
	ck_assert_msg(strstr(g.out, "of 13972B total") ||
			      strstr(g.out, "of 13.64kB total"),
		      "total: %s", g.out);
	line = strstr(g.out, "flat%");
	ck_assert_msg(line != NULL, "no table: %s", g.out);
	line = strchr(line, '\n') + 1;
	ck_assert_msg(strstr(line, "handle_request") &&
			      strstr(line, "handle_request") < strchr(line, '\n'),
		      "first row: %s", line);
	mt_test_run_release(&g);
	go_pprof(&g, dir, "-top -sample_index=inuse_space", out);
	ck_assert_msg(strstr(g.out, "of 2808B total") ||
			      strstr(g.out, "of 2.74kB total"),
		      "in use: %s", g.out);
	mt_test_run_release(&g);
	mt_test_run_release(&e);
	free(out);
	free(path);
}
END_TEST

/* A real C++ program's trace: totals, names demangled as the other
 * exports name them, file:line from libdw, mappings with the modules and
 * their build ids. */
START_TEST(test_export_pprof_of_a_real_cxx_program_names_its_frames)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl.zst");
	char *prog = mt_test_workload("wl_cxx_names");
	char *argv[] = { prog, NULL };
	mt_test_run_t r;
	const char *first, *at;
	size_t n;
	char *raw;

	mt_test_run_traced(&r, argv, trace, NULL);
	ck_assert_msg(r.status == 0, "wl_cxx_names ended with %d: %s", r.status,
		      r.err);
	raw = assert_pprof_totals(trace);
	ck_assert_msg(strstr(raw, " operator new(unsigned long) ") != NULL,
		      "operator new is not demangled: %s", raw);
	ck_assert_msg(strstr(raw, " app::make_widget(int) /") &&
			      strstr(raw, "wl_cxx_names.cpp:18"),
		      "no app::make_widget(int) at wl_cxx_names.cpp:18: %s", raw);
	/* The mapping: path, the build id the trace records (40 hex digits,
	 * GNU ld's SHA-1), and lines. */
	/* In the mappings: the comment names the program too. */
	at = strstr(raw, "\nMappings\n");
	ck_assert_msg(at != NULL, "no mappings: %s", raw);
	at = strstr(at, "/wl_cxx_names ");
	ck_assert_msg(at != NULL, "no mapping of the program: %s", raw);
	at += strlen("/wl_cxx_names ");
	for (n = 0; isxdigit((unsigned char)at[n]); n++)
		;
	ck_assert_msg(n == 40 && !strncmp(at + n, " [FN][FL][LN]", 13),
		      "no build id and lines in the program's mapping: %.80s",
		      at);
	first = strstr(raw, "\nMappings\n1: ");
	ck_assert_msg(first != NULL, "no mappings: %s", raw);
	first += strlen("\nMappings\n");
	ck_assert_msg(strstr(first, "/wl_cxx_names ") &&
			      strstr(first, "/wl_cxx_names ") < strchr(first, '\n'),
		      "the program is not the first mapping: %s", raw);
	free(raw);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* The line of the source file (under the source tree) holding marker. */
static unsigned source_line_of(const char *rel, const char *marker)
{
	char *path = mt_test_path(mt_test_source_dir(), rel);
	char *text = mt_test_read(path, NULL), *at;
	unsigned line = 1;

	mt_quiet(text != NULL, "cannot read %s", path);
	at = strstr(text, marker);
	mt_quiet(at != NULL, "no %s in %s", marker, path);
	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	free(text);
	free(path);
	return line;
}

/* wl_inline's malloc is in app::dup_line(), always inlined into main:
 * its location has two lines, the inlined function at the malloc's line,
 * then main at the line that calls it, and the mapping says it has
 * inline frames. */
START_TEST(test_export_pprof_unfolds_inlined_calls_into_lines_of_one_location)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_inline");
	char *argv[] = { prog, NULL };
	unsigned malloc_line = source_line_of("tests/workloads/wl_inline.cpp",
					      "WL_INLINE_MALLOC");
	unsigned call_line = source_line_of("tests/workloads/wl_inline.cpp",
					    "WL_INLINE_CALL");
	char want[512];
	const char *mapping;
	mt_test_run_t r;
	char *raw;

	mt_test_run_traced(&r, argv, trace, NULL);
	ck_assert_msg(r.status == 0, "wl_inline ended with %d: %s", r.status,
		      r.err);
	raw = assert_pprof_totals(trace);
	/* -raw prints a location's further lines on lines of their own. */
	snprintf(want, sizeof(want),
		 " app::dup_line(char const*) %s/tests/workloads/wl_inline.cpp:%u s=0\n"
		 "             main %s/tests/workloads/wl_inline.cpp:%u s=0\n",
		 mt_test_source_dir(), malloc_line, mt_test_source_dir(),
		 call_line);
	ck_assert_msg(strstr(raw, want) != NULL, "no location\n%swithin:\n%s",
		      want, raw);
	/* The mapping's line: path, build id, flags. */
	mapping = strstr(raw, "\nMappings\n");
	mapping = mapping ? strstr(mapping, "/workloads/wl_inline ") : NULL;
	ck_assert_msg(mapping && strstr(mapping, " [FN][FL][LN][IN]\n") &&
			      strstr(mapping, " [FN][FL][LN][IN]\n") <
				      strchr(mapping, '\n'),
		      "the program's mapping has no inline frames: %s", raw);
	free(raw);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* wl_inl3 (-O2): inner -> middle -> main, each always_inline, so one
 * return address stands for three functions.  Every export gives each
 * its own name and line: pprof one location with three lines, innermost
 * first; speedscope and DHAT a frame each, never main at inner's line. */
START_TEST(test_export_gives_each_level_of_an_inline_chain_its_name_and_line)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = NULL, *src = NULL;
	char *argv[2] = { NULL, NULL };
	unsigned in = source_line_of("tests/workloads/o2/wl_inl3.c", "WL_INL3_INNER");
	unsigned mid = source_line_of("tests/workloads/o2/wl_inl3.c", "WL_INL3_MIDDLE");
	unsigned top = source_line_of("tests/workloads/o2/wl_inl3.c", "WL_INL3_MAIN");
	const char *names[] = { "inner", "middle", "main" };
	unsigned lines[] = { in, mid, top };
	char want[1024];
	mt_test_run_t r;
	char *raw;

	ck_assert_int_ne(asprintf(&prog, "%s/workloads/o2/wl_inl3",
				  mt_test_build_dir()), -1);
	ck_assert_int_ne(asprintf(&src, "%s/tests/workloads/o2/wl_inl3.c",
				  mt_test_source_dir()), -1);
	argv[0] = prog;
	mt_test_run_traced(&r, argv, trace, NULL);
	ck_assert_msg(r.status == 0, "wl_inl3 ended with %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	raw = assert_pprof_totals(trace);
	snprintf(want, sizeof(want),
		 " inner %s:%u s=0\n             middle %s:%u s=0\n"
		 "             main %s:%u s=0\n", src, in, src, mid, src, top);
	ck_assert_msg(strstr(raw, want) != NULL, "no location\n%swithin:\n%s",
		      want, raw);
	free(raw);
	mt_test_memtrace_in(&r, NULL, "export", "speedscope", trace, NULL);
	for (int i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), "{\"name\":\"%s\",\"file\":\"%s\",\"line\":%u}",
			 names[i], src, lines[i]);
		ck_assert_msg(strstr(r.out, want) != NULL, "speedscope lacks %s", want);
	}
	snprintf(want, sizeof(want), "{\"name\":\"main\",\"file\":\"%s\",\"line\":%u}",
		 src, in);
	ck_assert_msg(strstr(r.out, want) == NULL, "speedscope has %s", want);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "export", "dhat", trace, NULL);
	for (int i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), ": %s (%s:%u)\"", names[i], src, lines[i]);
		ck_assert_msg(strstr(r.out, want) != NULL, "DHAT lacks %s", want);
	}
	mt_test_run_release(&r);
	free(src);
	free(prog);
	free(trace);
}
END_TEST

/* A sampled trace (MEMTRACE_SAMPLE=64): the profile's figures are the
 * summary's estimates, and its period the sampling's mean. */
START_TEST(test_export_pprof_of_a_sampled_trace_has_its_period_and_estimates)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_demo");
	char *argv[] = { prog, NULL };
	mt_test_run_t r;
	char *raw;

	mt_test_run_traced(&r, argv, trace, "MEMTRACE_SAMPLE=64");
	ck_assert_msg(r.status == 0, "wl_demo ended with %d: %s", r.status, r.err);
	raw = assert_pprof_totals(trace);
	ck_assert_msg(strstr(raw, "\nPeriod: 64\n") != NULL, "no period 64: %s",
		      raw);
	free(raw);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* A sampled trace's speedscope and DHAT exports sum to its summary's
 * estimates, and DHAT's blocks are weighed as its bytes (no bytes in 0
 * blocks). */
START_TEST(test_export_json_of_a_sampled_trace_sums_to_its_estimates)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_demo");
	char *argv[] = { prog, NULL };
	mt_test_run_t r;

	mt_test_run_traced(&r, argv, trace, "MEMTRACE_SAMPLE=64");
	ck_assert_msg(r.status == 0, "wl_demo ended with %d: %s", r.status, r.err);
	assert_totals(trace);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* A missing trace (3) and one that is not evidence (2): the export's own
 * errors, and no output file, not even an empty one. */
START_TEST(test_export_pprof_of_a_missing_or_corrupt_trace_writes_nothing)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "p.pb.gz");
	char *missing = mt_test_path(dir, "nothing.jsonl");
	mt_test_file_t bad;
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "export", "pprof", missing, "-o", out, NULL);
	ck_assert_int_eq(r.status, 3);
	ck_assert_msg(strstr(r.err, "memtrace: cannot read '") &&
			      strstr(r.err, "No such file or directory"),
		      "stderr: %s", r.err);
	ck_assert(!mt_test_exists(out));
	mt_test_run_release(&r);
	mt_test_file_write(&bad, "not a trace\n", 12);
	mt_test_memtrace_in(&r, NULL, "export", "pprof", bad.path, "-o", out, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert(strstr(r.err, "is not valid memtrace evidence") != NULL);
	ck_assert(!mt_test_exists(out));
	ck_assert_uint_eq(r.out_len, 0);
	mt_test_run_release(&r);
	mt_test_file_done(&bad);
	free(missing);
	free(out);
}
END_TEST

/* Append what fd has to read now (O_NONBLOCK) to b; 1 when it has
 * reached its end (EIO: a pseudo-terminal's master with no slave open). */
static int drain(int fd, mt_test_bytes_t *b)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		mt_test_bytes_add(b, buf, (size_t)n);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

/*
 * `memtrace ARGS...` with its standard output on a new pseudo-terminal
 * and its stderr on a pipe: its exit status, what reached the terminal
 * (tty) and its stderr (err).  Returns 0, or -1 with errno set when the
 * machine gives no pseudo-terminal (posix_openpt(3)).
 */
static int memtrace_on_a_terminal(const char *const args[], int *status,
				  mt_test_bytes_t *tty, mt_test_bytes_t *err)
{
	char *argv[16], *memtrace = mt_test_memtrace();
	int master, slave, pipefd[2], st = 0, done = 0;
	size_t n = 0;
	const char *name;
	pid_t pid;

	argv[n++] = memtrace;
	for (size_t i = 0; args[i]; i++) {
		ck_assert_uint_lt(n, 15);
		argv[n++] = (char *)args[i];
	}
	argv[n] = NULL;
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) || unlockpt(master) ||
	    !(name = ptsname(master)) ||
	    (slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		int e = errno;

		if (master >= 0)
			close(master);
		free(memtrace);
		errno = e;
		return -1;
	}
	ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		if (dup2(slave, STDOUT_FILENO) < 0 ||
		    dup2(pipefd[1], STDERR_FILENO) < 0)
			_exit(126);
		execv(memtrace, argv);
		_exit(127);
	}
	close(pipefd[1]);
	ck_assert_int_eq(fcntl(master, F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(fcntl(pipefd[0], F_SETFL, O_NONBLOCK), 0);
	/* Read as it writes, so that a full terminal never holds it. */
	while (!done) {
		struct pollfd pf[2] = { { master, POLLIN, 0 },
					{ pipefd[0], POLLIN, 0 } };
		pid_t w = waitpid(pid, &st, WNOHANG);

		ck_assert_int_ge(w, 0);
		done = w == pid;
		poll(pf, 2, done ? 0 : 100);
		drain(master, tty);
		drain(pipefd[0], err);
	}
	close(slave);
	while (!drain(master, tty))
		;
	while (!drain(pipefd[0], err))
		;
	mt_test_bytes_add(tty, "", 1); /* NUL-terminated */
	mt_test_bytes_add(err, "", 1);
	close(pipefd[0]);
	close(master);
	free(memtrace);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

/*
 * pprof's gzip bytes are refused on a terminal, as gzip refuses them,
 * with a line that says what to do and exit 73 (an output that cannot be
 * written), before the trace is read (a missing trace is not named);
 * -o FILE writes them with the terminal still on stdout, and the JSON
 * exports still print to a terminal.
 */
START_TEST(test_export_pprof_refuses_to_write_to_a_terminal)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "p.pb.gz");
	char *path = mt_test_fixture("demo.jsonl");
	const char *refused[] = { "export", "pprof", path, NULL };
	const char *missing[] = { "export", "pprof", "/nonexistent/t.jsonl", NULL };
	const char *to_file[] = { "export", "pprof", path, "-o", out, NULL };
	const char *json[] = { "export", "dhat", path, NULL };
	mt_test_bytes_t tty = { 0 }, err = { 0 };
	int status;

	if (memtrace_on_a_terminal(refused, &status, &tty, &err)) {
		MT_TEST_SKIP("no pseudo-terminal to run it on (posix_openpt: %s)",
			     strerror(errno));
		free(path);
		free(out);
		return;
	}
	ck_assert_int_eq(status, 73);
	ck_assert_uint_eq(tty.len, 1);
	ck_assert_str_eq(err.data, "memtrace: not writing pprof's gzip-compressed "
			 "profile to a terminal: give -o FILE or redirect "
			 "standard output\n");
	free(tty.data);
	free(err.data);
	memset(&tty, 0, sizeof(tty));
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(memtrace_on_a_terminal(missing, &status, &tty, &err), 0);
	ck_assert_int_eq(status, 73);
	ck_assert_msg(!strstr(err.data, "nonexistent"), "stderr: %s", err.data);
	free(tty.data);
	free(err.data);
	memset(&tty, 0, sizeof(tty));
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(memtrace_on_a_terminal(to_file, &status, &tty, &err), 0);
	ck_assert_msg(status == 0, "export pprof -o: %d: %s", status, err.data);
	ck_assert_uint_eq(tty.len, 1);
	ck_assert(mt_test_exists(out));
	free(tty.data);
	free(err.data);
	memset(&tty, 0, sizeof(tty));
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(memtrace_on_a_terminal(json, &status, &tty, &err), 0);
	ck_assert_msg(status == 0, "export dhat: %d: %s", status, err.data);
	ck_assert_msg(strstr(tty.data, "{\"dhatFileVersion\":2,") == tty.data,
		      "the terminal shows: %.200s", tty.data);
	free(tty.data);
	free(err.data);
	free(path);
	free(out);
}
END_TEST

Suite *mt_suite_export(void)
{
	Suite *s = suite_create("export");
	TCase *tc = tcase_create("export");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_export_folded_is_the_flamegraph_output_byte_for_byte);
	tcase_add_test(tc, test_export_speedscope_follows_the_schema_and_the_summary_totals);
	tcase_add_test(tc, test_export_speedscope_stacks_are_the_folded_stacks_root_first);
	tcase_add_test(tc, test_export_speedscope_has_the_peak_and_the_leaked_bytes_by_site);
	tcase_add_test(tc, test_export_dhat_has_the_fields_dh_view_reads_and_the_site_totals);
	tcase_add_test(tc, test_export_dhat_frames_are_innermost_first);
	tcase_add_test(tc, test_export_dhat_has_the_known_figures_of_a_workloads_blocks);
	tcase_add_test(tc, test_export_of_a_real_workload_agrees_with_its_summary);
	tcase_add_test(tc, test_export_rejects_an_unknown_format);
	tcase_add_test(tc, test_export_usage_errors_exit_64);
	tcase_add_test(tc, test_export_help_prints_the_usage);
	tcase_add_test(tc, test_export_writes_its_output_file_and_refuses_what_is_not_evidence);
	tcase_add_test(tc, test_export_survives_every_allocation_failure);
	tcase_add_test(tc, test_proto_encodes_the_wire_formats_examples);
	tcase_add_test(tc, test_proto_string_table_gives_each_string_one_index);
	tcase_add_test(tc, test_export_pprof_of_the_tiny_fixture_is_its_golden_bytes);
	tcase_add_test(tc, test_export_pprof_read_by_go_tool_pprof_has_the_summary_totals);
	tcase_add_test(tc, test_export_pprof_top_ranks_functions_by_the_chosen_sample_type);
	tcase_add_test(tc, test_export_pprof_of_a_real_cxx_program_names_its_frames);
	tcase_add_test(tc, test_export_pprof_unfolds_inlined_calls_into_lines_of_one_location);
	tcase_add_test(tc, test_export_gives_each_level_of_an_inline_chain_its_name_and_line);
	tcase_add_test(tc, test_export_pprof_of_a_sampled_trace_has_its_period_and_estimates);
	tcase_add_test(tc, test_export_json_of_a_sampled_trace_sums_to_its_estimates);
	tcase_add_test(tc, test_export_pprof_of_a_missing_or_corrupt_trace_writes_nothing);
	tcase_add_test(tc, test_export_pprof_refuses_to_write_to_a_terminal);
	suite_add_tcase(s, tc);
	return s;
}
