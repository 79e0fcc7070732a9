/*
 * mt_table: open-addressing hash over mmap'd memory, and a bump arena.
 * It must never call malloc or free: it runs inside them.
 */
#include "mt_table.h"

#include <string.h>
#include <sys/mman.h>

#include "mt_prefault.h"

#define MIN_CAP 256

/* flags: mt_prefault_map_flags() for a table, whose entries land all over
 * it; 0 for an arena chunk, filled from its start.
 *
 * A forked child gets the mapping empty (MADV_WIPEONFORK, Linux 4.14; an
 * older kernel copies it as before): a fork would otherwise copy its page
 * table entries, and write-protect its pages in the parent, for a child
 * that empties the tables at once (a new trace, mt_stack_reset) or never
 * looks (untraced).  A child of a fork that runs no fork handlers finds
 * its tables empty and declares anew what it uses. */
static void *map(size_t size, int flags, int *wiped)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	*wiped = madvise(p, size, MADV_WIPEONFORK) == 0;
	return p;
}

static inline size_t home(uint64_t key, size_t cap)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

int mt_table_next(const mt_table_t *t, uint64_t key, size_t *pos,
		  uint64_t *value)
{
	size_t i;

	/* An empty table is not read (nor is it by its first add): a
	 * forked child's first lookup would fault in a page of zeros, and
	 * its first add fault again to write it. */
	if (!t->count)
		return 0;
	/* *pos counts probes done: 0 starts at the key's home slot. */
	for (i = (home(key, t->cap) + *pos) & (t->cap - 1);;
	     i = (i + 1) & (t->cap - 1)) {
		uint64_t k = t->slots[2 * i];

		(*pos)++;
		if (!k)
			return 0;
		if (k == key) {
			*value = t->slots[2 * i + 1];
			return 1;
		}
		if (*pos > t->cap)
			return 0;
	}
}

/* empty: no slot is taken, so none is read (a read of a page never
 * written maps a page of zeros, and the write that follows faults
 * again). */
static void put(uint64_t *slots, size_t cap, uint64_t key, uint64_t value, int empty)
{
	size_t i = home(key, cap);

	for (; !empty && slots[2 * i]; i = (i + 1) & (cap - 1))
		;
	slots[2 * i] = key;
	slots[2 * i + 1] = value;
}

int mt_table_add(mt_table_t *t, uint64_t key, uint64_t value)
{
	if ((t->count + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : MIN_CAP;
		int wiped;
		uint64_t *slots = map(cap * 2 * sizeof(uint64_t), mt_prefault_map_flags(), &wiped);

		if (!slots)
			return -1;
		for (size_t i = 0; i < t->cap; i++)
			if (t->slots[2 * i])
				put(slots, cap, t->slots[2 * i], t->slots[2 * i + 1], 0);
		if (t->slots)
			munmap(t->slots, t->mapped * 2 * sizeof(uint64_t));
		t->slots = slots;
		t->cap = cap;
		t->mapped = cap;
		t->wiped = wiped;
	}
	put(t->slots, t->cap, key, value, !t->count);
	t->count++;
	return 0;
}

void mt_table_release(mt_table_t *t)
{
	if (t->slots)
		munmap(t->slots, t->mapped * 2 * sizeof(uint64_t));
	memset(t, 0, sizeof(*t));
}

void mt_table_empty(mt_table_t *t)
{
	/* Entries are never taken out one by one: none were put. */
	if (t->count)
		mt_table_release(t);
}

void mt_table_forked(mt_table_t *t)
{
	if (!t->wiped) {
		mt_table_release(t);
		return;
	}
	/* Written only when they change: t's page may be one the child
	 * has not copied yet. */
	if (t->count)
		t->count = 0;
	if (t->cap > MIN_CAP)
		t->cap = MIN_CAP;
}

#define CHUNK (1u << 20)
/* A chunk is made resident a step at a time, as the allocations reach it:
 * a short process declares a few frames, a long one fills the chunk. */
#define STEP (16u << 10)

typedef struct chunk_head {
	struct chunk_head *next;
	size_t size;
} chunk_head_t;

void *mt_arena_alloc(mt_arena_t *a, size_t size)
{
	size_t step;
	void *p;

	size = (size + 7) & ~(size_t)7;
	if (a->chunk && !a->chunks) {
		/* A forked child's first record: the chunk's head, wiped
		 * with it, is written back now rather than at the fork, so
		 * a child that records nothing never touches the page. */
		chunk_head_t *h = (chunk_head_t *)a->chunk;

		h->next = NULL;
		h->size = a->size;
		a->chunks = h;
	}
	if (!a->chunk || a->used + size > a->size) {
		size_t want = size + sizeof(chunk_head_t) > CHUNK ?
				      size + sizeof(chunk_head_t) : CHUNK;
		int wiped;
		chunk_head_t *h = map(want, 0, &wiped);

		if (!h)
			return NULL;
		a->wiped = wiped;
		mt_prefault_range(h, want < STEP ? want : STEP);
		h->next = a->chunks;
		h->size = want;
		a->chunks = h;
		a->chunk = (char *)h;
		a->used = sizeof(chunk_head_t);
		a->size = want;
	}
	p = a->chunk + a->used;
	/* Entering a step (its start in (used, used + size]): it is made
	 * resident first. */
	step = (a->used + size) / STEP * STEP;
	if (step > a->used && step < a->size)
		mt_prefault_range(a->chunk + step, a->size - step < STEP ? a->size - step : STEP);
	a->used += size;
	return p;
}

void mt_arena_empty(mt_arena_t *a)
{
	const chunk_head_t *h = a->chunks;

	if (h && (h->next || a->used > sizeof(chunk_head_t)))
		mt_arena_release(a);
}

void mt_arena_forked(mt_arena_t *a)
{
	if (!a->chunk)
		return;
	if (!a->wiped) {
		mt_arena_release(a);
		return;
	}
	/* Its head is written at the first allocation (mt_arena_alloc). */
	a->chunks = NULL;
	a->used = sizeof(chunk_head_t);
}

void mt_arena_release(mt_arena_t *a)
{
	chunk_head_t *h = a->chunks;

	/* A forked child's chunk whose head is not written back yet. */
	if (!h && a->chunk)
		munmap(a->chunk, a->size);
	while (h) {
		chunk_head_t *next = h->next;

		munmap(h, h->size);
		h = next;
	}
	memset(a, 0, sizeof(*a));
}
