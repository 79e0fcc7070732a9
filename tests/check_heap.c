/*
 * check_heap: unit tests of mt_heap: the block path against the general
 * one, sites by stack id, temporary allocations per thread, thread
 * counts, sites across stacks, and out of memory leaving the heap as it
 * was.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/model/mt_heap.h"
#include "../analyzer/base/mt_mem.h"
#include "../common/mt_event.h"

/* An event for the heap tests: the fields a block event's line gives. */
static mt_event_t heap_event(mt_kind_t kind, uint64_t seq, uint64_t ptr,
			     uint64_t size, uint64_t stack)
{
	mt_event_t ev;

	memset(&ev, 0, sizeof(ev));
	ev.seq = seq;
	ev.kind = kind;
	ev.ptr = ptr;
	ev.size = size;
	ev.stack = stack;
	ev.tid = 1 + seq % 3;
	ev.t = seq;
	ev.has = MT_HAS_TID | MT_HAS_T | (stack ? MT_HAS_STACK : 0);
	ev.fn = kind == MT_KIND_FREE ? MT_FN_FREE : MT_FN_MALLOC;
	return ev;
}

static void heap_declare(mt_heap_t *h, const mt_event_t *ev)
{
	const char *why, *field;

	mt_quiet_int_eq(mt_heap_apply(h, ev, &why, &field), MT_OK);
}

static void heap_declare_stacks(mt_heap_t *h, const uint64_t *ids, size_t n)
{
	static const uint64_t frames[] = { 1 };
	mt_event_t ev;

	mt_heap_init(h);
	memset(&ev, 0, sizeof(ev));
	ev.kind = MT_KIND_ALLOCATOR;
	heap_declare(h, &ev);
	ev.kind = MT_KIND_FRAME;
	ev.frame_id = 1;
	heap_declare(h, &ev);
	for (size_t i = 0; i < n; i++) {
		ev.kind = MT_KIND_STACK;
		ev.stack_id = ids[i];
		ev.frames = frames;
		ev.nframes = 1;
		heap_declare(h, &ev);
	}
}

static const mt_site_t *heap_site(const mt_heap_t *h, uint64_t stack)
{
	void *v = mt_map_find(&h->stacks, stack);

	mt_quiet_ptr_nonnull(v);
	return mt_heap_stack_site(h, *(mt_stack_t **)v);
}

/* A site's bytes freed: what it allocated less what is still live. */
static uint64_t site_freed(const mt_site_t *s)
{
	return s->bytes_allocated - s->live_bytes;
}

/*
 * The held events go through mt_heap_apply_block(), the others through
 * mt_heap_apply(): both must make the same heap of the same events,
 * rejections included (an undeclared stack or allocator, a size beyond
 * 2^64 - 1) and leaving the heap as it was.
 */
