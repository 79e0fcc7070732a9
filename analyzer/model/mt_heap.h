/*
 * mt_heap: the heap a trace describes, rebuilt event by event: allocators,
 * frames, stacks, live blocks, per-site and per-thread accounting, and the
 * totals of the summary row (format.md sections 3 and 4).
 *
 * Memory is proportional to live blocks plus unique stacks, frames,
 * allocators and threads, never to the number of events.  A live block
 * names its site and its thread by a 32-bit index, so a trace may declare
 * at most 2^32 - 2 stacks and use as many thread ids; one more is
 * MT_ENOMEM, as it would be long before on any machine (each costs tens of
 * bytes of tables).
 *
 * Invariants, checked by the tests: live_bytes == bytes_allocated -
 * bytes_freed, for the totals, each allocator and each site;
 * peak_live_bytes >= live_bytes; the sites' mt_heap_site_at_peak() sum
 * to peak_live_bytes, their temporary_allocations to the total's, and
 * their mt_heap_site_calls() to allocations + resizes + remaps; an
 * event the heap rejects (unknown allocator, stack or frame, an id
 * declared twice) changes nothing.
 */
#ifndef MT_HEAP_H
#define MT_HEAP_H

#include <stdint.h>

#include "../model/mt_blocks.h"
#include "../model/mt_sampling.h"
#include "../base/mt_map.h"
#include "../parse/mt_parse.h"

/* One cache line: every block event updates its block's site, among a
 * few thousand, and the heap keeps them in one array of lines.  A site's
 * bytes freed are bytes_allocated - live_bytes. */
typedef struct {
	uint64_t allocations;
	uint64_t bytes_allocated;
	uint64_t live_allocations;
	uint64_t live_bytes;
	uint64_t peak_live_bytes;
	uint64_t temporary_allocations; /* its blocks freed while temporary */
	/* Its live bytes when the heap reached its peak_epoch-th global peak,
	 * saved the first time the site changes after that peak; read it
	 * with mt_heap_site_at_peak(). */
	uint64_t at_peak, peak_epoch;
} mt_site_t;
_Static_assert(sizeof(mt_site_t) == 64, "a site is one cache line");

#define MT_HEAP_TID_CACHE 8 /* a power of two */

typedef struct {
	uint64_t tid;
	uint32_t index; /* 0: empty */
} mt_heap_tid_entry_t;

struct mt_allocator;

/* A thread's last allocation: the block at ptr of allocator (NULL
 * before the first). */
typedef struct {
	const struct mt_allocator *allocator;
	uint64_t ptr;
} mt_heap_last_t;

typedef struct {
	uint64_t ip, offset, module_offset;
	unsigned has; /* MT_HAS_SYMBOL, _OFFSET, _MODULE, _MODULE_OFFSET */
	char *symbol;
	char *module;
	char *build_id; /* the module's, hex; NULL when the trace has none */
} mt_frame_t;

typedef struct {
	uint64_t id;
	uint32_t site_index; /* its site in the heap's sites, from 1 */
	size_t nframes;
	uint64_t frames[]; /* frame ids, innermost first */
} mt_stack_t;

typedef struct mt_allocator {
	uint64_t id;
	char *name; /* NULL when the trace gave none */
	uint64_t allocations, frees, resizes, remaps;
	uint64_t live_bytes, peak_live_bytes;
	mt_blocks_t blocks; /* its live blocks */
	/* Not the allocator only_allocator names: its block events are
	 * checked and then left out of every figure. */
	int skipped;
} mt_allocator_t;

/* Stack ids below this always go to the heap's dense table. */
#define MT_HEAP_DENSE_MIN 4096

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
	/* trace.start's sample_bytes (0: not sampled): every count and byte
	 * figure of allocator 0 is then an estimate, each block weighed as
	 * format.md 2.1 says (mt_heap_weight_bytes()).  Set before any block
	 * event. */
	uint64_t sample_bytes;
	/* In a sampled trace, the estimated variance of each estimate above
	 * (mt_sampling: the terms of the recorded blocks each sums), the
	 * peaks' as they stood when each peak was first reached; all 0
	 * when the trace is not sampled. */
	struct {
		mt_sampling_var_t allocations, frees, resizes, remaps;
		mt_sampling_var_t bytes_allocated, bytes_freed;
		mt_sampling_var_t live_allocations, live_bytes;
		mt_sampling_var_t peak_live_bytes, peak_live_allocations;
	} var;

	mt_map_t allocators; /* id -> mt_allocator_t * */
	/* NULL: every allocator's blocks count.  Else, set before the first
	 * event, the name (mt_heap_allocator_name()) of the allocators whose
	 * blocks alone count: the others' block events are judged as ever
	 * (an event that names an undeclared allocator or stack is still
	 * rejected) and change nothing but events, threads and duration_ns. */
	const char *only_allocator;
	mt_map_t frames;     /* id -> mt_frame_t */
	mt_map_t stacks;     /* id -> mt_stack_t * */
	/* tid -> its thread index (uint32_t), from 1 in the order first
	 * seen; a live block keeps its thread's index, not its tid. */
	mt_map_t threads;
	/* By thread index: where the thread made its last allocation
	 * (element 0 unused); no_tid_last for events without a tid. */
	mt_heap_last_t *thread_last;
	size_t thread_cap;
	mt_site_t no_stack;  /* allocations without a stack: site 0 */
	/* By site index: each declared stack's site, in one array of cache
	 * lines (mt_mem_calloc_line(); element 0 unused: site 0 is no_stack).
	 * A live block keeps its site's index.  The array moves when a
	 * stack is declared: hold no site pointer across that. */
	mt_site_t *sites;
	size_t nsites, sites_cap;
	/* By site index, as sites (element 0 unused): the resizes and
	 * remaps of live blocks made from each site, for
	 * mt_heap_site_calls().  Not in mt_site_t: a site is one full cache
	 * line that every alloc and free touches, and only a realloc
	 * touches this. */
	uint64_t *site_reallocs;
	size_t site_reallocs_cap;
	uint64_t no_stack_reallocs; /* site 0's */
	/* By site index, as site_reallocs: the variances of each site's
	 * live_bytes and live_allocations in a sampled trace
	 * (mt_heap_site_live_var()). */
	mt_sampling_block_t *site_live_var;
	size_t site_live_var_cap;
	mt_sampling_block_t no_stack_live_var; /* site 0's */
	uint64_t serial; /* the allocations so far: a sampled block's hash */
	mt_heap_last_t no_tid_last;
	mt_allocator_t *last_allocator; /* lookup cache */
	/* Lookup cache of threads, direct-mapped by the tid's low bits:
	 * threads interleave (two busy ones alternate event by event), and
	 * a process's tids are mostly consecutive numbers.  Index 0 is an
	 * empty entry. */
	mt_heap_tid_entry_t tid_cache[MT_HEAP_TID_CACHE];
	/* Site index by stack id, for ids a producer numbers densely from 1
	 * as the preload does: one load where the stacks map would take a
	 * hashed probe and a miss in a stack's own allocation.  0: not here
	 * (ask the map).  Fewer than 2 * (2 * nsites + MT_HEAP_DENSE_MIN)
	 * entries: an id goes here only below 2 * nsites + MT_HEAP_DENSE_MIN
	 * when it is declared, and the table doubles. */
	uint32_t *stack_dense;
	size_t dense_cap;
	/* The threads of the processes added by mt_heap_add_process(). */
	uint64_t added_threads;
} mt_heap_t;

