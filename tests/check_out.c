/*
 * check_out: the collector's trace file (collector/mt_out): plain and
 * zstd traces read back whole, flushes that make a running trace
 * readable, the names a trace takes, its lock, mark and rewind, a full
 * disk that leaves whole lines and whole frames only, and a zstd trace
 * cut anywhere in its last frame, judged by the analyzer as a cut-off
 * trace that keeps every event of its whole frames.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "mt_test.h"
#include "../analyzer/model/mt_analysis.h"
#include "../analyzer/base/mt_error.h"
#include "../collector/mt_batch.h"
#include "../collector/mt_out.h"

/* Event seq of a trace: an alloc of block seq / 2 when seq is even, its
 * free when odd, so every prefix of whole lines is a valid trace. */
static size_t add_event(mt_test_bytes_t *b, uint64_t seq)
{
	uint64_t ptr = 0x7f0000000000ull + (seq / 2) * 0x40;

	if (seq % 2 == 0)
		return mt_test_bytes_addf(b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\","
			    "\"allocator_id\":0,\"ptr\":\"0x%" PRIx64 "\",\"size\":%"
			    PRIu64 ",\"fn\":\"malloc\",\"tid\":7,\"t\":%" PRIu64 "}\n",
			    seq, ptr, 16 + (seq * 2654435761u) % 4000, seq * 37);
	return mt_test_bytes_addf(b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\","
		    "\"allocator_id\":0,\"ptr\":\"0x%" PRIx64 "\",\"fn\":\"free\","
		    "\"tid\":7,\"t\":%" PRIu64 "}\n", seq, ptr, seq * 37);
}

static void add_head(mt_test_bytes_t *b)
{
	mt_test_bytes_addf(b, "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":42}\n");
	mt_test_bytes_addf(b, "{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n");
}

/* Write the last len bytes of b (one or more whole lines) to o. */
static void out_tail(mt_out_t *o, const mt_test_bytes_t *b, size_t len)
{
	mt_quiet_int_eq(mt_out_write(o, b->data + b->len - len, len), 0);
}

/*
 * Decode a zstd stream into out.  Returns 1 when it ends at the end of a
 * whole frame, 0 when it is cut inside one (out then holds what decoded),
 * -1 when the decoder refuses it.
 */
static int unzstd(const char *z, size_t n, mt_test_bytes_t *out)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	ZSTD_inBuffer in = { z, n, 0 };
	size_t r = 0;
	char buf[1 << 16];
	int rc = 1;

	mt_quiet_ptr_nonnull(d);
	while (in.pos < in.size) {
		ZSTD_outBuffer ob = { buf, sizeof(buf), 0 };

		r = ZSTD_decompressStream(d, &ob, &in);
		if (ZSTD_isError(r)) {
			rc = -1;
			break;
		}
		mt_test_bytes_add(out, buf, ob.pos);
	}
	/* Whatever the decoder still holds of a cut frame. */
	for (;;) {
		ZSTD_outBuffer ob = { buf, sizeof(buf), 0 };

		if (rc < 0 || !r)
			break;
		rc = 0;
		r = ZSTD_decompressStream(d, &ob, &in);
		if (ZSTD_isError(r) || !ob.pos)
			break;
		mt_test_bytes_add(out, buf, ob.pos);
	}
	ZSTD_freeDCtx(d);
	return rc;
}

static mt_test_bytes_t read_back(const char *path)
{
	mt_test_bytes_t b = { 0 };

	b.data = mt_test_read(path, &b.len);
	mt_quiet(b.data != NULL, "cannot read %s", path);
	b.cap = b.len;
	return b;
}

/* The workers for the compressed traces a test opens: the tests of
 * zstd traces run with 0, 1 and 2 (Check's loop index). */
static int out_workers;

/* Open name as mt_out_open does, a compressed trace on out_workers. */
static int open_with_workers(mt_out_t **o, const char *path, int root, char *used,
			     size_t cap)
{
	int rc = mt_out_open(o, path, root, used, cap);

	if (!rc && mt_out_compressed(*o) && out_workers)
		rc = mt_out_set_zstd(*o, MT_OUT_LEVEL, out_workers);
	return rc;
}

static mt_out_t *open_out(const char *path, int root)
{
	char used[4096];
	mt_out_t *o;

	mt_quiet_int_eq(open_with_workers(&o, path, root, used, sizeof(used)), 0);
	mt_quiet(!strcmp(used, path), "opened %s, not %s", used, path);
	return o;
}

START_TEST(test_out_plain_lines_round_trip)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl");
	mt_out_t *o = open_out(path, 1);
	mt_test_bytes_t want = { 0 }, got;
	uint64_t seq;

	mt_quiet_int_eq(mt_out_compressed(o), 0);
	add_head(&want);
	out_tail(o, &want, want.len);
	/* Some MiB, a line at a time and in runs, across the chunks. */
	for (seq = 3; want.len < 3 * MT_OUT_CHUNK; seq++)
		out_tail(o, &want, add_event(&want, seq));
	{
		size_t at = want.len;

		while (want.len - at < MT_OUT_CHUNK + 100)
			add_event(&want, seq++);
		out_tail(o, &want, want.len - at);
	}
	mt_quiet_int_eq(mt_out_close(o), 0);
	got = read_back(path);
	mt_quiet_uint_eq(got.len, want.len);
	mt_quiet_mem_eq(got.data, want.data, want.len);
	free(got.data);
	free(want.data);
	free(path);
}
END_TEST

