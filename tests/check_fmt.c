/*
 * check_fmt: unit tests of mt_fmt: decimal and hex formatting at the
 * edges and at every length, and hex parsing, held to printf and to each
 * other.
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
#include "../common/mt_fmt.h"

static void assert_fmt(size_t n, const char *buf, const char *want)
{
	mt_quiet(n == strlen(want) && !memcmp(buf, want, n),
		 "formatted '%.*s', want '%s'", (int)n, buf, want);
}

START_TEST(test_fmt_u64_edges)
{
	char buf[MT_FMT_U64_MAX + 1];

	memset(buf, '#', sizeof(buf));
	assert_fmt(mt_fmt_u64(buf, 0), buf, "0");
	assert_fmt(mt_fmt_u64(buf, 7), buf, "7");
	assert_fmt(mt_fmt_u64(buf, 10), buf, "10");
	assert_fmt(mt_fmt_u64(buf, 1000000), buf, "1000000");
	assert_fmt(mt_fmt_u64(buf, INT64_MAX), buf, "9223372036854775807");
	memset(buf, '#', sizeof(buf));
	assert_fmt(mt_fmt_u64(buf, UINT64_MAX), buf, "18446744073709551615");
	/* The longest output fits MT_FMT_U64_MAX and writes nothing more. */
	mt_quiet_int_eq(buf[MT_FMT_U64_MAX], '#');
}
END_TEST

START_TEST(test_fmt_i64_edges)
{
	char buf[MT_FMT_I64_MAX + 1];

	memset(buf, '#', sizeof(buf));
	assert_fmt(mt_fmt_i64(buf, 0), buf, "0");
	assert_fmt(mt_fmt_i64(buf, -1), buf, "-1");
	assert_fmt(mt_fmt_i64(buf, 42), buf, "42");
	assert_fmt(mt_fmt_i64(buf, -10), buf, "-10");
	assert_fmt(mt_fmt_i64(buf, INT64_MAX), buf, "9223372036854775807");
	assert_fmt(mt_fmt_i64(buf, INT64_MIN + 1), buf, "-9223372036854775807");
	memset(buf, '#', sizeof(buf));
	assert_fmt(mt_fmt_i64(buf, INT64_MIN), buf, "-9223372036854775808");
	mt_quiet_int_eq(buf[MT_FMT_I64_MAX], '#');
}
END_TEST

START_TEST(test_fmt_hex_edges)
{
	char buf[MT_FMT_HEX_MAX + 1];

	memset(buf, '#', sizeof(buf));
	assert_fmt(mt_fmt_hex(buf, 0), buf, "0x0");
	assert_fmt(mt_fmt_hex(buf, 1), buf, "0x1");
	assert_fmt(mt_fmt_hex(buf, 0xf), buf, "0xf");
	assert_fmt(mt_fmt_hex(buf, 0x10), buf, "0x10");
	assert_fmt(mt_fmt_hex(buf, 0x7f3a5c001230ull), buf, "0x7f3a5c001230");
	assert_fmt(mt_fmt_hex(buf, 0x8000000000000000ull), buf,
		   "0x8000000000000000");
	memset(buf, '#', sizeof(buf));
	assert_fmt(mt_fmt_hex(buf, UINT64_MAX), buf, "0xffffffffffffffff");
	mt_quiet_int_eq(buf[MT_FMT_HEX_MAX], '#');
}
END_TEST

/* Each length's first and last values, and the lengths around them: the
 * formatters work eight digits at a time and drop the leading zeros. */
START_TEST(test_fmt_every_length_is_exact)
{
	char buf[MT_FMT_U64_MAX + 1], want[32];
	uint64_t p = 1;

	buf[MT_FMT_U64_MAX] = '#';
	for (int k = 0; k < 20; k++, p *= 10) {
		uint64_t vs[] = { p - 1, p, p + 1, p * 2 - 1, p * 9 };

		for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
			if (k == 19 && i == 4)
				continue; /* 9 * 10^19 is past UINT64_MAX */
			snprintf(want, sizeof(want), "%" PRIu64, vs[i]);
			assert_fmt(mt_fmt_u64(buf, vs[i]), buf, want);
			mt_quiet_int_eq(buf[MT_FMT_U64_MAX], '#');
		}
	}
	buf[MT_FMT_HEX_MAX] = '#';
	for (int k = 0; k <= 64; k++) {
		uint64_t top = k == 64 ? UINT64_MAX : ((uint64_t)1 << k) - 1;
		uint64_t vs[] = { top, top + 1, top / 3, top ^ (top >> 1) };

		for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
			snprintf(want, sizeof(want), "0x%" PRIx64, vs[i]);
			assert_fmt(mt_fmt_hex(buf, vs[i]), buf, want);
			mt_quiet_int_eq(buf[MT_FMT_HEX_MAX], '#');
		}
	}
}
END_TEST

