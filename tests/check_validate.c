/*
 * check_validate: the validator's verdicts (mt_validate): not an event
 * without an integer v and seq and a string kind, a bad version, malformed
 * with its reason and the field at fault, or OK with the event the fields
 * make (format.md, section 2).  Each line goes through the analyzer's
 * parser, and every path is held to json-c on it first
 * (mt_test_expect()), so the verdicts are the fast path's and the exact
 * matcher's as much as json-c's.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mt_test.h"
#include "mt_test_parse.h"
#include "../analyzer/parse/mt_parse.h"
#include "../common/mt_event.h"

START_TEST(test_verdict_not_event_without_header)
{
	static const char *const lines[] = {
		"{}",
		"{\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":1}",
		"{\"v\":null,\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":\"1\",\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1.0,\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":true,\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":[1],\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":\"1\",\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":1.5,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":null,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":1,\"kind\":null}",
		"{\"v\":1,\"seq\":1,\"kind\":7}",
		"{\"v\":1,\"seq\":1,\"kind\":[\"alloc\"]}",
		"{\"V\":1,\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"Seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":1,\"header\":{\"kind\":\"trace.start\"}}",
	};
	mt_test_judge_t j;

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		mt_test_expect(&j, lines[i], MT_PARSE_NOT_EVENT, NULL);
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_bad_version)
{
	static const struct {
		const char *line;
		int64_t version;
	} lines[] = {
		{ "{\"v\":2,\"seq\":1,\"kind\":\"trace.start\"}", 2 },
		{ "{\"v\":0,\"seq\":1,\"kind\":\"trace.start\"}", 0 },
		{ "{\"v\":-1,\"seq\":1,\"kind\":\"trace.start\"}", -1 },
		{ "{\"v\":2,\"seq\":1,\"kind\":\"bogus\"}", 2 },
		{ "{\"v\":2,\"seq\":-5,\"kind\":\"alloc\"}", 2 },
		{ "{\"v\":9223372036854775807,\"seq\":1,\"kind\":\"trace.start\"}",
		  INT64_MAX },
		{ "{\"v\":-9223372036854775808,\"seq\":1,\"kind\":\"trace.start\"}",
		  INT64_MIN },
		{ "{\"kind\":\"trace.start\",\"seq\":1,\"v\":2}", 2 },
		{ "{\"v\": 2, \"seq\": 1, \"kind\": \"trace.start\"}", 2 },
	};
	mt_test_judge_t j;

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		mt_test_expect(&j, lines[i].line, MT_PARSE_BAD_VERSION, NULL);
		mt_quiet(j.p.version == lines[i].version,
			 "version %" PRId64 ", want %" PRId64 " for %s",
			 j.p.version, lines[i].version, lines[i].line);
	}
	mt_test_judge_release(&j);
}
END_TEST

/* A full valid line of each kind with its required fields (format.md
 * section 2), to take fields out of or spoil. */
typedef struct {
	const char *kind;
	const char *fields[6][2]; /* required: name and a valid value */
	const char *optional;     /* optional fields, all present */
} kind_case_t;

