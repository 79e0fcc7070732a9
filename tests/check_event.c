/*
 * check_event: unit tests of mt_event: the kind and function name
 * tables, both ways.
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
#include "../common/mt_event.h"

START_TEST(test_event_kind_names_round_trip)
{
	for (int k = 0; k < MT_KIND_COUNT; k++) {
		const char *name = mt_event_kind_name((mt_kind_t)k);

		mt_quiet_ptr_nonnull(name);
		mt_quiet_int_eq(mt_event_kind_parse(name, strlen(name)), k);
		for (int j = 0; j < k; j++)
			ck_assert_str_ne(name, mt_event_kind_name((mt_kind_t)j));
	}
	ck_assert_str_eq(mt_event_kind_name(MT_KIND_TRACE_START), "trace.start");
	ck_assert_str_eq(mt_event_kind_name(MT_KIND_ALLOC_FAIL), "alloc.fail");
	ck_assert_str_eq(mt_event_kind_name(MT_KIND_TRACE_STOP), "trace.stop");
	mt_quiet_ptr_null(mt_event_kind_name(MT_KIND_COUNT));
	mt_quiet_ptr_null(mt_event_kind_name((mt_kind_t)-1));
}
END_TEST

/* The fixed layout sizes its buffers from the longest names: a new or
 * renamed kind or fn that outgrows them must fail here, not overrun. */
START_TEST(test_event_names_fit_their_longest)
{
	size_t kind_max = 0, fn_max = 0;

	for (int k = 0; k < MT_KIND_COUNT; k++)
		if (strlen(mt_event_kind_name((mt_kind_t)k)) > kind_max)
			kind_max = strlen(mt_event_kind_name((mt_kind_t)k));
	for (int f = 0; f < MT_FN_COUNT; f++)
		if (strlen(mt_event_fn_name((mt_fn_t)f)) > fn_max)
			fn_max = strlen(mt_event_fn_name((mt_fn_t)f));
	/* Equal, not just at most: the constants say what the longest is. */
	mt_quiet_uint_eq(kind_max, MT_EVENT_KIND_NAME_MAX);
	mt_quiet_uint_eq(fn_max, MT_EVENT_FN_NAME_MAX);
}
END_TEST

START_TEST(test_event_kind_parse_rejects_others)
{
	static const char *const bad[] = {
		"", "Alloc", "ALLOC", "alloc ", " alloc", "alloc.", "allocfail",
		"alloc_fail", "trace", "trace.", "trace.begin", "frames", "stacks",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		mt_quiet(mt_event_kind_parse(bad[i], strlen(bad[i])) ==
				      MT_KIND_UNKNOWN,
			      "'%s' parsed as a kind", bad[i]);
	/* The length decides, not a NUL: a prefix is its own word. */
	mt_quiet_int_eq(mt_event_kind_parse("allocator", 5), MT_KIND_ALLOC);
	mt_quiet_int_eq(mt_event_kind_parse("alloc.fail", 5), MT_KIND_ALLOC);
	mt_quiet_int_eq(mt_event_kind_parse("alloc\0", 6), MT_KIND_UNKNOWN);
}
END_TEST

START_TEST(test_event_fn_names_round_trip)
{
	static const char *const want[MT_FN_COUNT] = {
		"malloc", "calloc", "realloc", "reallocarray", "posix_memalign",
		"aligned_alloc", "memalign", "valloc", "pvalloc", "api", "free",
	};

	for (int f = 0; f < MT_FN_COUNT; f++) {
		const char *name = mt_event_fn_name((mt_fn_t)f);

		mt_quiet_ptr_nonnull(name);
		ck_assert_str_eq(name, want[f]);
		mt_quiet_int_eq(mt_event_fn_parse(name, strlen(name)), f);
		mt_quiet_int_eq(mt_event_fn_allocates((mt_fn_t)f), f != MT_FN_FREE);
	}
	mt_quiet_ptr_null(mt_event_fn_name(MT_FN_COUNT));
	mt_quiet_int_eq(mt_event_fn_parse("mmap", 4), MT_FN_UNKNOWN);
	mt_quiet_int_eq(mt_event_fn_parse("Malloc", 6), MT_FN_UNKNOWN);
	mt_quiet_int_eq(mt_event_fn_parse("", 0), MT_FN_UNKNOWN);
	mt_quiet_int_eq(mt_event_fn_allocates(MT_FN_UNKNOWN), 0);
}
END_TEST

Suite *mt_suite_event(void)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("event");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_event_kind_names_round_trip);
	tcase_add_test(tc, test_event_names_fit_their_longest);
	tcase_add_test(tc, test_event_kind_parse_rejects_others);
	tcase_add_test(tc, test_event_fn_names_round_trip);
	suite_add_tcase(s, tc);
	return s;
}
