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
 * grown and a module's symbol index (written all over at once), a busy
 * thread's unwind rules and stack cache (likewise), the ring and arena a
 * step ahead of where they are written, and the preload's own variables
 * at start (mt_prefault_data() below).
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
#include <stdint.h>

/* At the start of a process (not after a fork: a child keeps its
 * parent's filters and verdict): off when a seccomp filter is in place.
 * Returns 1 when one is (or the kernel would not say), else 0. */
int mt_prefault_init(void);

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

/*
 * The tracer's own writable data (.data and .bss), at the start of a
 * process: a start writes to some eight of its pages, a fault each.
 * Those pages are made resident at once, all but the whole pages of the
 * arrays declared cold and a lone page between two of them or after the
 * last (the preload keeps them together, last: mt_layout.h): a big array
 * is touched a page or two at a time, or never (the module table, the
 * sampling bitmap), and made resident whole would cost more than its
 * faults; an array of a page that a start does not write (the clock's
 * anchors, the collector's path under record) would cost a page for
 * nothing.  Cold arrays that lie next to each other, at most 64 bytes
 * of alignment apart, count as one: an array with no whole page of its
 * own between two others is left cold with them.  MT_PREFAULT_COLD(array) after an array's definition
 * declares it, from a constructor that runs before the object's others
 * (priority 101); until those have run (a hook called from another
 * library's constructor first), mt_prefault_data() does nothing.
 */
#define MT_PREFAULT_COLD(var)                                                   \
	__attribute__((constructor(101))) static void mt_prefault_cold_##var(void) \
	{                                                                       \
		mt_prefault_cold(&(var), sizeof(var));                          \
	}

void mt_prefault_cold(const void *at, size_t len);
void mt_prefault_data(void);

/* For the tests: the ranges mt_prefault_data() makes resident, at most
 * max of them into out[] (start, end, page-aligned); returns how many. */
size_t mt_prefault_data_ranges(uintptr_t (*out)[2], size_t max);

#endif
