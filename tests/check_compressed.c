/*
 * check_compressed: compressed traces (format.md section 2.1;
 * docs/commands.md, "Reading traces"; docs/decisions.md, "Reading traces").
 *
 * Every command tells a zstd or gzip trace by its first bytes, whatever
 * its name, and reads it in the one streaming pass it reads a plain one
 * in, with the same results byte for byte.  A stream cut inside a frame
 * is a cut-off trace (missing_stop_event, every event of the whole frames
 * kept); data the decoder refuses is not valid evidence (exit 2).
 *
 * The compressed traces are made here, with libzstd and zlib, from the
 * fixtures' plain traces and from a generated one, so that each test
 * says how its bytes are laid out (frames, members, where a cut falls).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "mt_test.h"
#include "../analyzer/model/mt_analysis.h"
#include "../analyzer/read/mt_decomp.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/base/mt_mem.h"

/* ---- traces ---- */

/*
 * A complete trace of events lines (trace.start and trace.stop included):
 * frames, stacks, then allocations, resizes and frees of two threads, with
 * every tenth block left live; the lines vary in length and content so
 * that a compressor has work to do.
 */
static mt_test_bytes_t gen_trace(uint64_t events)
{
	mt_test_bytes_t b = { 0 };
	uint64_t seq, ptr = 0x7f0000001000ull, live[8] = { 0 };
	unsigned nlive = 0;

	seq = mt_test_bytes_add_trace_head(&b, "");
	while (seq < events) {
		uint64_t size = 16 + (seq * 2654435761u) % 4000;
		unsigned tid = 100 + (unsigned)(seq % 2);

		if (nlive == 8 || (nlive && seq % 3 == 0)) {
			uint64_t p = live[--nlive];

			if (seq % 7 == 0)
				mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"resize\",\"allocator_id\":0,"
					 "\"ptr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64 ",\"fn\":\"realloc\","
					 "\"stack\":2,\"tid\":%u,\"t\":%" PRIu64 "}\n",
				     seq, p, size, tid, seq * 37);
			else if (seq % 10 == 1)
				mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\",\"allocator_id\":0,"
					 "\"ptr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64 ",\"fn\":\"calloc\","
					 "\"stack\":1,\"tid\":%u,\"t\":%" PRIu64 "}\n",
				     seq, ptr += 0x1000, size, tid, seq * 37);
			else
				mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\",\"allocator_id\":0,"
					 "\"ptr\":\"0x%" PRIx64 "\",\"fn\":\"free\",\"tid\":%u,\"t\":%" PRIu64 "}\n",
				     seq, p, tid, seq * 37);
			if (seq % 7 == 0)
				nlive++;
		} else {
			live[nlive++] = ptr += 0x1000;
			mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\",\"allocator_id\":0,"
				 "\"ptr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64 ",\"fn\":\"malloc\","
				 "\"stack\":%d,\"tid\":%u,\"t\":%" PRIu64 "}\n",
			     seq, ptr, size, 1 + (int)(seq % 2), tid, seq * 37);
		}
		seq++;
	}
	mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\",\"reason\":\"exit\",\"t\":%" PRIu64 "}\n",
	     seq, seq * 37);
	return b;
}

static mt_test_bytes_t fixture(const char *name)
{
	char *path = mt_test_fixture(name);
	mt_test_bytes_t b = { 0 };

	b.data = mt_test_read(path, &b.len);
	mt_quiet(b.data != NULL, "cannot read %s", path);
	b.cap = b.len;
	free(path);
	return b;
}

/* The offset just past line n (n >= 1) of a plain trace. */
static size_t line_end(const mt_test_bytes_t *plain, size_t n)
{
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		const char *nl = memchr(plain->data + at, '\n', plain->len - at);

		mt_quiet_ptr_nonnull(nl);
		at = (size_t)(nl - plain->data) + 1;
	}
	return at;
}

static size_t count_lines(const char *p, size_t n)
{
	size_t lines = 0;

	for (size_t i = 0; i < n; i++)
		lines += p[i] == '\n';
	return lines;
}

/* ---- compressing ---- */

/* Whether zstd_frames() writes content checksums (libzstd's default is
 * not to; zstd(1)'s is to). */
static int zstd_checksums = 1;

/*
 * plain compressed as zstd frames of lines_per_frame lines each (0: one
 * frame), with content checksums unless zstd_checksums is 0.  ends[k]
 * (when given, room for every frame) is where frame k ends.
 */
static mt_test_bytes_t zstd_frames(const mt_test_bytes_t *plain, size_t lines_per_frame,
			   size_t *ends, size_t *nframes)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	mt_test_bytes_t z = { 0 };
	size_t at = 0, k = 0;

	mt_quiet_ptr_nonnull(c);
	mt_quiet(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag,
						      zstd_checksums)),
		 "ZSTD_c_checksumFlag");
	mt_quiet(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3)),
		 "ZSTD_c_compressionLevel");
	while (at < plain->len) {
		size_t end = plain->len, bound, got;

		if (lines_per_frame) {
			size_t n = 0;

			for (end = at; end < plain->len && n < lines_per_frame; end++)
				n += plain->data[end] == '\n';
		}
		bound = ZSTD_compressBound(end - at);
		if (z.len + bound > z.cap) {
			z.cap = (z.len + bound) * 2;
			z.data = realloc(z.data, z.cap);
			mt_quiet_ptr_nonnull(z.data);
		}
		got = ZSTD_compress2(c, z.data + z.len, bound, plain->data + at, end - at);
		mt_quiet(!ZSTD_isError(got), "ZSTD_compress2: %s", ZSTD_getErrorName(got));
		z.len += got;
		if (ends)
			ends[k] = z.len;
		k++;
		at = end;
	}
	if (nframes)
		*nframes = k;
	ZSTD_freeCCtx(c);
	return z;
}

