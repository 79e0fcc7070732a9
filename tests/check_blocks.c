/*
 * check_blocks: unit tests of mt_blocks: the live-block table:
 * put/find/take, the keys 0 and UINT64_MAX, blocks too wide for a slot,
 * growth at capacities that are not powers of two, its slots' cache-line
 * alignment, failed growth, a random churn held to a reference, and its
 * prefetches, in the binary and in what they change (nothing).
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
#include "../analyzer/model/mt_blocks.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/model/mt_heap.h"
#include "../analyzer/base/mt_mem.h"

/* A block that fits its slot, each field different for each i. */
static mt_block_t blk(uint64_t i)
{
	mt_block_t b;

	memset(&b, 0, sizeof(b));
	b.size = (i * 0x9e3779b97f4a7c15ull) >> (64 - MT_BLOCKS_SIZE_BITS);
	b.site = (uint32_t)(i * 2654435761u) >> (32 - MT_BLOCKS_SITE_BITS);
	b.thread = (uint32_t)((i ^ 0x5a) % ((1u << MT_BLOCKS_THREAD_BITS) - 1));
	b.up = (unsigned)(i >> 3 & 1);
	return b;
}

static void assert_block(const mt_block_t *got, const mt_block_t *want)
{
	mt_quiet_ptr_nonnull(got);
	mt_quiet(got->size == want->size && got->up == want->up &&
			      got->site == want->site &&
			      got->thread == want->thread,
		      "block {%" PRIu64 ", %" PRIu32 ", %" PRIu32 ", %u"
		      "}, want {%" PRIu64 ", %" PRIu32 ", %" PRIu32 ", %u"
		      "}", got->size, got->site, got->thread, got->up,
		      want->size, want->site, want->thread, want->up);
}

/* mt_blocks_find(): the block found, copied, or NULL; the copy lives
 * until the next call. */
static const mt_block_t *find(const mt_blocks_t *t, uint64_t ptr)
{
	static mt_block_t b;
	mt_block_t canary;

	memset(&b, 0xa5, sizeof(b));
	canary = b;
	if (mt_blocks_find(t, ptr, &b))
		return &b;
	mt_quiet_mem_eq(&b, &canary, sizeof(b));
	return NULL;
}

/* Linear probing's invariant: every slot from a key's home to its own
 * is full, so a probe from the home finds it before an empty slot. */
static void assert_runs(const mt_blocks_t *t)
{
	size_t count = 0;

	for (size_t j = 0; j < t->cap; j++) {
		uint64_t k = t->slots[j].key;

		if (!k)
			continue;
		count++;
		for (size_t i = mt_blocks_home(k, t->seed, t->cap); i != j;
		     i = i + 1 == t->cap ? 0 : i + 1)
			mt_quiet(t->slots[i].key != 0,
				 "slot %zu empty between key %" PRIx64
				 "'s home and its slot %zu (cap %zu)", i, k, j,
				 t->cap);
	}
	mt_quiet_uint_eq(count, t->count);
}

/* The growth rule: a quarter more, in whole cache lines of slots. */
static size_t grown(size_t cap)
{
	return (cap + cap / 4 + 3) / 4 * 4;
}

/* take of an absent key: 0, and *out as it was. */
static void assert_take_absent(mt_blocks_t *t, uint64_t ptr)
{
	mt_block_t out, canary;

	memset(&canary, 0xa5, sizeof(canary));
	out = canary;
	mt_quiet(mt_blocks_take(t, ptr, &out) == 0,
		 "take of absent %" PRIx64 " found a block", ptr);
	mt_quiet_mem_eq(&out, &canary, sizeof(out));
}

static void blocks_put_ok(mt_blocks_t *t, uint64_t ptr, const mt_block_t *b,
			  int want_replaced, const mt_block_t *want_old)
{
	mt_block_t old;
	int replaced = -1;

	mt_quiet_int_eq(mt_blocks_put(t, ptr, b, &old, &replaced), MT_OK);
	mt_quiet(replaced == want_replaced,
		 "put %" PRIx64 ": replaced %d, want %d", ptr, replaced,
		 want_replaced);
	if (want_old)
		assert_block(&old, want_old);
}

/*
 * The prefetches are in the binary.  GCC deletes a call to a plain static
 * inline function whose only effect is a prefetch, and -flto the pass's
 * call to mt_heap_prefetch(): the analyzer ran 15 to 24 % slower and
 * every output stayed the same, so only the machine code can tell.
 */
