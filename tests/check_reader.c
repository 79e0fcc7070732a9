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
#include "../analyzer/base/mt_error.h"
#include "../analyzer/base/mt_mem.h"
#include "../analyzer/read/mt_reader.h"

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

START_TEST(test_reader_lines_with_final_newline)
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

START_TEST(test_reader_last_line_without_newline)
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

START_TEST(test_reader_empty_file_has_no_lines)
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

START_TEST(test_reader_keeps_crlf_as_data)
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

START_TEST(test_reader_keeps_inner_nul_bytes)
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

START_TEST(test_reader_too_long_line_costs_no_memory)
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

START_TEST(test_reader_line_of_line_max_is_kept)
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
 * test_reader_reads_plainly_where_dontcache_is_refused's). */
START_TEST(test_reader_leaves_the_page_cache_as_it_found_it)
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
START_TEST(test_reader_reads_plainly_where_dontcache_is_refused)
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

START_TEST(test_reader_lines_span_chunk_boundaries)
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

START_TEST(test_reader_strips_trailing_nul_padding)
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

START_TEST(test_reader_file_of_only_nuls)
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

START_TEST(test_reader_take_matches_next_across_chunk_boundaries)
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

START_TEST(test_reader_take_matches_next_around_line_max)
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

START_TEST(test_reader_take_matches_next_before_nul_tail)
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

START_TEST(test_reader_take_matches_next_without_final_newline)
{
	static const char data[] = "one\ntwo\r\n\nlast";

	take_matches_next(data, sizeof(data) - 1, 16, 2);
}
END_TEST

START_TEST(test_reader_missing_file_is_enoent)
{
	char *dir = mt_test_scratch();
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
	free(path);
}
END_TEST

START_TEST(test_reader_directory_is_eisdir)
{
	char *dir = mt_test_scratch();
	int64_t before = mt_mem_outstanding();
	mt_reader_t r;

	errno = 0;
	mt_quiet_int_eq(mt_reader_open(&r, dir), MT_EIO);
	mt_quiet_int_eq(errno, EISDIR);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(test_reader_open_out_of_memory_releases_all)
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

/* ---- the reading thread (mt_reader_ahead) ---- */

/* The lines a reader gave, in order: each one's number, flags and bytes. */
typedef struct {
	uint64_t number;
	size_t len, off; /* its data is bytes[off..off + len) */
	int terminated, too_long;
} rec_t;

typedef struct {
	rec_t *v;
	size_t n, cap;
	char *bytes;
	size_t nbytes, bcap;
	int zero_padded;
} rlog_t;

static void rlog_add(rlog_t *g, uint64_t number, const char *data, size_t len,
		     int terminated, int too_long)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->v = realloc(g->v, g->cap * sizeof(*g->v));
		mt_quiet_ptr_nonnull(g->v);
	}
	if (g->nbytes + len > g->bcap) {
		while (g->nbytes + len > g->bcap)
			g->bcap = g->bcap ? 2 * g->bcap : 1 << 16;
		g->bytes = realloc(g->bytes, g->bcap);
		mt_quiet_ptr_nonnull(g->bytes);
	}
	if (len)
		memcpy(g->bytes + g->nbytes, data, len);
	g->v[g->n++] = (rec_t){ .number = number,
				.len = len,
				.off = g->nbytes,
				.terminated = terminated,
				.too_long = too_long };
	g->nbytes += len;
}

static void rlog_free(rlog_t *g)
{
	free(g->v);
	free(g->bytes);
	memset(g, 0, sizeof(*g));
}

/* Every line to the end into g, then the end again; with take, every
 * other line by window and take, as the pass reads them. */
