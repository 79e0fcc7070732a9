/*
 * mt_namecache: names of code addresses shared across fork (mt_namecache.h).
 * It must never hand out an entry before its offset is stored, never
 * write into an entry it did not reserve, and never block.
 */
#include "mt_namecache.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "mt_forkmap.h"

/* One fault-around window of the kernel's (fault_around_bytes, 64 KiB by
 * default), aligned to it: a child's first look maps it whole. */
#define CACHE_BYTES (64u << 10)
/* The slots fill the first page, so that a child's lookups of a dozen
 * frames read one page of them, not one a frame: the first look at a
 * page costs a child microseconds wherever the kernel mapped it. */
#define SLOTS 512u
#define PROBES 32u
#define TEXT_AT (SLOTS * sizeof(slot_t) + sizeof(head_t))

/* A slot: 0 free; the address's tag alone while its entry is written;
 * the tag and the entry's offset once it is whole. */
typedef _Atomic uint64_t slot_t;

typedef struct {
	_Atomic uint32_t used; /* text bytes reserved, from TEXT_AT */
	uint32_t pad[15];
} head_t;

typedef struct {
	mt_namecache_key_t key;
	uint64_t offset;
	uint16_t symbol_len;
	uint8_t has_symbol;
	uint8_t build_id_len;
	uint32_t pad;
	/* build_id_len bytes of build id, then the symbol (no NUL). */
	unsigned char text[];
} entry_t;

_Static_assert(SLOTS * sizeof(slot_t) == 4096, "the slots fill one page");
_Static_assert(TEXT_AT < CACHE_BYTES / 2, "room for the text");

/* Set once, before the fork that shares it. */
static _Atomic(unsigned char *) cache;
static uint64_t found, added;

static head_t *head(unsigned char *c)
{
	return (head_t *)(c + SLOTS * sizeof(slot_t));
}

/* The slot a lookup of ip starts at, and the tag that stands for ip
 * there (never 0). */
static unsigned home(uint64_t ip)
{
	return (unsigned)((ip * 0x9e3779b97f4a7c15ull) >> 55) % SLOTS;
}

static uint64_t tag(uint64_t ip)
{
	return ((ip * 0xff51afd7ed558ccdull) >> 32 | 1) << 32;
}

/* A slot word's halves: the tag, and the entry's offset (0: none yet). */
static uint64_t slot_tag(uint64_t w)
{
	return w & ~0xffffffffull;
}

static uint64_t slot_off(uint64_t w)
{
	return w & 0xffffffffu;
}

static int same_key(const mt_namecache_key_t *a, const mt_namecache_key_t *b)
{
	return a->ip == b->ip && a->bias == b->bias && a->dev == b->dev &&
	       a->inode == b->inode && a->path_hash == b->path_hash;
}

/* Set by mt_namecache_lock_down(): no mapping is made after it. */
static _Atomic int locked;

void mt_namecache_lock_down(void)
{
	mt_namecache_fork_prepare();
	atomic_store(&locked, 1);
}

void mt_namecache_fork_prepare(void)
{
	unsigned char *aligned, *none = NULL;

	if (atomic_load_explicit(&cache, memory_order_acquire) || atomic_load(&locked))
		return;
	aligned = mt_forkmap_make(CACHE_BYTES);
	if (!aligned)
		return;
	/* Two threads forking at once: one cache. */
	if (!atomic_compare_exchange_strong(&cache, &none, aligned))
		munmap(aligned, CACHE_BYTES);
}

void mt_namecache_fork_child(void)
{
	/* Written only when it changes: a page the child never writes is
	 * never copied. */
	if (found)
		found = 0;
	if (added)
		added = 0;
}

/* The entry of slot word w, if it is whole and key's. */
static const entry_t *entry_of(unsigned char *c, uint64_t w, const mt_namecache_key_t *key)
{
	uint64_t off = slot_off(w);
	const entry_t *e;

	if (off < TEXT_AT || off > CACHE_BYTES - sizeof(entry_t))
		return NULL;
	e = (const entry_t *)(c + off);
	return same_key(&e->key, key) ? e : NULL;
}

