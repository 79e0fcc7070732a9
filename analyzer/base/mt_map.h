/*
 * mt_map: a hash map from 64-bit keys to fixed-size values, used for the
 * analyzer's tables (stacks, frames, allocators, threads; the live blocks
 * have their own, mt_blocks, on the same design and hash).
 *
 * Open addressing with linear probing and backward-shift deletion, so a
 * churn of inserts and removals never leaves tombstones and lookups stay
 * short.  Every key, 0 and UINT64_MAX included, is valid.
 *
 * Invariants: a value pointer returned by find, upsert or iter stays valid
 * only until the next upsert or remove on the same map.  New values are
 * zero-filled.  The map allocates only through mt_mem.
 */
#ifndef MT_MAP_H
#define MT_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	unsigned char *slots; /* cap entries of entry_size bytes */
	size_t cap;           /* a power of two, or 0 before the first insert */
	unsigned shift;       /* 64 - log2(cap): the hash's top bits index */
	size_t count;         /* entries in slots (the side slot excluded) */
	size_t entry_size;
	size_t value_size;
	unsigned char *side;  /* the value of key UINT64_MAX, when present */
} mt_map_t;

void mt_map_init(mt_map_t *m, size_t value_size);
/* Free the map's storage (not what its values point to). */
void mt_map_release(mt_map_t *m);

size_t mt_map_count(const mt_map_t *m);

/* The value stored for key, or NULL. */
void *mt_map_find(const mt_map_t *m, uint64_t key);

/*
 * Find key's value, inserting a zeroed one when absent.  *created tells
 * which (may be NULL).  Returns MT_OK or MT_ENOMEM (the map unchanged).
 */
int mt_map_upsert(mt_map_t *m, uint64_t key, void **value, int *created);

/* Remove key, copying its value to out when out is not NULL.  Returns 1
 * when key was present, 0 otherwise. */
int mt_map_remove(mt_map_t *m, uint64_t key, void *out);

/*
 * Walk the entries: start with *pos = 0 and call until it returns 0.  The
 * order is the table's, not the keys'.  The map must not change meanwhile.
 */
int mt_map_iter(const mt_map_t *m, size_t *pos, uint64_t *key, void **value);

/*
 * The hash every table of the analyzer indexes by, for a table that keeps
 * its own slots (mt_blocks): the home slot of a stored key (the key plus
 * one) in a table of 2^(64 - shift) slots, keyed with mt_map_seed(), the
 * per-process random seed (mt_map.c says why it must be keyed).
 */
uint64_t mt_map_seed(void);

static inline size_t mt_map_home(uint64_t stored, uint64_t seed,
				 unsigned shift)
{
	return (size_t)(((stored ^ seed) * 0x9e3779b97f4a7c15ull) >> shift);
}

#endif
