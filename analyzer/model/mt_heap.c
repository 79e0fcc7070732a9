/*
 * mt_heap: replays a trace's events onto tables of live blocks, stacks and
 * frames.  It must check everything an event refers to before changing
 * anything, so a rejected event leaves no trace, and must never keep
 * per-event state.
 */
#include "../model/mt_heap.h"

#include <math.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../model/mt_sampling.h"

/* The most stacks, and thread ids, a trace may have: a live block names
 * each by a 32-bit index from 1. */
#define MAX_INDEX (UINT32_MAX - 1)

/*
 * A sampled trace's weights (format.md 2.1): a recorded block of size s
 * stands for w = 1 / (1 - exp(-s/B)) blocks and s * w bytes; in a trace
 * that is not sampled, for itself.  Bytes are rounded to the nearest
 * integer (off by half a byte in at least s).  Blocks are rounded down or
 * up, up with the probability of w's fraction, chosen by a hash of the
 * block's serial: rounding to the nearest would count a block of size B
 * (w = 1.58) as 2, a quarter too many, where this adds no bias.  A block
 * keeps which way it was rounded (mt_block_t's up bit), so that what its
 * free takes back is what its alloc added.  Past 40 B the weight is 1 to
 * within 2^-57.
 */
typedef struct {
	uint64_t bytes, count;
} weight_t;

/* Whether the sampled block of size bytes made by the heap's serial-th
 * allocation counts for w's whole part plus one: with the probability of
 * w's fraction. */
static __attribute__((noinline)) unsigned sampled_up(uint64_t mean, uint64_t size,
						     uint64_t serial)
{
	double p = mt_sampling_chance(mean, size), w;
	uint64_t x = serial + 0x9e3779b97f4a7c15ull;

	if (p >= 1.0)
		return 0;
	w = 1.0 / p;
	/* splitmix64's finalizer: a uniform 53-bit fraction of the serial. */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (double)(x >> 11) * 0x1p-53 < w - floor(w);
}

/* The weight of a sampled block of size bytes, its count rounded up
 * when up is 1 (sampled_up()), down when 0. */
static __attribute__((noinline)) weight_t sampled_weight(uint64_t mean, uint64_t size,
							 unsigned up)
{
	double p = mt_sampling_chance(mean, size), w;

	if (p >= 1.0)
		return (weight_t){ size, 1 };
	w = 1.0 / p;
	return (weight_t){ (uint64_t)llround(w * (double)size),
			   (uint64_t)floor(w) + up };
}

/* The sampling mean of a's blocks: the trace's for the C library's
 * allocator; 0 for a program's own allocators (memtrace.h), whose blocks
 * the preload records whole. */
static inline uint64_t mean_of(const mt_heap_t *h, const mt_allocator_t *a)
{
	return a->id ? 0 : h->sample_bytes;
}

/* What a block of a, of size bytes, rounded up or not, counts for. */
static inline weight_t weigh(const mt_heap_t *h, const mt_allocator_t *a,
			     uint64_t size, unsigned up)
{
	return __builtin_expect(!mean_of(h, a), 1) ? (weight_t){ size, 1 } :
	       sampled_weight(h->sample_bytes, size, up);
}

uint64_t mt_heap_weight_bytes(const mt_heap_t *h, uint64_t size)
{
	return h->sample_bytes ? sampled_weight(h->sample_bytes, size, 0).bytes : size;
}

uint64_t mt_heap_weight_count(const mt_heap_t *h, uint64_t size, uint64_t serial)
{
	return h->sample_bytes ?
	       sampled_weight(h->sample_bytes, size,
			      sampled_up(h->sample_bytes, size, serial)).count : 1;
}

uint64_t mt_heap_block_count(const mt_heap_t *h, const mt_allocator_t *a,
			     const mt_block_t *b)
{
	return weigh(h, a, b->size, b->up).count;
}

void mt_heap_init(mt_heap_t *h)
{
	memset(h, 0, sizeof(*h));
	mt_map_init(&h->allocators, sizeof(mt_allocator_t *));
	mt_map_init(&h->frames, sizeof(mt_frame_t));
	mt_map_init(&h->stacks, sizeof(mt_stack_t *));
	mt_map_init(&h->threads, sizeof(uint32_t));
}

