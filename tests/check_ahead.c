/*
 * check_ahead: a trace read and parsed on several threads (mt_ahead,
 * --threads N; docs/commands.md, "Reading traces").
 *
 * The chunks are fixed by the input (1 MiB of a plain file, whole zstd
 * frames), the threads only make them ahead, and the pass applies them in
 * order: every command's output, status and messages are the same, byte
 * for byte, for 1, 2 and 8 threads, on plain and zstd traces, on the
 * fixtures, on a trace the collector wrote in many frames, and on traces
 * whose fault (a malformed line, a corrupt or cut frame, zero bytes) lies
 * in a late chunk.  And --threads 2 does start a thread that makes chunks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "mt_test.h"
#include "mt_test_trace.h"
#include "../analyzer/model/mt_analysis.h"
#include "../analyzer/read/mt_ahead.h"
#include "../analyzer/base/mt_error.h"

/*
 * A complete trace of about events lines in the preload's own layout, so
 * that the exact matcher takes its block lines: frames and stacks first,
 * then allocations, resizes and frees of three threads with some blocks
 * left live, and a frame and a stack defined now and then on the way.
 */
static mt_test_bytes_t gen_trace(uint64_t events)
{
	mt_test_bytes_t b = { 0 };
	uint64_t seq, ptr = 0x7f0000001000ull, live[64];
	unsigned nlive = 0, nstacks = 2;

	seq = mt_test_bytes_add_trace_head(&b, ",\"stack_depth\":32");
	while (seq < events) {
		uint64_t size = 16 + (seq * 2654435761u) % 4000;
		unsigned tid = 100 + (unsigned)(seq % 3);
		unsigned stack = 1 + (unsigned)((seq * 40503u) % nstacks);

		if (seq % 5000 == 0) {
			nstacks++;
			mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"frame\",\"frame_id\":%u,"
					   "\"ip\":\"0x50%04x\",\"symbol\":\"more_%u\",\"offset\":\"0x10\","
					   "\"module\":\"/opt/app/bin/app\"}\n",
					   seq++, nstacks + 2, nstacks, nstacks);
			mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"stack\",\"stack_id\":%u,"
					   "\"frames\":[%u,1,3]}\n", seq++, nstacks, nstacks + 2);
			continue;
		}
		if (nlive == 64 || (nlive && seq % 3 == 0)) {
			uint64_t p = live[--nlive];

			if (seq % 7 == 0) {
				mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"resize\",\"allocator_id\":0,"
						   "\"ptr\":\"0x%" PRIx64 "\",\"new_ptr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64 ","
						   "\"fn\":\"realloc\",\"stack\":%u,\"tid\":%u,\"t\":%" PRIu64 "}\n",
						   seq, p, ptr += 0x1000, size, stack, tid, seq * 37);
				live[nlive++] = ptr;
			} else {
				mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\",\"allocator_id\":0,"
						   "\"ptr\":\"0x%" PRIx64 "\",\"fn\":\"free\",\"tid\":%u,\"t\":%" PRIu64 "}\n",
						   seq, p, tid, seq * 37);
			}
		} else {
			live[nlive++] = ptr += 0x1000;
			mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\",\"allocator_id\":0,"
					   "\"ptr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64 ",\"fn\":\"malloc\","
					   "\"stack\":%u,\"tid\":%u,\"t\":%" PRIu64 "}\n",
					   seq, ptr, size, stack, tid, seq * 37);
		}
		seq++;
	}
	mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\",\"reason\":\"exit\",\"t\":%" PRIu64 "}\n",
			   seq, seq * 37);
	return b;
}

/* A trace of about 12 MiB: six plain chunks and more. */
#define EVENTS 100000

/* plain's bytes as zstd frames of about frame bytes of whole lines each,
 * each compressed alone (with its content size), as the collector does. */
