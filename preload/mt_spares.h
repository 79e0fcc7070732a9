/*
 * mt_spares: the per-thread mappings of threads that ended, kept for the
 * threads that start next.  A thread's unwind rules and stack cache are
 * some 240 KiB of its own mappings, made resident once it is busy; a
 * program that starts a thread for each piece of work (a server's thread
 * a connection) would map, fault in and unmap them again for every
 * thread, and read every unwind rule again.  A spare taken over keeps
 * what the ended thread filled in: the rules stay true for the same code,
 * and each module's checks of its generation say when they are not.
 *
 * Invariants:
 * - Holds at most MT_SPARES_MAX mappings a set; one given to a full set
 *   is unmapped.
 * - Never waits: the set is taken with a try-lock, so a thread that finds
 *   it held (another thread at it, or a forked child whose parent's other
 *   thread held it at the fork) maps or unmaps its own as if the set were
 *   empty or full.  Never allocates; its one system call is that munmap.
 */
#ifndef MT_SPARES_H
#define MT_SPARES_H

#include <stdatomic.h>
#include <stddef.h>

#define MT_SPARES_MAX 4

typedef struct {
	atomic_flag lock;
	unsigned n;
	void *v[MT_SPARES_MAX];
} mt_spares_t;

#define MT_SPARES_INIT { ATOMIC_FLAG_INIT, 0, { 0 } }

/* The mapping last put in s, taken out of it; NULL when s holds none (or
 * is held by another thread). */
void *mt_spares_take(mt_spares_t *s);

/* Keep the mapping p (len bytes) in s, or unmap it when s is full (or
 * held by another thread). */
void mt_spares_give(mt_spares_t *s, void *p, size_t len);

#endif