void mt_heap_release(mt_heap_t *h)
{
	size_t pos = 0;
	uint64_t key;
	void *v;

	while (mt_map_iter(&h->allocators, &pos, &key, &v)) {
		mt_allocator_t *a = *(mt_allocator_t **)v;

		mt_blocks_release(&a->blocks);
		mt_mem_free(a->name);
		mt_mem_free(a);
	}
	pos = 0;
	while (mt_map_iter(&h->frames, &pos, &key, &v)) {
		mt_frame_t *f = v;

		mt_mem_free(f->symbol);
		mt_mem_free(f->module);
		mt_mem_free(f->build_id);
	}
	pos = 0;
	while (mt_map_iter(&h->stacks, &pos, &key, &v))
		mt_mem_free(*(mt_stack_t **)v);
	mt_map_release(&h->allocators);
	mt_map_release(&h->frames);
	mt_map_release(&h->stacks);
	mt_map_release(&h->threads);
	mt_mem_free(h->thread_last);
	mt_mem_free_line(h->sites);
	mt_mem_free(h->site_reallocs);
	mt_mem_free(h->site_live_var);
	mt_mem_free(h->stack_dense);
	mt_heap_init(h);
}

uint64_t mt_heap_threads(const mt_heap_t *h)
{
	return mt_map_count(&h->threads) + h->added_threads;
}


static mt_allocator_t *find_allocator(mt_heap_t *h, uint64_t id)
{
	void *v;

	if (h->last_allocator && h->last_allocator->id == id)
		return h->last_allocator;
	v = mt_map_find(&h->allocators, id);
	if (!v)
		return NULL;
	h->last_allocator = *(mt_allocator_t **)v;
	return h->last_allocator;
}

/* The site of a site index: a block's. */
static inline mt_site_t *site_at(mt_heap_t *h, uint32_t index)
{
	return index ? &h->sites[index] : &h->no_stack;
}

/* The realloc count of a site index, as site_at(). */
static inline uint64_t *reallocs_at(mt_heap_t *h, uint32_t index)
{
	return index ? &h->site_reallocs[index] : &h->no_stack_reallocs;
}

/* The live variance of a site index, as site_at(). */
static inline mt_sampling_block_t *live_var_at(mt_heap_t *h, uint32_t index)
{
	return index ? &h->site_live_var[index] : &h->no_stack_live_var;
}

mt_sampling_block_t mt_heap_site_live_var(const mt_heap_t *h,
					  const mt_stack_t *stack)
{
	return stack ? h->site_live_var[stack->site_index] : h->no_stack_live_var;
}

uint64_t mt_heap_site_calls(const mt_heap_t *h, const mt_stack_t *stack)
{
	if (!stack)
		return h->no_stack.allocations + h->no_stack_reallocs;
	return mt_heap_stack_site(h, stack)->allocations +
	       h->site_reallocs[stack->site_index];
}

/* The site of a stack id, or NULL when it was never declared; *index is
 * the site's index (0 for no stack).  The dense table first: stacks are
 * never removed, so an index found there stays right. */
static inline mt_site_t *find_site(mt_heap_t *h, uint64_t stack,
				   uint32_t *index)
{
	void *v;

	if (!stack) {
		*index = 0;
		return &h->no_stack;
	}
	if (stack < h->dense_cap && h->stack_dense[stack]) {
		*index = h->stack_dense[stack];
		return &h->sites[*index];
	}
	v = mt_map_find(&h->stacks, stack);
	if (!v) {
		*index = 0;
		return NULL;
	}
	*index = (*(mt_stack_t **)v)->site_index;
	return &h->sites[*index];
}

/* The capacity an array of cap elements grows to, doubling from 64, to
 * hold element n (n >= cap). */
static size_t grown_cap(size_t cap, size_t n)
{
	size_t want = cap ? cap : 64;

	while (want <= n)
		want *= 2;
	return want;
}

/* The array p (of *cap elements of size bytes) with room for element n:
 * itself, or grown by doubling and zero-filled, *cap updated.  NULL when
 * that fails, p and *cap unchanged. */
static void *reserve(void *p, size_t *cap, size_t size, size_t n)
{
	size_t want;
	unsigned char *grown;

	if (n < *cap)
		return p;
	want = grown_cap(*cap, n);
	grown = mt_mem_realloc(p, want * size);
	if (!grown)
		return NULL;
	memset(grown + *cap * size, 0, (want - *cap) * size);
	*cap = want;
	return grown;
}

/* The cache entry tid may sit in. */
static inline mt_heap_tid_entry_t *tid_entry(mt_heap_t *h, uint64_t tid)
{
	return &h->tid_cache[tid & (MT_HEAP_TID_CACHE - 1)];
}

