/*
 * check_parse: the parser object and its dispatch (mt_parse.c):
 * mt_parser_release() gives back everything the paths allocated, and a
 * path that finds no room for a line's frames says out of memory, never
 * malformed.  That the dispatch, mt_parser_parse(), gives json-c's verdict
 * on every line is held by the differential check of the other parser
 * suites (mt_test_parse.h: check_flat, check_block_line, check_any_json,
 * check_validate).
 */
#include <stdint.h>
#include <string.h>

#include "mt_test.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/parse/mt_flat.h"
#include "../analyzer/parse/mt_any_json.h"
#include "../analyzer/base/mt_mem.h"
#include "../analyzer/parse/mt_parse.h"

START_TEST(test_parser_release_frees_everything)
{
	mt_parser_t p;
	mt_event_t ev;
	int64_t before = mt_mem_outstanding();
	static const char line[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1, 2, 3]}";
	static const char compact[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1]}";

	mt_quiet_int_eq(mt_parser_init(&p), MT_OK);
	mt_quiet_int_eq(mt_parser_parse(&p, line, strlen(line), &ev), MT_PARSE_OK);
	mt_quiet_uint_eq(ev.nframes, 3);
	mt_quiet_uint_eq(ev.frames[2], 3);
	mt_parser_release(&p);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	/* No room for the frames: out of memory, never malformed. */
	mt_quiet_int_eq(mt_parser_init(&p), MT_OK);
	mt_mem_fail_at(1, 1);
	mt_quiet_int_eq(mt_any_json_parse(&p, line, strlen(line), &ev),
			MT_PARSE_NOMEM);
	mt_quiet_int_eq(mt_flat_parse(&p, compact, strlen(compact), &ev),
			MT_PARSE_NOMEM);
	mt_mem_fail_at(0, 0);
	mt_parser_release(&p);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

Suite *mt_suite_parse(void)
{
	Suite *s = suite_create("parse");
	TCase *tc;

	tc = tcase_create("parser");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_parser_release_frees_everything);
	suite_add_tcase(s, tc);
	return s;
}