/*
 * Lines written in place (mt_out_room, mt_out_put), in runs that cross
 * the chunks and mixed with mt_out_write and flushes, are the trace in
 * the order written: plain (loop 0), zstd on the caller's thread (1)
 * and on 2 workers (2).
 */
START_TEST(test_out_lines_written_in_place_are_the_trace_as_written)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, _i ? "t.jsonl.zst" : "t.jsonl");
	mt_test_bytes_t want = { 0 }, got = { 0 }, z;
	uint64_t seq = 3;
	mt_out_t *o;
	char *at;

	out_workers = _i == 2 ? 2 : 0;
	o = open_out(path, 1);
	add_head(&want);
	out_tail(o, &want, want.len);
	for (int run = 0; want.len < 3 * MT_OUT_CHUNK; run++) {
		size_t from = want.len;

		/* A run of lines in one room of 64 KiB. */
		while (want.len - from < (64u << 10) - 200)
			add_event(&want, seq++);
		mt_quiet_int_eq(mt_out_room(o, 64u << 10, &at), 0);
		memcpy(at, want.data + from, want.len - from);
		mt_out_put(o, want.len - from);
		if (run % 3 == 0)
			out_tail(o, &want, add_event(&want, seq++));
		if (run % 17 == 0)
			mt_quiet_int_eq(mt_out_flush(o), 0);
	}
	ck_assert_int_eq(mt_out_room(o, MT_OUT_CHUNK + 1, &at), -EINVAL);
	mt_quiet_int_eq(mt_out_close(o), 0);
	z = read_back(path);
	if (_i) {
		mt_quiet_int_eq(unzstd(z.data, z.len, &got), 1);
		free(z.data);
	} else {
		got = z;
	}
	mt_quiet_uint_eq(got.len, want.len);
	mt_quiet_mem_eq(got.data, want.data, want.len);
	free(got.data);
	free(want.data);
	free(path);
}
END_TEST

START_TEST(test_out_zstd_round_trip_is_the_plain_trace)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl.zst");
	mt_out_t *o;
	mt_test_bytes_t want = { 0 }, z, got = { 0 };
	mt_analysis_t a;
	uint64_t seq;

	out_workers = _i;
	o = open_out(path, 1);
	mt_quiet_int_eq(mt_out_compressed(o), 1);
	add_head(&want);
	out_tail(o, &want, want.len);
	for (seq = 3; seq < 60000; seq++) {
		out_tail(o, &want, add_event(&want, seq));
		if (seq % 10000 == 0)
			mt_quiet_int_eq(mt_out_flush(o), 0);
	}
	out_tail(o, &want, mt_test_bytes_addf(&want, "{\"v\":1,\"seq\":%" PRIu64
				 ",\"kind\":\"trace.stop\",\"reason\":\"exit\"}\n", seq));
	mt_quiet_int_eq(mt_out_close(o), 0);
	z = read_back(path);
	mt_quiet_int_eq(unzstd(z.data, z.len, &got), 1);
	mt_quiet_uint_eq(got.len, want.len);
	mt_quiet_mem_eq(got.data, want.data, want.len);
	/* And the analyzer reads it as the complete trace it is. */
	mt_quiet_int_eq(mt_analysis_run(&a, path), MT_OK);
	ck_assert_str_eq(mt_integrity_status(&a.integrity), "complete");
	mt_quiet_uint_eq(a.heap.events, seq);
	mt_analysis_release(&a);
	free(z.data);
	free(got.data);
	free(want.data);
	free(path);
}
END_TEST

START_TEST(test_out_zstd_flush_makes_every_line_readable_while_open)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.zst");
	mt_out_t *o;
	mt_test_bytes_t want = { 0 };
	uint64_t seq = 3;

	out_workers = _i;
	o = open_out(path, 1);
	add_head(&want);
	out_tail(o, &want, want.len);
	for (int round = 0; round < 5; round++) {
		mt_test_bytes_t z, got = { 0 };
		uint64_t before = mt_out_length(o);

		for (int i = 0; i < 100 + round * 1000; i++)
			out_tail(o, &want, add_event(&want, seq++));
		mt_quiet_int_eq(mt_out_flush(o), 0);
		/* A flush without a line since writes nothing. */
		mt_quiet_int_eq(mt_out_flush(o), 0);
		z = read_back(path);
		mt_quiet_uint_gt(z.len, before);
		mt_quiet_uint_eq(z.len, mt_out_length(o));
		mt_quiet_int_eq(unzstd(z.data, z.len, &got), 1);
		mt_quiet_uint_eq(got.len, want.len);
		mt_quiet_mem_eq(got.data, want.data, want.len);
		free(z.data);
		free(got.data);
	}
	mt_quiet_int_eq(mt_out_close(o), 0);
	free(want.data);
	free(path);
}
END_TEST

