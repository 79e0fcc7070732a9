/*
 * check_block_line: the exact-layout matcher (mt_block_line) against json-c, the
 * reference.  mt_block_line_parse() must say OK with json-c's event, or
 * DECLINED, reading each line from a buffer of its exact length, and
 * mt_block_line_parse_window() the same of the line as the reader's buffer
 * holds it (mt_test_diff_line()): on tens of thousands of block events
 * written as the preload writes them, which it must take with the values
 * they were written with, and on every single-byte change of typical
 * ones.  check_flat holds it to json-c on the fast path's lines too.  The
 * PRNG seed is fixed so a failure reproduces; a failure prints the line.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_test.h"
#include "mt_test_parse.h"
#include "../analyzer/parse/mt_block_line.h"
#include "../analyzer/parse/mt_parse.h"
#include "../common/mt_event.h"

#define EXACT_LINES 20000

/* A number of 1 to 19 digits, the count drawn first: small and large ones
 * alike, as the matcher's digit loop sees them. */
static uint64_t gen_digits(void)
{
	int n = 1 + (int)mt_test_below(19);
	uint64_t v = 1 + mt_test_below(9);

	for (int i = 1; i < n; i++)
		v = v * 10 + mt_test_below(10);
	return mt_test_below(8) ? v : mt_test_below(3); /* 0, 1 and 2 often */
}

static uint64_t gen_hex(void)
{
	int bits = 4 * (1 + (int)mt_test_below(16));
	uint64_t v = mt_test_rng();

	return bits == 64 ? v : v & ((1ull << bits) - 1);
}

/*
 * A block event exactly as preload/mt_trace.c writes it, optional keys
 * drawn at random, and in *want the event the validator makes of it (the
 * fields it does not read stay 0).  Returns the length.
 */
static size_t preload_line(char *buf, size_t cap, mt_kind_t kind,
			   mt_event_t *want)
{
	static const mt_fn_t allocating[] = {
		MT_FN_MALLOC, MT_FN_CALLOC, MT_FN_REALLOC, MT_FN_REALLOCARRAY,
		MT_FN_POSIX_MEMALIGN, MT_FN_ALIGNED_ALLOC, MT_FN_MEMALIGN,
		MT_FN_VALLOC, MT_FN_PVALLOC,
	};
	int n, allocs = kind == MT_KIND_ALLOC || kind == MT_KIND_ALLOC_FAIL;
	uint64_t v;
	mt_fn_t fn;

	memset(want, 0, sizeof(*want));
	want->kind = kind;
	want->seq = gen_digits();
	want->allocator_id = mt_test_below(4) ? 0 : gen_digits();
	n = snprintf(buf, cap, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"%s\","
		     "\"allocator_id\":%" PRIu64, want->seq,
		     mt_event_kind_name(kind), want->allocator_id);
#define OUT(...) (n += snprintf(buf + n, cap - (size_t)n, __VA_ARGS__))
	if (kind != MT_KIND_ALLOC_FAIL) {
		v = gen_hex();
		OUT(",\"ptr\":\"0x%" PRIx64 "\"", v);
		want->ptr = v;
	}
	if (kind == MT_KIND_REMAP) {
		v = gen_hex();
		OUT(",\"new_ptr\":\"0x%" PRIx64 "\"", v);
		want->new_ptr = v;
	}
	if (kind != MT_KIND_FREE) {
		v = gen_digits();
		OUT(",\"size\":%" PRIu64, v);
		want->size = v;
	}
	if (allocs)
		fn = allocating[mt_test_below(sizeof(allocating) / sizeof(allocating[0]))];
	else
		fn = kind == MT_KIND_FREE && mt_test_below(2) ? MT_FN_FREE :
			mt_test_below(2) ? MT_FN_REALLOC : MT_FN_REALLOCARRAY;
	/* fn may be absent but where it is required. */
	if (allocs || mt_test_below(8)) {
		OUT(",\"fn\":\"%s\"", mt_event_fn_name(fn));
		want->fn = fn;
		want->has |= MT_HAS_FN;
	}
	if (allocs && mt_test_below(4) == 0) {
		v = gen_digits();
		OUT(",\"align\":%" PRIu64, v);
		want->align = v;
		want->has |= MT_HAS_ALIGN;
	}
	if (kind != MT_KIND_FREE && mt_test_below(8)) {
		v = 1 + mt_test_below(5000);
		OUT(",\"stack\":%" PRIu64, v);
		want->stack = v;
		want->has |= MT_HAS_STACK;
	}
	if (allocs && mt_test_below(16) == 0)
		OUT(",\"fail_at\":%" PRIu64, gen_digits());
	if (mt_test_below(16)) {
		v = gen_digits();
		OUT(",\"tid\":%" PRIu64, v);
		want->tid = v;
		want->has |= MT_HAS_TID;
	}
	if (mt_test_below(16)) {
		v = gen_digits();
		OUT(",\"t\":%" PRIu64, v);
		want->t = v;
		want->has |= MT_HAS_T;
	}
	OUT("}");
#undef OUT
	mt_quiet(n < (int)cap, "a line of %d bytes", n);
	return (size_t)n;
}

