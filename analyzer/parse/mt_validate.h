/*
 * mt_validate: the one validator.  The general fast path and the json-c
 * path each read a line into an mt_raw_t record of the fields memtrace
 * knows, and this turns the record into an mt_event_t, so that the paths
 * cannot disagree on what a field means.
 *
 * Invariants: it reads only the record and the parser's name tables, never
 * the line; it allocates nothing; the event's strings and frames point
 * where the record's do.
 */
#ifndef MT_VALIDATE_H
#define MT_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "../parse/mt_parse.h"

typedef enum {
	MT_RAW_ABSENT = 0,
	MT_RAW_NULL,
	MT_RAW_BOOL,
	MT_RAW_INT,       /* neg and u: the value is -u when neg */
	MT_RAW_DOUBLE,
	MT_RAW_STRING,    /* s, len: the unescaped bytes; nul, hex */
	MT_RAW_INT_ARRAY, /* arr, len: non-negative integers */
	MT_RAW_OTHER      /* an object, or an array of anything else */
} mt_raw_type_t;

typedef struct {
	mt_raw_type_t type;
	int neg;
	uint64_t u;
	const char *s;
	const uint64_t *arr;
	size_t len;
	int nul; /* a string holds a NUL byte */
	int hex; /* a string is "0x" and 1 to 16 hex digits, and u their value */
} mt_raw_value_t;

/* Only the fields whose bit (1 << field) is set in seen are filled; the
 * other slots are absent and hold garbage, so that a parse never has to
 * clear the whole record (it is most of a kilobyte). */
typedef struct {
	uint32_t seen;
	int kind; /* the string kind's mt_kind_t when the reader looked it up
		   * (the fast path does), else -1 */
	mt_raw_value_t f[MT_F_COUNT];
} mt_raw_t;

/*
 * The event of the record r into *ev (cleared first), or the verdict and
 * p->why (static text; p->why_field names the field when one is at fault,
 * and p->version holds the v of MT_PARSE_BAD_VERSION).  Returns OK,
 * NOT_EVENT, BAD_VERSION or MALFORMED; never DECLINED nor NOMEM.
 */
mt_parse_result_t mt_validate_event(mt_parser_t *p, const mt_raw_t *r,
				     mt_event_t *ev);

#endif
