/*
 * mt_zpool: zstd frames compressed on worker threads and handed back in
 * the order they were queued, for mt_out's compressed traces on a machine
 * with cores to spare.
 *
 * The caller fills a buffer of lines (mt_zpool_buf()), queues it
 * (mt_zpool_queue()) and fills the next while the workers compress; it
 * takes the frames back oldest first (mt_zpool_oldest(), mt_zpool_pop())
 * and writes them.  Each frame is the whole of one buffer, compressed in
 * one call with its content size and checksum: the same frames the
 * caller's own thread makes without workers, so a reader can cut the
 * trace at any frame.  A frame of each worker is in hand at once, one
 * more queued, and one filling: the caller waits only when all are taken.
 *
 * The workers block every signal and touch nothing but the pool.  Only
 * one thread, the caller's, calls these functions.  It must never hand a
 * frame back out of order.
 */
#ifndef MT_ZPOOL_H
#define MT_ZPOOL_H

#include <stddef.h>
#include <zstd.h>

typedef struct mt_zpool mt_zpool_t;

/*
 * Start workers (1 or more) threads compressing buffers of up to cap bytes
 * at zstd level (negative: --fast=N), with a checksum.  Returns 0 and
 * *out, or -errno (-EINVAL for a level zstd refuses, -ENOMEM, or
 * pthread_create's error) and nothing started.
 */
int mt_zpool_create(mt_zpool_t **out, int workers, int level, size_t cap);

/* Stop the workers (a frame under way is finished first) and free it
 * all, the frames not taken back included.  NULL is fine. */
void mt_zpool_destroy(mt_zpool_t *p);

/* The buffer to fill next (cap bytes), or NULL while every buffer is
 * queued or not yet taken back: then mt_zpool_oldest() with wait. */
char *mt_zpool_buf(mt_zpool_t *p);

/* Queue the len (1 to cap) bytes of the buffer mt_zpool_buf() gave. */
void mt_zpool_queue(mt_zpool_t *p, size_t len);

/*
 * The oldest queued frame: 1 with its compressed bytes in *z and *n when
 * it is done (with wait set, once it is), 0 when none is queued or it is
 * not done and wait is 0, -ENOMEM or -EIO when zstd failed on it.  After
 * 1 or an error, mt_zpool_pop() gives its buffers back.
 */
int mt_zpool_oldest(mt_zpool_t *p, int wait, const char **z, size_t *n);
void mt_zpool_pop(mt_zpool_t *p);

/* Wait for every queued frame and forget them all. */
void mt_zpool_drop(mt_zpool_t *p);

/*
 * Set zc up to make a trace's frames, as the pool's workers and mt_out's
 * own context both make them: at zstd level (negative: --fast=N), which
 * is checked here because zstd would clamp it, with a content checksum
 * (a cut frame is told by its missing one).  0, -EINVAL for a level
 * zstd refuses (zc unchanged), or -ENOMEM.
 */
int mt_zpool_params(ZSTD_CCtx *zc, int level);

/* The -errno for zstd's error result r, for the pool and for mt_out's
 * own frames alike: -ENOMEM when zstd ran out of memory, else otherwise
 * (-EIO for a frame, -EINVAL for a parameter it refused). */
int mt_zpool_errno(size_t r, int otherwise);

#endif