START_TEST(test_heap_apply_block_matches_apply)
{
	static const uint64_t stacks[] = { 1, 2, 3 };
	mt_heap_t h[2];

	for (int k = 0; k < 2; k++)
		heap_declare_stacks(&h[k], stacks, 3);
	for (uint64_t seq = 10; seq < 4000; seq++) {
		uint64_t r = mt_test_rng();
		mt_kind_t kinds[] = { MT_KIND_ALLOC, MT_KIND_ALLOC, MT_KIND_FREE,
				      MT_KIND_RESIZE, MT_KIND_REMAP,
				      MT_KIND_ALLOC_FAIL };
		mt_event_t ev = heap_event(kinds[r % 6], seq,
					   0x1000 + 16 * (r >> 8 & 63),
					   r >> 16 & 255, r >> 24 & 3);
		int rc[2];

		ev.new_ptr = 0x1000 + 16 * (r >> 32 & 63);
		if (r % 97 == 0)
			ev.stack = 50; /* never declared */
		if (r % 89 == 0)
			ev.allocator_id = 7; /* never declared */
		if (r % 83 == 0 && ev.kind != MT_KIND_FREE)
			ev.size = UINT64_MAX;
		if (ev.stack)
			ev.has |= MT_HAS_STACK;
		for (int k = 0; k < 2; k++) {
			const char *why = NULL, *field = NULL;

			rc[k] = k ? mt_heap_apply_block(&h[k], &ev, &why, &field) :
				    mt_heap_apply(&h[k], &ev, &why, &field);
			if (rc[k] == MT_HEAP_REJECTED) {
				mt_quiet_ptr_nonnull(why);
				mt_quiet_ptr_nonnull(field);
			}
		}
		mt_quiet_int_eq(rc[0], rc[1]);
	}
	mt_quiet_uint_eq(h[0].events, h[1].events);
	mt_quiet_uint_eq(h[0].allocations, h[1].allocations);
	mt_quiet_uint_eq(h[0].frees, h[1].frees);
	mt_quiet_uint_eq(h[0].resizes, h[1].resizes);
	mt_quiet_uint_eq(h[0].remaps, h[1].remaps);
	mt_quiet_uint_eq(h[0].failed_allocations, h[1].failed_allocations);
	mt_quiet_uint_eq(h[0].unknown_frees, h[1].unknown_frees);
	mt_quiet_uint_eq(h[0].overlapping_allocs, h[1].overlapping_allocs);
	mt_quiet_uint_eq(h[0].bytes_allocated, h[1].bytes_allocated);
	mt_quiet_uint_eq(h[0].bytes_freed, h[1].bytes_freed);
	mt_quiet_uint_eq(h[0].live_bytes, h[1].live_bytes);
	mt_quiet_uint_eq(h[0].peak_live_bytes, h[1].peak_live_bytes);
	mt_quiet_uint_eq(h[0].peak_seq, h[1].peak_seq);
	mt_quiet_uint_eq(h[0].temporary_allocations,
			 h[1].temporary_allocations);
	mt_quiet_uint_eq(h[0].duration_ns, h[1].duration_ns);
	mt_quiet_uint_gt(h[0].frees, 0);
	for (size_t i = 0; i < 3; i++) {
		const mt_site_t *a = heap_site(&h[0], stacks[i]);
		const mt_site_t *b = heap_site(&h[1], stacks[i]);

		mt_quiet_uint_eq(a->allocations, b->allocations);
		mt_quiet_uint_eq(a->live_bytes, b->live_bytes);
		mt_quiet_uint_eq(site_freed(a), site_freed(b));
		mt_quiet_uint_eq(a->temporary_allocations,
				 b->temporary_allocations);
	}
	mt_heap_release(&h[0]);
	mt_heap_release(&h[1]);
}
END_TEST

/* Stack ids the heap finds in its dense table (small ones) and those it
 * finds in the stacks map (large ones, and ids declared before the dense
 * table reached them) keep their own sites, whatever order their
 * allocations come in. */
START_TEST(test_heap_dense_and_sparse_stack_ids_keep_their_sites)
{
	const uint64_t stacks[] = { 5, 5 + MT_HEAP_DENSE_MIN,
				    5 + 2 * MT_HEAP_DENSE_MIN, 1ull << 40,
				    UINT64_MAX, 6 };
	const uint64_t order[] = { 0, 1, 0, 2, 2, 1, 0, 2, 1, 1,
				   3, 4, 5, 3, 5, 4, 0, 4 };
	uint64_t want[6] = { 0 };
	mt_heap_t h;

	heap_declare_stacks(&h, stacks, 6);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		mt_event_t ev = heap_event(MT_KIND_ALLOC, 10 + i, 0x100 + 16 * i,
					   1 + order[i], stacks[order[i]]);
		const char *why, *field;

		mt_quiet_int_eq(mt_heap_apply_block(&h, &ev, &why, &field),
				MT_OK);
		want[order[i]]++;
	}
	for (size_t i = 0; i < 6; i++) {
		const mt_site_t *s = heap_site(&h, stacks[i]);

		mt_quiet_uint_eq(s->allocations, want[i]);
		mt_quiet_uint_eq(s->live_bytes, want[i] * (1 + i));
	}
	mt_heap_release(&h);
}
END_TEST

/* Apply ev through mt_heap_apply_block() when block is set, else
 * mt_heap_apply(); it must be accepted. */
static void heap_apply_ok(mt_heap_t *h, const mt_event_t *ev, int block)
{
	const char *why = NULL, *field = NULL;
	int rc = block ? mt_heap_apply_block(h, ev, &why, &field) :
			 mt_heap_apply(h, ev, &why, &field);

	mt_quiet(rc == MT_OK, "seq %" PRIu64 " (%s): rc %d (%s)", ev->seq,
		 mt_event_kind_name(ev->kind), rc, why ? why : "-");
}

#define TEMP_THREADS 3000
#define TEMP_PTRS 4096
#define TEMP_EVENTS 300000
/* The reference thread of the events without a tid. */
#define NO_TID TEMP_THREADS

/* The reference model's live block: who allocated it, and when. */
typedef struct {
	int live;
	uint64_t serial;
	size_t thread;
	size_t site; /* the stack id, 0 for none */
} ref_block_t;

