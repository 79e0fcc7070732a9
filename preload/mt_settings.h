/*
 * mt_settings: the preload's settings, each read from the value of its
 * MEMTRACE_* variable (the caller passes getenv()'s answer, NULL when
 * unset).  A value that does not parse says so once on stderr
 * ("memtrace: MEMTRACE_X is not ...: 'v'; using D") and gives the
 * default: a bad setting never stops the program, nor tracing.
 *
 * No function here reads or changes the environment, allocates, or keeps
 * state; they may run before main() and in a forked child.  Which
 * variables exist, and what they mean, is docs/preload.md's Environment
 * table.
 */
#ifndef MT_SETTINGS_H
#define MT_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

/* MEMTRACE_STACK_DEPTH: frames a stack keeps.  Unset or empty:
 * MT_TRACE_DEFAULT_DEPTH; not a non-negative number: that, said; above
 * MT_STACK_MAX_DEPTH: MT_STACK_MAX_DEPTH. */
int mt_settings_depth(const char *s);

/* MEMTRACE_RING_SLOTS: the ring's size in slots, a power of two from
 * MT_RING_MIN_SLOTS to MT_RING_MAX_SLOTS; unset, empty or anything else:
 * MT_RING_DEFAULT_SLOTS (said when it was set). */
uint64_t mt_settings_ring_slots(const char *s);

/* MEMTRACE_SAMPLE: the mean bytes between sampled allocations; 0 (every
 * allocation recorded) when unset, empty or not a number of bytes (said). */
uint64_t mt_settings_sample_bytes(const char *s);

/* MEMTRACE_FAIL_AT: the allocation call (from 1) made to fail; 0 (none)
 * when unset, empty, or not a plain decimal number (said). */
uint64_t mt_settings_fail_at(const char *s);

/* MEMTRACE_UNWIND: the unwinder, MT_UNWIND_* (mt_stack.h): "libunwind",
 * "fast" or "verify"; unset or empty: MT_UNWIND_DEFAULT; anything else:
 * that, said. */
int mt_settings_unwind(const char *s);

/* MEMTRACE_STATS: 1 when exactly "1", else 0. */
int mt_settings_stats(const char *s);

/* MEMTRACE_RECORD: the socket of memtrace record's collector into out
 * (cap bytes).  Returns 0 when unset or empty (each process starts its own
 * collector; out untouched), 1 when copied, -1 when it does not fit (said:
 * the program runs untraced). */
int mt_settings_record_socket(const char *s, char *out, size_t cap);

#endif
