/*
 * mt_ahead: chunks of a trace read, decompressed and parsed on other
 * threads, handed to mt_reader in order (mt_ahead.h).  It must never let
 * the threads' timing show in what the reader hands out, nor hold more
 * than its window of chunks, whatever the trace's length.
 */
#include "../read/mt_ahead.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../read/mt_decomp.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080 /* Linux 6.14 */
#endif

/* A chunk's bytes at most: a frame of up to 4 MiB of lines is taken
 * whole (the collector's hold at most 1 MiB; one over 4 MiB, from
 * another writer, is left to the reader), and a chunk of frames is cut
 * before it would pass this. */
#define DATA_CAP (4u << 20)

/* Zero bytes after a chunk's, so that the exact matcher's span never
 * reads what is not there (and finds no '\n' in it). */
#define PAD MT_PARSE_EXACT_SPAN

/* The events a chunk holds at most: a block line is longer than 64
 * bytes.  Made with the chunk, so that no thread ever allocates (and the
 * out-of-memory tests fail each allocation on the pass's thread). */
#define RECS_CAP (DATA_CAP / 64)

/* A chunk's frames, compressed, at most: a frame of DATA_CAP bytes that
 * does not compress, as ZSTD_COMPRESSBOUND() has it. */
#define COMP_CAP (DATA_CAP + (DATA_CAP >> 8) + (128u << 10))

/* How much compressed data the frame finder holds to see a frame whole. */
#define CARVE_CAP (2 * (DATA_CAP + (DATA_CAP >> 7) + (64u << 10)))
/* Read a little at a time: the buffer's pages are touched only as far
 * as a frame and a read beyond it reach. */
#define CARVE_READ (128u << 10)

_Static_assert(sizeof(mt_ahead_rec_t) == 64, "an event is 64 bytes");
_Static_assert(MT_PARSE_EXACT_SPAN <= UINT16_MAX, "a line's length fits");

static _Atomic uint64_t stat_threads, stat_chunks, stat_by_threads, stat_events;
static _Atomic uint64_t stat_held, stat_while_waiting;

typedef struct slot {
	char *buf;            /* MT_READER_LINE_MAX of room, then the bytes */
	mt_ahead_rec_t *recs; /* RECS_CAP of them */
	size_t nrecs;
	unsigned char *comp;  /* a zstd chunk's frames, COMP_CAP bytes */
	size_t comp_len;
	struct slot *next;    /* in the free list */
} slot_t;

enum { QUEUED = 1, RUNNING, DONE };
enum { DATA = 1, END, FALLBACK };

typedef struct {
	int state;
	int kind;
	int failed;       /* the bytes could not be had: read on by hand */
	int by_thread;
	uint64_t at;      /* the file's byte where the chunk starts */
	size_t want;      /* plain: bytes to read */
	size_t n;         /* bytes made */
	slot_t *slot;
} job_t;

typedef struct mt_ahead {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a job was queued, or stop */
	pthread_cond_t done; /* a job was done */
	pthread_t *threads;
	unsigned nthreads;
	int stop;
	int fd;
	int zstd;
	_Atomic int dontcache;
	job_t *ring;
	unsigned window;
	uint64_t head, tail; /* jobs [head, tail) are in the ring */
	slot_t *slots, *free, *cur; /* cur: the reader's buffer's */
	unsigned nslots;
	/* The reader's unread bytes while mt_ahead_fill() waits, its
	 * chunk's slot given back meanwhile (and r->buf NULL). */
	char *side;
	size_t side_len;
	/* The producer (the pass's thread). */
	int produced_all;
	uint64_t content;    /* plain: the bytes of content */
	uint64_t next_at;    /* plain: the next chunk's first byte */
	unsigned char *carve; /* zstd: carve[cpos..clen) read, not chunked */
	size_t cpos, clen;
	uint64_t cbase;      /* the file's byte of carve[0] */
	int ceof;
	/* The pass's thread's tools, when it makes a chunk itself. */
	mt_parser_t parser;
	int have_parser;
	ZSTD_DCtx *dctx;
} ahead_t;

/* pread(2) of n bytes at off, whole unless the file ends: bytes read, or
 * -1 with errno set. */
