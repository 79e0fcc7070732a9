/*
 * check_reader: unit tests of mt_reader: line splitting, over-long
 * lines, the read chunk, trailing NUL padding, the page cache, take()
 * against next(), and open errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/mt_error.h"
#include "../analyzer/mt_mem.h"
#include "../analyzer/mt_reader.h"

/* The reader's read(2) size (mt_reader.c): lines are put across it. */
#define READER_CHUNK MT_READER_CHUNK

static void open_ok(mt_reader_t *r, const char *path)
{
	int rc = mt_reader_open(r, path);

	mt_quiet(rc == MT_OK, "mt_reader_open(%s) = %d: %s", path, rc,
		 strerror(errno));
}

static void next_line(mt_reader_t *r, const char *want, size_t len,
		      uint64_t number, int terminated)
{
	mt_line_t line;
	int rc = mt_reader_next(r, &line);

	mt_quiet(rc == 1, "line %" PRIu64 ": mt_reader_next = %d", number,
		 rc);
	mt_quiet_uint_eq(line.number, number);
	mt_quiet_int_eq(line.too_long, 0);
	mt_quiet_int_eq(line.terminated, terminated);
	mt_quiet(line.len == len && !memcmp(line.data, want, len),
		 "line %" PRIu64 ": got %zu bytes '%.*s', want %zu", number,
		 line.len, (int)(line.len > 80 ? 80 : line.len), line.data,
		 len);
}

static void next_end(mt_reader_t *r)
{
	mt_line_t line;

	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
}

START_TEST(reader_lines_with_final_newline)
{
	static const char data[] = "{\"a\":1}\nbb\n\nccc\n";
	mt_test_file_t f;
	mt_reader_t r;

	mt_test_file_write(&f, data, strlen(data));
	open_ok(&r, f.path);
	next_line(&r, "{\"a\":1}", 7, 1, 1);
	next_line(&r, "bb", 2, 2, 1);
	next_line(&r, "", 0, 3, 1);
	next_line(&r, "ccc", 3, 4, 1);
	next_end(&r);
	mt_quiet_int_eq(r.zero_padded, 0);
	mt_reader_release(&r);
	mt_test_file_done(&f);
}
END_TEST

START_TEST(reader_last_line_without_newline)
{
	static const char data[] = "one\ntwo";
	mt_test_file_t f;
	mt_reader_t r;

	mt_test_file_write(&f, data, strlen(data));
	open_ok(&r, f.path);
	next_line(&r, "one", 3, 1, 1);
	next_line(&r, "two", 3, 2, 0);
	next_end(&r);
	mt_reader_release(&r);
	mt_test_file_done(&f);
}
END_TEST

START_TEST(reader_empty_file_has_no_lines)
{
	mt_test_file_t f;
	mt_reader_t r;

	mt_test_file_write(&f, "", 0);
	open_ok(&r, f.path);
	next_end(&r);
	mt_quiet_int_eq(r.zero_padded, 0);
	mt_reader_release(&r);
	mt_test_file_done(&f);
}
END_TEST

START_TEST(reader_keeps_crlf_as_data)
{
	static const char data[] = "a\r\n\r\nb\rc\r\n\r";
	mt_test_file_t f;
	mt_reader_t r;

	mt_test_file_write(&f, data, strlen(data));
	open_ok(&r, f.path);
	next_line(&r, "a\r", 2, 1, 1);
	next_line(&r, "\r", 1, 2, 1);
	next_line(&r, "b\rc\r", 4, 3, 1);
	next_line(&r, "\r", 1, 4, 0);
	next_end(&r);
	mt_reader_release(&r);
	mt_test_file_done(&f);
}
END_TEST