static const kind_case_t kind_cases[] = {
	{ "allocator", { { "allocator_id", "3" } }, "\"name\":\"jemalloc\"" },
	{ "frame", { { "frame_id", "1" }, { "ip", "\"0x401000\"" } },
	  "\"symbol\":\"main\",\"offset\":\"0x10\",\"module\":\"/bin/x\",\"module_offset\":16" },
	{ "stack", { { "stack_id", "1" }, { "frames", "[1,2]" } }, NULL },
	{ "alloc", { { "allocator_id", "0" }, { "ptr", "\"0x1000\"" },
		     { "size", "16" }, { "fn", "\"malloc\"" } },
	  "\"align\":16,\"stack\":1,\"tid\":7,\"t\":100" },
	{ "free", { { "allocator_id", "0" }, { "ptr", "\"0x1000\"" } },
	  "\"fn\":\"free\",\"tid\":7,\"t\":100" },
	{ "resize", { { "allocator_id", "0" }, { "ptr", "\"0x1000\"" },
		      { "size", "32" } },
	  "\"fn\":\"realloc\",\"stack\":1,\"tid\":7,\"t\":100" },
	{ "remap", { { "allocator_id", "0" }, { "ptr", "\"0x1000\"" },
		     { "new_ptr", "\"0x2000\"" }, { "size", "64" } },
	  "\"fn\":\"realloc\",\"stack\":1,\"tid\":7,\"t\":100" },
	{ "alloc.fail", { { "allocator_id", "0" }, { "size", "1099511627776" },
			  { "fn", "\"calloc\"" } },
	  "\"stack\":1,\"tid\":7,\"t\":100" },
	{ "trace.start", { { NULL, NULL } },
	  "\"pid\":1,\"exe\":\"/bin/x\",\"argv\":[\"x\"],\"stack_depth\":8" },
	{ "trace.stop", { { NULL, NULL } },
	  "\"reason\":\"signal\",\"dropped\":3,\"t\":100" },
};

/* The line of case c with required field skip left out (-1: none), field
 * spoil's value replaced by value, and the optional fields when asked. */
static void kind_line(char *buf, size_t cap, const kind_case_t *c, int skip,
		      int spoil, const char *value, int with_optional)
{
	size_t n = (size_t)snprintf(buf, cap, "{\"v\":1,\"seq\":5,\"kind\":\"%s\"",
				    c->kind);

	for (int i = 0; i < 6 && c->fields[i][0]; i++) {
		if (i == skip)
			continue;
		n += (size_t)snprintf(buf + n, cap - n, ",\"%s\":%s",
				      c->fields[i][0],
				      i == spoil ? value : c->fields[i][1]);
	}
	if (with_optional && c->optional)
		n += (size_t)snprintf(buf + n, cap - n, ",%s", c->optional);
	snprintf(buf + n, cap - n, "}");
}

