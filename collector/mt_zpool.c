/*
 * mt_zpool: zstd frames on worker threads, handed back in order
 * (mt_zpool.h).
 *
 * The frames are a ring: [head, tail) queued, oldest first, the one at
 * tail filling.  A worker takes the oldest frame still QUEUED, so the
 * frames finish about in order and the caller's wait for the oldest is
 * short.  Everything a worker and the caller share is under one lock; the
 * buffers themselves pass from one to the other with a frame's state.
 */
#include "mt_zpool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "mt_out.h"

enum { FREE, QUEUED, RUNNING, DONE };

/* Each worker's frame, one more queued, and the one filling. */
#define FRAMES (MT_OUT_WORKERS_MAX + 2)

typedef struct {
	char *in;   /* cap bytes of lines (or records, with an expander) */
	size_t len;
	char *z;    /* zcap bytes */
	size_t zr;  /* the frames' length, or zstd's error */
	int state;
} frame_t;

typedef struct {
	mt_zpool_t *pool;
	ZSTD_CCtx *zc;
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
	frame_t frames[FRAMES];
	worker_t workers[MT_OUT_WORKERS_MAX];
};

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
 * time, one after another in f->z. */
static size_t expand_frames(worker_t *w, frame_t *f)
{
	mt_zpool_t *p = w->pool;
	size_t pos = 0, zlen = 0;

	while (pos < f->len) {
		size_t from = pos, r;
		size_t n = p->ex->expand(w->state, f->in, f->len, &pos, w->lines,
					 p->cap);

		if (pos <= from || pos > f->len)
			return (size_t)-1; /* an expander that went nowhere: zstd's GENERIC */
		if (!n)
			continue;
		r = ZSTD_compress2(w->zc, f->z + zlen, p->zcap - zlen, w->lines, n);
		if (ZSTD_isError(r))
			return r;
		zlen += r;
	}
	return zlen;
}

static void *work(void *arg)
{
	worker_t *w = arg;
	mt_zpool_t *p = w->pool;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		frame_t *f = NULL;

		while (!p->stop && !(f = queued(p)))
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stop)
			break;
		f->state = RUNNING;
		pthread_mutex_unlock(&p->lock);
		f->zr = p->ex ? expand_frames(w, f)
			      : ZSTD_compress2(w->zc, f->z, p->zcap, f->in, f->len);
		pthread_mutex_lock(&p->lock);
		f->state = DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int mt_zpool_create(mt_zpool_t **out, int workers, int level, size_t cap)
{
	mt_zpool_t *p;
	sigset_t all, old;
	int rc = -ENOMEM;

	*out = NULL;
	if (workers < 1 || workers > MT_OUT_WORKERS_MAX || !cap)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	p->cap = cap;
	p->zcap = ZSTD_compressBound(cap);
	p->nworkers = (unsigned)workers;
	p->nframes = p->nworkers + 2;
	for (unsigned i = 0; i < p->nframes; i++) {
		frame_t *f = &p->frames[i];

		f->in = malloc(cap);
		f->z = malloc(p->zcap);
		if (!f->in || !f->z)
			goto cleanup;
	}
	for (unsigned i = 0; i < p->nworkers; i++) {
		worker_t *w = &p->workers[i];

		w->pool = p;
		w->zc = ZSTD_createCCtx();
		if (!w->zc)
			goto cleanup;
		rc = mt_zpool_params(w->zc, level);
		if (rc < 0)
			goto cleanup;
	}
	/* The workers take no signal: they are the caller's to handle. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = 0;
	for (unsigned i = 0; i < p->nworkers && !rc; i++) {
		int err = pthread_create(&p->workers[i].thread, NULL, work,
					 &p->workers[i]);

		if (err)
			rc = -err;
		else
			p->workers[i].started = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		goto cleanup;
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
	for (unsigned i = 0; i < p->nworkers; i++) {
		if (p->workers[i].started)
			pthread_join(p->workers[i].thread, NULL);
		ZSTD_freeCCtx(p->workers[i].zc);
		free(p->workers[i].state);
		free(p->workers[i].lines);
	}
	for (unsigned i = 0; i < p->nframes; i++) {
		free(p->frames[i].in);
		free(p->frames[i].z);
	}
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int mt_zpool_set_expander(mt_zpool_t *p, const mt_zpool_expander_t *ex)
{
	size_t zcap;
	char *z[FRAMES] = { 0 };
	worker_t fresh[MT_OUT_WORKERS_MAX] = { 0 };
	int rc = -ENOMEM;

	if (p->tail || p->ex || !ex || !ex->expand || !ex->frames ||
	    ex->frames > SIZE_MAX / 2 / p->zcap)
		return -EINVAL;
	zcap = (size_t)ex->frames * p->zcap;
	for (unsigned i = 0; i < p->nframes; i++)
		if (!(z[i] = malloc(zcap)))
			goto cleanup;
	for (unsigned i = 0; i < p->nworkers; i++)
		if (!(fresh[i].state = calloc(1, ex->state_size ? ex->state_size : 1)) ||
		    !(fresh[i].lines = malloc(p->cap)))
			goto cleanup;
	/* No frame was ever queued: the workers have not looked at ex,
	 * zcap or their buffers, and take them under the lock later. */
	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < p->nframes; i++) {
		free(p->frames[i].z);
		p->frames[i].z = z[i];
		z[i] = NULL;
	}
	for (unsigned i = 0; i < p->nworkers; i++) {
		p->workers[i].state = fresh[i].state;
		p->workers[i].lines = fresh[i].lines;
		fresh[i].state = fresh[i].lines = NULL;
	}
	p->zcap = zcap;
	p->ex = ex;
	pthread_mutex_unlock(&p->lock);
	rc = 0;
cleanup:
	for (unsigned i = 0; i < p->nframes; i++)
		free(z[i]);
	for (unsigned i = 0; i < p->nworkers; i++) {
		free(fresh[i].state);
		free(fresh[i].lines);
	}
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

	if (p->head == p->tail)
		return 0;
	f = at(p, p->head);
	pthread_mutex_lock(&p->lock);
	while (wait && f->state != DONE)
		pthread_cond_wait(&p->done, &p->lock);
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
