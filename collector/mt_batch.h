/*
 * mt_batch: the drain's records as it hands them to the zstd workers
 * (mt_zpool's expander), so that a block line is made on the core that
 * compresses it rather than on the drain's: there the line is still in
 * the cache when zstd reads it, and the drain's own work an event is a
 * copy of its 64-byte record.
 *
 * A batch is a run of entries, each starting on 8 bytes:
 * - a block entry: a word of its seq, then the ring record with t set to
 *   the line's t (since t0, rounded, as the drain fixed it);
 * - a text entry: a word of its length, then the whole line (seq
 *   included), padded to 8 bytes.
 * Each entry is exactly one line: the drain gives seq and t, so the
 * lines are those mt_lines_block() and the drain's text would have
 * written in its own thread, byte for byte.
 *
 * Never allocates, locks or reads anything but its arguments.
 */
#ifndef MT_BATCH_H
#define MT_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "../common/mt_ring.h"
#include "mt_zpool.h"

/* An entry's first word; a text entry's line starts after it. */
#define MT_BATCH_HEAD 8
/* A block entry's bytes. */
#define MT_BATCH_BLOCK (MT_BATCH_HEAD + MT_RING_SLOT)

/* The expander the drain's mt_out is given with workers. */
extern const mt_zpool_expander_t mt_batch_expander;

/* Write the block entry of record b (header word w, a block kind that
 * has a line: mt_lines_has_line()) with seq and t at dst
 * (MT_BATCH_BLOCK bytes). */
void mt_batch_block(char *dst, uint64_t seq, const mt_ring_block_t *b,
		    uint64_t w, uint64_t t);

/* The bytes of a text entry of a len-byte line, and its head: the line
 * is written at dst + MT_BATCH_HEAD, then mt_batch_text(dst, len)
 * finishes the entry and returns its bytes. */
static inline size_t mt_batch_text_size(size_t len)
{
	return MT_BATCH_HEAD + ((len + 7) & ~(size_t)7);
}
size_t mt_batch_text(char *dst, size_t len);

#endif