static mt_test_bytes_t zstd_frames(const mt_test_bytes_t *plain, size_t frame)
{
	mt_test_bytes_t z = { 0 };
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t at = 0;

	ck_assert_ptr_nonnull(cc);
	/* A checksum, as the collector writes: a corrupt frame is told. */
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)));
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1)));
	while (at < plain->len) {
		size_t n = plain->len - at < frame ? plain->len - at : frame;
		size_t cap, got;
		char *out;

		while (at + n < plain->len && plain->data[at + n - 1] != '\n')
			n++;
		cap = ZSTD_compressBound(n);
		out = malloc(cap);
		ck_assert_ptr_nonnull(out);
		got = ZSTD_compress2(cc, out, cap, plain->data + at, n);
		mt_quiet(!ZSTD_isError(got), "ZSTD_compress: %s", ZSTD_getErrorName(got));
		mt_test_bytes_add(&z, out, got);
		free(out);
		at += n;
	}
	ZSTD_freeCCtx(cc);
	return z;
}

/* The offset of the start of line n (n >= 1) of a plain trace. */
static size_t line_start(const mt_test_bytes_t *plain, size_t n)
{
	size_t at = 0;

	while (--n) {
		const char *nl = memchr(plain->data + at, '\n', plain->len - at);

		ck_assert_ptr_nonnull(nl);
		at = (size_t)(nl - plain->data) + 1;
	}
	return at;
}

/* What one command gave: its status, stdout, stderr and output file. */
typedef struct {
	mt_test_run_t r;
	char *file;
	size_t file_len;
} outcome_t;

static void run_with(outcome_t *o, const char *dir, const char *const args[],
		     const char *threads, const char *file)
{
	const char *argv[24];
	size_t n = 0;

	while (args[n]) {
		ck_assert_uint_lt(n, 20);
		argv[n] = args[n];
		n++;
	}
	argv[n++] = "--threads";
	argv[n++] = threads;
	argv[n] = NULL;
	if (file)
		remove(file);
	mt_test_memtrace_in_argv(&o->r, dir, NULL, argv);
	o->file = file ? mt_test_read(file, &o->file_len) : NULL;
}

static void outcome_release(outcome_t *o)
{
	mt_test_run_release(&o->r);
	free(o->file);
}

/* `memtrace ARGS --threads N` gives the same for N = 1, 2 and 8: status,
 * stdout, stderr, and file (the -o of ARGS, or NULL). */
static void assert_same_on_threads(const char *dir, const char *const args[],
				   const char *file)
{
	static const char *const counts[] = { "2", "8" };
	outcome_t one;

	run_with(&one, dir, args, "1", file);
	if (file)
		mt_quiet(one.file != NULL, "memtrace %s %s wrote no %s: %s",
			 args[0], args[1], file, one.r.err);
	for (size_t i = 0; i < 2; i++) {
		outcome_t o;

		run_with(&o, dir, args, counts[i], file);
		mt_quiet(o.r.status == one.r.status,
			 "memtrace %s %s: status %d on 1 thread, %d on %s",
			 args[0], args[1], one.r.status, o.r.status, counts[i]);
		mt_quiet(o.r.out_len == one.r.out_len &&
			 !memcmp(o.r.out, one.r.out, one.r.out_len),
			 "memtrace %s %s: stdout differs on %s threads", args[0],
			 args[1], counts[i]);
		mt_quiet(!strcmp(o.r.err, one.r.err),
			 "memtrace %s %s: stderr '%s' on 1 thread, '%s' on %s",
			 args[0], args[1], one.r.err, o.r.err, counts[i]);
		if (file)
			mt_quiet(o.file && o.file_len == one.file_len &&
				 !memcmp(o.file, one.file, one.file_len),
				 "memtrace %s %s: %s differs on %s threads",
				 args[0], args[1], file, counts[i]);
		outcome_release(&o);
	}
	outcome_release(&one);
}

/* Every command that reads a trace, on path: the same on 1, 2 and 8
 * threads. */
