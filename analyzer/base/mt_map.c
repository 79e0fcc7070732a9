/*
 * mt_map: open-addressing hash map of 64-bit keys.  Keys are stored plus
 * one so that a zero word marks an empty slot; the single key that would
 * wrap to zero, UINT64_MAX, lives in a side slot.  It must never call
 * malloc directly: allocation goes through mt_mem.
 */
#include "../base/mt_map.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"

#define MIN_CAP 16

static inline uint64_t *slot_key(const mt_map_t *m, size_t i)
{
	return (uint64_t *)(m->slots + i * m->entry_size);
}

static inline void *slot_value(const mt_map_t *m, size_t i)
{
	return m->slots + i * m->entry_size + sizeof(uint64_t);
}

/* The keys come from the trace, which may be hostile: with a fixed hash
 * anyone can write pointers that all land in one slot and make every
 * insert walk all of them (a trace of a million such allocations takes
 * hours).  So the hash is keyed with a per-process random seed, drawn
 * once with getrandom(2): the key, xor the seed, times an odd constant,
 * and the index is the product's top bits (Fibonacci hashing): each
 * index bit depends on every key bit at or below it, through carries the
 * unknown seed decides, and the top ones on all of them.  Pointers
 * aligned to 16 bytes, and any arithmetic progression of keys, still
 * spread over the whole table (the hostile suite's colliding pointers
 * included).  One multiply: a live-block event hashes its pointer two or
 * three times (mt_blocks: prefetch, lookup, the backward shift of a
 * removal).
 * Nothing depends on the order this gives: every output the analyzer
 * sorts is sorted on a total order. */
static uint64_t map_seed;

static inline size_t home(const mt_map_t *m, uint64_t stored)
{
	return mt_map_home(stored, map_seed, m->shift);
}

static void seed_once(void)
{
	struct timespec ts;

	if (map_seed)
		return;
	if (getrandom(&map_seed, sizeof(map_seed), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(map_seed)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		map_seed = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^
			   (uint64_t)ts.tv_sec ^ (uint64_t)getpid() << 32;
	}
	map_seed |= 1; /* never 0, so it is drawn once */
}

uint64_t mt_map_seed(void)
{
	seed_once();
	return map_seed;
}

void mt_map_init(mt_map_t *m, size_t value_size)
{
	seed_once();
	memset(m, 0, sizeof(*m));
	m->value_size = value_size;
	m->entry_size = sizeof(uint64_t) + ((value_size + 7) & ~(size_t)7);
}

void mt_map_release(mt_map_t *m)
{
	size_t value_size = m->value_size;

	mt_mem_free(m->slots);
	mt_mem_free(m->side);
	mt_map_init(m, value_size);
}

size_t mt_map_count(const mt_map_t *m)
{
	return m->count + (m->side != NULL);
}

void *mt_map_find(const mt_map_t *m, uint64_t key)
{
	uint64_t stored = key + 1;

	if (!stored)
		return m->side;
	if (!m->cap)
		return NULL;
	for (size_t i = home(m, stored);; i = (i + 1) & (m->cap - 1)) {
		uint64_t k = *slot_key(m, i);

		if (k == stored)
			return slot_value(m, i);
		if (!k)
			return NULL;
	}
}

static int grow(mt_map_t *m)
{
	size_t old_cap = m->cap;
	unsigned char *old = m->slots;
	size_t cap = old_cap ? old_cap * 2 : MIN_CAP;
	unsigned char *slots = mt_mem_calloc(cap, m->entry_size);

	if (!slots)
		return MT_ENOMEM;
	m->slots = slots;
	m->cap = cap;
	m->shift = 64u - (unsigned)__builtin_ctzll((unsigned long long)cap);
	for (size_t j = 0; j < old_cap; j++) {
		unsigned char *e = old + j * m->entry_size;
		uint64_t k = *(uint64_t *)e;
		size_t i;

		if (!k)
			continue;
		for (i = home(m, k); *slot_key(m, i); i = (i + 1) & (cap - 1))
			;
		memcpy(m->slots + i * m->entry_size, e, m->entry_size);
	}
	mt_mem_free(old);
	return MT_OK;
}

int mt_map_upsert(mt_map_t *m, uint64_t key, void **value, int *created)
{
	uint64_t stored = key + 1;
	size_t i = 0;

	if (created)
		*created = 0;
	if (!stored) {
		if (!m->side) {
			m->side = mt_mem_calloc(1, m->value_size);
			if (!m->side)
				return MT_ENOMEM;
			if (created)
				*created = 1;
		}
		*value = m->side;
		return MT_OK;
	}
	if (m->cap) {
		for (i = home(m, stored);; i = (i + 1) & (m->cap - 1)) {
			uint64_t k = *slot_key(m, i);

			if (k == stored) {
				*value = slot_value(m, i);
				return MT_OK;
			}
			if (!k)
				break;
		}
	}
	/* Keep the load under 7/10 so probe runs stay short.  The search
	 * above stopped on the empty slot the key goes to, unless the table
	 * grows. */
	if ((m->count + 1) * 10 > m->cap * 7) {
		int rc = grow(m);

		if (rc)
			return rc;
		for (i = home(m, stored); *slot_key(m, i);
		     i = (i + 1) & (m->cap - 1))
			;
	}
	*slot_key(m, i) = stored;
	memset(slot_value(m, i), 0, m->entry_size - sizeof(uint64_t));
	m->count++;
	*value = slot_value(m, i);
	if (created)
		*created = 1;
	return MT_OK;
}

int mt_map_remove(mt_map_t *m, uint64_t key, void *out)
{
	uint64_t stored = key + 1;
	size_t mask = m->cap - 1;
	size_t i, j;

	if (!stored) {
		if (!m->side)
			return 0;
		if (out)
			memcpy(out, m->side, m->value_size);
		mt_mem_free(m->side);
		m->side = NULL;
		return 1;
	}
	if (!m->cap)
		return 0;
	for (i = home(m, stored);; i = (i + 1) & mask) {
		uint64_t k = *slot_key(m, i);

		if (k == stored)
			break;
		if (!k)
			return 0;
	}
	if (out)
		memcpy(out, slot_value(m, i), m->value_size);
	/* Backward-shift: pull later entries of the run into the hole when
	 * their home lies at or before it, so no tombstone is needed. */
	for (j = (i + 1) & mask;; j = (j + 1) & mask) {
		uint64_t k = *slot_key(m, j);
		size_t h;

		if (!k)
			break;
		h = home(m, k);
		if (((j - h) & mask) >= ((j - i) & mask)) {
			memcpy(m->slots + i * m->entry_size,
			       m->slots + j * m->entry_size, m->entry_size);
			i = j;
		}
	}
	*slot_key(m, i) = 0;
	m->count--;
	return 1;
}

int mt_map_iter(const mt_map_t *m, size_t *pos, uint64_t *key, void **value)
{
	while (*pos < m->cap) {
		size_t i = (*pos)++;
		uint64_t k = *slot_key(m, i);

		if (k) {
			*key = k - 1;
			*value = slot_value(m, i);
			return 1;
		}
	}
	if (*pos == m->cap && m->side) {
		(*pos)++;
		*key = UINT64_MAX;
		*value = m->side;
		return 1;
	}
	return 0;
}