START_TEST(test_out_root_empties_an_existing_file)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl");
	static const char line[] = "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n";
	mt_out_t *o;

	mt_test_write(path, "an old trace, longer than the new one\n"
		      "with two lines and more\n", 62);
	o = open_out(path, 1);
	mt_test_assert_file_eq(path, "");
	mt_quiet_int_eq(mt_out_write(o, line, strlen(line)), 0);
	mt_quiet_int_eq(mt_out_close(o), 0);
	mt_test_assert_file_eq(path, line);
	free(path);
}
END_TEST

/* Open name (in dir) as a non-root trace: it must take want, and write
 * its line there. */
static void assert_takes(const char *dir, const char *name, const char *want)
{
	char *path = mt_test_path(dir, name), *wpath = mt_test_path(dir, want);
	char used[4096];
	mt_out_t *o;

	mt_quiet_int_eq(mt_out_open(&o, path, 0, used, sizeof(used)), 0);
	mt_quiet(!strcmp(used, wpath), "%s took %s, not %s", name, used, wpath);
	mt_quiet_int_eq(mt_out_write(o, "new\n", 4), 0);
	mt_quiet_int_eq(mt_out_close(o), 0);
	free(path);
	free(wpath);
}

START_TEST(test_out_non_root_takes_the_first_free_name)
{
	char *dir = mt_test_scratch();
	static const char *const old[] = { "t.jsonl", "t.1.jsonl", "t.3.jsonl",
					   "trace", "d.x/trace" };
	char *sub = mt_test_path(dir, "d.x");
	char *taken = mt_test_path(dir, "t.jsonl");
	char used[4096];
	mt_out_t *o;

	mt_quiet_int_eq(mkdir(sub, 0755), 0);
	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		char *p = mt_test_path(dir, old[i]);

		mt_test_write(p, "old\n", 4);
		free(p);
	}
	assert_takes(dir, "fresh.jsonl", "fresh.jsonl");
	assert_takes(dir, "t.jsonl", "t.2.jsonl");
	assert_takes(dir, "t.jsonl", "t.4.jsonl");
	assert_takes(dir, "trace", "trace.1");
	assert_takes(dir, "d.x/trace", "d.x/trace.1");
	assert_takes(dir, ".hidden", ".hidden");
	assert_takes(dir, ".hidden", ".hidden.1");
	/* No existing file was opened, let alone emptied. */
	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		char *p = mt_test_path(dir, old[i]);

		mt_test_assert_file_eq(p, "old\n");
		free(p);
	}
	/* A taken name with no room for a number in path is refused. */
	mt_quiet_int_eq(mt_out_open(&o, taken, 0, used, strlen(taken) + 1),
			-ENAMETOOLONG);
	mt_quiet_ptr_null(o);
	free(taken);
	free(sub);
}
END_TEST

START_TEST(test_out_jsonl_zst_names_get_the_number_before_jsonl_zst)
{
	char *dir = mt_test_scratch();
	static const char *const old[] = { "t.5.jsonl.zst", "t.zst", ".jsonl.zst" };

	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		char *p = mt_test_path(dir, old[i]);

		mt_test_write(p, "old\n", 4);
		free(p);
	}
	assert_takes(dir, "t.5.jsonl.zst", "t.5.1.jsonl.zst");
	assert_takes(dir, "t.5.jsonl.zst", "t.5.2.jsonl.zst");
	assert_takes(dir, "t.zst", "t.1.zst");
	assert_takes(dir, ".jsonl.zst", ".jsonl.1.zst");
}
END_TEST

START_TEST(test_out_flock_is_held_while_open_and_released_on_close)
{
	char *dir = mt_test_scratch();
	static const char *const names[] = { "root.jsonl", "new.jsonl.zst" };

	for (int i = 0; i < 2; i++) {
		char *path = mt_test_path(dir, names[i]);
		mt_out_t *o = open_out(path, i == 0);
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		mt_quiet(fd >= 0, "open %s: %s", path, strerror(errno));
		mt_quiet(flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK,
			 "%s: LOCK_EX taken while open", names[i]);
		mt_quiet(flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK,
			 "%s: LOCK_SH taken while open", names[i]);
		mt_quiet_int_eq(mt_out_close(o), 0);
		mt_quiet(!flock(fd, LOCK_SH | LOCK_NB), "%s: LOCK_SH after close: %s",
			 names[i], strerror(errno));
		close(fd);
		free(path);
	}
}
END_TEST

START_TEST(test_out_root_leaves_a_trace_locked_by_another_alone)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl");
	char used[4096];
	mt_out_t *o;
	int fd;

	mt_test_write(path, "old\n", 4);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	mt_quiet(fd >= 0 && !flock(fd, LOCK_SH), "flock: %s", strerror(errno));
	mt_quiet_int_eq(mt_out_open(&o, path, 1, used, sizeof(used)), -EWOULDBLOCK);
	mt_test_assert_file_eq(path, "old\n");
	close(fd);
	free(path);
}
END_TEST