/* Returned by mt_heap_apply() for an event that names what the trace never
 * declared, or declares an id twice; *why says which. */
#define MT_HEAP_REJECTED 1

void mt_heap_init(mt_heap_t *h);
void mt_heap_release(mt_heap_t *h);

/* Apply one valid event.  Returns MT_OK, MT_HEAP_REJECTED (the heap
 * unchanged, *why and *field set), or MT_ENOMEM (the heap unchanged: an
 * event allocates what it needs before it changes anything). */
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

/* A declared stack's site. */
static inline mt_site_t *mt_heap_stack_site(const mt_heap_t *h,
					    const mt_stack_t *s)
{
	return &h->sites[s->site_index];
}

/*
 * A site's calls, as heaptrack counts them: its allocations, and the
 * resizes and remaps of live blocks made from it (the site the block is
 * in after the realloc: the realloc's own stack, else the block's).  The
 * summary rows count alloc events only (a site's `allocations`); the
 * report, flamegraph, gate and diff count calls.  stack is NULL for
 * site 0, the allocations without a stack.
 */
uint64_t mt_heap_site_calls(const mt_heap_t *h, const mt_stack_t *stack);

/* What a recorded block of the C library's allocator, of size bytes,
 * counts for in the figures (a program's own allocators, memtrace.h, are
 * recorded whole: theirs count for themselves): its bytes, and its number
 * of blocks (rounded up or down by a hash of the
 * serial the heap gave the block, so that on average it is the exact
 * weight); size and 1 unless the trace is sampled. */
uint64_t mt_heap_weight_bytes(const mt_heap_t *h, uint64_t size);
uint64_t mt_heap_weight_count(const mt_heap_t *h, uint64_t size, uint64_t serial);

/* The blocks a live block b of a counts for: 1, unless the trace is
 * sampled and a is the C library's allocator. */
uint64_t mt_heap_block_count(const mt_heap_t *h, const mt_allocator_t *a,
			     const mt_block_t *b);

/* An allocator's name: the trace's, "libc" for id 0 when the trace gave
 * none (the summary's by_allocator says so), else NULL. */
const char *mt_heap_allocator_name(const mt_allocator_t *a);

/* Whether the trace declared an allocator of that name. */
int mt_heap_has_allocator(const mt_heap_t *h, const char *name);

/* The number of distinct thread ids seen (with the threads of the
 * processes added, mt_heap_add_process()). */
uint64_t mt_heap_threads(const mt_heap_t *h);

/*
 * Add the totals of another process's heap (from) to h's, so that h's
 * summary line covers a process tree: every count and byte figure is the
 * sum of the processes', threads too; peak_live_bytes and
 * peak_live_allocations are the sums of each process's own peak (the
 * traces share no clock to find the tree's moment of peak); duration_ns
 * is the longest; peak_seq and sample_bytes stay h's (a seq is one
 * trace's line number).  Each allocator of from is added to h's of the
 * same id, or added as it is.  The sites and blocks stay h's own, so
 * after it the sites no longer add up to the totals: for a summary line,
 * not for per-site views.  MT_OK or MT_ENOMEM (h then unchanged in its
 * allocators but possibly its totals: release it).
 */
int mt_heap_add_process(mt_heap_t *h, const mt_heap_t *from);

/* The estimated variances of a site's live_bytes and live_allocations
 * (0 unless the trace is sampled); stack is NULL for site 0. */
mt_sampling_block_t mt_heap_site_live_var(const mt_heap_t *h,
					  const mt_stack_t *stack);

/* A site's live bytes at the moment of the global peak (peak_seq): its
 * contribution to peak_live_bytes, which the sites' contributions sum to. */
uint64_t mt_heap_site_at_peak(const mt_heap_t *h, const mt_site_t *s);

#endif
