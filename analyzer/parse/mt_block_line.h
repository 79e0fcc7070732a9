/*
 * mt_block_line: the exact-layout matcher, the parser of nearly every line.
 * It takes only the block events (alloc, free, resize, remap, alloc.fail)
 * exactly as the preload writes them: keys in the preload's order, no
 * whitespace, lower-case hex, integers without leading zeros.  It fills
 * the event itself, with no record of fields and no key lookup.
 *
 * Invariants: it returns MT_PARSE_OK, with the very event the validator
 * makes of such a line, or DECLINED for anything else, a line the
 * validator would reject included: it can only save time, never change a
 * verdict.  It allocates nothing and reads at most MT_PARSE_EXACT_SPAN
 * bytes from a line's start.
 */
#ifndef MT_BLOCK_LINE_H
#define MT_BLOCK_LINE_H

#include <stddef.h>

#include "../parse/mt_parse.h"

/* The line line[0..len), without its '\n'.  A declined line leaves *ev as
 * it was. */
mt_parse_result_t mt_block_line_parse(mt_parser_t *p, const char *line, size_t len,
				      mt_event_t *ev);

/*
 * mt_block_line_parse() on the line that starts at s, finding its end itself,
 * for a reader that hands out its buffer rather than lines: the
 * MT_PARSE_EXACT_SPAN bytes at s must be readable (and are read only as
 * far as the line's '\n').  On MT_PARSE_OK the line is s[0..*len), its
 * first '\n' is s[*len], and the event is mt_block_line_parse()'s of it; a line
 * without a '\n' within the span declines.  Unlike mt_block_line_parse(), a
 * declined line leaves *ev partly written.
 */
mt_parse_result_t mt_block_line_parse_window(mt_parser_t *p, const char *s,
					     mt_event_t *ev, size_t *len);

#endif