static void read_lines(mt_reader_t *r, int take, rlog_t *g)
{
	mt_line_t line;
	int got;

	for (;;) {
		size_t avail;
		const char *w = mt_reader_window(r, &avail);
		const char *nl = avail ? memchr(w, '\n', avail) : NULL;

		if (take && nl && (size_t)(nl - w) <= MT_READER_LINE_MAX &&
		    g->n % 2) {
			size_t len = (size_t)(nl - w);
			const char *data = w;
			uint64_t number = mt_reader_take(r, len);

			rlog_add(g, number, data, len, 1, 0);
			continue;
		}
		got = mt_reader_next(r, &line);
		mt_quiet(got >= 0, "mt_reader_next = %d: %s", got,
			 strerror(errno));
		if (!got)
			break;
		rlog_add(g, line.number, line.data, line.len, line.terminated,
			 line.too_long);
	}
	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
}


/* The files.  Each builder returns a malloc'd file and its length. */

static void fill_text(char *p, size_t n, size_t salt)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('!' + (salt + i) % 90);
}

static char *build_chunk_crossing(size_t *len)
{
	/* Lines of 1 to 700 bytes over three reads' worth, some ending
	 * exactly at a multiple of the read size, one byte before or after
	 * it. */
	size_t cap = 3 * READER_CHUNK, n = 0, lines = 0;
	char *d = malloc(cap + 4096);

	mt_quiet_ptr_nonnull(d);
	while (n < cap) {
		size_t k = 1 + (lines * 7919) % 700;
		size_t to_chunk = READER_CHUNK - n % READER_CHUNK;

		if (lines % 61 == 0 && to_chunk > 2 && to_chunk < 800)
			k = to_chunk - 2 + lines % 3;
		fill_text(d + n, k, lines);
		n += k;
		d[n++] = '\n';
		lines++;
	}
	*len = n;
	return d;
}

static char *build_long_lines(size_t *len)
{
	/* Lines as long as the reader keeps, each after a short one: each
	 * one's start is copied across a swap. */
	static const size_t longs[] = { 300000, 5, 600000, 1000000,
					MT_READER_LINE_MAX - 1, 17, 270000 };
	size_t n = 0;
	char *d = malloc(8u << 20);

	mt_quiet_ptr_nonnull(d);
	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
		n += (size_t)sprintf(d + n, "short %zu\n", i);
		fill_text(d + n, longs[i], i);
		n += longs[i];
		d[n++] = '\n';
	}
	*len = n;
	return d;
}

/* A line of exactly MT_READER_LINE_MAX bytes, one of one more and one of
 * 5 MiB, each after a line whose length puts it at offset in its read,
 * and an unterminated last line of MT_READER_LINE_MAX. */
static char *build_line_max_at(size_t *len, size_t offset)
{
	size_t n = 0;
	/* Three pads of less than a read, the three lines, the last one. */
	char *d = malloc(3 * READER_CHUNK + 3 * MT_READER_LINE_MAX + (5u << 20) + 64);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; i < 3; i++) {
		size_t pad = (offset + READER_CHUNK - n % READER_CHUNK - 1) %
			     READER_CHUNK;
		size_t big = i == 0 ? MT_READER_LINE_MAX :
			     i == 1 ? MT_READER_LINE_MAX + 1 : 5u << 20;

		fill_text(d + n, pad, 3);
		n += pad;
		d[n++] = '\n';
		fill_text(d + n, big, (size_t)i);
		n += big;
		d[n++] = '\n';
	}
	n += (size_t)sprintf(d + n, "d\n");
	memset(d + n, 'q', MT_READER_LINE_MAX);
	n += MT_READER_LINE_MAX;
	*len = n;
	return d;
}

static char *build_line_max(size_t *len)
{
	return build_line_max_at(len, 0);
}

static char *build_line_max_late(size_t *len)
{
	return build_line_max_at(len, READER_CHUNK - 3);
}

static char *build_too_long_last(size_t *len)
{
	size_t n = 0;
	char *d = malloc(MT_READER_LINE_MAX + 64);

	mt_quiet_ptr_nonnull(d);
	n += (size_t)sprintf(d, "x\n");
	memset(d + n, 'z', MT_READER_LINE_MAX + 7);
	*len = n + MT_READER_LINE_MAX + 7;
	return d;
}