/* plain as gzip members of lines_per_member lines each (0: one member),
 * as gzip(1) writes them and `cat a.gz b.gz` joins them. */
static mt_test_bytes_t gzip_members(const mt_test_bytes_t *plain, size_t lines_per_member)
{
	mt_test_bytes_t z = { 0 };
	size_t at = 0;

	while (at < plain->len) {
		z_stream s;
		size_t end = plain->len, bound;

		if (lines_per_member) {
			size_t n = 0;

			for (end = at; end < plain->len && n < lines_per_member; end++)
				n += plain->data[end] == '\n';
		}
		memset(&s, 0, sizeof(s));
		mt_quiet_int_eq(deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
					     Z_DEFAULT_STRATEGY), Z_OK);
		bound = deflateBound(&s, (uLong)(end - at));
		if (z.len + bound > z.cap) {
			z.cap = (z.len + bound) * 2;
			z.data = realloc(z.data, z.cap);
			mt_quiet_ptr_nonnull(z.data);
		}
		s.next_in = (Bytef *)(plain->data + at);
		s.avail_in = (uInt)(end - at);
		s.next_out = (Bytef *)(z.data + z.len);
		s.avail_out = (uInt)bound;
		mt_quiet_int_eq(deflate(&s, Z_FINISH), Z_STREAM_END);
		z.len += bound - s.avail_out;
		deflateEnd(&s);
		at = end;
	}
	return z;
}

/* ---- running memtrace ---- */

static void put(const char *dir, const char *name, const void *data, size_t len)
{
	char *p = mt_test_path(dir, name);

	mt_test_write(p, data, len);
	free(p);
}

/* memtrace ARGS... (NULL-terminated) in dir. */
#define memtrace_in(r, dir, ...) mt_test_memtrace_in(r, dir, __VA_ARGS__, NULL)

/* The output of `memtrace summary NAME --top 20` in dir: it must exit
 * with status. */
static char *summary_of(const char *dir, const char *name, int status)
{
	mt_test_run_t r;
	char *out;

	memtrace_in(&r, dir, "summary", name, "--top", "20");
	mt_quiet(r.status == status, "summary %s exits %d, not %d: %s", name,
		 r.status, status, r.err);
	out = strdup(r.out);
	mt_test_run_release(&r);
	return out;
}

static void assert_same_summary(const char *dir, const char *plain,
				const char *compressed)
{
	char *want = summary_of(dir, plain, 0);
	char *got = summary_of(dir, compressed, 0);

	mt_quiet(strlen(want) > 100, "summary of %s: %s", plain, want);
	mt_quiet(!strcmp(want, got), "summary of %s:\n%s\nof %s:\n%s", plain,
		 want, compressed, got);
	free(want);
	free(got);
}

/* The events the summary of name counts, and its status. */
static uint64_t summary_events(const char *dir, const char *name, int status,
			       const char *want_status)
{
	mt_test_run_t r;
	json_object *o;
	uint64_t events;

	memtrace_in(&r, dir, "summary", name, "--top", "0");
	mt_quiet(r.status == status, "summary %s exits %d, not %d: %s", name,
		 r.status, status, r.err);
	o = json_tokener_parse(r.out);
	mt_quiet_ptr_nonnull(o);
	mt_quiet(!strcmp(mt_test_json_str(o, "status"), want_status),
		 "status %s, not %s", mt_test_json_str(o, "status"), want_status);
	events = mt_test_json_u64(o, "events");
	json_object_put(o);
	mt_test_run_release(&r);
	return events;
}

/* `memtrace check` and `summary` of name in dir refuse it as not valid
 * evidence (exit 2), saying why_part; check's verdict says it too. */
static void assert_not_evidence(const char *dir, const char *name,
				const char *why_part)
{
	mt_test_run_t r;
	json_object *o;

	memtrace_in(&r, dir, "check", name);
	mt_quiet(r.status == MT_EXIT_INVALID, "check %s exits %d: %s%s", name,
		 r.status, r.out, r.err);
	o = json_tokener_parse(r.out);
	mt_quiet(o != NULL, "check %s printed %s", name, r.out);
	mt_quiet(!strcmp(mt_test_json_str(o, "status"), "invalid"),
		 "check %s: %s", name, r.out);
	mt_quiet(strstr(mt_test_json_str(o, "message"), why_part) != NULL,
		 "check %s: the message lacks '%s': %s", name, why_part, r.out);
	json_object_put(o);
	mt_test_run_release(&r);

	memtrace_in(&r, dir, "summary", name);
	mt_quiet(r.status == MT_EXIT_INVALID, "summary %s exits %d: %s", name,
		 r.status, r.err);
	mt_quiet_uint_eq(r.out_len, 0);
	{
		char want[256];

		snprintf(want, sizeof(want),
			 "memtrace: '%s' is not valid memtrace evidence: ", name);
		mt_quiet(!strncmp(r.err, want, strlen(want)) &&
				 strstr(r.err, why_part) &&
				 count_lines(r.err, r.err_len) == 1,
			 "summary %s says: %s", name, r.err);
	}
	mt_test_run_release(&r);
}