/* thread_index() for a tid the cache does not hold. */
static __attribute__((noinline)) int thread_lookup(mt_heap_t *h, uint64_t tid,
						   uint32_t *index, int *created)
{
	size_t n = mt_map_count(&h->threads);
	mt_heap_tid_entry_t *e;
	int rc;
	void *v;

	/* Room for a new thread's last allocation first, so a failure
	 * leaves the tables as they were. */
	if (n >= MAX_INDEX)
		return MT_ENOMEM;
	v = reserve(h->thread_last, &h->thread_cap, sizeof(mt_heap_last_t), n + 1);
	if (!v)
		return MT_ENOMEM;
	h->thread_last = v;
	rc = mt_map_upsert(&h->threads, tid, &v, created);
	if (rc)
		return rc;
	if (*created) {
		*(uint32_t *)v = (uint32_t)(n + 1);
		h->thread_last[n + 1] = (mt_heap_last_t){ 0 };
	}
	e = tid_entry(h, tid);
	e->tid = tid;
	e->index = *index = *(uint32_t *)v;
	return MT_OK;
}

/*
 * The thread index of tid, given one when new (*created says so); the
 * event's first change, so that MT_ENOMEM here leaves the heap as it was,
 * and undone with thread_forget() when the event then fails.  The cache
 * holds a tid's index in its entry (tid_cache); an index never changes
 * once an event has kept it.
 */
static inline __attribute__((always_inline)) int
thread_index(mt_heap_t *h, uint64_t tid, uint32_t *index, int *created)
{
	const mt_heap_tid_entry_t *e = tid_entry(h, tid);

	if (e->index && e->tid == tid) {
		*index = e->index;
		*created = 0;
		return MT_OK;
	}
	return thread_lookup(h, tid, index, created);
}

/* Take back the registration of a tid new to the failed event: the last
 * index given, so the next new tid gets it again. */
static void thread_forget(mt_heap_t *h, uint64_t tid)
{
	mt_map_remove(&h->threads, tid, NULL);
	tid_entry(h, tid)->index = 0;
}

/* Before a site's live bytes change: if the heap has reached a new peak
 * since the site last changed, its live bytes now are what they were at
 * that peak, so save them.  This keeps each site's share of the latest
 * peak exact at O(1) per event, without visiting every site at a peak. */
static void site_touch(const mt_heap_t *h, mt_site_t *s)
{
	if (s->peak_epoch != h->peak_epoch) {
		s->at_peak = s->live_bytes;
		s->peak_epoch = h->peak_epoch;
	}
}

uint64_t mt_heap_site_at_peak(const mt_heap_t *h, const mt_site_t *s)
{
	return s->peak_epoch == h->peak_epoch ? s->at_peak : s->live_bytes;
}

static void site_add(const mt_heap_t *h, mt_site_t *s, uint64_t size,
		     uint64_t count)
{
	site_touch(h, s);
	s->bytes_allocated += size;
	s->live_allocations += count;
	s->live_bytes += size;
	if (s->live_bytes > s->peak_live_bytes)
		s->peak_live_bytes = s->live_bytes;
}

static void site_sub(const mt_heap_t *h, mt_site_t *s, uint64_t size,
		     uint64_t count)
{
	site_touch(h, s);
	s->live_allocations -= count;
	s->live_bytes -= size;
}

/* A sampled block of size bytes is born in the site of index index: the
 * variances of the sums it joins grow by its terms (mt_sampling), and a
 * peak it made (of bytes, of blocks) keeps the variance it has now. */
static __attribute__((noinline)) void var_born(mt_heap_t *h, uint32_t index,
					       uint64_t size, int bytes_peak,
					       int blocks_peak)
{
	mt_sampling_block_t v = mt_sampling_block(h->sample_bytes, size);

	h->var.bytes_allocated += v.bytes;
	h->var.live_bytes += v.bytes;
	h->var.live_allocations += v.count;
	live_var_at(h, index)->bytes += v.bytes;
	live_var_at(h, index)->count += v.count;
	if (bytes_peak)
		h->var.peak_live_bytes = h->var.live_bytes;
	if (blocks_peak)
		h->var.peak_live_allocations = h->var.live_allocations;
}

/* A sampled block dies: what var_born() added to the live sums is taken
 * back, exactly (the terms are a function of the size alone). */
static __attribute__((noinline)) void var_died(mt_heap_t *h, uint32_t index,
					       uint64_t size)
{
	mt_sampling_block_t v = mt_sampling_block(h->sample_bytes, size);

	h->var.bytes_freed += v.bytes;
	h->var.live_bytes -= v.bytes;
	h->var.live_allocations -= v.count;
	live_var_at(h, index)->bytes -= v.bytes;
	live_var_at(h, index)->count -= v.count;
}