/*
 * Write A, mark, B (part flushed, part not), rewind, C; and A, flush, C
 * into another file: both files are the same, byte for byte.
 */
static void assert_rewind_forgets(const char *name)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, name);
	char ref_name[64];
	char *ref;
	mt_test_bytes_t a = { 0 }, b = { 0 }, c = { 0 }, got, want;
	mt_out_t *o, *r;
	uint64_t seq = 3, marked;
	size_t half;

	snprintf(ref_name, sizeof(ref_name), "ref.%s", name);
	ref = mt_test_path(dir, ref_name);
	add_head(&a);
	for (int i = 0; i < 500; i++)
		add_event(&a, seq++);
	for (int i = 0; i < 3000; i++)
		add_event(&b, seq++);
	mt_test_bytes_addf(&b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\",\"reason\":\"exec\"}\n",
	     seq);
	for (int i = 0; i < 500; i++)
		add_event(&c, seq++);
	o = open_out(path, 1);
	out_tail(o, &a, a.len);
	mt_quiet_int_eq(mt_out_mark(o), 0);
	marked = mt_out_length(o);
	half = (size_t)(strchr(b.data + b.len / 2, '\n') - b.data) + 1;
	mt_quiet_int_eq(mt_out_write(o, b.data, half), 0);
	mt_quiet_int_eq(mt_out_flush(o), 0);
	mt_quiet_uint_gt(mt_out_length(o), marked);
	mt_quiet_int_eq(mt_out_write(o, b.data + half, b.len - half), 0);
	mt_quiet_int_eq(mt_out_rewind(o), 0);
	mt_quiet_uint_eq(mt_out_length(o), marked);
	out_tail(o, &c, c.len);
	mt_quiet_int_eq(mt_out_close(o), 0);

	r = open_out(ref, 1);
	out_tail(r, &a, a.len);
	mt_quiet_int_eq(mt_out_flush(r), 0);
	out_tail(r, &c, c.len);
	mt_quiet_int_eq(mt_out_close(r), 0);

	got = read_back(path);
	want = read_back(ref);
	mt_quiet_uint_eq(got.len, want.len);
	mt_quiet_mem_eq(got.data, want.data, want.len);
	free(got.data);
	free(want.data);
	free(a.data);
	free(b.data);
	free(c.data);
	free(ref);
	free(path);
}

START_TEST(test_out_mark_and_rewind_plain_forget_every_line_past_the_mark)
{
	assert_rewind_forgets("t.jsonl");
}
END_TEST

START_TEST(test_out_mark_and_rewind_zstd_forget_every_frame_past_the_mark)
{
	out_workers = _i;
	assert_rewind_forgets("t.jsonl.zst");
}
END_TEST

#define SMALL_DISK 10000

/*
 * In a child whose RLIMIT_FSIZE is SMALL_DISK bytes (SIGXFSZ left as it
 * is: the module must never raise it), write lines to path, flushing
 * every flush_every lines (0: never), until the write fails; it must fail
 * with EFBIG, and so must every call after.  Returns the lines written,
 * all of them in want.
 */
static void fill_small_disk(const char *path, int flush_every, mt_test_bytes_t *want)
{
	uint64_t seq;
	pid_t pid;
	int status;

	add_head(want);
	for (seq = 3; want->len < 4 * SMALL_DISK + 2 * MT_OUT_CHUNK; seq++)
		add_event(want, seq);
	pid = fork();
	mt_quiet(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		struct rlimit rl = { SMALL_DISK, SMALL_DISK };
		char used[4096];
		mt_out_t *o;
		size_t at = 0;
		int rc = 0, n = 0;

		if (setrlimit(RLIMIT_FSIZE, &rl) ||
		    open_with_workers(&o, path, 1, used, sizeof(used)))
			_exit(10);
		while (!rc && at < want->len) {
			size_t end = (size_t)(strchr(want->data + at, '\n') - want->data) + 1;

			rc = mt_out_write(o, want->data + at, end - at);
			at = end;
			if (!rc && flush_every && ++n % flush_every == 0)
				rc = mt_out_flush(o);
		}
		if (rc != -EFBIG)
			_exit(11);
		if (mt_out_write(o, "x\n", 2) != -EFBIG || mt_out_flush(o) != -EFBIG ||
		    mt_out_mark(o) != -EFBIG || mt_out_rewind(o) != -EFBIG)
			_exit(12);
		_exit(mt_out_close(o) == -EFBIG ? 0 : 13);
	}
	mt_quiet(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "the writer ended with status %#x", status);
}

START_TEST(test_out_a_small_disk_keeps_every_whole_line_that_fits)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl");
	mt_test_bytes_t want = { 0 }, got;

	/* Never flushed: the first chunk fails part-way, and is cut back
	 * to the last line end in what the disk took. */
	fill_small_disk(path, 0, &want);
	got = read_back(path);
	mt_quiet_uint_le(got.len, SMALL_DISK);
	mt_quiet_uint_gt(got.len, SMALL_DISK - 300);
	mt_quiet(got.data[got.len - 1] == '\n', "the trace ends inside a line");
	mt_quiet_mem_eq(got.data, want.data, got.len);
	free(got.data);
	free(want.data);
	free(path);
}
END_TEST

