/*
 * check_fmt: unit tests of mt_fmt: decimal and hex formatting at the
 * edges and at every length, and hex parsing, held to printf and to each
 * other; and the collector's block lines (mt_lines) held byte for byte
 * to mt_jsonl_block_line(), the reference.
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
#include "../collector/mt_lines.h"
#include "../common/mt_event.h"
#include "../common/mt_fmt.h"
#include "../common/mt_jsonl.h"

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

/* A number of 0 to 20 digits' size, the count drawn first, with the
 * edges (0, powers of ten and one less, UINT64_MAX) often. */
static uint64_t any_u64(void)
{
	int digits = (int)(mt_test_rng() % 21);
	uint64_t v = 0;

	switch (mt_test_rng() % 8) {
	case 0:
		return 0;
	case 1:
		for (v = 1; digits-- > 1 && v <= UINT64_MAX / 10;)
			v *= 10;
		return v - (mt_test_rng() & 1);
	case 2:
		return UINT64_MAX - (mt_test_rng() % 3);
	default:
		while (digits-- > 0 && v <= UINT64_MAX / 10)
			v = v * 10 + mt_test_rng() % 10;
		return v;
	}
}

/* A ptr of 0 to 16 hex digits. */
static uint64_t any_ptr(void)
{
	unsigned bits = (unsigned)(mt_test_rng() % 65);

	return bits == 64 ? mt_test_rng() : mt_test_rng() & ((1ull << bits) - 1);
}

/* The reference line of record b (word w): the event written out field
 * by field as format.md has each kind carry them. */
static size_t reference_line(char *dst, uint64_t seq, const mt_ring_block_t *b,
			     uint64_t w, uint64_t t)
{
	mt_jsonl_block_t ev = { 0 };
	char tail[MT_JSONL_BLOCK_TAIL_MAX];
	size_t tail_len;

	ev.kind = (mt_kind_t)MT_RING_ARG_A(w);
	ev.fn = (mt_fn_t)MT_RING_ARG_B(w);
	ev.tid = MT_RING_VALUE(w);
	ev.ptr = b->ptr;
	ev.new_ptr = b->new_ptr;
	ev.size = b->size;
	if (ev.fn == MT_FN_API)
		ev.allocator_id = b->allocator_id;
	else
		ev.align = b->align;
	ev.fail_at = b->fail_at;
	ev.has_ptr = ev.kind != MT_KIND_ALLOC_FAIL;
	ev.has_size = ev.kind != MT_KIND_FREE;
	ev.has_new_ptr = ev.kind == MT_KIND_REMAP;
	tail_len = mt_jsonl_block_tail(tail, &ev);
	return mt_jsonl_block_line(dst, seq, &ev, b->stack, tail, tail_len, t);
}

/*
 * Every block kind and fn (and none), every field at its edges and at
 * every length, a thread's run of events and interleaved threads, t
 * repeated, seq counted up across each added digit and jumping back (an
 * exec's stop taken back): mt_lines_block() writes the reference's
 * bytes, and nothing past MT_LINES_MAX.
 */
START_TEST(test_collector_lines_match_the_reference_formatter)
{
	static const mt_kind_t kinds[] = { MT_KIND_ALLOC, MT_KIND_FREE, MT_KIND_RESIZE,
					   MT_KIND_REMAP, MT_KIND_ALLOC_FAIL };
	static const uint64_t seq_starts[] = { 1, 8, 98, 999990, 99999999999ull,
					       UINT64_MAX - 3000 };
	char got[MT_LINES_MAX + 1], want[MT_JSONL_BLOCK_MAX];
	mt_lines_t l;
	uint64_t seq = 0, t = 0, tid = 1234;
	int fast = 0;

	mt_test_rng_state = 34;
	mt_lines_init(&l);
	for (int i = 0; i < 200000; i++) {
		mt_ring_block_t b = { 0 };
		mt_kind_t kind = kinds[mt_test_rng() % 5];
		unsigned fn = (unsigned)(mt_test_rng() % (MT_FN_COUNT + 1));
		uint64_t w;
		size_t n, m;

		/* Mostly the next seq; now and then a jump, back or ahead. */
		if (i % 5000 == 0)
			seq = seq_starts[(i / 5000) % 6];
		else if (mt_test_rng() % 1000 == 0)
			seq -= mt_test_rng() % (seq < 50 ? seq : 50);
		else
			seq++;
		if (mt_test_rng() % 4 == 0) /* t: repeated, or up, or anything */
			t = mt_test_rng() % 8 ? t + 1000 * (mt_test_rng() % 5000)
					      : any_u64() / 1000 * 1000;
		if (mt_test_rng() % 50 == 0)
			t = any_u64(); /* not whole microseconds: never made, still exact */
		if (mt_test_rng() % 8 == 0)
			tid = mt_test_rng() % 3 ? 1000 + mt_test_rng() % 4
					       : (uint32_t)any_u64();
		b.ptr = any_ptr();
		b.new_ptr = any_ptr();
		b.size = mt_test_rng() % 2 ? mt_test_rng() % 5000 : any_u64();
		b.stack = mt_test_rng() % 4 ? mt_test_rng() % 100000 : any_u64();
		b.align = mt_test_rng() % 8 ? 0 : any_u64(); /* or allocator_id */
		b.fail_at = mt_test_rng() % 16 ? 0 : any_u64();
		w = MT_RING_WORD(MT_REC_BLOCK, 1, kind, fn, tid);
		b.word = w;

		memset(got, '#', sizeof(got));
		n = mt_lines_block(&l, got, seq, &b, w, t);
		m = reference_line(want, seq, &b, w, t);
		mt_quiet(n == m && !memcmp(got, want, m),
			 "event %d: wrote\n%.*s\nwant\n%.*s", i, (int)n, got, (int)m, want);
		mt_quiet_int_eq(got[MT_LINES_MAX], '#');
		fast += !b.align && !b.fail_at && fn != MT_FN_API &&
			kind != MT_KIND_ALLOC_FAIL;
	}
	/* The fast path was what most of them took. */
	ck_assert_int_gt(fast, 50000);
}
END_TEST

/* A record of another type (never published as a block): no line. */
START_TEST(test_collector_lines_write_nothing_for_a_record_that_is_no_block)
{
	mt_ring_block_t b = { 0 };
	char buf[MT_LINES_MAX];
	mt_lines_t l;

	mt_lines_init(&l);
	b.word = MT_RING_WORD(MT_REC_BLOCK, 1, MT_KIND_STACK, MT_FN_MALLOC, 1);
	ck_assert_uint_eq(mt_lines_block(&l, buf, 1, &b, b.word, 1000), 0);
	b.word = MT_RING_WORD(MT_REC_BLOCK, 1, MT_KIND_COUNT + 3, MT_FN_MALLOC, 1);
	ck_assert_uint_eq(mt_lines_block(&l, buf, 1, &b, b.word, 1000), 0);
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
	tcase_add_test(tc, test_collector_lines_match_the_reference_formatter);
	tcase_add_test(tc, test_collector_lines_write_nothing_for_a_record_that_is_no_block);
	suite_add_tcase(s, tc);
	return s;
}
