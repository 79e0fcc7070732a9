/*
 * check_map: unit tests of mt_map: insert/find/remove, the keys 0 and
 * UINT64_MAX, growth and its failure, and a long random churn held to a
 * plain reference table.
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
#include "../analyzer/base/mt_map.h"
#include "../analyzer/base/mt_mem.h"

typedef struct {
	uint64_t a, b;
	uint32_t c;
} value_t;

START_TEST(test_map_insert_find_remove)
{
	mt_map_t m;
	value_t *v, out;
	int created = -1;
	int64_t before = mt_mem_outstanding();

	mt_map_init(&m, sizeof(value_t));
	mt_quiet_uint_eq(mt_map_count(&m), 0);
	mt_quiet_ptr_null(mt_map_find(&m, 42));
	mt_quiet_int_eq(mt_map_remove(&m, 42, &out), 0);

	mt_quiet_int_eq(mt_map_upsert(&m, 42, (void **)&v, &created), MT_OK);
	mt_quiet_int_eq(created, 1);
	mt_quiet_uint_eq(v->a, 0);
	mt_quiet_uint_eq(v->b, 0);
	mt_quiet_uint_eq(v->c, 0);
	v->a = 1;
	v->b = 2;
	v->c = 3;
	mt_quiet_int_eq(mt_map_upsert(&m, 42, (void **)&v, &created), MT_OK);
	mt_quiet_int_eq(created, 0);
	mt_quiet_uint_eq(v->a, 1);
	mt_quiet_uint_eq(mt_map_count(&m), 1);
	v = mt_map_find(&m, 42);
	mt_quiet_ptr_nonnull(v);
	mt_quiet_uint_eq(v->c, 3);
	mt_quiet_ptr_null(mt_map_find(&m, 43));

	memset(&out, 0, sizeof(out));
	mt_quiet_int_eq(mt_map_remove(&m, 42, &out), 1);
	mt_quiet_uint_eq(out.a, 1);
	mt_quiet_uint_eq(out.b, 2);
	mt_quiet_uint_eq(out.c, 3);
	mt_quiet_uint_eq(mt_map_count(&m), 0);
	mt_quiet_ptr_null(mt_map_find(&m, 42));
	mt_quiet_int_eq(mt_map_remove(&m, 42, NULL), 0);

	/* A re-inserted key starts from zero again. */
	mt_quiet_int_eq(mt_map_upsert(&m, 42, (void **)&v, NULL), MT_OK);
	mt_quiet_uint_eq(v->a, 0);
	mt_quiet_int_eq(mt_map_remove(&m, 42, NULL), 1);
	mt_map_release(&m);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(test_map_keys_zero_and_max)
{
	mt_map_t m;
	uint64_t *v, key, out;
	size_t pos = 0;
	int created, seen = 0;
	int64_t before = mt_mem_outstanding();

	mt_map_init(&m, sizeof(uint64_t));
	mt_quiet_ptr_null(mt_map_find(&m, 0));
	mt_quiet_ptr_null(mt_map_find(&m, UINT64_MAX));
	mt_quiet_int_eq(mt_map_remove(&m, UINT64_MAX, NULL), 0);
	/* UINT64_MAX alone, in an empty table. */
	mt_quiet_int_eq(mt_map_upsert(&m, UINT64_MAX, (void **)&v, &created),
			MT_OK);
	mt_quiet_int_eq(created, 1);
	mt_quiet_uint_eq(*v, 0);
	*v = 111;
	mt_quiet_uint_eq(mt_map_count(&m), 1);
	mt_quiet_ptr_null(mt_map_find(&m, 0));
	mt_quiet_int_eq(mt_map_iter(&m, &pos, &key, (void **)&v), 1);
	mt_quiet_uint_eq(key, UINT64_MAX);
	mt_quiet_uint_eq(*v, 111);
	mt_quiet_int_eq(mt_map_iter(&m, &pos, &key, (void **)&v), 0);

	mt_quiet_int_eq(mt_map_upsert(&m, 0, (void **)&v, &created), MT_OK);
	mt_quiet_int_eq(created, 1);
	*v = 222;
	mt_quiet_int_eq(mt_map_upsert(&m, UINT64_MAX - 1, (void **)&v, NULL),
			MT_OK);
	*v = 333;
	mt_quiet_int_eq(mt_map_upsert(&m, UINT64_MAX, (void **)&v, &created),
			MT_OK);
	mt_quiet_int_eq(created, 0);
	mt_quiet_uint_eq(*v, 111);
	mt_quiet_uint_eq(mt_map_count(&m), 3);
	mt_quiet_uint_eq(*(uint64_t *)mt_map_find(&m, 0), 222);
	mt_quiet_uint_eq(*(uint64_t *)mt_map_find(&m, UINT64_MAX - 1), 333);
	mt_quiet_uint_eq(*(uint64_t *)mt_map_find(&m, UINT64_MAX), 111);
	mt_quiet_ptr_null(mt_map_find(&m, 1));

	for (pos = 0; mt_map_iter(&m, &pos, &key, (void **)&v);) {
		uint64_t want = key == 0 ? 222 :
				key == UINT64_MAX - 1 ? 333 :
				key == UINT64_MAX ? 111 : 0;

		mt_quiet(want, "iter gave key %" PRIu64, key);
		mt_quiet_uint_eq(*v, want);
		seen |= key == 0 ? 1 : key == UINT64_MAX ? 4 : 2;
	}
	mt_quiet_int_eq(seen, 7);

	mt_quiet_int_eq(mt_map_remove(&m, UINT64_MAX, &out), 1);
	mt_quiet_uint_eq(out, 111);
	mt_quiet_ptr_null(mt_map_find(&m, UINT64_MAX));
	mt_quiet_int_eq(mt_map_remove(&m, 0, &out), 1);
	mt_quiet_uint_eq(out, 222);
	mt_quiet_ptr_null(mt_map_find(&m, 0));
	mt_quiet_uint_eq(mt_map_count(&m), 1);
	mt_map_release(&m);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(test_map_grows_and_keeps_values)
{
	mt_map_t m;
	size_t caps = 0, last_cap = 0;
	int64_t before = mt_mem_outstanding();

	mt_map_init(&m, 3); /* an odd value size */
	for (uint64_t i = 0; i < 100000; i++) {
		unsigned char *v;
		int created;

		/* Pointer-like keys: 16-byte aligned, in a few clusters. */
		mt_quiet_int_eq(mt_map_upsert(&m, 0x7f0000000000ull * (i % 3) +
							   i * 16,
					       (void **)&v, &created),
				 MT_OK);
		mt_quiet_int_eq(created, 1);
		mt_quiet(!v[0] && !v[1] && !v[2], "new value not zeroed");
		v[0] = (unsigned char)i;
		v[1] = (unsigned char)(i >> 8);
		v[2] = (unsigned char)(i >> 16);
		if (m.cap != last_cap) {
			caps++;
			last_cap = m.cap;
		}
		/* The load stays under 7/10. */
		mt_quiet_uint_le(m.count * 10, m.cap * 7);
	}
	mt_quiet_uint_ge(caps, 10);
	mt_quiet_uint_eq(mt_map_count(&m), 100000);
	for (uint64_t i = 0; i < 100000; i++) {
		unsigned char *v = mt_map_find(&m, 0x7f0000000000ull * (i % 3) +
							   i * 16);

		mt_quiet(v != NULL, "key %" PRIu64 " lost in growth", i);
		mt_quiet_uint_eq(v[0] | v[1] << 8 | v[2] << 16, i & 0xffffff);
	}
	mt_quiet_ptr_null(mt_map_find(&m, 8));
	mt_map_release(&m);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(test_map_failed_growth_leaves_map_unchanged)
{
	mt_map_t m;
	uint64_t *v;
	size_t cap;
	uint64_t n = 0;
	int64_t before = mt_mem_outstanding();

	mt_map_init(&m, sizeof(uint64_t));
	mt_quiet_int_eq(mt_map_upsert(&m, n, (void **)&v, NULL), MT_OK);
	*v = n + 1000;
	cap = m.cap;
	/* Fill up to the next growth. */
	while ((m.count + 1) * 10 <= m.cap * 7) {
		n++;
		mt_quiet_int_eq(mt_map_upsert(&m, n, (void **)&v, NULL), MT_OK);
		*v = n + 1000;
	}
	mt_quiet_uint_eq(m.cap, cap);
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_map_upsert(&m, n + 1, (void **)&v, NULL), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_uint_eq(m.cap, cap);
	mt_quiet_uint_eq(mt_map_count(&m), n + 1);
	mt_quiet_ptr_null(mt_map_find(&m, n + 1));
	for (uint64_t i = 0; i <= n; i++) {
		v = mt_map_find(&m, i);
		mt_quiet_ptr_nonnull(v);
		mt_quiet_uint_eq(*v, i + 1000);
	}
	/* The side slot of UINT64_MAX fails the same way. */
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_map_upsert(&m, UINT64_MAX, (void **)&v, NULL),
			MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_ptr_null(mt_map_find(&m, UINT64_MAX));
	mt_quiet_uint_eq(mt_map_count(&m), n + 1);
	/* And an existing key needs no allocation at all. */
	mt_mem_fail_at(1, 1);
	mt_quiet_int_eq(mt_map_upsert(&m, 0, (void **)&v, NULL), MT_OK);
	mt_mem_fail_at(0, 0);
	mt_quiet_uint_eq(*v, 1000);
	mt_map_release(&m);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

#define CHURN_KEYS 6000
#define CHURN_OPS 200000

START_TEST(test_map_random_churn_matches_reference)
{
	static uint64_t keys[CHURN_KEYS], ref_val[CHURN_KEYS];
	static unsigned char ref_has[CHURN_KEYS], seen[CHURN_KEYS];
	mt_map_t m;
	size_t ref_count = 0;
	int64_t before = mt_mem_outstanding();

	mt_test_rng_state = 3;
	for (size_t i = 0; i < CHURN_KEYS; i++)
		keys[i] = mt_test_churn_key(i);
	memset(ref_has, 0, sizeof(ref_has));
	mt_map_init(&m, sizeof(value_t));
	for (int op = 0; op < CHURN_OPS; op++) {
		/* Phases that fill, churn and drain the map, over the whole
		 * pool or a small part of it. */
		static const unsigned insert_pct[4] = { 70, 45, 15, 45 };
		static const unsigned remove_pct[4] = { 15, 40, 70, 40 };
		int phase = op / 20000 % 4;
		size_t window = op / 10000 % 3 ? CHURN_KEYS : 256;
		size_t k = (size_t)(mt_test_rng() % window);
		uint64_t r = mt_test_rng() % 100;
		value_t *v, out;
		int created;

		if (r < insert_pct[phase]) {
			mt_quiet_int_eq(mt_map_upsert(&m, keys[k], (void **)&v,
						       &created),
					 MT_OK);
			mt_quiet(created == !ref_has[k],
				 "op %d: upsert %" PRIx64 " created %d",
				 op, keys[k], created);
			if (created) {
				mt_quiet_uint_eq(v->a | v->b | v->c, 0);
				ref_count++;
			} else {
				mt_quiet_uint_eq(v->a, ref_val[k]);
			}
			ref_has[k] = 1;
			ref_val[k] = mt_test_rng();
			v->a = ref_val[k];
			v->b = ~ref_val[k];
			v->c = (uint32_t)k;
		} else if (r < insert_pct[phase] + remove_pct[phase]) {
			int got = mt_map_remove(&m, keys[k], &out);

			mt_quiet(got == ref_has[k],
				 "op %d: remove %" PRIx64 " gave %d", op,
				 keys[k], got);
			if (got) {
				mt_quiet_uint_eq(out.a, ref_val[k]);
				mt_quiet_uint_eq(out.b, ~ref_val[k]);
				mt_quiet_uint_eq(out.c, k);
				ref_count--;
			}
			ref_has[k] = 0;
		} else {
			v = mt_map_find(&m, keys[k]);
			mt_quiet((v != NULL) == ref_has[k],
				 "op %d: find %" PRIx64 " gave %p", op,
				 keys[k], (void *)v);
			if (v)
				mt_quiet_uint_eq(v->a, ref_val[k]);
		}
		mt_quiet_uint_eq(mt_map_count(&m), ref_count);
		if (op % 20000 == 0 || op == CHURN_OPS - 1) {
			/* Every key is still where find looks for it. */
			for (size_t i = 0; i < CHURN_KEYS; i++) {
				v = mt_map_find(&m, keys[i]);
				mt_quiet((v != NULL) == ref_has[i],
					 "op %d: key %" PRIx64 " %s", op,
					 keys[i], v ? "present" : "lost");
				if (v)
					mt_quiet_uint_eq(v->c, i);
			}
		}
	}
	/* Iteration visits each entry once. */
	{
		size_t pos = 0, n = 0;
		uint64_t key;
		value_t *v;

		memset(seen, 0, sizeof(seen));
		while (mt_map_iter(&m, &pos, &key, (void **)&v)) {
			ck_assert_uint_lt(v->c, CHURN_KEYS);
			mt_quiet_uint_eq(keys[v->c], key);
			ck_assert(ref_has[v->c]);
			ck_assert(!seen[v->c]);
			seen[v->c] = 1;
			n++;
		}
		mt_quiet_uint_eq(n, ref_count);
	}
	mt_map_release(&m);
	mt_quiet_uint_eq(mt_map_count(&m), 0);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(test_map_removal_keeps_wrapped_runs_findable)
{
	mt_map_t m;
	uint64_t *v;

	/* A small table filled to its limit, emptied key by key in every
	 * order a fixed seed gives: runs wrap past the table's end. */
	mt_test_rng_state = 4;
	for (int round = 0; round < 2000; round++) {
		uint64_t ks[11];
		int n = 11;

		mt_map_init(&m, sizeof(uint64_t));
		for (int i = 0; i < n; i++) {
			ks[i] = mt_test_rng() % 64;
			mt_quiet_int_eq(mt_map_upsert(&m, ks[i], (void **)&v, NULL),
					MT_OK);
			*v = ks[i] * 3;
		}
		mt_quiet_uint_eq(m.cap, 16);
		while (n) {
			int i = (int)(mt_test_rng() % (uint64_t)n);
			uint64_t gone = ks[i];

			mt_map_remove(&m, gone, NULL);
			for (int j = 0; j < n; j++)
				if (ks[j] == gone)
					ks[j--] = ks[--n];
			mt_quiet_ptr_null(mt_map_find(&m, gone));
			for (int j = 0; j < n; j++) {
				v = mt_map_find(&m, ks[j]);
				mt_quiet(v != NULL, "round %d: key %" PRIu64
					 " lost", round, ks[j]);
				mt_quiet_uint_eq(*v, ks[j] * 3);
			}
		}
		mt_quiet_uint_eq(mt_map_count(&m), 0);
		mt_map_release(&m);
	}
}
END_TEST

Suite *mt_suite_map(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tcase_create("map");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_map_insert_find_remove);
	tcase_add_test(tc, test_map_keys_zero_and_max);
	tcase_add_test(tc, test_map_grows_and_keeps_values);
	tcase_add_test(tc, test_map_failed_growth_leaves_map_unchanged);
	tcase_add_test(tc, test_map_random_churn_matches_reference);
	tcase_add_test(tc, test_map_removal_keeps_wrapped_runs_findable);
	suite_add_tcase(s, tc);
	return s;
}