static const mt_kind_t block_kinds[] = {
	MT_KIND_ALLOC, MT_KIND_FREE, MT_KIND_RESIZE, MT_KIND_REMAP,
	MT_KIND_ALLOC_FAIL,
};
#define NBLOCK_KINDS (sizeof(block_kinds) / sizeof(block_kinds[0]))

START_TEST(test_exact_matcher_takes_preload_lines)
{
	static char line[1024];
	mt_test_diff_t d;
	char what[64];

	mt_test_rng_state = 0x6578616374ull;
	mt_test_diff_init(&d);
	for (int i = 0; i < EXACT_LINES; i++) {
		mt_event_t want, ev;
		size_t len = preload_line(line, sizeof(line),
					  block_kinds[i % NBLOCK_KINDS], &want);
		const char *field;

		snprintf(what, sizeof(what), "preload line %d", i);
		mt_quiet(mt_block_line_parse(&d.exact, line, len, &ev) ==
				      MT_PARSE_OK,
			      "%s: the exact matcher declined %s", what,
			      mt_test_show(line, len));
		field = mt_test_event_diff(&ev, &want);
		mt_quiet(!field, "%s: event differs from what was written in %s on line %s",
			 what, field, mt_test_show(line, len));
		mt_test_diff_line(&d, line, len, what, &ev);
	}
	mt_quiet_uint_eq(d.exact_accepted, EXACT_LINES);
	mt_test_diff_release(&d);
}
END_TEST

/* Lines the preload and mt-gen-trace write, and a few around the matcher's
 * edges: 16-digit pointers, 19-digit numbers, every key present. */
static const char *const exact_typical[] = {
	"{\"v\":1,\"seq\":101,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x7f32f0002400\",\"size\":45,\"fn\":\"malloc\",\"stack\":3,\"tid\":2228,\"t\":5543510}",
	"{\"v\":1,\"seq\":7098,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x7f3a5c006620\",\"size\":25391,\"fn\":\"posix_memalign\",\"align\":64,\"stack\":117,\"tid\":4242,\"t\":21772}",
	"{\"v\":1,\"seq\":35,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x7ffb3c001080\",\"fn\":\"free\",\"tid\":6020,\"t\":5193669}",
	"{\"v\":1,\"seq\":36,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x7ffb3c001080\",\"tid\":6020,\"t\":5193669}",
	"{\"v\":1,\"seq\":42,\"kind\":\"resize\",\"allocator_id\":0,\"ptr\":\"0x7ffb3c001560\",\"size\":151,\"fn\":\"realloc\",\"stack\":3,\"tid\":6020,\"t\":5199828}",
	"{\"v\":1,\"seq\":62,\"kind\":\"remap\",\"allocator_id\":0,\"ptr\":\"0x7ffb3c000bd0\",\"new_ptr\":\"0x7ffb3c001dd0\",\"size\":69,\"fn\":\"realloc\",\"stack\":3,\"tid\":6020,\"t\":5206628}",
	"{\"v\":1,\"seq\":7009,\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":1099511627776,\"fn\":\"malloc\",\"stack\":392,\"tid\":4244,\"t\":1226}",
	"{\"v\":1,\"seq\":9,\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":8,\"fn\":\"calloc\",\"stack\":1,\"fail_at\":3,\"tid\":1,\"t\":2}",
	"{\"v\":1,\"seq\":1234567890123456789,\"kind\":\"remap\",\"allocator_id\":9999999999999999999,\"ptr\":\"0xffffffffffffffff\",\"new_ptr\":\"0x0\",\"size\":9999999999999999999,\"fn\":\"reallocarray\",\"stack\":1000000000000000000,\"tid\":1,\"t\":0}",
	"{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x1\"}",
};