static void assert_every_command_same(const char *dir, const char *path)
{
	char *out = mt_test_path(dir, "out");
	const char *const summary[] = { "summary", path, NULL };
	const char *const check[] = { "check", path, NULL };
	const char *const report[] = { "report", path, NULL };
	const char *const html[] = { "html", path, "-o", out, NULL };
	const char *const pprof[] = { "export", "pprof", path, "-o", out, NULL };
	const char *const speedscope[] = { "export", "speedscope", path, NULL };
	const char *const dhat[] = { "export", "dhat", path, NULL };
	const char *const folded[] = { "export", "folded", path, NULL };
	const char *const gate[] = { "gate", path, "--max-peak", "100K",
				     "--max-allocations", "1G", NULL };

	assert_same_on_threads(dir, summary, NULL);
	assert_same_on_threads(dir, check, NULL);
	assert_same_on_threads(dir, report, NULL);
	assert_same_on_threads(dir, html, out);
	assert_same_on_threads(dir, pprof, out);
	assert_same_on_threads(dir, speedscope, NULL);
	assert_same_on_threads(dir, dhat, NULL);
	assert_same_on_threads(dir, folded, NULL);
	assert_same_on_threads(dir, gate, NULL);
	free(out);
}

/* `memtrace check` and `summary` of path: the same on 1, 2 and 8 threads,
 * and check's verdict holds want. */
static void assert_verdict_same(const char *dir, const char *path, const char *want)
{
	const char *const check[] = { "check", path, NULL };
	const char *const summary[] = { "summary", path, NULL };
	outcome_t o;

	assert_same_on_threads(dir, check, NULL);
	assert_same_on_threads(dir, summary, NULL);
	run_with(&o, dir, check, "8", NULL);
	mt_quiet(strstr(o.r.out, want) != NULL, "check %s says '%s', not '%s'",
		 path, o.r.out, want);
	outcome_release(&o);
}

static char *write_trace(const char *dir, const char *name, const mt_test_bytes_t *b)
{
	char *path = mt_test_path(dir, name);

	mt_test_write(path, b->data, b->len);
	return path;
}

START_TEST(test_every_command_gives_the_same_on_1_2_and_8_threads_of_a_plain_trace)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = gen_trace(EVENTS);
	char *path = write_trace(dir, "t.jsonl", &plain);

	ck_assert_uint_gt(plain.len, 5 * MT_AHEAD_CHUNK);
	assert_every_command_same(dir, path);
	free(path);
	free(plain.data);
}
END_TEST

START_TEST(test_every_command_gives_the_same_on_1_2_and_8_threads_of_a_zstd_trace)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = gen_trace(EVENTS);
	mt_test_bytes_t z = zstd_frames(&plain, 1u << 20);
	char *path = write_trace(dir, "t.jsonl.zst", &z);

	assert_every_command_same(dir, path);
	free(path);
	free(z.data);
	free(plain.data);
}
END_TEST

/* Frames that do not end at a line's end (a writer other than the
 * collector), and one frame of the whole trace (zstd(1)'s): the threads
 * take what they can and the reader the rest, with the same lines. */
START_TEST(test_frames_cut_inside_lines_or_one_whole_frame_read_the_same)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = gen_trace(EVENTS);
	mt_test_bytes_t small = { 0 }, whole = zstd_frames(&plain, plain.len);
	char *a, *b;
	size_t at = 0;

	/* 300 KB frames cut anywhere. */
	while (at < plain.len) {
		size_t n = plain.len - at < 300001 ? plain.len - at : 300001;
		mt_test_bytes_t piece = { plain.data + at, n, n };
		mt_test_bytes_t zp = zstd_frames(&piece, n);

		mt_test_bytes_add(&small, zp.data, zp.len);
		free(zp.data);
		at += n;
	}
	a = write_trace(dir, "small.zst", &small);
	b = write_trace(dir, "whole.zst", &whole);
	assert_verdict_same(dir, a, "\"complete\"");
	assert_verdict_same(dir, b, "\"complete\"");
	free(a);
	free(b);
	free(small.data);
	free(whole.data);
	free(plain.data);
}
END_TEST

START_TEST(test_every_fixture_gives_the_same_on_1_2_and_8_threads)
{
	static const char *const names[] = {
		"complete.jsonl", "complete_zero_padded.jsonl",
		"events_after_stop.jsonl", "events_dropped.jsonl",
		"invalid_empty.jsonl", "invalid_not_json.jsonl",
		"invalid_only_zero_bytes.jsonl", "invalid_version_2.jsonl",
		"malformed_event.jsonl", "missing_start_event.jsonl",
		"missing_stop_cut_line.jsonl", "missing_stop_killed.jsonl",
		"sequence_gap.jsonl", "several_caveats_cut_off.jsonl",
		"zero_padded_cut_line.jsonl", "zero_padded_tail.jsonl",
	};
	char *dir = mt_test_scratch();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char rel[128], *path;
		const char *const summary[3] = { "summary", NULL, NULL };
		const char *args[3];

		snprintf(rel, sizeof(rel), "traces/%s", names[i]);
		path = mt_test_fixture(rel);
		memcpy(args, summary, sizeof(args));
		args[1] = path;
		assert_same_on_threads(dir, args, NULL);
		args[0] = "check";
		assert_same_on_threads(dir, args, NULL);
		free(path);
	}
}
END_TEST

