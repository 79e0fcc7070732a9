/*
 * mt_heap: the heap a trace describes, rebuilt event by event: allocators,
 * frames, stacks, live blocks, per-site and per-thread accounting, and the
 * totals of the summary row (spec sections 3 and 4).
 *
 * Memory is proportional to live blocks plus unique stacks, frames,
 * allocators and threads, never to the number of events.
 *
 * Invariants, checked by the tests: live_bytes == bytes_allocated -
 * bytes_freed, for the totals, each allocator and each site;
 * peak_live_bytes >= live_bytes; the sites' mt_heap_site_at_peak() sum
 * to peak_live_bytes and their temporary_allocations to the total's; an
 * event the heap rejects (unknown allocator, stack or frame, an id
 * declared twice) changes nothing.
 */
#ifndef MT_HEAP_H
#define MT_HEAP_H

#include <stdint.h>

#include "mt_map.h"
#include "mt_parse.h"

typedef struct {
	uint64_t allocations;
	uint64_t bytes_allocated;
	uint64_t bytes_freed;
	uint64_t live_allocations;
	uint64_t live_bytes;
	uint64_t peak_live_bytes;
	uint64_t temporary_allocations; /* its blocks freed while temporary */
	/* Its live bytes when the heap reached its peak_epoch-th global peak,
	 * saved the first time the site changes after that peak; read it
	 * with mt_heap_site_at_peak(). */
	uint64_t at_peak, peak_epoch;
} mt_site_t;

typedef struct {
	uint64_t ip, offset, module_offset;
	unsigned has; /* MT_HAS_SYMBOL, _OFFSET, _MODULE, _MODULE_OFFSET */
	char *symbol;
	char *module;
} mt_frame_t;

typedef struct {
	uint64_t id;
	mt_site_t site;
	size_t nframes;
	uint64_t frames[]; /* frame ids, innermost first */
} mt_stack_t;

typedef struct {
	uint64_t id;
	char *name; /* NULL when the trace gave none */
	uint64_t allocations, frees, resizes, remaps;
	uint64_t live_bytes, peak_live_bytes;
	mt_map_t blocks; /* ptr -> mt_block (private) */
} mt_allocator_t;

/* Slots of the heap's site cache: a power of two. */
#define MT_HEAP_SITE_CACHE 1024

typedef struct {
	uint64_t events;
	uint64_t allocations, frees, resizes, remaps;
	uint64_t failed_allocations, unknown_frees, overlapping_allocs;
	uint64_t bytes_allocated, bytes_freed;
	uint64_t live_allocations, live_bytes;
	uint64_t peak_live_bytes, peak_live_allocations, peak_seq;
	uint64_t peak_epoch; /* how many times live bytes reached a new peak */
	uint64_t temporary_allocations;
	uint64_t duration_ns;

	mt_map_t allocators; /* id -> mt_allocator_t * */
	mt_map_t frames;     /* id -> mt_frame_t */
	mt_map_t stacks;     /* id -> mt_stack_t * */
	mt_map_t threads;    /* tid -> last allocation serial */
	mt_site_t no_stack;  /* allocations without a stack: site 0 */
	uint64_t serial;
	uint64_t no_tid_serial;
	mt_allocator_t *last_allocator; /* lookup cache */
	/* Lookup cache of the last thread: consecutive events mostly share
	 * it.  A NULL pointer is an empty cache. */
	uint64_t *last_thread;  /* threads' value for last_tid */
	uint64_t last_tid;
	/* Found sites by stack id, direct-mapped (slot: the id's low bits):
	 * allocations cycle through a few thousand stacks, and a slot costs
	 * a fraction of a lookup.  Stack 0 never goes here, so a zeroed slot
	 * is empty. */
	struct {
		uint64_t stack;
		mt_site_t *site;
	} site_cache[MT_HEAP_SITE_CACHE];
} mt_heap_t;

/* Returned by mt_heap_apply() for an event that names what the trace never
 * declared, or declares an id twice; *why says which. */
#define MT_HEAP_REJECTED 1

void mt_heap_init(mt_heap_t *h);
void mt_heap_release(mt_heap_t *h);

/* Apply one valid event.  Returns MT_OK, MT_HEAP_REJECTED (the heap
 * unchanged, *why and *field set), or MT_ENOMEM. */
int mt_heap_apply(mt_heap_t *h, const mt_event_t *ev, const char **why,
		  const char **field);

/* mt_heap_apply() for an event of a block kind (alloc, free, resize,
 * remap, alloc.fail), as the pass holds them: the same result and the same
 * changes, without the dispatch on the kind, except that *why and *field
 * are set only for MT_HEAP_REJECTED. */
int mt_heap_apply_block(mt_heap_t *h, const mt_event_t *ev, const char **why,
			const char **field);

/* A hint that ev will be applied soon: prefetch the live-block slots it
 * will look up.  Changes nothing; any event may be passed. */
void mt_heap_prefetch(const mt_heap_t *h, const mt_event_t *ev);

/* The number of distinct thread ids seen. */
uint64_t mt_heap_threads(const mt_heap_t *h);

/* A site's live bytes at the moment of the global peak (peak_seq): its
 * contribution to peak_live_bytes, which the sites' contributions sum to. */
uint64_t mt_heap_site_at_peak(const mt_heap_t *h, const mt_site_t *s);

#endif