static ssize_t pread_full(ahead_t *a, char *p, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k;

		if (atomic_load_explicit(&a->dontcache, memory_order_relaxed)) {
			struct iovec iov = { p + got, n - got };

			k = preadv2(a->fd, &iov, 1, (off_t)(off + got), RWF_DONTCACHE);
			if (k < 0 && (errno == EOPNOTSUPP || errno == EINVAL ||
				      errno == ENOSYS || errno == EPERM)) {
				atomic_store_explicit(&a->dontcache, 0,
						      memory_order_relaxed);
				continue;
			}
		} else {
			k = pread(a->fd, p + got, n - got, (off_t)(off + got));
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* The lines of s's n bytes that the exact matcher takes, into s's
 * events: from the first line that starts in them to the last that ends
 * in them.  With no memory for more events, the rest are the pass's. */
static void preparse(slot_t *s, const char *d, size_t n, mt_parser_t *p)
{
	const char *end = d + n, *q = memchr(d, '\n', n);
	mt_event_t ev;

	s->nrecs = 0;
	if (!q)
		return;
	for (q++; q < end;) {
		size_t len;

		if (mt_parse_exact_window(p, q, &ev, &len) == MT_PARSE_OK &&
		    q + len < end && ev.stack <= UINT32_MAX &&
		    ev.tid <= UINT32_MAX && ev.align <= UINT32_MAX &&
		    ev.allocator_id <= UINT8_MAX) {
			mt_ahead_rec_t *x;

			if (s->nrecs == RECS_CAP)
				return; /* cannot be: lines are longer */
			x = &s->recs[s->nrecs++];
			x->seq = ev.seq;
			x->t = ev.t;
			x->ptr = ev.ptr;
			x->new_ptr = ev.new_ptr;
			x->size = ev.size;
			x->align = (uint32_t)ev.align;
			x->stack = (uint32_t)ev.stack;
			x->tid = (uint32_t)ev.tid;
			x->allocator_id = (uint8_t)ev.allocator_id;
			x->off = (uint32_t)(q - d);
			x->len = (uint16_t)len;
			x->has = (uint16_t)ev.has;
			x->kind = (uint8_t)ev.kind;
			x->fn = (uint8_t)ev.fn;
			q += len + 1;
			continue;
		}
		q = memchr(q, '\n', (size_t)(end - q));
		if (!q)
			return;
		q++;
	}
}

/* Make job j's bytes and events, on whichever thread took it. */
static void run_job(ahead_t *a, job_t *j, mt_parser_t *p, ZSTD_DCtx **dctx)
{
	slot_t *s = j->slot;
	char *d = s->buf + MT_READER_LINE_MAX;

	s->nrecs = 0;
	if (!a->zstd) {
		ssize_t got = pread_full(a, d, j->want, j->at);

		if (got != (ssize_t)j->want) {
			j->failed = 1;
			return;
		}
		j->n = j->want;
	} else {
		size_t got;

		if (!*dctx && !(*dctx = ZSTD_createDCtx())) {
			j->failed = 1;
			return;
		}
		got = ZSTD_decompressDCtx(*dctx, d, DATA_CAP, s->comp, s->comp_len);
		if (ZSTD_isError(got)) {
			j->failed = 1;
			return;
		}
		j->n = got;
	}
	memset(d + j->n, 0, PAD);
	if (p)
		preparse(s, d, j->n, p);
}

/* The lowest job queued, or NULL; under the lock. */
static job_t *queued(ahead_t *a)
{
	for (uint64_t k = a->head; k < a->tail; k++) {
		job_t *j = &a->ring[k % a->window];

		if (j->state == QUEUED)
			return j;
	}
	return NULL;
}

static void *thread_main(void *arg)
{
	ahead_t *a = arg;
	mt_parser_t parser;
	int have_parser = mt_parser_init(&parser) == MT_OK;
	ZSTD_DCtx *dctx = NULL;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		job_t *j = NULL;

		while (!a->stop && !(j = queued(a)))
			pthread_cond_wait(&a->work, &a->lock);
		if (a->stop)
			break;
		j->state = RUNNING;
		pthread_mutex_unlock(&a->lock);
		run_job(a, j, have_parser ? &parser : NULL, &dctx);
		pthread_mutex_lock(&a->lock);
		j->by_thread = 1;
		j->state = DONE;
		pthread_cond_broadcast(&a->done);
	}
	pthread_mutex_unlock(&a->lock);
	if (have_parser)
		mt_parser_release(&parser);
	ZSTD_freeDCtx(dctx);
	return NULL;
}

/* Read more of a zstd trace's compressed bytes into the carve buffer:
 * 0, or -1 when it is full or the file ends (or cannot be read: the
 * reader reads it again by itself, and says so). */
static int carve_more(ahead_t *a)
{
	ssize_t k;

	if (a->ceof)
		return -1;
	if (a->cpos) {
		memmove(a->carve, a->carve + a->cpos, a->clen - a->cpos);
		a->clen -= a->cpos;
		a->cbase += a->cpos;
		a->cpos = 0;
	}
	if (a->clen == CARVE_CAP)
		return -1;
	do
		k = read(a->fd, a->carve + a->clen,
			 CARVE_CAP - a->clen < CARVE_READ ? CARVE_CAP - a->clen :
							    CARVE_READ);
	while (k < 0 && errno == EINTR);
	if (k <= 0) {
		a->ceof = 1;
		return -1;
	}
	a->clen += (size_t)k;
	return 0;
}

/* The next chunk of whole zstd frames into j: DATA, END where the file
 * ends after a whole frame, or FALLBACK at the first byte that begins
 * no frame this finder takes whole (zero bytes, a skippable or cut
 * frame, one too large), from where the reader decodes by itself. */
static void carve_job(ahead_t *a, job_t *j)
{
	slot_t *s = j->slot;
	uint64_t sum = 0;
	int frames = 0;

	s->comp_len = 0;
	j->at = a->cbase + a->cpos;
	for (;;) {
		const unsigned char *f;
		size_t avail = a->clen - a->cpos, fsz;
		unsigned long long csz;
		uint64_t weight;

		/* A frame's header is at most 18 bytes. */
		if (avail < 18 && !a->ceof && !carve_more(a))
			continue;
		f = a->carve + a->cpos; /* carve_more() may move them */
		avail = a->clen - a->cpos;
		if (!avail)
			break; /* the end, after whole frames */
		if (avail < 4 || f[0] != 0x28 || f[1] != 0xb5 || f[2] != 0x2f ||
		    f[3] != 0xfd)
			goto unclean;
		fsz = ZSTD_findFrameCompressedSize(f, avail);
		if (ZSTD_isError(fsz)) {
			if (!carve_more(a))
				continue;
			goto unclean;
		}
		csz = ZSTD_getFrameContentSize(f, avail);
		if (csz == ZSTD_CONTENTSIZE_ERROR)
			goto unclean;
		weight = csz == ZSTD_CONTENTSIZE_UNKNOWN ? DATA_CAP : csz;
		if (weight > DATA_CAP)
			goto unclean;
		/* Whole frames up to MT_AHEAD_CHUNK of lines; a larger
		 * frame (up to DATA_CAP) is a chunk of its own.  The
		 * collector's frames of just under 1 MiB are then one a
		 * chunk, and the chunk's buffers are touched no further
		 * than the frame fills them. */
		if (frames && sum + weight > MT_AHEAD_CHUNK)
			break;
		if (s->comp_len + fsz > COMP_CAP) {
			if (frames)
				break;
			goto unclean; /* the reader decodes the rest */
		}
		memcpy(s->comp + s->comp_len, f, fsz);
		s->comp_len += fsz;
		a->cpos += fsz;
		sum += weight;
		frames++;
		if (sum >= MT_AHEAD_CHUNK)
			break;
	}
	j->kind = frames ? DATA : END;
	if (!frames)
		a->produced_all = 1;
	return;
unclean:
	if (frames) {
		j->kind = DATA; /* the fallback comes as the next job */
		return;
	}
	j->kind = FALLBACK;
	a->produced_all = 1;
}

/* Queue jobs until the window is full, no slot is free or the trace is
 * all queued. */
static void produce(ahead_t *a)
{
	while (!a->produced_all && a->tail - a->head < a->window && a->free) {
		job_t *j = &a->ring[a->tail % a->window];
		slot_t *s = a->free;

		a->free = s->next;
		memset(j, 0, sizeof(*j));
		j->slot = s;
		if (a->zstd) {
			carve_job(a, j);
		} else if (a->next_at >= a->content) {
			j->kind = END;
			a->produced_all = 1;
		} else {
			uint64_t left = a->content - a->next_at;

			j->kind = DATA;
			j->at = a->next_at;
			j->want = left < MT_AHEAD_CHUNK ? (size_t)left : MT_AHEAD_CHUNK;
			a->next_at += j->want;
		}
		if (j->kind != DATA) {
			s->next = a->free;
			a->free = s;
			j->slot = NULL;
			j->state = DONE;
		} else {
			j->state = QUEUED;
		}
		pthread_mutex_lock(&a->lock);
		a->tail++;
		pthread_cond_signal(&a->work);
		pthread_mutex_unlock(&a->lock);
	}
}

static void free_ahead(ahead_t *a)
{
	for (unsigned i = 0; a->slots && i < a->nslots; i++) {
		mt_mem_free(a->slots[i].buf);
		mt_mem_free(a->slots[i].recs);
		mt_mem_free(a->slots[i].comp);
	}
	mt_mem_free(a->slots);
	mt_mem_free(a->ring);
	mt_mem_free(a->threads);
	mt_mem_free(a->carve);
	mt_mem_free(a->side);
	if (a->have_parser)
		mt_parser_release(&a->parser);
	ZSTD_freeDCtx(a->dctx);
	pthread_cond_destroy(&a->work);
	pthread_cond_destroy(&a->done);
	pthread_mutex_destroy(&a->lock);
	mt_mem_free(a);
}

int mt_ahead_start(mt_reader_t *r, unsigned threads)
{
	ahead_t *a;
	struct stat st;
	off_t at;

	if (threads < 2 || r->par || r->ahead || r->wait || r->line_no ||
	    r->end != r->start || fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return MT_OK;
	if (r->decomp && mt_decomp_format(r->decomp) != MT_DECOMP_ZSTD)
		return MT_OK;
	if (!r->decomp && r->remaining == UINT64_MAX)
		return MT_OK; /* it shrank while opened: read it as a stream */
	if (!r->decomp && r->remaining <= MT_AHEAD_CHUNK)
		return MT_OK; /* one chunk: nothing to make ahead */
	if ((at = lseek(r->fd, 0, SEEK_CUR)) < 0)
		return MT_OK;
	if (threads > MT_AHEAD_THREADS_MAX)
		threads = MT_AHEAD_THREADS_MAX;
	a = mt_mem_calloc(1, sizeof(*a));
	if (!a)
		return MT_ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->done, NULL);
	a->fd = r->fd;
	a->zstd = r->decomp != NULL;
	a->dontcache = r->dontcache;
	/* A slot for each created thread's job, one for a job the pass's
	 * thread makes while it waits for a thread's (mt_ahead_fill()), and
	 * the chunk the pass reads, whose slot a job may take while the pass
	 * waits: no more chunks are held than that (each is its bytes and
	 * its events, about 1.6 MiB for a collector's frame of 1 MiB of
	 * lines). */
	a->nslots = threads + 1;
	a->window = a->nslots;
	a->content = (uint64_t)at + (a->zstd ? 0 : r->remaining);
	a->next_at = a->cbase = (uint64_t)at;
	if (!(a->ring = mt_mem_calloc(a->window, sizeof(*a->ring))) ||
	    !(a->slots = mt_mem_calloc(a->nslots, sizeof(*a->slots))) ||
	    !(a->threads = mt_mem_calloc(threads - 1, sizeof(*a->threads))) ||
	    (a->zstd && !(a->carve = mt_mem_malloc(CARVE_CAP))) ||
	    !(a->side = mt_mem_malloc(MT_READER_LINE_MAX + DATA_CAP + PAD)))
		goto nomem;
	for (unsigned i = 0; i < a->nslots; i++) {
		slot_t *sl = &a->slots[i];

		sl->buf = mt_mem_malloc(MT_READER_LINE_MAX + DATA_CAP + PAD);
		sl->recs = mt_mem_malloc(RECS_CAP * sizeof(*sl->recs));
		sl->comp = a->zstd ? mt_mem_malloc(COMP_CAP) : NULL;
		if (!sl->buf || !sl->recs || (a->zstd && !sl->comp))
			goto nomem;
		a->slots[i].next = a->free;
		a->free = &a->slots[i];
	}
	if (mt_parser_init(&a->parser))
		goto nomem;
	a->have_parser = 1;
	r->par = a;
	atomic_store(&stat_held, a->nslots);
	for (unsigned i = 0; i < threads - 1; i++) {
		if (pthread_create(&a->threads[i], NULL, thread_main, a))
			break; /* fewer threads: the pass's takes the rest */
		a->nthreads++;
		atomic_fetch_add(&stat_threads, 1);
	}
	produce(a);
	return MT_OK;
nomem:
	free_ahead(a);
	return MT_ENOMEM;
}

/* Stop the threads; r keeps its buffer (made the reader's own). */
static void teardown(mt_reader_t *r)
{
	ahead_t *a = r->par;

	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_broadcast(&a->work);
	pthread_mutex_unlock(&a->lock);
	for (unsigned i = 0; i < a->nthreads; i++)
		pthread_join(a->threads[i], NULL);
	if (!r->buf) {
		/* The unread bytes were set aside: their buffer becomes the
		 * reader's, with room for its reads. */
		r->buf = a->side;
		a->side = NULL;
		r->start = 0;
		r->end = a->side_len;
		r->cap = MT_READER_LINE_MAX + DATA_CAP;
	} else if (a->cur) {
		a->cur->buf = NULL; /* r->buf, from now on the reader's */
		r->cap = MT_READER_LINE_MAX + DATA_CAP;
	}
	r->recs = NULL;
	r->nrecs = r->rec_i = r->rec_base = 0;
	r->par = NULL;
	free_ahead(a);
}

void mt_ahead_stop(mt_reader_t *r)
{
	teardown(r);
}

/* The reader reads on by itself from the file's byte at: the bytes
 * before it were handed out. */
static ssize_t go_serial(mt_reader_t *r, uint64_t at)
{
	ahead_t *a = r->par;
	int zstd = a->zstd;
	uint64_t content = a->content;

	teardown(r);
	if (lseek(r->fd, (off_t)at, SEEK_SET) < 0)
		return MT_EIO;
	if (!zstd) {
		r->remaining = content - at;
		return MT_AHEAD_SERIAL;
	}
	mt_decomp_free(r->decomp);
	r->decomp = NULL;
	if (mt_decomp_open(&r->decomp, MT_DECOMP_ZSTD, NULL, 0)) {
		errno = ENOMEM;
		return MT_ENOMEM;
	}
	mt_decomp_start_at(r->decomp, at);
	return MT_AHEAD_SERIAL;
}

ssize_t mt_ahead_fill(mt_reader_t *r)
{
	ahead_t *a = r->par;
	size_t keep = r->end - r->start;

	if (keep > MT_READER_LINE_MAX)
		return -2; /* the caller handles a long line */
	for (;;) {
		job_t *j = &a->ring[a->head % a->window];
		slot_t *s;
		size_t n;

		/* The unread bytes aside, and their chunk's slot given back,
		 * so that a thread makes the next chunk into it while this
		 * one makes or waits for the one it needs. */
		memcpy(a->side, r->buf + r->start, keep);
		a->side_len = keep;
		if (a->cur) {
			a->cur->next = a->free;
			a->free = a->cur;
			a->cur = NULL;
		} else {
			mt_mem_free(r->buf); /* the reader's own, from its open */
		}
		r->buf = NULL;
		produce(a);
		pthread_mutex_lock(&a->lock);
		while (j->state != DONE) {
			/* The chunk it needs if no thread has taken it yet,
			 * rather than wait for one that may not run soon;
			 * while a thread makes it, a later one, rather than
			 * wait idle.  The threads then never bound the pass
			 * alone: when applying a chunk is quicker than
			 * making one, the pass makes its share. */
			job_t *k = j->state == QUEUED ? j : queued(a);

			if (!k) {
				pthread_cond_wait(&a->done, &a->lock);
				continue;
			}
			k->state = RUNNING;
			pthread_mutex_unlock(&a->lock);
			run_job(a, k, &a->parser, &a->dctx);
			pthread_mutex_lock(&a->lock);
			k->state = DONE;
			if (k != j)
				atomic_fetch_add(&stat_while_waiting, 1);
		}
		pthread_mutex_unlock(&a->lock);
		if (j->kind == END) {
			teardown(r);
			return 0;
		}
		if (j->kind == FALLBACK || j->failed)
			return go_serial(r, j->at);
		s = j->slot;
		memcpy(s->buf + MT_READER_LINE_MAX - keep, a->side, keep);
		a->cur = s;
		r->buf = s->buf;
		r->cap = MT_READER_LINE_MAX + DATA_CAP;
		r->start = MT_READER_LINE_MAX - keep;
		r->end = MT_READER_LINE_MAX + j->n;
		r->recs = s->recs;
		r->nrecs = s->nrecs;
		r->rec_i = 0;
		r->rec_base = MT_READER_LINE_MAX;
		atomic_fetch_add(&stat_chunks, 1);
		atomic_fetch_add(&stat_events, s->nrecs);
		if (j->by_thread)
			atomic_fetch_add(&stat_by_threads, 1);
		n = j->n;
		pthread_mutex_lock(&a->lock);
		a->head++;
		pthread_mutex_unlock(&a->lock);
		produce(a); /* it may take j's place in the ring */
		if (n)
			return (ssize_t)n;
		keep = r->end - r->start; /* an empty frame: the next */
	}
}

void mt_ahead_stats(mt_ahead_stats_t *s)
{
	s->threads_started = atomic_load(&stat_threads);
	s->chunks = atomic_load(&stat_chunks);
	s->chunks_by_threads = atomic_load(&stat_by_threads);
	s->events = atomic_load(&stat_events);
	s->chunks_held = atomic_load(&stat_held);
	s->chunks_while_waiting = atomic_load(&stat_while_waiting);
}
