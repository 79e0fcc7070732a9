/*
 * mt_unwind_share: unwind rules shared across fork (mt_unwind_share.h).
 * It must never hand out a rule before its address is stored, never
 * write into a slot it did not claim, never answer for code loaded or
 * unloaded since it was made, and never block.
 */
#include "mt_unwind_share.h"

#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>

#include "mt_elf.h"
#include "mt_forkmap.h"

/* Four pages, aligned to their size (mt_forkmap.h): inside one of the
 * kernel's fault-around windows, so that a child's first look maps
 * every page written so far. */
#define TABLE_BYTES (16u << 10)
#define PAGE 4096u
#define MAX_RANGES 200u
#define SLOTS ((TABLE_BYTES - PAGE) / sizeof(slot_t))
#define PROBES 16u
/* The address word of a slot claimed, its rule not yet written. */
#define CLAIMED UINT64_MAX

typedef struct {
	_Atomic uint64_t ip; /* 0 free, CLAIMED, or the address: stored last */
	uint64_t rule;
} slot_t;

typedef struct {
	uint64_t generation;
	uint64_t unloads; /* the loader's dlpi_subs when it was made */
	uint32_t nranges;
	uint32_t pad;
	/* The executable segments of the objects loaded when it was made,
	 * [lo, hi) each. */
	uint64_t ranges[MAX_RANGES][2];
} head_t;

typedef struct {
	head_t head;
	char pad[PAGE - sizeof(head_t)];
	slot_t slots[SLOTS];
} table_t;

_Static_assert(sizeof(head_t) <= PAGE, "the head fits its page");
_Static_assert(sizeof(table_t) == TABLE_BYTES, "the slots fill the rest");

/* Set once, before the fork that shares it. */
static _Atomic(table_t *) table;
/* Set by mt_unwind_share_lock_down(), or where the loader gives no
 * count of unloads: no table is made after it. */
static _Atomic int locked;
static uint64_t found, added;

/* Record each object's executable segments, and the loader's count of
 * unloads. */
static int add_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
	head_t *h = arg;

	h->unloads = mt_elf_unloads(info, size);
	for (int i = 0; i < info->dlpi_phnum && h->nranges < MAX_RANGES; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || !p->p_memsz)
			continue;
		h->ranges[h->nranges][0] = info->dlpi_addr + p->p_vaddr;
		h->ranges[h->nranges][1] = info->dlpi_addr + p->p_vaddr + p->p_memsz;
		h->nranges++;
	}
	return 0;
}

void mt_unwind_share_fork_prepare(uint64_t generation)
{
	table_t *t, *none = NULL;

	/* One table for the process's life: where an unload has moved its
	 * count since, it answers nothing, and no thread may be reading a
	 * table unmapped under it. */
	if (atomic_load_explicit(&table, memory_order_acquire) || atomic_load(&locked))
		return;
	t = mt_forkmap_make(TABLE_BYTES);
	if (!t)
		return;
	t->head.generation = generation;
	dl_iterate_phdr(add_ranges, &t->head);
	if (t->head.unloads == UINT64_MAX) {
		/* No way to tell an unload no hook saw: no table. */
		munmap(t, TABLE_BYTES);
		atomic_store(&locked, 1);
		return;
	}
	/* Two threads forking at once: one table. */
	if (!atomic_compare_exchange_strong(&table, &none, t))
		munmap(t, TABLE_BYTES);
}

void mt_unwind_share_lock_down(void)
{
	atomic_store(&locked, 1);
}

void mt_unwind_share_fork_child(void)
{
	/* Written only when it changes: a page the child never writes is
	 * never copied. */
	if (found)
		found = 0;
	if (added)
		added = 0;
}

/* The table, when it answers for ip in generation. */
static table_t *table_for(uint64_t ip, uint64_t generation)
{
	table_t *t = atomic_load_explicit(&table, memory_order_acquire);

	if (!t || t->head.generation != generation)
		return NULL;
	for (uint32_t i = 0; i < t->head.nranges; i++)
		if (ip >= t->head.ranges[i][0] && ip < t->head.ranges[i][1])
			return t;
	return NULL;
}

/* The slot a lookup of ip starts at. */
static unsigned home(uint64_t ip)
{
	return (unsigned)((ip * 0x9e3779b97f4a7c15ull) >> 40) % SLOTS;
}

int mt_unwind_share_find(uint64_t ip, uint64_t generation, uint64_t *rule)
{
	table_t *t = table_for(ip, generation);
	unsigned h = home(ip);

	if (!t || !ip || ip == CLAIMED)
		return 0;
	for (unsigned i = 0; i < PROBES; i++) {
		slot_t *s = &t->slots[(h + i) % SLOTS];
		uint64_t w = atomic_load_explicit(&s->ip, memory_order_acquire);

		if (!w)
			return 0;
		if (w == ip) {
			*rule = s->rule;
			found++;
			return 1;
		}
	}
	return 0;
}

void mt_unwind_share_add(uint64_t ip, uint64_t generation, uint64_t unloads, uint64_t rule)
{
	table_t *t = table_for(ip, generation);
	unsigned h = home(ip);

	if (!t || !ip || ip == CLAIMED || unloads != t->head.unloads)
		return;
	for (unsigned i = 0; i < PROBES; i++) {
		slot_t *s = &t->slots[(h + i) % SLOTS];
		uint64_t w = atomic_load_explicit(&s->ip, memory_order_acquire), none = 0;

		/* Kept already (a claim on the way may be for ip too: a
		 * second copy of one rule is harmless). */
		if (w == ip)
			return;
		if (w)
			continue;
		if (!atomic_compare_exchange_strong_explicit(&s->ip, &none, CLAIMED,
							     memory_order_acq_rel,
							     memory_order_acquire)) {
			/* Taken meanwhile: look at it again. */
			i--;
			continue;
		}
		s->rule = rule;
		atomic_store_explicit(&s->ip, ip, memory_order_release);
		added++;
		return;
	}
}

void mt_unwind_share_counts(uint64_t *f, uint64_t *a)
{
	*f = found;
	*a = added;
}

void mt_unwind_share_reset(void)
{
	table_t *t = atomic_exchange(&table, NULL);

	if (t)
		munmap(t, TABLE_BYTES);
	atomic_store(&locked, 0);
	found = added = 0;
}
