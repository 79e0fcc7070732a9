/*
 * mt_table: a hash table of 64-bit keys and values in anonymous memory
 * mappings, for the preload's frame and stack tables.
 *
 * It never calls malloc (the preload must not allocate while recording):
 * storage comes from mmap(2), and growth maps a table twice the size and
 * unmaps the old one.  Several entries may share a key (a stack hash):
 * mt_table_next() walks the candidates.  Key 0 is reserved for "empty".
 * Not thread-safe: the caller holds the table lock (mt_trace.c).
 */
#ifndef MT_TABLE_H
#define MT_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint64_t *slots; /* cap pairs of key, value */
	size_t cap;
	size_t count;
	size_t mapped; /* pairs the mapping holds: cap, or more in a forked child */
	int wiped; /* slots come to a forked child empty (MADV_WIPEONFORK) */
} mt_table_t;

/* Start a walk over the values stored under key: *pos = 0, then call
 * mt_table_next until it returns 0. */
int mt_table_next(const mt_table_t *t, uint64_t key, size_t *pos,
		  uint64_t *value);

/* Add key -> value (duplicates allowed).  Returns 0, or -1 when memory
 * cannot be mapped (the table is unchanged). */
int mt_table_add(mt_table_t *t, uint64_t key, uint64_t value);

/* Empty the table and give its memory back. */
void mt_table_release(mt_table_t *t);

/* Empty the table: one with no entries is left as it is, its memory
 * kept; any other is released. */
void mt_table_empty(mt_table_t *t);

/* In a forked child, before anything else uses t: t is empty.  Its
 * slots came to the child empty and are kept, so the child maps no new
 * table; where the kernel copied them instead (before Linux 4.14), t is
 * released.  The child hashes into the mapping's first page only, as a
 * new table would, and grows from there into new mappings: a parent's
 * large table would spread a few keys over as many untouched pages. */
void mt_table_forked(mt_table_t *t);

/*
 * A bump arena of anonymous mappings for records the tables point to.
 * mt_arena_alloc returns 8-byte-aligned memory or NULL; it is only ever
 * given back whole.
 */
typedef struct {
	char *chunk;
	size_t used, size;
	void *chunks; /* list of mappings, for release */
	int wiped;    /* chunk comes to a forked child empty */
} mt_arena_t;

void *mt_arena_alloc(mt_arena_t *a, size_t size);
void mt_arena_release(mt_arena_t *a);

/* Empty the arena: one with nothing allocated in its one chunk is left
 * as it is; any other is released. */
void mt_arena_empty(mt_arena_t *a);

/* In a forked child, before anything else uses a: a is empty, its
 * current chunk kept (it came to the child empty, its head with it, which
 * the first allocation writes back).  A chunk before it lost its head the
 * same way and cannot be found again: it stays mapped, untouched, in the
 * child.  Where the kernel copied the chunks instead, a is released. */
void mt_arena_forked(mt_arena_t *a);

#endif