START_TEST(reader_keeps_inner_nul_bytes)
{
	static const char data[] = "a\0b\n\0\nc\n";
	mt_test_file_t f;
	mt_reader_t r;

	mt_test_file_write(&f, data, sizeof(data) - 1);
	open_ok(&r, f.path);
	next_line(&r, "a\0b", 3, 1, 1);
	next_line(&r, "\0", 1, 2, 1);
	next_line(&r, "c", 1, 3, 1);
	next_end(&r);
	mt_quiet_int_eq(r.zero_padded, 0);
	mt_reader_release(&r);
	mt_test_file_done(&f);
}
END_TEST

/* The next line must be an over-long one, reported empty. */
static void next_too_long(mt_reader_t *r, uint64_t number, int terminated)
{
	mt_line_t line;

	mt_quiet_int_eq(mt_reader_next(r, &line), 1);
	mt_quiet_uint_eq(line.number, number);
	mt_quiet_int_eq(line.too_long, 1);
	mt_quiet_uint_eq(line.len, 0);
	mt_quiet_int_eq(line.terminated, terminated);
}

START_TEST(reader_too_long_line_costs_no_memory)
{
	/* Lines of LINE_MAX + 1 and of 5 MiB, between short ones; the last
	 * one is over-long and unterminated. */
	size_t big = 5u << 20, len = 0;
	char *data = malloc(3 * big);
	mt_test_file_t f;
	mt_reader_t r;
	int64_t outstanding;

	mt_quiet_ptr_nonnull(data);
	len += (size_t)sprintf(data + len, "first\n");
	memset(data + len, 'x', MT_READER_LINE_MAX + 1);
	len += MT_READER_LINE_MAX + 1;
	data[len++] = '\n';
	len += (size_t)sprintf(data + len, "middle\n");
	memset(data + len, 'y', big);
	len += big;
	data[len++] = '\n';
	len += (size_t)sprintf(data + len, "after\n");
	memset(data + len, 'z', MT_READER_LINE_MAX + 7);
	len += MT_READER_LINE_MAX + 7;
	mt_test_file_write(&f, data, len);
	free(data);

	open_ok(&r, f.path);
	outstanding = mt_mem_outstanding();
	mt_mem_fail_at(0, 0); /* counts allocation calls from here */
	next_line(&r, "first", 5, 1, 1);
	next_too_long(&r, 2, 1);
	next_line(&r, "middle", 6, 3, 1);
	next_too_long(&r, 4, 1);
	next_line(&r, "after", 5, 5, 1);
	next_too_long(&r, 6, 0);
	next_end(&r);
	/* No allocation while reading: the buffer of open is all it holds. */
	mt_quiet_uint_eq(mt_mem_calls(), 0);
	mt_quiet_int_eq(mt_mem_outstanding(), outstanding);
	mt_quiet_uint_le(r.cap, MT_READER_LINE_MAX + 2 * READER_CHUNK);
	mt_reader_release(&r);
	mt_test_file_done(&f);
}
END_TEST

START_TEST(reader_line_of_line_max_is_kept)
{
	size_t len = 0;
	char *data = malloc(2 * MT_READER_LINE_MAX + 64);
	mt_test_file_t f;
	mt_reader_t r;
	mt_line_t line;

	mt_quiet_ptr_nonnull(data);
	data[len++] = 'a';
	data[len++] = '\n';
	for (size_t i = 0; i < MT_READER_LINE_MAX; i++)
		data[len++] = (char)('a' + i % 26);
	data[len++] = '\n';
	memset(data + len, 'q', MT_READER_LINE_MAX);
	len += MT_READER_LINE_MAX; /* unterminated, still not too long */
	mt_test_file_write(&f, data, len);

	open_ok(&r, f.path);
	next_line(&r, "a", 1, 1, 1);
	next_line(&r, data + 2, MT_READER_LINE_MAX, 2, 1);
	mt_quiet_int_eq(mt_reader_next(&r, &line), 1);
	mt_quiet_int_eq(line.too_long, 0);
	mt_quiet_int_eq(line.terminated, 0);
	mt_quiet_uint_eq(line.len, MT_READER_LINE_MAX);
	ck_assert(!memcmp(line.data, data + 3 + MT_READER_LINE_MAX,
			  MT_READER_LINE_MAX));
	next_end(&r);
	mt_reader_release(&r);
	mt_test_file_done(&f);
	free(data);
}
END_TEST

