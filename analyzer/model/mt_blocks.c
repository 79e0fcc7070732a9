/*
 * mt_blocks: the live-block table, in 16-byte slots of an address and a
 * packed block.  Addresses are stored plus one so that a zero word marks
 * an empty slot; the one address that would wrap to zero, UINT64_MAX,
 * lives in a side slot.  It must never call malloc directly (allocation
 * goes through mt_mem) and never hash with anything but
 * mt_blocks_home(), mt_map's seeded hash: the keys come from the trace,
 * which may be hostile.
 */
#include "../model/mt_blocks.h"

#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"

_Static_assert(sizeof(struct mt_blocks_slot) == 16,
	       "a slot is a quarter of a cache line");
_Static_assert(MT_BLOCKS_SIZE_BITS + MT_BLOCKS_SITE_BITS +
		       MT_BLOCKS_THREAD_BITS + 1 == 64,
	       "a block packs into one word");

#define MIN_CAP 16
/* How often, in old slots (64 KiB of them), the copy gives back what
 * it has passed and faults in what it is about to store to: mt_mem
 * does both by whole huge pages, so the old table keeps at most one
 * partly copied huge page, and the new one is ready at most one ahead. */
#define STEP_SLOTS ((size_t)4096)
#define MIN_WIDE 16

/* The packed word, from its low bit: up, thread, site, size.  A wide
 * block's thread field is WIDE and its site and size fields hold the
 * index of its wide entry. */
#define THREAD_SHIFT 1
#define SITE_SHIFT (THREAD_SHIFT + MT_BLOCKS_THREAD_BITS)
#define SIZE_SHIFT (SITE_SHIFT + MT_BLOCKS_SITE_BITS)
#define THREAD_MASK ((1ull << MT_BLOCKS_THREAD_BITS) - 1)
#define SITE_MASK ((1ull << MT_BLOCKS_SITE_BITS) - 1)
#define WIDE THREAD_MASK

static inline size_t home(const mt_blocks_t *t, uint64_t stored)
{
	return mt_blocks_home(stored, t->seed, t->cap);
}

static inline size_t next(const mt_blocks_t *t, size_t i)
{
	return i + 1 == t->cap ? 0 : i + 1;
}

void mt_blocks_init(mt_blocks_t *t)
{
	memset(t, 0, sizeof(*t));
	t->seed = mt_map_seed();
}

void mt_blocks_release(mt_blocks_t *t)
{
	mt_mem_free_line(t->slots);
	mt_mem_free(t->wide);
	mt_blocks_init(t);
}

size_t mt_blocks_count(const mt_blocks_t *t)
{
	return t->count + (t->has_side != 0);
}

/* b's packed word, in a wide entry when it does not fit: a free one, or
 * a new one of the room mt_blocks_reserve() made. */
static inline uint64_t pack(mt_blocks_t *t, const mt_block_t *b)
{
	size_t i;

	if (__builtin_expect(MT_BLOCKS_FITS(b), 1))
		return b->size << SIZE_SHIFT | (uint64_t)b->site << SITE_SHIFT |
		       (uint64_t)b->thread << THREAD_SHIFT | b->up;
	if (t->wide_free) {
		i = t->wide_free - 1;
		t->wide_free = (size_t)t->wide[i].size;
	} else {
		i = t->wide_len++;
	}
	t->wide[i] = (mt_blocks_wide_t){ b->size, b->site, b->thread };
	return (uint64_t)i << SITE_SHIFT | WIDE << THREAD_SHIFT | b->up;
}

static inline int is_wide(uint64_t w)
{
	return (w >> THREAD_SHIFT & THREAD_MASK) == WIDE;
}

static inline void unpack(const mt_blocks_t *t, uint64_t w, mt_block_t *out)
{
	out->up = (unsigned)(w & 1);
	if (__builtin_expect(!is_wide(w), 1)) {
		out->size = w >> SIZE_SHIFT;
		out->site = (uint32_t)(w >> SITE_SHIFT & SITE_MASK);
		out->thread = (uint32_t)(w >> THREAD_SHIFT & THREAD_MASK);
	} else {
		const mt_blocks_wide_t *e = &t->wide[w >> SITE_SHIFT];

		out->size = e->size;
		out->site = e->site;
		out->thread = e->thread;
	}
}

/* The wide entry of a packed word, if any, goes back to the free list. */
static inline void unpack_free(mt_blocks_t *t, uint64_t w)
{
	if (__builtin_expect(is_wide(w), 0)) {
		size_t i = (size_t)(w >> SITE_SHIFT);

		t->wide[i].size = t->wide_free;
		t->wide_free = i + 1;
	}
}

/* The slot holding stored, or the empty slot that ends its probe run. */
static inline mt_blocks_slot_t *probe(const mt_blocks_t *t, uint64_t stored)
{
	for (size_t i = home(t, stored);; i = next(t, i)) {
		mt_blocks_slot_t *s = &t->slots[i];

		if (s->key == stored || !s->key)
			return s;
	}
}


int mt_blocks_find(const mt_blocks_t *t, uint64_t ptr, mt_block_t *out)
{
	uint64_t stored = ptr + 1;
	const mt_blocks_slot_t *s;

	if (!stored) {
		if (t->has_side)
			*out = t->side;
		return t->has_side;
	}
	if (!t->cap)
		return 0;
	s = probe(t, stored);
	if (!s->key)
		return 0;
	unpack(t, s->packed, out);
	return 1;
}

