/*
 * mt_parse: turns one trace line into a checked event (spec section 2).
 *
 * Two readers produce the same result.  The fast path accepts only the
 * flat, compact objects the preload writes (no whitespace, no escapes, no
 * nesting but the frames array) and declines anything else; json-c, in
 * strict mode with UTF-8 validation, is the reference and judges every line
 * the fast path declines.  A line is malformed only when json-c rejects
 * its JSON, or when the JSON either path read fails the shared validator
 * (a missing field, a negative size, frame id 0...).  Both fill an mt_raw_t record of the fields memtrace knows, and one
 * validator turns that record into an mt_event_t, so the two paths cannot
 * disagree on what a field means.
 *
 * Invariants: an event's strings and frames point into the line or the
 * parser and stay valid until the next parse; strings come with their
 * length, are not NUL-terminated, and never contain a NUL byte.
 */
#ifndef MT_PARSE_H
#define MT_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/mt_event.h"

/* The fields memtrace reads; any other field is ignored. */
typedef enum {
	MT_F_V, MT_F_SEQ, MT_F_KIND,
	MT_F_ALLOCATOR_ID, MT_F_PTR, MT_F_NEW_PTR, MT_F_SIZE, MT_F_FN,
	MT_F_ALIGN, MT_F_STACK, MT_F_TID, MT_F_T,
	MT_F_FRAME_ID, MT_F_IP, MT_F_SYMBOL, MT_F_OFFSET, MT_F_MODULE,
	MT_F_MODULE_OFFSET, MT_F_STACK_ID, MT_F_FRAMES,
	MT_F_REASON, MT_F_DROPPED, MT_F_NAME,
	MT_F_COUNT
} mt_field_t;

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

/* Which optional fields an event has. */
enum {
	MT_HAS_ALIGN = 1 << 0,
	MT_HAS_STACK = 1 << 1,
	MT_HAS_TID = 1 << 2,
	MT_HAS_T = 1 << 3,
	MT_HAS_SYMBOL = 1 << 4,
	MT_HAS_OFFSET = 1 << 5,
	MT_HAS_MODULE = 1 << 6,
	MT_HAS_MODULE_OFFSET = 1 << 7,
	MT_HAS_REASON = 1 << 8,
	MT_HAS_DROPPED = 1 << 9,
	MT_HAS_NAME = 1 << 10,
	MT_HAS_FN = 1 << 11,
};

typedef struct {
	uint64_t seq;
	mt_kind_t kind;
	unsigned has;
	mt_fn_t fn;
	uint64_t allocator_id;
	uint64_t ptr, new_ptr, size, align, stack, tid, t;
	uint64_t frame_id, ip, offset, module_offset;
	uint64_t stack_id, dropped;
	const char *symbol, *module, *name, *reason;
	size_t symbol_len, module_len, name_len, reason_len;
	const uint64_t *frames;
	size_t nframes;
} mt_event_t;

/* A line with more objects and arrays than this is not read (json-c would
 * spend hundreds of bytes on each); an event needs two. */
#define MT_PARSE_CONTAINERS_MAX 1024

typedef enum {
	MT_PARSE_OK = 0,
	MT_PARSE_NOT_EVENT,   /* not an object with integer v and seq, string kind */
	MT_PARSE_BAD_VERSION, /* v is not 1 */
	MT_PARSE_MALFORMED,   /* a header, but not a valid event */
	MT_PARSE_DECLINED,    /* fast path only: json-c must judge */
	MT_PARSE_NOMEM,
} mt_parse_result_t;

/* A vocabulary of mt_event names (the kinds or the fns) as the parser
 * looks it up on nearly every line: each name with its length, and from a
 * hash of length and first byte to the one name with that hash (its index
 * plus 1; 0 for none, 0xff for several). */
#define MT_NAMES_MAX 16
typedef struct {
	int count;
	const char *name[MT_NAMES_MAX];
	size_t len[MT_NAMES_MAX];
	unsigned char by_hash[64];
} mt_names_t;

typedef struct {
	void *tok;      /* json_tokener */
	void *obj;      /* json-c's last object, alive until the next parse */
	uint64_t *arr;  /* frames storage */
	size_t arr_cap;
	int64_t version; /* the v of a MT_PARSE_BAD_VERSION line */
	const char *why; /* why the last line was rejected: static text */
	const char *why_field; /* the field it names, or NULL */
	int used_json_c; /* the last line went to json-c */
	mt_names_t kinds, fns;
	/* The fast path's key prediction (see mt_parse.c): the key that
	 * followed field f in the last line of kind k is next_key[k][f]
	 * (k = MT_KIND_UNKNOWN before the kind is read, f = MT_F_COUNT at the
	 * start of a line or after an unknown key), 0xff when none; and each
	 * field's key as written, '"', name, '"', ':', padded to 16 bytes. */
	unsigned char next_key[MT_KIND_COUNT + 1][MT_F_COUNT + 1];
	char key_text[MT_F_COUNT][16];
	unsigned char key_text_len[MT_F_COUNT];
} mt_parser_t;

int mt_parser_init(mt_parser_t *p);
void mt_parser_release(mt_parser_t *p);

/* Judge one line (without its '\n'): the exact-layout matcher, the generic
 * fast path, then json-c. */
mt_parse_result_t mt_parser_parse(mt_parser_t *p, const char *line, size_t len,
				  mt_event_t *ev);

/*
 * Whether a number of the line (valid JSON) is beyond what json-c holds:
 * an integer outside int64_t (negative) or uint64_t, or a fraction or
 * exponent strtod() calls out of range.  json-c clamps such numbers
 * silently, so every reader that trusts json-c's values asks this first.
 */
int mt_parse_number_out_of_range(const char *s, size_t len);

/* The two paths alone, for the test that holds one to the other.  The fast
 * path returns MALFORMED only from the shared validator, for JSON it read
 * itself; json-c never returns DECLINED. */
mt_parse_result_t mt_parse_fast(mt_parser_t *p, const char *line, size_t len,
				mt_event_t *ev);
mt_parse_result_t mt_parse_json_c(mt_parser_t *p, const char *line, size_t len,
				  mt_event_t *ev);

/* The exact-layout matcher that mt_parser_parse() tries first: only the
 * block events (alloc, free, resize, remap, alloc.fail) exactly as the
 * preload writes them, keys in the preload's order, no whitespace,
 * lower-case hex, integers without leading zeros.  It returns MT_PARSE_OK,
 * with the very event the validator makes of such a line, or DECLINED for
 * anything else, a line the validator would reject included. */
mt_parse_result_t mt_parse_exact(mt_parser_t *p, const char *line, size_t len,
				 mt_event_t *ev);

/* How many bytes from a line's start mt_parse_exact_window() may read. */
#define MT_PARSE_EXACT_SPAN 512

/*
 * mt_parse_exact() on the line that starts at s, finding its end itself,
 * for a reader that hands out its buffer rather than lines: the
 * MT_PARSE_EXACT_SPAN bytes at s must be readable (and are read only as
 * far as the line's '\n').  On MT_PARSE_OK the line is s[0..*len), its
 * first '\n' is s[*len], and the event is mt_parse_exact()'s of it; a line
 * without a '\n' within the span declines.  Unlike mt_parse_exact(), a
 * declined line leaves *ev partly written.
 */
mt_parse_result_t mt_parse_exact_window(mt_parser_t *p, const char *s,
					mt_event_t *ev, size_t *len);

/* mt_parser_parse() without the exact matcher, for a line it declined. */
mt_parse_result_t mt_parser_parse_inexact(mt_parser_t *p, const char *line,
					  size_t len, mt_event_t *ev);

#endif
