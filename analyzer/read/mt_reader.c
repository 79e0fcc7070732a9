/*
 * mt_reader: line splitting over read(2) with a fixed buffer.  It must
 * never hold more than one buffer of the file, nor allocate per line.
 */
#include "../read/mt_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../read/mt_ahead.h"
#include "../read/mt_decomp.h"
#include "../base/mt_error.h"
#include "../base/mt_mem.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define CHUNK MT_READER_CHUNK

#define TAIL_BLOCK 65536

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080 /* Linux 6.14 */
#endif

/*
 * Read at the file's position.  A regular file is read with
 * RWF_DONTCACHE where the kernel has it: the pages the read brings in
 * leave the page cache once copied, and pages already there stay.  A
 * trace is read once, front to back, and is often far larger than what
 * is worth caching (the preload lets its own trace's pages go as it
 * writes); on a virtual machine, page cache made of memory the guest has
 * not used lately costs several times the read itself (docs/performance.md,
 * "The trace's pages").  A kernel or file system without it says
 * EOPNOTSUPP (EINVAL before Linux 6.14 knew the flag; ENOSYS without
 * preadv2, EPERM where a seccomp filter forbids it), and plain reads
 * follow.
 */
static ssize_t read_retry(mt_reader_t *r, void *p, size_t n)
{
	ssize_t got;

	for (;;) {
		if (r->dontcache) {
			struct iovec iov = { p, n };

			got = preadv2(r->fd, &iov, 1, -1, RWF_DONTCACHE);
			if (got < 0 && (errno == EOPNOTSUPP || errno == EINVAL ||
					errno == ENOSYS || errno == EPERM)) {
				r->dontcache = 0;
				continue;
			}
		} else {
			got = read(r->fd, p, n);
		}
		if (got > 0)
			r->bytes_read += (uint64_t)got;
		if (got >= 0 || errno != EINTR)
			return got;
	}
}

/* Length of a regular file without its trailing NUL bytes. */
static int content_length(int fd, uint64_t size, uint64_t *out)
{
	char block[TAIL_BLOCK];
	uint64_t end = size;

	while (end > 0) {
		size_t n = end < TAIL_BLOCK ? (size_t)end : TAIL_BLOCK;
		ssize_t got;

		do
			got = pread(fd, block, n, (off_t)(end - n));
		while (got < 0 && errno == EINTR);
		if (got < 0)
			return MT_EIO;
		if ((size_t)got != n) {
			/* The file shrank under us: read it as a stream. */
			*out = UINT64_MAX;
			return MT_OK;
		}
		for (size_t i = n; i > 0; i--)
			if (block[i - 1] != '\0') {
				*out = end - n + i;
				return MT_OK;
			}
		end -= n;
	}
	*out = 0;
	return MT_OK;
}

/*
 * Following a file: wait for bytes after the ones read.  1: read again
 * (a plain trace's remaining then counts the content written since);
 * 0: the end; MT_EIO with errno set.  A plain trace's content is the
 * file up to its last byte that is not NUL, as at mt_reader_open().
 */
static int follow_more(mt_reader_t *r)
{
	for (;;) {
		struct stat st;
		uint64_t len;
		off_t at;

		if (!r->wait(r->wait_ctx, r->bytes_read))
			return 0;
		if (r->decomp)
			return 1; /* its reads stop at the file's end */
		if (fstat(r->fd, &st) < 0 ||
		    (at = lseek(r->fd, 0, SEEK_CUR)) < 0 ||
		    content_length(r->fd, (uint64_t)st.st_size, &len))
			return MT_EIO;
		/* UINT64_MAX: it shrank while looked at; look again later. */
		if (len == UINT64_MAX)
			continue;
		r->zero_padded = len < (uint64_t)st.st_size;
		if (len > (uint64_t)at) {
			r->remaining = len - (uint64_t)at;
			return 1;
		}
	}
}

static ssize_t raw_read(void *ctx, void *p, size_t n)
{
	mt_reader_t *r = ctx;

	for (;;) {
		ssize_t got = read_retry(r, p, n);
		int more;

		if (got != 0 || !r->wait)
			return got;
		if ((more = follow_more(r)) <= 0)
			return more ? -1 : 0;
	}
}

/*
 * The next bytes of the trace into p: bytes read (> 0), 0 at the end, or
 * MT_EIO (errno set), MT_ENOMEM, MT_ECORRUPT.  A compressed trace's come
 * from its decoder, which reads the file; a plain one's straight from it.
 */
