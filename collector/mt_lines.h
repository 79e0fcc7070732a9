/*
 * mt_lines: the collector's block lines (alloc, free, resize, remap,
 * alloc.fail), written from a ring record in the bytes
 * mt_jsonl_block_line() writes (format.md section 2), at a fraction of
 * its cost: the drain writes one per event, and its time is what a
 * traced program waits for once the ring is full.
 *
 * What it keeps between lines is text: the seq prefix, counted up in
 * place; the thread's ,"tid":N; the last ,"t":N}.  A line of the common
 * shapes (alloc, free, resize and remap of libc's allocator, without an
 * alignment or a fail_at) is put together from fixed-size copies of
 * precomputed pieces and digits made without division loops or per-field
 * calls; any other goes through mt_jsonl_block_line().  Each call writes
 * past the line's end (up to MT_LINES_MAX bytes from dst): dst needs that
 * room.
 *
 * Never allocates, locks or reads anything but its arguments.
 */
#ifndef MT_LINES_H
#define MT_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "../common/mt_event.h"
#include "../common/mt_jsonl.h"
#include "../common/mt_ring.h"

/* Room a call may write into, the line and what it scribbles past it. */
#define MT_LINES_MAX (MT_JSONL_BLOCK_MAX + 64)

typedef struct {
	/* {"v":1,"seq":DIGITS, for seq_of. */
	char seq[48];
	unsigned seq_len;
	uint64_t seq_of;
	/* ,"tid":N for tid_of (the fast path's: no fail_at). */
	char tid[40];
	unsigned tid_len;
	uint64_t tid_of;
	/* ,"t":N}\n for t_of. */
	char t[48];
	unsigned t_len;
	uint64_t t_of;
} mt_lines_t;

/* Ready l: nothing cached. */
void mt_lines_init(mt_lines_t *l);

/*
 * The event a block record stands for (b, its header word w), as
 * mt_jsonl_block_line() takes it.  Returns 0, or -1 when w's kind is
 * none of the block kinds (such a record is never published).
 */
int mt_lines_event(const mt_ring_block_t *b, uint64_t w, mt_jsonl_block_t *ev);

/* Whether a block record of header word w has a line: its kind is one
 * of the block kinds (mt_lines_block() writes 0 bytes for any other). */
static inline int mt_lines_has_line(uint64_t w)
{
	unsigned kind = MT_RING_ARG_A(w);

	return kind >= MT_KIND_ALLOC && kind <= MT_KIND_ALLOC_FAIL;
}

/*
 * Write the line of block record b (header word w) with seq and t (ns
 * since t0, whole microseconds) into dst, MT_LINES_MAX bytes of room.
 * Returns its length, 0 when the record is no block event.
 */
size_t mt_lines_block(mt_lines_t *l, char *dst, uint64_t seq,
		      const mt_ring_block_t *b, uint64_t w, uint64_t t);

#endif
