/*
 * mt_parse: turns one trace line into a checked event (format.md section
 * 2): the parser object, the event it fills, and the dispatch over the
 * three parsers that read a line, each in a file of its own:
 *
 *   mt_block_line   the block events exactly as the preload writes them, byte
 *              for byte: nearly every line of a trace (mt_block_line.h)
 *   mt_flat    any flat, compact object, into the validator's record:
 *              frames, stacks and the rest of the preload's lines
 *              (mt_flat.h)
 *   mt_any_json   json-c, strict and validating UTF-8, the reference: every
 *              line the other two decline (mt_any_json.h)
 *
 * and the one validator the last two hand their fields to (mt_validate.h),
 * which the exact matcher's events equal.  Each faster parser only ever
 * declines what it does not know, so every path gives one verdict: a line
 * is malformed only when json-c rejects its JSON or the validator its
 * fields (a missing field, a negative size, frame id 0...).
 *
 * Invariants: an event's strings and frames point into the line or the
 * parser and stay valid until the next parse; strings come with their
 * length, are not NUL-terminated, and never contain a NUL byte.
 */
#ifndef MT_PARSE_H
#define MT_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "../parse/mt_scan.h"
#include "../../common/mt_event.h"

/* The fields memtrace reads; any other field is ignored. */
typedef enum {
	MT_F_V, MT_F_SEQ, MT_F_KIND,
	MT_F_ALLOCATOR_ID, MT_F_PTR, MT_F_NEW_PTR, MT_F_SIZE, MT_F_FN,
	MT_F_ALIGN, MT_F_STACK, MT_F_TID, MT_F_T,
	MT_F_FRAME_ID, MT_F_IP, MT_F_SYMBOL, MT_F_OFFSET, MT_F_MODULE,
	MT_F_MODULE_OFFSET, MT_F_STACK_ID, MT_F_FRAMES,
	MT_F_REASON, MT_F_DROPPED, MT_F_NAME, MT_F_STACK_DEPTH,
	MT_F_SAMPLE_BYTES,
	MT_F_BUILD_ID, MT_F_PID,
	MT_F_COUNT
} mt_field_t;

/* Each field's key in a line: "v", "seq", ... */
extern const char *const mt_parse_field_names[MT_F_COUNT];

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
	MT_HAS_STACK_DEPTH = 1 << 12,
	MT_HAS_SAMPLE_BYTES = 1 << 13,
	MT_HAS_BUILD_ID = 1 << 14,
	MT_HAS_PID = 1 << 15,
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
	uint64_t stack_depth; /* trace.start's, read for `flamegraph` */
	uint64_t pid;         /* trace.start's, read for `top` */
	uint64_t sample_bytes; /* trace.start's: a sampled trace's mean */
	const char *symbol, *module, *name, *reason;
	size_t symbol_len, module_len, name_len, reason_len;
	/* A frame's module's build id, hex, beyond the spec's fields (which
	 * readers of other versions ignore). */
	const char *build_id;
	size_t build_id_len;
	const uint64_t *frames;
	size_t nframes;
} mt_event_t;

/*
 * Zero every field of ev, by name, for the block events the exact matcher
 * and the threads ahead hand the pass, one a line: a compound literal or
 * memset() of the whole 256 bytes compiles to rep stos, whose start-up
 * cost outweighs the few fields such an event sets.  Stores the caller
 * then makes again are merged away.
 */
static inline void mt_event_clear(mt_event_t *ev)
{
	_Static_assert(sizeof(mt_event_t) == 256,
		       "mt_event_clear() sets every field of mt_event_t");
	ev->seq = 0;
	ev->kind = (mt_kind_t)0;
	ev->has = 0;
	ev->fn = (mt_fn_t)0;
	ev->allocator_id = 0;
	ev->ptr = ev->new_ptr = ev->size = ev->align = ev->stack = 0;
	ev->tid = ev->t = 0;
	ev->frame_id = ev->ip = ev->offset = ev->module_offset = 0;
	ev->stack_id = ev->dropped = ev->stack_depth = ev->sample_bytes = 0;
	ev->pid = 0;
	ev->symbol = ev->module = ev->name = ev->reason = NULL;
	ev->symbol_len = ev->module_len = ev->name_len = ev->reason_len = 0;
	ev->build_id = NULL;
	ev->build_id_len = 0;
	ev->frames = NULL;
	ev->nframes = 0;
}

/* A line with more objects and arrays than this is not read (json-c would
 * spend hundreds of bytes on each); an event needs two. */
#define MT_PARSE_CONTAINERS_MAX 1024

typedef enum {
	MT_PARSE_OK = 0,
	MT_PARSE_NOT_EVENT,   /* not an object with integer v and seq, string kind */
	MT_PARSE_BAD_VERSION, /* v is not 1 */
	MT_PARSE_MALFORMED,   /* a header, but not a valid event */
	MT_PARSE_DECLINED,    /* a faster parser only: the next one must judge */
	MT_PARSE_NOMEM,
} mt_parse_result_t;

typedef struct {
	void *tok;      /* json_tokener (mt_any_json) */
	void *obj;      /* json-c's last object, alive until the next parse */
	uint64_t *arr;  /* frames storage */
	size_t arr_cap;
	int64_t version; /* the v of a MT_PARSE_BAD_VERSION line */
	const char *why; /* why the last line was rejected: static text */
	const char *why_field; /* the field it names, or NULL */
	int used_json_c; /* the last line went to json-c */
	mt_names_t kinds, fns;
	/* The fast path's key prediction (mt_flat.c): the key that followed
	 * field f in the last line of kind k is next_key[k][f]
	 * (k = MT_KIND_UNKNOWN before the kind is read, f = MT_F_COUNT at the
	 * start of a line or after an unknown key), 0xff when none; and each
	 * field's key as written, '"', name, '"', ':', padded to 16 bytes. */
	unsigned char next_key[MT_KIND_COUNT + 1][MT_F_COUNT + 1];
	char key_text[MT_F_COUNT][16];
	unsigned char key_text_len[MT_F_COUNT];
} mt_parser_t;

int mt_parser_init(mt_parser_t *p);
void mt_parser_release(mt_parser_t *p);

/* Room for n frame ids in p->arr, which a stack event's frames point to:
 * MT_OK or MT_ENOMEM (then p->arr is as it was). */
int mt_parser_reserve(mt_parser_t *p, size_t n);

/* Judge one line (without its '\n'): the exact-layout matcher, the general
 * fast path, then json-c; never DECLINED. */
mt_parse_result_t mt_parser_parse(mt_parser_t *p, const char *line, size_t len,
				  mt_event_t *ev);

/* mt_parser_parse() without the exact matcher, for a line it declined. */
mt_parse_result_t mt_parser_parse_inexact(mt_parser_t *p, const char *line,
					  size_t len, mt_event_t *ev);

/* How many bytes from a line's start mt_parse_exact_window() may read. */
#define MT_PARSE_EXACT_SPAN 512

/* The first parser alone on a reader's buffer rather than a line, for a
 * reader that does not split lines first: mt_block_line_parse_window()
 * (mt_block_line.h), whose contract this is. */
mt_parse_result_t mt_parse_exact_window(mt_parser_t *p, const char *s,
					mt_event_t *ev, size_t *len);

/* mt_any_json_number_out_of_range() (mt_any_json.h), for a reader that trusts
 * json-c's values. */
int mt_parse_number_out_of_range(const char *s, size_t len);

#endif
