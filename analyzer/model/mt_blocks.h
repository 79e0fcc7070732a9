/*
 * mt_blocks: the live blocks of one allocator, by address: the table every
 * alloc, free, resize and remap of a trace looks up, so the analyzer's
 * hottest data structure.
 *
 * It is mt_map's design (open addressing, linear probing, backward-shift
 * deletion, the same seeded hash, load under 7/10) with the entry fixed at
 * 32 bytes, two to a cache line and never straddling one: a trace's live
 * set of 100,000 blocks takes 8 MiB of slots where mt_map's 48-byte entries
 * would take 12.6, and the probe, the copies and the shifts are compiled for the
 * one size.  Every key, 0 and UINT64_MAX included, is valid.
 *
 * Invariants: mt_blocks_count() is the number of live blocks; a block's
 * value is only what was put; the table allocates only through mt_mem and
 * an insertion that fails leaves it unchanged.
 */
#ifndef MT_BLOCKS_H
#define MT_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "../base/mt_map.h"

/* What the heap keeps of a live block.  The site and the thread are the
 * heap's dense indices (mt_heap.c), four bytes each, so that an entry is
 * 32 bytes with its key. */
typedef struct {
	uint64_t size;
	uint64_t serial; /* of the alloc, resize or remap that made it */
	uint32_t site;   /* its site: the heap's site index */
	uint32_t thread; /* the heap's thread index; 0 for no tid */
} mt_block_t;

/* A slot: private to mt_blocks.c but for mt_blocks_prefetch() below. */
typedef struct mt_blocks_slot {
	uint64_t key; /* the block's address plus one; 0: an empty slot */
	mt_block_t block;
} mt_blocks_slot_t;

typedef struct {
	mt_blocks_slot_t *slots; /* cap slots */
	size_t cap;              /* a power of two, or 0 before the first put */
	unsigned shift;          /* 64 - log2(cap) */
	size_t count;            /* blocks in slots (the side slot excluded) */
	uint64_t seed;           /* mt_map's hash seed, kept at hand */
	int has_side;            /* the block at UINT64_MAX is live */
	mt_block_t side;
} mt_blocks_t;

void mt_blocks_init(mt_blocks_t *t);
void mt_blocks_release(mt_blocks_t *t);

size_t mt_blocks_count(const mt_blocks_t *t);

/*
 * Make b the live block at ptr.  When a block was live there already, it
 * is copied to *old and *replaced set to 1; else *replaced is 0.  Returns
 * MT_OK or MT_ENOMEM (the table unchanged).
 */
int mt_blocks_put(mt_blocks_t *t, uint64_t ptr, const mt_block_t *b,
		  mt_block_t *old, int *replaced);

/* Double the table (from nothing: MIN_CAP slots).  MT_OK or MT_ENOMEM
 * (the table unchanged). */
int mt_blocks_grow(mt_blocks_t *t);

/* Room for one more block, growing when it would take the load past
 * 7/10 (the one place that rule stands): after MT_OK, the next put cannot
 * fail.  MT_ENOMEM leaves the table unchanged.  Inline: every block event
 * but a free asks, and nearly always there is room. */
static inline int mt_blocks_reserve(mt_blocks_t *t)
{
	return (t->count + 1) * 10 > t->cap * 7 ? mt_blocks_grow(t) : 0;
}

/* Remove the block at ptr, copying it to *out.  Returns 1 when it was
 * live, 0 otherwise (*out untouched). */
int mt_blocks_take(mt_blocks_t *t, uint64_t ptr, mt_block_t *out);

/* The block at ptr, or NULL; valid until the next put or take. */
const mt_block_t *mt_blocks_find(const mt_blocks_t *t, uint64_t ptr);

/* The smallest table whose slots mt_blocks_prefetch() loads ahead: about
 * a core's L2 (as mt_map's). */
#define MT_BLOCKS_PREFETCH_MIN (1u << 20)

/*
 * A hint that ptr is about to be put or taken: start loading its home
 * slot.  Changes nothing.  Inline, as the pass calls it for every block
 * event; and always_inline, because GCC (12, -O2) deletes a call to a
 * plain static inline function whose only effect is a prefetch, before
 * it inlines it, as if the call did nothing: the prefetch silently
 * vanishes (a link-time-optimised build does the same to an out-of-line
 * one).
 */
static inline __attribute__((always_inline)) void
mt_blocks_prefetch(const mt_blocks_t *t, uint64_t ptr)
{
	if (t->cap * sizeof(mt_blocks_slot_t) < MT_BLOCKS_PREFETCH_MIN ||
	    !(ptr + 1))
		return;
	/* One line: a slot never straddles two. */
	__builtin_prefetch(&t->slots[mt_map_home(ptr + 1, t->seed, t->shift)]);
}

#endif
