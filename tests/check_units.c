/*
 * check_units: unit tests of the analyzer's building blocks, one Check
 * test per behaviour:
 *
 *   mt_fmt     decimal and hex formatting at the edges, hex parsing
 *   mt_event   the kind and function name tables, both ways
 *   mt_buf     the size limit, failed appends, JSON string escaping
 *   mt_map     insert/find/remove, the keys 0 and UINT64_MAX, growth, and
 *              a long random churn held to a plain reference table
 *   mt_blocks  the same for the live-block table, plus its slots' cache
 *              line alignment and its failed growth
 *   mt_reader  line splitting, over-long lines, the read chunk,
 *              trailing NUL padding, and open errors
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
#include "../analyzer/mt_analysis.h"
#include "../analyzer/mt_blocks.h"
#include "../analyzer/mt_buf.h"
#include "../analyzer/mt_error.h"
#include "../analyzer/mt_heap.h"
#include "../analyzer/mt_map.h"
#include "../analyzer/mt_mem.h"
#include "../analyzer/mt_reader.h"
#include "../common/mt_event.h"
#include "../common/mt_fmt.h"
#include "../common/mt_utf8.h"

/* The reader's read(2) size (mt_reader.c): lines are put across it. */
#define READER_CHUNK MT_READER_CHUNK

/* splitmix64: a fixed seed, so a failure reproduces. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- mt_fmt ---- */

static void assert_fmt(size_t n, const char *buf, const char *want)
{
	mt_quiet(n == strlen(want) && !memcmp(buf, want, n),
		 "formatted '%.*s', want '%s'", (int)n, buf, want);
}

/* What a strict decoder accepts (RFC 3629), byte for byte: the shortest
 * form only, no surrogates, nothing above U+10FFFF, no cut sequence. */
START_TEST(utf8_accepts_exactly_rfc_3629)
{
	static const struct {
		const char *s;
		int valid;
	} cases[] = {
		{ "", 1 }, { "plain ascii", 1 },
		{ "\xc2\x80", 1 }, { "\xdf\xbf", 1 },             /* U+0080, U+07FF */
		{ "\xe0\xa0\x80", 1 }, { "\xef\xbf\xbf", 1 },     /* U+0800, U+FFFF */
		{ "\xed\x9f\xbf", 1 }, { "\xee\x80\x80", 1 },     /* around the surrogates */
		{ "\xf0\x90\x80\x80", 1 }, { "\xf4\x8f\xbf\xbf", 1 }, /* U+10000, U+10FFFF */
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 1 },
		{ "\xc0\x80", 0 }, { "\xc1\xbf", 0 },             /* overlong 2 */
		{ "\xe0\x80\x80", 0 }, { "\xe0\x9f\xbf", 0 },     /* overlong 3 */
		{ "\xf0\x80\x80\x80", 0 }, { "\xf0\x8f\xbf\xbf", 0 }, /* overlong 4 */
		{ "\xed\xa0\x80", 0 }, { "\xed\xbf\xbf", 0 },     /* surrogates */
		{ "\xf4\x90\x80\x80", 0 }, { "\xf5\x80\x80\x80", 0 }, /* > U+10FFFF */
		{ "\xf8\x88\x80\x80\x80", 0 }, { "\xff", 0 }, { "\xfe", 0 },
		{ "\x80", 0 }, { "\xbf", 0 },                     /* lone continuation */
		{ "\xc3", 0 }, { "\xe2\x82", 0 }, { "\xf0\x9f\x98", 0 }, /* cut */
		{ "\xc3(", 0 }, { "\xe2\x28\xa1", 0 }, { "a\xc3\xa9\xa9", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		mt_quiet(mt_utf8_valid(cases[i].s, strlen(cases[i].s)) == cases[i].valid,
			 "case %zu: want %s", i, cases[i].valid ? "valid" : "invalid");
	/* The length of each sequence, and 0 past the buffer's end. */
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"a", 1), 1);
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"\xc3\xa9", 2), 2);
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80", 3), 0);
}
END_TEST

START_TEST(fmt_u64_edges)
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

START_TEST(fmt_i64_edges)
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

START_TEST(fmt_hex_edges)
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
START_TEST(fmt_every_length_is_exact)
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

START_TEST(fmt_parse_hex_accepts)
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

START_TEST(fmt_parse_hex_rejects)
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

START_TEST(fmt_hex_round_trips)
{
	char buf[MT_FMT_HEX_MAX + 1];

	rng_state = 1;
	buf[MT_FMT_HEX_MAX] = '#';
	for (int i = 0; i < 100000; i++) {
		uint64_t v = rng(), back;
		size_t n;

		v >>= rng() % 64;
		back = ~v;
		n = mt_fmt_hex(buf, v);
		/* Whatever its length, nothing past the room it may use. */
		mt_quiet_int_eq(buf[MT_FMT_HEX_MAX], '#');

		mt_quiet_int_eq(mt_fmt_parse_hex(buf, n, &back), 0);
		mt_quiet_uint_eq(back, v);
	}
}
END_TEST

START_TEST(fmt_decimal_matches_printf)
{
	char buf[MT_FMT_U64_MAX + 1], want[32];

	rng_state = 2;
	buf[MT_FMT_U64_MAX] = '#';
	for (int i = 0; i < 100000; i++) {
		uint64_t u = rng(), w;
		int64_t s;
		size_t n;

		u >>= rng() % 64;
		w = rng();
		s = (int64_t)(w >> (rng() % 64));

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

/* ---- mt_event ---- */

START_TEST(event_kind_names_round_trip)
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
START_TEST(event_names_fit_their_longest)
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

START_TEST(event_kind_parse_rejects_others)
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

START_TEST(event_fn_names_round_trip)
{
	static const char *const want[MT_FN_COUNT] = {
		"malloc", "calloc", "realloc", "reallocarray", "posix_memalign",
		"aligned_alloc", "memalign", "valloc", "pvalloc", "free",
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

/* ---- mt_buf ---- */

static void assert_buf(const mt_buf_t *b, const char *want, size_t n)
{
	mt_quiet(b->len == n, "buffer length %zu, want %zu", b->len, n);
	if (n || b->data) {
		mt_quiet_ptr_nonnull(b->data);
		mt_quiet(!memcmp(b->data, want, n), "buffer holds '%.*s'",
			 (int)b->len, b->data);
		mt_quiet(b->data[n] == '\0', "buffer not NUL-terminated");
	}
}

START_TEST(buf_appends_numbers)
{
	mt_buf_t b = MT_BUF_INIT;
	int64_t before = mt_mem_outstanding();
	static const char want[] =
		"u=18446744073709551615 i=-9223372036854775808 h=0x0,0xffffffffffffffff";

	mt_quiet_int_eq(mt_buf_add_str(&b, "u="), MT_OK);
	mt_quiet_int_eq(mt_buf_add_u64(&b, UINT64_MAX), MT_OK);
	mt_quiet_int_eq(mt_buf_add_str(&b, " i="), MT_OK);
	mt_quiet_int_eq(mt_buf_add_i64(&b, INT64_MIN), MT_OK);
	mt_quiet_int_eq(mt_buf_add_str(&b, " h="), MT_OK);
	mt_quiet_int_eq(mt_buf_add_hex(&b, 0), MT_OK);
	mt_quiet_int_eq(mt_buf_add(&b, ",", 1), MT_OK);
	mt_quiet_int_eq(mt_buf_add_hex(&b, UINT64_MAX), MT_OK);
	assert_buf(&b, want, strlen(want));
	mt_buf_release(&b);
	mt_quiet_ptr_null(b.data);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(buf_limit_too_long_leaves_buffer_unchanged)
{
	mt_buf_t b;

	mt_buf_init(&b, 10);
	mt_quiet_int_eq(mt_buf_add_str(&b, "abcdef"), MT_OK);
	mt_quiet_int_eq(mt_buf_add_str(&b, "ghijk"), MT_ETOOLONG);
	assert_buf(&b, "abcdef", 6);
	mt_quiet_int_eq(mt_buf_add_u64(&b, 12345), MT_ETOOLONG);
	mt_quiet_int_eq(mt_buf_add_hex(&b, 0x12345), MT_ETOOLONG);
	mt_quiet_int_eq(mt_buf_add_i64(&b, -1234), MT_ETOOLONG);
	mt_quiet_int_eq(mt_buf_add(&b, "x", SIZE_MAX), MT_ETOOLONG);
	assert_buf(&b, "abcdef", 6);
	/* Exactly up to the limit is fine; one more byte is not. */
	mt_quiet_int_eq(mt_buf_add_str(&b, "ghij"), MT_OK);
	assert_buf(&b, "abcdefghij", 10);
	mt_quiet_int_eq(mt_buf_add(&b, "k", 1), MT_ETOOLONG);
	mt_quiet_int_eq(mt_buf_add(&b, "", 0), MT_OK);
	assert_buf(&b, "abcdefghij", 10);
	mt_buf_release(&b);
}
END_TEST

START_TEST(buf_json_str_too_long_leaves_buffer_unchanged)
{
	mt_buf_t b;

	/* The string's head fits, its escape does not: nothing of it stays. */
	mt_buf_init(&b, 12);
	mt_quiet_int_eq(mt_buf_add_str(&b, "ab"), MT_OK);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "cdefg\001", 6), MT_ETOOLONG);
	assert_buf(&b, "ab", 2);
	/* Everything fits but the closing quote. */
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "cdefghijk", 9), MT_ETOOLONG);
	assert_buf(&b, "ab", 2);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "cdefghij", 8), MT_OK);
	assert_buf(&b, "ab\"cdefghij\"", 12);
	mt_buf_truncate(&b, 2);
	assert_buf(&b, "ab", 2);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "cdefghi", 7), MT_OK);
	assert_buf(&b, "ab\"cdefghi\"", 11);
	mt_buf_release(&b);
}
END_TEST