/* The term a sampled block of size bytes adds to a count's variance. */
static __attribute__((noinline)) mt_sampling_var_t var_count(const mt_heap_t *h,
							     uint64_t size)
{
	return mt_sampling_block(h->sample_bytes, size).count;
}

/* A block is born: the totals, its allocator and its site (of index
 * index) grow.  Returns the blocks it counts for (its weight). */
static inline __attribute__((always_inline)) uint64_t
born(mt_heap_t *h, mt_allocator_t *a, mt_site_t *site, uint32_t index,
     uint64_t block_size, unsigned up, uint64_t seq)
{
	weight_t w = weigh(h, a, block_size, up);
	uint64_t size = w.bytes, count = w.count, epoch = h->peak_epoch;
	int blocks_peak = 0;

	h->bytes_allocated += size;
	h->live_allocations += count;
	h->live_bytes += size;
	a->live_bytes += size;
	if (a->live_bytes > a->peak_live_bytes)
		a->peak_live_bytes = a->live_bytes;
	site_add(h, site, size, count);
	if (h->live_bytes > h->peak_live_bytes) {
		h->peak_live_bytes = h->live_bytes;
		h->peak_seq = seq;
		h->peak_epoch++;
	}
	if (h->live_allocations > h->peak_live_allocations) {
		h->peak_live_allocations = h->live_allocations;
		blocks_peak = 1;
	}
	/* In a sampled trace a peak keeps the variance of the moment, even
	 * when a program's own allocator made it: its blocks, recorded
	 * whole, add no term (a size of 0 adds none). */
	if (__builtin_expect(h->sample_bytes != 0, 0))
		var_born(h, index, mean_of(h, a) ? block_size : 0,
			 epoch != h->peak_epoch, blocks_peak);
	return count;
}

/* A block dies: everything born() added is taken back.  Returns the
 * blocks it counted for. */
static inline __attribute__((always_inline)) uint64_t
died(mt_heap_t *h, mt_allocator_t *a, const mt_block_t *b)
{
	mt_site_t *site = site_at(h, b->site);
	weight_t w = weigh(h, a, b->size, b->up);
	uint64_t size = w.bytes, count = w.count;

	h->bytes_freed += size;
	h->live_allocations -= count;
	h->live_bytes -= size;
	a->live_bytes -= size;
	/* A block's site was known when it was born (no_stack's address is
	 * stable while the heap applies events: the heap is never copied), so
	 * site is never NULL. */
	site_sub(h, site, size, count);
	if (__builtin_expect(mean_of(h, a) != 0, 0))
		var_died(h, b->site, b->size);
	return count;
}

/* Where the thread of index thread (0: the events without a tid) made
 * its last allocation. */
static inline mt_heap_last_t *last_of(mt_heap_t *h, uint32_t thread)
{
	return thread ? &h->thread_last[thread] : &h->no_tid_last;
}

/* Freed while temporary: its thread allocated nothing after it, so its
 * thread's last allocation is still the block at ptr of a (a later one
 * there would have replaced it). */
static inline int is_temporary(mt_heap_t *h, const mt_allocator_t *a,
			       uint64_t ptr, const mt_block_t *b)
{
	const mt_heap_last_t *last = last_of(h, b->thread);

	return last->allocator == a && last->ptr == ptr;
}

/* Make ptr a live block of a; an already live one is replaced.  The
 * caller made room with mt_blocks_reserve(), so the put cannot fail.
 * Returns the blocks the new one counts for. */
static inline __attribute__((always_inline)) uint64_t
insert_block(mt_heap_t *h, mt_allocator_t *a, const mt_event_t *ev,
	     uint64_t ptr, mt_site_t *site, uint32_t site_index,
	     uint32_t thread)
{
	mt_block_t b = { .size = ev->size, .site = site_index, .thread = thread },
		   old;
	uint64_t serial = ++h->serial;
	int replaced;

	if (__builtin_expect(mean_of(h, a) != 0, 0))
		b.up = sampled_up(h->sample_bytes, ev->size, serial);
	*last_of(h, thread) = (mt_heap_last_t){ a, ptr };
	mt_blocks_put(&a->blocks, ptr, &b, &old, &replaced);
	if (replaced) {
		h->overlapping_allocs++;
		died(h, a, &old);
	}
	return born(h, a, site, site_index, ev->size, b.up, ev->seq);
}