START_TEST(test_out_a_small_disk_keeps_every_whole_frame_that_fits)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl.zst");
	mt_test_bytes_t want = { 0 }, z, got = { 0 };

	out_workers = _i;

	fill_small_disk(path, 20, &want);
	z = read_back(path);
	mt_quiet_uint_le(z.len, SMALL_DISK);
	mt_quiet_uint_gt(z.len, 0);
	mt_quiet_int_eq(unzstd(z.data, z.len, &got), 1);
	mt_quiet(got.len > 0 && got.data[got.len - 1] == '\n',
		 "the frames end inside a line");
	mt_quiet_mem_eq(got.data, want.data, got.len);
	free(z.data);
	free(got.data);
	free(want.data);
	free(path);
}
END_TEST

/*
 * A zstd trace cut at every byte of its last frame is judged
 * missing_stop_event with every whole event kept.  The trace: four frames
 * of events (a flush after each), the last one ending in trace.stop.  Cut
 * anywhere before the last frame's 4-byte checksum, the analyzer keeps
 * exactly the events of the three whole frames (the last frame is one
 * block, which decodes whole or not at all); cut in its checksum, the
 * block's events too, trace.stop among them, and the trace is still cut
 * off.  In process, as the commands read it.
 */
START_TEST(test_out_a_zstd_trace_cut_at_every_byte_of_its_last_frame_is_missing_stop_event)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl.zst");
	char *cut_path = mt_test_path(dir, "cut.jsonl.zst");
	mt_out_t *o = open_out(path, 0);
	mt_test_bytes_t want = { 0 }, z;
	uint64_t seq = 3, events_before = 0, events_all;
	size_t last_start = 0;

	add_head(&want);
	out_tail(o, &want, want.len);
	for (int frame = 0; frame < 4; frame++) {
		if (frame == 3) {
			last_start = mt_out_length(o);
			events_before = seq - 1;
		}
		for (int i = 0; i < 30 + 7 * frame; i++)
			out_tail(o, &want, add_event(&want, seq++));
		if (frame == 3)
			out_tail(o, &want, mt_test_bytes_addf(&want, "{\"v\":1,\"seq\":%" PRIu64
						 ",\"kind\":\"trace.stop\",\"reason\":\"exit\"}\n",
						 seq));
		mt_quiet_int_eq(mt_out_flush(o), 0);
	}
	events_all = seq;
	mt_quiet_int_eq(mt_out_close(o), 0);
	z = read_back(path);
	mt_quiet_uint_gt(last_start, 0);
	mt_quiet_uint_gt(z.len, last_start + 4);
	for (size_t cut = last_start; cut < z.len; cut++) {
		uint64_t want_events = cut >= z.len - 4 ? events_all : events_before;
		mt_analysis_t a;
		int rc;

		mt_test_write(cut_path, z.data, cut);
		rc = mt_analysis_run(&a, cut_path);
		mt_quiet(rc == MT_OK, "cut at %zu: rc %d", cut, rc);
		mt_quiet(!a.integrity.invalid, "cut at %zu: invalid: %s", cut,
			 a.integrity.invalid_message);
		mt_quiet(!strcmp(mt_integrity_status(&a.integrity), "missing_stop_event"),
			 "cut at %zu of %zu: %s", cut, z.len,
			 mt_integrity_status(&a.integrity));
		mt_quiet(a.heap.events == want_events, "cut at %zu (last frame %zu to "
			 "%zu): %" PRIu64 " events, not %" PRIu64, cut, last_start,
			 z.len, a.heap.events, want_events);
		mt_analysis_release(&a);
	}
	free(z.data);
	free(want.data);
	free(cut_path);
	free(path);
}
END_TEST

/* Lines of some MiB, no flush: with workers, each frame (at most
 * MT_OUT_CHUNK bytes of lines, its content size in its header, as
 * without them) decodes alone, checksum and all, ends at a line's end, so
 * a trace cut at any frame's end keeps whole lines, and the frames are in
 * the order of their lines. */
