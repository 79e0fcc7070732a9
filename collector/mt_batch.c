/*
 * mt_batch: the drain's records handed to the zstd workers, and the
 * lines a worker makes of them (mt_batch.h).  It must never write a line
 * other than the one the drain would have written, nor past the room it
 * was given.
 */
#include "mt_batch.h"

#include <stdatomic.h>
#include <string.h>

#include "mt_lines.h"

/* An entry's head: a block's seq with the low bit set, a text's length
 * with it clear. */
#define BLOCK_BIT 1u

_Static_assert(MT_BATCH_BLOCK % 8 == 0, "entries stay 8-byte aligned");

void mt_batch_block(char *dst, uint64_t seq, const mt_ring_block_t *b,
		    uint64_t w, uint64_t t)
{
	uint64_t head = seq << 1 | BLOCK_BIT;
	mt_ring_block_t *e = (mt_ring_block_t *)(dst + MT_BATCH_HEAD);

	memcpy(dst, &head, sizeof(head));
	memcpy(e, b, sizeof(*e));
	atomic_store_explicit(&e->word, w, memory_order_relaxed);
	e->t = t;
}

size_t mt_batch_text(char *dst, size_t len)
{
	uint64_t head = (uint64_t)len << 1;

	memcpy(dst, &head, sizeof(head));
	return mt_batch_text_size(len);
}

/* mt_zpool's expand: the lines of the entries from in[*pos], while the
 * longest each may be fits. */
static size_t expand(void *state, const char *in, size_t len, size_t *pos,
		     char *lines, size_t cap)
{
	mt_lines_t *l = state;
	size_t at = *pos, n = 0;

	while (at + MT_BATCH_HEAD <= len) {
		uint64_t head;

		memcpy(&head, in + at, sizeof(head));
		if (head & BLOCK_BIT) {
			const mt_ring_block_t *b =
				(const mt_ring_block_t *)(in + at + MT_BATCH_HEAD);

			if (cap - n < MT_LINES_MAX || at + MT_BATCH_BLOCK > len)
				break;
			n += mt_lines_block(l, lines + n, head >> 1, b,
					    atomic_load_explicit(&b->word, memory_order_relaxed),
					    b->t);
			at += MT_BATCH_BLOCK;
		} else {
			size_t tl = (size_t)(head >> 1);

			if (cap - n < tl || at + mt_batch_text_size(tl) > len)
				break;
			memcpy(lines + n, in + at + MT_BATCH_HEAD, tl);
			n += tl;
			at += mt_batch_text_size(tl);
		}
	}
	*pos = at;
	return n;
}

/*
 * The frames a batch may take: a batch holds at most a buffer (cap
 * bytes) of entries; a block entry's line is at most MT_JSONL_BLOCK_MAX
 * bytes, a text entry's shorter than the entry, and each frame but the
 * last is cut at most MT_RING_TEXT_MAX + 64 bytes short of cap (cap is a
 * MiB).  So the lines are at most cap / MT_BATCH_BLOCK * MT_JSONL_BLOCK_MAX
 * bytes, within MT_JSONL_BLOCK_MAX / MT_BATCH_BLOCK + 2 frames.
 */
const mt_zpool_expander_t mt_batch_expander = {
	.expand = expand,
	.state_size = sizeof(mt_lines_t),
	.frames = MT_JSONL_BLOCK_MAX / MT_BATCH_BLOCK + 2,
};
