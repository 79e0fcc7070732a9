/*
 * mt_api: the core of the allocators a program declares through
 * include/memtrace.h (format.md section 2.1): their table, their
 * declarations in the trace, and their block events ("fn":"api").  The
 * exported entry points are in mt_api_hooks.c; the Check tests drive
 * these directly.
 *
 * Invariants:
 * - An allocator is a name; the same name always gives the same id, ids
 *   count from 1 in the order names are first seen, and they stay the
 *   process's for its whole life (a forked child keeps them).  At most
 *   MT_API_MAX_ALLOCATORS names; a name is kept to its first
 *   MT_API_NAME_MAX bytes, so names alike in those are one allocator.
 * - Each trace declares an allocator (an "allocator" line with its id
 *   and name) once, before its first event in that trace: when it is
 *   first named, and again in a new trace (a forked child's), lazily,
 *   on its first event there.  The declaration is recorded under the
 *   table lock before the allocator is marked declared for the trace's
 *   generation (mt_stack_trace_generation()), so an event that finds it marked
 *   is reserved after it.
 * - Id 0 is no allocator: what mt_api_allocator() gives when tracing is
 *   off or the table is full; events of id 0 or of an id never given are
 *   ignored.  Nothing here allocates through malloc or changes errno.
 * - Every function must be called inside mt_trace_enter().
 */
#ifndef MT_API_H
#define MT_API_H

#include <stddef.h>
#include <stdint.h>

#define MT_API_MAX_ALLOCATORS 256
#define MT_API_NAME_MAX 255

/* The id of the allocator called name (NUL-terminated), declared in the
 * trace if it is not yet; 0 when there is none to give. */
uint32_t mt_api_allocator(const char *name);

/* Events of allocator id, each with the stack ips[0..n) its caller
 * captured (none for a free).  ptr NULL: nothing is recorded. */
void mt_api_alloc(uint32_t id, const void *ptr, size_t size,
		  const uint64_t *ips, int n);
void mt_api_free(uint32_t id, const void *ptr);
/* old_ptr NULL: an alloc of new_ptr; new_ptr NULL: a free of old_ptr
 * when size is 0, else nothing (a failed resize leaves the block as it
 * was); new_ptr == old_ptr: a resize; else a remap. */
void mt_api_realloc(uint32_t id, const void *old_ptr, const void *new_ptr,
		    size_t size, const uint64_t *ips, int n);

#endif