static int declare_allocator(mt_heap_t *h, const mt_event_t *ev,
			     const char **why)
{
	mt_allocator_t *a;
	void *v;
	int rc;

	if (mt_map_find(&h->allocators, ev->allocator_id)) {
		*why = "it declares an allocator_id already declared";
		return MT_HEAP_REJECTED;
	}
	a = mt_mem_calloc(1, sizeof(*a));
	if (!a)
		return MT_ENOMEM;
	a->id = ev->allocator_id;
	mt_blocks_init(&a->blocks);
	if (ev->has & MT_HAS_NAME) {
		a->name = mt_mem_strndup(ev->name, ev->name_len);
		if (!a->name)
			goto nomem;
	}
	if (h->only_allocator) {
		const char *name = mt_heap_allocator_name(a);

		a->skipped = !name || strcmp(name, h->only_allocator);
	}
	rc = mt_map_upsert(&h->allocators, ev->allocator_id, &v, NULL);
	if (rc)
		goto nomem;
	*(mt_allocator_t **)v = a;
	return MT_OK;
nomem:
	mt_mem_free(a->name);
	mt_mem_free(a);
	return MT_ENOMEM;
}

static int declare_frame(mt_heap_t *h, const mt_event_t *ev, const char **why)
{
	char *symbol = NULL, *module = NULL, *build_id = NULL;
	mt_frame_t *f;
	void *v;

	if (mt_map_find(&h->frames, ev->frame_id)) {
		*why = "it declares a frame_id already declared";
		return MT_HEAP_REJECTED;
	}
	if ((ev->has & MT_HAS_SYMBOL) &&
	    !(symbol = mt_mem_strndup(ev->symbol, ev->symbol_len)))
		goto nomem;
	if ((ev->has & MT_HAS_MODULE) &&
	    !(module = mt_mem_strndup(ev->module, ev->module_len)))
		goto nomem;
	if ((ev->has & MT_HAS_BUILD_ID) &&
	    !(build_id = mt_mem_strndup(ev->build_id, ev->build_id_len)))
		goto nomem;
	if (mt_map_upsert(&h->frames, ev->frame_id, &v, NULL))
		goto nomem;
	f = v;
	f->ip = ev->ip;
	f->offset = ev->offset;
	f->module_offset = ev->module_offset;
	f->has = ev->has & (MT_HAS_SYMBOL | MT_HAS_OFFSET | MT_HAS_MODULE |
			    MT_HAS_MODULE_OFFSET);
	f->symbol = symbol;
	f->module = module;
	f->build_id = build_id;
	return MT_OK;
nomem:
	mt_mem_free(symbol);
	mt_mem_free(module);
	mt_mem_free(build_id);
	return MT_ENOMEM;
}

/* Room in h->sites, h->site_reallocs and h->site_live_var for site n,
 * zeroed.  The sites are on cache lines, so they grow by copying rather
 * than by mt_mem_realloc().  MT_ENOMEM leaves the sites as they were
 * (the realloc counts and variances may have grown, which changes no
 * figure). */
static int reserve_sites(mt_heap_t *h, size_t n)
{
	size_t want;
	mt_site_t *grown;
	uint64_t *reallocs;
	mt_sampling_block_t *live_var;

	reallocs = reserve(h->site_reallocs, &h->site_reallocs_cap,
			   sizeof(uint64_t), n);
	if (!reallocs)
		return MT_ENOMEM;
	h->site_reallocs = reallocs;
	live_var = reserve(h->site_live_var, &h->site_live_var_cap,
			   sizeof(mt_sampling_block_t), n);
	if (!live_var)
		return MT_ENOMEM;
	h->site_live_var = live_var;
	if (n < h->sites_cap)
		return MT_OK;
	want = grown_cap(h->sites_cap, n);
	grown = mt_mem_calloc_line(want, sizeof(mt_site_t));
	if (!grown)
		return MT_ENOMEM;
	if (h->sites_cap)
		memcpy(grown, h->sites, h->sites_cap * sizeof(mt_site_t));
	mt_mem_free_line(h->sites);
	h->sites = grown;
	h->sites_cap = want;
	return MT_OK;
}