int mt_namecache_find(const mt_namecache_key_t *key, mt_symbol_info_t *info, char *symbol,
		      size_t cap)
{
	unsigned char *c = atomic_load_explicit(&cache, memory_order_acquire);
	uint64_t t = tag(key->ip);
	slot_t *s;
	unsigned h;

	if (!c || !cap)
		return 0;
	s = (slot_t *)c;
	h = home(key->ip);
	for (unsigned i = 0; i < PROBES; i++) {
		uint64_t w = atomic_load_explicit(&s[(h + i) % SLOTS], memory_order_acquire);
		const entry_t *e;
		size_t len;

		if (!w)
			return 0;
		if (slot_tag(w) != t || !(e = entry_of(c, w, key)))
			continue;
		info->has_symbol = e->has_symbol;
		info->offset = e->offset;
		info->build_id_len = e->build_id_len;
		memcpy(info->build_id, e->text, e->build_id_len);
		len = e->symbol_len < cap - 1 ? e->symbol_len : cap - 1;
		memcpy(symbol, e->text + e->build_id_len, len);
		symbol[len] = '\0';
		info->symbol_len = e->has_symbol ? len : 0;
		found++;
		return 1;
	}
	return 0;
}

/* Room for an entry of bytes: its offset, or 0 when the text is full. */
static uint64_t reserve(unsigned char *c, size_t bytes)
{
	uint32_t at = atomic_fetch_add_explicit(&head(c)->used, (uint32_t)bytes,
						memory_order_relaxed);

	if (at > CACHE_BYTES - TEXT_AT || bytes > CACHE_BYTES - TEXT_AT - at)
		return 0;
	return TEXT_AT + at;
}

void mt_namecache_add(const mt_namecache_key_t *key, const mt_symbol_info_t *info,
		      const char *symbol)
{
	unsigned char *c = atomic_load_explicit(&cache, memory_order_acquire);
	size_t slen = info->has_symbol ? info->symbol_len : 0, bytes;
	uint64_t t = tag(key->ip), off;
	slot_t *s;
	entry_t *e;
	unsigned h;

	if (!c || slen > UINT16_MAX || info->build_id_len > UINT8_MAX)
		return;
	s = (slot_t *)c;
	h = home(key->ip);
	for (unsigned i = 0; i < PROBES; i++) {
		slot_t *slot = &s[(h + i) % SLOTS];
		uint64_t w = atomic_load_explicit(slot, memory_order_acquire), none = 0;

		if (slot_tag(w) == t) {
			/* Kept already, or being kept by another process:
			 * one claim an address, whoever makes it. */
			if (!slot_off(w) || entry_of(c, w, key))
				return;
			continue;
		}
		if (w)
			continue;
		if (!atomic_compare_exchange_strong_explicit(slot, &none, t, memory_order_acq_rel,
							     memory_order_acquire)) {
			/* Taken meanwhile: look at it again. */
			i--;
			continue;
		}
		bytes = (sizeof(entry_t) + info->build_id_len + slen + 7) & ~(size_t)7;
		off = reserve(c, bytes);
		/* A claimed slot without an entry stays so: its address
		 * goes uncached. */
		if (!off)
			return;
		e = (entry_t *)(c + off);
		e->key = *key;
		e->offset = info->offset;
		e->symbol_len = (uint16_t)slen;
		e->has_symbol = (uint8_t)(info->has_symbol != 0);
		e->build_id_len = (uint8_t)info->build_id_len;
		e->pad = 0;
		memcpy(e->text, info->build_id, info->build_id_len);
		memcpy(e->text + info->build_id_len, symbol, slen);
		atomic_store_explicit(slot, t | off, memory_order_release);
		added++;
		return;
	}
}

void mt_namecache_counts(uint64_t *f, uint64_t *a)
{
	*f = found;
	*a = added;
}

void mt_namecache_reset(void)
{
	unsigned char *c = atomic_exchange(&cache, NULL);

	if (c)
		munmap(c, CACHE_BYTES);
	atomic_store(&locked, 0);
	found = added = 0;
}