static ssize_t source_read(mt_reader_t *r, void *p, size_t n)
{
	ssize_t got;

	if (r->decomp)
		return mt_decomp_read(r->decomp, raw_read, r, p, n);
	got = read_retry(r, p, n);
	return got < 0 ? MT_EIO : got;
}

/* The end was read: a compressed trace says whether padding followed. */
static void at_end(mt_reader_t *r)
{
	r->eof = 1;
	if (r->decomp && mt_decomp_zero_padded(r->decomp))
		r->zero_padded = 1;
}

/*
 * The trace's first bytes, at most MT_DECOMP_MAGIC_MAX of them (fewer only
 * at its end), for mt_decomp_sniff().  An error here leaves the trace
 * plain and unread: the next read meets it and reports it as a plain
 * trace's first read would.
 *
 * A regular file's are looked at where it stands, with pread(2), and its
 * reads then start at its first byte as before (RWF_DONTCACHE as its
 * reads have it, so that the look leaves no page behind either).
 */
static size_t peek_head(mt_reader_t *r, void *head)
{
	off_t at = lseek(r->fd, 0, SEEK_CUR);
	size_t want = MT_DECOMP_MAGIC_MAX;
	struct iovec iov = { head, 0 };
	ssize_t got;

	if (at < 0)
		return 0;
	if ((uint64_t)want > r->remaining)
		want = (size_t)r->remaining;
	iov.iov_len = want;
	do
		got = preadv2(r->fd, &iov, 1, at, RWF_DONTCACHE);
	while (got < 0 && errno == EINTR);
	if (got < 0 && (errno == EOPNOTSUPP || errno == EINVAL ||
			errno == ENOSYS || errno == EPERM))
		do
			got = pread(r->fd, head, want, at);
		while (got < 0 && errno == EINTR);
	return got < 0 ? 0 : (size_t)got;
}

/* A pipe's (or any stream's) cannot be read twice: they are read into
 * buf[0..), where a plain trace's lines then start. */
static size_t read_head(mt_reader_t *r)
{
	size_t n = 0, want = MT_DECOMP_MAGIC_MAX;

	while (n < want) {
		ssize_t got = read_retry(r, r->buf + n, want - n);

		if (got <= 0)
			break;
		n += (size_t)got;
	}
	return n;
}

int mt_reader_open(mt_reader_t *r, const char *path)
{
	struct stat st;
	unsigned char head[MT_DECOMP_MAGIC_MAX];
	size_t nhead;
	mt_decomp_format_t format;
	int saved, rc = MT_EIO;

	memset(r, 0, sizeof(*r));
	r->remaining = UINT64_MAX;
	if (!strcmp(path, "-")) {
		r->fd = 0;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0)
			return MT_EIO;
		r->owns_fd = 1;
	}
	if (fstat(r->fd, &st) < 0)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	r->cap = MT_READER_LINE_MAX + CHUNK;
	r->buf = mt_mem_malloc(r->cap);
	if (!r->buf) {
		rc = MT_ENOMEM;
		goto fail;
	}
	if (S_ISREG(st.st_mode)) {
		uint64_t len;

		if (content_length(r->fd, (uint64_t)st.st_size, &len)) {
			rc = MT_EIO;
			goto fail;
		}
		if (len != UINT64_MAX && len < (uint64_t)st.st_size)
			r->zero_padded = 1;
		r->remaining = len;
		r->dontcache = 1;
		format = mt_decomp_sniff(head, peek_head(r, head));
		nhead = 0;
	} else {
		nhead = read_head(r);
		format = mt_decomp_sniff(r->buf, nhead);
	}
	if (format == MT_DECOMP_PLAIN) {
		/* A stream's bytes read are the first of the first line. */
		r->end = nhead;
		return MT_OK;
	}
	/* Compressed: the bytes read go to the decoder, which reads the
	 * file to its end (its last bytes may be NULs, as a gzip trailer's
	 * length often ends in one, and it tells padding from them). */
	r->zero_padded = 0;
	r->remaining = UINT64_MAX;
	if ((rc = mt_decomp_open(&r->decomp, format, r->buf, nhead)))
		goto fail;
	return MT_OK;
fail:
	saved = rc == MT_EIO ? errno : ENOMEM;
	mt_mem_free(r->buf);
	r->buf = NULL;
	if (r->owns_fd)
		close(r->fd);
	r->owns_fd = 0;
	errno = saved;
	return rc;
}

const char *mt_reader_format(const mt_reader_t *r)
{
	return mt_decomp_name(r->decomp ? mt_decomp_format(r->decomp) : MT_DECOMP_PLAIN);
}

