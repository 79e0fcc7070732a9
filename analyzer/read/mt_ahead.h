/*
 * mt_ahead: the trace's later parts decompressed and parsed on other
 * threads while the pass applies the earlier ones on its own, for
 * mt_reader (mt_reader_ahead_parse()).
 *
 * The split is fixed by the input, never by timing.  A plain regular
 * file is cut into chunks of MT_AHEAD_CHUNK bytes; a zstd trace into
 * chunks of whole frames (the collector writes independent frames of at
 * most 1 MiB of lines), as many as fit in MT_AHEAD_CHUNK bytes of lines,
 * or one larger frame, of up to 4 MiB of lines, alone.  A
 * thread turns a chunk into its bytes (read, or decompressed) and a
 * compact array of the block events the exact matcher takes
 * (mt_parse_exact_window()), one for each line that begins after the
 * chunk's first '\n' and ends before its last byte.  The reader hands the
 * chunks' bytes out strictly in order, as its own reads would have, and
 * the pass takes a line's parsed event instead of parsing it when there
 * is one (mt_ahead_at()); every other line (line 1, metadata, frames and
 * stacks, lines across two chunks, anything the matcher declines) is read
 * and judged by the pass as before.  So lines, line numbers, verdicts and
 * messages are the same for any thread count.
 *
 * Where a chunk is not plain sailing (a frame that is not a whole zstd
 * frame of known bounds, zero bytes, a corrupt frame, a read error, a
 * file that shrank), the threads stop and the reader reads on by itself
 * from that chunk's first byte, as it would have from the start: what it
 * says of the rest is what it says today.
 *
 * The pass's thread takes a chunk itself when the next one it needs is not
 * yet taken, so it never waits on a thread that has not started; and while
 * a thread makes the one it needs, it makes a later one, so that a pass
 * that applies faster than a thread makes chunks does its share of them.
 * Memory: the chunks in flight, one more than the threads (one being made
 * by each created thread, one the pass's thread makes while it waits, and
 * the one the pass reads), each its bytes (at
 * most MT_AHEAD_CHUNK, or a zstd chunk of one larger frame, up to 4 MiB),
 * 64 bytes an event and its compressed frames; and a buffer of the
 * compressed bytes read ahead of the chunks, a frame and 128 KiB.  With
 * the collector's frames of 1 MiB of lines that is about 1.6 MiB a
 * chunk.
 *
 * It must never hand out a byte out of order, nor let a thread's timing
 * change what the pass sees: a thread's failure (no memory for its
 * events, no decoder) only leaves lines for the pass to parse.
 */
#ifndef MT_AHEAD_H
#define MT_AHEAD_H

#include <stdint.h>
#include <string.h>

#include "../parse/mt_parse.h"
#include "../read/mt_reader.h"

/* The bytes of lines a chunk aims at. */
#define MT_AHEAD_CHUNK (1u << 20)

/* The most threads --threads takes. */
#define MT_AHEAD_THREADS_MAX 256

/* A block event as the exact matcher made it, and where its line is in
 * its chunk: what the heap and the observers read of it, in 64 bytes (an
 * event whose stack, thread, alignment or allocator does not fit is left
 * to the pass). */
typedef struct mt_ahead_rec {
	uint64_t seq, t, ptr, size, new_ptr;
	uint32_t stack, tid, align;
	uint32_t off;      /* the line's first byte in the chunk */
	uint16_t len, has; /* its length (at most MT_PARSE_EXACT_SPAN) */
	uint8_t kind, fn, allocator_id, unused;
} mt_ahead_rec_t;

/*
 * Start reading r with threads threads in all (the caller's included):
 * threads - 1 of them are created.  Only a regular zstd file, or a plain
 * one longer than a chunk, not yet read and not followed; for anything
 * else (gzip, a pipe, threads < 2) nothing changes.  MT_OK (r->par set
 * or not) or MT_ENOMEM (nothing changed).
 */
int mt_ahead_start(mt_reader_t *r, unsigned threads);

/* For mt_reader's fill(): the next chunk's bytes after the unread ones.
 * Bytes added (> 0), 0 at the end, -2 when more than a line is unread,
 * or MT_AHEAD_SERIAL: the threads are gone and the reader reads on by
 * itself from where the chunks stopped. */
#define MT_AHEAD_SERIAL (-100)
ssize_t mt_ahead_fill(mt_reader_t *r);

/* Stop the threads and free the chunks (mt_reader_release()). */
void mt_ahead_stop(mt_reader_t *r);

/* The parsed event of the line at r's position, or NULL: the pass
 * parses that line itself. */
static inline const mt_ahead_rec_t *mt_ahead_at(mt_reader_t *r)
{
	const mt_ahead_rec_t *recs = r->recs;
	size_t pos, i = r->rec_i;

	if (r->start < r->rec_base)
		return NULL;
	pos = r->start - r->rec_base;
	while (i < r->nrecs && recs[i].off < pos)
		i++;
	r->rec_i = i;
	if (i < r->nrecs && recs[i].off == pos) {
		r->rec_i = i + 1;
		return &recs[i];
	}
	return NULL;
}

/* The event mt_parse_exact_window() made of x's line. */
static inline void mt_ahead_event(const mt_ahead_rec_t *x, mt_event_t *ev)
{
	mt_event_clear(ev);
	ev->seq = x->seq;
	ev->kind = (mt_kind_t)x->kind;
	ev->has = x->has;
	ev->fn = (mt_fn_t)x->fn;
	ev->allocator_id = x->allocator_id;
	ev->ptr = x->ptr;
	ev->new_ptr = x->new_ptr;
	ev->size = x->size;
	ev->align = x->align;
	ev->stack = x->stack;
	ev->tid = x->tid;
	ev->t = x->t;
}

/* What the threads did, over the process's life, for the tests. */
typedef struct {
	uint64_t threads_started;
	uint64_t chunks;            /* chunks with bytes handed out */
	uint64_t chunks_by_threads; /* of them, made by a created thread */
	uint64_t events;            /* parsed events handed out */
	uint64_t chunks_held;       /* the chunks the last start may hold */
	uint64_t chunks_while_waiting; /* made by the pass while a thread
					* made the one it needed */
} mt_ahead_stats_t;

void mt_ahead_stats(mt_ahead_stats_t *s);

#endif
