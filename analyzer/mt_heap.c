/*
 * mt_heap: replays a trace's events onto tables of live blocks, stacks and
 * frames.  It must check everything an event refers to before changing
 * anything, so a rejected event leaves no trace, and must never keep
 * per-event state.
 */
#include "mt_heap.h"

#include <string.h>

#include "mt_error.h"
#include "mt_mem.h"

typedef struct {
	uint64_t size;
	/* Its site: a stack's, or no_stack.  A pointer, not the stack id,
	 * so that a free finds it without a lookup; stacks are never removed
	 * and each lives in its own allocation, so it stays valid. */
	mt_site_t *site;
	uint64_t serial; /* of the alloc, resize or remap that made it */
	uint64_t tid;
	int has_tid;
} mt_block_t;

void mt_heap_init(mt_heap_t *h)
{
	memset(h, 0, sizeof(*h));
	mt_map_init(&h->allocators, sizeof(mt_allocator_t *));
	mt_map_init(&h->frames, sizeof(mt_frame_t));
	mt_map_init(&h->stacks, sizeof(mt_stack_t *));
	mt_map_init(&h->threads, sizeof(uint64_t));
}

void mt_heap_release(mt_heap_t *h)
{
	size_t pos = 0;
	uint64_t key;
	void *v;

	while (mt_map_iter(&h->allocators, &pos, &key, &v)) {
		mt_allocator_t *a = *(mt_allocator_t **)v;

		mt_map_release(&a->blocks);
		mt_mem_free(a->name);
		mt_mem_free(a);
	}
	pos = 0;
	while (mt_map_iter(&h->frames, &pos, &key, &v)) {
		mt_frame_t *f = v;

		mt_mem_free(f->symbol);
		mt_mem_free(f->module);
	}
	pos = 0;
	while (mt_map_iter(&h->stacks, &pos, &key, &v))
		mt_mem_free(*(mt_stack_t **)v);
	mt_map_release(&h->allocators);
	mt_map_release(&h->frames);
	mt_map_release(&h->stacks);
	mt_map_release(&h->threads);
	mt_heap_init(h);
}