START_TEST(test_verdict_ok_for_every_kind)
{
	mt_test_judge_t j;
	char line[1024];

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(kind_cases) / sizeof(kind_cases[0]); i++) {
		const kind_case_t *c = &kind_cases[i];

		kind_line(line, sizeof(line), c, -1, -1, NULL, 0);
		mt_test_expect(&j, line, MT_PARSE_OK, NULL);
		ck_assert_str_eq(mt_event_kind_name(j.ev.kind), c->kind);
		mt_quiet_uint_eq(j.ev.seq, 5);
		kind_line(line, sizeof(line), c, -1, -1, NULL, 1);
		mt_test_expect(&j, line, MT_PARSE_OK, NULL);
	}
	/* The values land where they belong. */
	mt_test_expect(&j, "{\"v\":1,\"seq\":9,\"kind\":\"remap\",\"allocator_id\":2,"
		   "\"ptr\":\"0xAbC\",\"new_ptr\":\"0xffffffffffffffff\",\"size\":64,"
		   "\"fn\":\"realloc\",\"stack\":4,\"tid\":7,\"t\":100}",
	       MT_PARSE_OK, NULL);
	mt_quiet_int_eq(j.ev.kind, MT_KIND_REMAP);
	mt_quiet_uint_eq(j.ev.allocator_id, 2);
	mt_quiet_uint_eq(j.ev.ptr, 0xabc);
	mt_quiet_uint_eq(j.ev.new_ptr, UINT64_MAX);
	mt_quiet_uint_eq(j.ev.size, 64);
	mt_quiet_int_eq(j.ev.fn, MT_FN_REALLOC);
	mt_quiet_uint_eq(j.ev.stack, 4);
	mt_quiet_uint_eq(j.ev.tid, 7);
	mt_quiet_uint_eq(j.ev.t, 100);
	mt_quiet_uint_eq(j.ev.has, MT_HAS_FN | MT_HAS_STACK | MT_HAS_TID | MT_HAS_T);
	mt_test_expect(&j, "{\"v\":1,\"seq\":9,\"kind\":\"frame\",\"frame_id\":3,"
		   "\"ip\":\"0x10\",\"offset\":\"0x4\",\"module_offset\":4096}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.frame_id, 3);
	mt_quiet_uint_eq(j.ev.ip, 0x10);
	mt_quiet_uint_eq(j.ev.offset, 4);
	mt_quiet_uint_eq(j.ev.module_offset, 4096);
	mt_quiet_uint_eq(j.ev.has, MT_HAS_OFFSET | MT_HAS_MODULE_OFFSET);
	/* json-c unescapes; the event holds the bytes. */
	mt_test_expect(&j, "{\"v\":1,\"seq\":9,\"kind\":\"allocator\",\"allocator_id\":1,"
		   "\"name\":\"a\\\"b\\u00e9\"}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.name_len, 5);
	mt_quiet_mem_eq(j.ev.name, "a\"b\xc3\xa9", 5);
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_malformed_without_required_field)
{
	mt_test_judge_t j;
	char line[1024];
	int n = 0;

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(kind_cases) / sizeof(kind_cases[0]); i++) {
		const kind_case_t *c = &kind_cases[i];

		for (int f = 0; f < 6 && c->fields[f][0]; f++) {
			/* Left out, or null (which counts as absent). */
			kind_line(line, sizeof(line), c, f, -1, NULL, 1);
			mt_test_expect(&j, line, MT_PARSE_MALFORMED, c->fields[f][0]);
			kind_line(line, sizeof(line), c, -1, f, "null", 1);
			mt_test_expect(&j, line, MT_PARSE_MALFORMED, c->fields[f][0]);
			n++;
		}
	}
	mt_quiet_int_eq(n, 21);
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_malformed_for_wrong_types)
{
	/* Values of the wrong type for an integer, a pointer, a string and
	 * the frames field. */
	static const char *const not_uint[] = {
		"\"1\"", "1.0", "1e0", "true", "[1]", "{}", "-1", "\"0x1\"",
		"-9223372036854775808",
	};
	static const char *const not_ptr[] = {
		"4096", "\"4096\"", "\"0x\"", "\"0X10\"", "\"x10\"", "\"0x1g\"",
		"\"0x00000000000000001\"", "\" 0x1\"", "\"0x1 \"", "true", "[]",
		"\"-0x1\"", "\"0x\\u0000\"",
	};
	static const char *const not_str[] = {
		"1", "true", "[\"malloc\"]", "{}", "\"\\u0000malloc\"",
	};
	static const char *const not_frames[] = {
		"1", "\"1,2\"", "[1,-2]", "[1,2.0]", "[\"1\"]", "[null]", "[[1]]",
		"{}", "[1,{}]", "true",
	};
	mt_test_judge_t j;
	char line[1024];

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(kind_cases) / sizeof(kind_cases[0]); i++) {
		const kind_case_t *c = &kind_cases[i];

		for (int f = 0; f < 6 && c->fields[f][0]; f++) {
			const char *name = c->fields[f][0];
			const char *const *bad;
			size_t nbad;

			if (!strcmp(name, "ptr") || !strcmp(name, "ip") ||
			    !strcmp(name, "new_ptr")) {
				bad = not_ptr;
				nbad = sizeof(not_ptr) / sizeof(not_ptr[0]);
			} else if (!strcmp(name, "fn")) {
				bad = not_str;
				nbad = sizeof(not_str) / sizeof(not_str[0]);
			} else if (!strcmp(name, "frames")) {
				bad = not_frames;
				nbad = sizeof(not_frames) / sizeof(not_frames[0]);
			} else {
				bad = not_uint;
				nbad = sizeof(not_uint) / sizeof(not_uint[0]);
			}
			for (size_t b = 0; b < nbad; b++) {
				kind_line(line, sizeof(line), c, -1, f, bad[b], 1);
				mt_test_expect(&j, line, MT_PARSE_MALFORMED,
				       strcmp(name, "fn") ? name : NULL);
			}
		}
	}
	/* Optional fields of the wrong type. */
	{
		static const char *const lines[] = {
			"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":5}",
			"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"a\\u0000\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"symbol\":true}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"offset\":\"12\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"offset\":-1}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"module\":[]}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"module_offset\":1.5}",
			"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"align\":\"16\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"stack\":-1}",
			"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"tid\":\"7\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"t\":1.5}",
			"{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x1\",\"fn\":1}",
			"{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"reason\":0}",
			"{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"dropped\":-1}",
			"{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"dropped\":\"0\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"t\":false}",
		};

		for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
			mt_test_expect(&j, lines[i], MT_PARSE_MALFORMED, NULL);
	}
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_malformed_for_unknown_kind)
{
	static const char *const kinds[] = {
		"", "bogus", "Alloc", "ALLOC", "alloc ", "alloc.ok", "trace",
		"trace.begin", "allocators", "\\u0000", "caf\\u00e9",
	};
	mt_test_judge_t j;
	char line[256];

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"%s\",\"allocator_id\":0}",
			 kinds[i]);
		mt_test_expect(&j, line, MT_PARSE_MALFORMED, NULL);
	}
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_fn_must_allocate_in_alloc)
{
	static const char *const fns[] = { "free", "mmap", "", "Malloc", "malloc " };
	mt_test_judge_t j;
	char line[256];

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"%s\"}", fns[i]);
		mt_test_expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc.fail\",\"allocator_id\":0,"
			 "\"size\":1,\"fn\":\"%s\"}", fns[i]);
		mt_test_expect(&j, line, MT_PARSE_MALFORMED, NULL);
	}
	/* Every allocating function is fine. */
	for (int f = 0; f < MT_FN_FREE; f++) {
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"%s\"}",
			 mt_event_fn_name((mt_fn_t)f));
		mt_test_expect(&j, line, MT_PARSE_OK, NULL);
		mt_quiet_int_eq(j.ev.fn, f);
	}
	/* A free, resize or remap may name any function; it is only shown. */
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"fn\":\"munmap\"}", MT_PARSE_OK, NULL);
	mt_quiet_int_eq(j.ev.fn, MT_FN_UNKNOWN);
	ck_assert(j.ev.has & MT_HAS_FN);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"resize\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":2,\"fn\":\"realloc\"}", MT_PARSE_OK, NULL);
	mt_quiet_int_eq(j.ev.fn, MT_FN_REALLOC);
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_malformed_for_zero_ids)
{
	mt_test_judge_t j;

	mt_test_judge_init(&j);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":0,\"ip\":\"0x1\"}",
	       MT_PARSE_MALFORMED, NULL);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":0,\"frames\":[1]}",
	       MT_PARSE_MALFORMED, NULL);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1,0]}",
	       MT_PARSE_MALFORMED, NULL);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"stack\":0}",
	       MT_PARSE_MALFORMED, NULL);
	/* Allocator 0 is libc's, and a pointer or a size may be 0. */
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x0\",\"size\":0,\"fn\":\"malloc\"}",
	       MT_PARSE_OK, NULL);
	/* A stack without frames. */
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[]}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.nframes, 0);
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_malformed_for_negative_numbers)
{
	mt_test_judge_t j;

	mt_test_judge_init(&j);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":-1,\"fn\":\"malloc\"}",
	       MT_PARSE_MALFORMED, "size");
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":-9223372036854775808,\"fn\":\"malloc\"}",
	       MT_PARSE_MALFORMED, "size");
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":-3}",
	       MT_PARSE_MALFORMED, "allocator_id");
	mt_test_expect(&j, "{\"v\":1,\"seq\":-1,\"kind\":\"trace.start\"}",
	       MT_PARSE_MALFORMED, NULL);
	/* -0 is 0. */
	mt_test_expect(&j, "{\"v\":1,\"seq\":-0,\"kind\":\"alloc\",\"allocator_id\":-0,"
		   "\"ptr\":\"0x1\",\"size\":-0,\"fn\":\"malloc\"}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.size, 0);
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_malformed_for_numbers_out_of_range)
{
	static const char *const big[] = {
		"18446744073709551616", "99999999999999999999",
		"100000000000000000000000", "-9223372036854775809",
		"-18446744073709551616",
	};
	mt_test_judge_t j;
	char line[512];

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		/* In a required field, an optional one and the frames, as the
		 * line's last number or with more after it. */
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"fn\":\"malloc\",\"size\":%s}", big[i]);
		mt_test_expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"size\":%s,\"fn\":\"malloc\",\"tid\":3}",
			 big[i]);
		mt_test_expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"size\":8,\"fn\":\"malloc\",\"tid\":%s,\"t\":5}",
			 big[i]);
		mt_test_expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":%s,\"kind\":\"trace.stop\",\"dropped\":0}",
			 big[i]);
		mt_test_expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,"
			 "\"frames\":[%s,2]}", big[i]);
		mt_test_expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,"
			 "\"ip\":\"0x1\",\"offset\":%s,\"module_offset\":0}", big[i]);
		mt_test_expect(&j, line, MT_PARSE_MALFORMED, NULL);
	}
	/* The largest numbers that fit are numbers. */
	mt_test_expect(&j, "{\"v\":1,\"seq\":18446744073709551615,\"kind\":\"alloc\","
		   "\"allocator_id\":18446744073709551615,\"ptr\":\"0x1\","
		   "\"size\":18446744073709551615,\"fn\":\"malloc\",\"tid\":1}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.size, UINT64_MAX);
	mt_quiet_uint_eq(j.ev.seq, UINT64_MAX);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":-9223372036854775808,\"y\":1}",
	       MT_PARSE_OK, NULL);
	/* Digits inside a string are no number. */
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":1,"
		   "\"name\":\"99999999999999999999\\\"99999999999999999999\",\"x\":1}",
	       MT_PARSE_OK, NULL);
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_null_optional_is_absent)
{
	mt_test_judge_t j;

	mt_test_judge_init(&j);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"align\":null,"
		   "\"stack\":null,\"tid\":null,\"t\":null}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has, MT_HAS_FN);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\","
		   "\"symbol\":null,\"offset\":null,\"module\":null,\"module_offset\":null}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has, 0);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"reason\":null,"
		   "\"dropped\":null,\"t\":null}", MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has, 0);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"fn\":null}", MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has, 0);
	mt_test_judge_release(&j);
}
END_TEST