/* ---- one command, every command ---- */

START_TEST(test_summary_of_a_zstd_trace_is_the_plain_traces_byte_for_byte)
{
	char *dir = mt_test_scratch();
	const char *names[] = { "traces/complete.jsonl", "demo.jsonl",
				"traces/several_caveats.jsonl" };
	mt_test_bytes_t big = gen_trace(200000);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		mt_test_bytes_t plain = fixture(names[i]), z = zstd_frames(&plain, 0, NULL, NULL);

		put(dir, "t.jsonl", plain.data, plain.len);
		put(dir, "t.jsonl.zst", z.data, z.len);
		assert_same_summary(dir, "t.jsonl", "t.jsonl.zst");
		free(plain.data);
		free(z.data);
	}
	/* Some MiB: the decoder's output crosses the reader's buffers. */
	{
		mt_test_bytes_t z = zstd_frames(&big, 0, NULL, NULL);

		mt_quiet_uint_gt(big.len, 8u << 20);
		put(dir, "big.jsonl", big.data, big.len);
		put(dir, "big.jsonl.zst", z.data, z.len);
		assert_same_summary(dir, "big.jsonl", "big.jsonl.zst");
		free(z.data);
	}
	free(big.data);
}
END_TEST

START_TEST(test_summary_of_a_gzip_trace_is_the_plain_traces_byte_for_byte)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = fixture("traces/complete.jsonl"), z = gzip_members(&plain, 0);
	mt_test_bytes_t big = gen_trace(200000), bz = gzip_members(&big, 0);

	put(dir, "t.jsonl", plain.data, plain.len);
	put(dir, "t.jsonl.gz", z.data, z.len);
	assert_same_summary(dir, "t.jsonl", "t.jsonl.gz");
	put(dir, "big.jsonl", big.data, big.len);
	put(dir, "big.jsonl.gz", bz.data, bz.len);
	assert_same_summary(dir, "big.jsonl", "big.jsonl.gz");
	free(plain.data);
	free(z.data);
	free(big.data);
	free(bz.data);
}
END_TEST

/* Each command's output, exit status and files, run in a directory of
 * its own where the trace is named "t": plain in one, zstd in the other,
 * gzip in a third. */
START_TEST(test_every_command_reads_a_compressed_trace_as_the_plain_one)
{
	static const char *const cmds[][8] = {
		{ "check", "t" },
		{ "summary", "t", "--top", "3" },
		{ "capture", "--capture", "t", "--summary", "s.jsonl", "--append", "c.jsonl" },
		{ "repetition", "--capture", "t", "--out", "r.jsonl", "--index", "1" },
		{ "report", "t", "--top", "2" },
		{ "flamegraph", "t", "--metric", "bytes" },
		{ "plot", "t", "-o", "heap.svg" },
		{ "gate", "t", "--max-peak", "1M", "--max-live", "0" },
		{ "diff", "t", "t" },
	};
	static const char *const files[] = { "s.jsonl", "c.jsonl", "r.jsonl", "heap.svg" };
	mt_test_bytes_t plain = fixture("demo.jsonl");
	mt_test_bytes_t zs = zstd_frames(&plain, 7, NULL, NULL), gz = gzip_members(&plain, 0);
	char *dirs[3];
	const mt_test_bytes_t *data[3] = { &plain, &zs, &gz };

	for (int d = 0; d < 3; d++) {
		dirs[d] = mt_test_scratch();
		put(dirs[d], "t", data[d]->data, data[d]->len);
	}
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		mt_test_run_t want, got;
		const char *args[9] = { 0 };

		for (int i = 0; i < 8 && cmds[c][i]; i++)
			args[i] = cmds[c][i];
		mt_test_memtrace_in_argv(&want, dirs[0], NULL, args);
		mt_quiet(want.status == 0 || want.status == 1,
			 "%s of the plain trace exits %d: %s", args[0],
			 want.status, want.err);
		for (int d = 1; d < 3; d++) {
			mt_test_memtrace_in_argv(&got, dirs[d], NULL, args);
			mt_quiet(got.status == want.status && !strcmp(got.out, want.out) &&
					 !strcmp(got.err, want.err),
				 "%s of the %s trace: exit %d, %s%s; of the plain one: "
				 "exit %d, %s%s", args[0], d == 1 ? "zstd" : "gzip",
				 got.status, got.out, got.err, want.status, want.out,
				 want.err);
			mt_test_run_release(&got);
		}
		mt_test_run_release(&want);
	}
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char *p0 = mt_test_path(dirs[0], files[f]);
		size_t n0;
		char *want = mt_test_read(p0, &n0);

		mt_quiet(want != NULL, "no %s", files[f]);
		for (int d = 1; d < 3; d++) {
			char *p = mt_test_path(dirs[d], files[f]);
			size_t n;
			char *got = mt_test_read(p, &n);

			mt_quiet(got && n == n0 && !memcmp(got, want, n),
				 "%s differs in the %s run", files[f],
				 d == 1 ? "zstd" : "gzip");
			free(got);
			free(p);
		}
		free(want);
		free(p0);
	}
	free(plain.data);
	free(zs.data);
	free(gz.data);
}
END_TEST