START_TEST(test_fmt_parse_hex_accepts)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{ "0x0", 0 },
		{ "0x1", 1 },
		{ "0x00", 0 },
		{ "0xabcdef", 0xabcdef },
		{ "0xABCDEF", 0xabcdef },
		{ "0xAbCd09", 0xabcd09 },
		{ "0x7f3a5c001230", 0x7f3a5c001230ull },
		{ "0xffffffffffffffff", UINT64_MAX },
		{ "0xFFFFFFFFFFFFFFFF", UINT64_MAX },
		{ "0x0000000000000001", 1 },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 12345;

		mt_quiet(mt_fmt_parse_hex(ok[i].s, strlen(ok[i].s), &v) == 0,
			 "'%s' rejected", ok[i].s);
		mt_quiet(v == ok[i].v, "'%s' read as %" PRIx64, ok[i].s, v);
	}
	/* Only len bytes are read: what follows does not matter. */
	{
		uint64_t v = 0;

		mt_quiet_int_eq(mt_fmt_parse_hex("0x12zz", 4, &v), 0);
		mt_quiet_uint_eq(v, 0x12);
	}
}
END_TEST

START_TEST(test_fmt_parse_hex_rejects)
{
	static const char *const bad[] = {
		"", "0", "0x", "x1", "0X1", "00x1", "1234", "-0x1", "+0x1",
		" 0x1", "0x1 ", "0x 1", "0x+1", "0x-1", "0xg", "0x1g", "0x1.0",
		"0x10000000000000000", "0x00000000000000000", "0xfffffffffffffffff",
		"1x0",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;

		mt_quiet(mt_fmt_parse_hex(bad[i], strlen(bad[i]), &v) == -1,
			 "'%s' accepted", bad[i]);
		mt_quiet(v == 12345, "'%s' changed the output", bad[i]);
	}
	/* A NUL byte inside the length is not a digit. */
	{
		uint64_t v = 12345;

		mt_quiet_int_eq(mt_fmt_parse_hex("0x1\0002", 5, &v), -1);
		mt_quiet_uint_eq(v, 12345);
	}
}
END_TEST

START_TEST(test_fmt_hex_round_trips)
{
	char buf[MT_FMT_HEX_MAX + 1];

	mt_test_rng_state = 1;
	buf[MT_FMT_HEX_MAX] = '#';
	for (int i = 0; i < 100000; i++) {
		uint64_t v = mt_test_rng(), back;
		size_t n;

		v >>= mt_test_rng() % 64;
		back = ~v;
		n = mt_fmt_hex(buf, v);
		/* Whatever its length, nothing past the room it may use. */
		mt_quiet_int_eq(buf[MT_FMT_HEX_MAX], '#');

		mt_quiet_int_eq(mt_fmt_parse_hex(buf, n, &back), 0);
		mt_quiet_uint_eq(back, v);
	}
}
END_TEST

START_TEST(test_fmt_decimal_matches_printf)
{
	char buf[MT_FMT_U64_MAX + 1], want[32];

	mt_test_rng_state = 2;
	buf[MT_FMT_U64_MAX] = '#';
	for (int i = 0; i < 100000; i++) {
		uint64_t u = mt_test_rng(), w;
		int64_t s;
		size_t n;

		u >>= mt_test_rng() % 64;
		w = mt_test_rng();
		s = (int64_t)(w >> (mt_test_rng() % 64));

		n = mt_fmt_u64(buf, u);
		snprintf(want, sizeof(want), "%" PRIu64, u);
		assert_fmt(n, buf, want);
		n = mt_fmt_i64(buf, s);
		snprintf(want, sizeof(want), "%" PRId64, s);
		assert_fmt(n, buf, want);
		mt_quiet_int_eq(buf[MT_FMT_U64_MAX], '#');
	}
}
END_TEST

Suite *mt_suite_fmt(void)
{
	Suite *s = suite_create("fmt");
	TCase *tc = tcase_create("fmt");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fmt_u64_edges);
	tcase_add_test(tc, test_fmt_i64_edges);
	tcase_add_test(tc, test_fmt_hex_edges);
	tcase_add_test(tc, test_fmt_every_length_is_exact);
	tcase_add_test(tc, test_fmt_parse_hex_accepts);
	tcase_add_test(tc, test_fmt_parse_hex_rejects);
	tcase_add_test(tc, test_fmt_hex_round_trips);
	tcase_add_test(tc, test_fmt_decimal_matches_printf);
	suite_add_tcase(s, tc);
	return s;
}
