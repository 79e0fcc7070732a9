/*
 * mt_namecache: the names of code addresses, shared by a process and every
 * child it forks, so that a child names a frame its parent or a sibling
 * named already without reading the module's file again.
 *
 * A shell, make or a test runner forks child after child that runs the
 * same code between fork and exec, and each child's trace declares its
 * frames anew.  Naming one reads the module's symbol index, string table
 * and headers, pages the child has never touched: in a guest that shadows
 * page tables each costs microseconds, whatever the kernel did at fork.
 * The cache is one shared anonymous mapping (64 KiB, one fault-around
 * window) made at the process's first fork, so a process that never forks
 * pays nothing; a child inherits it with the rest of its memory, reads it
 * and adds to it.  An exec'd image starts without one.
 *
 * Invariants:
 * - An entry answers only for the same address in the same module file
 *   (device and inode, path hash) at the same load bias: a child that
 *   loaded another file where a sibling had one misses, never gets the
 *   sibling's name.  The name is then the same one mt_symbol would give,
 *   which depends on nothing else.
 * - Lock-free across processes: a slot is claimed by compare-and-swap of
 *   its address, its entry written, and the entry's offset stored last; a
 *   reader takes a slot only once that offset is there.  A process killed
 *   in between leaves its slot claimed and empty, and that address
 *   uncached: never a wrong or half-written name.
 * - Bounded: when the table or its text is full, nothing more is added.
 * - Never allocates, never blocks, holds no descriptor.
 */
#ifndef MT_NAMECACHE_H
#define MT_NAMECACHE_H

#include <stddef.h>
#include <stdint.h>

#include "mt_symbol.h"

/* What a name is kept for: the address and its module's identity. */
typedef struct {
	uint64_t ip;
	uint64_t bias;
	uint64_t dev, inode;
	uint64_t path_hash;
} mt_namecache_key_t;

/* Make the cache before a fork, unless there is one (the process's own,
 * or one inherited).  Without memory for it, forks go without. */
void mt_namecache_fork_prepare(void);

/* The program is about to install a seccomp filter: the cache is made
 * now, unless there is one, and no mapping is made after (a filter may
 * refuse it, or kill the program for it). */
void mt_namecache_lock_down(void);

/* In a forked child: its counts (mt_namecache_counts) start at 0. */
void mt_namecache_fork_child(void);

/* The name kept for key: 1, with info's has_symbol, offset, symbol_len
 * and build id set and the symbol in symbol (cap bytes, truncated as
 * mt_symbol_resolve truncates it, NUL-terminated); 0 when there is none
 * (or no cache). */
int mt_namecache_find(const mt_namecache_key_t *key, mt_symbol_info_t *info, char *symbol,
		      size_t cap);

/* Keep what mt_symbol named key (info's symbol fields and build id, the
 * symbol of symbol_len bytes in symbol) for the processes sharing the
 * cache.  Does nothing when there is no cache, the key is kept already
 * (or being kept), or the cache is full. */
void mt_namecache_add(const mt_namecache_key_t *key, const mt_symbol_info_t *info,
		      const char *symbol);

/* For tests and MEMTRACE_STATS: names this process took from the cache,
 * and entries it added. */
void mt_namecache_counts(uint64_t *found, uint64_t *added);

/* For tests: forget the cache (unmapped; the next fork makes a new one),
 * the lock-down and this process's counts. */
void mt_namecache_reset(void);

#endif
