/*
 * mt_blocks: the live-block table, mt_map specialised for one 32-byte
 * entry.  Addresses are stored plus one so that a zero word marks an empty
 * slot; the one address that would wrap to zero, UINT64_MAX, lives in a
 * side slot.  It must never call malloc directly (allocation goes through
 * mt_mem) and never hash with anything but mt_map_home(): the keys come
 * from the trace, which may be hostile.
 */
#include "../model/mt_blocks.h"

#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_map.h"
#include "../base/mt_mem.h"

_Static_assert(sizeof(struct mt_blocks_slot) == 32,
	       "a slot is half a cache line");

#define MIN_CAP 16
/* The old table's slots given back at a time while it is copied: 2 MiB,
 * a huge page (mt_mem_discard_line() gives back whole ones). */
#define DISCARD_SLOTS ((size_t)65536)
static inline size_t home(const mt_blocks_t *t, uint64_t stored)
{
	return mt_map_home(stored, t->seed, t->shift);
}

void mt_blocks_init(mt_blocks_t *t)
{
	memset(t, 0, sizeof(*t));
	t->seed = mt_map_seed();
}

void mt_blocks_release(mt_blocks_t *t)
{
	mt_mem_free_line(t->slots);
	mt_blocks_init(t);
}

size_t mt_blocks_count(const mt_blocks_t *t)
{
	return t->count + (t->has_side != 0);
}

/* The slot holding stored, or the empty slot that ends its probe run. */
static inline mt_blocks_slot_t *probe(const mt_blocks_t *t, uint64_t stored)
{
	size_t mask = t->cap - 1;

	for (size_t i = home(t, stored);; i = (i + 1) & mask) {
		mt_blocks_slot_t *s = &t->slots[i];

		if (s->key == stored || !s->key)
			return s;
	}
}

const mt_block_t *mt_blocks_find(const mt_blocks_t *t, uint64_t ptr)
{
	uint64_t stored = ptr + 1;
	const mt_blocks_slot_t *s;

	if (!stored)
		return t->has_side ? &t->side : NULL;
	if (!t->cap)
		return NULL;
	s = probe(t, stored);
	return s->key ? &s->block : NULL;
}

int mt_blocks_grow(mt_blocks_t *t)
{
	size_t old_cap = t->cap;
	mt_blocks_slot_t *old = t->slots;
	size_t cap = old_cap ? old_cap * 2 : MIN_CAP;
	/* On a cache line, so that no slot straddles two. */
	mt_blocks_slot_t *slots = mt_mem_calloc_line(cap, sizeof(*slots));

	if (!slots)
		return MT_ENOMEM;
	t->slots = slots;
	t->cap = cap;
	t->shift = 64u - (unsigned)__builtin_ctzll((unsigned long long)cap);
	/* Homes are the hash's top bits, so the old slots, copied in order,
	 * land in order in the new table, twice as far in: giving back
	 * each stretch of the old one once it is copied keeps the copy's
	 * peak near the new table's size, not both tables' (a live set of
	 * 2.18 M blocks: 128 MiB, not 192). */
	for (size_t j = 0; j < old_cap; j++) {
		if (old[j].key)
			*probe(t, old[j].key) = old[j];
		if (!((j + 1) & (DISCARD_SLOTS - 1)))
			mt_mem_discard_line(old, (j + 1 - DISCARD_SLOTS) * sizeof(*old),
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
			*old = s->block;
			s->block = *b;
			*replaced = 1;
			return MT_OK;
		}
	}
	/* The probe above stopped on the empty slot the key goes to, unless
	 * the table grows to make room. */
	{
		size_t cap = t->cap;
		int rc = mt_blocks_reserve(t);

		if (rc)
			return rc;
		if (t->cap != cap)
			s = probe(t, stored);
	}
	s->key = stored;
	s->block = *b;
	t->count++;
	*replaced = 0;
	return MT_OK;
}

int mt_blocks_take(mt_blocks_t *t, uint64_t ptr, mt_block_t *out)
{
	uint64_t stored = ptr + 1;
	size_t mask = t->cap - 1;
	size_t i, j;

	if (!stored) {
		if (!t->has_side)
			return 0;
		*out = t->side;
		t->has_side = 0;
		return 1;
	}
	if (!t->cap)
		return 0;
	i = (size_t)(probe(t, stored) - t->slots);
	if (!t->slots[i].key)
		return 0;
	*out = t->slots[i].block;
	/* Backward-shift: pull later entries of the run into the hole when
	 * their home lies at or before it, so no tombstone is needed. */
	for (j = (i + 1) & mask;; j = (j + 1) & mask) {
		uint64_t k = t->slots[j].key;

		if (!k)
			break;
		if (((j - home(t, k)) & mask) >= ((j - i) & mask)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].key = 0;
	t->count--;
	return 1;
}