static int declare_stack(mt_heap_t *h, const mt_event_t *ev, const char **why)
{
	mt_stack_t *s;
	int dense;
	void *v;

	if (mt_map_find(&h->stacks, ev->stack_id)) {
		*why = "it declares a stack_id already declared";
		return MT_HEAP_REJECTED;
	}
	for (size_t i = 0; i < ev->nframes; i++)
		if (!mt_map_find(&h->frames, ev->frames[i])) {
			*why = "it names a frame id never declared";
			return MT_HEAP_REJECTED;
		}
	/* Room for its site first, so a failure leaves the tables as they
	 * were (a dense table grown but not written changes nothing). */
	if (h->nsites >= MAX_INDEX || reserve_sites(h, h->nsites + 1))
		return MT_ENOMEM;
	dense = ev->stack_id < 2 * (uint64_t)h->nsites + MT_HEAP_DENSE_MIN;
	if (dense) {
		v = reserve(h->stack_dense, &h->dense_cap, sizeof(uint32_t),
			    (size_t)ev->stack_id);
		if (!v)
			return MT_ENOMEM;
		h->stack_dense = v;
	}
	s = mt_mem_calloc(1, sizeof(*s) + ev->nframes * sizeof(uint64_t));
	if (!s)
		return MT_ENOMEM;
	s->id = ev->stack_id;
	s->site_index = (uint32_t)(h->nsites + 1);
	s->nframes = ev->nframes;
	if (ev->nframes)
		memcpy(s->frames, ev->frames, ev->nframes * sizeof(uint64_t));
	if (mt_map_upsert(&h->stacks, ev->stack_id, &v, NULL)) {
		mt_mem_free(s);
		return MT_ENOMEM;
	}
	*(mt_stack_t **)v = s;
	h->nsites++;
	if (dense)
		h->stack_dense[ev->stack_id] = s->site_index;
	return MT_OK;
}

/* free, resize and remap of a live block; alloc of a new one, by the
 * thread of index thread, in site (of index index) when the event has a
 * stack.  Nothing here can fail. */
/* A resize or remap counted, count times: a realloc is recorded as often
 * as its new block is sampled (format.md 2.1), so it weighs what that
 * block does. */
static inline void count_realloc(mt_heap_t *h, mt_allocator_t *a,
				 const mt_event_t *ev, uint64_t count)
{
	if (ev->kind == MT_KIND_RESIZE) {
		h->resizes += count;
		a->resizes += count;
		if (__builtin_expect(mean_of(h, a) != 0, 0))
			h->var.resizes += var_count(h, ev->size);
	} else {
		h->remaps += count;
		a->remaps += count;
		if (__builtin_expect(mean_of(h, a) != 0, 0))
			h->var.remaps += var_count(h, ev->size);
	}
}

static inline __attribute__((always_inline)) void
apply_block_event(mt_heap_t *h, mt_allocator_t *a, const mt_event_t *ev,
		  uint32_t thread, mt_site_t *site, uint32_t index)
{
	mt_block_t old;
	uint64_t count;
	int live, realloc_counts;

	if (ev->kind == MT_KIND_ALLOC) {
		count = insert_block(h, a, ev, ev->ptr, site, index, thread);
		h->allocations += count;
		a->allocations += count;
		site->allocations += count;
		if (__builtin_expect(mean_of(h, a) != 0, 0))
			h->var.allocations += var_count(h, ev->size);
		return;
	}

	live = mt_blocks_take(&a->blocks, ev->ptr, &old);
	if (ev->kind == MT_KIND_FREE) {
		if (!live) {
			h->unknown_frees++;
			return;
		}
		count = died(h, a, &old);
		h->frees += count;
		a->frees += count;
		if (__builtin_expect(mean_of(h, a) != 0, 0))
			h->var.frees += var_count(h, old.size);
		/* Whether a block was temporary depends on the allocations a
		 * sampled trace left out: there the figure stays 0 (format.md
		 * 2.1). */
		if (!h->sample_bytes && is_temporary(h, a, ev->ptr, &old)) {
			h->temporary_allocations += count;
			site_at(h, old.site)->temporary_allocations += count;
		}
		return;
	}
	/* In a sampled trace the resize or remap of a pointer not live is
	 * the realloc of a block sampling passed over, sampled at its new
	 * size (format.md 2.1): counted as one, not in unknown_frees. */
	realloc_counts = live || mean_of(h, a);
	if (live)
		died(h, a, &old);
	else if (!realloc_counts)
		h->unknown_frees++;
	/* The realloc that moves or keeps a block is an allocation of its
	 * thread; the block belongs to the realloc's stack when it has one
	 * (as heaptrack attributes it), else it keeps its site. */
	if (!(ev->has & MT_HAS_STACK)) {
		index = live ? old.site : 0;
		site = site_at(h, index);
	}
	count = insert_block(h, a, ev, ev->kind == MT_KIND_REMAP ? ev->new_ptr : ev->ptr,
			     site, index, thread);
	/* A resize or remap, and a call of the site the block now belongs
	 * to, as its bytes are; not when the pointer was not live, which the
	 * totals count in unknown_frees instead (but in a sampled trace). */
	if (realloc_counts) {
		count_realloc(h, a, ev, count);
		*reallocs_at(h, index) += count;
	}
}

