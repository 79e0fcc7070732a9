/*
 * check_units: unit tests of mt_units_parse_count(), the one parser of
 * every count the CLI takes (--top, --index, run-line's and oom-fail's
 * numbers, memtrace-run's options through run-options): digits only, no
 * sign, no junk, at most 64 bits, and *out untouched on refusal.  The
 * sizes and percentages are check_gate's.
 */
#include <inttypes.h>
#include <stdint.h>

#include "mt_test.h"
#include "../analyzer/base/mt_units.h"

START_TEST(test_count_takes_digits_up_to_64_bits)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "0", 0 }, { "7", 7 }, { "0010", 10 }, { "999999999", 999999999 },
		{ "18446744073709551615", UINT64_MAX },
		{ "000000000000000000000000000001", 1 },
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 12345;

		mt_quiet(mt_units_parse_count(good[i].s, &v) == 0,
			 "'%s' refused", good[i].s);
		mt_quiet(v == good[i].v, "'%s' is %" PRIu64 ", want %" PRIu64,
			 good[i].s, v, good[i].v);
	}
}
END_TEST

START_TEST(test_count_refuses_empty_signs_junk_and_overflow)
{
	static const char *const bad[] = {
		"", " ", " 1", "1 ", "+1", "-1", "-0", "1x", "x1", "0x10",
		"1.5", "1e3", "10K", "1,000", "18446744073709551616",
		"99999999999999999999", "1\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;

		mt_quiet(mt_units_parse_count(bad[i], &v) == -1 && v == 12345,
			 "'%s' accepted as %" PRIu64, bad[i], v);
	}
}
END_TEST

Suite *mt_suite_units(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("count");

	tcase_add_test(tc, test_count_takes_digits_up_to_64_bits);
	tcase_add_test(tc, test_count_refuses_empty_signs_junk_and_overflow);
	suite_add_tcase(s, tc);
	return s;
}