/* The collector's own zstd trace, of frames of 1 MiB of lines each. */
START_TEST(test_a_trace_the_collector_wrote_in_many_frames_reads_the_same)
{
	char *dir = mt_test_scratch(), *zst = mt_test_path(dir, "c.jsonl.zst");
	char *prog = mt_test_workload("wl_fill");
	char *argv[] = { prog, "30000", NULL };
	const char *const summary[] = { "summary", zst, NULL };
	const char *const report[] = { "report", zst, NULL };
	const char *const speedscope[] = { "export", "speedscope", zst, NULL };
	mt_test_run_t r;
	mt_ahead_stats_t s0, s1;
	mt_analysis_t a;

	mt_test_run_traced(&r, argv, zst, NULL);
	mt_quiet(r.status == 0, "wl_fill ended with %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	assert_verdict_same(dir, zst, "\"complete\"");
	assert_same_on_threads(dir, summary, NULL);
	assert_same_on_threads(dir, report, NULL);
	assert_same_on_threads(dir, speedscope, NULL);
	/* And its frames were chunks, more than one of them. */
	mt_ahead_stats(&s0);
	mt_analysis_set_threads(2);
	mt_quiet_int_eq(mt_analysis_run(&a, zst), MT_OK);
	mt_analysis_set_threads(0);
	mt_quiet(!a.integrity.invalid, "the collector's trace is invalid");
	mt_analysis_release(&a);
	mt_ahead_stats(&s1);
	ck_assert_uint_ge(s1.chunks - s0.chunks, 3);
	free(prog);
	free(zst);
}
END_TEST

/* A malformed line far in: the same message, line number and status,
 * and nothing of a later chunk said first. */
START_TEST(test_a_malformed_line_in_a_late_chunk_says_the_same)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = gen_trace(EVENTS);
	size_t at = line_start(&plain, 90007);
	char *p, *z;
	mt_test_bytes_t zb;

	ck_assert_uint_gt(at, 4 * MT_AHEAD_CHUNK);
	/* "ptr":"0x... becomes "ptr":"0z...: a line the validator rejects. */
	{
		char *nl = memchr(plain.data + at, '\n', plain.len - at);
		char *ptr = memmem(plain.data + at, (size_t)(nl - plain.data) - at,
				   "\"ptr\":\"0x", 9);

		ck_assert_ptr_nonnull(ptr);
		ptr[8] = 'z';
	}
	p = write_trace(dir, "bad.jsonl", &plain);
	zb = zstd_frames(&plain, 1u << 20);
	z = write_trace(dir, "bad.jsonl.zst", &zb);
	assert_verdict_same(dir, p, "at line 90007");
	assert_verdict_same(dir, z, "at line 90007");
	free(p);
	free(z);
	free(zb.data);
	free(plain.data);
}
END_TEST

/* A frame corrupt, or the stream cut, or zero bytes, in a late chunk. */
START_TEST(test_a_late_corrupt_or_cut_frame_or_zero_bytes_say_the_same)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = gen_trace(EVENTS);
	mt_test_bytes_t z = zstd_frames(&plain, 1u << 20);
	mt_test_bytes_t bad = { 0 }, cut = { 0 }, padded = { 0 };
	static const char zeros[4096];
	char *a, *b, *c, *d;

	mt_test_bytes_add(&bad, z.data, z.len);
	bad.data[bad.len - 70000] ^= 0x55;
	mt_test_bytes_add(&cut, z.data, z.len - 3000);
	mt_test_bytes_add(&padded, z.data, z.len);
	mt_test_bytes_add(&padded, zeros, sizeof(zeros));
	a = write_trace(dir, "bad.zst", &bad);
	b = write_trace(dir, "cut.zst", &cut);
	c = write_trace(dir, "padded.zst", &padded);
	mt_test_bytes_add(&plain, zeros, sizeof(zeros));
	d = write_trace(dir, "padded.jsonl", &plain);
	assert_verdict_same(dir, a, "is corrupt");
	assert_verdict_same(dir, b, "cut off inside its frame");
	assert_verdict_same(dir, c, "\"complete\"");
	assert_verdict_same(dir, d, "\"complete\"");
	free(a);
	free(b);
	free(c);
	free(d);
	free(bad.data);
	free(cut.data);
	free(padded.data);
	free(z.data);
	free(plain.data);
}
END_TEST