void mt_heap_prefetch(const mt_heap_t *h, const mt_event_t *ev)
{
	const mt_allocator_t *a = h->last_allocator;

	/* A side effect the compiler must keep: a function whose only effect
	 * is a prefetch looks like one that does nothing, and a link-time-
	 * optimised build (-flto) deletes every call to it (mt_blocks.h). */
	__asm__ volatile("");

	/* Only the cached allocator: nearly every trace has one. */
	if (!a || a->id != ev->allocator_id)
		return;
	switch (ev->kind) {
	case MT_KIND_REMAP:
		mt_blocks_prefetch(&a->blocks, ev->new_ptr);
		/* fall through */
	case MT_KIND_ALLOC:
	case MT_KIND_FREE:
	case MT_KIND_RESIZE:
		mt_blocks_prefetch(&a->blocks, ev->ptr);
		break;
	default:
		return;
	}
	/* The site a new block will be counted in: a stack's own allocation,
	 * spread over the heap where the block table keeps evicting it. */
	if ((ev->has & MT_HAS_STACK) && ev->stack < h->dense_cap &&
	    h->stack_dense[ev->stack])
		__builtin_prefetch(&h->sites[h->stack_dense[ev->stack]]);
}

/* The checks and the changes of an event of a block kind (alloc, free,
 * resize, remap, alloc.fail), for both mt_heap_apply() and
 * mt_heap_apply_block(): inlined into each, so that the block events the
 * pass holds skip the dispatch on the kind. */
static inline __attribute__((always_inline)) int
apply_block_kind(mt_heap_t *h, const mt_event_t *ev, uint32_t thread,
		 const char **why, const char **field)
{
	mt_allocator_t *a = find_allocator(h, ev->allocator_id);
	mt_site_t *site = &h->no_stack;
	uint32_t index = 0;

	if (!a) {
		*why = "it names an allocator never declared";
		*field = "allocator_id";
		return MT_HEAP_REJECTED;
	}
	/* Its stack's site, found once for the check and the change.  Stack
	 * 0, which the parser never lets through, is no stack to the sites
	 * but an id like any other to declare. */
	if ((ev->has & MT_HAS_STACK) &&
	    (ev->stack ? !(site = find_site(h, ev->stack, &index)) :
			 !mt_map_find(&h->stacks, 0))) {
		*why = "it names a stack never declared";
		*field = "stack";
		return MT_HEAP_REJECTED;
	}
	if (__builtin_expect(a->skipped, 0))
		return MT_OK;
	/* Every sum of sizes is at most bytes_allocated: keeping that one
	 * below 2^64 keeps every total exact. */
	if (ev->kind != MT_KIND_FREE && ev->kind != MT_KIND_ALLOC_FAIL &&
	    ev->size > UINT64_MAX - h->bytes_allocated) {
		*why = "its size takes bytes_allocated beyond 2^64 - 1";
		*field = "size";
		return MT_HEAP_REJECTED;
	}
	if (ev->kind == MT_KIND_ALLOC_FAIL) {
		h->failed_allocations++;
		return MT_OK;
	}
	/* Room for the block a free does not need, so that nothing fails
	 * once the event has begun to change the heap (the free's take
	 * needs none; the others put one at most). */
	if (ev->kind != MT_KIND_FREE) {
		/* No site index is above nsites: a realloc without a stack
		 * keeps its block's. */
		mt_block_t widest = { .size = ev->size,
				      .site = (uint32_t)h->nsites,
				      .thread = thread };
		int rc = mt_blocks_reserve(&a->blocks, &widest);

		if (rc)
			return rc;
	}
	apply_block_event(h, a, ev, thread, site, index);
	return MT_OK;
}

/* What every event does first: its thread's index (0 for no tid), with
 * *created set when the tid is new to it. */
static inline __attribute__((always_inline)) int
apply_begin(mt_heap_t *h, const mt_event_t *ev, uint32_t *thread,
	    int *created)
{
	*thread = 0;
	*created = 0;
	if (!(ev->has & MT_HAS_TID))
		return MT_OK;
	return thread_index(h, ev->tid, thread, created);
}

/* What every event does last: applied (rc MT_OK), the totals every event
 * moves; rejected or out of memory, a tid it registered is taken back. */
static inline __attribute__((always_inline)) int
apply_end(mt_heap_t *h, const mt_event_t *ev, int rc, int created)
{
	if (rc) {
		if (created)
			thread_forget(h, ev->tid);
		return rc;
	}
	if (ev->has & MT_HAS_T)
		h->duration_ns = ev->t;
	h->events++;
	return MT_OK;
}

