/*
 * mt_reader: splits a trace file into lines in one streaming pass, with
 * memory bounded by MT_READER_LINE_MAX whatever the file's length.
 *
 * A memory-mapped trace of a killed process ends in zero bytes (the
 * preload's mapped output is extended ahead of its writes), so trailing
 * NUL bytes of a regular file are not content: the reader stops before
 * them and says so in zero_padded.
 *
 * A compressed trace (zstd or gzip, told by its first bytes, whatever its
 * name; format.md section 2.1) is decompressed as it is read (mt_decomp), into
 * the same buffer, and split the same way: its lines are the decompressed
 * JSONL's, a stream cut inside a frame ends where its whole blocks do,
 * and data the decoder refuses is MT_ECORRUPT.  A plain file is read as
 * before: the only cost is a look at its first bytes when it is opened.
 *
 * A file still being written can be followed (mt_reader_follow()): where
 * the bytes written so far end, the reader asks its caller whether to
 * wait for more, and reads on from where it stood when they come.
 *
 * Invariants: line numbers count every line, from 1, the too-long and
 * unterminated ones included; a line's data stays valid only until the
 * next call; data never contains the '\n'.
 */
#ifndef MT_READER_H
#define MT_READER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest line kept; a longer one costs this much, not its length. */
#define MT_READER_LINE_MAX (1u << 20)

/* What one read(2) asks for.  A trace read from the disk (the preload
 * lets its pages go as it writes) took 0.57 s with 256 KiB reads and 0.38
 * with 2 MiB on the churn's 700 MB, as fast as from the page cache; 4 MiB
 * gained nothing more (docs/performance.md, "Reading the file"). */
#define MT_READER_CHUNK (2u << 20)

typedef struct {
	const char *data;
	size_t len;
	uint64_t number;
	int terminated; /* 0: the last line, cut off before its '\n' */
	int too_long;   /* longer than MT_READER_LINE_MAX; data is empty */
} mt_line_t;

/* Following a file (mt_reader_follow()): called where the bytes written so
 * far end, with how many bytes of the file were read; 1 to wait for more
 * (the call itself waits), 0 to take this as the file's end. */
typedef int mt_reader_wait_t(void *ctx, uint64_t bytes_read);

typedef struct {
	int fd;
	int owns_fd;
	char *buf;
	size_t cap;
	size_t start, end;  /* unread bytes are buf[start..end) */
	uint64_t remaining; /* bytes before the zero padding, or UINT64_MAX */
	uint64_t line_no;
	int eof;
	int zero_padded;
	int dontcache; /* read with RWF_DONTCACHE: a regular file, until refused */
	struct mt_decomp *decomp; /* a compressed trace's decoder, or NULL */
	/* The reading thread (mt_reader_ahead()), or NULL: while it runs,
	 * fd, dontcache, remaining and decomp are its own. */
	struct mt_reader_ahead *ahead;
	/* The chunks read and parsed on other threads (mt_ahead), or NULL:
	 * while it runs, fd, remaining and decomp are its own.  recs[rec_i..
	 * nrecs) are the parsed lines of the chunk whose first byte is
	 * buf[rec_base] (mt_ahead_at()). */
	struct mt_ahead *par;
	const struct mt_ahead_rec *recs;
	size_t nrecs, rec_i, rec_base;
	mt_reader_wait_t *wait; /* following (mt_reader_follow()), or NULL */
	void *wait_ctx;
	uint64_t bytes_read; /* of the file, compressed or not */
} mt_reader_t;

/*
 * Open path ("-" is standard input).  Returns MT_OK, MT_ENOMEM, or MT_EIO
 * with errno set (ENOENT for a missing file).  On error nothing is left to
 * release.
 */
int mt_reader_open(mt_reader_t *r, const char *path);
void mt_reader_release(mt_reader_t *r);

/* "zstd", "gzip" or "plain": what the file's first bytes said. */
const char *mt_reader_format(const mt_reader_t *r);
/* At the end: a compressed trace's stream stopped inside a frame (zstd)
 * or member (gzip), *unit says which, starting at byte *at of the file. */
int mt_reader_cut(const mt_reader_t *r, const char **unit, uint64_t *at);
/* After MT_ECORRUPT: why, in one line ("the zstd frame at byte 0 is
 * corrupt: ..."). */
const char *mt_reader_why(const mt_reader_t *r);

/*
 * Follow r's file while it is written: at the end of the bytes written so
 * far, wait(ctx, bytes_read) is called, and the file read again while it
 * returns 1; when it returns 0, that is the end.  A plain trace's NUL bytes
 * after its content are not read until content follows them (a writer
 * that extends the file ahead of its lines leaves them there); a
 * compressed trace's frame or member cut by the end of what is written is
 * kept and decoded on when the rest comes, never taken for corrupt data
 * or for the stream's end.  A regular file only (a pipe's read waits by
 * itself): for any other, nothing changes.  Call it before the first line
 * is read, and not with mt_reader_ahead(), which then does nothing.
 */
void mt_reader_follow(mt_reader_t *r, mt_reader_wait_t *wait, void *ctx);

/*
 * Read (and decompress) on a thread of its own from now on, a buffer
 * ahead of the lines: a plain stage, with no schedule, that gives the
 * same lines, numbers and errors in the same order.  A regular file only
 * (a pipe's read may wait for its writer for ever).  Call it before the
 * first line is read.  MT_OK (also when it does nothing: a pipe, a file
 * followed, or no thread to be had) or MT_ENOMEM (nothing changed).
 */
int mt_reader_ahead(mt_reader_t *r);

/* The next line: 1 when *line is filled, 0 at the end, MT_EIO on a read
 * error (errno set); for a compressed trace also MT_ECORRUPT (data the
 * decoder refuses: mt_reader_why()) and MT_ENOMEM (the decoder's memory).
 * The lines before the error were whole and are what the data said. */
int mt_reader_next(mt_reader_t *r, mt_line_t *line);

/*
 * For a caller that finds a line's end itself (mt_parse_exact_window()):
 * the bytes already read and not yet taken, r->buf[start..end), without
 * reading more.  They begin at the start of the next line.
 */
static inline const char *mt_reader_window(const mt_reader_t *r, size_t *n)
{
	*n = r->end - r->start;
	return r->buf + r->start;
}

/*
 * Take the next line as mt_reader_next() would have returned it, found in
 * the window by the caller: its len bytes, at most MT_READER_LINE_MAX,
 * hold no '\n' and the byte after them is one.  Returns its number.
 */
static inline uint64_t mt_reader_take(mt_reader_t *r, size_t len)
{
	r->start += len + 1;
	return ++r->line_no;
}

#endif