/* An in-process pass over path on threads threads: what the threads did
 * meanwhile into *d (each counter's growth; chunks_held as the pass left
 * it) and, when t is not NULL, the heap's totals into t. */
static void run_counted(const char *path, unsigned threads,
			mt_ahead_stats_t *d, uint64_t t[6])
{
	mt_ahead_stats_t s0, s1;
	mt_analysis_t a;

	mt_ahead_stats(&s0);
	mt_analysis_set_threads(threads);
	mt_quiet_int_eq(mt_analysis_run(&a, path), MT_OK);
	mt_analysis_set_threads(0);
	mt_ahead_stats(&s1);
	d->threads_started = s1.threads_started - s0.threads_started;
	d->chunks = s1.chunks - s0.chunks;
	d->chunks_by_threads = s1.chunks_by_threads - s0.chunks_by_threads;
	d->events = s1.events - s0.events;
	d->chunks_held = s1.chunks_held;
	d->chunks_while_waiting =
		s1.chunks_while_waiting - s0.chunks_while_waiting;
	if (t) {
		t[0] = a.heap.events;
		t[1] = a.heap.allocations;
		t[2] = a.heap.frees;
		t[3] = a.heap.live_bytes;
		t[4] = a.heap.peak_live_bytes;
		t[5] = a.heap.peak_seq;
	}
	mt_analysis_release(&a);
}

/* The collector's frames of just under MT_AHEAD_CHUNK of lines are a
 * chunk each, not two to a chunk, and N threads hold N + 1 chunks at most
 * (one for each created thread, one the pass makes while it waits, and
 * the one it reads): what the threads add to the peak memory is about
 * N + 1 frames' bytes and events. */
START_TEST(test_frames_under_a_chunk_are_a_chunk_each_and_n_threads_hold_n_1)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = gen_trace(EVENTS);
	mt_test_bytes_t z = zstd_frames(&plain, MT_AHEAD_CHUNK - (8u << 10));
	char *path = write_trace(dir, "t.jsonl.zst", &z);
	static const unsigned threads[] = { 2, 3, 8 };
	uint64_t frames = 0;

	for (size_t at = 0; at < z.len; frames++) {
		size_t n = ZSTD_findFrameCompressedSize(z.data + at, z.len - at);

		ck_assert(!ZSTD_isError(n));
		ck_assert_uint_lt(ZSTD_getFrameContentSize(z.data + at, n),
				  MT_AHEAD_CHUNK);
		at += n;
	}
	ck_assert_uint_ge(frames, 5);
	for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		mt_ahead_stats_t d;

		run_counted(path, threads[i], &d, NULL);
		ck_assert_uint_eq(d.chunks, frames);
		ck_assert_uint_eq(d.chunks_held, threads[i] + 1);
	}
	free(path);
	free(z.data);
	free(plain.data);
}
END_TEST

/* --threads 2 starts one thread, which the chunks go through; 1 starts
 * none and makes no chunk. */
START_TEST(test_two_threads_start_one_that_makes_chunks_and_one_starts_none)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = gen_trace(EVENTS);
	char *path = write_trace(dir, "t.jsonl", &plain);
	mt_ahead_stats_t d;

	run_counted(path, 2, &d, NULL);
	ck_assert_uint_eq(d.threads_started, 1);
	ck_assert_uint_ge(d.chunks, 5);
	/* Nearly every line was parsed ahead. */
	ck_assert_uint_gt(d.events, EVENTS * 9 / 10);
	run_counted(path, 1, &d, NULL);
	ck_assert_uint_eq(d.threads_started, 0);
	ck_assert_uint_eq(d.chunks, 0);
	free(path);
	free(plain.data);
}
END_TEST