/* ---- the decoder alone ---- */

/* A compressed file in memory, handed out at most step bytes a read. */
typedef struct {
	const mt_test_bytes_t *z;
	size_t at, step;
} source_t;

static ssize_t source_read(void *ctx, void *p, size_t n)
{
	source_t *s = ctx;
	size_t k = s->z->len - s->at;

	if (k > n)
		k = n;
	if (k > s->step)
		k = s->step;
	memcpy(p, s->z->data + s->at, k);
	s->at += k;
	return (ssize_t)k;
}

/*
 * Whatever room each call gives it and however the file's reads split its
 * bytes, the decoder gives back the plain bytes, all of them, then 0: a
 * full room may leave decoded bytes inside the decoder after it took all
 * its input, and they must still come out before the end.
 */
START_TEST(test_the_decoders_give_every_byte_whatever_the_room)
{
	mt_test_bytes_t plain = gen_trace(3000);
	mt_test_bytes_t z = zstd_frames(&plain, 700, NULL, NULL), g = gzip_members(&plain, 900);
	mt_test_bytes_t zn;
	const mt_test_bytes_t *packed[] = { &z, &zn, &g };
	const mt_decomp_format_t formats[] = { MT_DECOMP_ZSTD, MT_DECOMP_ZSTD,
					       MT_DECOMP_GZIP };
	static const size_t rooms[] = { 1, 7, 4096, 100000, 1u << 21 };
	static const size_t steps[] = { 1, 5, 65536, MT_DECOMP_IN };
	char *out = malloc(plain.len + 1);

	/* Without checksums a frame ends with its last block, and no byte
	 * of the stream may follow what the decoder still owes. */
	zstd_checksums = 0;
	zn = zstd_frames(&plain, 700, NULL, NULL);
	zstd_checksums = 1;
	mt_quiet_ptr_nonnull(out);
	for (int f = 0; f < 3; f++) {
		mt_quiet_int_eq(mt_decomp_sniff(packed[f]->data, 4), formats[f]);
		for (size_t ri = 0; ri < sizeof(rooms) / sizeof(rooms[0]); ri++)
			for (size_t si = 0; si < sizeof(steps) / sizeof(steps[0]); si++) {
				source_t src = { packed[f], 0, steps[si] };
				mt_decomp_t *d;
				size_t have = 0;
				ssize_t got;
				uint64_t at;

				if (rooms[ri] < 4096 && steps[si] < 4096 && plain.len > 100000)
					continue; /* a byte at a time both ways: slow */
				mt_quiet_int_eq(mt_decomp_open(&d, formats[f], NULL, 0), MT_OK);
				while ((got = mt_decomp_read(d, source_read, &src, out + have,
							     rooms[ri] < plain.len + 1 - have ?
								     rooms[ri] : plain.len + 1 - have)) > 0)
					have += (size_t)got;
				mt_quiet(got == 0, "%s, room %zu, reads of %zu: %zd: %s",
					 mt_decomp_name(formats[f]), rooms[ri], steps[si],
					 got, mt_decomp_why(d));
				mt_quiet(have == plain.len && !memcmp(out, plain.data, have),
					 "%s, room %zu, reads of %zu: %zu bytes of %zu",
					 mt_decomp_name(formats[f]), rooms[ri], steps[si],
					 have, plain.len);
				mt_quiet(!mt_decomp_cut(d, &at), "cut at %" PRIu64, at);
				mt_quiet_int_eq(mt_decomp_read(d, source_read, &src, out, 10), 0);
				mt_decomp_free(d);
			}
	}
	free(out);
	free(plain.data);
	free(z.data);
	free(zn.data);
	free(g.data);
}
END_TEST

/* ---- frames and members ---- */

START_TEST(test_a_zstd_trace_of_many_frames_reads_whole)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t big = gen_trace(60000);
	size_t nframes;
	/* 1 line a frame, then 1000: frames far smaller than the reader's
	 * reads, and frames that span several. */
	mt_test_bytes_t one = zstd_frames(&big, 1, NULL, &nframes);
	mt_test_bytes_t many = zstd_frames(&big, 1000, NULL, NULL);

	mt_quiet_uint_eq(nframes, 60000);
	put(dir, "t.jsonl", big.data, big.len);
	put(dir, "one.zst", one.data, one.len);
	put(dir, "many.zst", many.data, many.len);
	assert_same_summary(dir, "t.jsonl", "one.zst");
	assert_same_summary(dir, "t.jsonl", "many.zst");
	free(big.data);
	free(one.data);
	free(many.data);
}
END_TEST