/* n_lines lines of 100 bytes ("%07zu" and a fill), the last with its
 * '\n'; a malloc'd buffer of n_lines * 101 bytes. */
static char *numbered_lines(size_t n_lines)
{
	char *data = malloc(n_lines * 101 + 1);

	ck_assert(data != NULL);
	for (size_t i = 0; i < n_lines; i++) {
		char num[32];

		snprintf(num, sizeof(num), "%07zu ", i % 10000000);
		memcpy(data + i * 101, num, 8);
		memset(data + i * 101 + 8, 'a' + (int)(i % 26), 92);
		data[i * 101 + 100] = '\n';
	}
	return data;
}

/* Read every line of a file of numbered_lines(n_lines), checking each. */
static void read_numbered_lines(mt_reader_t *r, const char *data, size_t n_lines)
{
	mt_line_t line;

	for (size_t i = 0; i < n_lines; i++) {
		mt_quiet_int_eq(mt_reader_next(r, &line), 1);
		mt_quiet(line.len == 100 && !memcmp(line.data, data + i * 101, 100),
			 "line %zu differs", i + 1);
	}
	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
}

/* Whether the kernel reads path with RWF_DONTCACHE (Linux 6.14, on file
 * systems that have it), asked apart from the reader; where it does not,
 * *err is the refusal's errno. */
static int dontcache_reads_why(const char *path, int *err)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	mt_quiet(fd >= 0, "cannot open %s", path);
	got = preadv2(fd, &iov, 1, 0, 0x80 /* RWF_DONTCACHE */);
	*err = got < 0 ? errno : 0;
	close(fd);
	return got == 1;
}

static int dontcache_reads(const char *path)
{
	int err;

	return dontcache_reads_why(path, &err);
}

/* A trace is read once: the pages a read brings into the page cache
 * leave it, and the pages that were there before stay, where the kernel
 * reads with RWF_DONTCACHE.  The test needs that, and a file system that
 * lets clean pages go when asked (mt_test_uncache()), to start from an
 * empty cache; elsewhere it skips (plain reads are
 * reader_reads_plainly_where_dontcache_is_refused's). */
START_TEST(reader_leaves_the_page_cache_as_it_found_it)
{
	const size_t n_lines = 80000; /* 7.7 MiB, four reads */
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	/* content_length() reads the last 64 KiB plainly, to find the end */
	const uint64_t head = (n_lines * 101 - 65536) / page * page;
	char *data = numbered_lines(n_lines), found[256], fs[32];
	int err;
	mt_test_file_t f;
	mt_reader_t r;

	mt_test_file_write(&f, data, n_lines * 101);
	if (!dontcache_reads_why(f.path, &err)) {
		MT_TEST_SKIP("the kernel reads no file here with RWF_DONTCACHE "
			     "(%s: preadv2: %s)",
			     mt_test_fs_name(f.dir, fs, sizeof(fs)), strerror(err));
		free(data);
		mt_test_file_done(&f);
		return;
	}
	if (!mt_test_drops_clean_pages(f.dir, found, sizeof(found))) {
		MT_TEST_SKIP("cannot empty the page cache of a file here (%s)",
			     found);
		free(data);
		mt_test_file_done(&f);
		return;
	}
	mt_test_uncache(f.path);
	mt_quiet_uint_eq(mt_test_cached_pages(f.path, 0, head), 0);
	open_ok(&r, f.path);
	read_numbered_lines(&r, data, n_lines);
	mt_quiet_int_eq(r.dontcache, 1);
	mt_reader_release(&r);
	mt_quiet_uint_eq(mt_test_cached_pages(f.path, 0, head), 0);
	/* In the page cache before: still there after. */
	free(mt_test_read(f.path, NULL));
	open_ok(&r, f.path);
	read_numbered_lines(&r, data, n_lines);
	mt_reader_release(&r);
	mt_quiet_uint_eq(mt_test_cached_pages(f.path, 0, head), head / page);
	free(data);
	mt_test_file_done(&f);
}
END_TEST