int mt_heap_apply(mt_heap_t *h, const mt_event_t *ev, const char **why,
		  const char **field)
{
	uint32_t thread;
	int created, rc;

	*why = NULL;
	*field = NULL;
	rc = apply_begin(h, ev, &thread, &created);
	if (rc)
		return rc;
	switch (ev->kind) {
	case MT_KIND_ALLOCATOR:
		rc = declare_allocator(h, ev, why);
		break;
	case MT_KIND_FRAME:
		rc = declare_frame(h, ev, why);
		break;
	case MT_KIND_STACK:
		rc = declare_stack(h, ev, why);
		break;
	case MT_KIND_ALLOC:
	case MT_KIND_FREE:
	case MT_KIND_RESIZE:
	case MT_KIND_REMAP:
	case MT_KIND_ALLOC_FAIL:
		rc = apply_block_kind(h, ev, thread, why, field);
		break;
	default:
		break;
	}
	return apply_end(h, ev, rc, created);
}

int mt_heap_apply_block(mt_heap_t *h, const mt_event_t *ev, const char **why,
			const char **field)
{
	uint32_t thread;
	int created;
	int rc = apply_begin(h, ev, &thread, &created);

	if (rc)
		return rc;
	rc = apply_block_kind(h, ev, thread, why, field);
	return apply_end(h, ev, rc, created);
}

const char *mt_heap_allocator_name(const mt_allocator_t *a)
{
	return a->name ? a->name : a->id == 0 ? "libc" : NULL;
}

int mt_heap_has_allocator(const mt_heap_t *h, const char *name)
{
	size_t pos = 0;
	uint64_t key;
	void *v;

	while (mt_map_iter(&h->allocators, &pos, &key, &v)) {
		const char *n = mt_heap_allocator_name(*(mt_allocator_t **)v);

		if (n && !strcmp(n, name))
			return 1;
	}
	return 0;
}

int mt_heap_add_process(mt_heap_t *h, const mt_heap_t *from)
{
	size_t pos = 0;
	uint64_t key;
	void *v;

	h->events += from->events;
	h->allocations += from->allocations;
	h->frees += from->frees;
	h->resizes += from->resizes;
	h->remaps += from->remaps;
	h->failed_allocations += from->failed_allocations;
	h->unknown_frees += from->unknown_frees;
	h->overlapping_allocs += from->overlapping_allocs;
	h->bytes_allocated += from->bytes_allocated;
	h->bytes_freed += from->bytes_freed;
	h->live_allocations += from->live_allocations;
	h->live_bytes += from->live_bytes;
	h->peak_live_bytes += from->peak_live_bytes;
	h->peak_live_allocations += from->peak_live_allocations;
	h->temporary_allocations += from->temporary_allocations;
	if (from->duration_ns > h->duration_ns)
		h->duration_ns = from->duration_ns;
	/* The processes are sampled independently: their variances add. */
	h->var.allocations += from->var.allocations;
	h->var.frees += from->var.frees;
	h->var.resizes += from->var.resizes;
	h->var.remaps += from->var.remaps;
	h->var.bytes_allocated += from->var.bytes_allocated;
	h->var.bytes_freed += from->var.bytes_freed;
	h->var.live_allocations += from->var.live_allocations;
	h->var.live_bytes += from->var.live_bytes;
	h->var.peak_live_bytes += from->var.peak_live_bytes;
	h->var.peak_live_allocations += from->var.peak_live_allocations;
	h->added_threads += mt_heap_threads(from);
	while (mt_map_iter(&from->allocators, &pos, &key, &v)) {
		const mt_allocator_t *f = *(mt_allocator_t **)v;
		mt_allocator_t *a = find_allocator(h, f->id);

		if (!a) {
			void *slot;

			if (!(a = mt_mem_calloc(1, sizeof(*a))))
				return MT_ENOMEM;
			a->id = f->id;
			mt_blocks_init(&a->blocks);
			a->skipped = f->skipped;
			if ((f->name && !(a->name = mt_mem_strndup(f->name, strlen(f->name)))) ||
			    mt_map_upsert(&h->allocators, f->id, &slot, NULL)) {
				mt_mem_free(a->name);
				mt_mem_free(a);
				return MT_ENOMEM;
			}
			*(mt_allocator_t **)slot = a;
		}
		if (!a->name && f->name && !(a->name = mt_mem_strndup(f->name, strlen(f->name))))
			return MT_ENOMEM;
		a->allocations += f->allocations;
		a->frees += f->frees;
		a->resizes += f->resizes;
		a->remaps += f->remaps;
		a->live_bytes += f->live_bytes;
		a->peak_live_bytes += f->peak_live_bytes;
	}
	return MT_OK;
}