START_TEST(test_a_gzip_trace_of_many_members_reads_whole)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t big = gen_trace(60000);
	mt_test_bytes_t z = gzip_members(&big, 777);

	put(dir, "t.jsonl", big.data, big.len);
	put(dir, "t.gz", z.data, z.len);
	assert_same_summary(dir, "t.jsonl", "t.gz");
	free(big.data);
	free(z.data);
}
END_TEST

/* ---- cut off ---- */

/*
 * A trace killed mid-frame: frames of 40 lines, each one block (a block
 * decodes whole or not at all), then the frame's 4-byte checksum.  Cut
 * at every byte of a frame in the middle and of the last one, the trace
 * keeps every line of the whole frames before the cut, and the cut
 * frame's too once its block is whole (only the checksum is missing), and
 * is missing_stop_event, even when the last frame's trace.stop was
 * decoded (docs/decisions.md).  In process, as the commands read it.
 */
START_TEST(test_a_zstd_trace_cut_mid_frame_keeps_every_event_of_its_whole_frames)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "cut.jsonl.zst");
	mt_test_bytes_t plain = gen_trace(400);
	size_t ends[32], nframes;
	mt_test_bytes_t z = zstd_frames(&plain, 40, ends, &nframes);
	const size_t frames_cut[] = { 4, nframes - 1 };

	mt_quiet_uint_eq(nframes, 10);
	for (size_t i = 0; i < 2; i++) {
		size_t k = frames_cut[i];

		for (size_t cut = ends[k - 1] + 1; cut < ends[k]; cut++) {
			uint64_t want = 40 * (k + (cut >= ends[k] - 4));
			mt_analysis_t a;
			int rc;

			mt_test_write(path, z.data, cut);
			rc = mt_analysis_run(&a, path);
			mt_quiet(rc == MT_OK, "cut at %zu: rc %d", cut, rc);
			mt_quiet(!a.integrity.invalid, "cut at %zu: invalid: %s", cut,
				 a.integrity.invalid_message);
			mt_quiet(!strcmp(mt_integrity_status(&a.integrity),
					 "missing_stop_event"),
				 "cut at %zu: %s", cut, mt_integrity_status(&a.integrity));
			mt_quiet(a.heap.events == want, "cut at %zu (frame %zu, ends at "
				 "%zu): %" PRIu64 " events, not %" PRIu64, cut, k,
				 ends[k], a.heap.events, want);
			mt_analysis_release(&a);
		}
	}
	/* And through the commands: check exits 1 and says where the
	 * stream is cut; the summary counts the whole frames' events. */
	mt_test_write(path, z.data, ends[6] + 5);
	{
		mt_test_run_t r;
		char want[160];

		snprintf(want, sizeof(want), "no trace.stop after line 280: the "
			 "zstd stream is cut off inside its frame at byte %zu; the "
			 "process may have been killed", ends[6]);
		memtrace_in(&r, dir, "check", "cut.jsonl.zst");
		mt_quiet(r.status == MT_EXIT_CAVEATED &&
				 strstr(r.out, "\"status\":\"missing_stop_event\"") &&
				 strstr(r.out, want),
			 "check exits %d: %s%s", r.status, r.out, r.err);
		mt_test_run_release(&r);
	}
	mt_quiet_uint_eq(summary_events(dir, "cut.jsonl.zst", 0, "missing_stop_event"), 280);
	/* Cut in the last frame's checksum: trace.stop decoded, yet the
	 * stream never ended. */
	mt_test_write(path, z.data, ends[9] - 2);
	{
		mt_test_run_t r;

		memtrace_in(&r, dir, "check", "cut.jsonl.zst");
		mt_quiet(r.status == MT_EXIT_CAVEATED &&
				 strstr(r.out, "\"status\":\"missing_stop_event\"") &&
				 strstr(r.out, "the trace never ended whole, whatever its "
					       "trace.stop at line 400 says"),
			 "check exits %d: %s%s", r.status, r.out, r.err);
		mt_test_run_release(&r);
	}
	free(plain.data);
	free(z.data);
	free(path);
}
END_TEST

/* A frame whose content ends inside a line (the preload flushes at line
 * ends, but a stream may be cut after any block): the part-line is the
 * cut-off last line, dropped as a plain trace's is. */
START_TEST(test_a_zstd_trace_cut_inside_a_line_drops_that_line)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = fixture("traces/complete.jsonl");
	size_t half = line_end(&plain, 5) + 10;
	mt_test_bytes_t head = { plain.data, half, half };
	mt_test_bytes_t z = zstd_frames(&head, 0, NULL, NULL);
	mt_test_run_t r;

	put(dir, "t.zst", z.data, z.len);
	memtrace_in(&r, dir, "check", "t.zst");
	mt_quiet(r.status == MT_EXIT_CAVEATED &&
			 strstr(r.out, "\"status\":\"missing_stop_event\"") &&
			 strstr(r.out, "last line 6, which has no newline, was dropped"),
		 "check exits %d: %s%s", r.status, r.out, r.err);
	mt_test_run_release(&r);
	mt_quiet_uint_eq(summary_events(dir, "t.zst", 0, "missing_stop_event"), 5);
	free(plain.data);
	free(z.data);
}
END_TEST

