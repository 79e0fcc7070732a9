/*
 * mt_flat: the general fast path.  It reads any flat, compact JSON object
 * (no whitespace, no escapes, only ASCII, no nesting but an array of
 * integers for frames) into the validator's record, in one pass of wide
 * reads, and leaves everything else to json-c.
 *
 * Behind the exact matcher it reads the lines that matcher does not know:
 * the preload's frame, stack, allocator and trace.stop lines, and block
 * events in another key order.  Frame and stack lines are 0.1 % of a
 * Python trace but 6 % of cc1's, and json-c takes about 18 times as long
 * on each: without this path, a summary of cc1's trace takes 2.7 times as
 * long.
 *
 * Invariants: it never accepts a line json-c would judge differently;
 * when in doubt it declines.  It returns MALFORMED only from the
 * validator, for JSON it read itself.  It allocates only the parser's
 * frames storage, and reads no byte past the line's last.
 */
#ifndef MT_FLAT_H
#define MT_FLAT_H

#include <stddef.h>

#include "../parse/mt_parse.h"

/* The parser's key texts and an empty key prediction (mt_parser_init()). */
void mt_flat_init(mt_parser_t *p);

/* OK, NOT_EVENT, BAD_VERSION or MALFORMED as the validator says, NOMEM,
 * or DECLINED: json-c must judge. */
mt_parse_result_t mt_flat_parse(mt_parser_t *p, const char *line, size_t len,
				mt_event_t *ev);

#endif