/* Judge every single-byte change of a line: each byte replaced by every
 * byte value, deleted, or preceded by another; and every prefix. */
static void mutate_each_byte(mt_test_diff_t *d, const char *orig, const char *what0)
{
	static const char inserts[] = " \t\n\r0119aAfFx\"\\,:{}[]-.e";
	size_t len = strlen(orig);
	char *buf = malloc(len + 2);
	char what[160];
	mt_event_t ev;

	mt_quiet_ptr_nonnull(buf);
	for (size_t i = 0; i < len; i++) {
		for (int c = 0; c < 256; c++) {
			if ((unsigned char)orig[i] == c)
				continue;
			memcpy(buf, orig, len);
			buf[i] = (char)c;
			snprintf(what, sizeof(what), "%s, byte %zu set to %d", what0, i, c);
			mt_test_diff_line(d, buf, len, what, &ev);
		}
		memcpy(buf, orig, i);
		memcpy(buf + i, orig + i + 1, len - i - 1);
		snprintf(what, sizeof(what), "%s, byte %zu deleted", what0, i);
		mt_test_diff_line(d, buf, len - 1, what, &ev);
		for (size_t k = 0; k < sizeof(inserts) - 1; k++) {
			memcpy(buf, orig, i);
			buf[i] = inserts[k];
			memcpy(buf + i + 1, orig + i, len - i);
			snprintf(what, sizeof(what), "%s, '%c' inserted at %zu",
				 what0, inserts[k], i);
			mt_test_diff_line(d, buf, len + 1, what, &ev);
		}
		snprintf(what, sizeof(what), "%s, its first %zu bytes", what0, i);
		mt_test_diff_line(d, orig, i, what, &ev);
	}
	free(buf);
}

START_TEST(test_exact_matcher_single_byte_mutations_agree)
{
	static char line[1024];
	mt_test_diff_t d;
	char what[64];
	uint64_t before;

	mt_test_rng_state = 0x6d7574616e7473ull;
	mt_test_diff_init(&d);
	for (size_t i = 0; i < sizeof(exact_typical) / sizeof(exact_typical[0]); i++) {
		mt_event_t ev;

		before = d.exact_accepted;
		snprintf(what, sizeof(what), "typical line %zu", i);
		mt_test_diff_line(&d, exact_typical[i], strlen(exact_typical[i]), what, &ev);
		mt_quiet(d.exact_accepted == before + 1,
			 "the exact matcher declined %s", exact_typical[i]);
		mutate_each_byte(&d, exact_typical[i], what);
	}
	/* Two generated lines of each kind. */
	for (int i = 0; i < 2 * (int)NBLOCK_KINDS; i++) {
		mt_event_t want;

		line[preload_line(line, sizeof(line), block_kinds[i % NBLOCK_KINDS],
				  &want)] = '\0';
		snprintf(what, sizeof(what), "generated line %d", i);
		mutate_each_byte(&d, line, what);
	}
	/* The mutants are mostly declined, but some still match (a digit for
	 * a digit) and must agree. */
	mt_quiet_uint_gt(d.exact_accepted, 1000);
	mt_quiet_uint_gt(d.lines - d.exact_accepted, d.lines / 2);
	mt_test_diff_release(&d);
}

Suite *mt_suite_block_line(void)
{
	Suite *s = suite_create("block_line");
	TCase *tc;

	tc = tcase_create("differential");
	tcase_set_timeout(tc, 180); /* a few seconds; minutes under ASan */
	tcase_add_test(tc, test_exact_matcher_takes_preload_lines);
	tcase_add_test(tc, test_exact_matcher_single_byte_mutations_agree);
	suite_add_tcase(s, tc);
	return s;
}
