/*
 * mt_zpool: zstd frames on worker threads, handed back in order
 * (mt_zpool.h).
 *
 * The frames are a ring: [head, tail) queued, oldest first, the one at
 * tail filling.  A worker takes the oldest frame still QUEUED, so the
 * frames finish about in order and the caller's wait for the oldest is
 * short.  Everything a worker and the caller share is under one lock; the
 * buffers themselves pass from one to the other with a frame's state.
 *
 * The workers run at the lowest priority, so the caller must not go on
 * waiting for a worker the machine's other work starves: once it has
 * waited STARVED_NS for a frame a worker holds, the pool is solo, the
 * workers take no frame again, and the caller compresses each itself,
 * with a context of its own (the last of workers[]), when it waits for
 * it, a frame a worker still holds included.  So a compressor writes
 * into a buffer of its own, which it trades for the frame's only if the
 * frame is still its own when it is done; and the caller that takes a
 * frame over leaves the worker the frame's input, giving the frame a
 * spare one (a worker gives the input back to the spares when done).
 */
#include "mt_zpool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "mt_out.h"

enum { FREE, QUEUED, RUNNING, DONE };

/* Each worker's frame, one more queued, and the one filling. */
#define FRAMES (MT_OUT_WORKERS_MAX + 2)

/* The workers' nice value: the lowest priority, so that they take only
 * the CPU time the drain and the rest of their scheduling group leave
 * (docs/performance.md, "The collector"). */
#define WORKER_NICE 19
/* How long a caller waits for a frame a worker holds before it takes
 * the worker for starved: a frame takes a millisecond or two, and the
 * program's threads, which the workers yield to, fill the ring in tens
 * of milliseconds at most before they wait for room. */
#define STARVED_NS 50000000ull

struct worker;

typedef struct {
	char *in;   /* cap bytes of lines (or records, with an expander) */
	size_t len;
	char *z;    /* zcap bytes */
	size_t zr;  /* the frames' length, or zstd's error */
	int state;
	struct worker *runner; /* RUNNING: whose it is */
} frame_t;

typedef struct worker {
	mt_zpool_t *pool;
	ZSTD_CCtx *zc;
	char *z; /* zcap bytes: what it compresses goes here first */
	pthread_t thread;
	int started;
	/* With an expander: its state, and the lines of the frame under
	 * way (cap bytes). */
	void *state;
	char *lines;
} worker_t;

struct mt_zpool {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a frame was queued, or stop */
	pthread_cond_t done; /* a frame is done */
	int stop;
	size_t cap, zcap;
	const mt_zpool_expander_t *ex;
	unsigned nframes, nworkers;
	uint64_t head, tail;
	/* A worker was starved, or none could start: the caller
	 * compresses every frame. */
	int solo;
	/* The workers were started (mt_zpool_start()). */
	int started;
	/* Inputs for frames taken over from a worker (cap bytes each). */
	char *spares[MT_OUT_WORKERS_MAX];
	unsigned nspares;
	/* Every buffer above and below is carved out of these two blocks
	 * (made by create and by set_expander): a collector's start and
	 * end map and unmap two, not some twenty. */
	char *block[2];
	frame_t frames[FRAMES];
	/* The workers', then the caller's own (no thread). */
	worker_t workers[MT_OUT_WORKERS_MAX + 1];
};