START_TEST(buf_out_of_memory_leaves_buffer_unchanged)
{
	mt_buf_t b = MT_BUF_INIT;
	char big[1000];
	int64_t before = mt_mem_outstanding();

	memset(big, 'z', sizeof(big));
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_buf_add_str(&b, "abc"), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_ptr_null(b.data);
	mt_quiet_uint_eq(b.len, 0);
	mt_quiet_int_eq(mt_buf_add_str(&b, "abc"), MT_OK);
	/* Growing fails: the content and its storage stay. */
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_buf_add(&b, big, sizeof(big)), MT_ENOMEM);
	assert_buf(&b, "abc", 3);
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, big, sizeof(big)), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	assert_buf(&b, "abc", 3);
	/* A size no buffer can have fails the same way, without wrapping. */
	mt_quiet_int_eq(mt_buf_add(&b, big, SIZE_MAX), MT_ENOMEM);
	mt_quiet_int_eq(mt_buf_add(&b, big, SIZE_MAX - 3), MT_ENOMEM);
	mt_quiet_int_eq(mt_buf_add(&b, big, SIZE_MAX - 10), MT_ENOMEM);
	assert_buf(&b, "abc", 3);
	mt_buf_release(&b);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(buf_reset_and_truncate)
{
	mt_buf_t b = MT_BUF_INIT;

	mt_quiet_int_eq(mt_buf_add_str(&b, "hello world"), MT_OK);
	mt_buf_truncate(&b, 5);
	assert_buf(&b, "hello", 5);
	mt_buf_truncate(&b, 9); /* longer than the content: no change */
	assert_buf(&b, "hello", 5);
	mt_buf_reset(&b);
	assert_buf(&b, "", 0);
	mt_quiet_uint_gt(b.cap, 0);
	mt_buf_release(&b);
}
END_TEST

START_TEST(buf_json_str_escapes_quote_and_backslash)
{
	mt_buf_t b = MT_BUF_INIT;
	static const char want[] = "\"a\\\"b\\\\c\\\\\\\"\"";

	mt_quiet_int_eq(mt_buf_add_json_str(&b, "a\"b\\c\\\"", 7), MT_OK);
	assert_buf(&b, want, strlen(want));
	mt_buf_release(&b);
}
END_TEST

START_TEST(buf_json_str_escapes_control_chars)
{
	mt_buf_t b = MT_BUF_INIT;
	char in[32];
	static const char want[] =
		"\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007"
		"\\u0008\\t\\n\\u000b\\u000c\\r\\u000e\\u000f"
		"\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017"
		"\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\"";

	for (int i = 0; i < 32; i++)
		in[i] = (char)i;
	mt_quiet_int_eq(mt_buf_add_json_str(&b, in, sizeof(in)), MT_OK);
	assert_buf(&b, want, strlen(want));
	mt_buf_release(&b);
}
END_TEST

START_TEST(buf_json_str_escapes_nul)
{
	mt_buf_t b = MT_BUF_INIT;
	static const char want[] = "\"a\\u0000b\\u0000\"";

	/* The length decides: a NUL is content, not the end. */
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "a\0b\0", 4), MT_OK);
	assert_buf(&b, want, strlen(want));
	mt_buf_release(&b);
}
END_TEST

START_TEST(buf_json_str_copies_other_bytes)
{
	mt_buf_t b = MT_BUF_INIT;
	static const char in[] = " ~/\x7f\xc3\xa9\xe2\x82\xac'";

	mt_quiet_int_eq(mt_buf_add_json_str(&b, in, strlen(in)), MT_OK);
	mt_quiet_uint_eq(b.len, strlen(in) + 2);
	mt_quiet_int_eq(b.data[0], '"');
	mt_quiet_mem_eq(b.data + 1, in, strlen(in));
	mt_quiet_int_eq(b.data[b.len - 1], '"');
	mt_buf_reset(&b);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "", 0), MT_OK);
	assert_buf(&b, "\"\"", 2);
	mt_buf_reset(&b);
	mt_quiet_int_eq(mt_buf_add_json_cstr_or_null(&b, NULL), MT_OK);
	mt_quiet_int_eq(mt_buf_add_json_cstr_or_null(&b, "x\"y"), MT_OK);
	assert_buf(&b, "null\"x\\\"y\"", 10);
	mt_buf_release(&b);
}
END_TEST

/* ---- mt_map ---- */

typedef struct {
	uint64_t a, b;
	uint32_t c;
} value_t;

START_TEST(map_insert_find_remove)
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

START_TEST(map_keys_zero_and_max)
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

START_TEST(map_grows_and_keeps_values)
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

START_TEST(map_failed_growth_leaves_map_unchanged)
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

/* A key of the churn's pool: small integers, pointer-like values in
 * clusters, the extremes, and random words. */
static uint64_t churn_key(size_t i)
{
	switch (i % 6) {
	case 0:
		return i / 6;
	case 1:
		return 0x55d0c2b00000ull + (i / 6) * 16;
	case 2:
		return UINT64_MAX - i / 6;
	case 3:
		return (uint64_t)(i / 6 + 1) << 32;
	case 4:
		return 0x7f3a5c000000ull + (i / 6) * 4096;
	default:
		return i * 0x9e3779b97f4a7c15ull; /* distinct for i < 2^64 */
	}
}