/*
 * A block is temporary when freed before its thread allocated (alloc,
 * resize or remap) again, whatever the other threads did meanwhile.  The
 * reference keeps each thread's last serial; the events go to 3000
 * threads, and to no thread at all, mostly switching thread at every
 * event, so that neither the last-thread cache nor a table sized for a
 * few threads holds them.
 */
START_TEST(test_heap_temporary_follows_each_threads_last_allocation)
{
	static const uint64_t stacks[] = { 1, 2, 3 };
	static uint64_t tids[TEMP_THREADS], last[TEMP_THREADS + 1];
	static unsigned char used[TEMP_THREADS];
	static ref_block_t ref[TEMP_PTRS];
	const mt_site_t *site[4];
	uint64_t serial = 0, temp = 0, frees = 0, site_temp[4] = { 0 };
	size_t prev = NO_TID, threads = 0, last_p = 0;
	mt_heap_t h;
	int64_t before = mt_mem_outstanding();

	mt_test_rng_state = 9;
	/* Distinct (an odd factor is a bijection), with 0 and UINT64_MAX. */
	for (size_t i = 0; i < TEMP_THREADS; i++)
		tids[i] = i * 0x9e3779b97f4a7c15ull;
	tids[TEMP_THREADS - 1] = UINT64_MAX;
	memset(last, 0, sizeof(last));
	memset(used, 0, sizeof(used));
	memset(ref, 0, sizeof(ref));
	heap_declare_stacks(&h, stacks, 3);
	site[0] = &h.no_stack;
	for (int i = 1; i < 4; i++)
		site[i] = heap_site(&h, (uint64_t)i);
	for (uint64_t seq = 10; seq < 10 + TEMP_EVENTS; seq++) {
		uint64_t r = mt_test_rng(), kr = r % 100, stack = (r >> 8) % 4;
		size_t th, p = (size_t)(mt_test_rng() % TEMP_PTRS);
		size_t q = (size_t)(mt_test_rng() % TEMP_PTRS);
		mt_kind_t kind;
		mt_event_t ev;

		/* A few hot threads allocate often, so their blocks seldom
		 * die temporary; the many others seldom. */
		if ((r >> 16) % 8 == 0) {
			th = prev;
		} else {
			do {
				uint64_t x = mt_test_rng();

				th = x % 16 < 6 ? (size_t)(x % 16) :
				     x % 16 < 8 ? NO_TID :
				     (size_t)((x >> 4) % TEMP_THREADS);
			} while (th == prev);
		}
		if (kr < 35) {
			kind = MT_KIND_ALLOC;
		} else if (kr < 60) {
			kind = MT_KIND_FREE;
		} else if (kr < 72) {
			kind = MT_KIND_FREE; /* the newest block */
			p = last_p;
		} else if (kr < 82) {
			kind = MT_KIND_RESIZE;
		} else if (kr < 90) {
			kind = MT_KIND_REMAP;
		} else if (kr < 95) {
			kind = MT_KIND_ALLOC_FAIL;
		} else {
			kind = MT_KIND_FREE;
		}
		ev = heap_event(kind, seq, 0x10000 + 16 * p,
				1 + (r >> 24) % 100, stack);
		ev.new_ptr = 0x10000 + 16 * q;
		if (th == NO_TID) {
			ev.has &= ~(unsigned)MT_HAS_TID;
		} else {
			ev.tid = tids[th];
			threads += !used[th];
			used[th] = 1;
		}
		heap_apply_ok(&h, &ev, (int)(seq % 2));

		if (kind == MT_KIND_FREE && ref[p].live) {
			const ref_block_t *b = &ref[p];
			int is_temp = last[b->thread] == b->serial;

			frees++;
			temp += is_temp;
			site_temp[b->site] += is_temp;
			mt_quiet(h.temporary_allocations == temp,
				 "seq %" PRIu64 ": free of a block of "
				 "thread %zu (serial %" PRIu64 ", the "
				 "thread's last %" PRIu64 "): temporary_"
				 "allocations %" PRIu64 ", want %" PRIu64,
				 seq, b->thread,
				 b->serial, last[b->thread],
				 h.temporary_allocations, temp);
			mt_quiet(site[b->site]->temporary_allocations ==
					      site_temp[b->site],
				      "seq %" PRIu64 ": site %zu temporary_"
				      "allocations %" PRIu64 ", want %" PRIu64,
				      seq, b->site,
				      site[b->site]->temporary_allocations,
				      site_temp[b->site]);
			ref[p].live = 0;
		} else if (kind == MT_KIND_ALLOC || kind == MT_KIND_RESIZE ||
			   kind == MT_KIND_REMAP) {
			/* A realloc without a stack keeps the block's site. */
			size_t s = stack || kind == MT_KIND_ALLOC ? stack :
				   ref[p].live ? ref[p].site : 0;

			if (kind == MT_KIND_REMAP) {
				ref[p].live = 0;
				p = q;
			}
			last[th] = ++serial;
			ref[p].live = 1;
			ref[p].serial = serial;
			ref[p].thread = th;
			ref[p].site = s;
			last_p = p;
		}
		/* Nothing but a free changes it. */
		mt_quiet(h.temporary_allocations == temp,
			 "seq %" PRIu64 " (%s): temporary_allocations %"
			 PRIu64 ", want %" PRIu64, seq,
			 mt_event_kind_name(kind), h.temporary_allocations,
			 temp);
		prev = th;
	}
	for (int i = 0; i < 4; i++)
		mt_quiet_uint_eq(site[i]->temporary_allocations, site_temp[i]);
	mt_quiet_uint_eq(h.frees, frees);
	mt_quiet_uint_eq(mt_heap_threads(&h), threads);
	mt_quiet_uint_eq(threads, TEMP_THREADS);
	/* Both outcomes were common, for the hot threads and the others. */
	mt_quiet_uint_gt(temp, 5000);
	mt_quiet_uint_gt(frees - temp, 5000);
	mt_heap_release(&h);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* A thread's last allocation is a block of one allocator: a block of
 * another at the same address (a program's pool inside a malloc'd chunk)
 * made before it was not its thread's last, and dies not temporary. */
START_TEST(test_heap_temporary_tells_allocators_apart_at_one_address)
{
	static const uint64_t stacks[] = { 1 };
	mt_heap_t h;
	mt_event_t ev;
	int64_t before = mt_mem_outstanding();

	heap_declare_stacks(&h, stacks, 1);
	memset(&ev, 0, sizeof(ev));
	ev.kind = MT_KIND_ALLOCATOR;
	ev.allocator_id = 1;
	heap_declare(&h, &ev);
	ev = heap_event(MT_KIND_ALLOC, 10, 0x1000, 4096, 1);
	heap_apply_ok(&h, &ev, 1);
	ev = heap_event(MT_KIND_ALLOC, 13, 0x1000, 64, 1);
	ev.allocator_id = 1;
	heap_apply_ok(&h, &ev, 1);
	/* The same tid (1 + seq % 3) throughout. */
	ev = heap_event(MT_KIND_FREE, 16, 0x1000, 0, 0);
	heap_apply_ok(&h, &ev, 1);
	mt_quiet_uint_eq(h.frees, 1);
	mt_quiet_uint_eq(h.temporary_allocations, 0);
	ev = heap_event(MT_KIND_FREE, 19, 0x1000, 0, 0);
	ev.allocator_id = 1;
	heap_apply_ok(&h, &ev, 1);
	mt_quiet_uint_eq(h.frees, 2);
	mt_quiet_uint_eq(h.temporary_allocations, 1);
	mt_quiet_uint_eq(mt_heap_threads(&h), 1);
	mt_heap_release(&h);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

#define COUNT_TIDS 2500

/* An event of a kind the seq picks, by tid, or by no thread for NULL. */
static void threads_event(mt_heap_t *h, uint64_t seq, const uint64_t *tid)
{
	static const mt_kind_t kinds[] = { MT_KIND_ALLOC, MT_KIND_FREE,
					   MT_KIND_ALLOC_FAIL, MT_KIND_RESIZE,
					   MT_KIND_FREE, MT_KIND_REMAP };
	mt_event_t ev = heap_event(kinds[seq % 6], seq,
				   0x1000 + 16 * (seq % 64), 8, seq % 2);

	ev.new_ptr = 0x1000 + 16 * (seq * 7 % 64);
	if (tid)
		ev.tid = *tid;
	else
		ev.has &= ~(unsigned)MT_HAS_TID;
	heap_apply_ok(h, &ev, seq % 3 == 0);
}

START_TEST(test_heap_threads_counts_distinct_tids)
{
	static const uint64_t stacks[] = { 1 };
	static uint64_t tids[COUNT_TIDS];
	static unsigned char seen[COUNT_TIDS];
	const uint64_t fresh = 0xfeedface;
	uint64_t want = 0, seq = 10;
	mt_heap_t h;
	mt_event_t ev;
	const char *why, *field;
	int64_t before = mt_mem_outstanding();

	/* Small tids, tids alike in their low 32 bits, 0 and UINT64_MAX. */
	for (size_t i = 0; i < COUNT_TIDS; i++)
		tids[i] = i % 2 ? (uint64_t)i << 32 | 7 : i;
	tids[1] = UINT64_MAX;
	memset(seen, 0, sizeof(seen));
	mt_test_rng_state = 10;
	heap_declare_stacks(&h, stacks, 1);
	/* Events without a tid are no thread's. */
	for (int i = 0; i < 100; i++)
		threads_event(&h, seq++, NULL);
	mt_quiet_uint_eq(mt_heap_threads(&h), 0);
	/* Ascending over half of them, each twice in a row, then at random
	 * with repeats, descending, and in a stride over all; an event
	 * without a tid every so often. */
	for (int pass = 0; pass < 4; pass++) {
		size_t n = pass == 0 ? 2 * (COUNT_TIDS / 2) :
			   pass == 1 ? 3 * COUNT_TIDS : COUNT_TIDS;

		for (size_t j = 0; j < n; j++) {
			size_t i = pass == 0 ? j / 2 :
				   pass == 1 ? (size_t)(mt_test_rng() % COUNT_TIDS) :
				   pass == 2 ? COUNT_TIDS - 1 - j :
				   j * 7919 % COUNT_TIDS;

			threads_event(&h, seq++, &tids[i]);
			want += !seen[i];
			seen[i] = 1;
			if (j % 10 == 0)
				threads_event(&h, seq++, NULL);
			mt_quiet(mt_heap_threads(&h) == want,
				 "pass %d, tid %" PRIx64 ": %" PRIu64
				 " threads, want %" PRIu64, pass, tids[i],
				 mt_heap_threads(&h), want);
		}
		if (pass == 0) {
			/* A rejected event changes nothing, its new tid
			 * included. */
			ev = heap_event(MT_KIND_ALLOC, seq++, 0x99990, 8, 999);
			ev.tid = fresh;
			mt_quiet_int_eq(mt_heap_apply(&h, &ev, &why, &field),
					MT_HEAP_REJECTED);
			mt_quiet_int_eq(mt_heap_apply_block(&h, &ev, &why,
							     &field),
					 MT_HEAP_REJECTED);
			mt_quiet_uint_eq(mt_heap_threads(&h), want);
		}
	}
	mt_quiet_uint_eq(want, COUNT_TIDS);
	threads_event(&h, seq++, &fresh);
	mt_quiet_uint_eq(mt_heap_threads(&h), COUNT_TIDS + 1);
	mt_heap_release(&h);
	mt_quiet_uint_eq(mt_heap_threads(&h), 0);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

#define SITE_STACKS 5000
#define SITE_BLOCKS (2 * SITE_STACKS + 500)

/* What a site must hold. */
typedef struct {
	uint64_t allocations, bytes_allocated, bytes_freed;
	uint64_t live_allocations, live_bytes;
} ref_site_t;

static void assert_site(const mt_site_t *s, const ref_site_t *w, size_t i,
			const char *when)
{
	mt_quiet(s->allocations == w->allocations &&
			      s->bytes_allocated == w->bytes_allocated &&
			      site_freed(s) == w->bytes_freed &&
			      s->live_allocations == w->live_allocations &&
			      s->live_bytes == w->live_bytes,
		      "%s: site %zu has allocations %" PRIu64 ", bytes_"
		      "allocated %" PRIu64 ", bytes_freed %" PRIu64 ", live_"
		      "allocations %" PRIu64 ", live_bytes %" PRIu64 "; want %"
		      PRIu64 ", %"
		      PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64, when, i,
		      s->allocations, s->bytes_allocated, site_freed(s),
		      s->live_allocations, s->live_bytes, w->allocations,
		      w->bytes_allocated, w->bytes_freed, w->live_allocations,
		      w->live_bytes);
}

static void shuffle(size_t *a, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(mt_test_rng() % i), x = a[i - 1];

		a[i - 1] = a[j];
		a[j] = x;
	}
}

/*
 * Thousands of stacks, with ids in the heap's dense table and ids beyond
 * it, in the stacks map: every block stays with its site (site 0 for no
 * stack) until a resize or remap with a stack moves it, and each site's
 * bytes and live allocations come out exact.
 */
START_TEST(test_heap_blocks_keep_their_sites_across_stacks)
{
	static uint64_t ids[SITE_STACKS];
	static ref_site_t want[SITE_STACKS + 1];
	static const mt_site_t *sp[SITE_STACKS + 1];
	static struct {
		uint64_t ptr, size;
		size_t site; /* 0: no stack, else ids[site - 1] */
	} b[SITE_BLOCKS];
	static size_t order[SITE_BLOCKS];
	uint64_t seq = 10;
	mt_heap_t h;
	int64_t before = mt_mem_outstanding();

	/* Ids in the dense table and beyond it, in the stacks map. */
	for (size_t i = 0; i < SITE_STACKS; i++)
		ids[i] = i % 3 == 0 ? 1 + i * (MT_HEAP_DENSE_MIN / 1024) :
			 i % 3 == 1 ? 0x7f0000000000ull + i :
			 (i * 0x9e3779b97f4a7c15ull) | 1;
	memset(want, 0, sizeof(want));
	mt_test_rng_state = 11;
	heap_declare_stacks(&h, ids, SITE_STACKS);
	sp[0] = &h.no_stack;
	for (size_t i = 0; i < SITE_STACKS; i++)
		sp[i + 1] = heap_site(&h, ids[i]);
	for (size_t i = 0; i < SITE_BLOCKS; i++) {
		b[i].ptr = 0x100000 + 64 * i;
		b[i].size = 1 + i * 37 % 1000;
		b[i].site = i < 2 * SITE_STACKS ? 1 + i % SITE_STACKS : 0;
		order[i] = i;
	}

	/* Allocations, in an order that jumps from stack to stack. */
	shuffle(order, SITE_BLOCKS);
	for (size_t j = 0; j < SITE_BLOCKS; j++) {
		size_t i = order[j];
		ref_site_t *w = &want[b[i].site];
		mt_event_t ev = heap_event(MT_KIND_ALLOC, seq++, b[i].ptr,
					   b[i].size,
					   b[i].site ? ids[b[i].site - 1] : 0);

		heap_apply_ok(&h, &ev, (int)(j % 2));
		w->allocations++;
		w->bytes_allocated += b[i].size;
		w->live_allocations++;
		w->live_bytes += b[i].size;
	}
	for (size_t i = 0; i <= SITE_STACKS; i++)
		assert_site(sp[i], &want[i], i, "after the allocs");

	/* Resizes and remaps, with and without a stack. */
	shuffle(order, SITE_BLOCKS);
	for (size_t j = 0; j < SITE_BLOCKS; j++) {
		size_t i = order[j], from = b[i].site, to = from;
		uint64_t r = mt_test_rng(), size = 1 + r % 2000;
		mt_kind_t kind = (r >> 16) % 2 ? MT_KIND_RESIZE : MT_KIND_REMAP;
		int with_stack = (r >> 20) % 3 != 0;
		mt_event_t ev;

		if ((r >> 24) % 4 == 0)
			continue;
		if (with_stack)
			to = 1 + (size_t)((r >> 32) % SITE_STACKS);
		ev = heap_event(kind, seq++, b[i].ptr, size,
				with_stack ? ids[to - 1] : 0);
		ev.new_ptr = kind == MT_KIND_REMAP ? b[i].ptr + 0x10000000 :
			     b[i].ptr;
		heap_apply_ok(&h, &ev, (int)(j % 2));
		want[from].bytes_freed += b[i].size;
		want[from].live_allocations--;
		want[from].live_bytes -= b[i].size;
		want[to].bytes_allocated += size;
		want[to].live_allocations++;
		want[to].live_bytes += size;
		b[i].ptr = ev.new_ptr;
		b[i].size = size;
		b[i].site = to;
		assert_site(sp[from], &want[from], from,
			    with_stack ? "a resize with a stack: its old site" :
					 "a resize without a stack");
		assert_site(sp[to], &want[to], to,
			    with_stack ? "a resize with a stack: its new site" :
					 "a resize without a stack");
	}
	for (size_t i = 0; i <= SITE_STACKS; i++)
		assert_site(sp[i], &want[i], i, "after the resizes");
	mt_quiet_uint_eq(h.live_allocations, SITE_BLOCKS);

	/* Frees, in yet another order: half, then the rest. */
	shuffle(order, SITE_BLOCKS);
	for (size_t j = 0; j < SITE_BLOCKS; j++) {
		size_t i = order[j];
		ref_site_t *w = &want[b[i].site];
		mt_event_t ev = heap_event(MT_KIND_FREE, seq++, b[i].ptr, 0, 0);

		heap_apply_ok(&h, &ev, (int)(j % 2));
		w->bytes_freed += b[i].size;
		w->live_allocations--;
		w->live_bytes -= b[i].size;
		if (j != SITE_BLOCKS / 2 && j != SITE_BLOCKS - 1)
			continue;
		for (size_t k = 0; k <= SITE_STACKS; k++)
			assert_site(sp[k], &want[k], k, "after frees");
	}
	for (size_t i = 0; i <= SITE_STACKS; i++) {
		mt_quiet_uint_eq(sp[i]->live_bytes, 0);
		mt_quiet_uint_eq(site_freed(sp[i]), sp[i]->bytes_allocated);
	}
	mt_quiet_uint_eq(h.live_allocations, 0);
	mt_quiet_uint_eq(h.live_bytes, 0);
	mt_quiet_uint_eq(h.frees, SITE_BLOCKS);
	mt_quiet_uint_eq(h.unknown_frees, 0);
	mt_heap_release(&h);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* The heap's counters an event could change. */
typedef struct {
	uint64_t events, allocations, frees, resizes, unknown_frees;
	uint64_t live_allocations, live_bytes, bytes_allocated, bytes_freed;
	uint64_t peak_live_bytes, temporary_allocations, threads;
	uint64_t stacks, nsites;
} heap_counts_t;

static heap_counts_t heap_counts(const mt_heap_t *h)
{
	heap_counts_t c;

	c.events = h->events;
	c.allocations = h->allocations;
	c.frees = h->frees;
	c.resizes = h->resizes;
	c.unknown_frees = h->unknown_frees;
	c.live_allocations = h->live_allocations;
	c.live_bytes = h->live_bytes;
	c.bytes_allocated = h->bytes_allocated;
	c.bytes_freed = h->bytes_freed;
	c.peak_live_bytes = h->peak_live_bytes;
	c.temporary_allocations = h->temporary_allocations;
	c.threads = mt_heap_threads(h);
	c.stacks = mt_map_count(&h->stacks);
	c.nsites = h->nsites;
	return c;
}

static void assert_counts(const heap_counts_t *got, const heap_counts_t *want,
			  const char *what)
{
#define SAME(f)                                                              \
	mt_quiet(got->f == want->f, "%s: " #f " %" PRIu64 ", want %"    \
		 PRIu64, what, got->f, want->f)
	SAME(events);
	SAME(allocations);
	SAME(frees);
	SAME(resizes);
	SAME(unknown_frees);
	SAME(live_allocations);
	SAME(live_bytes);
	SAME(bytes_allocated);
	SAME(bytes_freed);
	SAME(peak_live_bytes);
	SAME(temporary_allocations);
	SAME(threads);
	SAME(stacks);
	SAME(nsites);
#undef SAME
}

#define OOM_STATES 200
#define OOM_NEW_TID 1
static const uint64_t oom_frames[] = { 1 };

/* The heap the out-of-memory test starts from: k + 1 stacks, and k
 * threads that each allocated a block, every other one freed, so that the
 * tables of threads, stacks and blocks grow at different k. */
static void oom_base(mt_heap_t *h, int k)
{
	uint64_t ids[OOM_STATES + 1];

	for (int i = 0; i <= k; i++)
		ids[i] = (uint64_t)i + 1;
	heap_declare_stacks(h, ids, (size_t)k + 1);
	for (int i = 0; i < k; i++) {
		mt_event_t ev = heap_event(MT_KIND_ALLOC, 10 + 2 * (uint64_t)i,
					   0x1000 + 16 * (uint64_t)i,
					   1 + (uint64_t)i, 1 + (uint64_t)i);

		ev.tid = 1000 + (uint64_t)i;
		heap_apply_ok(h, &ev, 0);
		if (i % 2 == 0)
			continue;
		ev = heap_event(MT_KIND_FREE, 11 + 2 * (uint64_t)i, ev.ptr, 0,
				0);
		ev.tid = 1000 + (uint64_t)i;
		heap_apply_ok(h, &ev, 0);
	}
}

/* The event under test: e = 0, an alloc by a new thread; 1, a stack
 * declaration; 2, a free by a new thread (of block 0 when k > 0); 3, a
 * resize of the same by a new thread. */
static mt_event_t oom_event(int k, int e)
{
	static const mt_kind_t kinds[] = { MT_KIND_ALLOC, MT_KIND_STACK,
					   MT_KIND_FREE, MT_KIND_RESIZE };
	uint64_t seq = 10 + 2 * (uint64_t)k;
	mt_event_t ev = heap_event(kinds[e], seq, e ? 0x1000 : 0x8000, 77, 1);

	ev.tid = OOM_NEW_TID;
	if (kinds[e] == MT_KIND_STACK) {
		memset(&ev, 0, sizeof(ev));
		ev.seq = seq;
		ev.kind = MT_KIND_STACK;
		ev.stack_id = (uint64_t)k + 2;
		ev.frames = oom_frames;
		ev.nframes = 1;
	}
	return ev;
}

/* h and r must be the same heap: their counters and sites now, and after
 * the same events that use the new thread and the new stack. */
static void assert_same_heap(mt_heap_t *h, mt_heap_t *r, int k, int e,
			     const char *what)
{
	uint64_t seq = 11 + 2 * (uint64_t)k;
	uint64_t stack = e == 1 ? (uint64_t)k + 2 : 1;
	const uint64_t tids[] = { OOM_NEW_TID, 2, 3, OOM_NEW_TID, 1000 };
	const uint64_t ptrs[] = { 0x8000, 0x9000, 0xa000, 0x9000, 0x1000 };
	const mt_kind_t kinds[] = { MT_KIND_FREE, MT_KIND_ALLOC, MT_KIND_ALLOC,
				    MT_KIND_FREE, MT_KIND_FREE };
	heap_counts_t hc, rc;

	for (int step = 0; step < 6; step++) {
		hc = heap_counts(h);
		rc = heap_counts(r);
		assert_counts(&hc, &rc, what);
		mt_quiet_uint_eq(h->no_stack.temporary_allocations,
				 r->no_stack.temporary_allocations);
		for (uint64_t id = 1; id <= (uint64_t)k + 2; id++) {
			void *hv = mt_map_find(&h->stacks, id);
			const mt_site_t *a, *b;

			if (!hv)
				continue;
			a = mt_heap_stack_site(h, *(mt_stack_t **)hv);
			b = heap_site(r, id);
			mt_quiet(a->allocations == b->allocations &&
				 a->live_bytes == b->live_bytes &&
				 site_freed(a) == site_freed(b) &&
				 a->temporary_allocations ==
				 b->temporary_allocations,
				 "%s: stack %" PRIu64 " differs", what,
				 id);
		}
		if (step == 5)
			break;
		for (int i = 0; i < 2; i++) {
			mt_event_t ev = heap_event(kinds[step], seq, ptrs[step],
						   5, stack);

			ev.tid = tids[step];
			heap_apply_ok(i ? r : h, &ev, 0);
		}
		seq++;
	}
}

START_TEST(test_heap_new_thread_or_stack_out_of_memory_leaves_heap_unchanged)
{
	static const char *const names[] = {
		"an alloc by a new thread", "a stack declaration",
		"a free by a new thread", "a resize by a new thread",
	};
	int64_t before = mt_mem_outstanding();

	for (int k = 0; k <= OOM_STATES; k++) {
		for (int e = 0; e < 4; e++) {
			mt_event_t ev = oom_event(k, e);
			uint64_t failed = 0;

			for (uint64_t n = 1;; n++) {
				char what[160];
				const char *why, *field;
				heap_counts_t was, now;
				mt_heap_t h, r;
				int rc;

				oom_base(&h, k);
				was = heap_counts(&h);
				mt_mem_fail_at(n, 0);
				rc = mt_heap_apply(&h, &ev, &why, &field);
				mt_mem_fail_at(0, 0);
				snprintf(what, sizeof(what),
					 "%s after %d threads, allocation %"
					 PRIu64 " failing", names[e], k, n);
				mt_quiet(rc == MT_OK || rc == MT_ENOMEM,
					 "%s: rc %d", what, rc);
				if (rc == MT_ENOMEM) {
					failed++;
					now = heap_counts(&h);
					assert_counts(&now, &was, what);
					/* Without the failure it goes. */
					heap_apply_ok(&h, &ev, 0);
				}
				oom_base(&r, k);
				heap_apply_ok(&r, &ev, 0);
				assert_same_heap(&h, &r, k, e, what);
				mt_heap_release(&h);
				mt_heap_release(&r);
				mt_quiet_int_eq(mt_mem_outstanding(), before);
				if (rc == MT_OK)
					break;
			}
			/* In an empty heap the new thread's or stack's
			 * tables must be allocated. */
			if (k == 0)
				mt_quiet_uint_gt(failed, 0);
		}
	}
}
END_TEST

Suite *mt_suite_heap(void)
{
	Suite *s = suite_create("heap");
	TCase *tc = tcase_create("heap");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_heap_apply_block_matches_apply);
	tcase_add_test(tc, test_heap_dense_and_sparse_stack_ids_keep_their_sites);
	tcase_add_test(tc, test_heap_temporary_follows_each_threads_last_allocation);
	tcase_add_test(tc, test_heap_temporary_tells_allocators_apart_at_one_address);
	tcase_add_test(tc, test_heap_threads_counts_distinct_tids);
	tcase_add_test(tc, test_heap_blocks_keep_their_sites_across_stacks);
	tcase_add_test(
		tc, test_heap_new_thread_or_stack_out_of_memory_leaves_heap_unchanged);
	suite_add_tcase(s, tc);
	return s;
}
