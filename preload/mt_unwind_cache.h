/*
 * mt_unwind_cache: an x86-64 stack walker that gives what libunwind's
 * unw_backtrace gives (each caller's return address, innermost
 * first), at a cost that does not grow with the part of the stack the
 * thread's previous walk already read.
 *
 * It handles the frames libunwind's own fast trace handles the same way:
 * the canonical frame address (CFA) is rsp or rbp plus a constant, the
 * return address is at CFA - 8, rbp is kept or saved at CFA plus a
 * constant; and the last frame (return address or rbp undefined).  Each
 * code address's rule is read once per thread from its module's
 * .eh_frame (through .eh_frame_hdr's table) and kept in a per-thread
 * table until a module is unloaded (mt_unwind_cache_forget).  The outer
 * part of the thread's previous walk is taken again from the first
 * frame whose registers (ip, rsp, rbp) are those the previous walk had
 * there, once every return-address and saved-rbp slot it read from
 * there outwards, as far as this walk keeps frames, still holds what it
 * read.
 *
 * For anything else (a signal frame, an expression, a module without
 * .eh_frame_hdr, an address without an FDE, a nested call from a signal
 * handler) it answers -1 and the caller asks libunwind.  It never writes
 * to the program's memory, never calls malloc (its per-thread memory is
 * mapped), holds no descriptor, and reads .eh_frame through
 * dl_iterate_phdr only on a rule's first use (the loader's lock, as
 * libunwind takes it).
 */
#ifndef MT_UNWIND_CACHE_H
#define MT_UNWIND_CACHE_H

#include <stdint.h>

/* Make the key that unmaps a thread's tables when it ends (once, at
 * start; later calls do nothing).  Without it, every walk answers -1.
 * enter and leave, when given, bracket each read of a rule from
 * .eh_frame, the one place a walk takes a lock (the loader's, in
 * dl_iterate_phdr): the caller's fork protocol counts it there. */
void mt_unwind_cache_init(void (*enter)(void), void (*leave)(void));

/* Modules may have been unloaded (called after a dlclose): if the
 * loader's count of unloads changed, every thread empties its rules and
 * its previous walk before its next walk, as code another module loads
 * at their addresses has rules of its own.  One dl_iterate_phdr.
 * Returns 1 when the count changed (or the loader gives none), 0 when
 * the dlclose only dropped a reference. */
int mt_unwind_cache_forget(void);

/* The rules read from .eh_frame so far, every thread's. */
uint64_t mt_unwind_cache_rules_read(void);

/* Before a fork (once the cache is in use): the table of rules the
 * process shares with the children it forks (mt_unwind_share.h), made
 * at the first fork. */
void mt_unwind_cache_fork_prepare(void);

/* In a forked child: its thread counts its walks anew (a thread of
 * fewer than a few walks keeps no shared rule in its own table). */
void mt_unwind_cache_fork_child(void);

/*
 * The stack from a frame: out[0] gets ra, out[1..) the return address
 * of each frame above it, at most max in all: what unw_backtrace gives,
 * past its first entry, in the function that returns to ra.  ra, sp and
 * bp are the frame's registers once that function returns: its return
 * address, its canonical frame address (the rsp it returns to) and the
 * rbp it restores.  Returns how many, or -1 when libunwind must do this
 * walk.
 */
int mt_unwind_cache_from(void **out, int max, uint64_t ra, uint64_t sp, uint64_t bp);

#endif