/* gzip decodes as it goes, inside a member too: a cut member keeps the
 * lines its bytes decode to, never more than the trace holds. */
START_TEST(test_a_gzip_trace_cut_mid_member_is_missing_stop_event)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = gen_trace(20000);
	mt_test_bytes_t z = gzip_members(&plain, 5000);
	uint64_t events;

	put(dir, "t.gz", z.data, z.len * 3 / 4);
	events = summary_events(dir, "t.gz", 0, "missing_stop_event");
	mt_quiet(events >= 10000 && events < 20000, "%" PRIu64 " events", events);
	free(plain.data);
	free(z.data);
}
END_TEST

/* ---- corrupt ---- */

START_TEST(test_a_zstd_trace_with_a_bad_checksum_is_not_valid_evidence)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = gen_trace(2000);
	size_t ends[8], nframes;
	mt_test_bytes_t z = zstd_frames(&plain, 500, ends, &nframes);

	/* The last 4 bytes of frame 2 are its content checksum. */
	z.data[ends[1] - 1] ^= 0x5a;
	put(dir, "t.jsonl.zst", z.data, z.len);
	{
		char why[128];

		snprintf(why, sizeof(why),
			 "the zstd frame at byte %zu is corrupt: Restored data "
			 "doesn't match checksum", ends[0]);
		assert_not_evidence(dir, "t.jsonl.zst", why);
	}
	free(plain.data);
	free(z.data);
}
END_TEST

START_TEST(test_a_gzip_trace_with_a_bad_crc_is_not_valid_evidence)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = fixture("demo.jsonl");
	mt_test_bytes_t z = gzip_members(&plain, 0);

	z.data[z.len - 6] ^= 0x01; /* the trailer: CRC-32, then the length */
	put(dir, "t.gz", z.data, z.len);
	assert_not_evidence(dir, "t.gz",
			    "the gzip member at byte 0 is corrupt: incorrect data check");
	free(plain.data);
	free(z.data);
}
END_TEST

START_TEST(test_garbage_after_the_magic_is_not_valid_evidence)
{
	char *dir = mt_test_scratch();
	static const char zstd_bad[] = "\x28\xb5\x2f\xfd" "this is no frame header at all\n";
	static const char gzip_bad[] = "\x1f\x8b" "this is no gzip header\n";

	put(dir, "a.jsonl", zstd_bad, sizeof(zstd_bad) - 1);
	put(dir, "b.jsonl", gzip_bad, sizeof(gzip_bad) - 1);
	assert_not_evidence(dir, "a.jsonl", "the zstd frame at byte 0 is corrupt: ");
	assert_not_evidence(dir, "b.jsonl", "the gzip member at byte 0 is corrupt: ");
}
END_TEST

START_TEST(test_bytes_after_the_last_whole_frame_that_begin_no_frame_are_not_valid_evidence)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = fixture("demo.jsonl");
	mt_test_bytes_t z = zstd_frames(&plain, 0, NULL, NULL), g = gzip_members(&plain, 0);
	char why[128];

	mt_test_bytes_add(&z, "{\"v\":1}\n", 8);
	mt_test_bytes_add(&g, "\0\0\0junk", 7);
	put(dir, "t.zst", z.data, z.len);
	put(dir, "t.gz", g.data, g.len);
	snprintf(why, sizeof(why), "the bytes at byte %zu, after the last whole "
		 "zstd frame, are not a zstd frame", z.len - 8);
	assert_not_evidence(dir, "t.zst", why);
	snprintf(why, sizeof(why), "the bytes at byte %zu, after the last whole "
		 "gzip member, are not a gzip member", g.len - 4);
	assert_not_evidence(dir, "t.gz", why);
	free(plain.data);
	free(z.data);
	free(g.data);
}
END_TEST

/* As in a plain trace (decisions.md): NUL bytes after the last whole
 * frame are padding, and the verdict is the trace's. */
START_TEST(test_nul_bytes_after_the_last_whole_frame_are_padding)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = fixture("traces/complete.jsonl");
	mt_test_bytes_t z = zstd_frames(&plain, 0, NULL, NULL);
	static const char zeros[5000];
	mt_test_run_t r;

	mt_test_bytes_add(&z, zeros, sizeof(zeros));
	put(dir, "t.jsonl", plain.data, plain.len);
	put(dir, "t.zst", z.data, z.len);
	assert_same_summary(dir, "t.jsonl", "t.zst");
	memtrace_in(&r, dir, "check", "t.zst");
	mt_quiet(r.status == 0 && strstr(r.out, "\"status\":\"complete\""),
		 "check exits %d: %s", r.status, r.out);
	mt_test_run_release(&r);
	free(plain.data);
	free(z.data);
}
END_TEST

/* ---- stdin, names ---- */