static char *build_no_final_newline(size_t *len)
{
	size_t n = 0;
	char *d = malloc(1u << 20);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; i < 5000; i++)
		n += (size_t)sprintf(d + n, "{\"line\":%d}\n", i);
	n += (size_t)sprintf(d + n, "last");
	*len = n;
	return d;
}

static char *build_zero_tail(size_t *len)
{
	/* Content of more than two reads, the last one short of a chunk:
	 * the read asked for ahead must stop where the padding starts. */
	size_t n = 0, pad = 200000, want = 2 * READER_CHUNK + READER_CHUNK / 2;
	char *d = calloc(1, want + 64 + pad);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; n < want; i++)
		n += (size_t)sprintf(d + n, "line %d\n", i);
	*len = n + pad;
	return d;
}

static char *build_cut_into_zeros(size_t *len)
{
	size_t n = 0, pad = 70000;
	char *d = calloc(1, (1u << 20) + pad);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; i < 40000; i++)
		n += (size_t)sprintf(d + n, "%d\n", i);
	n += (size_t)sprintf(d + n, "partial");
	*len = n + pad;
	return d;
}

static char *build_too_long_into_zeros(size_t *len)
{
	size_t n = 0, pad = 100000;
	char *d = calloc(1, (6u << 20) + pad);

	mt_quiet_ptr_nonnull(d);
	n += (size_t)sprintf(d, "first\n");
	memset(d + n, 'y', 5u << 20);
	*len = n + (5u << 20) + pad;
	return d;
}

static char *build_empty(size_t *len)
{
	*len = 0;
	return calloc(1, 1);
}

static char *build_only_zeros(size_t *len)
{
	*len = 300000;
	return calloc(1, 300000);
}

static char *build_one_zero(size_t *len)
{
	*len = 1;
	return calloc(1, 1);
}

static char *build_many_short(size_t *len)
{
	size_t n = 0, lines = 700000;
	char *d = malloc(lines * 4);

	mt_quiet_ptr_nonnull(d);
	for (size_t i = 0; i < lines; i++) {
		size_t k = (i * 2654435761u) % 4;

		fill_text(d + n, k, i);
		n += k;
		d[n++] = '\n';
	}
	*len = n;
	return d;
}

/* Exactly two reads' worth, its last byte a '\n' or not. */
static char *build_exact_reads(size_t *len, int terminated)
{
	size_t n = 0, want = 2 * READER_CHUNK;
	char *d = malloc(want);

	mt_quiet_ptr_nonnull(d);
	while (n < want) {
		size_t k = 1 + n % 97;

		if (k > want - n - 1)
			k = want - n - 1;
		fill_text(d + n, k, n);
		n += k;
		d[n++] = '\n';
	}
	if (!terminated)
		d[want - 1] = 'e';
	*len = want;
	return d;
}

static char *build_exact_reads_terminated(size_t *len)
{
	return build_exact_reads(len, 1);
}

static char *build_exact_reads_unterminated(size_t *len)
{
	return build_exact_reads(len, 0);
}

static char *build_inner_zeros(size_t *len)
{
	/* Runs of NUL bytes inside, not at the end: content. */
	size_t n = 0;
	char *d = calloc(1, 1u << 20);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; i < 300; i++) {
		n += (size_t)sprintf(d + n, "line %d", i);
		n += (size_t)(i % 7) * 300; /* zeros */
		d[n++] = '\n';
	}
	n += (size_t)sprintf(d + n, "end\n");
	*len = n;
	return d;
}

typedef struct {
	const char *name;
	char *(*build)(size_t *len);
} ahead_case_t;

