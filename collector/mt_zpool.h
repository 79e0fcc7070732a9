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
 * With an expander (mt_zpool_set_expander()), what the caller queues is
 * not lines but records that the workers turn into lines themselves, each
 * into a buffer of its own, cut into frames of at most cap bytes: the
 * caller's thread then only copies records, and the lines are made on the
 * core that compresses them, where they are still in its cache.
 *
 * The workers start when the caller says (mt_zpool_start()): until then
 * the caller compresses each frame as it waits for it.
 *
 * The workers run at the lowest priority (nice 19): they take the CPU
 * time the caller and the rest of their scheduling group leave, such as
 * a core the traced program's threads leave while they wait for room in
 * the ring (the lone collector is a session, and so an autogroup, of its
 * own: docs/performance.md, "The collector").  A
 * caller that has waited 50 ms for a frame a worker holds (a worker the
 * machine's other work starves) gives them no frame again, and
 * compresses each frame itself, with a context of its own, as it waits
 * for it.  Starved or not, the frames are the same.
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
 * What turns a queued buffer's records into lines, on a worker.  expand
 * writes the lines of the records from in[*pos] on into lines, as many as
 * surely fit in cap bytes (at least one when cap is the pool's), moves
 * *pos past them and returns the lines' length; the worker compresses
 * them as one frame and calls it again until *pos is len.  state is the
 * worker's own state_size bytes, zeroed at the start and kept between
 * calls.  The lines of one buffer never take more than frames frames.
 */
typedef struct {
	size_t (*expand)(void *state, const char *in, size_t len, size_t *pos,
			 char *lines, size_t cap);
	size_t state_size;
	unsigned frames;
} mt_zpool_expander_t;

/*
 * A pool of workers (1 or more) threads compressing buffers of up to cap
 * bytes at zstd level (negative: --fast=N), with a checksum.  Returns 0
 * and *out, or -errno (-EINVAL for a level zstd refuses, -ENOMEM) and
 * nothing made.
 */
int mt_zpool_create(mt_zpool_t **out, int workers, int level, size_t cap);

/* Start the workers, once (later calls do nothing).  One that cannot
 * start leaves its frames to the others; none, all to the caller. */
void mt_zpool_start(mt_zpool_t *p);

/* How many workers were started. */
unsigned mt_zpool_started(const mt_zpool_t *p);

/*
 * Have the workers expand each queued buffer with ex (static: it is not
 * copied) before they compress it.  Only before the first
 * mt_zpool_queue().  Returns 0, -EINVAL after a queue or for an ex
 * without expand or frames, or -ENOMEM (nothing changed).
 */
int mt_zpool_set_expander(mt_zpool_t *p, const mt_zpool_expander_t *ex);

/* Stop the workers (a frame under way is finished first) and free it
 * all, the frames not taken back included.  NULL is fine. */
void mt_zpool_destroy(mt_zpool_t *p);

/* The buffer to fill next (cap bytes), or NULL while every buffer is
 * queued or not yet taken back: then mt_zpool_oldest() with wait. */
char *mt_zpool_buf(mt_zpool_t *p);

/* Queue the len (1 to cap) bytes of the buffer mt_zpool_buf() gave. */
void mt_zpool_queue(mt_zpool_t *p, size_t len);

/*
 * The oldest queued frame: 1 with its compressed bytes in *z and *n (with
 * an expander: the frames of its lines, one after another) when
 * it is done (with wait set, once it is: once the workers were starved,
 * the caller compresses it), 0 when none is queued or it is not done and
 * wait is 0, -ENOMEM or -EIO when zstd failed on it.  After 1 or an
 * error, mt_zpool_pop() gives its buffers back.
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