START_TEST(test_out_a_trace_on_zstd_workers_is_whole_frames_of_whole_lines)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl.zst");
	mt_test_bytes_t want = { 0 }, z, all = { 0 };
	size_t at = 0, frames = 0;
	uint64_t seq;
	mt_out_t *o;

	out_workers = 2;
	o = open_out(path, 1);
	add_head(&want);
	out_tail(o, &want, want.len);
	for (seq = 3; want.len < 6 * MT_OUT_CHUNK + MT_OUT_CHUNK / 2; seq++)
		out_tail(o, &want, add_event(&want, seq));
	mt_quiet_int_eq(mt_out_close(o), 0);
	z = read_back(path);
	while (at < z.len) {
		size_t n = ZSTD_findFrameCompressedSize(z.data + at, z.len - at);
		mt_test_bytes_t one = { 0 };

		mt_quiet(!ZSTD_isError(n), "frame %zu at %zu: %s", frames, at,
			 ZSTD_getErrorName(n));
		/* The frame header descriptor's Content_Checksum_flag. */
		mt_quiet(n > 5 && (z.data[at + 4] & 4), "frame %zu has no checksum", frames);
		mt_quiet_int_eq(unzstd(z.data + at, n, &one), 1);
		mt_quiet(one.len > 0 && one.len <= MT_OUT_CHUNK, "frame %zu: %zu bytes",
			 frames, one.len);
		mt_quiet_uint_eq(ZSTD_getFrameContentSize(z.data + at, n), one.len);
		mt_quiet(one.data[one.len - 1] == '\n', "frame %zu ends inside a line", frames);
		mt_test_bytes_add(&all, one.data, one.len);
		free(one.data);
		at += n;
		frames++;
	}
	mt_quiet_uint_eq(frames, 7);
	mt_quiet_uint_eq(all.len, want.len);
	mt_quiet_mem_eq(all.data, want.data, want.len);
	free(all.data);
	free(z.data);
	free(want.data);
	free(path);
}
END_TEST

START_TEST(test_out_zstd_workers_take_two_cpus_or_more_and_one_cpu_has_none)
{
	pid_t pid;
	int status;

	/* The workers take what CPU time is left (mt_zpool.h): on two
	 * CPUs, the program's waits for room in the ring. */
	mt_quiet_int_eq(mt_out_workers_for(1), 0);
	mt_quiet_int_eq(mt_out_workers_for(2), MT_OUT_WORKERS_MAX);
	mt_quiet_int_eq(mt_out_workers_for(3), MT_OUT_WORKERS_MAX);
	mt_quiet_int_eq(mt_out_workers_for(64), MT_OUT_WORKERS_MAX);
	mt_quiet_int_eq(mt_out_cpus(), mt_test_cpus());
	/* A collector pinned to one CPU (taskset) counts one. */
	pid = fork();
	mt_quiet(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			_exit(10);
		_exit(mt_out_cpus() == 1 && mt_out_workers_for(mt_out_cpus()) == 0 ? 0 : 11);
	}
	mt_quiet(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "pinned to one CPU: status %#x", status);
}
END_TEST

/* Each worker is a task RLIMIT_NPROC counts: under a limit with little
 * room (ulimit -u 100) the collector starts none. */
START_TEST(test_out_zstd_workers_leave_a_small_process_limit_alone)
{
	pid_t pid;
	int status;

	pid = fork();
	mt_quiet(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		struct rlimit rl;

		if (getrlimit(RLIMIT_NPROC, &rl) < 0)
			_exit(10);
		if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= MT_OUT_NPROC_ROOM) {
			if (mt_out_workers_here() != mt_out_workers_for(mt_out_cpus()))
				_exit(11);
		}
		rl.rlim_cur = rl.rlim_max < 100 ? rl.rlim_max : 100;
		if (setrlimit(RLIMIT_NPROC, &rl) < 0)
			_exit(12);
		_exit(mt_out_workers_here() == 0 ? 0 : 13);
	}
	mt_quiet(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "under ulimit -u 100: status %#x", status);
}
END_TEST

/* One chunk of lines through mt_out, compressed on the drain's thread:
 * the very frame zstd makes of them at the level asked. */
static void assert_frame_at_level(const char *dir, int level, int set, int workers)
{
	char *path = mt_test_path(dir, "level.jsonl.zst");
	mt_test_bytes_t want = { 0 }, z;
	ZSTD_CCtx *zc = ZSTD_createCCtx();
	char *ref;
	size_t n, cap;
	uint64_t seq;
	mt_out_t *o;

	unlink(path);
	o = open_out(path, 1);
	if (set)
		mt_quiet_int_eq(mt_out_set_zstd(o, level, workers), 0);
	add_head(&want);
	for (seq = 3; want.len < MT_OUT_CHUNK / 2; seq++)
		add_event(&want, seq);
	out_tail(o, &want, want.len);
	mt_quiet_int_eq(mt_out_set_zstd(o, level, 0), -EINVAL); /* after a write */
	mt_quiet_int_eq(mt_out_close(o), 0);
	z = read_back(path);
	cap = ZSTD_compressBound(want.len);
	ref = malloc(cap);
	mt_quiet_ptr_nonnull(ref);
	mt_quiet_ptr_nonnull(zc);
	mt_quiet(!ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, level)),
		 "level %d", level);
	mt_quiet(!ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 1)), "checksum");
	n = ZSTD_compress2(zc, ref, cap, want.data, want.len);
	mt_quiet(!ZSTD_isError(n), "ZSTD_compress2: %s", ZSTD_getErrorName(n));
	mt_quiet_uint_eq(z.len, n);
	mt_quiet_mem_eq(z.data, ref, n);
	ZSTD_freeCCtx(zc);
	free(ref);
	free(z.data);
	free(want.data);
	free(path);
}