int mt_reader_cut(const mt_reader_t *r, const char **unit, uint64_t *at)
{
	*unit = "";
	*at = 0;
	if (!r->decomp)
		return 0;
	*unit = mt_decomp_unit(r->decomp);
	return mt_decomp_cut(r->decomp, at);
}

const char *mt_reader_why(const mt_reader_t *r)
{
	return r->decomp ? mt_decomp_why(r->decomp) : "";
}

/*
 * The reading thread.  One spare buffer, as large as the reader's: the
 * thread reads the next chunk into it, after MT_READER_LINE_MAX bytes of
 * room, while the caller works through its own; fill() then copies the
 * bytes not yet taken (part of a line, at most MT_READER_LINE_MAX) into
 * that room and the buffers trade places, so nothing is copied but the
 * part-line.  A hand-over is once a chunk (2 MiB): a mutex and a
 * condition variable, no spinning.
 */
struct mt_reader_ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *spare;
	int full;     /* spare holds got (the thread's read is done) */
	int stop;     /* the caller is done: the thread ends */
	ssize_t got;  /* bytes read, 0 at the end, or source_read()'s error */
	int err;      /* errno with a negative got */
};

static ssize_t source_read(mt_reader_t *r, void *p, size_t n);

/* One read into the spare: a chunk, never past the content. */
static ssize_t ahead_read(mt_reader_t *r, int *err)
{
	size_t room = (uint64_t)CHUNK > r->remaining ? (size_t)r->remaining : CHUNK;
	ssize_t got;

	*err = 0;
	if (!room)
		return 0;
	got = source_read(r, r->ahead->spare + MT_READER_LINE_MAX, room);
	*err = got < 0 ? errno : 0;
	if (got > 0 && r->remaining != UINT64_MAX)
		r->remaining -= (uint64_t)got;
	return got;
}

static void *ahead_main(void *arg)
{
	mt_reader_t *r = arg;
	struct mt_reader_ahead *a = r->ahead;

	for (;;) {
		int err;
		ssize_t got;

		pthread_mutex_lock(&a->lock);
		while (a->full && !a->stop)
			pthread_cond_wait(&a->cond, &a->lock);
		if (a->stop) {
			pthread_mutex_unlock(&a->lock);
			return NULL;
		}
		pthread_mutex_unlock(&a->lock);
		got = ahead_read(r, &err);
		pthread_mutex_lock(&a->lock);
		a->got = got;
		a->err = err;
		a->full = 1;
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
		if (got <= 0)
			return NULL; /* the end, or an error: nothing more to read */
	}
}