uint64_t mt_heap_threads(const mt_heap_t *h)
{
	return mt_map_count(&h->threads);
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

/* Stacks are never removed and each lives in its own allocation, so a
 * cached site stays valid; only found sites are cached. */
static mt_site_t *find_site(mt_heap_t *h, uint64_t stack)
{
	__typeof__(h->site_cache[0]) *c;
	void *v;

	if (!stack)
		return &h->no_stack;
	c = &h->site_cache[stack & (MT_HEAP_SITE_CACHE - 1)];
	if (c->stack == stack)
		return c->site;
	v = mt_map_find(&h->stacks, stack);
	if (!v)
		return NULL;
	c->stack = stack;
	c->site = &(*(mt_stack_t **)v)->site;
	return c->site;
}

/* find_site() with its cache, for the check of an event's stack; stack 0
 * means no stack to find_site(), so it asks the map. */
static int stack_declared(mt_heap_t *h, uint64_t stack)
{
	return stack ? find_site(h, stack) != NULL :
		       mt_map_find(&h->stacks, 0) != NULL;
}

/* The threads entry of tid, created when new.  The cached pointer stays
 * valid because threads changes only here, by upserts that refresh it. */
static int thread_entry(mt_heap_t *h, uint64_t tid, uint64_t **entry)
{
	void *v;
	int rc;

	if (!h->last_thread || h->last_tid != tid) {
		rc = mt_map_upsert(&h->threads, tid, &v, NULL);
		if (rc)
			return rc;
		h->last_thread = v;
		h->last_tid = tid;
	}
	*entry = h->last_thread;
	return MT_OK;
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

static void site_add(const mt_heap_t *h, mt_site_t *s, uint64_t size)
{
	site_touch(h, s);
	s->bytes_allocated += size;
	s->live_allocations++;
	s->live_bytes += size;
	if (s->live_bytes > s->peak_live_bytes)
		s->peak_live_bytes = s->live_bytes;
}

static void site_sub(const mt_heap_t *h, mt_site_t *s, uint64_t size)
{
	site_touch(h, s);
	s->bytes_freed += size;
	s->live_allocations--;
	s->live_bytes -= size;
}

/* A block is born: the totals, its allocator and its site grow. */
static inline __attribute__((always_inline)) void
born(mt_heap_t *h, mt_allocator_t *a, mt_site_t *site,
     uint64_t size, uint64_t seq)
{
	h->bytes_allocated += size;
	h->live_allocations++;
	h->live_bytes += size;
	a->live_bytes += size;
	if (a->live_bytes > a->peak_live_bytes)
		a->peak_live_bytes = a->live_bytes;
	site_add(h, site, size);
	if (h->live_bytes > h->peak_live_bytes) {
		h->peak_live_bytes = h->live_bytes;
		h->peak_seq = seq;
		h->peak_epoch++;
	}
	if (h->live_allocations > h->peak_live_allocations)
		h->peak_live_allocations = h->live_allocations;
}

/* A block dies: everything born() added is taken back. */
static inline __attribute__((always_inline)) void
died(mt_heap_t *h, mt_allocator_t *a, const mt_block_t *b)
{
	mt_site_t *site = b->site;

	h->bytes_freed += b->size;
	h->live_allocations--;
	h->live_bytes -= b->size;
	a->live_bytes -= b->size;
	/* A block's site was known when it was born (no_stack's address is
	 * stable while the heap applies events: the heap is never copied), so
	 * site is never NULL. */
	site_sub(h, site, b->size);
}

/* The serial of a new allocation by the event's thread. */
static inline __attribute__((always_inline)) int
next_serial(mt_heap_t *h, const mt_event_t *ev, uint64_t *serial)
{
	*serial = ++h->serial;
	if (ev->has & MT_HAS_TID) {
		uint64_t *last;
		int rc = thread_entry(h, ev->tid, &last);

		if (rc)
			return rc;
		*last = *serial;
	} else {
		h->no_tid_serial = *serial;
	}
	return MT_OK;
}

static int is_temporary(const mt_heap_t *h, const mt_block_t *b)
{
	const uint64_t *last;

	if (!b->has_tid)
		return h->no_tid_serial == b->serial;
	if (h->last_thread && h->last_tid == b->tid)
		return *h->last_thread == b->serial;
	last = mt_map_find(&h->threads, b->tid);
	return last && *last == b->serial;
}

/* Make ptr a live block of a; an already live one is replaced. */
static inline __attribute__((always_inline)) int
insert_block(mt_heap_t *h, mt_allocator_t *a, const mt_event_t *ev,
	     uint64_t ptr, mt_site_t *site, uint64_t serial)
{
	mt_block_t *b;
	void *v;
	int created, rc;

	rc = mt_map_upsert(&a->blocks, ptr, &v, &created);
	if (rc)
		return rc;
	b = v;
	if (!created) {
		h->overlapping_allocs++;
		died(h, a, b);
	}
	b->size = ev->size;
	b->site = site;
	b->serial = serial;
	b->tid = ev->tid;
	b->has_tid = (ev->has & MT_HAS_TID) != 0;
	born(h, a, site, ev->size, ev->seq);
	return MT_OK;
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
	mt_map_init(&a->blocks, sizeof(mt_block_t));
	if (ev->has & MT_HAS_NAME) {
		a->name = mt_mem_strndup(ev->name, ev->name_len);
		if (!a->name)
			goto nomem;
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
	char *symbol = NULL, *module = NULL;
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
	return MT_OK;
nomem:
	mt_mem_free(symbol);
	mt_mem_free(module);
	return MT_ENOMEM;
}

static int declare_stack(mt_heap_t *h, const mt_event_t *ev, const char **why)
{
	mt_stack_t *s;
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
	s = mt_mem_calloc(1, sizeof(*s) + ev->nframes * sizeof(uint64_t));
	if (!s)
		return MT_ENOMEM;
	s->id = ev->stack_id;
	s->nframes = ev->nframes;
	if (ev->nframes)
		memcpy(s->frames, ev->frames, ev->nframes * sizeof(uint64_t));
	if (mt_map_upsert(&h->stacks, ev->stack_id, &v, NULL)) {
		mt_mem_free(s);
		return MT_ENOMEM;
	}
	*(mt_stack_t **)v = s;
	return MT_OK;
}

/* free, resize and remap of a live block; alloc of a new one. */
static inline __attribute__((always_inline)) int
apply_block_event(mt_heap_t *h, mt_allocator_t *a,
		  const mt_event_t *ev)
{
	mt_block_t old;
	uint64_t serial;
	mt_site_t *site;
	int live;

	if (ev->kind == MT_KIND_ALLOC) {
		int rc = next_serial(h, ev, &serial);

		if (rc)
			return rc;
		site = find_site(h, (ev->has & MT_HAS_STACK) ? ev->stack : 0);
		h->allocations++;
		a->allocations++;
		site->allocations++;
		return insert_block(h, a, ev, ev->ptr, site, serial);
	}

	live = mt_map_remove(&a->blocks, ev->ptr, &old);
	if (!live)
		h->unknown_frees++;
	if (ev->kind == MT_KIND_FREE) {
		if (live) {
			h->frees++;
			a->frees++;
			if (is_temporary(h, &old)) {
				h->temporary_allocations++;
				old.site->temporary_allocations++;
			}
			died(h, a, &old);
		}
		return MT_OK;
	}
	if (live) {
		if (ev->kind == MT_KIND_RESIZE) {
			h->resizes++;
			a->resizes++;
		} else {
			h->remaps++;
			a->remaps++;
		}
		died(h, a, &old);
	}
	/* The realloc that moves or keeps a block is an allocation of its
	 * thread; the block belongs to the realloc's stack when it has one
	 * (as heaptrack attributes it), else it keeps its site. */
	site = (ev->has & MT_HAS_STACK) ? find_site(h, ev->stack) :
	       live ? old.site : &h->no_stack;
	{
		int rc = next_serial(h, ev, &serial);

		if (rc)
			return rc;
	}
	return insert_block(h, a, ev,
			    ev->kind == MT_KIND_REMAP ? ev->new_ptr : ev->ptr,
			    site, serial);
}

void mt_heap_prefetch(const mt_heap_t *h, const mt_event_t *ev)
{
	const mt_allocator_t *a = h->last_allocator;

	/* Only the cached allocator: nearly every trace has one. */
	if (!a || a->id != ev->allocator_id)
		return;
	switch (ev->kind) {
	case MT_KIND_REMAP:
		mt_map_prefetch(&a->blocks, ev->new_ptr);
		/* fall through */
	case MT_KIND_ALLOC:
	case MT_KIND_FREE:
	case MT_KIND_RESIZE:
		mt_map_prefetch(&a->blocks, ev->ptr);
		break;
	default:
		break;
	}
}

/* The checks and the changes of an event of a block kind (alloc, free,
 * resize, remap, alloc.fail), for both mt_heap_apply() and
 * mt_heap_apply_block(): inlined into each, so that the block events the
 * pass holds skip the dispatch on the kind. */
static inline __attribute__((always_inline)) int
apply_block_kind(mt_heap_t *h, const mt_event_t *ev, const char **why,
		 const char **field)
{
	mt_allocator_t *a = find_allocator(h, ev->allocator_id);

	if (!a) {
		*why = "it names an allocator never declared";
		*field = "allocator_id";
		return MT_HEAP_REJECTED;
	}
	if ((ev->has & MT_HAS_STACK) && !stack_declared(h, ev->stack)) {
		*why = "it names a stack never declared";
		*field = "stack";
		return MT_HEAP_REJECTED;
	}
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
	return apply_block_event(h, a, ev);
}

/* What every applied event does last, whatever its kind. */
static inline __attribute__((always_inline)) int
apply_common(mt_heap_t *h, const mt_event_t *ev)
{
	if (ev->has & MT_HAS_TID) {
		uint64_t *last;
		int rc = thread_entry(h, ev->tid, &last);

		if (rc)
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
	int rc = MT_OK;

	*why = NULL;
	*field = NULL;
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
		rc = apply_block_kind(h, ev, why, field);
		break;
	default:
		break;
	}
	if (rc)
		return rc;
	return apply_common(h, ev);
}

int mt_heap_apply_block(mt_heap_t *h, const mt_event_t *ev, const char **why,
			const char **field)
{
	int rc = apply_block_kind(h, ev, why, field);

	if (rc)
		return rc;
	return apply_common(h, ev);
}