START_TEST(test_out_a_compressed_trace_is_written_at_the_level_set)
{
	char *dir = mt_test_scratch();
	char *plain = mt_test_path(dir, "t.jsonl");
	mt_out_t *o;

	/* The collector's level unless told, and zstd's --fast=N as -N. */
	assert_frame_at_level(dir, MT_OUT_LEVEL, 0, 0);
	assert_frame_at_level(dir, -5, 1, 0);
	assert_frame_at_level(dir, 3, 1, 0);
	/* The workers make the very same frame. */
	assert_frame_at_level(dir, -5, 1, 1);
	assert_frame_at_level(dir, MT_OUT_LEVEL, 1, MT_OUT_WORKERS_MAX);
	o = open_out(plain, 1);
	mt_quiet_int_eq(mt_out_set_zstd(o, 1, 0), -EINVAL);
	mt_quiet_int_eq(mt_out_close(o), 0);
	free(plain);
	plain = mt_test_path(dir, "t2.jsonl.zst");
	o = open_out(plain, 1);
	mt_quiet_int_eq(mt_out_set_zstd(o, ZSTD_maxCLevel() + 1, 0), -EINVAL);
	mt_quiet_int_eq(mt_out_set_zstd(o, 1, -1), -EINVAL);
	mt_quiet_int_eq(mt_out_set_zstd(o, 1, MT_OUT_WORKERS_MAX + 1), -EINVAL);
	mt_quiet_int_eq(mt_out_set_zstd(o, 1, 1), 0);
	mt_quiet_int_eq(mt_out_set_zstd(o, 1, 1), -EINVAL); /* workers once */
	mt_quiet_int_eq(mt_out_close(o), 0);
	free(plain);
}
END_TEST

/* The contexts of closed traces are kept for the next ones (mt_out.c):
 * a trace is the very frame a new context makes, whatever traces were
 * open before it, at whatever level, two at once included. */
START_TEST(test_out_a_trace_is_the_same_whatever_traces_came_before)
{
	char *dir = mt_test_scratch();
	char *a = mt_test_path(dir, "a.jsonl.zst"), *b = mt_test_path(dir, "b.jsonl.zst");
	mt_test_bytes_t lines = { 0 };
	mt_out_t *oa, *ob;

	oa = open_out(a, 1);
	ob = open_out(b, 1);
	mt_quiet_int_eq(mt_out_set_zstd(oa, 3, 0), 0);
	mt_quiet_int_eq(mt_out_set_zstd(ob, 19, 0), 0);
	add_head(&lines);
	for (uint64_t seq = 3; seq < 2000; seq++)
		add_event(&lines, seq);
	out_tail(oa, &lines, lines.len);
	out_tail(ob, &lines, lines.len);
	mt_quiet_int_eq(mt_out_close(oa), 0);
	mt_quiet_int_eq(mt_out_close(ob), 0);
	assert_frame_at_level(dir, MT_OUT_LEVEL, 0, 0);
	assert_frame_at_level(dir, MT_OUT_LEVEL, 0, 0);
	assert_frame_at_level(dir, -5, 1, 0);
	assert_frame_at_level(dir, MT_OUT_LEVEL, 0, 0);
	free(lines.data);
	free(a);
	free(b);
}
END_TEST

/* With workers, an expander turns what is put into lines before they
 * are compressed; it takes workers, and comes before the first write. */
START_TEST(test_out_an_expander_needs_workers_and_comes_before_a_write)
{
	static const char line[] = "{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0}\n";
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl.zst"), used[4096], *at;
	mt_test_bytes_t raw, got = { 0 };
	mt_out_t *o;

	mt_quiet_int_eq(mt_out_open(&o, path, 1, used, sizeof(used)), 0);
	mt_quiet_int_eq(mt_out_set_expander(o, &mt_batch_expander), -EINVAL); /* no workers */
	mt_quiet_int_eq(mt_out_close(o), 0);
	mt_quiet_int_eq(mt_out_open(&o, path, 1, used, sizeof(used)), 0);
	mt_quiet_int_eq(mt_out_set_zstd(o, MT_OUT_LEVEL, 1), 0);
	mt_quiet_int_eq(mt_out_set_expander(o, &mt_batch_expander), 0);
	mt_quiet_int_eq(mt_out_set_expander(o, &mt_batch_expander), -EINVAL); /* once */
	mt_quiet_int_eq(mt_out_room(o, mt_batch_text_size(sizeof(line) - 1), &at), 0);
	memcpy(at + MT_BATCH_HEAD, line, sizeof(line) - 1);
	mt_out_put(o, mt_batch_text(at, sizeof(line) - 1));
	mt_quiet_int_eq(mt_out_close(o), 0);
	raw = read_back(path);
	mt_quiet_int_eq(unzstd(raw.data, raw.len, &got), 1);
	free(raw.data);
	mt_quiet(got.len == sizeof(line) - 1 && !memcmp(got.data, line, got.len),
		 "the expanded trace is %zu other bytes", got.len);
	free(got.data);
	mt_quiet_int_eq(mt_out_open(&o, path, 1, used, sizeof(used)), 0);
	mt_quiet_int_eq(mt_out_set_zstd(o, MT_OUT_LEVEL, 1), 0);
	mt_quiet_int_eq(mt_out_write(o, line, sizeof(line) - 1), 0);
	mt_quiet_int_eq(mt_out_set_expander(o, &mt_batch_expander), -EINVAL); /* after a write */
	mt_quiet_int_eq(mt_out_close(o), 0);
	free(path);
}
END_TEST