/* tmpfs has no RWF_DONTCACHE (its pages are the file): the first read is
 * refused, and plain reads take over without losing a byte.  The test
 * needs a tmpfs ($TMPDIR's, else /dev/shm) that refuses it. */
START_TEST(reader_reads_plainly_where_dontcache_is_refused)
{
	const size_t n_lines = 20000;
	char *data = numbered_lines(n_lines), fs[32];
	const char *tmp = getenv("TMPDIR");
	char dir[4096], *path;
	int err;
	mt_reader_t r;

	if (!tmp || !*tmp || !mt_test_exists(tmp) || !mt_test_on_tmpfs(tmp))
		tmp = "/dev/shm";
	if (!mt_test_exists(tmp) || !mt_test_on_tmpfs(tmp)) {
		MT_TEST_SKIP("no tmpfs to read from ($TMPDIR and /dev/shm: %s)",
			     mt_test_exists(tmp) ?
				     mt_test_fs_name(tmp, fs, sizeof(fs)) :
				     "absent");
		free(data);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/mt-test.XXXXXX", tmp);
	mt_quiet(mkdtemp(dir) != NULL, "mkdtemp %s: %s", dir, strerror(errno));
	path = mt_test_path(dir, "trace.jsonl");
	mt_test_write(path, data, n_lines * 101);
	if (dontcache_reads_why(path, &err)) {
		MT_TEST_SKIP("this tmpfs reads with RWF_DONTCACHE: nothing is "
			     "refused (%s)", dir);
		free(data);
		free(path);
		mt_test_rmdir(dir);
		return;
	}
	open_ok(&r, path);
	mt_quiet_int_eq(r.dontcache, 1);
	read_numbered_lines(&r, data, n_lines);
	mt_quiet_int_eq(r.dontcache, dontcache_reads(path));
	mt_reader_release(&r);
	free(data);
	free(path);
	mt_test_rmdir(dir);
}
END_TEST

START_TEST(reader_lines_span_chunk_boundaries)
{
	/* 32 reads' worth of lines of every length up to 70 KiB, so
	 * that many lines straddle a multiple of the read size, plus a few
	 * placed exactly at one. */
	size_t cap = 32 * READER_CHUNK, len = 0, nlines = 0;
	char *data = malloc(cap);
	size_t *starts = malloc(sizeof(size_t) * 200000);
	size_t *lens = malloc(sizeof(size_t) * 200000);
	mt_test_file_t f;
	mt_reader_t r;
	size_t crossing = 0;

	ck_assert(data && starts && lens);
	mt_test_rng_state = 5;
	while (len < cap - 200000) {
		size_t n;

		/* Mostly short lines, some long; every 8th ends right at or
		 * one byte around the next chunk boundary. */
		if (nlines % 8 == 7) {
			size_t next = (len / READER_CHUNK + 1) * READER_CHUNK;

			n = next - len - 1 + (size_t)(mt_test_rng() % 3);
			if (n > 80000)
				n = (size_t)(mt_test_rng() % 200);
		} else if (mt_test_rng() % 10 == 0) {
			n = (size_t)(mt_test_rng() % 70000);
		} else {
			n = (size_t)(mt_test_rng() % 300);
		}
		starts[nlines] = len;
		lens[nlines] = n;
		for (size_t i = 0; i < n; i++)
			data[len + i] = (char)(' ' + (nlines + i) % 90);
		if ((len / READER_CHUNK) != ((len + n) / READER_CHUNK))
			crossing++;
		len += n;
		data[len++] = '\n';
		nlines++;
	}
	mt_quiet_uint_gt(crossing, 10);
	mt_test_file_write(&f, data, len);
	open_ok(&r, f.path);
	for (size_t i = 0; i < nlines; i++)
		next_line(&r, data + starts[i], lens[i], i + 1, 1);
	next_end(&r);
	mt_reader_release(&r);
	mt_test_file_done(&f);
	free(data);
	free(starts);
	free(lens);
}
END_TEST

START_TEST(reader_strips_trailing_nul_padding)
{
	/* Padding longer than the reader's 64 KiB tail block. */
	size_t pad = 200000, len = 0;
	char *data = calloc(1, 64 + pad);
	mt_test_file_t f;
	mt_reader_t r;

	mt_quiet_ptr_nonnull(data);
	memcpy(data, "one\ntwo\n", 8);
	len = 8 + pad;
	mt_test_file_write(&f, data, len);
	open_ok(&r, f.path);
	mt_quiet_int_eq(r.zero_padded, 1);
	next_line(&r, "one", 3, 1, 1);
	next_line(&r, "two", 3, 2, 1);
	next_end(&r);
	mt_reader_release(&r);
	mt_test_file_done(&f);

	/* A line cut off by the padding is the last, unterminated line. */
	memcpy(data, "one\ntw", 6);
	memset(data + 6, 0, 64);
	mt_test_file_write(&f, data, 6 + 5);
	open_ok(&r, f.path);
	mt_quiet_int_eq(r.zero_padded, 1);
	next_line(&r, "one", 3, 1, 1);
	next_line(&r, "tw", 2, 2, 0);
	next_end(&r);
	mt_reader_release(&r);
	mt_test_file_done(&f);
	free(data);
}
END_TEST

START_TEST(reader_file_of_only_nuls)
{
	char *data = calloc(1, 300000);
	mt_test_file_t f;
	mt_reader_t r;

	mt_quiet_ptr_nonnull(data);
	mt_test_file_write(&f, data, 300000);
	open_ok(&r, f.path);
	mt_quiet_int_eq(r.zero_padded, 1);
	next_end(&r);
	mt_reader_release(&r);
	mt_test_file_done(&f);

	mt_test_file_write(&f, data, 1);
	open_ok(&r, f.path);
	mt_quiet_int_eq(r.zero_padded, 1);
	next_end(&r);
	mt_reader_release(&r);
	mt_test_file_done(&f);
	free(data);
}
END_TEST

/*
 * mt_reader_window() and mt_reader_take(), as the analysis uses them
 * between calls of mt_reader_next(): a caller that finds a line's '\n' in
 * the window and takes the line must see the lines, numbers, cut-off last
 * line, over-long lines and padding that mt_reader_next() alone gives.
 * The taker here takes every line it can find whole in the window, every
 * other one when alternate is set, and never looks past the window.
 */
typedef struct {
	uint64_t number;
	size_t len;
	int terminated, too_long;
	uint64_t sum; /* of the data's bytes, weighted by position */
} seen_line_t;

static uint64_t line_sum(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* Reads path to its end; returns how many lines, in out[]; *taken counts
 * the ones taken from the window. */
static size_t read_all(const char *path, int take, int alternate,
		       seen_line_t *out, size_t max, size_t *taken,
		       int *zero_padded)
{
	mt_reader_t r;
	mt_line_t line;
	size_t n = 0;
	int got;

	open_ok(&r, path);
	*taken = 0;
	for (;;) {
		size_t avail;
		const char *w = mt_reader_window(&r, &avail);
		const char *nl = avail ? memchr(w, '\n', avail) : NULL;

		ck_assert_uint_lt(n, max);
		/* The window never shows the zero padding. */
		if (r.zero_padded && avail)
			ck_assert_int_ne(w[avail - 1], '\0');
		if (take && nl && (size_t)(nl - w) <= MT_READER_LINE_MAX &&
		    (!alternate || n % 2)) {
			size_t len = (size_t)(nl - w);

			out[n].sum = line_sum(w, len);
			out[n].number = mt_reader_take(&r, len);
			out[n].len = len;
			out[n].terminated = 1;
			out[n].too_long = 0;
			n++;
			(*taken)++;
			continue;
		}
		got = mt_reader_next(&r, &line);
		ck_assert_int_ge(got, 0);
		if (!got)
			break;
		out[n].number = line.number;
		out[n].len = line.len;
		out[n].terminated = line.terminated;
		out[n].too_long = line.too_long;
		out[n].sum = line_sum(line.data, line.len);
		n++;
	}
	mt_quiet_int_eq(mt_reader_next(&r, &line), 0);
	*zero_padded = r.zero_padded;
	mt_reader_release(&r);
	return n;
}

static void take_matches_next(const char *data, size_t len, size_t max_lines,
			      size_t min_taken)
{
	seen_line_t *a = malloc(max_lines * sizeof(*a));
	seen_line_t *b = malloc(max_lines * sizeof(*b));
	mt_test_file_t f;
	size_t na, nb, taken, none;
	int pa, pb;

	mt_quiet_ptr_nonnull(a);
	mt_quiet_ptr_nonnull(b);
	mt_test_file_write(&f, data, len);
	na = read_all(f.path, 0, 0, a, max_lines, &none, &pa);
	for (int alternate = 0; alternate < 2; alternate++) {
		size_t want = alternate ? min_taken / 2 : min_taken;

		nb = read_all(f.path, 1, alternate, b, max_lines, &taken, &pb);
		mt_quiet_uint_eq(nb, na);
		mt_quiet_int_eq(pb, pa);
		mt_quiet_uint_ge(taken, want);
		for (size_t i = 0; i < na; i++) {
			mt_quiet_uint_eq(b[i].number, a[i].number);
			mt_quiet_uint_eq(b[i].len, a[i].len);
			mt_quiet_int_eq(b[i].terminated, a[i].terminated);
			mt_quiet_int_eq(b[i].too_long, a[i].too_long);
			mt_quiet(b[i].sum == a[i].sum,
				 "line %" PRIu64 " differs", a[i].number);
		}
	}
	mt_test_file_done(&f);
	free(a);
	free(b);
}

START_TEST(reader_take_matches_next_across_chunk_boundaries)
{
	/* Lines of 1 to 700 bytes over 3 MiB, so that lines straddle every
	 * multiple of the read size, and lines ending exactly at one. */
	size_t cap = 3u << 20, len = 0, lines = 0;
	char *data = malloc(cap + 4096);

	mt_quiet_ptr_nonnull(data);
	while (len < cap) {
		size_t n = 1 + (lines * 7919) % 700;
		size_t to_chunk = READER_CHUNK - len % READER_CHUNK;

		if (lines % 97 == 0 && to_chunk > 1 && to_chunk < 800)
			n = to_chunk - 1; /* its '\n' is the chunk's last byte */
		for (size_t i = 0; i < n; i++)
			data[len + i] = (char)('!' + (lines + i) % 90);
		len += n;
		data[len++] = '\n';
		lines++;
	}
	take_matches_next(data, len, lines + 1, lines / 2);
	free(data);
}
END_TEST

START_TEST(reader_take_matches_next_around_line_max)
{
	/* A line of exactly MT_READER_LINE_MAX, one byte more, short lines
	 * between, and an unterminated last line of MT_READER_LINE_MAX. */
	size_t len = 0;
	char *data = malloc(4 * MT_READER_LINE_MAX + 64);

	mt_quiet_ptr_nonnull(data);
	len += (size_t)sprintf(data + len, "a\nbb\n");
	for (size_t i = 0; i < MT_READER_LINE_MAX; i++)
		data[len++] = (char)('a' + i % 26);
	data[len++] = '\n';
	len += (size_t)sprintf(data + len, "c\n");
	memset(data + len, 'x', MT_READER_LINE_MAX + 1);
	len += MT_READER_LINE_MAX + 1;
	data[len++] = '\n';
	len += (size_t)sprintf(data + len, "d\n");
	memset(data + len, 'q', MT_READER_LINE_MAX);
	len += MT_READER_LINE_MAX;
	take_matches_next(data, len, 16, 3);
	free(data);
}
END_TEST

START_TEST(reader_take_matches_next_before_nul_tail)
{
	/* Zero padding after the last line, and after a cut-off one. */
	size_t pad = 200000;
	char *data = calloc(1, 4096 + pad);

	mt_quiet_ptr_nonnull(data);
	memcpy(data, "one\ntwo\nthree\n", 14);
	take_matches_next(data, 14 + pad, 16, 2);
	memcpy(data, "one\ntwo\nthr", 11);
	memset(data + 11, 0, 8);
	take_matches_next(data, 11 + pad, 16, 1);
	free(data);
}
END_TEST

START_TEST(reader_take_matches_next_without_final_newline)
{
	static const char data[] = "one\ntwo\r\n\nlast";

	take_matches_next(data, sizeof(data) - 1, 16, 2);
}
END_TEST

START_TEST(reader_missing_file_is_enoent)
{
	char *dir = mt_test_tmpdir();
	char *path = mt_test_path(dir, "absent.jsonl");
	int64_t before = mt_mem_outstanding();
	mt_reader_t r;

	errno = 0;
	mt_quiet_int_eq(mt_reader_open(&r, path), MT_EIO);
	mt_quiet_int_eq(errno, ENOENT);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	free(path);
	path = mt_test_path(dir, "absent/below.jsonl");
	errno = 0;
	mt_quiet_int_eq(mt_reader_open(&r, path), MT_EIO);
	mt_quiet_int_eq(errno, ENOENT);
	mt_test_rmdir(dir);
	free(path);
	free(dir);
}
END_TEST

START_TEST(reader_directory_is_eisdir)
{
	char *dir = mt_test_tmpdir();
	int64_t before = mt_mem_outstanding();
	mt_reader_t r;

	errno = 0;
	mt_quiet_int_eq(mt_reader_open(&r, dir), MT_EIO);
	mt_quiet_int_eq(errno, EISDIR);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_test_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(reader_open_out_of_memory_releases_all)
{
	mt_test_file_t f;
	mt_reader_t r;
	int64_t before = mt_mem_outstanding();

	mt_test_file_write(&f, "a\n", 2);
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_reader_open(&r, f.path), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_test_file_done(&f);
}
END_TEST

Suite *mt_suite_reader(void)
{
	Suite *s = suite_create("reader");
	TCase *tc = tcase_create("reader");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, reader_lines_with_final_newline);
	tcase_add_test(tc, reader_last_line_without_newline);
	tcase_add_test(tc, reader_empty_file_has_no_lines);
	tcase_add_test(tc, reader_keeps_crlf_as_data);
	tcase_add_test(tc, reader_keeps_inner_nul_bytes);
	tcase_add_test(tc, reader_too_long_line_costs_no_memory);
	tcase_add_test(tc, reader_line_of_line_max_is_kept);
	tcase_add_test(tc, reader_lines_span_chunk_boundaries);
	tcase_add_test(tc, reader_strips_trailing_nul_padding);
	tcase_add_test(tc, reader_leaves_the_page_cache_as_it_found_it);
	tcase_add_test(tc, reader_reads_plainly_where_dontcache_is_refused);
	tcase_add_test(tc, reader_file_of_only_nuls);
	tcase_add_test(tc, reader_take_matches_next_across_chunk_boundaries);
	tcase_add_test(tc, reader_take_matches_next_around_line_max);
	tcase_add_test(tc, reader_take_matches_next_before_nul_tail);
	tcase_add_test(tc, reader_take_matches_next_without_final_newline);
	tcase_add_test(tc, reader_missing_file_is_enoent);
	tcase_add_test(tc, reader_directory_is_eisdir);
	tcase_add_test(tc, reader_open_out_of_memory_releases_all);
	suite_add_tcase(s, tc);
	return s;
}