START_TEST(test_blocks_prefetches_are_in_the_binary)
{
	char found[256];

	if (!mt_test_objdump_by_name(found, sizeof(found))) {
		MT_TEST_SKIP("no objdump that disassembles a function by name (%s)",
			     found);
		return;
	}
#if defined(__x86_64__)
	/* The mnemonic after objdump's tab, not the function's own name
	 * in its jumps; the block slot's and the site's. */
	mt_quiet(mt_test_disassembly_count("mt_heap_prefetch",
					   "\tprefetch") >= 2,
		 "mt_heap_prefetch() lost its prefetches");
	mt_quiet(mt_test_disassembly_count("mt_analysis_run_full",
					   "<mt_heap_prefetch>") >= 1,
		 "the pass does not call mt_heap_prefetch()");
#else
	/* The instruction's name is the x86 one; elsewhere the call. */
	mt_quiet(mt_test_disassembly_count("mt_analysis_run_full",
					   "mt_heap_prefetch") >= 1,
		 "the pass does not call mt_heap_prefetch()");
#endif
}
END_TEST

START_TEST(test_blocks_put_find_take)
{
	static const mt_block_t ext = { UINT64_MAX, UINT32_MAX, UINT32_MAX, 1 };
	mt_blocks_t t;
	mt_block_t b1 = blk(1), b2 = blk(2), b9 = blk(9), tmp, out;
	int64_t before = mt_mem_outstanding();

	mt_blocks_init(&t);
	mt_quiet_uint_eq(mt_blocks_count(&t), 0);
	mt_quiet_ptr_null(find(&t, 42));
	assert_take_absent(&t, 42);

	blocks_put_ok(&t, 42, &b1, 0, NULL);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	assert_block(find(&t, 42), &b1);
	mt_quiet_ptr_null(find(&t, 41));
	mt_quiet_ptr_null(find(&t, 43));

	blocks_put_ok(&t, 42, &b2, 1, &b1);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	assert_block(find(&t, 42), &b2);

	/* A neighbour, and a take that misses in a table that has slots. */
	blocks_put_ok(&t, 43, &b1, 0, NULL);
	assert_take_absent(&t, 44);
	mt_quiet_uint_eq(mt_blocks_count(&t), 2);

	memset(&out, 0, sizeof(out));
	mt_quiet_int_eq(mt_blocks_take(&t, 42, &out), 1);
	assert_block(&out, &b2);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	mt_quiet_ptr_null(find(&t, 42));
	assert_block(find(&t, 43), &b1);
	assert_take_absent(&t, 42);

	/* Put again after its take, it is a new block. */
	blocks_put_ok(&t, 42, &b1, 0, NULL);
	assert_block(find(&t, 42), &b1);

	/* Every field keeps its full width. */
	blocks_put_ok(&t, 7, &ext, 0, NULL);
	assert_block(find(&t, 7), &ext);

	/* The block is copied in: the caller's may change after the put. */
	tmp = b9;
	blocks_put_ok(&t, 8, &tmp, 0, NULL);
	memset(&tmp, 0, sizeof(tmp));
	assert_block(find(&t, 8), &b9);
	mt_quiet_uint_eq(mt_blocks_count(&t), 4);

	mt_blocks_release(&t);
	mt_quiet_uint_eq(mt_blocks_count(&t), 0);
	mt_quiet_ptr_null(t.slots);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(test_blocks_keys_zero_and_max)
{
	mt_blocks_t t;
	mt_block_t b[5], out;
	int64_t before = mt_mem_outstanding();

	for (int i = 0; i < 5; i++)
		b[i] = blk((uint64_t)i + 100);
	mt_blocks_init(&t);
	mt_quiet_ptr_null(find(&t, 0));
	mt_quiet_ptr_null(find(&t, UINT64_MAX));
	assert_take_absent(&t, 0);
	assert_take_absent(&t, UINT64_MAX);

	/* UINT64_MAX alone lives beside the slots: it needs none. */
	blocks_put_ok(&t, UINT64_MAX, &b[1], 0, NULL);
	mt_quiet_uint_eq(t.cap, 0);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	assert_block(find(&t, UINT64_MAX), &b[1]);
	mt_quiet_ptr_null(find(&t, 0));
	mt_quiet_ptr_null(find(&t, UINT64_MAX - 1));

	blocks_put_ok(&t, 0, &b[2], 0, NULL);
	blocks_put_ok(&t, UINT64_MAX - 1, &b[3], 0, NULL);
	blocks_put_ok(&t, UINT64_MAX, &b[4], 1, &b[1]);
	mt_quiet_uint_eq(mt_blocks_count(&t), 3);
	assert_block(find(&t, 0), &b[2]);
	assert_block(find(&t, UINT64_MAX - 1), &b[3]);
	assert_block(find(&t, UINT64_MAX), &b[4]);
	mt_quiet_ptr_null(find(&t, 1));

	memset(&out, 0, sizeof(out));
	mt_quiet_int_eq(mt_blocks_take(&t, UINT64_MAX, &out), 1);
	assert_block(&out, &b[4]);
	mt_quiet_ptr_null(find(&t, UINT64_MAX));
	mt_quiet_uint_eq(mt_blocks_count(&t), 2);
	assert_take_absent(&t, UINT64_MAX);
	mt_quiet_int_eq(mt_blocks_take(&t, 0, &out), 1);
	assert_block(&out, &b[2]);
	mt_quiet_ptr_null(find(&t, 0));
	assert_take_absent(&t, 0);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	assert_block(find(&t, UINT64_MAX - 1), &b[3]);

	/* The side slot, taken, is free again. */
	blocks_put_ok(&t, UINT64_MAX, &b[0], 0, NULL);
	assert_block(find(&t, UINT64_MAX), &b[0]);
	mt_quiet_uint_eq(mt_blocks_count(&t), 2);
	mt_blocks_release(&t);
	mt_quiet_ptr_null(find(&t, UINT64_MAX));
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* A block's size, site or thread too wide for its slot's field goes to a
 * wide entry and comes back exact, at each field's bound and beyond; a
 * wide entry freed by a take or a replacement is used again. */
START_TEST(test_blocks_fields_too_wide_for_a_slot_come_back_exact)
{
	static const uint64_t sizes[3] = { (1ull << MT_BLOCKS_SIZE_BITS) - 1,
					   1ull << MT_BLOCKS_SIZE_BITS,
					   UINT64_MAX };
	static const uint32_t sites[3] = { (1u << MT_BLOCKS_SITE_BITS) - 1,
					   1u << MT_BLOCKS_SITE_BITS,
					   UINT32_MAX };
	static const uint32_t threads[3] = { (1u << MT_BLOCKS_THREAD_BITS) - 2,
					     (1u << MT_BLOCKS_THREAD_BITS) - 1,
					     UINT32_MAX };
	mt_block_t all[54], out;
	mt_blocks_t t;
	size_t n = 0, nwide = 0, len;
	int64_t before = mt_mem_outstanding();

	mt_blocks_init(&t);
	for (int si = 0; si < 3; si++)
		for (int st = 0; st < 3; st++)
			for (int th = 0; th < 3; th++)
				for (unsigned up = 0; up < 2; up++) {
					mt_block_t b = { sizes[si], sites[st],
							 threads[th], up };
					int wide = si || st || th;

					mt_quiet_int_eq(MT_BLOCKS_FITS(&b), !wide);
					blocks_put_ok(&t, n * 16, &b, 0, NULL);
					all[n++] = b;
					nwide += (size_t)wide;
					mt_quiet_uint_eq(t.wide_len, nwide);
					assert_block(find(&t, (n - 1) * 16), &b);
				}
	mt_quiet_uint_eq(nwide, 52);
	for (size_t i = 0; i < n; i++)
		assert_block(find(&t, i * 16), &all[i]);

	/* Taken, every other one: exact, and their entries come back. */
	for (size_t i = 0; i < n; i += 2) {
		mt_quiet_int_eq(mt_blocks_take(&t, i * 16, &out), 1);
		assert_block(&out, &all[i]);
	}
	len = t.wide_len;
	for (size_t i = 0; i < n; i += 2)
		blocks_put_ok(&t, (n + i) * 16, &all[n - 1 - i], 0, NULL);
	mt_quiet_uint_eq(t.wide_len, len);
	for (size_t i = 0; i < n; i += 2) {
		assert_block(find(&t, (n + i) * 16), &all[n - 1 - i]);
		assert_block(find(&t, (i + 1) * 16), &all[i + 1]);
	}

	/* Replaced: a wide block by one that fits, which frees its entry,
	 * and one that fits by a wide one, which takes it back. */
	out = blk(5);
	blocks_put_ok(&t, 3 * 16, &out, 1, &all[3]);
	assert_block(find(&t, 3 * 16), &out);
	blocks_put_ok(&t, 3 * 16, &all[53], 1, &out);
	assert_block(find(&t, 3 * 16), &all[53]);
	mt_quiet_uint_eq(t.wide_len, len);
	/* And a wide block by another. */
	blocks_put_ok(&t, 3 * 16, &all[40], 1, &all[53]);
	assert_block(find(&t, 3 * 16), &all[40]);
	mt_quiet_uint_eq(t.wide_len, len);
	assert_runs(&t);
	mt_blocks_release(&t);
	mt_quiet_ptr_null(t.wide);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* A wide block needs an entry: mt_blocks_reserve() makes room for one
 * when the block it is given is wide, and a put that finds none and
 * cannot make one leaves the table unchanged. */
START_TEST(test_blocks_reserve_makes_room_for_a_wide_block)
{
	mt_blocks_t t;
	mt_block_t narrow = blk(1), wide = blk(2), old;
	int replaced;
	int64_t before = mt_mem_outstanding();

	wide.site = UINT32_MAX;
	mt_blocks_init(&t);
	blocks_put_ok(&t, 16, &narrow, 0, NULL);
	/* A block that fits needs no entry. */
	mt_mem_fail_at(1, 1);
	mt_quiet_int_eq(mt_blocks_reserve(&t, &narrow), MT_OK);
	mt_quiet_uint_eq(mt_mem_calls(), 0);
	/* A wide one does, and there is none yet. */
	mt_quiet_int_eq(mt_blocks_reserve(&t, &wide), MT_ENOMEM);
	mt_quiet_int_eq(mt_blocks_put(&t, 32, &wide, &old, &replaced),
			MT_ENOMEM);
	mt_quiet_int_eq(mt_blocks_put(&t, 16, &wide, &old, &replaced),
			MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_ptr_null(find(&t, 32));
	assert_block(find(&t, 16), &narrow);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	mt_quiet_ptr_null(t.wide);

	/* After a reserve, the put needs nothing more. */
	mt_quiet_int_eq(mt_blocks_reserve(&t, &wide), MT_OK);
	mt_mem_fail_at(1, 1);
	blocks_put_ok(&t, 32, &wide, 0, NULL);
	mt_quiet_uint_eq(mt_mem_calls(), 0);
	mt_mem_fail_at(0, 0);
	assert_block(find(&t, 32), &wide);
	/* Until the entries run out: the reserve that must grow them. */
	for (uint64_t k = 3; t.wide_len < t.wide_cap; k++)
		blocks_put_ok(&t, k * 16, &wide, 0, NULL);
	mt_quiet_int_eq(mt_blocks_reserve(&t, &narrow), MT_OK);
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_blocks_reserve(&t, &wide), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_uint_eq(t.wide_len, t.wide_cap);
	mt_quiet_int_eq(mt_blocks_reserve(&t, &wide), MT_OK);
	mt_quiet_uint_gt(t.wide_cap, t.wide_len);
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* Growth from capacities that are not powers of two (16, 20, 28, 36,
 * ...) moves every block, wide or not, keeps every run whole, and
 * deletion with the backward shift keeps them whole at each capacity. */
START_TEST(test_blocks_grow_and_take_at_capacities_not_powers_of_two)
{
	mt_blocks_t t;
	size_t seen = 0, last_cap = 0;
	int64_t before = mt_mem_outstanding();

	mt_test_rng_state = 11;
	mt_blocks_init(&t);
	for (uint64_t i = 0; i < 3000; i++) {
		mt_block_t b = blk(i);

		if (i % 5 == 0)
			b.size = UINT64_MAX - i;
		blocks_put_ok(&t, mt_test_churn_key(i), &b, 0, NULL);
		if (t.cap == last_cap)
			continue;
		last_cap = t.cap;
		seen += (t.cap & (t.cap - 1)) != 0;
		assert_runs(&t);
		for (uint64_t j = 0; j <= i; j++) {
			mt_block_t w = blk(j);

			if (j % 5 == 0)
				w.size = UINT64_MAX - j;
			assert_block(find(&t, mt_test_churn_key(j)), &w);
		}
		/* Take a third, in a random order, and put them back. */
		for (uint64_t j = 0; j <= i; j++) {
			uint64_t k = mt_test_churn_key((j * 7 + i) % (i + 1));
			mt_block_t out, w;

			if (mt_test_rng() % 3)
				continue;
			mt_quiet_int_eq(mt_blocks_take(&t, k, &out), 1);
			mt_quiet_ptr_null(find(&t, k));
			assert_runs(&t);
			w = out;
			blocks_put_ok(&t, k, &w, 0, NULL);
			mt_quiet_uint_eq(t.cap, last_cap);
		}
		assert_runs(&t);
	}
	mt_quiet_uint_ge(seen, 10);
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* Pointer-like keys: 16-byte aligned, in a few clusters. */
static uint64_t grow_key(uint64_t i)
{
	return 0x7f0000000000ull * (i % 3) + i * 16;
}

START_TEST(test_blocks_grow_keeps_blocks_and_aligns_slots)
{
	const uint64_t n = 100000;
	mt_blocks_t t;
	size_t caps = 0, last_cap = 0;
	int64_t before = mt_mem_outstanding();

	mt_blocks_init(&t);
	for (uint64_t i = 0; i < n; i++) {
		mt_block_t b = blk(i);

		blocks_put_ok(&t, grow_key(i), &b, 0, NULL);
		if (t.cap != last_cap) {
			mt_quiet(t.cap == (last_cap ? grown(last_cap) : 16),
				 "cap %zu after %zu", t.cap, last_cap);
			mt_quiet((uintptr_t)t.slots % 64 == 0,
				 "slots at %p, cap %zu: off a cache line",
				 (void *)t.slots, t.cap);
			/* One allocation holds the table: the old one is
			 * gone. */
			mt_quiet_int_eq(mt_mem_outstanding(), before + 1);
			/* Every block put so far moved with it. */
			for (uint64_t j = 0; j <= i; j++) {
				mt_block_t w = blk(j);
				const mt_block_t *got;

				got = find(&t, grow_key(j));
				assert_block(got, &w);
			}
			caps++;
			last_cap = t.cap;
		}
		/* The load stays under its limit, and the slots within
		 * twice the live set's 16 bytes a block. */
		mt_quiet_uint_le(t.count * 100, t.cap * MT_BLOCKS_LOAD_PCT);
		if (i >= 16)
			mt_quiet_uint_le(t.cap, 2 * mt_blocks_count(&t));
	}
	mt_quiet_uint_ge(caps, 30);
	mt_quiet_uint_eq(mt_blocks_count(&t), n);
	for (uint64_t i = 0; i < n; i++) {
		mt_block_t w = blk(i);
		const mt_block_t *got = find(&t, grow_key(i));

		mt_quiet(got != NULL, "key %" PRIu64 " lost in growth", i);
		assert_block(got, &w);
		mt_quiet_ptr_null(find(&t, grow_key(i) + 8));
	}
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* After mt_blocks_reserve() the next put cannot fail, whatever fails
 * after it; a reserve that must grow and cannot leaves the table as it
 * was, and one with room allocates nothing. */
START_TEST(test_blocks_reserve_makes_the_next_put_succeed)
{
	mt_blocks_t t;
	mt_block_t b, old;
	mt_blocks_slot_t *slots;
	size_t cap;
	uint64_t n = 0;
	int64_t before = mt_mem_outstanding();

	mt_blocks_init(&t);
	/* The first reserve allocates the slots. */
	mt_mem_fail_at(1, 0);
	b = blk(0);
	mt_quiet_int_eq(mt_blocks_reserve(&t, &b), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_ptr_null(t.slots);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_quiet_int_eq(mt_blocks_reserve(&t, &b), MT_OK);
	mt_mem_fail_at(1, 1);
	blocks_put_ok(&t, 0, &b, 0, NULL);
	mt_mem_fail_at(0, 0);
	/* Up to the growth point, then one reserve that fails and one that
	 * works: the put after it needs nothing more. */
	while (t.count + 1 <= t.limit) {
		mt_quiet_uint_eq(mt_mem_calls(), 0);
		mt_mem_fail_at(1, 1);
		b = blk(++n);
		mt_quiet_int_eq(mt_blocks_reserve(&t, &b), MT_OK);
		blocks_put_ok(&t, n, &b, 0, NULL);
		mt_mem_fail_at(0, 0);
	}
	cap = t.cap;
	slots = t.slots;
	b = blk(n + 1);
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_blocks_reserve(&t, &b), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_uint_eq(t.cap, cap);
	mt_quiet_ptr_eq(t.slots, slots);
	mt_quiet_uint_eq(mt_blocks_count(&t), n + 1);
	mt_quiet_int_eq(mt_blocks_reserve(&t, &b), MT_OK);
	mt_quiet_uint_eq(t.cap, grown(cap));
	mt_mem_fail_at(1, 1);
	blocks_put_ok(&t, n + 1, &b, 0, NULL);
	mt_mem_fail_at(0, 0);
	for (uint64_t i = 0; i <= n + 1; i++) {
		mt_block_t w = blk(i);

		assert_block(find(&t, i), &w);
	}
	mt_quiet_int_eq(mt_blocks_take(&t, 0, &old), 1);
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(test_blocks_failed_growth_leaves_table_unchanged)
{
	mt_blocks_t t;
	mt_block_t b, old, out;
	mt_blocks_slot_t *slots;
	size_t cap;
	uint64_t n = 0;
	int replaced;
	int64_t before = mt_mem_outstanding();

	mt_blocks_init(&t);
	/* The first put allocates the slots: failing, it leaves none. */
	b = blk(0);
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_blocks_put(&t, 0, &b, &old, &replaced), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_ptr_null(t.slots);
	mt_quiet_uint_eq(t.cap, 0);
	mt_quiet_uint_eq(mt_blocks_count(&t), 0);
	mt_quiet_ptr_null(find(&t, 0));
	mt_quiet_int_eq(mt_mem_outstanding(), before);

	blocks_put_ok(&t, 0, &b, 0, NULL);
	cap = t.cap;
	slots = t.slots;
	/* Fill up to the next growth. */
	while (t.count + 1 <= t.limit) {
		n++;
		b = blk(n);
		blocks_put_ok(&t, n, &b, 0, NULL);
	}
	mt_quiet_uint_eq(t.cap, cap);
	b = blk(n + 1);
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_blocks_put(&t, n + 1, &b, &old, &replaced),
			MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_uint_eq(t.cap, cap);
	mt_quiet_ptr_eq(t.slots, slots);
	mt_quiet_uint_eq(mt_blocks_count(&t), n + 1);
	mt_quiet_ptr_null(find(&t, n + 1));
	mt_quiet_int_eq(mt_mem_outstanding(), before + 1);
	for (uint64_t i = 0; i <= n; i++) {
		mt_block_t w = blk(i);

		assert_block(find(&t, i), &w);
	}

	/* Neither the side slot, nor a key already live, nor a take, nor a
	 * put into the room a take made needs an allocation: with every one
	 * failing they all work, and none is even tried. */
	mt_mem_fail_at(1, 1);
	b = blk(1000);
	blocks_put_ok(&t, UINT64_MAX, &b, 0, NULL);
	b = blk(1001);
	old = blk(1000);
	blocks_put_ok(&t, UINT64_MAX, &b, 1, &old);
	b = blk(1002);
	old = blk(0);
	blocks_put_ok(&t, 0, &b, 1, &old);
	mt_quiet_int_eq(mt_blocks_take(&t, n, &out), 1);
	old = blk(n);
	assert_block(&out, &old);
	blocks_put_ok(&t, n, &out, 0, NULL);
	mt_quiet_uint_eq(mt_mem_calls(), 0);
	mt_mem_fail_at(0, 0);
	mt_quiet_uint_eq(t.cap, cap);
	mt_quiet_ptr_eq(t.slots, slots);
	mt_quiet_uint_eq(mt_blocks_count(&t), n + 2);
	b = blk(1002);
	assert_block(find(&t, 0), &b);
	b = blk(1001);
	assert_block(find(&t, UINT64_MAX), &b);

	/* Once memory is back, the put that failed grows the table. */
	b = blk(n + 1);
	blocks_put_ok(&t, n + 1, &b, 0, NULL);
	mt_quiet_uint_eq(t.cap, grown(cap));
	mt_quiet((uintptr_t)t.slots % 64 == 0, "slots off a cache line");
	for (uint64_t i = 1; i <= n + 1; i++) {
		mt_block_t w = blk(i);

		assert_block(find(&t, i), &w);
	}
	mt_quiet_uint_eq(mt_blocks_count(&t), n + 3);
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

#define CHURN_KEYS 6000
#define CHURN_OPS 200000

/* Blocks put before the churn, in a range no churn key falls in, so that
 * the table is over 1 MiB and mt_blocks_prefetch() really loads slots. */
#define BALLAST 70000
#define BALLAST_BASE 0x600000000000ull

START_TEST(test_blocks_random_churn_matches_reference)
{
	static uint64_t keys[CHURN_KEYS];
	static mt_block_t ref_blk[CHURN_KEYS];
	static unsigned char ref_has[CHURN_KEYS];
	mt_blocks_t t;
	int64_t before = mt_mem_outstanding();

	for (size_t i = 0; i < CHURN_KEYS; i++) {
		keys[i] = mt_test_churn_key(i);
		mt_quiet(keys[i] - BALLAST_BASE >= (uint64_t)BALLAST * 16,
			 "key %zu is inside the ballast", i);
	}
	for (int pass = 0; pass < 2; pass++) {
		size_t ref_count = 0, base = pass ? BALLAST : 0;

		mt_test_rng_state = 6 + (uint64_t)pass;
		memset(ref_has, 0, sizeof(ref_has));
		mt_blocks_init(&t);
		for (size_t j = 0; j < base; j++) {
			mt_block_t b = blk(j);

			blocks_put_ok(&t, BALLAST_BASE + j * 16, &b, 0, NULL);
		}
		if (pass)
			mt_quiet_uint_ge(t.cap * sizeof(mt_blocks_slot_t),
					 MT_BLOCKS_PREFETCH_MIN);
		for (int op = 0; op < CHURN_OPS; op++) {
			/* Phases that fill, churn and drain the table, over
			 * the whole pool or a small part of it. */
			static const unsigned put_pct[4] = { 70, 45, 15, 45 };
			static const unsigned take_pct[4] = { 15, 40, 70, 40 };
			int phase = op / 20000 % 4;
			size_t window = op / 10000 % 3 ? CHURN_KEYS : 256;
			size_t k = (size_t)(mt_test_rng() % window);
			uint64_t r = mt_test_rng() % 100, p = mt_test_rng();
			const mt_block_t *got;

			/* Hints, mostly for the key about to be used. */
			if (p % 3 == 0)
				mt_blocks_prefetch(&t, keys[k]);
			if (p % 7 == 0)
				mt_blocks_prefetch(&t,
						   keys[(p >> 8) % CHURN_KEYS]);
			if (r < put_pct[phase]) {
				mt_block_t b;

				/* Of every width: a quarter of them too
				 * wide for a slot in one field or more. */
				b.size = mt_test_rng() >> (mt_test_rng() % 4 ? 32 : p % 64);
				b.site = (uint32_t)(k << (p >> 8) % 16);
				b.thread = (uint32_t)(mt_test_rng() >> (p % 8 ? 57 : 32));
				b.up = (unsigned)(p >> 16 & 1);
				blocks_put_ok(&t, keys[k], &b, ref_has[k],
					      ref_has[k] ? &ref_blk[k] : NULL);
				if (!ref_has[k])
					ref_count++;
				ref_has[k] = 1;
				ref_blk[k] = b;
			} else if (r < put_pct[phase] + take_pct[phase]) {
				mt_block_t out;

				if (!ref_has[k]) {
					assert_take_absent(&t, keys[k]);
				} else {
					int hit = mt_blocks_take(&t, keys[k],
								 &out);

					mt_quiet(hit == 1,
						 "op %d: take %" PRIx64
						 " missed", op, keys[k]);
					assert_block(&out, &ref_blk[k]);
					ref_count--;
				}
				ref_has[k] = 0;
			} else {
				got = find(&t, keys[k]);
				mt_quiet((got != NULL) == ref_has[k],
					 "op %d: find %" PRIx64 " gave %p",
					 op, keys[k], (const void *)got);
				if (got)
					assert_block(got, &ref_blk[k]);
			}
			mt_quiet_uint_eq(mt_blocks_count(&t),
					 base + ref_count);
			if (op % 20000 && op != CHURN_OPS - 1)
				continue;
			/* Every block is still where find looks for it. */
			for (size_t i = 0; i < CHURN_KEYS; i++) {
				got = find(&t, keys[i]);
				mt_quiet((got != NULL) == ref_has[i],
					 "op %d: key %" PRIx64 " %s", op,
					 keys[i],
					 got ? "present" : "lost");
				if (got)
					assert_block(got, &ref_blk[i]);
			}
			for (size_t j = 0; j < base; j++) {
				mt_block_t w = blk(j);

				assert_block(find(&t, BALLAST_BASE +
								j * 16),
					     &w);
			}
		}
		mt_blocks_release(&t);
		mt_quiet_uint_eq(mt_blocks_count(&t), 0);
		mt_quiet_int_eq(mt_mem_outstanding(), before);
	}
}
END_TEST

START_TEST(test_blocks_take_keeps_wrapped_runs_findable)
{
	mt_blocks_t t;
	int64_t before = mt_mem_outstanding();

	/* Keys fill a table of 16 slots, or of 20 (not a power of two),
	 * to its limit; the first five are homed in its last two slots, so
	 * their run must wrap past the end.  They are taken one by one in
	 * the order a fixed seed gives. */
	mt_test_rng_state = 8;
	for (int round = 0; round < 4000; round++) {
		size_t cap = round % 2 ? 20 : 16;
		uint64_t ks[16];
		int n = 0, want;

		mt_blocks_init(&t);
		if (cap == 20) {
			/* Grown once, and emptied. */
			for (uint64_t i = 0; i < 13; i++) {
				mt_block_t b = blk(i);

				blocks_put_ok(&t, 1u << 20 | i, &b, 0, NULL);
			}
			for (uint64_t i = 0; i < 13; i++) {
				mt_block_t out;

				mt_quiet_int_eq(mt_blocks_take(&t, 1u << 20 | i,
							       &out), 1);
			}
		}
		want = (int)(cap * MT_BLOCKS_LOAD_PCT / 100);
		while (n < want) {
			uint64_t k = mt_test_rng() % 4096;
			/* The stored key is the address plus one. */
			size_t home = mt_blocks_home(k + 1, t.seed, cap);
			int dup = 0;

			for (int j = 0; j < n; j++)
				dup |= ks[j] == k;
			if (dup || (n < 5 && home < cap - 2))
				continue;
			ks[n++] = k;
		}
		for (int i = 0; i < n; i++) {
			mt_block_t b = blk(ks[i]);

			blocks_put_ok(&t, ks[i], &b, 0, NULL);
		}
		mt_quiet_uint_eq(t.cap, cap);
		mt_quiet_uint_eq(t.limit, (size_t)want);
		while (n) {
			int i = (int)(mt_test_rng() % (uint64_t)n);
			uint64_t gone = ks[i];
			mt_block_t out, w = blk(gone);

			mt_quiet_int_eq(mt_blocks_take(&t, gone, &out), 1);
			assert_block(&out, &w);
			ks[i] = ks[--n];
			mt_quiet_ptr_null(find(&t, gone));
			assert_take_absent(&t, gone);
			mt_quiet_uint_eq(mt_blocks_count(&t), (size_t)n);
			for (int j = 0; j < n; j++) {
				const mt_block_t *got;

				got = find(&t, ks[j]);
				w = blk(ks[j]);
				mt_quiet(got != NULL, "round %d: key %"
					 PRIu64 " lost", round, ks[j]);
				assert_block(got, &w);
			}
		}
		mt_blocks_release(&t);
		mt_quiet_int_eq(mt_mem_outstanding(), before);
	}
}
END_TEST

/* A prefetch is only a hint: on an empty table, and on one large enough
 * to be prefetched, for present, absent and the side slot's key. */
START_TEST(test_blocks_prefetch_changes_nothing)
{
	const uint64_t n = 100000;
	mt_blocks_t t;
	mt_block_t side = blk(7), out;
	int64_t before = mt_mem_outstanding();

	mt_blocks_init(&t);
	mt_blocks_prefetch(&t, 1);
	mt_blocks_prefetch(&t, 0);
	mt_blocks_prefetch(&t, UINT64_MAX);
	mt_quiet_uint_eq(mt_blocks_count(&t), 0);
	mt_quiet_ptr_null(find(&t, 1));
	mt_quiet_uint_eq(t.cap, 0);
	for (uint64_t k = 0; k < n; k++) {
		mt_block_t b = blk(k);

		mt_blocks_prefetch(&t, k * 16);
		blocks_put_ok(&t, k * 16, &b, 0, NULL);
		mt_blocks_prefetch(&t, k * 16 + 16);
	}
	blocks_put_ok(&t, UINT64_MAX, &side, 0, NULL);
	/* This table is over the 1 MiB below which nothing is
	 * prefetched. */
	mt_quiet_uint_ge(t.cap * sizeof(mt_blocks_slot_t), MT_BLOCKS_PREFETCH_MIN);
	/* No allocation either. */
	mt_mem_fail_at(1, 1);
	for (uint64_t k = 0; k < 2 * n; k++)
		mt_blocks_prefetch(&t, k * 8);
	mt_blocks_prefetch(&t, UINT64_MAX);
	mt_blocks_prefetch(&t, UINT64_MAX - 1);
	mt_blocks_prefetch(&t, 3);
	mt_quiet_uint_eq(mt_mem_calls(), 0);
	mt_mem_fail_at(0, 0);
	mt_quiet_uint_eq(mt_blocks_count(&t), n + 1);
	for (uint64_t k = 0; k < n; k++) {
		mt_block_t w = blk(k);

		assert_block(find(&t, k * 16), &w);
		mt_quiet_ptr_null(find(&t, k * 16 + 3));
	}
	assert_block(find(&t, UINT64_MAX), &side);
	/* Nor does it change what a take finds. */
	for (uint64_t k = 0; k < n; k += 2) {
		mt_block_t w = blk(k);

		mt_blocks_prefetch(&t, k * 16);
		mt_quiet_int_eq(mt_blocks_take(&t, k * 16, &out), 1);
		assert_block(&out, &w);
	}
	mt_quiet_uint_eq(mt_blocks_count(&t), n / 2 + 1);
	for (uint64_t k = 1; k < n; k += 2) {
		mt_block_t w = blk(k);

		assert_block(find(&t, k * 16), &w);
	}
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

Suite *mt_suite_blocks(void)
{
	Suite *s = suite_create("blocks");
	TCase *tc = tcase_create("blocks");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_blocks_put_find_take);
	tcase_add_test(tc, test_blocks_keys_zero_and_max);
	tcase_add_test(tc, test_blocks_fields_too_wide_for_a_slot_come_back_exact);
	tcase_add_test(tc, test_blocks_reserve_makes_room_for_a_wide_block);
	tcase_add_test(tc, test_blocks_grow_and_take_at_capacities_not_powers_of_two);
	tcase_add_test(tc, test_blocks_grow_keeps_blocks_and_aligns_slots);
	tcase_add_test(tc, test_blocks_failed_growth_leaves_table_unchanged);
	tcase_add_test(tc, test_blocks_reserve_makes_the_next_put_succeed);
	tcase_add_test(tc, test_blocks_random_churn_matches_reference);
	tcase_add_test(tc, test_blocks_take_keeps_wrapped_runs_findable);
	tcase_add_test(tc, test_blocks_prefetch_changes_nothing);
	tcase_add_test(tc, test_blocks_prefetches_are_in_the_binary);
	suite_add_tcase(s, tc);
	return s;
}