START_TEST(map_random_churn_matches_reference)
{
	static uint64_t keys[CHURN_KEYS], ref_val[CHURN_KEYS];
	static unsigned char ref_has[CHURN_KEYS], seen[CHURN_KEYS];
	mt_map_t m;
	size_t ref_count = 0;
	int64_t before = mt_mem_outstanding();

	rng_state = 3;
	for (size_t i = 0; i < CHURN_KEYS; i++)
		keys[i] = churn_key(i);
	memset(ref_has, 0, sizeof(ref_has));
	mt_map_init(&m, sizeof(value_t));
	for (int op = 0; op < CHURN_OPS; op++) {
		/* Phases that fill, churn and drain the map, over the whole
		 * pool or a small part of it. */
		static const unsigned insert_pct[4] = { 70, 45, 15, 45 };
		static const unsigned remove_pct[4] = { 15, 40, 70, 40 };
		int phase = op / 20000 % 4;
		size_t window = op / 10000 % 3 ? CHURN_KEYS : 256;
		size_t k = (size_t)(rng() % window);
		uint64_t r = rng() % 100;
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
			ref_val[k] = rng();
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

START_TEST(map_removal_keeps_wrapped_runs_findable)
{
	mt_map_t m;
	uint64_t *v;

	/* A small table filled to its limit, emptied key by key in every
	 * order a fixed seed gives: runs wrap past the table's end. */
	rng_state = 4;
	for (int round = 0; round < 2000; round++) {
		uint64_t ks[11];
		int n = 11;

		mt_map_init(&m, sizeof(uint64_t));
		for (int i = 0; i < n; i++) {
			ks[i] = rng() % 64;
			mt_quiet_int_eq(mt_map_upsert(&m, ks[i], (void **)&v, NULL),
					MT_OK);
			*v = ks[i] * 3;
		}
		mt_quiet_uint_eq(m.cap, 16);
		while (n) {
			int i = (int)(rng() % (uint64_t)n);
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

/* ---- mt_blocks ---- */

/* A block each of whose fields tells which i it was made from. */
static mt_block_t blk(uint64_t i)
{
	mt_block_t b;

	memset(&b, 0, sizeof(b));
	b.size = i * 0x9e3779b97f4a7c15ull;
	b.serial = ~i;
	b.site = (uint32_t)(i * 2654435761u);
	b.thread = (uint32_t)i ^ (uint32_t)(i >> 32) ^ 0x5a5a5a5au;
	return b;
}

static void assert_block(const mt_block_t *got, const mt_block_t *want)
{
	mt_quiet_ptr_nonnull(got);
	mt_quiet(got->size == want->size && got->serial == want->serial &&
			      got->site == want->site &&
			      got->thread == want->thread,
		      "block {%" PRIu64 ", %" PRIu64 ", %" PRIu32 ", %" PRIu32
		      "}, want {%" PRIu64 ", %" PRIu64 ", %" PRIu32 ", %" PRIu32
		      "}", got->size, got->serial, got->site, got->thread,
		      want->size, want->serial, want->site, want->thread);
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

/* How many lines of objdump's disassembly of function fn in the built
 * memtrace contain needle. */
static int disassembly_count(const char *fn, const char *needle)
{
	char cmd[512];
	char line[512];
	char *bin = mt_test_memtrace();
	FILE *f;
	int n = 0, rc;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn --disassemble=%s '%s'", fn, bin);
	free(bin);
	f = popen(cmd, "r");
	mt_quiet_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	rc = pclose(f);
	mt_quiet(rc == 0, "'%s' failed (%d)", cmd, rc);
	return n;
}

/* Whether objdump is here and disassembles one function by name
 * (--disassemble=SYM, binutils 2.32 on); else found says what it did. */
static int objdump_disassembles_by_name(char *found, size_t size)
{
	char *bin = mt_test_memtrace();
	char cmd[4096], line[512], version[128] = "";
	int labelled = 0, rc;
	FILE *f;

	f = popen("objdump --version 2>&1", "r");
	mt_quiet_ptr_nonnull(f);
	if (fgets(version, sizeof(version), f))
		version[strcspn(version, "\n")] = '\0';
	while (fgets(line, sizeof(line), f))
		;
	rc = pclose(f);
	if (rc != 0) {
		snprintf(found, size, "objdump --version: exit %d: %s",
			 WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, version);
		free(bin);
		return 0;
	}
	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn --disassemble=main '%s' 2>&1", bin);
	free(bin);
	f = popen(cmd, "r");
	mt_quiet_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		labelled += strstr(line, "<main>:") != NULL;
	rc = pclose(f);
	if (rc != 0 || labelled != 1) {
		snprintf(found, size, "%s: --disassemble=main: exit %d, "
			 "%d <main> labels", version,
			 WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, labelled);
		return 0;
	}
	return 1;
}

/*
 * The prefetches are in the binary.  GCC deletes a call to a plain static
 * inline function whose only effect is a prefetch, and -flto the pass's
 * call to mt_heap_prefetch(): the analyzer ran 15 to 24 % slower and
 * every output stayed the same, so only the machine code can tell.
 */
START_TEST(blocks_prefetches_are_in_the_binary)
{
	char found[256];

	if (!objdump_disassembles_by_name(found, sizeof(found))) {
		MT_TEST_SKIP("no objdump that disassembles a function by name (%s)",
			     found);
		return;
	}
#if defined(__x86_64__)
	/* The mnemonic after objdump's tab, not the function's own name
	 * in its jumps; the block slot's and the site's. */
	mt_quiet(disassembly_count("mt_heap_prefetch", "\tprefetch") >= 2,
		 "mt_heap_prefetch() lost its prefetches");
	mt_quiet(disassembly_count("mt_analysis_run_observed",
				   "<mt_heap_prefetch>") >= 1,
		 "the pass does not call mt_heap_prefetch()");
#else
	/* The instruction's name is the x86 one; elsewhere the call. */
	mt_quiet(disassembly_count("mt_analysis_run_observed",
				   "mt_heap_prefetch") >= 1,
		 "the pass does not call mt_heap_prefetch()");
#endif
}
END_TEST

/* The pipe's stores ask for their lines for writing: a plain prefetch
 * (what __builtin_prefetch(p, 1) gives without -mprfchw) brings them in
 * shared, and the two-thread pass takes 1.27 times as long (measured on
 * the bench trace). */
START_TEST(pipe_stores_are_prefetched_for_writing_in_the_binary)
{
	char found[256];

	if (!objdump_disassembles_by_name(found, sizeof(found))) {
		MT_TEST_SKIP("no objdump that disassembles a function by name (%s)",
			     found);
		return;
	}
#if defined(__x86_64__)
	mt_quiet(disassembly_count("mt_analysis_run_observed", "\tprefetchw") >= 1,
		 "the pass's stores into the pipe lost their prefetchw");
#elif defined(__aarch64__)
	mt_quiet(disassembly_count("mt_analysis_run_observed", "pstl1keep") >= 1,
		 "the pass's stores into the pipe lost their prefetch");
#endif
}
END_TEST

START_TEST(blocks_put_find_take)
{
	static const mt_block_t ext = { UINT64_MAX, UINT64_MAX, UINT32_MAX,
					UINT32_MAX };
	mt_blocks_t t;
	mt_block_t b1 = blk(1), b2 = blk(2), b9 = blk(9), tmp, out;
	int64_t before = mt_mem_outstanding();

	mt_blocks_init(&t);
	mt_quiet_uint_eq(mt_blocks_count(&t), 0);
	mt_quiet_ptr_null(mt_blocks_find(&t, 42));
	assert_take_absent(&t, 42);

	blocks_put_ok(&t, 42, &b1, 0, NULL);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	assert_block(mt_blocks_find(&t, 42), &b1);
	mt_quiet_ptr_null(mt_blocks_find(&t, 41));
	mt_quiet_ptr_null(mt_blocks_find(&t, 43));

	blocks_put_ok(&t, 42, &b2, 1, &b1);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	assert_block(mt_blocks_find(&t, 42), &b2);

	/* A neighbour, and a take that misses in a table that has slots. */
	blocks_put_ok(&t, 43, &b1, 0, NULL);
	assert_take_absent(&t, 44);
	mt_quiet_uint_eq(mt_blocks_count(&t), 2);

	memset(&out, 0, sizeof(out));
	mt_quiet_int_eq(mt_blocks_take(&t, 42, &out), 1);
	assert_block(&out, &b2);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	mt_quiet_ptr_null(mt_blocks_find(&t, 42));
	assert_block(mt_blocks_find(&t, 43), &b1);
	assert_take_absent(&t, 42);

	/* Put again after its take, it is a new block. */
	blocks_put_ok(&t, 42, &b1, 0, NULL);
	assert_block(mt_blocks_find(&t, 42), &b1);

	/* Every field keeps its full width. */
	blocks_put_ok(&t, 7, &ext, 0, NULL);
	assert_block(mt_blocks_find(&t, 7), &ext);

	/* The block is copied in: the caller's may change after the put. */
	tmp = b9;
	blocks_put_ok(&t, 8, &tmp, 0, NULL);
	memset(&tmp, 0, sizeof(tmp));
	assert_block(mt_blocks_find(&t, 8), &b9);
	mt_quiet_uint_eq(mt_blocks_count(&t), 4);

	mt_blocks_release(&t);
	mt_quiet_uint_eq(mt_blocks_count(&t), 0);
	mt_quiet_ptr_null(t.slots);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(blocks_keys_zero_and_max)
{
	mt_blocks_t t;
	mt_block_t b[5], out;
	int64_t before = mt_mem_outstanding();

	for (int i = 0; i < 5; i++)
		b[i] = blk((uint64_t)i + 100);
	mt_blocks_init(&t);
	mt_quiet_ptr_null(mt_blocks_find(&t, 0));
	mt_quiet_ptr_null(mt_blocks_find(&t, UINT64_MAX));
	assert_take_absent(&t, 0);
	assert_take_absent(&t, UINT64_MAX);

	/* UINT64_MAX alone lives beside the slots: it needs none. */
	blocks_put_ok(&t, UINT64_MAX, &b[1], 0, NULL);
	mt_quiet_uint_eq(t.cap, 0);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	assert_block(mt_blocks_find(&t, UINT64_MAX), &b[1]);
	mt_quiet_ptr_null(mt_blocks_find(&t, 0));
	mt_quiet_ptr_null(mt_blocks_find(&t, UINT64_MAX - 1));

	blocks_put_ok(&t, 0, &b[2], 0, NULL);
	blocks_put_ok(&t, UINT64_MAX - 1, &b[3], 0, NULL);
	blocks_put_ok(&t, UINT64_MAX, &b[4], 1, &b[1]);
	mt_quiet_uint_eq(mt_blocks_count(&t), 3);
	assert_block(mt_blocks_find(&t, 0), &b[2]);
	assert_block(mt_blocks_find(&t, UINT64_MAX - 1), &b[3]);
	assert_block(mt_blocks_find(&t, UINT64_MAX), &b[4]);
	mt_quiet_ptr_null(mt_blocks_find(&t, 1));

	memset(&out, 0, sizeof(out));
	mt_quiet_int_eq(mt_blocks_take(&t, UINT64_MAX, &out), 1);
	assert_block(&out, &b[4]);
	mt_quiet_ptr_null(mt_blocks_find(&t, UINT64_MAX));
	mt_quiet_uint_eq(mt_blocks_count(&t), 2);
	assert_take_absent(&t, UINT64_MAX);
	mt_quiet_int_eq(mt_blocks_take(&t, 0, &out), 1);
	assert_block(&out, &b[2]);
	mt_quiet_ptr_null(mt_blocks_find(&t, 0));
	assert_take_absent(&t, 0);
	mt_quiet_uint_eq(mt_blocks_count(&t), 1);
	assert_block(mt_blocks_find(&t, UINT64_MAX - 1), &b[3]);

	/* The side slot, taken, is free again. */
	blocks_put_ok(&t, UINT64_MAX, &b[0], 0, NULL);
	assert_block(mt_blocks_find(&t, UINT64_MAX), &b[0]);
	mt_quiet_uint_eq(mt_blocks_count(&t), 2);
	mt_blocks_release(&t);
	mt_quiet_ptr_null(mt_blocks_find(&t, UINT64_MAX));
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* Pointer-like keys: 16-byte aligned, in a few clusters. */
static uint64_t grow_key(uint64_t i)
{
	return 0x7f0000000000ull * (i % 3) + i * 16;
}

START_TEST(blocks_grow_keeps_blocks_and_aligns_slots)
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
			mt_quiet(!(t.cap & (t.cap - 1)) &&
					      t.cap > last_cap,
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

				got = mt_blocks_find(&t, grow_key(j));
				assert_block(got, &w);
			}
			caps++;
			last_cap = t.cap;
		}
		/* The load stays under 7/10. */
		mt_quiet_uint_le(t.count * 10, t.cap * 7);
	}
	mt_quiet_uint_ge(caps, 10);
	mt_quiet_uint_eq(mt_blocks_count(&t), n);
	for (uint64_t i = 0; i < n; i++) {
		mt_block_t w = blk(i);
		const mt_block_t *got = mt_blocks_find(&t, grow_key(i));

		mt_quiet(got != NULL, "key %" PRIu64 " lost in growth", i);
		assert_block(got, &w);
		mt_quiet_ptr_null(mt_blocks_find(&t, grow_key(i) + 8));
	}
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* After mt_blocks_reserve() the next put cannot fail, whatever fails
 * after it; a reserve that must grow and cannot leaves the table as it
 * was, and one with room allocates nothing. */
START_TEST(blocks_reserve_makes_the_next_put_succeed)
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
	mt_quiet_int_eq(mt_blocks_reserve(&t), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_ptr_null(t.slots);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_quiet_int_eq(mt_blocks_reserve(&t), MT_OK);
	mt_mem_fail_at(1, 1);
	b = blk(0);
	blocks_put_ok(&t, 0, &b, 0, NULL);
	mt_mem_fail_at(0, 0);
	/* Up to the growth point, then one reserve that fails and one that
	 * works: the put after it needs nothing more. */
	while ((t.count + 1) * 10 <= t.cap * 7) {
		mt_quiet_uint_eq(mt_mem_calls(), 0);
		mt_mem_fail_at(1, 1);
		mt_quiet_int_eq(mt_blocks_reserve(&t), MT_OK);
		b = blk(++n);
		blocks_put_ok(&t, n, &b, 0, NULL);
		mt_mem_fail_at(0, 0);
	}
	cap = t.cap;
	slots = t.slots;
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_blocks_reserve(&t), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_uint_eq(t.cap, cap);
	mt_quiet_ptr_eq(t.slots, slots);
	mt_quiet_uint_eq(mt_blocks_count(&t), n + 1);
	mt_quiet_int_eq(mt_blocks_reserve(&t), MT_OK);
	mt_quiet_uint_eq(t.cap, 2 * cap);
	mt_mem_fail_at(1, 1);
	b = blk(n + 1);
	blocks_put_ok(&t, n + 1, &b, 0, NULL);
	mt_mem_fail_at(0, 0);
	for (uint64_t i = 0; i <= n + 1; i++) {
		mt_block_t w = blk(i);

		assert_block(mt_blocks_find(&t, i), &w);
	}
	mt_quiet_int_eq(mt_blocks_take(&t, 0, &old), 1);
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* mt_mem_calloc_line(): zeroed, on a cache line, one block for
 * mt_mem_outstanding(), failing like every mt_mem call, refusing a size
 * that overflows; mt_mem_free_line(NULL) does nothing. */
START_TEST(mem_calloc_line_is_zeroed_and_on_a_line)
{
	int64_t before = mt_mem_outstanding();
	/* Small ones from malloc's arenas (the last a large one glibc maps
	 * itself), then from MT_MEM_HUGE on mappings of their own: exactly
	 * 2 MiB, one byte more, and not a whole number of pages. */
	static const size_t sizes[][2] = { { 1, 1 }, { 3, 24 }, { 100, 64 },
					   { 1000, 7 }, { 0, 8 },
					   { (1 << 16) - 1, 32 },
					   { 1 << 16, 32 },
					   { (2 << 20) + 1, 1 },
					   { (3 << 18) + 1, 24 } };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = mt_mem_calloc_line(sizes[i][0], sizes[i][1]);
		size_t n = sizes[i][0] * sizes[i][1], j = 0;

		mt_quiet_ptr_nonnull(p);
		mt_quiet_uint_eq((uintptr_t)p % 64, 0);
		mt_quiet_int_eq(mt_mem_outstanding(), before + 1);
		/* One assertion, not one a byte: Check's cost a call. */
		while (j < n && !p[j])
			j++;
		mt_quiet(j == n, "byte %zu of %zu not zero", j, n);
		memset(p, 0xa5, n); /* all of it is the caller's */
		mt_mem_free_line(p);
		mt_quiet_int_eq(mt_mem_outstanding(), before);
	}
	mt_mem_fail_at(1, 0);
	mt_quiet_ptr_null(mt_mem_calloc_line(10, 10));
	mt_mem_fail_at(1, 0);
	mt_quiet_ptr_null(mt_mem_calloc_line(1 << 17, 32));
	mt_mem_fail_at(0, 0);
	mt_quiet_ptr_null(mt_mem_calloc_line(SIZE_MAX / 8, 16));
	mt_quiet_ptr_null(mt_mem_calloc_line(2, SIZE_MAX - 64));
	mt_mem_free_line(NULL);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* The mode in /sys/kernel/mm/transparent_hugepage/enabled, the word in
 * brackets ("always", "madvise", "never"), or "" where there is none. */
static void thp_mode(char *mode, size_t size)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[256], *open, *close;

	mode[0] = '\0';
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (open = strchr(line, '[')) &&
	    (close = strchr(open, ']')) && (size_t)(close - open) < size) {
		memcpy(mode, open + 1, (size_t)(close - open - 1));
		mode[close - open - 1] = '\0';
	}
	fclose(f);
}

/* Whether the mapping that holds p has the flag (two letters, "hg" for
 * MADV_HUGEPAGE) in its smaps VmFlags line: 1 or 0, or -1 when no mapping
 * holds p or it has no VmFlags line; -2 when smaps is unreadable or has
 * no VmFlags line at all (p NULL asks only that). */
static int vm_flag(const void *p, const char *flag)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4096];
	int in = 0, got = -1, any = 0;

	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (!strncmp(line, "VmFlags:", 8))
			any = 1;
		if (!p && any)
			break;
		if (!p)
			continue;
		if (!in && sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			char *w = strtok(line + 8, " \n");

			got = 0;
			for (; w; w = strtok(NULL, " \n"))
				if (!strcmp(w, flag))
					got = 1;
			break;
		}
	}
	fclose(f);
	return any ? got : -2;
}

/* From MT_MEM_HUGE bytes on, a table starts one line into a 2 MiB
 * boundary, and its mapping asks for huge pages: where the kernel has
 * THP at all, smaps shows the mapping's "hg" flag (MADV_HUGEPAGE), in
 * every mode. */
START_TEST(mem_calloc_line_of_a_large_table_asks_for_huge_pages)
{
	char mode[32];
	unsigned char *big = mt_mem_calloc_line(1 << 17, 32); /* 4 MiB */

	mt_quiet_ptr_nonnull(big);
	mt_quiet_uint_eq(((uintptr_t)big - 64) % (2u << 20), 0);
	thp_mode(mode, sizeof(mode));
	if (!mode[0]) {
		mt_mem_free_line(big);
		MT_TEST_SKIP("no transparent huge pages to ask for "
			     "(/sys/kernel/mm/transparent_hugepage/enabled: %s)",
			     access("/sys/kernel/mm/transparent_hugepage/enabled",
				    F_OK) ? strerror(errno) : "no [mode]");
		return;
	}
	if (vm_flag(NULL, "hg") == -2) {
		mt_mem_free_line(big);
		MT_TEST_SKIP("cannot see a mapping's flags (/proc/self/smaps: "
			     "no VmFlags lines)");
		return;
	}
	{
		int hg = vm_flag(big, "hg");

		mt_quiet(hg == 1, "the 4 MiB table's mapping: hg flag %d (THP %s)",
			 hg, mode);
	}
	mt_mem_free_line(big);
}
END_TEST

START_TEST(blocks_failed_growth_leaves_table_unchanged)
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
	mt_quiet_ptr_null(mt_blocks_find(&t, 0));
	mt_quiet_int_eq(mt_mem_outstanding(), before);

	blocks_put_ok(&t, 0, &b, 0, NULL);
	cap = t.cap;
	slots = t.slots;
	/* Fill up to the next growth. */
	while ((t.count + 1) * 10 <= t.cap * 7) {
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
	mt_quiet_ptr_null(mt_blocks_find(&t, n + 1));
	mt_quiet_int_eq(mt_mem_outstanding(), before + 1);
	for (uint64_t i = 0; i <= n; i++) {
		mt_block_t w = blk(i);

		assert_block(mt_blocks_find(&t, i), &w);
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
	assert_block(mt_blocks_find(&t, 0), &b);
	b = blk(1001);
	assert_block(mt_blocks_find(&t, UINT64_MAX), &b);

	/* Once memory is back, the put that failed grows the table. */
	b = blk(n + 1);
	blocks_put_ok(&t, n + 1, &b, 0, NULL);
	mt_quiet_uint_eq(t.cap, 2 * cap);
	mt_quiet((uintptr_t)t.slots % 64 == 0, "slots off a cache line");
	for (uint64_t i = 1; i <= n + 1; i++) {
		mt_block_t w = blk(i);

		assert_block(mt_blocks_find(&t, i), &w);
	}
	mt_quiet_uint_eq(mt_blocks_count(&t), n + 3);
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* Blocks put before the churn, in a range no churn key falls in, so that
 * the table is over 1 MiB and mt_blocks_prefetch() really loads slots. */
#define BALLAST 30000
#define BALLAST_BASE 0x600000000000ull

START_TEST(blocks_random_churn_matches_reference)
{
	static uint64_t keys[CHURN_KEYS];
	static mt_block_t ref_blk[CHURN_KEYS];
	static unsigned char ref_has[CHURN_KEYS];
	mt_blocks_t t;
	int64_t before = mt_mem_outstanding();

	for (size_t i = 0; i < CHURN_KEYS; i++) {
		keys[i] = churn_key(i);
		mt_quiet(keys[i] - BALLAST_BASE >= (uint64_t)BALLAST * 16,
			 "key %zu is inside the ballast", i);
	}
	for (int pass = 0; pass < 2; pass++) {
		size_t ref_count = 0, base = pass ? BALLAST : 0;

		rng_state = 6 + (uint64_t)pass;
		memset(ref_has, 0, sizeof(ref_has));
		mt_blocks_init(&t);
		for (size_t j = 0; j < base; j++) {
			mt_block_t b = blk(j);

			blocks_put_ok(&t, BALLAST_BASE + j * 16, &b, 0, NULL);
		}
		/* Slots are 32 bytes. */
		if (pass)
			mt_quiet_uint_ge(t.cap * 32, 1u << 20);
		for (int op = 0; op < CHURN_OPS; op++) {
			/* Phases that fill, churn and drain the table, over
			 * the whole pool or a small part of it. */
			static const unsigned put_pct[4] = { 70, 45, 15, 45 };
			static const unsigned take_pct[4] = { 15, 40, 70, 40 };
			int phase = op / 20000 % 4;
			size_t window = op / 10000 % 3 ? CHURN_KEYS : 256;
			size_t k = (size_t)(rng() % window);
			uint64_t r = rng() % 100, p = rng();
			const mt_block_t *got;

			/* Hints, mostly for the key about to be used. */
			if (p % 3 == 0)
				mt_blocks_prefetch(&t, keys[k]);
			if (p % 7 == 0)
				mt_blocks_prefetch(&t,
						   keys[(p >> 8) % CHURN_KEYS]);
			if (r < put_pct[phase]) {
				mt_block_t b;

				b.size = rng();
				b.serial = rng();
				b.site = (uint32_t)k;
				b.thread = (uint32_t)rng();
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
				got = mt_blocks_find(&t, keys[k]);
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
				got = mt_blocks_find(&t, keys[i]);
				mt_quiet((got != NULL) == ref_has[i],
					 "op %d: key %" PRIx64 " %s", op,
					 keys[i],
					 got ? "present" : "lost");
				if (got)
					assert_block(got, &ref_blk[i]);
			}
			for (size_t j = 0; j < base; j++) {
				mt_block_t w = blk(j);

				assert_block(mt_blocks_find(&t, BALLAST_BASE +
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

START_TEST(blocks_take_keeps_wrapped_runs_findable)
{
	mt_blocks_t t;
	int64_t before = mt_mem_outstanding();

	/* Eleven keys fill a table of 16 slots to its limit; the first five
	 * are homed in its last two slots, so their run must wrap past the
	 * end.  They are taken one by one in the order a fixed seed gives. */
	rng_state = 8;
	for (int round = 0; round < 2000; round++) {
		uint64_t ks[11];
		int n = 0;

		mt_blocks_init(&t);
		while (n < 11) {
			uint64_t k = rng() % 4096;
			/* The stored key is the address plus one; 60 is the
			 * shift of 16 slots. */
			size_t home = mt_map_home(k + 1, t.seed, 60);
			int dup = 0;

			for (int j = 0; j < n; j++)
				dup |= ks[j] == k;
			if (dup || (n < 5 && home < 14))
				continue;
			ks[n++] = k;
		}
		for (int i = 0; i < n; i++) {
			mt_block_t b = blk(ks[i]);

			blocks_put_ok(&t, ks[i], &b, 0, NULL);
		}
		mt_quiet_uint_eq(t.cap, 16);
		mt_quiet_uint_eq(t.shift, 60);
		while (n) {
			int i = (int)(rng() % (uint64_t)n);
			uint64_t gone = ks[i];
			mt_block_t out, w = blk(gone);

			mt_quiet_int_eq(mt_blocks_take(&t, gone, &out), 1);
			assert_block(&out, &w);
			ks[i] = ks[--n];
			mt_quiet_ptr_null(mt_blocks_find(&t, gone));
			assert_take_absent(&t, gone);
			mt_quiet_uint_eq(mt_blocks_count(&t), (size_t)n);
			for (int j = 0; j < n; j++) {
				const mt_block_t *got;

				got = mt_blocks_find(&t, ks[j]);
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
START_TEST(blocks_prefetch_changes_nothing)
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
	mt_quiet_ptr_null(mt_blocks_find(&t, 1));
	mt_quiet_uint_eq(t.cap, 0);
	for (uint64_t k = 0; k < n; k++) {
		mt_block_t b = blk(k);

		mt_blocks_prefetch(&t, k * 16);
		blocks_put_ok(&t, k * 16, &b, 0, NULL);
		mt_blocks_prefetch(&t, k * 16 + 16);
	}
	blocks_put_ok(&t, UINT64_MAX, &side, 0, NULL);
	/* Slots are 32 bytes: this table is well over the 1 MiB below which
	 * nothing is prefetched. */
	mt_quiet_uint_ge(t.cap * 32, 4u << 20);
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

		assert_block(mt_blocks_find(&t, k * 16), &w);
		mt_quiet_ptr_null(mt_blocks_find(&t, k * 16 + 3));
	}
	assert_block(mt_blocks_find(&t, UINT64_MAX), &side);
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

		assert_block(mt_blocks_find(&t, k * 16), &w);
	}
	mt_blocks_release(&t);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* ---- mt_reader ---- */

typedef struct {
	char *dir;
	char *path;
} rfile_t;

static void rfile_write(rfile_t *f, const char *data, size_t len)
{
	f->dir = mt_test_tmpdir();
	f->path = mt_test_path(f->dir, "trace.jsonl");
	mt_test_write(f->path, data, len);
}

static void rfile_done(rfile_t *f)
{
	mt_test_rmdir(f->dir);
	free(f->dir);
	free(f->path);
}

static void open_ok(mt_reader_t *r, const char *path)
{
	int rc = mt_reader_open(r, path);

	mt_quiet(rc == MT_OK, "mt_reader_open(%s) = %d: %s", path, rc,
		 strerror(errno));
}

static void next_line(mt_reader_t *r, const char *want, size_t len,
		      uint64_t number, int terminated)
{
	mt_line_t line;
	int rc = mt_reader_next(r, &line);

	mt_quiet(rc == 1, "line %" PRIu64 ": mt_reader_next = %d", number,
		 rc);
	mt_quiet_uint_eq(line.number, number);
	mt_quiet_int_eq(line.too_long, 0);
	mt_quiet_int_eq(line.terminated, terminated);
	mt_quiet(line.len == len && !memcmp(line.data, want, len),
		 "line %" PRIu64 ": got %zu bytes '%.*s', want %zu", number,
		 line.len, (int)(line.len > 80 ? 80 : line.len), line.data,
		 len);
}

static void next_end(mt_reader_t *r)
{
	mt_line_t line;

	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
}

START_TEST(reader_lines_with_final_newline)
{
	static const char data[] = "{\"a\":1}\nbb\n\nccc\n";
	rfile_t f;
	mt_reader_t r;

	rfile_write(&f, data, strlen(data));
	open_ok(&r, f.path);
	next_line(&r, "{\"a\":1}", 7, 1, 1);
	next_line(&r, "bb", 2, 2, 1);
	next_line(&r, "", 0, 3, 1);
	next_line(&r, "ccc", 3, 4, 1);
	next_end(&r);
	mt_quiet_int_eq(r.zero_padded, 0);
	mt_reader_release(&r);
	rfile_done(&f);
}
END_TEST

START_TEST(reader_last_line_without_newline)
{
	static const char data[] = "one\ntwo";
	rfile_t f;
	mt_reader_t r;

	rfile_write(&f, data, strlen(data));
	open_ok(&r, f.path);
	next_line(&r, "one", 3, 1, 1);
	next_line(&r, "two", 3, 2, 0);
	next_end(&r);
	mt_reader_release(&r);
	rfile_done(&f);
}
END_TEST

START_TEST(reader_empty_file_has_no_lines)
{
	rfile_t f;
	mt_reader_t r;

	rfile_write(&f, "", 0);
	open_ok(&r, f.path);
	next_end(&r);
	mt_quiet_int_eq(r.zero_padded, 0);
	mt_reader_release(&r);
	rfile_done(&f);
}
END_TEST

START_TEST(reader_keeps_crlf_as_data)
{
	static const char data[] = "a\r\n\r\nb\rc\r\n\r";
	rfile_t f;
	mt_reader_t r;

	rfile_write(&f, data, strlen(data));
	open_ok(&r, f.path);
	next_line(&r, "a\r", 2, 1, 1);
	next_line(&r, "\r", 1, 2, 1);
	next_line(&r, "b\rc\r", 4, 3, 1);
	next_line(&r, "\r", 1, 4, 0);
	next_end(&r);
	mt_reader_release(&r);
	rfile_done(&f);
}
END_TEST

START_TEST(reader_keeps_inner_nul_bytes)
{
	static const char data[] = "a\0b\n\0\nc\n";
	rfile_t f;
	mt_reader_t r;

	rfile_write(&f, data, sizeof(data) - 1);
	open_ok(&r, f.path);
	next_line(&r, "a\0b", 3, 1, 1);
	next_line(&r, "\0", 1, 2, 1);
	next_line(&r, "c", 1, 3, 1);
	next_end(&r);
	mt_quiet_int_eq(r.zero_padded, 0);
	mt_reader_release(&r);
	rfile_done(&f);
}
END_TEST

/* The next line must be an over-long one, reported empty. */
static void next_too_long(mt_reader_t *r, uint64_t number, int terminated)
{
	mt_line_t line;

	mt_quiet_int_eq(mt_reader_next(r, &line), 1);
	mt_quiet_uint_eq(line.number, number);
	mt_quiet_int_eq(line.too_long, 1);
	mt_quiet_uint_eq(line.len, 0);
	mt_quiet_int_eq(line.terminated, terminated);
}

START_TEST(reader_too_long_line_costs_no_memory)
{
	/* Lines of LINE_MAX + 1 and of 5 MiB, between short ones; the last
	 * one is over-long and unterminated. */
	size_t big = 5u << 20, len = 0;
	char *data = malloc(3 * big);
	rfile_t f;
	mt_reader_t r;
	int64_t outstanding;

	mt_quiet_ptr_nonnull(data);
	len += (size_t)sprintf(data + len, "first\n");
	memset(data + len, 'x', MT_READER_LINE_MAX + 1);
	len += MT_READER_LINE_MAX + 1;
	data[len++] = '\n';
	len += (size_t)sprintf(data + len, "middle\n");
	memset(data + len, 'y', big);
	len += big;
	data[len++] = '\n';
	len += (size_t)sprintf(data + len, "after\n");
	memset(data + len, 'z', MT_READER_LINE_MAX + 7);
	len += MT_READER_LINE_MAX + 7;
	rfile_write(&f, data, len);
	free(data);

	open_ok(&r, f.path);
	outstanding = mt_mem_outstanding();
	mt_mem_fail_at(0, 0); /* counts allocation calls from here */
	next_line(&r, "first", 5, 1, 1);
	next_too_long(&r, 2, 1);
	next_line(&r, "middle", 6, 3, 1);
	next_too_long(&r, 4, 1);
	next_line(&r, "after", 5, 5, 1);
	next_too_long(&r, 6, 0);
	next_end(&r);
	/* No allocation while reading: the buffer of open is all it holds. */
	mt_quiet_uint_eq(mt_mem_calls(), 0);
	mt_quiet_int_eq(mt_mem_outstanding(), outstanding);
	mt_quiet_uint_le(r.cap, MT_READER_LINE_MAX + 2 * READER_CHUNK);
	mt_reader_release(&r);
	rfile_done(&f);
}
END_TEST

START_TEST(reader_line_of_line_max_is_kept)
{
	size_t len = 0;
	char *data = malloc(2 * MT_READER_LINE_MAX + 64);
	rfile_t f;
	mt_reader_t r;
	mt_line_t line;

	mt_quiet_ptr_nonnull(data);
	data[len++] = 'a';
	data[len++] = '\n';
	for (size_t i = 0; i < MT_READER_LINE_MAX; i++)
		data[len++] = (char)('a' + i % 26);
	data[len++] = '\n';
	memset(data + len, 'q', MT_READER_LINE_MAX);
	len += MT_READER_LINE_MAX; /* unterminated, still not too long */
	rfile_write(&f, data, len);

	open_ok(&r, f.path);
	next_line(&r, "a", 1, 1, 1);
	next_line(&r, data + 2, MT_READER_LINE_MAX, 2, 1);
	mt_quiet_int_eq(mt_reader_next(&r, &line), 1);
	mt_quiet_int_eq(line.too_long, 0);
	mt_quiet_int_eq(line.terminated, 0);
	mt_quiet_uint_eq(line.len, MT_READER_LINE_MAX);
	ck_assert(!memcmp(line.data, data + 3 + MT_READER_LINE_MAX,
			  MT_READER_LINE_MAX));
	next_end(&r);
	mt_reader_release(&r);
	rfile_done(&f);
	free(data);
}
END_TEST

/* n_lines lines of 100 bytes ("%07zu" and a fill), the last with its
 * '\n'; a malloc'd buffer of n_lines * 101 bytes. */
static char *numbered_lines(size_t n_lines)
{
	char *data = malloc(n_lines * 101 + 1);

	ck_assert(data != NULL);
	for (size_t i = 0; i < n_lines; i++) {
		char num[32];

		snprintf(num, sizeof(num), "%07zu ", i % 10000000);
		memcpy(data + i * 101, num, 8);
		memset(data + i * 101 + 8, 'a' + (int)(i % 26), 92);
		data[i * 101 + 100] = '\n';
	}
	return data;
}

/* Read every line of a file of numbered_lines(n_lines), checking each. */
static void read_numbered_lines(mt_reader_t *r, const char *data, size_t n_lines)
{
	mt_line_t line;

	for (size_t i = 0; i < n_lines; i++) {
		mt_quiet_int_eq(mt_reader_next(r, &line), 1);
		mt_quiet(line.len == 100 && !memcmp(line.data, data + i * 101, 100),
			 "line %zu differs", i + 1);
	}
	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
}

/* Whether the kernel reads path with RWF_DONTCACHE (Linux 6.14, on file
 * systems that have it), asked apart from the reader; where it does not,
 * *err is the refusal's errno. */
static int dontcache_reads_why(const char *path, int *err)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	mt_quiet(fd >= 0, "cannot open %s", path);
	got = preadv2(fd, &iov, 1, 0, 0x80 /* RWF_DONTCACHE */);
	*err = got < 0 ? errno : 0;
	close(fd);
	return got == 1;
}

static int dontcache_reads(const char *path)
{
	int err;

	return dontcache_reads_why(path, &err);
}

/* A trace is read once: the pages a read brings into the page cache
 * leave it, and the pages that were there before stay, where the kernel
 * reads with RWF_DONTCACHE.  The test needs that, and a file system that
 * lets clean pages go when asked (mt_test_uncache()), to start from an
 * empty cache; elsewhere it skips (plain reads are
 * reader_reads_plainly_where_dontcache_is_refused's). */
START_TEST(reader_leaves_the_page_cache_as_it_found_it)
{
	const size_t n_lines = 80000; /* 7.7 MiB, four reads */
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	/* content_length() reads the last 64 KiB plainly, to find the end */
	const uint64_t head = (n_lines * 101 - 65536) / page * page;
	char *data = numbered_lines(n_lines), found[256], fs[32];
	int err;
	rfile_t f;
	mt_reader_t r;

	rfile_write(&f, data, n_lines * 101);
	if (!dontcache_reads_why(f.path, &err)) {
		MT_TEST_SKIP("the kernel reads no file here with RWF_DONTCACHE "
			     "(%s: preadv2: %s)",
			     mt_test_fs_name(f.dir, fs, sizeof(fs)), strerror(err));
		free(data);
		rfile_done(&f);
		return;
	}
	if (!mt_test_drops_clean_pages(f.dir, found, sizeof(found))) {
		MT_TEST_SKIP("cannot empty the page cache of a file here (%s)",
			     found);
		free(data);
		rfile_done(&f);
		return;
	}
	mt_test_uncache(f.path);
	mt_quiet_uint_eq(mt_test_cached_pages(f.path, 0, head), 0);
	open_ok(&r, f.path);
	read_numbered_lines(&r, data, n_lines);
	mt_quiet_int_eq(r.dontcache, 1);
	mt_reader_release(&r);
	mt_quiet_uint_eq(mt_test_cached_pages(f.path, 0, head), 0);
	/* In the page cache before: still there after. */
	free(mt_test_read(f.path, NULL));
	open_ok(&r, f.path);
	read_numbered_lines(&r, data, n_lines);
	mt_reader_release(&r);
	mt_quiet_uint_eq(mt_test_cached_pages(f.path, 0, head), head / page);
	free(data);
	rfile_done(&f);
}
END_TEST

/* tmpfs has no RWF_DONTCACHE (its pages are the file): the first read is
 * refused, and plain reads take over without losing a byte.  The test
 * needs a tmpfs ($TMPDIR's, else /dev/shm) that refuses it. */
START_TEST(reader_reads_plainly_where_dontcache_is_refused)
{
	const size_t n_lines = 20000;
	char *data = numbered_lines(n_lines), fs[32];
	const char *tmp = getenv("TMPDIR");
	char dir[4096], *path;
	int err;
	mt_reader_t r;

	if (!tmp || !*tmp || !mt_test_exists(tmp) || !mt_test_on_tmpfs(tmp))
		tmp = "/dev/shm";
	if (!mt_test_exists(tmp) || !mt_test_on_tmpfs(tmp)) {
		MT_TEST_SKIP("no tmpfs to read from ($TMPDIR and /dev/shm: %s)",
			     mt_test_exists(tmp) ?
				     mt_test_fs_name(tmp, fs, sizeof(fs)) :
				     "absent");
		free(data);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/mt-test.XXXXXX", tmp);
	mt_quiet(mkdtemp(dir) != NULL, "mkdtemp %s: %s", dir, strerror(errno));
	path = mt_test_path(dir, "trace.jsonl");
	mt_test_write(path, data, n_lines * 101);
	if (dontcache_reads_why(path, &err)) {
		MT_TEST_SKIP("this tmpfs reads with RWF_DONTCACHE: nothing is "
			     "refused (%s)", dir);
		free(data);
		free(path);
		mt_test_rmdir(dir);
		return;
	}
	open_ok(&r, path);
	mt_quiet_int_eq(r.dontcache, 1);
	read_numbered_lines(&r, data, n_lines);
	mt_quiet_int_eq(r.dontcache, dontcache_reads(path));
	mt_reader_release(&r);
	free(data);
	free(path);
	mt_test_rmdir(dir);
}
END_TEST

START_TEST(reader_lines_span_chunk_boundaries)
{
	/* 32 reads' worth of lines of every length up to 70 KiB, so
	 * that many lines straddle a multiple of the read size, plus a few
	 * placed exactly at one. */
	size_t cap = 32 * READER_CHUNK, len = 0, nlines = 0;
	char *data = malloc(cap);
	size_t *starts = malloc(sizeof(size_t) * 200000);
	size_t *lens = malloc(sizeof(size_t) * 200000);
	rfile_t f;
	mt_reader_t r;
	size_t crossing = 0;

	ck_assert(data && starts && lens);
	rng_state = 5;
	while (len < cap - 200000) {
		size_t n;

		/* Mostly short lines, some long; every 8th ends right at or
		 * one byte around the next chunk boundary. */
		if (nlines % 8 == 7) {
			size_t next = (len / READER_CHUNK + 1) * READER_CHUNK;

			n = next - len - 1 + (size_t)(rng() % 3);
			if (n > 80000)
				n = (size_t)(rng() % 200);
		} else if (rng() % 10 == 0) {
			n = (size_t)(rng() % 70000);
		} else {
			n = (size_t)(rng() % 300);
		}
		starts[nlines] = len;
		lens[nlines] = n;
		for (size_t i = 0; i < n; i++)
			data[len + i] = (char)(' ' + (nlines + i) % 90);
		if ((len / READER_CHUNK) != ((len + n) / READER_CHUNK))
			crossing++;
		len += n;
		data[len++] = '\n';
		nlines++;
	}
	mt_quiet_uint_gt(crossing, 10);
	rfile_write(&f, data, len);
	open_ok(&r, f.path);
	for (size_t i = 0; i < nlines; i++)
		next_line(&r, data + starts[i], lens[i], i + 1, 1);
	next_end(&r);
	mt_reader_release(&r);
	rfile_done(&f);
	free(data);
	free(starts);
	free(lens);
}
END_TEST

START_TEST(reader_strips_trailing_nul_padding)
{
	/* Padding longer than the reader's 64 KiB tail block. */
	size_t pad = 200000, len = 0;
	char *data = calloc(1, 64 + pad);
	rfile_t f;
	mt_reader_t r;

	mt_quiet_ptr_nonnull(data);
	memcpy(data, "one\ntwo\n", 8);
	len = 8 + pad;
	rfile_write(&f, data, len);
	open_ok(&r, f.path);
	mt_quiet_int_eq(r.zero_padded, 1);
	next_line(&r, "one", 3, 1, 1);
	next_line(&r, "two", 3, 2, 1);
	next_end(&r);
	mt_reader_release(&r);
	rfile_done(&f);

	/* A line cut off by the padding is the last, unterminated line. */
	memcpy(data, "one\ntw", 6);
	memset(data + 6, 0, 64);
	rfile_write(&f, data, 6 + 5);
	open_ok(&r, f.path);
	mt_quiet_int_eq(r.zero_padded, 1);
	next_line(&r, "one", 3, 1, 1);
	next_line(&r, "tw", 2, 2, 0);
	next_end(&r);
	mt_reader_release(&r);
	rfile_done(&f);
	free(data);
}
END_TEST

START_TEST(reader_file_of_only_nuls)
{
	char *data = calloc(1, 300000);
	rfile_t f;
	mt_reader_t r;

	mt_quiet_ptr_nonnull(data);
	rfile_write(&f, data, 300000);
	open_ok(&r, f.path);
	mt_quiet_int_eq(r.zero_padded, 1);
	next_end(&r);
	mt_reader_release(&r);
	rfile_done(&f);

	rfile_write(&f, data, 1);
	open_ok(&r, f.path);
	mt_quiet_int_eq(r.zero_padded, 1);
	next_end(&r);
	mt_reader_release(&r);
	rfile_done(&f);
	free(data);
}
END_TEST

/*
 * mt_reader_window() and mt_reader_take(), as the analysis uses them
 * between calls of mt_reader_next(): a caller that finds a line's '\n' in
 * the window and takes the line must see the lines, numbers, cut-off last
 * line, over-long lines and padding that mt_reader_next() alone gives.
 * The taker here takes every line it can find whole in the window, every
 * other one when alternate is set, and never looks past the window.
 */
typedef struct {
	uint64_t number;
	size_t len;
	int terminated, too_long;
	uint64_t sum; /* of the data's bytes, weighted by position */
} seen_line_t;

static uint64_t line_sum(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* Reads path to its end; returns how many lines, in out[]; *taken counts
 * the ones taken from the window. */
static size_t read_all(const char *path, int take, int alternate,
		       seen_line_t *out, size_t max, size_t *taken,
		       int *zero_padded)
{
	mt_reader_t r;
	mt_line_t line;
	size_t n = 0;
	int got;

	open_ok(&r, path);
	*taken = 0;
	for (;;) {
		size_t avail;
		const char *w = mt_reader_window(&r, &avail);
		const char *nl = avail ? memchr(w, '\n', avail) : NULL;

		ck_assert_uint_lt(n, max);
		/* The window never shows the zero padding. */
		if (r.zero_padded && avail)
			ck_assert_int_ne(w[avail - 1], '\0');
		if (take && nl && (size_t)(nl - w) <= MT_READER_LINE_MAX &&
		    (!alternate || n % 2)) {
			size_t len = (size_t)(nl - w);

			out[n].sum = line_sum(w, len);
			out[n].number = mt_reader_take(&r, len);
			out[n].len = len;
			out[n].terminated = 1;
			out[n].too_long = 0;
			n++;
			(*taken)++;
			continue;
		}
		got = mt_reader_next(&r, &line);
		ck_assert_int_ge(got, 0);
		if (!got)
			break;
		out[n].number = line.number;
		out[n].len = line.len;
		out[n].terminated = line.terminated;
		out[n].too_long = line.too_long;
		out[n].sum = line_sum(line.data, line.len);
		n++;
	}
	mt_quiet_int_eq(mt_reader_next(&r, &line), 0);
	*zero_padded = r.zero_padded;
	mt_reader_release(&r);
	return n;
}

static void take_matches_next(const char *data, size_t len, size_t max_lines,
			      size_t min_taken)
{
	seen_line_t *a = malloc(max_lines * sizeof(*a));
	seen_line_t *b = malloc(max_lines * sizeof(*b));
	rfile_t f;
	size_t na, nb, taken, none;
	int pa, pb;

	mt_quiet_ptr_nonnull(a);
	mt_quiet_ptr_nonnull(b);
	rfile_write(&f, data, len);
	na = read_all(f.path, 0, 0, a, max_lines, &none, &pa);
	for (int alternate = 0; alternate < 2; alternate++) {
		size_t want = alternate ? min_taken / 2 : min_taken;

		nb = read_all(f.path, 1, alternate, b, max_lines, &taken, &pb);
		mt_quiet_uint_eq(nb, na);
		mt_quiet_int_eq(pb, pa);
		mt_quiet_uint_ge(taken, want);
		for (size_t i = 0; i < na; i++) {
			mt_quiet_uint_eq(b[i].number, a[i].number);
			mt_quiet_uint_eq(b[i].len, a[i].len);
			mt_quiet_int_eq(b[i].terminated, a[i].terminated);
			mt_quiet_int_eq(b[i].too_long, a[i].too_long);
			mt_quiet(b[i].sum == a[i].sum,
				 "line %" PRIu64 " differs", a[i].number);
		}
	}
	rfile_done(&f);
	free(a);
	free(b);
}

START_TEST(reader_take_matches_next_across_chunk_boundaries)
{
	/* Lines of 1 to 700 bytes over 3 MiB, so that lines straddle every
	 * multiple of the read size, and lines ending exactly at one. */
	size_t cap = 3u << 20, len = 0, lines = 0;
	char *data = malloc(cap + 4096);

	mt_quiet_ptr_nonnull(data);
	while (len < cap) {
		size_t n = 1 + (lines * 7919) % 700;
		size_t to_chunk = READER_CHUNK - len % READER_CHUNK;

		if (lines % 97 == 0 && to_chunk > 1 && to_chunk < 800)
			n = to_chunk - 1; /* its '\n' is the chunk's last byte */
		for (size_t i = 0; i < n; i++)
			data[len + i] = (char)('!' + (lines + i) % 90);
		len += n;
		data[len++] = '\n';
		lines++;
	}
	take_matches_next(data, len, lines + 1, lines / 2);
	free(data);
}
END_TEST

START_TEST(reader_take_matches_next_around_line_max)
{
	/* A line of exactly MT_READER_LINE_MAX, one byte more, short lines
	 * between, and an unterminated last line of MT_READER_LINE_MAX. */
	size_t len = 0;
	char *data = malloc(4 * MT_READER_LINE_MAX + 64);

	mt_quiet_ptr_nonnull(data);
	len += (size_t)sprintf(data + len, "a\nbb\n");
	for (size_t i = 0; i < MT_READER_LINE_MAX; i++)
		data[len++] = (char)('a' + i % 26);
	data[len++] = '\n';
	len += (size_t)sprintf(data + len, "c\n");
	memset(data + len, 'x', MT_READER_LINE_MAX + 1);
	len += MT_READER_LINE_MAX + 1;
	data[len++] = '\n';
	len += (size_t)sprintf(data + len, "d\n");
	memset(data + len, 'q', MT_READER_LINE_MAX);
	len += MT_READER_LINE_MAX;
	take_matches_next(data, len, 16, 3);
	free(data);
}
END_TEST

START_TEST(reader_take_matches_next_before_nul_tail)
{
	/* Zero padding after the last line, and after a cut-off one. */
	size_t pad = 200000;
	char *data = calloc(1, 4096 + pad);

	mt_quiet_ptr_nonnull(data);
	memcpy(data, "one\ntwo\nthree\n", 14);
	take_matches_next(data, 14 + pad, 16, 2);
	memcpy(data, "one\ntwo\nthr", 11);
	memset(data + 11, 0, 8);
	take_matches_next(data, 11 + pad, 16, 1);
	free(data);
}
END_TEST

START_TEST(reader_take_matches_next_without_final_newline)
{
	static const char data[] = "one\ntwo\r\n\nlast";

	take_matches_next(data, sizeof(data) - 1, 16, 2);
}
END_TEST

START_TEST(reader_missing_file_is_enoent)
{
	char *dir = mt_test_tmpdir();
	char *path = mt_test_path(dir, "absent.jsonl");
	int64_t before = mt_mem_outstanding();
	mt_reader_t r;

	errno = 0;
	mt_quiet_int_eq(mt_reader_open(&r, path), MT_EIO);
	mt_quiet_int_eq(errno, ENOENT);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	free(path);
	path = mt_test_path(dir, "absent/below.jsonl");
	errno = 0;
	mt_quiet_int_eq(mt_reader_open(&r, path), MT_EIO);
	mt_quiet_int_eq(errno, ENOENT);
	mt_test_rmdir(dir);
	free(path);
	free(dir);
}
END_TEST

START_TEST(reader_directory_is_eisdir)
{
	char *dir = mt_test_tmpdir();
	int64_t before = mt_mem_outstanding();
	mt_reader_t r;

	errno = 0;
	mt_quiet_int_eq(mt_reader_open(&r, dir), MT_EIO);
	mt_quiet_int_eq(errno, EISDIR);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_test_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(reader_open_out_of_memory_releases_all)
{
	rfile_t f;
	mt_reader_t r;
	int64_t before = mt_mem_outstanding();

	rfile_write(&f, "a\n", 2);
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_reader_open(&r, f.path), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	rfile_done(&f);
}
END_TEST

/*
 * The pass parses block events ahead of applying them (mt_analysis.c);
 * what it reports must still be what a line-by-line pass reports: a block
 * event the heap rejects amid held ones, a gap, a free of an unknown
 * block, a frame and a malformed line between them, each at its line.
 */
START_TEST(analysis_applies_held_events_in_trace_order)
{
	static char trace[16384];
	size_t n = 0;
	uint64_t frees = 0, allocs = 0, prev_ptr = 0;
	mt_analysis_t a;
	rfile_t f;

#define LINE(...) (n += (size_t)snprintf(trace + n, sizeof(trace) - n, __VA_ARGS__))
	LINE("{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n");
	LINE("{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n");
	LINE("{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x10\"}\n");
	LINE("{\"v\":1,\"seq\":4,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1]}\n");
	for (uint64_t line = 5; line <= 44; line++) {
		uint64_t seq = line < 20 ? line : line + 100;

		if (line == 12) {
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\","
			     "\"allocator_id\":0,\"ptr\":\"0x99\",\"size\":1,"
			     "\"fn\":\"malloc\",\"stack\":99,\"tid\":1,\"t\":1}\n", seq);
			prev_ptr = 0;
		} else if (line == 25) {
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\","
			     "\"allocator_id\":0,\"ptr\":\"0xdead\",\"fn\":\"free\","
			     "\"tid\":1,\"t\":1}\n", seq);
			prev_ptr = 0;
		} else if (line == 30) {
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"frame\","
			     "\"frame_id\":2,\"ip\":\"0x20\"}\n", seq);
		} else if (line == 33) {
			LINE("{\"v\":1,\n");
		} else if (prev_ptr) {
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\","
			     "\"allocator_id\":0,\"ptr\":\"0x%" PRIx64 "\","
			     "\"fn\":\"free\",\"tid\":1,\"t\":1}\n", seq, prev_ptr);
			frees++;
			prev_ptr = 0;
		} else {
			prev_ptr = 0x1000 + 16 * line;
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\","
			     "\"allocator_id\":0,\"ptr\":\"0x%" PRIx64 "\",\"size\":%"
			     PRIu64 ",\"fn\":\"malloc\",\"stack\":1,\"tid\":1,"
			     "\"t\":1}\n", seq, prev_ptr, line);
			allocs++;
		}
	}
	LINE("{\"v\":1,\"seq\":145,\"kind\":\"trace.stop\",\"reason\":\"exit\","
	     "\"dropped\":0}\n");
#undef LINE
	ck_assert_uint_lt(n, sizeof(trace));
	rfile_write(&f, trace, n);
	mt_quiet_int_eq(mt_analysis_run(&a, f.path), MT_OK);
	mt_quiet_int_eq(a.integrity.invalid, 0);
	mt_quiet_uint_eq(a.integrity.malformed, 2);
	mt_quiet_uint_eq(a.integrity.first_malformed_line, 12);
	ck_assert_str_eq(a.integrity.first_malformed_why,
			 "it names a stack never declared ('stack')");
	ck_assert_str_eq(a.integrity.message[MT_CAVEAT_SEQUENCE_GAP],
			 "sequence gap at line 20: expected seq 20, found 120");
	mt_quiet_uint_eq(a.integrity.stop_line, 45);
	mt_quiet_uint_eq(a.integrity.last_line, 45);
	mt_quiet_uint_eq(a.heap.allocations, allocs);
	mt_quiet_uint_eq(a.heap.frees, frees);
	mt_quiet_uint_eq(a.heap.unknown_frees, 1);
	mt_quiet_uint_eq(a.heap.temporary_allocations, frees);
	/* Every line but the two malformed ones is an event. */
	mt_quiet_uint_eq(a.heap.events, 45 - 2);
	mt_analysis_release(&a);
	rfile_done(&f);
}
END_TEST

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
START_TEST(heap_apply_block_matches_apply)
{
	static const uint64_t stacks[] = { 1, 2, 3 };
	mt_heap_t h[2];

	for (int k = 0; k < 2; k++)
		heap_declare_stacks(&h[k], stacks, 3);
	for (uint64_t seq = 10; seq < 4000; seq++) {
		uint64_t r = rng();
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
START_TEST(heap_dense_and_sparse_stack_ids_keep_their_sites)
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
START_TEST(heap_temporary_follows_each_threads_last_allocation)
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

	rng_state = 9;
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
		uint64_t r = rng(), kr = r % 100, stack = (r >> 8) % 4;
		size_t th, p = (size_t)(rng() % TEMP_PTRS);
		size_t q = (size_t)(rng() % TEMP_PTRS);
		mt_kind_t kind;
		mt_event_t ev;

		/* A few hot threads allocate often, so their blocks seldom
		 * die temporary; the many others seldom. */
		if ((r >> 16) % 8 == 0) {
			th = prev;
		} else {
			do {
				uint64_t x = rng();

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

START_TEST(heap_threads_counts_distinct_tids)
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
	rng_state = 10;
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
				   pass == 1 ? (size_t)(rng() % COUNT_TIDS) :
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
		size_t j = (size_t)(rng() % i), x = a[i - 1];

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
START_TEST(heap_blocks_keep_their_sites_across_stacks)
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
	rng_state = 11;
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
		uint64_t r = rng(), size = 1 + r % 2000;
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

START_TEST(heap_new_thread_or_stack_out_of_memory_leaves_heap_unchanged)
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

Suite *mt_suite_units(void)
{
	Suite *s = suite_create("units");
	TCase *tc;

	tc = tcase_create("fmt");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, utf8_accepts_exactly_rfc_3629);
	tcase_add_test(tc, fmt_u64_edges);
	tcase_add_test(tc, fmt_i64_edges);
	tcase_add_test(tc, fmt_hex_edges);
	tcase_add_test(tc, fmt_every_length_is_exact);
	tcase_add_test(tc, fmt_parse_hex_accepts);
	tcase_add_test(tc, fmt_parse_hex_rejects);
	tcase_add_test(tc, fmt_hex_round_trips);
	tcase_add_test(tc, fmt_decimal_matches_printf);
	suite_add_tcase(s, tc);

	tc = tcase_create("event");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, event_kind_names_round_trip);
	tcase_add_test(tc, event_names_fit_their_longest);
	tcase_add_test(tc, event_kind_parse_rejects_others);
	tcase_add_test(tc, event_fn_names_round_trip);
	suite_add_tcase(s, tc);

	tc = tcase_create("buf");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, buf_appends_numbers);
	tcase_add_test(tc, buf_limit_too_long_leaves_buffer_unchanged);
	tcase_add_test(tc, buf_json_str_too_long_leaves_buffer_unchanged);
	tcase_add_test(tc, buf_out_of_memory_leaves_buffer_unchanged);
	tcase_add_test(tc, buf_reset_and_truncate);
	tcase_add_test(tc, buf_json_str_escapes_quote_and_backslash);
	tcase_add_test(tc, buf_json_str_escapes_control_chars);
	tcase_add_test(tc, buf_json_str_escapes_nul);
	tcase_add_test(tc, buf_json_str_copies_other_bytes);
	suite_add_tcase(s, tc);

	tc = tcase_create("map");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, map_insert_find_remove);
	tcase_add_test(tc, map_keys_zero_and_max);
	tcase_add_test(tc, map_grows_and_keeps_values);
	tcase_add_test(tc, map_failed_growth_leaves_map_unchanged);
	tcase_add_test(tc, map_random_churn_matches_reference);
	tcase_add_test(tc, map_removal_keeps_wrapped_runs_findable);
	suite_add_tcase(s, tc);

	tc = tcase_create("blocks");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, blocks_put_find_take);
	tcase_add_test(tc, blocks_keys_zero_and_max);
	tcase_add_test(tc, blocks_grow_keeps_blocks_and_aligns_slots);
	tcase_add_test(tc, blocks_failed_growth_leaves_table_unchanged);
	tcase_add_test(tc, blocks_reserve_makes_the_next_put_succeed);
	tcase_add_test(tc, mem_calloc_line_is_zeroed_and_on_a_line);
	tcase_add_test(tc, mem_calloc_line_of_a_large_table_asks_for_huge_pages);
	tcase_add_test(tc, blocks_random_churn_matches_reference);
	tcase_add_test(tc, blocks_take_keeps_wrapped_runs_findable);
	tcase_add_test(tc, blocks_prefetch_changes_nothing);
	tcase_add_test(tc, blocks_prefetches_are_in_the_binary);
	tcase_add_test(tc, pipe_stores_are_prefetched_for_writing_in_the_binary);
	suite_add_tcase(s, tc);

	tc = tcase_create("reader");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, reader_lines_with_final_newline);
	tcase_add_test(tc, reader_last_line_without_newline);
	tcase_add_test(tc, reader_empty_file_has_no_lines);
	tcase_add_test(tc, reader_keeps_crlf_as_data);
	tcase_add_test(tc, reader_keeps_inner_nul_bytes);
	tcase_add_test(tc, reader_too_long_line_costs_no_memory);
	tcase_add_test(tc, reader_line_of_line_max_is_kept);
	tcase_add_test(tc, reader_lines_span_chunk_boundaries);
	tcase_add_test(tc, reader_strips_trailing_nul_padding);
	tcase_add_test(tc, reader_leaves_the_page_cache_as_it_found_it);
	tcase_add_test(tc, reader_reads_plainly_where_dontcache_is_refused);
	tcase_add_test(tc, reader_file_of_only_nuls);
	tcase_add_test(tc, reader_take_matches_next_across_chunk_boundaries);
	tcase_add_test(tc, reader_take_matches_next_around_line_max);
	tcase_add_test(tc, reader_take_matches_next_before_nul_tail);
	tcase_add_test(tc, reader_take_matches_next_without_final_newline);
	tcase_add_test(tc, reader_missing_file_is_enoent);
	tcase_add_test(tc, reader_directory_is_eisdir);
	tcase_add_test(tc, reader_open_out_of_memory_releases_all);
	suite_add_tcase(s, tc);

	tc = tcase_create("analysis");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, analysis_applies_held_events_in_trace_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("heap");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, heap_apply_block_matches_apply);
	tcase_add_test(tc, heap_dense_and_sparse_stack_ids_keep_their_sites);
	tcase_add_test(tc, heap_temporary_follows_each_threads_last_allocation);
	tcase_add_test(tc, heap_threads_counts_distinct_tids);
	tcase_add_test(tc, heap_blocks_keep_their_sites_across_stacks);
	tcase_add_test(
		tc, heap_new_thread_or_stack_out_of_memory_leaves_heap_unchanged);
	suite_add_tcase(s, tc);
	return s;
}