/* n rounded up to a cache line: each buffer carved starts on one. */
static size_t line_up(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* Carve n bytes off *at. */
static char *carve(char **at, size_t n)
{
	char *b = *at;

	*at += line_up(n);
	return b;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static frame_t *at(mt_zpool_t *p, uint64_t k)
{
	return &p->frames[k % p->nframes];
}

/* The oldest QUEUED frame, or NULL; under the lock. */
static frame_t *queued(mt_zpool_t *p)
{
	for (uint64_t k = p->head; k < p->tail; k++)
		if (at(p, k)->state == QUEUED)
			return at(p, k);
	return NULL;
}

/* A buffer of records: their lines, a frame of at most cap bytes at a
 * time, one after another in w->z. */
static size_t expand_frames(worker_t *w, const char *in, size_t len)
{
	mt_zpool_t *p = w->pool;
	size_t pos = 0, zlen = 0;

	while (pos < len) {
		size_t from = pos, r;
		size_t n = p->ex->expand(w->state, in, len, &pos, w->lines, p->cap);

		if (pos <= from || pos > len)
			return (size_t)-1; /* an expander that went nowhere: zstd's GENERIC */
		if (!n)
			continue;
		r = ZSTD_compress2(w->zc, w->z + zlen, p->zcap - zlen, w->lines, n);
		if (ZSTD_isError(r))
			return r;
		zlen += r;
	}
	return zlen;
}

/*
 * Compress frame f with w's context, f's input in in (f->in, or the input
 * a worker keeps when the caller took f over): under the lock on entry
 * and return, not while it compresses.  The frame gets w's output only
 * if it is still w's then; else w gives in to the spares.
 */
static void compress(mt_zpool_t *p, worker_t *w, frame_t *f, char *in)
{
	size_t len = f->len, zr;
	char *z;

	f->state = RUNNING;
	f->runner = w;
	pthread_mutex_unlock(&p->lock);
	zr = p->ex ? expand_frames(w, in, len) : ZSTD_compress2(w->zc, w->z, p->zcap, in, len);
	pthread_mutex_lock(&p->lock);
	if (f->state == RUNNING && f->runner == w) {
		z = f->z;
		f->z = w->z;
		w->z = z;
		f->zr = zr;
		f->state = DONE;
		f->runner = NULL;
		pthread_cond_broadcast(&p->done);
	} else {
		p->spares[p->nspares++] = in;
	}
}

/* Solo: take over frame f, which a worker holds: the worker keeps its
 * input, f gets a spare.  0, or -1 when none is left (the caller waits).
 * Under the lock. */
static int take_over(mt_zpool_t *p, frame_t *f)
{
	char *in = f->in;

	if (!p->nspares)
		return -1;
	f->in = p->spares[--p->nspares];
	compress(p, &p->workers[p->nworkers], f, in);
	/* Still the caller's: no other runner can have come meanwhile.
	 * The worker gives in back when it is done with it; the caller
	 * read it while the worker held it too. */
	return 0;
}

static void *work(void *arg)
{
	worker_t *w = arg;
	mt_zpool_t *p = w->pool;

	/* Its own thread's nice value (Linux's setpriority() takes a
	 * thread id); raising it is always allowed, and a worker that
	 * cannot still works. */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), WORKER_NICE);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		frame_t *f = NULL;

		while (!p->stop && (p->solo || !(f = queued(p))))
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stop)
			break;
		compress(p, w, f, f->in);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void mt_zpool_start(mt_zpool_t *p)
{
	sigset_t all, old;
	int any = 0;

	if (p->started)
		return;
	p->started = 1;
	/* The workers take no signal: they are the caller's to handle. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned i = 0; i < p->nworkers; i++) {
		if (pthread_create(&p->workers[i].thread, NULL, work, &p->workers[i]))
			continue;
		p->workers[i].started = 1;
		any = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!any) {
		pthread_mutex_lock(&p->lock);
		p->solo = 1;
		pthread_mutex_unlock(&p->lock);
	}
}

unsigned mt_zpool_started(const mt_zpool_t *p)
{
	unsigned n = 0;

	for (unsigned i = 0; i < p->nworkers; i++)
		n += p->workers[i].started != 0;
	return n;
}

int mt_zpool_create(mt_zpool_t **out, int workers, int level, size_t cap)
{
	mt_zpool_t *p;
	pthread_condattr_t mono;
	char *at;
	int rc = -ENOMEM;

	*out = NULL;
	if (workers < 1 || workers > MT_OUT_WORKERS_MAX || !cap)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	/* Timed waits for a frame count on CLOCK_MONOTONIC. */
	pthread_condattr_init(&mono);
	pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
	pthread_cond_init(&p->done, &mono);
	pthread_condattr_destroy(&mono);
	p->cap = cap;
	p->zcap = ZSTD_compressBound(cap);
	p->nworkers = (unsigned)workers;
	p->nframes = p->nworkers + 2;
	/* Each frame's input and output, each context's output, each
	 * worker's spare input. */
	at = p->block[0] = malloc((p->nframes + p->nworkers) * line_up(cap) +
				  (p->nframes + p->nworkers + 1) * line_up(p->zcap));
	if (!at)
		goto cleanup;
	for (unsigned i = 0; i < p->nframes; i++) {
		p->frames[i].in = carve(&at, cap);
		p->frames[i].z = carve(&at, p->zcap);
	}
	for (; p->nspares < p->nworkers; p->nspares++)
		p->spares[p->nspares] = carve(&at, cap);
	for (unsigned i = 0; i <= p->nworkers; i++) {
		worker_t *w = &p->workers[i];

		w->pool = p;
		w->z = carve(&at, p->zcap);
		w->zc = ZSTD_createCCtx();
		if (!w->zc)
			goto cleanup;
		rc = mt_zpool_params(w->zc, level);
		if (rc < 0)
			goto cleanup;
	}
	*out = p;
	return 0;
cleanup:
	mt_zpool_destroy(p);
	return rc;
}