START_TEST(test_a_compressed_trace_on_stdin_reads_as_from_a_file)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t big = gen_trace(50000);
	mt_test_bytes_t z = zstd_frames(&big, 3000, NULL, NULL), g = gzip_members(&big, 0);
	char *memtrace = mt_test_memtrace();
	char *want;
	const char *names[] = { "t.zst", "t.gz" };

	put(dir, "t.jsonl", big.data, big.len);
	put(dir, "t.zst", z.data, z.len);
	put(dir, "t.gz", g.data, g.len);
	want = summary_of(dir, "t.jsonl", 0);
	for (int i = 0; i < 2; i++) {
		/* A pipe (its first bytes cannot be read twice), then a
		 * redirected file. */
		static const char *const scripts[] = {
			"cd \"$1\" && cat \"$2\" | \"$0\" summary - --top 20",
			"cd \"$1\" && \"$0\" summary - --top 20 < \"$2\"",
		};

		for (int s = 0; s < 2; s++) {
			char *argv[] = { "/bin/sh", "-c", (char *)scripts[s], memtrace,
					 dir, (char *)names[i], NULL };
			mt_test_run_t r;

			mt_test_run(&r, argv, NULL);
			mt_quiet(r.status == 0 && !strcmp(r.out, want),
				 "%s on stdin (%s): exit %d: %s%s", names[i],
				 s ? "redirected" : "piped", r.status, r.out, r.err);
			mt_test_run_release(&r);
		}
	}
	free(want);
	free(memtrace);
	free(big.data);
	free(z.data);
	free(g.data);
}
END_TEST

START_TEST(test_a_plain_trace_named_zst_is_read_as_plain)
{
	char *dir = mt_test_scratch();
	mt_test_bytes_t plain = fixture("demo.jsonl");
	mt_test_bytes_t z = zstd_frames(&plain, 0, NULL, NULL);

	put(dir, "t.jsonl", plain.data, plain.len);
	put(dir, "plain.jsonl.zst", plain.data, plain.len);
	put(dir, "plain.gz", plain.data, plain.len);
	put(dir, "zstd.jsonl", z.data, z.len); /* and the other way round */
	assert_same_summary(dir, "t.jsonl", "plain.jsonl.zst");
	assert_same_summary(dir, "t.jsonl", "plain.gz");
	assert_same_summary(dir, "t.jsonl", "zstd.jsonl");
	free(plain.data);
	free(z.data);
}
END_TEST

/* ---- memory ---- */

/*
 * memtrace's own peak RSS.  A child's ru_maxrss counts what it held before
 * exec, a copy of its parent's (the test process: hundreds of MB under
 * ASan), so memtrace runs under a launcher, this very binary freshly
 * exec'd, which forks it, waits for it and writes its ru_maxrss to the
 * file MT_COMPRESSED_RSS_TO names (as check_hostile.c measures).  glibc
 * passes argc and argv to constructors.
 */
