/*
 * check_any_json: json-c's path (mt_any_json), the only one that says a line is
 * not JSON: what is not a JSON object, a NUL byte, and UTF-8 that RFC 3629
 * forbids though json-c's own check lets it through.  Every line is also
 * held to the other paths (mt_test_expect()).
 */
#include <stddef.h>
#include <stdio.h>

#include "mt_test.h"
#include "mt_test_parse.h"
#include "../analyzer/parse/mt_parse.h"

START_TEST(test_verdict_not_event_for_non_objects)
{
	static const char *const lines[] = {
		"", " ", "[]", "[{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}]",
		"1", "\"v\"", "null", "true", "{", "}", "{\"v\":1,\"seq\":1,",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"", "not json",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"} x",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}{}",
		"{'v':1,'seq':1,'kind':'trace.start'}",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",}",
		"{v:1,seq:1,kind:\"trace.start\"}",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"} // comment",
		"{\"v\":1,\"seq\":1,\"kind\":\"caf\xc3\"}",
		"{\"v\":1,\"seq\":1,\"kind\":\"\xff\"}",
		"{\"v\":1,\"seq\":1,\"kind\":\"\xf8\x88\x80\x80\x80\"}",
	};
	mt_test_judge_t j;

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		mt_test_expect(&j, lines[i], MT_PARSE_NOT_EVENT, NULL);
	/* A NUL byte anywhere. */
	{
		static const char nul[] = "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\0";
		mt_event_t ev;

		mt_quiet_int_eq(mt_parser_parse(&j.p, nul, sizeof(nul) - 1, &ev),
				MT_PARSE_NOT_EVENT);
		mt_quiet_int_eq(mt_parser_parse(&j.p, nul + 1, sizeof(nul) - 2, &ev),
				MT_PARSE_NOT_EVENT);
	}
	mt_test_judge_release(&j);
}
END_TEST

/* json-c's own UTF-8 check lets overlong forms and surrogates through;
 * the reader does not, whichever key or value holds them, so that no row
 * ever copies them out.  A valid sequence of each length is an event. */
START_TEST(test_verdict_not_event_for_utf8_json_c_lets_through)
{
	static const char *const bad[] = {
		"\xc0\x80", "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xed\xa0\x80",
		"\xed\xbf\xbf", "\xf4\x90\x80\x80",
	};
	mt_test_judge_t j;

	mt_test_judge_init(&j);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[256];

		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,"
			 "\"ip\":\"0x10\",\"symbol\":\"f%sg\"}", bad[i]);
		mt_test_expect(&j, line, MT_PARSE_NOT_EVENT, NULL);
		ck_assert_str_eq(j.p.why, "it is not valid UTF-8");
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,"
			 "\"ip\":\"0x10\",\"x%s\":1}", bad[i]);
		mt_test_expect(&j, line, MT_PARSE_NOT_EVENT, NULL);
	}
	mt_test_expect(&j, "{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x10\","
		   "\"symbol\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"}",
	       MT_PARSE_OK, NULL);
	mt_test_judge_release(&j);
}
END_TEST

Suite *mt_suite_any_json(void)
{
	Suite *s = suite_create("any_json");
	TCase *tc;

	tc = tcase_create("verdicts");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_verdict_not_event_for_non_objects);
	tcase_add_test(tc, test_verdict_not_event_for_utf8_json_c_lets_through);
	suite_add_tcase(s, tc);
	return s;
}
