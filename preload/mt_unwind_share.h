/*
 * mt_unwind_share: unwind rules shared by a process and every child it
 * forks, so that a child walks code its parent never walked without
 * reading the rules again when a sibling has read them.
 *
 * A shell, make or a test runner forks child after child that allocates
 * from code the parent itself never allocates from (bash's child builds
 * the argument vector of the command it execs).  Each child's walk misses
 * its thread's rule table (mt_unwind_cache.c) there and reads the rules
 * from the module's .eh_frame: pages of the module and of the loader the
 * child has never touched, and a copy of the table's page the rule is
 * put on, each a fault in every child.  The table is one shared anonymous
 * mapping of 16 KiB made at the process's first fork, so that a process
 * that never forks pays nothing; a child inherits it, reads it and adds
 * to it.  An exec'd image starts without one.
 *
 * The table keeps opaque 8-byte rules by code address.  An address has
 * one rule in every process that shares the table only while the code
 * there is the code that was there when the table was made: so the
 * table holds only addresses inside the executable segments of the
 * objects loaded then (an object loaded since, perhaps where a sibling
 * loaded another, is not shared), and answers only a process whose count
 * of unloads (the caller's generation, which the dlclose hook moves) is
 * the one it was made in (an unload may have put other code at those
 * addresses).  A rule is added only where the loader's own count of
 * unloads, as the rule's read saw it, is still the one the table was
 * made with: glibc unloads some objects itself (iconv's modules), which
 * no hook sees, and a process that had one unloaded keeps what it reads
 * to itself.  A table is made once in a process's life; where the loader
 * gives no count of unloads, none is.
 *
 * Invariants:
 * - Lock-free across processes: a slot is claimed by compare-and-swap
 *   of its address word (0 -> MT_UNWIND_SHARE_CLAIMED), its rule
 *   written, and the address stored last; a reader takes a slot only
 *   once the address is there.  A process killed in between leaves the
 *   slot claimed, and the address it would have held unshared: never a
 *   wrong or half-written rule.
 * - Bounded: when the probes of an address find no free slot, nothing
 *   is added.
 * - Never allocates, never blocks, holds no descriptor; maps only in a
 *   fork's prepare step (never after mt_unwind_share_lock_down()).
 */
#ifndef MT_UNWIND_SHARE_H
#define MT_UNWIND_SHARE_H

#include <stdint.h>

/* Before a fork: make the table unless this process has one made in
 * generation (its count of unloads), recording the executable segments
 * of the objects loaded now (dl_iterate_phdr: call outside the loader's
 * lock, as a fork's prepare step runs). */
void mt_unwind_share_fork_prepare(uint64_t generation);

/* The program is about to install a seccomp filter: no mapping is made
 * after (a filter may refuse it, or kill the program for it).  The table
 * there is, if any, is kept. */
void mt_unwind_share_lock_down(void);

/* In a forked child: its counts start at 0. */
void mt_unwind_share_fork_child(void);

/* The rule kept for ip, into *rule: 1, or 0 when there is none, no
 * table, ip is outside the objects the table was made for, or
 * generation is not the table's. */
int mt_unwind_share_find(uint64_t ip, uint64_t generation, uint64_t *rule);

/* Keep rule for ip for the processes sharing the table, on the same
 * terms as mt_unwind_share_find answers, where unloads (the loader's
 * dlpi_subs when the rule was read) is the table's. */
void mt_unwind_share_add(uint64_t ip, uint64_t generation, uint64_t unloads, uint64_t rule);

/* For tests and MEMTRACE_STATS: rules this process took from the table,
 * and rules it added. */
void mt_unwind_share_counts(uint64_t *found, uint64_t *added);

/* For tests: forget the table (unmapped; the next fork makes a new
 * one), the lock-down and this process's counts. */
void mt_unwind_share_reset(void);

#endif