static int grow_wide(mt_blocks_t *t)
{
	size_t cap = t->wide_cap ? t->wide_cap * 2 : MIN_WIDE;
	mt_blocks_wide_t *wide;

	if (cap > SIZE_MAX / sizeof(*wide) || cap - 1 > (SIZE_MAX >> SITE_SHIFT))
		return MT_ENOMEM;
	wide = mt_mem_realloc(t->wide, cap * sizeof(*wide));
	if (!wide)
		return MT_ENOMEM;
	t->wide = wide;
	t->wide_cap = cap;
	return MT_OK;
}

int mt_blocks_grow(mt_blocks_t *t, int wide)
{
	size_t old_cap = t->cap;
	mt_blocks_slot_t *old = t->slots;
	/* A quarter more, in whole cache lines of slots. */
	size_t cap = old_cap ? (old_cap + old_cap / 4 + 3) & ~(size_t)3 : MIN_CAP;
	mt_blocks_slot_t *slots;

	if (wide)
		return grow_wide(t);
	/* On a cache line, so that no slot straddles two. */
	slots = mt_mem_calloc_line(cap, sizeof(*slots));
	if (!slots)
		return MT_ENOMEM;
	t->slots = slots;
	t->cap = cap;
	t->limit = cap / 100 * MT_BLOCKS_LOAD_PCT +
		   cap % 100 * MT_BLOCKS_LOAD_PCT / 100;
	/* Homes are the hash's top bits scaled to the capacity, so the old
	 * slots, copied in order, land in order in the new table, a quarter
	 * further in: giving back each stretch of the old one once it is
	 * copied keeps the copy's peak near the new table's size, not both
	 * tables'.
	 *
	 * The copy probes each slot before it stores there, and a page first
	 * read maps the kernel's zero page, copied on the store: a second
	 * fault and a TLB flush, which reaches the reader's thread on the
	 * other core.  A mapped table's pages are faulted in writable just
	 * ahead of where the copy stores (ready: the slots done so); one
	 * from malloc's arenas, below a huge page, is written whole. */
	if (cap * sizeof(*slots) < MT_MEM_HUGE)
		memset(slots, 0, cap * sizeof(*slots));
	for (size_t j = 0, ready = 0; j < old_cap; j++) {
		if (!(j % STEP_SLOTS)) {
			/* Where old slot j + 2 steps lands, scaled. */
			size_t want = (size_t)((unsigned __int128)(j + 2 * STEP_SLOTS) *
					       cap / old_cap);

			if (want > cap)
				want = cap;
			if (want > ready)
				ready = mt_mem_populate_line(slots, ready * sizeof(*slots),
							     want * sizeof(*slots)) /
					sizeof(*slots);
		}
		if (old[j].key)
			*probe(t, old[j].key) = old[j];
		if (!((j + 1) % STEP_SLOTS))
			mt_mem_discard_line(old, (j + 1 - STEP_SLOTS) * sizeof(*old),
					    (j + 1) * sizeof(*old));
	}
	mt_mem_free_line(old);
	return MT_OK;
}

int mt_blocks_put(mt_blocks_t *t, uint64_t ptr, const mt_block_t *b,
		  mt_block_t *old, int *replaced)
{
	uint64_t stored = ptr + 1;
	mt_blocks_slot_t *s = NULL;

	if (!stored) {
		*replaced = t->has_side;
		if (t->has_side)
			*old = t->side;
		t->side = *b;
		t->has_side = 1;
		return MT_OK;
	}
	if (t->cap) {
		s = probe(t, stored);
		if (s->key) {
			/* A wide block's entry is free for b's, if b needs
			 * one; else there must be room for one. */
			if (!MT_BLOCKS_FITS(b) && !is_wide(s->packed) &&
			    !t->wide_free && t->wide_len == t->wide_cap) {
				int rc = grow_wide(t);

				if (rc)
					return rc;
			}
			unpack(t, s->packed, old);
			unpack_free(t, s->packed);
			s->packed = pack(t, b);
			*replaced = 1;
			return MT_OK;
		}
	}
	/* The probe above stopped on the empty slot the key goes to, unless
	 * the table grows to make room. */
	{
		size_t cap = t->cap;
		int rc = mt_blocks_reserve(t, b);

		if (rc)
			return rc;
		if (t->cap != cap)
			s = probe(t, stored);
	}
	s->key = stored;
	s->packed = pack(t, b);
	t->count++;
	*replaced = 0;
	return MT_OK;
}

int mt_blocks_take(mt_blocks_t *t, uint64_t ptr, mt_block_t *out)
{
	uint64_t stored = ptr + 1;
	size_t cap = t->cap;
	size_t i, j;

	if (!stored) {
		if (!t->has_side)
			return 0;
		*out = t->side;
		t->has_side = 0;
		return 1;
	}
	if (!cap)
		return 0;
	i = (size_t)(probe(t, stored) - t->slots);
	if (!t->slots[i].key)
		return 0;
	unpack(t, t->slots[i].packed, out);
	unpack_free(t, t->slots[i].packed);
	/* Backward-shift: pull later entries of the run into the hole when
	 * their home lies at or before it (cyclically), so no tombstone is
	 * needed. */
	for (j = next(t, i);; j = next(t, j)) {
		uint64_t k = t->slots[j].key;
		size_t h, from_home, from_hole;

		if (!k)
			break;
		h = home(t, k);
		from_home = j >= h ? j - h : j + cap - h;
		from_hole = j >= i ? j - i : j + cap - i;
		if (from_home >= from_hole) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].key = 0;
	t->count--;
	return 1;
}