/* While a thread makes the chunk the pass needs next, the pass makes a
 * later one rather than wait idle, so that the threads never bound a pass
 * that applies faster than they make chunks (each chunk of a zstd trace
 * costs a thread its decompression and parse, the pass only the events'
 * application).  Which chunk a thread is inside when the pass arrives is
 * the scheduler's, so the trace is read a few times: one read that never
 * catches a thread inside the chunk it needs is chance, all of them is the
 * pass waiting idle. */
START_TEST(test_while_a_thread_makes_the_chunk_the_pass_needs_it_makes_a_later_one)
{
	mt_test_bytes_t plain, z;
	mt_ahead_stats_t d;
	uint64_t made = 0, one[6];
	char *path;
	int tries = 0;

	if (mt_test_cpus() < 2) {
		MT_TEST_SKIP("a thread and the pass need two CPUs to overlap (%d)",
			     mt_test_cpus());
		return;
	}
	plain = gen_trace(EVENTS * 4);
	z = zstd_frames(&plain, MT_AHEAD_CHUNK - (8u << 10));
	path = write_trace(mt_test_scratch(), "t.jsonl.zst", &z);
	run_counted(path, 1, &d, one);
	ck_assert_uint_gt(one[0], EVENTS * 3);
	for (; tries < 20 && !made; tries++) {
		uint64_t two[6];

		run_counted(path, 2, &d, two);
		/* Whoever made a chunk, the pass applies the same. */
		ck_assert_mem_eq(two, one, sizeof(one));
		made = d.chunks_while_waiting;
		ck_assert_uint_le(made, d.chunks);
	}
	mt_quiet(made > 0, "the pass waited idle through %d reads", tries);
	free(path);
	free(z.data);
	free(plain.data);
}
END_TEST

/* --threads takes 1 to 256. */
START_TEST(test_threads_must_be_a_count_from_1_to_256)
{
	char *path = mt_test_fixture("traces/complete.jsonl");
	static const char *const bad[] = { "0", "257", "two", "" };
	mt_test_run_t r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mt_test_memtrace_in(&r, NULL, "summary", path, "--threads", bad[i], NULL);
		ck_assert_int_eq(r.status, 64);
		mt_quiet(strstr(r.err, "--threads needs a number from 1 to 256") != NULL,
			 "--threads %s: %s", bad[i], r.err);
		mt_test_run_release(&r);
	}
	mt_test_memtrace_in(&r, NULL, "summary", path, "--threads", "256", NULL);
	ck_assert_int_eq(r.status, 0);
	mt_test_run_release(&r);
	free(path);
}
END_TEST

Suite *mt_suite_ahead(void)
{
	Suite *s = suite_create("ahead");
	TCase *tc = tcase_create("threads");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_every_command_gives_the_same_on_1_2_and_8_threads_of_a_plain_trace);
	tcase_add_test(tc, test_every_command_gives_the_same_on_1_2_and_8_threads_of_a_zstd_trace);
	tcase_add_test(tc, test_frames_cut_inside_lines_or_one_whole_frame_read_the_same);
	tcase_add_test(tc, test_every_fixture_gives_the_same_on_1_2_and_8_threads);
	tcase_add_test(tc, test_a_trace_the_collector_wrote_in_many_frames_reads_the_same);
	tcase_add_test(tc, test_a_malformed_line_in_a_late_chunk_says_the_same);
	tcase_add_test(tc, test_a_late_corrupt_or_cut_frame_or_zero_bytes_say_the_same);
	tcase_add_test(tc, test_frames_under_a_chunk_are_a_chunk_each_and_n_threads_hold_n_1);
	tcase_add_test(tc, test_two_threads_start_one_that_makes_chunks_and_one_starts_none);
	tcase_add_test(tc, test_while_a_thread_makes_the_chunk_the_pass_needs_it_makes_a_later_one);
	tcase_add_test(tc, test_threads_must_be_a_count_from_1_to_256);
	suite_add_tcase(s, tc);
	return s;
}