/* A trace may take zstd workers between two frames, as record's
 * collector gives them to a program that waits for room: not while a
 * line waits for the file; the lines before are one frame of the
 * caller's, those after the workers' (here text entries they expand),
 * and the trace reads as one. */
START_TEST(test_out_zstd_workers_join_a_trace_between_frames)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "t.jsonl.zst"), used[4096], *at;
	mt_test_bytes_t want = { 0 }, raw, got = { 0 }, first = { 0 };
	size_t head, n;
	uint64_t seq;
	mt_out_t *o;

	mt_quiet_int_eq(mt_out_open(&o, path, 1, used, sizeof(used)), 0);
	add_head(&want);
	head = want.len;
	out_tail(o, &want, want.len);
	mt_quiet_int_eq(mt_out_set_zstd(o, MT_OUT_LEVEL, 2), -EINVAL); /* a line buffered */
	mt_quiet_int_eq(mt_out_flush(o), 0);
	mt_quiet_int_eq(mt_out_set_zstd(o, MT_OUT_LEVEL, 2), 0);
	mt_quiet_int_eq(mt_out_set_expander(o, &mt_batch_expander), 0);
	mt_out_start_workers(o);
	for (seq = 3; want.len < 3 * MT_OUT_CHUNK; seq++) {
		n = add_event(&want, seq);
		mt_quiet_int_eq(mt_out_room(o, mt_batch_text_size(n), &at), 0);
		memcpy(at + MT_BATCH_HEAD, want.data + want.len - n, n);
		mt_out_put(o, mt_batch_text(at, n));
	}
	mt_quiet_int_eq(mt_out_close(o), 0);
	raw = read_back(path);
	n = ZSTD_findFrameCompressedSize(raw.data, raw.len);
	mt_quiet(!ZSTD_isError(n), "the first frame: %s", ZSTD_getErrorName(n));
	mt_quiet_int_eq(unzstd(raw.data, n, &first), 1);
	mt_quiet_uint_eq(first.len, head);
	mt_quiet_int_eq(unzstd(raw.data, raw.len, &got), 1);
	mt_quiet_uint_eq(got.len, want.len);
	mt_quiet_mem_eq(got.data, want.data, want.len);
	free(first.data);
	free(got.data);
	free(raw.data);
	free(want.data);
	free(path);
}
END_TEST

Suite *mt_suite_out(void)
{
	Suite *s = suite_create("out");
	TCase *tc = tcase_create("out");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_out_plain_lines_round_trip);
	tcase_add_loop_test(tc, test_out_lines_written_in_place_are_the_trace_as_written, 0, 3);
	tcase_add_loop_test(tc, test_out_zstd_round_trip_is_the_plain_trace, 0, 3);
	tcase_add_loop_test(tc, test_out_zstd_flush_makes_every_line_readable_while_open, 0, 3);
	tcase_add_test(tc, test_out_root_empties_an_existing_file);
	tcase_add_test(tc, test_out_non_root_takes_the_first_free_name);
	tcase_add_test(tc, test_out_jsonl_zst_names_get_the_number_before_jsonl_zst);
	tcase_add_test(tc, test_out_flock_is_held_while_open_and_released_on_close);
	tcase_add_test(tc, test_out_root_leaves_a_trace_locked_by_another_alone);
	tcase_add_test(tc, test_out_mark_and_rewind_plain_forget_every_line_past_the_mark);
	tcase_add_loop_test(tc, test_out_mark_and_rewind_zstd_forget_every_frame_past_the_mark, 0, 3);
	tcase_add_test(tc, test_out_a_small_disk_keeps_every_whole_line_that_fits);
	tcase_add_loop_test(tc, test_out_a_small_disk_keeps_every_whole_frame_that_fits, 0, 3);
	tcase_add_test(tc, test_out_a_zstd_trace_cut_at_every_byte_of_its_last_frame_is_missing_stop_event);
	tcase_add_test(tc, test_out_a_trace_on_zstd_workers_is_whole_frames_of_whole_lines);
	tcase_add_test(tc, test_out_zstd_workers_take_two_cpus_or_more_and_one_cpu_has_none);
	tcase_add_test(tc, test_out_zstd_workers_leave_a_small_process_limit_alone);
	tcase_add_test(tc, test_out_a_compressed_trace_is_written_at_the_level_set);
	tcase_add_test(tc, test_out_a_trace_is_the_same_whatever_traces_came_before);
	tcase_add_test(tc, test_out_an_expander_needs_workers_and_comes_before_a_write);
	tcase_add_test(tc, test_out_zstd_workers_join_a_trace_between_frames);
	suite_add_tcase(s, tc);
	return s;
}
