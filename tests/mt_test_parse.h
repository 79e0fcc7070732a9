/*
 * mt_test_parse: the differential check the parser suites share
 * (check_flat, check_block_line, check_any_json, check_validate, check_parse).
 *
 * json-c (mt_any_json_parse) is the reference.  Whenever the fast path
 * (mt_flat_parse) accepts a line, returning anything but DECLINED, json-c
 * must return the same verdict, the same reason and an identical
 * mt_event_t; the exact-layout matcher (mt_block_line_parse, and
 * mt_block_line_parse_window on the line as the reader's buffer holds it) must
 * be OK with json-c's event or DECLINED; and mt_parser_parse, the dispatch
 * the analyzer calls, must always agree with json-c.  mt_test_diff_line()
 * holds all of them to each other on one line; every verdict test does so
 * on each line it judges (mt_test_expect()).
 *
 * Like mt_test, these helpers allocate with plain malloc; a disagreement
 * fails the test and prints the line.
 */
#ifndef MT_TEST_PARSE_H
#define MT_TEST_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "../analyzer/parse/mt_parse.h"

/* A draw of mt_test_rng() below n.  Where a value takes several draws,
 * each is a statement of its own: the order of a call's arguments is
 * unspecified, and a seed must give the same lines whatever the
 * compiler. */
uint64_t mt_test_below(uint64_t n);

/* A verdict's name: "OK", "NOT_EVENT", ... */
const char *mt_test_rname(mt_parse_result_t r);
/* The line, printable: non-ASCII and control bytes as \xNN (a static
 * buffer, valid until the next call). */
const char *mt_test_show(const char *line, size_t len);
/* NULL when the events are identical, else the name of a field that
 * differs. */
const char *mt_test_event_diff(const mt_event_t *a, const mt_event_t *b);
/* Both NULL, or both the same string. */
int mt_test_same_text(const char *a, const char *b);

/* A parser for each path, and what they have judged so far. */
typedef struct {
	mt_parser_t fast, json, both, exact;
	uint64_t lines, accepted, declined, exact_accepted;
	uint64_t verdicts[MT_PARSE_NOMEM + 1];
} mt_test_diff_t;

void mt_test_diff_init(mt_test_diff_t *d);
void mt_test_diff_release(mt_test_diff_t *d);
/* Judge one line every way (what names it in a failure).  Returns the
 * fast path's verdict; the event it made is left in *fast_ev (valid
 * until the next call). */
mt_parse_result_t mt_test_diff_line(mt_test_diff_t *d, const char *line,
				    size_t len, const char *what,
				    mt_event_t *fast_ev);
void mt_test_diff_cstr(mt_test_diff_t *d, const char *line, const char *what);

/* The verdict tests: a line judged through the analyzer's parser, with
 * the differential check on it first. */
typedef struct {
	mt_parser_t p;
	mt_event_t ev;
} mt_test_judge_t;

void mt_test_judge_init(mt_test_judge_t *j);
void mt_test_judge_release(mt_test_judge_t *j);
mt_parse_result_t mt_test_judge(mt_test_judge_t *j, const char *line);
/* Fail unless line's verdict is want, with a reason when it is not OK,
 * and a reason naming field when field is not NULL.  The event is left
 * in j->ev. */
void mt_test_expect(mt_test_judge_t *j, const char *line,
		    mt_parse_result_t want, const char *field);

#endif