static const ahead_case_t ahead_files[] = {
	{ "chunk_crossing", build_chunk_crossing },
	{ "long_lines", build_long_lines },
	{ "line_max", build_line_max },
	{ "line_max_late", build_line_max_late },
	{ "too_long_last", build_too_long_last },
	{ "no_final_newline", build_no_final_newline },
	{ "zero_tail", build_zero_tail },
	{ "cut_into_zeros", build_cut_into_zeros },
	{ "too_long_into_zeros", build_too_long_into_zeros },
	{ "empty", build_empty },
	{ "only_zeros", build_only_zeros },
	{ "one_zero", build_one_zero },
	{ "many_short", build_many_short },
	{ "exact_reads", build_exact_reads_terminated },
	{ "exact_reads_unterminated", build_exact_reads_unterminated },
	{ "inner_zeros", build_inner_zeros },
};
#define NAHEAD_FILES (sizeof(ahead_files) / sizeof(ahead_files[0]))

/* Every line of path into g: with the reading thread or without, and
 * with every other line taken by window and take, as the pass does, or
 * not. */
static void read_log(const char *path, int ahead, int take, rlog_t *g)
{
	int64_t before = mt_mem_outstanding();
	mt_reader_t r;

	memset(g, 0, sizeof(*g));
	open_ok(&r, path);
	if (ahead) {
		mt_quiet_int_eq(mt_reader_ahead(&r), MT_OK);
		mt_quiet_ptr_nonnull(r.ahead);
	}
	read_lines(&r, take, g);
	g->zero_padded = r.zero_padded;
	mt_reader_release(&r);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}

static void same_log(const char *what, const rlog_t *a, const rlog_t *b)
{
	mt_quiet(a->n == b->n, "%s: %zu lines vs %zu", what, a->n, b->n);
	mt_quiet_int_eq(a->zero_padded, b->zero_padded);
	for (size_t i = 0; i < a->n; i++) {
		const rec_t *x = &a->v[i], *y = &b->v[i];

		mt_quiet(x->number == y->number && x->len == y->len &&
				 x->terminated == y->terminated &&
				 x->too_long == y->too_long,
			 "%s, line %zu: number %ju/%ju, len %zu/%zu, "
			 "terminated %d/%d, too_long %d/%d",
			 what, i + 1, (uintmax_t)x->number, (uintmax_t)y->number,
			 x->len, y->len, x->terminated, y->terminated,
			 x->too_long, y->too_long);
		mt_quiet(!memcmp(a->bytes + x->off, b->bytes + y->off, x->len),
			 "%s: line %ju's bytes differ", what, (uintmax_t)x->number);
	}
}

/*
 * The reading thread gives the lines the reader gives alone, numbered
 * alike, on files whose lines cross its reads, are as long as it keeps
 * or longer, end without a newline, in zero padding, or in nothing; and
 * so when the pass takes every other line from the window.
 */
START_TEST(test_reader_ahead_gives_the_plain_readers_lines)
{
	char *dir = mt_test_scratch();

	for (size_t f = 0; f < NAHEAD_FILES; f++) {
		size_t len;
		char *data = ahead_files[f].build(&len);
		char *path = mt_test_path(dir, ahead_files[f].name);
		rlog_t plain;

		mt_quiet_ptr_nonnull(data);
		mt_test_write(path, data, len);
		free(data);
		read_log(path, 0, 0, &plain);
		for (int take = 0; take <= 1; take++) {
			rlog_t ahead;

			read_log(path, 1, take, &ahead);
			same_log(ahead_files[f].name, &plain, &ahead);
			rlog_free(&ahead);
		}
		rlog_free(&plain);
		free(path);
	}
}
END_TEST

/* A pipe has no reading thread: its read may wait for its writer for
 * ever, and the release would wait for that read. */
