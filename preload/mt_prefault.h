/*
 * mt_prefault: the tracer's own memory made resident by one system call
 * for many pages, rather than by a page fault for each page it first
 * touches.  A fault costs a trap into the kernel; in a guest that pays a
 * hypervisor's exit for every trap (this project's CI machines: about 12
 * us a fault, 0.6 us a page populated), the faults on the tracer's tables,
 * rings and per-thread caches were most of what a short traced process
 * paid over its bare run.
 *
 * Used only where the memory is about to be touched anyway: a hash table
 * grown (its entries land everywhere in it), a thread's unwind rules and
 * stack cache (likewise), and the ring and arena a step ahead of where
 * they are written.
 *
 * Invariants:
 * - Never makes a system call a seccomp filter might punish: it is off in
 *   a process that had a filter when it started (prctl(PR_GET_SECCOMP)),
 *   and goes off for good before the program installs one
 *   (mt_prefault_stop(), called by the hooks that see it).
 * - A refusal (an old kernel without MADV_POPULATE_WRITE, a filter that
 *   answers with an error) turns it off; nothing else changes: the pages
 *   then fault in one at a time as before.
 * - Never allocates, takes no lock, keeps errno.
 */
#ifndef MT_PREFAULT_H
#define MT_PREFAULT_H

#include <stddef.h>

/* At the start of a process (not after a fork: a child keeps its
 * parent's filters and verdict): off when a seccomp filter is in place. */
void mt_prefault_init(void);

/* The program installs a seccomp filter: off from now on. */
void mt_prefault_stop(void);

/* MAP_POPULATE for an anonymous mapping the caller will touch all over,
 * or 0 when off. */
int mt_prefault_map_flags(void);

/* Make [start, start + len) resident and writable (MADV_POPULATE_WRITE);
 * start is rounded down and the end up to pages.  Does nothing when off. */
void mt_prefault_range(void *start, size_t len);

/* Whether it is on (for the tests). */
int mt_prefault_on(void);

#endif
