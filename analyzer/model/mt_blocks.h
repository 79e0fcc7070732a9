/*
 * mt_blocks: the live blocks of one allocator, by address: the table every
 * alloc, free, resize and remap of a trace looks up, so the analyzer's
 * hottest data structure.
 *
 * Open addressing with linear probing and backward-shift deletion, keyed
 * with mt_map's seeded hash, in 16-byte slots, four to a cache line and
 * never straddling one: the address, and the block's size, site, thread
 * and weight bit packed in one word.  A block whose size, site or thread
 * does not fit its field (MT_BLOCKS_FITS()) keeps them in a wide entry of
 * a side array, the slot holding the entry's index.  The capacity need not
 * be a power of two: a home is the hash's top bits scaled to the capacity
 * (a multiply's high word), so the table grows by a quarter at a time and
 * stays between MT_BLOCKS_LOAD_PCT of full and that over 1.25, at most 2x
 * the live set's 16 bytes a block.  Every key, 0 and UINT64_MAX included,
 * is valid.
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
 * heap's dense indices (mt_heap.c). */
typedef struct {
	uint64_t size;
	uint32_t site;   /* its site: the heap's site index */
	uint32_t thread; /* the heap's thread index; 0 for no tid */
	unsigned up;     /* 0 or 1: its sampled weight is rounded up */
} mt_block_t;

/* The widths of a slot's fields: a block whose size, site and thread
 * are below these bounds fits its slot; another takes a wide entry too. */
#define MT_BLOCKS_SIZE_BITS 32
#define MT_BLOCKS_SITE_BITS 23
#define MT_BLOCKS_THREAD_BITS 8
/* The thread field's last value marks a wide block. */
#define MT_BLOCKS_FITS(b)                                                   \
	((b)->size < (1ull << MT_BLOCKS_SIZE_BITS) &&                       \
	 (b)->site < (1u << MT_BLOCKS_SITE_BITS) &&                         \
	 (b)->thread < (1u << MT_BLOCKS_THREAD_BITS) - 1)

/* A slot: private to mt_blocks.c but for mt_blocks_prefetch() below. */
typedef struct mt_blocks_slot {
	uint64_t key;    /* the block's address plus one; 0: an empty slot */
	uint64_t packed; /* size, site, thread, up; or a wide entry's index */
} mt_blocks_slot_t;

/* A wide block's fields; a free entry's size is the next free one's
 * index plus one. */
typedef struct {
	uint64_t size;
	uint32_t site;
	uint32_t thread;
} mt_blocks_wide_t;

/* The load the table grows at, in percent of its slots. */
#define MT_BLOCKS_LOAD_PCT 80

typedef struct {
	mt_blocks_slot_t *slots; /* cap slots */
	size_t cap;              /* a multiple of 4, or 0 before the first put */
	size_t limit;            /* the most blocks the slots hold */
	size_t count;            /* blocks in slots (the side slot excluded) */
	uint64_t seed;           /* mt_map's hash seed, kept at hand */
	int has_side;            /* the block at UINT64_MAX is live */
	mt_block_t side;
	mt_blocks_wide_t *wide;  /* wide_cap entries, wide_len ever used */
	size_t wide_cap, wide_len;
	size_t wide_free;        /* the first free entry's index plus one */
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

/* Grow the slots by a quarter (from nothing: MIN_CAP slots), or the wide
 * entries when wide is set.  MT_OK or MT_ENOMEM (the table unchanged). */
int mt_blocks_grow(mt_blocks_t *t, int wide);

/* Room for one more block no wider than b (each of its size, site and
 * thread at most b's), growing the slots when it would take the load past
 * MT_BLOCKS_LOAD_PCT (the one place that rule stands): after MT_OK, a put
 * of such a block cannot fail.  MT_ENOMEM leaves the table unchanged.
 * Inline: every block event but a free asks, and nearly always there is
 * room. */
static inline int mt_blocks_reserve(mt_blocks_t *t, const mt_block_t *b)
{
	if (t->count + 1 > t->limit) {
		int rc = mt_blocks_grow(t, 0);

		if (rc)
			return rc;
	}
	if (!MT_BLOCKS_FITS(b) && !t->wide_free && t->wide_len == t->wide_cap)
		return mt_blocks_grow(t, 1);
	return 0;
}

/* Remove the block at ptr, copying it to *out.  Returns 1 when it was
 * live, 0 otherwise (*out untouched). */
int mt_blocks_take(mt_blocks_t *t, uint64_t ptr, mt_block_t *out);

/* Copy the block at ptr to *out: 1, or 0 when none is live there (*out
 * untouched). */
int mt_blocks_find(const mt_blocks_t *t, uint64_t ptr, mt_block_t *out);

/* The home slot of a stored key (an address plus one) in a table of cap
 * slots with that seed: mt_map_home()'s product, its top bits scaled to
 * cap, so that homes keep the hash's order whatever the capacity. */
static inline size_t mt_blocks_home(uint64_t stored, uint64_t seed, size_t cap)
{
	uint64_t h = (stored ^ seed) * 0x9e3779b97f4a7c15ull;

	return (size_t)(((unsigned __int128)h * cap) >> 64);
}

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
	__builtin_prefetch(&t->slots[mt_blocks_home(ptr + 1, t->seed, t->cap)]);
}

#endif