START_TEST(test_reader_ahead_leaves_a_pipe_to_the_caller)
{
	int fds[2], saved = dup(0);
	mt_reader_t r;
	mt_line_t line;

	mt_quiet(saved >= 0, "dup: %s", strerror(errno));
	mt_quiet_int_eq(pipe(fds), 0);
	mt_quiet_int_eq(dup2(fds[0], 0), 0);
	close(fds[0]);
	mt_quiet_int_eq(write(fds[1], "{\"a\":1}\n", 8), 8);
	open_ok(&r, "-");
	mt_quiet_int_eq(mt_reader_ahead(&r), MT_OK);
	mt_quiet_ptr_null(r.ahead);
	mt_quiet_int_eq(mt_reader_next(&r, &line), 1);
	mt_quiet_uint_eq(line.len, 7);
	/* The writer is still there: no thread may be stuck reading. */
	mt_reader_release(&r);
	close(fds[1]);
	mt_quiet_int_eq(dup2(saved, 0), 0);
	close(saved);
}
END_TEST

/* Out of memory for the thread's buffer: MT_ENOMEM, and the reader reads
 * on as before, alone. */
START_TEST(test_reader_ahead_out_of_memory_leaves_a_working_reader)
{
	mt_test_file_t f;
	mt_reader_t r;
	mt_line_t line;
	int64_t before = mt_mem_outstanding();

	mt_test_file_write(&f, "one\ntwo\n", 8);
	open_ok(&r, f.path);
	for (uint64_t n = 1; n <= 2; n++) {
		mt_mem_fail_at(n, 0);
		mt_quiet_int_eq(mt_reader_ahead(&r), MT_ENOMEM);
		mt_mem_fail_at(0, 0);
		mt_quiet_ptr_null(r.ahead);
	}
	mt_quiet_int_eq(mt_reader_next(&r, &line), 1);
	ck_assert(line.len == 3 && !memcmp(line.data, "one", 3));
	mt_quiet_int_eq(mt_reader_next(&r, &line), 1);
	mt_quiet_int_eq(mt_reader_next(&r, &line), 0);
	mt_reader_release(&r);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_test_file_done(&f);
}
END_TEST

Suite *mt_suite_reader(void)
{
	Suite *s = suite_create("reader");
	TCase *tc = tcase_create("reader");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_reader_lines_with_final_newline);
	tcase_add_test(tc, test_reader_last_line_without_newline);
	tcase_add_test(tc, test_reader_empty_file_has_no_lines);
	tcase_add_test(tc, test_reader_keeps_crlf_as_data);
	tcase_add_test(tc, test_reader_keeps_inner_nul_bytes);
	tcase_add_test(tc, test_reader_too_long_line_costs_no_memory);
	tcase_add_test(tc, test_reader_line_of_line_max_is_kept);
	tcase_add_test(tc, test_reader_lines_span_chunk_boundaries);
	tcase_add_test(tc, test_reader_strips_trailing_nul_padding);
	tcase_add_test(tc, test_reader_leaves_the_page_cache_as_it_found_it);
	tcase_add_test(tc, test_reader_reads_plainly_where_dontcache_is_refused);
	tcase_add_test(tc, test_reader_file_of_only_nuls);
	tcase_add_test(tc, test_reader_take_matches_next_across_chunk_boundaries);
	tcase_add_test(tc, test_reader_take_matches_next_around_line_max);
	tcase_add_test(tc, test_reader_take_matches_next_before_nul_tail);
	tcase_add_test(tc, test_reader_ahead_gives_the_plain_readers_lines);
	tcase_add_test(tc, test_reader_ahead_leaves_a_pipe_to_the_caller);
	tcase_add_test(tc, test_reader_ahead_out_of_memory_leaves_a_working_reader);
	tcase_add_test(tc, test_reader_take_matches_next_without_final_newline);
	tcase_add_test(tc, test_reader_missing_file_is_enoent);
	tcase_add_test(tc, test_reader_directory_is_eisdir);
	tcase_add_test(tc, test_reader_open_out_of_memory_releases_all);
	suite_add_tcase(s, tc);
	return s;
}
