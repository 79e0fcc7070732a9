/*
 * mt_any_json: the reference path.  json-c, in strict mode with UTF-8
 * validation, parses the line, and its members go into the validator's
 * record.  It judges every line the faster parsers decline, and only it
 * says that a line is not JSON.
 *
 * Invariants: it never returns DECLINED.  It never hands on a value
 * json-c altered: a line that is not UTF-8 as RFC 3629 has it (json-c's
 * check lets overlong forms and surrogates through), holds a NUL byte,
 * holds more than MT_PARSE_CONTAINERS_MAX objects and arrays, or a number
 * json-c clamps is rejected, not read.  json-c's object stays alive in the
 * parser until the next line, and the event's strings point into it.
 */
#ifndef MT_ANY_JSON_H
#define MT_ANY_JSON_H

#include <stddef.h>

#include "../parse/mt_parse.h"

/* The parser's tokener (mt_parser_init()): MT_OK or MT_ENOMEM. */
int mt_any_json_init(mt_parser_t *p);
/* Its tokener and last object. */
void mt_any_json_release(mt_parser_t *p);

/* OK, NOT_EVENT (with p->why: not JSON, not an object...), BAD_VERSION,
 * MALFORMED or NOMEM. */
mt_parse_result_t mt_any_json_parse(mt_parser_t *p, const char *line, size_t len,
				    mt_event_t *ev);

/*
 * Whether a number of the line (valid JSON) is beyond what json-c holds:
 * an integer outside int64_t (negative) or uint64_t, or a fraction or
 * exponent strtod() calls out of range.  json-c clamps such numbers
 * silently, so every reader that trusts json-c's values asks this first.
 */
int mt_any_json_number_out_of_range(const char *s, size_t len);

#endif