void mt_zpool_destroy(mt_zpool_t *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i <= p->nworkers; i++) {
		if (p->workers[i].started)
			pthread_join(p->workers[i].thread, NULL);
		ZSTD_freeCCtx(p->workers[i].zc);
		free(p->workers[i].state);
	}
	/* Joined: no worker reads or writes a buffer now. */
	free(p->block[0]);
	free(p->block[1]);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int mt_zpool_set_expander(mt_zpool_t *p, const mt_zpool_expander_t *ex)
{
	size_t zcap;
	void *state[MT_OUT_WORKERS_MAX + 1] = { 0 };
	char *block, *at;
	int rc = -ENOMEM;

	if (p->tail || p->ex || !ex || !ex->expand || !ex->frames ||
	    ex->frames > SIZE_MAX / 2 / p->zcap)
		return -EINVAL;
	zcap = (size_t)ex->frames * p->zcap;
	/* Each frame's output and each context's, now of up to ex->frames
	 * frames, and each context's lines; the outputs of block[0] go
	 * unused (never touched, they cost no page). */
	at = block = malloc((p->nframes + p->nworkers + 1) * line_up(zcap) +
			    (p->nworkers + 1) * line_up(p->cap));
	if (!block)
		goto cleanup;
	for (unsigned i = 0; i <= p->nworkers; i++)
		if (!(state[i] = calloc(1, ex->state_size ? ex->state_size : 1)))
			goto cleanup;
	/* No frame was ever queued: the workers have not looked at ex,
	 * zcap or their buffers, and take them under the lock later. */
	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < p->nframes; i++)
		p->frames[i].z = carve(&at, zcap);
	for (unsigned i = 0; i <= p->nworkers; i++) {
		p->workers[i].state = state[i];
		state[i] = NULL;
		p->workers[i].lines = carve(&at, p->cap);
		p->workers[i].z = carve(&at, zcap);
	}
	p->block[1] = block;
	block = NULL;
	p->zcap = zcap;
	p->ex = ex;
	pthread_mutex_unlock(&p->lock);
	rc = 0;
cleanup:
	free(block);
	for (unsigned i = 0; i <= p->nworkers; i++)
		free(state[i]);
	return rc;
}

char *mt_zpool_buf(mt_zpool_t *p)
{
	/* The frame at tail is free unless all of them are queued. */
	return p->tail - p->head < p->nframes ? at(p, p->tail)->in : NULL;
}

void mt_zpool_queue(mt_zpool_t *p, size_t len)
{
	frame_t *f = at(p, p->tail);

	pthread_mutex_lock(&p->lock);
	f->len = len;
	f->state = QUEUED;
	p->tail++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

int mt_zpool_oldest(mt_zpool_t *p, int wait, const char **z, size_t *n)
{
	frame_t *f;
	int state;
	uint64_t waited = 0;

	if (p->head == p->tail)
		return 0;
	f = at(p, p->head);
	pthread_mutex_lock(&p->lock);
	while (wait && f->state != DONE) {
		frame_t *g = p->solo || !p->started ? queued(p) : NULL;
		uint64_t from;

		/* Solo, or before the workers start: the oldest frame no
		 * worker took, rather than wait, then (solo) the one waited
		 * for from the worker that holds it.  Helping while the
		 * workers run would not do: the caller is the drain, whose
		 * CPU time the program's threads share as equals. */
		if (g) {
			compress(p, &p->workers[p->nworkers], g, g->in);
			continue;
		}
		if (p->solo && take_over(p, f) == 0)
			continue;
		/* Until a frame is done, or until the worker that holds
		 * this one has had it STARVED_NS. */
		from = now_ns();
		if (p->solo) {
			pthread_cond_wait(&p->done, &p->lock);
		} else {
			uint64_t until = from + STARVED_NS - waited;
			struct timespec ts = { (time_t)(until / 1000000000ull),
					       (long)(until % 1000000000ull) };

			pthread_cond_timedwait(&p->done, &p->lock, &ts);
		}
		waited += now_ns() - from;
		if (waited >= STARVED_NS)
			p->solo = 1;
	}
	state = f->state;
	pthread_mutex_unlock(&p->lock);
	if (state != DONE)
		return 0;
	if (ZSTD_isError(f->zr))
		return mt_zpool_errno(f->zr, -EIO);
	*z = f->z;
	*n = f->zr;
	return 1;
}

void mt_zpool_pop(mt_zpool_t *p)
{
	if (p->head == p->tail)
		return;
	/* DONE: no worker holds it, and none takes it again. */
	pthread_mutex_lock(&p->lock);
	at(p, p->head)->state = FREE;
	p->head++;
	pthread_mutex_unlock(&p->lock);
}

void mt_zpool_drop(mt_zpool_t *p)
{
	const char *z;
	size_t n;

	while (p->head < p->tail) {
		(void)mt_zpool_oldest(p, 1, &z, &n);
		mt_zpool_pop(p);
	}
}

int mt_zpool_params(ZSTD_CCtx *zc, int level)
{
	ZSTD_bounds b = ZSTD_cParam_getBounds(ZSTD_c_compressionLevel);
	size_t r;

	if (ZSTD_isError(b.error) || level < b.lowerBound || level > b.upperBound)
		return -EINVAL;
	r = ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 1);
	return ZSTD_isError(r) ? mt_zpool_errno(r, -EINVAL) : 0;
}

int mt_zpool_errno(size_t r, int otherwise)
{
	return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? -ENOMEM
								   : otherwise;
}