void mt_reader_follow(mt_reader_t *r, mt_reader_wait_t *wait, void *ctx)
{
	struct stat st;

	if (r->ahead || r->par || fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	r->wait = wait;
	r->wait_ctx = ctx;
}

int mt_reader_ahead(mt_reader_t *r)
{
	struct mt_reader_ahead *a;
	struct stat st;

	/* A regular file only: a read of a pipe may wait for ever for its
	 * writer, and the caller's release would wait for that read. */
	if (r->ahead || r->par || r->wait || r->end - r->start > MT_READER_LINE_MAX ||
	    fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return MT_OK;
	a = mt_mem_calloc(1, sizeof(*a));
	if (!a)
		return MT_ENOMEM;
	a->spare = mt_mem_malloc(r->cap);
	if (!a->spare) {
		mt_mem_free(a);
		return MT_ENOMEM;
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	r->ahead = a;
	if (pthread_create(&a->thread, NULL, ahead_main, r)) {
		/* No thread to be had: the reads stay on this one. */
		r->ahead = NULL;
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
		mt_mem_free(a->spare);
		mt_mem_free(a);
	}
	return MT_OK;
}

static void ahead_stop(mt_reader_t *r)
{
	struct mt_reader_ahead *a = r->ahead;

	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	mt_mem_free(a->spare);
	mt_mem_free(a);
	r->ahead = NULL;
}

/* fill() with the reading thread: wait for its read, trade buffers, and
 * let it read the next.  Returns what fill() does. */
static ssize_t fill_ahead(mt_reader_t *r)
{
	struct mt_reader_ahead *a = r->ahead;
	size_t keep = r->end - r->start;
	ssize_t got;
	char *b;

	if (r->eof)
		return 0;
	if (keep > MT_READER_LINE_MAX)
		return -2; /* the caller handles a long line */
	pthread_mutex_lock(&a->lock);
	while (!a->full)
		pthread_cond_wait(&a->cond, &a->lock);
	got = a->got;
	if (got < 0) {
		errno = a->err;
		pthread_mutex_unlock(&a->lock);
		return got;
	}
	if (got == 0) {
		pthread_mutex_unlock(&a->lock);
		at_end(r);
		return 0;
	}
	memcpy(a->spare + MT_READER_LINE_MAX - keep, r->buf + r->start, keep);
	b = r->buf;
	r->buf = a->spare;
	a->spare = b;
	r->start = MT_READER_LINE_MAX - keep;
	r->end = MT_READER_LINE_MAX + (size_t)got;
	a->full = 0;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	return got;
}

void mt_reader_release(mt_reader_t *r)
{
	if (r->ahead)
		ahead_stop(r);
	if (r->par)
		mt_ahead_stop(r);
	mt_decomp_free(r->decomp);
	r->decomp = NULL;
	if (r->owns_fd)
		close(r->fd);
	mt_mem_free(r->buf);
	r->buf = NULL;
	r->owns_fd = 0;
}

/* Read more bytes after end.  Returns bytes read, 0 at the end, -2 when
 * the buffer is full, or source_read()'s error. */
static ssize_t fill(mt_reader_t *r)
{
	size_t room;
	ssize_t got;

	if (r->ahead)
		return fill_ahead(r);
	if (r->eof)
		return 0;
	if (r->par) {
		got = mt_ahead_fill(r);
		if (got == 0)
			at_end(r);
		if (got != MT_AHEAD_SERIAL)
			return got;
	}
	if (r->start > 0 && r->cap - r->end < CHUNK) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	for (;;) {
		room = r->cap - r->end;
		if (room > CHUNK)
			room = CHUNK;
		if ((uint64_t)room > r->remaining)
			room = (size_t)r->remaining;
		if (room)
			break;
		if (r->remaining)
			return -2; /* buffer full: the caller handles a long line */
		/* A plain trace's content, read to its end: the end, unless
		 * the file is followed and more comes. */
		got = r->wait ? follow_more(r) : 0;
		if (got < 0)
			return got;
		if (!got) {
			at_end(r);
			return 0;
		}
	}
	got = source_read(r, r->buf + r->end, room);
	if (got < 0)
		return got;
	if (got == 0) {
		at_end(r);
		return 0;
	}
	r->end += (size_t)got;
	if (r->remaining != UINT64_MAX)
		r->remaining -= (uint64_t)got;
	return got;
}

/* memchr(s, '\n', n), inline: a trace line is about 130 bytes, and the
 * call's set-up and tail cost as much as its scan. */
static inline char *find_newline(char *s, size_t n)
{
#if defined(__SSE2__)
	const __m128i nl = _mm_set1_epi8('\n');
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, nl)) |
			     (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, nl)) << 16;

		if (m)
			return s + i + __builtin_ctz(m);
	}
	return memchr(s + i, '\n', n - i);
#else
	return memchr(s, '\n', n);
#endif
}

/* Skip the rest of an over-long line, up to and including its '\n'. */
static int skip_line(mt_reader_t *r, mt_line_t *line)
{
	for (;;) {
		char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		ssize_t got;

		if (nl) {
			r->start = (size_t)(nl - r->buf) + 1;
			return 1;
		}
		r->start = r->end = 0;
		got = fill(r);
		if (got < 0)
			return (int)got; /* not -2: the buffer is empty */
		if (got == 0) {
			line->terminated = 0;
			return 1;
		}
	}
}

int mt_reader_next(mt_reader_t *r, mt_line_t *line)
{
	size_t scanned = 0;

	memset(line, 0, sizeof(*line));
	for (;;) {
		char *p = r->buf + r->start;
		char *nl = find_newline(p + scanned, r->end - r->start - scanned);
		ssize_t got;

		if (nl) {
			line->data = p;
			line->len = (size_t)(nl - p);
			line->terminated = 1;
			line->number = ++r->line_no;
			r->start += line->len + 1;
			if (line->len > MT_READER_LINE_MAX) {
				line->too_long = 1;
				line->len = 0;
			}
			return 1;
		}
		scanned = r->end - r->start;
		if (scanned > MT_READER_LINE_MAX) {
			line->number = ++r->line_no;
			line->too_long = 1;
			line->terminated = 1;
			line->data = r->buf;
			return skip_line(r, line);
		}
		got = fill(r);
		if (got < 0)
			return (int)got;
		if (got == 0) {
			if (r->start == r->end)
				return 0;
			line->data = r->buf + r->start;
			line->len = r->end - r->start;
			line->terminated = 0;
			line->number = ++r->line_no;
			r->start = r->end;
			return 1;
		}
		/* got == -2 cannot happen here: scanned <= LINE_MAX leaves
		 * at least CHUNK bytes of room after compaction. */
	}
}