__attribute__((constructor)) static void compressed_rss_launcher(int argc,
								  char **argv)
{
	const char *to = getenv("MT_COMPRESSED_RSS_TO");
	struct rusage ru;
	int status, fd, n;
	char num[32];
	pid_t pid;

	if (!to || argc < 2)
		return;
	pid = fork();
	if (pid < 0)
		_exit(125);
	if (pid == 0) {
		unsetenv("MT_COMPRESSED_RSS_TO");
		execv(argv[1], argv + 1);
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			_exit(125);
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	n = snprintf(num, sizeof(num), "%ld\n", ru.ru_maxrss);
	if (fd < 0 || write(fd, num, (size_t)n) != n)
		_exit(125);
	close(fd);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/*
 * 256 MiB of trace in a zstd stream of about 50 KB (the same 1 MiB of
 * alloc and free lines, frame after frame): memtrace's peak RSS stays far
 * below it (8 MB here, 17 under the sanitizers).  The lines repeat their
 * seq, so the verdict is sequence_gap; only the memory is asserted.
 */
START_TEST(test_a_compressed_trace_is_read_in_bounded_memory)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "huge.zst"), *memtrace = mt_test_memtrace();
	char *rss = mt_test_path(dir, "rss"), *rss_text;
	mt_test_bytes_t chunk = { 0 }, head = { 0 }, z1, z0;
	FILE *f;
	int status;
	long kb;
	pid_t pid;

	mt_test_bytes_addf(&head, "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n"
		    "{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n");
	while (chunk.len < (1u << 20))
		mt_test_bytes_addf(&chunk, "{\"v\":1,\"seq\":3,\"kind\":\"alloc\",\"allocator_id\":0,"
			     "\"ptr\":\"0x1000\",\"size\":64,\"fn\":\"malloc\"}\n"
			     "{\"v\":1,\"seq\":4,\"kind\":\"free\",\"allocator_id\":0,"
			     "\"ptr\":\"0x1000\"}\n");
	z0 = zstd_frames(&head, 0, NULL, NULL);
	z1 = zstd_frames(&chunk, 0, NULL, NULL);
	f = fopen(path, "wb");
	mt_quiet_ptr_nonnull(f);
	fwrite(z0.data, 1, z0.len, f);
	for (int i = 0; i < 256; i++)
		fwrite(z1.data, 1, z1.len, f);
	mt_quiet_int_eq(fclose(f), 0);

	pid = fork();
	mt_quiet(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char *argv[] = { "rss-launcher", memtrace, "summary", path, NULL };
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		setenv("MT_COMPRESSED_RSS_TO", rss, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		mt_quiet_int_eq(errno, EINTR);
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0, "summary: status %d",
		 status);
	rss_text = mt_test_read(rss, NULL);
	mt_quiet_ptr_nonnull(rss_text);
	kb = atol(rss_text);
	/* In KiB: the reader's 3 MiB, the decoder's 1 MiB and window, the
	 * heap's tables, and under the sanitizers their own. */
	mt_quiet(kb > 0 && kb < 64 * 1024, "peak RSS %ld KiB for 256 MiB of trace", kb);
	free(rss_text);
	free(rss);
	free(chunk.data);
	free(head.data);
	free(z0.data);
	free(z1.data);
	free(memtrace);
	free(path);
}
END_TEST

/* Every allocation the pass makes over a gzip trace (zlib's go through
 * mt_mem too) may fail: MT_ENOMEM, nothing leaked, then the same verdict. */
START_TEST(test_every_allocation_failure_on_a_compressed_trace_is_out_of_memory)
{
	char *dir = mt_test_scratch();
	char *gz = mt_test_path(dir, "t.gz"), *zs = mt_test_path(dir, "t.zst");
	mt_test_bytes_t plain = fixture("demo.jsonl");
	mt_test_bytes_t g = gzip_members(&plain, 0), z = zstd_frames(&plain, 4, NULL, NULL);
	const char *paths[] = { gz, zs };

	mt_test_write(gz, g.data, g.len);
	mt_test_write(zs, z.data, z.len);
	for (int i = 0; i < 2; i++) {
		uint64_t n;

		for (n = 1; n < 1000; n++) {
			mt_analysis_t a;
			int64_t before = mt_mem_outstanding();
			int rc;

			mt_mem_fail_at(n, 0);
			rc = mt_analysis_run(&a, paths[i]);
			mt_mem_fail_at(0, 0);
			if (rc == MT_OK)
				mt_quiet(!a.integrity.invalid &&
						 mt_integrity_complete(&a.integrity) &&
						 a.heap.events == 26,
					 "%s, N=%" PRIu64 ": the verdict changed", paths[i], n);
			mt_analysis_release(&a);
			mt_quiet(mt_mem_outstanding() == before, "%s, N=%" PRIu64
				 ": %" PRId64 " blocks leaked", paths[i], n,
				 mt_mem_outstanding() - before);
			mt_quiet(rc == MT_OK || rc == MT_ENOMEM, "%s, N=%" PRIu64
				 ": rc %d", paths[i], n, rc);
			if (rc == MT_OK)
				break;
		}
		mt_quiet(n > 3 && n < 1000, "%s: the sweep ended at %" PRIu64, paths[i], n);
	}
	free(plain.data);
	free(g.data);
	free(z.data);
	free(gz);
	free(zs);
}
END_TEST

Suite *mt_suite_compressed(void)
{
	Suite *s = suite_create("compressed");
	TCase *same = tcase_create("same_as_plain");
	TCase *cut = tcase_create("cut_off");
	TCase *bad = tcase_create("corrupt");
	TCase *mem = tcase_create("memory");

	tcase_add_test(same, test_summary_of_a_zstd_trace_is_the_plain_traces_byte_for_byte);
	tcase_add_test(same, test_summary_of_a_gzip_trace_is_the_plain_traces_byte_for_byte);
	tcase_add_test(same, test_every_command_reads_a_compressed_trace_as_the_plain_one);
	tcase_add_test(same, test_the_decoders_give_every_byte_whatever_the_room);
	tcase_add_test(same, test_a_zstd_trace_of_many_frames_reads_whole);
	tcase_add_test(same, test_a_gzip_trace_of_many_members_reads_whole);
	tcase_add_test(same, test_a_compressed_trace_on_stdin_reads_as_from_a_file);
	tcase_add_test(same, test_a_plain_trace_named_zst_is_read_as_plain);
	tcase_add_test(cut, test_a_zstd_trace_cut_mid_frame_keeps_every_event_of_its_whole_frames);
	tcase_add_test(cut, test_a_zstd_trace_cut_inside_a_line_drops_that_line);
	tcase_add_test(cut, test_a_gzip_trace_cut_mid_member_is_missing_stop_event);
	tcase_add_test(bad, test_a_zstd_trace_with_a_bad_checksum_is_not_valid_evidence);
	tcase_add_test(bad, test_a_gzip_trace_with_a_bad_crc_is_not_valid_evidence);
	tcase_add_test(bad, test_garbage_after_the_magic_is_not_valid_evidence);
	tcase_add_test(bad, test_bytes_after_the_last_whole_frame_that_begin_no_frame_are_not_valid_evidence);
	tcase_add_test(bad, test_nul_bytes_after_the_last_whole_frame_are_padding);
	tcase_add_test(mem, test_a_compressed_trace_is_read_in_bounded_memory);
	tcase_add_test(mem, test_every_allocation_failure_on_a_compressed_trace_is_out_of_memory);
	suite_add_tcase(s, same);
	suite_add_tcase(s, cut);
	suite_add_tcase(s, bad);
	suite_add_tcase(s, mem);
	return s;
}