START_TEST(test_verdict_unknown_fields_ignored)
{
	mt_test_judge_t j;

	mt_test_judge_init(&j);
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"x\":{\"size\":-1},"
		   "\"y\":[1,[2,{}]],\"z\":1.5e3,\"w\":\"\\u00e9\",\"Size\":\"big\"}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.size, 1);
	/* Fields of other kinds are unknown to this one. */
	mt_test_expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":\"x\",\"stack\":0,\"frames\":7}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has & MT_HAS_STACK, 0);
	mt_test_judge_release(&j);
}
END_TEST

Suite *mt_suite_validate(void)
{
	Suite *s = suite_create("validate");
	TCase *tc;

	tc = tcase_create("verdicts");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_verdict_not_event_without_header);
	tcase_add_test(tc, test_verdict_bad_version);
	tcase_add_test(tc, test_verdict_ok_for_every_kind);
	tcase_add_test(tc, test_verdict_malformed_without_required_field);
	tcase_add_test(tc, test_verdict_malformed_for_wrong_types);
	tcase_add_test(tc, test_verdict_malformed_for_unknown_kind);
	tcase_add_test(tc, test_verdict_fn_must_allocate_in_alloc);
	tcase_add_test(tc, test_verdict_malformed_for_zero_ids);
	tcase_add_test(tc, test_verdict_malformed_for_negative_numbers);
	tcase_add_test(tc, test_verdict_malformed_for_numbers_out_of_range);
	tcase_add_test(tc, test_verdict_null_optional_is_absent);
	tcase_add_test(tc, test_verdict_unknown_fields_ignored);
	suite_add_tcase(s, tc);
	return s;
}
