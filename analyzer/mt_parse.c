/*
 * mt_parse: the fast path and the json-c path into one validator.  The
 * fast path must never accept a line json-c would judge differently: when
 * in doubt it declines.  Neither path allocates per line except json-c's
 * own objects.
 */
#include "mt_parse.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "mt_error.h"
#include "mt_mem.h"
#include "../common/mt_utf8.h"

/* SSE2, which every x86-64 has, for the fast path's wide reads. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define MT_SSE2 1
#endif

static const char *const field_names[MT_F_COUNT] = {
	[MT_F_V] = "v", [MT_F_SEQ] = "seq", [MT_F_KIND] = "kind",
	[MT_F_ALLOCATOR_ID] = "allocator_id", [MT_F_PTR] = "ptr",
	[MT_F_NEW_PTR] = "new_ptr", [MT_F_SIZE] = "size", [MT_F_FN] = "fn",
	[MT_F_ALIGN] = "align", [MT_F_STACK] = "stack", [MT_F_TID] = "tid",
	[MT_F_T] = "t", [MT_F_FRAME_ID] = "frame_id", [MT_F_IP] = "ip",
	[MT_F_SYMBOL] = "symbol", [MT_F_OFFSET] = "offset",
	[MT_F_MODULE] = "module", [MT_F_MODULE_OFFSET] = "module_offset",
	[MT_F_STACK_ID] = "stack_id", [MT_F_FRAMES] = "frames",
	[MT_F_REASON] = "reason", [MT_F_DROPPED] = "dropped",
	[MT_F_NAME] = "name",
};

static void names_init(mt_names_t *t);

int mt_parser_init(mt_parser_t *p)
{
	memset(p, 0, sizeof(*p));
	p->tok = json_tokener_new();
	if (!p->tok)
		return MT_ENOMEM;
	json_tokener_set_flags(p->tok,
			       JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	_Static_assert(MT_KIND_COUNT <= MT_NAMES_MAX && MT_FN_COUNT <= MT_NAMES_MAX,
		       "mt_names_t holds every kind and fn");
	for (int k = 0; k < MT_KIND_COUNT; k++)
		p->kinds.name[k] = mt_event_kind_name((mt_kind_t)k);
	p->kinds.count = MT_KIND_COUNT;
	names_init(&p->kinds);
	for (int f = 0; f < MT_FN_COUNT; f++)
		p->fns.name[f] = mt_event_fn_name((mt_fn_t)f);
	p->fns.count = MT_FN_COUNT;
	names_init(&p->fns);
	memset(p->next_key, 0xff, sizeof(p->next_key));
	for (int f = 0; f < MT_F_COUNT; f++) {
		size_t n = strlen(field_names[f]);

		p->key_text[f][0] = '"';
		memcpy(p->key_text[f] + 1, field_names[f], n);
		p->key_text[f][n + 1] = '"';
		p->key_text[f][n + 2] = ':';
		p->key_text_len[f] = (unsigned char)(n + 3);
	}
	return MT_OK;
}

void mt_parser_release(mt_parser_t *p)
{
	if (p->obj)
		json_object_put(p->obj);
	if (p->tok)
		json_tokener_free(p->tok);
	mt_mem_free(p->arr);
	memset(p, 0, sizeof(*p));
}

static int arr_reserve(mt_parser_t *p, size_t n)
{
	uint64_t *a;
	size_t cap;

	if (n <= p->arr_cap)
		return MT_OK;
	cap = p->arr_cap ? p->arr_cap : 64;
	while (cap < n)
		cap *= 2;
	a = mt_mem_realloc(p->arr, cap * sizeof(*a));
	if (!a)
		return MT_ENOMEM;
	p->arr = a;
	p->arr_cap = cap;
	return MT_OK;
}

/* ---- the validator, shared by both paths ---- */

/* Reasons are static strings; the field is kept beside them. */
static mt_parse_result_t bad(mt_parser_t *p, const char *why)
{
	p->why = why;
	return MT_PARSE_MALFORMED;
}

/* A field of the record: its slot when seen, else an absent value. */
static inline const mt_raw_value_t *field(const mt_raw_t *r, mt_field_t f)
{
	static const mt_raw_value_t absent = { .type = MT_RAW_ABSENT };

	return (r->seen >> f) & 1 ? &r->f[f] : &absent;
}

static unsigned name_hash(const char *s, size_t len)
{
	return (unsigned)(len * 7 + (unsigned char)s[0]) & 63;
}

/* Fill in the lengths and the hash table of t's names. */
static void names_init(mt_names_t *t)
{
	memset(t->by_hash, 0, sizeof(t->by_hash));
	for (int k = 0; k < t->count; k++) {
		unsigned char *slot;

		t->len[k] = strlen(t->name[k]);
		slot = &t->by_hash[name_hash(t->name[k], t->len[k])];
		*slot = *slot ? 0xff : (unsigned char)(k + 1);
	}
}

/* memcmp(a, b, n) == 0, inline for the short names of kinds and fns: two
 * overlapping loads cover any n from 4 to 16. */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
	if (n >= 8 && n <= 16) {
		uint64_t a0, a1, b0, b1;

		memcpy(&a0, a, 8);
		memcpy(&b0, b, 8);
		memcpy(&a1, a + n - 8, 8);
		memcpy(&b1, b + n - 8, 8);
		return ((a0 ^ b0) | (a1 ^ b1)) == 0;
	}
	if (n >= 4 && n < 8) {
		uint32_t a0, a1, b0, b1;

		memcpy(&a0, a, 4);
		memcpy(&b0, b, 4);
		memcpy(&a1, a + n - 4, 4);
		memcpy(&b1, b + n - 4, 4);
		return ((a0 ^ b0) | (a1 ^ b1)) == 0;
	}
	return !memcmp(a, b, n);
}

/* The kind or fn named by s: mt_event_kind_parse() and mt_event_fn_parse()
 * (t->count when none), but with one candidate found by a hash of length
 * and first byte, and compared without a call, where those two compare
 * every name with strlen and memcmp. */
static inline int name_lookup(const mt_names_t *t, const char *s, size_t len)
{
	unsigned i;

	if (!len)
		return t->count;
	i = t->by_hash[name_hash(s, len)];
	if (i == 0xff) {
		for (int k = 0; k < t->count; k++)
			if (t->len[k] == len && !memcmp(t->name[k], s, len))
				return k;
		return t->count;
	}
	if (i && t->len[i - 1] == len && same_bytes(t->name[i - 1], s, len))
		return (int)i - 1;
	return t->count;
}

/* "0x" and 1 to 16 hex digits of either case, as mt_fmt_parse_hex(), which
 * it must match (the decisions page promises that syntax).  A table lookup
 * per digit instead of three range tests: the digits of a pointer are
 * random, so the tests' branches mispredict, and pointers are on nearly
 * every line.  Non-digits are 0xff in the table; OR-ing the entries keeps
 * the loop branch-free and the high nibble tells a bad byte. */
#define HEX_OF(c)                                                          \
	((c) >= '0' && (c) <= '9' ? (c) - '0' :                            \
	 (c) >= 'a' && (c) <= 'f' ? (c) - 'a' + 10 :                       \
	 (c) >= 'A' && (c) <= 'F' ? (c) - 'A' + 10 : 0xff)
#define ROW16(F, b)                                                        \
	F(b + 0), F(b + 1), F(b + 2), F(b + 3), F(b + 4), F(b + 5),         \
	F(b + 6), F(b + 7), F(b + 8), F(b + 9), F(b + 10), F(b + 11),       \
	F(b + 12), F(b + 13), F(b + 14), F(b + 15)
#define TABLE256(F)                                                        \
	{ ROW16(F, 0x00), ROW16(F, 0x10), ROW16(F, 0x20), ROW16(F, 0x30),   \
	  ROW16(F, 0x40), ROW16(F, 0x50), ROW16(F, 0x60), ROW16(F, 0x70),   \
	  ROW16(F, 0x80), ROW16(F, 0x90), ROW16(F, 0xa0), ROW16(F, 0xb0),   \
	  ROW16(F, 0xc0), ROW16(F, 0xd0), ROW16(F, 0xe0), ROW16(F, 0xf0) }

static const unsigned char hex_value[256] = TABLE256(HEX_OF);

static int parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned bad = 0;

	if (len < 3 || len > 18 || s[0] != '0' || s[1] != 'x')
		return -1;
	for (size_t i = 2; i < len; i++) {
		unsigned d = hex_value[(unsigned char)s[i]];

		bad |= d;
		v = v << 4 | (d & 0xf);
	}
	if (bad & 0xf0)
		return -1;
	*out = v;
	return 0;
}

static int present(const mt_raw_value_t *v)
{
	return v->type != MT_RAW_ABSENT && v->type != MT_RAW_NULL;
}

/* 1: set, 0: absent or null, -1: present with the wrong type. */
static int get_uint(const mt_raw_t *r, mt_field_t f, uint64_t *out)
{
	const mt_raw_value_t *v = field(r, f);

	if (!present(v))
		return 0;
	if (v->type != MT_RAW_INT || (v->neg && v->u))
		return -1;
	*out = v->u;
	return 1;
}

static int get_ptr(const mt_raw_t *r, mt_field_t f, uint64_t *out)
{
	const mt_raw_value_t *v = field(r, f);

	if (!present(v))
		return 0;
	if (v->type != MT_RAW_STRING)
		return -1;
	if (v->hex)
		*out = v->u;
	else if (parse_hex(v->s, v->len, out))
		return -1;
	return 1;
}

/* An offset is an integer or a hex string. */
static int get_offset(const mt_raw_t *r, mt_field_t f, uint64_t *out)
{
	const mt_raw_value_t *v = field(r, f);

	if (v->type == MT_RAW_STRING)
		return get_ptr(r, f, out);
	return get_uint(r, f, out);
}

static int get_str(const mt_raw_t *r, mt_field_t f, const char **s,
		   size_t *len)
{
	const mt_raw_value_t *v = field(r, f);

	if (!present(v))
		return 0;
	if (v->type != MT_RAW_STRING || v->nul)
		return -1;
	*s = v->s;
	*len = v->len;
	return 1;
}

#define REQUIRE(expr, field)                                               \
	do {                                                               \
		if ((expr) != 1) {                                         \
			p->why_field = field_names[field];                 \
			return bad(p, "a required field is missing or has the " \
				      "wrong type");                       \
		}                                                          \
	} while (0)

#define OPTIONAL(expr, field, flag)                                        \
	do {                                                               \
		int got_ = (expr);                                         \
		if (got_ < 0) {                                            \
			p->why_field = field_names[field];                 \
			return bad(p, "a field has the wrong type");       \
		}                                                          \
		if (got_)                                                  \
			ev->has |= (flag);                                 \
	} while (0)

static mt_parse_result_t validate(mt_parser_t *p, const mt_raw_t *r,
				  mt_event_t *ev)
{
	const mt_raw_value_t *v = field(r, MT_F_V);
	const mt_raw_value_t *seq = field(r, MT_F_SEQ);
	const mt_raw_value_t *kind = field(r, MT_F_KIND);
	const mt_raw_value_t *frames;
	const char *s;
	size_t len;

	memset(ev, 0, sizeof(*ev));
	/* Until the kind is read: 0 would be MT_KIND_TRACE_START. */
	ev->kind = MT_KIND_UNKNOWN;
	p->why_field = NULL;
	if (v->type != MT_RAW_INT || seq->type != MT_RAW_INT ||
	    kind->type != MT_RAW_STRING) {
		p->why = "it is not an object with an integer v, an integer "
			 "seq and a string kind";
		return MT_PARSE_NOT_EVENT;
	}
	if (v->neg || v->u != MT_FORMAT_VERSION) {
		if (v->neg)
			p->version = -(int64_t)(v->u - 1) - 1;
		else
			p->version = v->u > INT64_MAX ? INT64_MAX : (int64_t)v->u;
		p->why = "its format version is not 1";
		return MT_PARSE_BAD_VERSION;
	}
	if (seq->neg && seq->u)
		return bad(p, "its seq is negative");
	ev->seq = seq->u;
	ev->kind = r->kind >= 0 ? (mt_kind_t)r->kind :
				  (mt_kind_t)name_lookup(&p->kinds, kind->s,
							 kind->len);
	if (ev->kind == MT_KIND_UNKNOWN)
		return bad(p, "its kind is not one memtrace knows");

	switch (ev->kind) {
	case MT_KIND_TRACE_START:
		break;
	case MT_KIND_ALLOCATOR:
		REQUIRE(get_uint(r, MT_F_ALLOCATOR_ID, &ev->allocator_id),
			MT_F_ALLOCATOR_ID);
		OPTIONAL(get_str(r, MT_F_NAME, &ev->name, &ev->name_len),
			 MT_F_NAME, MT_HAS_NAME);
		break;
	case MT_KIND_FRAME:
		REQUIRE(get_uint(r, MT_F_FRAME_ID, &ev->frame_id), MT_F_FRAME_ID);
		if (!ev->frame_id)
			return bad(p, "its frame_id is 0");
		REQUIRE(get_ptr(r, MT_F_IP, &ev->ip), MT_F_IP);
		OPTIONAL(get_str(r, MT_F_SYMBOL, &ev->symbol, &ev->symbol_len),
			 MT_F_SYMBOL, MT_HAS_SYMBOL);
		OPTIONAL(get_offset(r, MT_F_OFFSET, &ev->offset), MT_F_OFFSET,
			 MT_HAS_OFFSET);
		OPTIONAL(get_str(r, MT_F_MODULE, &ev->module, &ev->module_len),
			 MT_F_MODULE, MT_HAS_MODULE);
		OPTIONAL(get_offset(r, MT_F_MODULE_OFFSET, &ev->module_offset),
			 MT_F_MODULE_OFFSET, MT_HAS_MODULE_OFFSET);
		break;
	case MT_KIND_STACK:
		REQUIRE(get_uint(r, MT_F_STACK_ID, &ev->stack_id), MT_F_STACK_ID);
		if (!ev->stack_id)
			return bad(p, "its stack_id is 0");
		frames = field(r, MT_F_FRAMES);
		if (frames->type != MT_RAW_INT_ARRAY) {
			p->why_field = field_names[MT_F_FRAMES];
			return bad(p, "its frames are not an array of frame ids");
		}
		ev->frames = frames->arr;
		ev->nframes = frames->len;
		for (size_t i = 0; i < ev->nframes; i++)
			if (!ev->frames[i])
				return bad(p, "its frames name frame id 0");
		break;
	case MT_KIND_ALLOC:
	case MT_KIND_ALLOC_FAIL:
		REQUIRE(get_uint(r, MT_F_ALLOCATOR_ID, &ev->allocator_id),
			MT_F_ALLOCATOR_ID);
		if (ev->kind == MT_KIND_ALLOC)
			REQUIRE(get_ptr(r, MT_F_PTR, &ev->ptr), MT_F_PTR);
		REQUIRE(get_uint(r, MT_F_SIZE, &ev->size), MT_F_SIZE);
		REQUIRE(get_str(r, MT_F_FN, &s, &len), MT_F_FN);
		ev->fn = (mt_fn_t)name_lookup(&p->fns, s, len);
		if (!mt_event_fn_allocates(ev->fn))
			return bad(p, "its fn is not an allocation function");
		ev->has |= MT_HAS_FN;
		OPTIONAL(get_uint(r, MT_F_ALIGN, &ev->align), MT_F_ALIGN,
			 MT_HAS_ALIGN);
		goto common;
	case MT_KIND_FREE:
	case MT_KIND_RESIZE:
	case MT_KIND_REMAP:
		REQUIRE(get_uint(r, MT_F_ALLOCATOR_ID, &ev->allocator_id),
			MT_F_ALLOCATOR_ID);
		REQUIRE(get_ptr(r, MT_F_PTR, &ev->ptr), MT_F_PTR);
		if (ev->kind != MT_KIND_FREE)
			REQUIRE(get_uint(r, MT_F_SIZE, &ev->size), MT_F_SIZE);
		if (ev->kind == MT_KIND_REMAP)
			REQUIRE(get_ptr(r, MT_F_NEW_PTR, &ev->new_ptr),
				MT_F_NEW_PTR);
		{
			int got = get_str(r, MT_F_FN, &s, &len);

			if (got < 0) {
				p->why_field = field_names[MT_F_FN];
				return bad(p, "a field has the wrong type");
			}
			if (got) {
				/* Any name is allowed here ("free",
				 * "realloc"): it is only shown. */
				ev->fn = (mt_fn_t)name_lookup(&p->fns, s, len);
				ev->has |= MT_HAS_FN;
			}
		}
	common:
		if (ev->kind != MT_KIND_FREE)
			OPTIONAL(get_uint(r, MT_F_STACK, &ev->stack), MT_F_STACK,
				 MT_HAS_STACK);
		if ((ev->has & MT_HAS_STACK) && !ev->stack)
			return bad(p, "its stack is 0");
		OPTIONAL(get_uint(r, MT_F_TID, &ev->tid), MT_F_TID, MT_HAS_TID);
		OPTIONAL(get_uint(r, MT_F_T, &ev->t), MT_F_T, MT_HAS_T);
		break;
	case MT_KIND_TRACE_STOP:
		OPTIONAL(get_str(r, MT_F_REASON, &ev->reason, &ev->reason_len),
			 MT_F_REASON, MT_HAS_REASON);
		OPTIONAL(get_uint(r, MT_F_DROPPED, &ev->dropped), MT_F_DROPPED,
			 MT_HAS_DROPPED);
		OPTIONAL(get_uint(r, MT_F_T, &ev->t), MT_F_T, MT_HAS_T);
		break;
	default:
		break;
	}
	p->why = NULL;
	return MT_PARSE_OK;
}

/* ---- the fast path ---- */

static int key_field(const char *k, size_t n)
{
	/* The preload's keys, by length then bytes: a switch beats a loop
	 * of strcmp on every field of every line. */
	switch (n) {
	case 1:
		if (k[0] == 'v') return MT_F_V;
		if (k[0] == 't') return MT_F_T;
		break;
	case 2:
		if (!memcmp(k, "fn", 2)) return MT_F_FN;
		if (!memcmp(k, "ip", 2)) return MT_F_IP;
		break;
	case 3:
		if (!memcmp(k, "seq", 3)) return MT_F_SEQ;
		if (!memcmp(k, "ptr", 3)) return MT_F_PTR;
		if (!memcmp(k, "tid", 3)) return MT_F_TID;
		break;
	case 4:
		if (!memcmp(k, "kind", 4)) return MT_F_KIND;
		if (!memcmp(k, "size", 4)) return MT_F_SIZE;
		if (!memcmp(k, "name", 4)) return MT_F_NAME;
		break;
	case 5:
		if (!memcmp(k, "stack", 5)) return MT_F_STACK;
		if (!memcmp(k, "align", 5)) return MT_F_ALIGN;
		break;
	case 6:
		if (!memcmp(k, "symbol", 6)) return MT_F_SYMBOL;
		if (!memcmp(k, "offset", 6)) return MT_F_OFFSET;
		if (!memcmp(k, "module", 6)) return MT_F_MODULE;
		if (!memcmp(k, "frames", 6)) return MT_F_FRAMES;
		if (!memcmp(k, "reason", 6)) return MT_F_REASON;
		break;
	case 7:
		if (!memcmp(k, "new_ptr", 7)) return MT_F_NEW_PTR;
		if (!memcmp(k, "dropped", 7)) return MT_F_DROPPED;
		break;
	case 8:
		if (!memcmp(k, "frame_id", 8)) return MT_F_FRAME_ID;
		if (!memcmp(k, "stack_id", 8)) return MT_F_STACK_ID;
		break;
	case 12:
		if (!memcmp(k, "allocator_id", 12)) return MT_F_ALLOCATOR_ID;
		break;
	case 13:
		if (!memcmp(k, "module_offset", 13)) return MT_F_MODULE_OFFSET;
		break;
	}
	return -1;
}

/*
 * The fast path's scanners, where the speed of this file lies.
 *
 * No bounds checks.  A line is read only when its last byte, last, is '}',
 * and '}' stops every scan: it is not a digit, and skip_plain() stops on it
 * too (scan_string() carries on when it is not the line's last byte, so
 * inside a string).  A scan that starts inside the line therefore stops
 * inside it, at the latest on last, and every byte the structure checks
 * read lies at or before last.  The reads of several bytes, true, false
 * and null, check their room first.
 *
 * Wide reads.  A line holds about seven numbers and a few strings of
 * varying lengths, and a loop over their bytes ends in a mispredicted
 * branch on each.  So strings are scanned 16 bytes at a time (SSE2, which
 * every x86-64 has) and numbers 8 digits at a time in a 64-bit word
 * (SWAR), whenever that many bytes remain up to last: a wide read never
 * leaves the line.  It is worth about 5 % of the analyzer's time
 * (docs/performance.md).  Near a line's end, and on other machines, the
 * byte loops do the same work.
 */

/* A byte a plain string may hold: printable ASCII but '"', '\\', and '}'
 * (the sentinel above). */
#define PLAIN_OF(c) ((c) >= 0x20 && (c) < 0x7f && (c) != '"' && (c) != '\\' && (c) != '}')
static const unsigned char plain[256] = TABLE256(PLAIN_OF);

#ifdef MT_SSE2
/* Bit i set: byte i of the 16 at s is not plain. */
static inline unsigned not_plain16(const char *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
	__m128i m = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
			     _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('}')),
			     _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f))));

	/* A signed compare: bytes 0x80 to 0xff are negative, so this one
	 * catches them with the control bytes. */
	m = _mm_or_si128(m, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
	return (unsigned)_mm_movemask_epi8(m);
}
#endif

/* The first byte at or after s that is not plain. */
static inline const char *skip_plain(const char *s, const char *last)
{
#ifdef MT_SSE2
	while (last - s >= 15) {
		unsigned m = not_plain16(s);

		if (m)
			return s + __builtin_ctz(m);
		s += 16;
	}
#else
	(void)last;
#endif
	while (plain[(unsigned char)*s])
		s++;
	return s;
}

/* A plain string from after its opening quote: returns the position after
 * its closing quote, or NULL to decline (an escape, a control or non-ASCII
 * byte, or no closing quote before last). */
static inline const char *scan_string(const char *s, const char *last)
{
	for (;;) {
		s = skip_plain(s, last);
		if (*s == '"')
			return s + 1;
		if (*s != '}' || s == last)
			return NULL;
		s++;
	}
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MT_WIDE_DIGITS 1

/* How many of the 8 bytes of w (the first one lowest) are digits before
 * the first one that is not: 0 to 8. */
static inline unsigned leading_digits(uint64_t w)
{
	/* Each byte minus '0': the digits become 0 to 9 without borrowing,
	 * and the first other byte becomes 10 to 255, whose bit 7 is set in
	 * itself or in itself plus 0x76.  Borrows and carries run only
	 * towards later bytes, past that first one, where nothing counts. */
	uint64_t x = w - 0x3030303030303030ull;
	uint64_t m = (x | (x + 0x7676767676767676ull)) & 0x8080808080808080ull;

	return m ? (unsigned)__builtin_ctzll(m) / 8 : 8;
}

/* The value of the first n (1 to 8) digits of w: shifted to the top, after
 * bytes that read as leading zeros, then simdjson's eight-digit SWAR
 * (pairs, then quads, then all eight, one multiply each). */
static inline uint64_t digits_value(uint64_t w, unsigned n)
{
	w <<= 8 * (8 - n);
	w = (w & 0x0f0f0f0f0f0f0f0full) * 2561 >> 8;
	w = (w & 0x00ff00ff00ff00ffull) * 6553601 >> 16;
	return (w & 0x0000ffff0000ffffull) * 42949672960001ull >> 32;
}
#endif

/* Adds the digits at s to *v; returns the first byte that is not one. */
static inline const char *add_digits(const char *s, const char *last,
				     uint64_t *v)
{
#ifdef MT_WIDE_DIGITS
	static const uint64_t pow10[9] = { 1, 10, 100, 1000, 10000, 100000,
					   1000000, 10000000, 100000000 };

	while (last - s >= 7) {
		uint64_t w;
		unsigned n;

		memcpy(&w, s, sizeof(w));
		n = leading_digits(w);
		if (n)
			*v = *v * pow10[n] + digits_value(w, n);
		s += n;
		if (n < 8)
			return s;
	}
#else
	(void)last;
#endif
	while ((unsigned char)(*s - '0') < 10)
		*v = *v * 10 + (uint64_t)(*s++ - '0');
	return s;
}

/* The digits of a JSON integer.  Declines leading zeros and more than 19
 * digits, so the value never overflows and needs no check: every 19-digit
 * number is below 2^64, and json-c judges the rare longer ones.  Whatever
 * follows the digits ('.', 'e') is left to the caller's structure check,
 * which accepts only ',', ']' and '}'. */
static inline const char *scan_digits(const char *s, const char *last,
				      uint64_t *out)
{
	const char *start = s;
	uint64_t v = 0;
	size_t n;

	s = add_digits(s, last, &v);
	n = (size_t)(s - start);
	if (n == 0 || n > 19 || (n > 1 && *start == '0'))
		return NULL;
	*out = v;
	return s;
}

/* A JSON integer, as json-c reads it: -0 is 0, and a negative number must
 * fit in an int64_t. */
static inline const char *scan_int(const char *s, const char *last, int *neg,
				   uint64_t *out)
{
	*neg = *s == '-';
	if (!(s = scan_digits(s + *neg, last, out)))
		return NULL;
	if (*neg && *out > (uint64_t)INT64_MAX + 1)
		return NULL;
	if (!*out)
		*neg = 0;
	return s;
}

/*
 * Key prediction.  A writer puts the keys of a kind in one order, so the
 * key that followed field f in the last line of this kind most likely
 * follows it again: the fast path compares the bytes at the key with that
 * field's key text, "name":, in one 16-byte compare, and scans and looks
 * the key up only when they differ.  The guess only saves work: a key is
 * taken as field f only when its bytes are exactly f's key, which the scan
 * would have found too.
 */
static inline int key_is(const mt_parser_t *p, const char *s,
			 const char *last, int f)
{
	size_t n = p->key_text_len[f];

#ifdef MT_SSE2
	if (last - s >= 15) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
		__m128i k = _mm_loadu_si128(
			(const __m128i *)(const void *)p->key_text[f]);
		unsigned want = (1u << n) - 1;

		/* A match ends in ':', so it ends before last, the '}'. */
		return ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, k)) &
			want) == want;
	}
#endif
	return (size_t)(last - s) >= n && same_bytes(s, p->key_text[f], n);
}

/* The fields the validator reads as a "0x" hex string. */
static const unsigned char hex_field[MT_F_COUNT] = {
	[MT_F_PTR] = 1, [MT_F_NEW_PTR] = 1, [MT_F_IP] = 1,
	[MT_F_OFFSET] = 1, [MT_F_MODULE_OFFSET] = 1,
};

/* A string of "0x" and 1 to 16 hex digits from its opening quote at s,
 * parsed as parse_hex() would, in the same pass as the scan: returns the
 * position after its closing quote, or NULL for any other string (which
 * the caller then scans as a plain one).  The loop stops on the first
 * byte that is not a hex digit, at the latest on last. */
static inline const char *scan_hex_string(const char *s, uint64_t *out)
{
	const char *d = s + 3;
	uint64_t v = 0;
	unsigned x;

	if (s[1] != '0' || s[2] != 'x')
		return NULL;
	while ((x = hex_value[(unsigned char)*d]) < 16) {
		v = v << 4 | x;
		d++;
	}
	if (*d != '"' || d == s + 3 || d > s + 3 + 16)
		return NULL;
	*out = v;
	return d + 1;
}

mt_parse_result_t mt_parse_fast(mt_parser_t *p, const char *line, size_t len,
				mt_event_t *ev)
{
	const char *s, *last;
	mt_raw_t raw;
	size_t narr = 0;
	int kind = MT_KIND_UNKNOWN, prev = MT_F_COUNT;

	if (len < 2 || line[0] != '{' || line[len - 1] != '}')
		return MT_PARSE_DECLINED;
	s = line + 1;
	last = line + len - 1;
	raw.seen = 0;
	raw.kind = -1;
	for (;;) {
		unsigned char *guess = &p->next_key[kind][prev];
		int field = *guess;
		mt_raw_value_t *rv, tmp;
		const char *str;

		if (*s != '"')
			return MT_PARSE_DECLINED;
		if (field != 0xff && key_is(p, s, last, field)) {
			s += p->key_text_len[field];
		} else {
			const char *key = s + 1;

			if (!(s = scan_string(key, last)) || *s != ':')
				return MT_PARSE_DECLINED;
			field = key_field(key, (size_t)(s - 1 - key));
			s++;
			*guess = field >= 0 ? (unsigned char)field : 0xff;
		}
		if (field >= 0) {
			if (raw.seen & (1u << field))
				return MT_PARSE_DECLINED; /* duplicate: json-c decides */
			raw.seen |= 1u << field;
			rv = &raw.f[field];
			prev = field;
		} else {
			rv = &tmp;
			prev = MT_F_COUNT;
		}
		switch (*s) {
		case '"':
			rv->type = MT_RAW_STRING;
			rv->s = s + 1;
			rv->nul = 0;
			rv->hex = field >= 0 && hex_field[field] &&
				  (str = scan_hex_string(s, &rv->u));
			if (rv->hex)
				s = str;
			else if (!(s = scan_string(s + 1, last)))
				return MT_PARSE_DECLINED;
			rv->len = (size_t)(s - 1 - rv->s);
			if (field == MT_F_KIND)
				raw.kind = kind = name_lookup(&p->kinds, rv->s,
							      rv->len);
			break;
		case '0' ... '9':
			if (!(s = scan_digits(s, last, &rv->u)))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_INT;
			rv->neg = 0;
			break;
		case '-':
			if (!(s = scan_int(s, last, &rv->neg, &rv->u)))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_INT;
			break;
		case 't':
			if (last - s < 4 || memcmp(s, "true", 4))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_BOOL;
			s += 4;
			break;
		case 'f':
			if (last - s < 5 || memcmp(s, "false", 5))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_BOOL;
			s += 5;
			break;
		case 'n':
			if (last - s < 4 || memcmp(s, "null", 4))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_NULL;
			s += 4;
			break;
		case '[':
			if (field != MT_F_FRAMES)
				return MT_PARSE_DECLINED;
			s++;
			if (*s == ']') {
				s++;
			} else {
				for (;;) {
					uint64_t x;

					if (!(s = scan_digits(s, last, &x)))
						return MT_PARSE_DECLINED;
					if (arr_reserve(p, narr + 1))
						return MT_PARSE_NOMEM;
					p->arr[narr++] = x;
					if (*s == ',') {
						s++;
						continue;
					}
					if (*s == ']') {
						s++;
						break;
					}
					return MT_PARSE_DECLINED;
				}
			}
			rv->type = MT_RAW_INT_ARRAY;
			rv->arr = p->arr;
			rv->len = narr;
			break;
		default:
			return MT_PARSE_DECLINED;
		}
		if (*s == ',') {
			s++;
			continue;
		}
		if (s == last)
			break;
		return MT_PARSE_DECLINED;
	}
	p->used_json_c = 0;
	return validate(p, &raw, ev);
}

/* ---- the json-c path ---- */

static int raw_from_json(mt_parser_t *p, int field, struct json_object *o,
			 mt_raw_value_t *rv)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		rv->type = MT_RAW_NULL;
		break;
	case json_type_boolean:
		rv->type = MT_RAW_BOOL;
		break;
	case json_type_double:
		rv->type = MT_RAW_DOUBLE;
		break;
	case json_type_int: {
		int64_t i = json_object_get_int64(o);

		rv->type = MT_RAW_INT;
		if (i < 0) {
			rv->neg = 1;
			rv->u = (uint64_t)0 - (uint64_t)i;
		} else {
			rv->u = json_object_get_uint64(o);
		}
		break;
	}
	case json_type_string:
		rv->type = MT_RAW_STRING;
		rv->s = json_object_get_string(o);
		rv->len = (size_t)json_object_get_string_len(o);
		rv->nul = memchr(rv->s, '\0', rv->len) != NULL;
		break;
	case json_type_array: {
		size_t n = json_object_array_length(o);

		rv->type = MT_RAW_OTHER;
		if (field != MT_F_FRAMES)
			return MT_OK; /* only frames is an array memtrace reads */
		if (arr_reserve(p, n))
			return MT_ENOMEM;
		for (size_t i = 0; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(o, i);

			if (json_object_get_type(e) != json_type_int ||
			    json_object_get_int64(e) < 0)
				return MT_OK;
			p->arr[i] = json_object_get_uint64(e);
		}
		rv->type = MT_RAW_INT_ARRAY;
		rv->arr = p->arr;
		rv->len = n;
		break;
	}
	default:
		rv->type = MT_RAW_OTHER;
		break;
	}
	return MT_OK;
}

/*
 * Whether the line holds more than MT_PARSE_CONTAINERS_MAX objects and
 * arrays.  json-c spends several hundred bytes on each: a 1 MiB line of
 * "{}," cost it 270 MB and more than a second, where an event needs two.
 */
static int too_many_containers(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"') {
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			continue;
		}
		if ((s[i] == '{' || s[i] == '[') && ++n > MT_PARSE_CONTAINERS_MAX)
			return 1;
	}
	return 0;
}

/*
 * Whether a number of the line is beyond what json-c holds: an integer
 * outside int64_t (negative) or uint64_t, or a fraction or exponent that
 * strtod() calls out of range.  json-c clamps such a number and leaves
 * ERANGE in errno, but the next number it parses resets errno, so errno
 * tells only of the last one.  The line is valid JSON here: outside its
 * strings a '-' or a digit starts a number, and a delimiter ends it
 * before len.
 */
int mt_parse_number_out_of_range(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t v = 0;
		int neg, over = 0;
		size_t j;

		if (s[i] == '"') {
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			continue;
		}
		if (s[i] != '-' && (s[i] < '0' || s[i] > '9'))
			continue;
		neg = s[i] == '-';
		for (j = i + (size_t)neg; j < len && s[j] >= '0' && s[j] <= '9'; j++) {
			unsigned d = (unsigned)(s[j] - '0');

			if (v > (UINT64_MAX - d) / 10)
				over = 1;
			v = v * 10 + d;
		}
		if (j < len && (s[j] == '.' || s[j] == 'e' || s[j] == 'E')) {
			char *end;

			errno = 0;
			strtod(s + i, &end);
			if (errno == ERANGE)
				return 1;
			j = (size_t)(end - s);
		} else if (over || (neg && v > (uint64_t)INT64_MAX + 1)) {
			return 1;
		}
		i = j - 1;
	}
	return 0;
}

mt_parse_result_t mt_parse_json_c(mt_parser_t *p, const char *line, size_t len,
				  mt_event_t *ev)
{
	struct json_tokener *tok = p->tok;
	struct json_object *o;
	mt_raw_t raw;
	mt_parse_result_t r;
	int range_error;
	size_t end;

	p->used_json_c = 1;
	if (p->obj) {
		json_object_put(p->obj);
		p->obj = NULL;
	}
	if (memchr(line, '\0', len)) {
		p->why = "it contains a NUL byte";
		return MT_PARSE_NOT_EVENT;
	}
	/* JSON text is UTF-8 (RFC 8259), and json-c's own check lets overlong
	 * forms and surrogates through: strings that, copied into a row, make
	 * it unreadable to a strict decoder (Python's json.loads of the bytes
	 * raises).  Only json-c sees bytes above 0x7f: the fast paths decline
	 * them. */
	if (!mt_utf8_valid(line, len)) {
		p->why = "it is not valid UTF-8";
		return MT_PARSE_NOT_EVENT;
	}
	if (too_many_containers(line, len)) {
		p->why = "it holds more than 1024 JSON objects and arrays";
		return MT_PARSE_NOT_EVENT;
	}
	json_tokener_reset(tok);
	/* json-c does not report running out of memory; malloc leaves
	 * ENOMEM behind, so errno is the only witness.  (Nor does it report
	 * numbers out of range: see mt_parse_number_out_of_range().) */
	errno = 0;
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (errno == ENOMEM) {
		if (o)
			json_object_put(o);
		return MT_PARSE_NOMEM;
	}
	if (!o) {
		p->why = "it is not valid JSON";
		return MT_PARSE_NOT_EVENT;
	}
	p->obj = o;
	end = json_tokener_get_parse_end(tok);
	for (; end < len; end++)
		if (!strchr(" \t\r\n", line[end])) {
			p->why = "it has bytes after its JSON value";
			return MT_PARSE_NOT_EVENT;
		}
	if (!json_object_is_type(o, json_type_object)) {
		p->why = "it is not a JSON object";
		return MT_PARSE_NOT_EVENT;
	}
	range_error = mt_parse_number_out_of_range(line, len);
	raw.seen = 0;
	raw.kind = -1;
	for (int f = 0; f < MT_F_COUNT; f++) {
		struct json_object *v;

		if (!json_object_object_get_ex(o, field_names[f], &v))
			continue;
		memset(&raw.f[f], 0, sizeof(raw.f[f]));
		raw.seen |= 1u << f;
		if (raw_from_json(p, f, v, &raw.f[f]))
			return MT_PARSE_NOMEM;
	}
	r = validate(p, &raw, ev);
	if (r == MT_PARSE_OK && range_error) {
		/* json-c clamps; a clamped number is not the trace's. */
		p->why = "a number is out of range";
		p->why_field = NULL;
		return MT_PARSE_MALFORMED;
	}
	return r;
}

/* ---- the exact-layout matcher ---- */

/*
 * The block events as the preload writes them, byte for byte: the keys
 * v, seq, kind, allocator_id, ptr, new_ptr, size, fn, align, stack,
 * fail_at, tid, t in this order, each from ptr on present or not (but
 * for a free only ptr, fn, tid and t, and for an alloc no new_ptr, as the
 * preload writes them), no whitespace, v exactly 1, integers of 1 to 19
 * digits without a leading zero, pointers "0x" and 1 to 16 lower-case hex
 * digits, kind and fn names memtrace knows, and '}' the line's last byte,
 * followed by its '\n' (mt_parse_exact() adds one).  Such a line is
 * valid JSON, json-c reads the same values from it, and nothing in it is
 * out of range.  Anything else declines, to the generic fast path and then
 * json-c, so the matcher can only save time, never change a verdict: about
 * a third of the generic path's instructions, with no key lookup and no
 * record of fields in between.
 */

/* The bytes at s are k (a constant: the compare inlines).  No bounds
 * check: the matcher reads within MT_PARSE_EXACT_SPAN bytes of the line's
 * start (see below), which its caller guarantees readable. */
#define LIT(s, k) (!memcmp((s), (k), sizeof(k) - 1))

/*
 * Why the matcher needs no bounds checks.  It reads a line from its start
 * as a fixed sequence of literals and fields, each of bounded length (an
 * integer at most 19 digits, a pointer at most 16 hex digits, a fn name at
 * most 16 bytes), so its position never passes EXACT_LONGEST bytes from
 * the start, whatever the bytes are; and no read reaches more than 32
 * bytes past the position (a 16-byte load at a number, a literal of 27).
 * The bytes after the line's '\n' may be anything (the next line, stale
 * buffer contents, zeros): no scan goes past the '\n', which is neither a
 * digit, a hex digit nor a byte of any literal, so they never change the
 * result, only where a wide load ends.
 */
#define EXACT_LONGEST 334
_Static_assert(EXACT_LONGEST + 32 <= MT_PARSE_EXACT_SPAN,
	       "the matcher's reads stay within MT_PARSE_EXACT_SPAN");

/* A pointer's hex digits from s to their closing quote: returns the
 * position after the quote, or NULL.  Lower-case digits only; 1 to 16. */
static inline __attribute__((always_inline)) const char *
exact_hex(const char *s, uint64_t *out)
{
#if defined(MT_SSE2) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
	__m128i dig = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
				    _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
	__m128i let = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('a' - 1)),
				    _mm_cmplt_epi8(v, _mm_set1_epi8('f' + 1)));
	unsigned bad = ~(unsigned)_mm_movemask_epi8(_mm_or_si128(dig, let));
	unsigned n = (unsigned)__builtin_ctz(bad); /* bit 16 is set */
	__m128i nib, pair;
	uint64_t be;

	if (!n || s[n] != '"')
		return NULL;
	/* Each byte to its nibble ('a' has bit 6: + 9), then each pair of
	 * nibbles to a byte and the eight bytes to the big-endian value; the
	 * bytes after the digits land in the low bits, shifted out. */
	{
		__m128i low = _mm_and_si128(v, _mm_set1_epi8(0x0f));
		__m128i six = _mm_and_si128(_mm_srli_epi16(v, 6),
					    _mm_set1_epi8(0x01));

		nib = _mm_add_epi8(low, _mm_add_epi8(_mm_slli_epi16(six, 3), six));
	}
	pair = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(nib, 4),
					  _mm_srli_epi16(nib, 8)),
			     _mm_set1_epi16(0x00ff));
	be = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(pair, pair));
	*out = __builtin_bswap64(be) >> (4 * (16 - n));
	return s + n + 1;
#else
	const char *d = s;
	uint64_t v = 0;

	while (d - s <= 16 && ((unsigned char)(*d - '0') < 10 ||
			       (unsigned char)(*d - 'a') < 6)) {
		v = v << 4 | hex_value[(unsigned char)*d];
		d++;
	}
	if (d == s || d - s > 16 || *d != '"')
		return NULL;
	*out = v;
	return d + 1;
#endif
}

#ifdef MT_WIDE_DIGITS
static const uint64_t pow10_8[9] = { 1, 10, 100, 1000, 10000, 100000,
				     1000000, 10000000, 100000000 };
#endif

/* scan_digits() for the matcher: the same digits, the same value, the same
 * NULL (1 to 19 digits, no leading zero), in at most three words and
 * without a loop. */
static inline __attribute__((always_inline)) const char *
exact_digits(const char *s, uint64_t *out)
{
#ifdef MT_WIDE_DIGITS
	uint64_t w, w2, w3, v;
	unsigned n, n2, n3;

	memcpy(&w, s, 8);
	n = leading_digits(w);
	if (n < 8) {
		if (!n || (n > 1 && (w & 0xff) == '0'))
			return NULL;
		*out = digits_value(w, n);
		return s + n;
	}
	if ((w & 0xff) == '0')
		return NULL;
	memcpy(&w2, s + 8, 8);
	n2 = leading_digits(w2);
	if (n2 < 8) {
		*out = n2 ? digits_value(w, 8) * pow10_8[n2] +
				    digits_value(w2, n2) :
			    digits_value(w, 8);
		return s + 8 + n2;
	}
	memcpy(&w3, s + 16, 8);
	n3 = leading_digits(w3);
	if (n3 > 3)
		return NULL; /* more than 19 digits */
	v = digits_value(w, 8) * 100000000 + digits_value(w2, 8);
	if (n3)
		v = v * pow10_8[n3] + digits_value(w3, n3);
	*out = v;
	return s + 16 + n3;
#else
	const char *d = s;
	uint64_t v = 0;

	while (d - s < 20 && (unsigned char)(*d - '0') < 10)
		v = v * 10 + (uint64_t)(*d++ - '0');
	if (d == s || d - s > 19 || (d - s > 1 && *s == '0'))
		return NULL;
	*out = v;
	return d;
#endif
}

/* A number's digits (scan_digits(): 1 to 19, no leading zero) into x. */
#define EXACT_INT(x)                                                       \
	do {                                                               \
		if (!(s = exact_digits(s, &(x))))                          \
			return MT_PARSE_DECLINED;                          \
	} while (0)

#define EXACT_PTR(x)                                                       \
	do {                                                               \
		if (!(s = exact_hex(s, &(x))))                             \
			return MT_PARSE_DECLINED;                          \
	} while (0)

/* Which optional keys a matched line holds; those that are the event's
 * MT_HAS_ flags too have the flag's bit. */
enum {
	X_ALIGN = MT_HAS_ALIGN, X_STACK = MT_HAS_STACK, X_TID = MT_HAS_TID,
	X_T = MT_HAS_T, X_FN = MT_HAS_FN,
	X_PTR = 1 << 16, X_NEW_PTR = 1 << 17, X_SIZE = 1 << 18,
	X_HAS = X_ALIGN | X_STACK | X_TID | X_T | X_FN,
};
_Static_assert(((X_ALIGN | X_STACK | X_TID | X_T | X_FN) &
		(X_PTR | X_NEW_PTR | X_SIZE)) == 0, "the X_ bits are distinct");

/*
 * It fills the event itself, as validate() does for these kinds, and only
 * for a line validate() accepts: a line it would reject (a required field
 * missing, stack 0, an alloc whose fn does not allocate) declines, and the
 * generic path brings it to validate() for the verdict and the reason.
 * What validate() does with the fields of a matched line, whose types are
 * all right by construction:
 *
 *   alloc:       allocator_id, ptr, size, fn (allocating), [align], [stack]
 *   alloc.fail:  allocator_id, size, fn (allocating), [align], [stack]
 *   free:        allocator_id, ptr, [fn]
 *   resize:      allocator_id, ptr, size, [fn], [stack]
 *   remap:       allocator_id, ptr, size, new_ptr, [fn], [stack]
 *
 * each with [tid] and [t], a present stack non-zero; every other key is
 * not read and leaves its field of the event 0: its number goes to a
 * scratch word instead of the event.  tests/check_parse.c holds this to
 * json-c on every field of every event.  On DECLINED the event holds
 * garbage.
 *
 * The line ends at its '}' followed by '\n': *len is its length without
 * the '\n'.  Every byte of a matched line is a literal's, a digit or a hex
 * digit, none of them '\n', so that '\n' is the line's first one: the
 * caller may take the line as ending there without searching for it.
 */
static const unsigned exact_need[MT_KIND_COUNT] = {
	[MT_KIND_ALLOC] = X_PTR | X_SIZE | X_FN,
	[MT_KIND_ALLOC_FAIL] = X_SIZE | X_FN,
	[MT_KIND_FREE] = X_PTR,
	[MT_KIND_RESIZE] = X_PTR | X_SIZE,
	[MT_KIND_REMAP] = X_PTR | X_SIZE | X_NEW_PTR,
};
/* What validate() reads: the needed keys and these optional ones. */
static const unsigned exact_reads[MT_KIND_COUNT] = {
	[MT_KIND_ALLOC] = X_PTR | X_SIZE | X_FN | X_ALIGN | X_STACK,
	[MT_KIND_ALLOC_FAIL] = X_SIZE | X_FN | X_ALIGN | X_STACK,
	[MT_KIND_FREE] = X_PTR | X_FN,
	[MT_KIND_RESIZE] = X_PTR | X_SIZE | X_FN | X_STACK,
	[MT_KIND_REMAP] = X_PTR | X_SIZE | X_NEW_PTR | X_FN | X_STACK,
};

/* The keys the matcher looks for in a line of the two commonest kinds:
 * those the preload writes for them (preload/mt_trace.c).  A line with
 * another key declines, as any line the matcher does not know. */
#define X_FAIL_AT (1u << 19)
#define MAY_ALL (X_PTR | X_NEW_PTR | X_SIZE | X_FN | X_ALIGN | X_STACK | \
		 X_FAIL_AT | X_TID | X_T)
#define MAY_ALLOC (MAY_ALL & ~X_NEW_PTR)
#define MAY_FREE (X_PTR | X_FN | X_TID | X_T)

/* The line from after its allocator_id, for kind, looking only for the
 * keys in may: inlined once for each of alloc and free, where kind and may
 * are constants and the keys a kind never has cost nothing. */
static inline __attribute__((always_inline)) mt_parse_result_t
exact_fields(mt_parser_t *p, const char *line, const char *s, mt_event_t *ev,
	     size_t *len, int kind, unsigned may)
{
	const unsigned keep = exact_reads[kind];
	uint64_t scratch;
	unsigned seen = 0;
	int fn = 0;

	if ((may & X_PTR) && LIT(s, ",\"ptr\":\"0x")) {
		s += 10;
		EXACT_PTR(*(keep & X_PTR ? &ev->ptr : &scratch));
		seen |= X_PTR;
	}
	if ((may & X_NEW_PTR) && LIT(s, ",\"new_ptr\":\"0x")) {
		s += 14;
		EXACT_PTR(*(keep & X_NEW_PTR ? &ev->new_ptr : &scratch));
		seen |= X_NEW_PTR;
	}
	if ((may & X_SIZE) && LIT(s, ",\"size\":")) {
		s += 8;
		EXACT_INT(*(keep & X_SIZE ? &ev->size : &scratch));
		seen |= X_SIZE;
	}
	if ((may & X_FN) && LIT(s, ",\"fn\":\"")) {
		const char *name = s + 7, *q;

		/* The names of nearly every line first, the kind's own
		 * first, then any name memtrace knows (none longer than
		 * MT_EVENT_FN_NAME_MAX). */
		if (kind == MT_KIND_FREE && LIT(name, "free\"")) {
			fn = MT_FN_FREE;
			s = name + 5;
		} else if (LIT(name, "malloc\"")) {
			fn = MT_FN_MALLOC;
			s = name + 7;
		} else if (LIT(name, "free\"")) {
			fn = MT_FN_FREE;
			s = name + 5;
		} else if (LIT(name, "realloc\"")) {
			fn = MT_FN_REALLOC;
			s = name + 8;
		} else if (LIT(name, "calloc\"")) {
			fn = MT_FN_CALLOC;
			s = name + 7;
		} else {
			for (q = name;
			     q - name <= MT_EVENT_FN_NAME_MAX && *q != '"' && *q != '\n';
			     q++)
				;
			if (*q != '"')
				return MT_PARSE_DECLINED;
			fn = name_lookup(&p->fns, name, (size_t)(q - name));
			if (fn == p->fns.count)
				return MT_PARSE_DECLINED;
			s = q + 1;
		}
		seen |= X_FN;
	}
	if ((may & X_ALIGN) && LIT(s, ",\"align\":")) {
		s += 9;
		EXACT_INT(*(keep & X_ALIGN ? &ev->align : &scratch));
		seen |= X_ALIGN;
	}
	if ((may & X_STACK) && LIT(s, ",\"stack\":")) {
		s += 9;
		EXACT_INT(*(keep & X_STACK ? &ev->stack : &scratch));
		seen |= X_STACK;
	}
	if ((may & X_FAIL_AT) && LIT(s, ",\"fail_at\":")) {
		/* Not a field memtrace reads, but a number json-c reads. */
		s += 11;
		EXACT_INT(scratch);
	}
	if ((may & X_TID) && LIT(s, ",\"tid\":")) {
		s += 7;
		EXACT_INT(ev->tid);
		seen |= X_TID;
	}
	if ((may & X_T) && LIT(s, ",\"t\":")) {
		s += 5;
		EXACT_INT(ev->t);
		seen |= X_T;
	}
	if (!LIT(s, "}\n") || (seen & exact_need[kind]) != exact_need[kind])
		return MT_PARSE_DECLINED;
	seen &= keep | X_TID | X_T;
	if ((seen & X_STACK) && !ev->stack)
		return MT_PARSE_DECLINED;
	if ((kind == MT_KIND_ALLOC || kind == MT_KIND_ALLOC_FAIL) &&
	    !mt_event_fn_allocates((mt_fn_t)fn))
		return MT_PARSE_DECLINED;
	ev->has = seen & X_HAS;
	ev->fn = (mt_fn_t)fn;
	p->used_json_c = 0;
	p->why = NULL;
	p->why_field = NULL;
	*len = (size_t)(s + 1 - line); /* through the '}' */
	return MT_PARSE_OK;
}

static inline __attribute__((always_inline)) mt_parse_result_t
exact_match(mt_parser_t *p, const char *line, mt_event_t *ev, size_t *len)
{
	const char *s;
	int kind;

	if (!LIT(line, "{\"v\":1,\"seq\":"))
		return MT_PARSE_DECLINED;
	s = line + 13;
	EXACT_INT(ev->seq);
	if (!LIT(s, ",\"kind\":\""))
		return MT_PARSE_DECLINED;
	s += 9;
	if (LIT(s, "alloc\",\"allocator_id\":")) {
		kind = MT_KIND_ALLOC;
		s += 22;
	} else if (LIT(s, "free\",\"allocator_id\":")) {
		kind = MT_KIND_FREE;
		s += 21;
	} else if (LIT(s, "resize\",\"allocator_id\":")) {
		kind = MT_KIND_RESIZE;
		s += 23;
	} else if (LIT(s, "remap\",\"allocator_id\":")) {
		kind = MT_KIND_REMAP;
		s += 22;
	} else if (LIT(s, "alloc.fail\",\"allocator_id\":")) {
		kind = MT_KIND_ALLOC_FAIL;
		s += 27;
	} else {
		return MT_PARSE_DECLINED;
	}
	/* Every field by name: a compound literal or memset() of the whole
	 * event compiles to rep stos, which cost a sixth of this function.
	 * The assertion catches a field added to mt_event_t but not here. */
	_Static_assert(sizeof(mt_event_t) == 216,
		       "mt_parse_exact() sets every field of mt_event_t");
	ev->kind = (mt_kind_t)kind;
	ev->ptr = ev->new_ptr = ev->size = ev->align = ev->stack = 0;
	ev->tid = ev->t = 0;
	ev->frame_id = ev->ip = ev->offset = ev->module_offset = 0;
	ev->stack_id = ev->dropped = 0;
	ev->symbol = ev->module = ev->name = ev->reason = NULL;
	ev->symbol_len = ev->module_len = ev->name_len = ev->reason_len = 0;
	ev->frames = NULL;
	ev->nframes = 0;
	/* Nearly always allocator 0. */
	if (LIT(s, "0,")) {
		ev->allocator_id = 0;
		s++;
	} else {
		EXACT_INT(ev->allocator_id);
	}
	if (kind == MT_KIND_ALLOC)
		return exact_fields(p, line, s, ev, len, MT_KIND_ALLOC, MAY_ALLOC);
	if (kind == MT_KIND_FREE)
		return exact_fields(p, line, s, ev, len, MT_KIND_FREE, MAY_FREE);
	return exact_fields(p, line, s, ev, len, kind, MAY_ALL);
}

#undef EXACT_INT
#undef EXACT_PTR
#undef LIT

mt_parse_result_t mt_parse_exact_window(mt_parser_t *p, const char *s,
					mt_event_t *ev, size_t *len)
{
	return exact_match(p, s, ev, len);
}

mt_parse_result_t mt_parse_exact(mt_parser_t *p, const char *line, size_t len,
				 mt_event_t *ev)
{
	/* The line and its '\n' in a buffer the matcher may read past; the
	 * bytes after them are zeros, which no scan reads as content. */
	char buf[MT_PARSE_EXACT_SPAN];
	mt_event_t e;
	size_t got;

	if (len > EXACT_LONGEST)
		return MT_PARSE_DECLINED;
	memcpy(buf, line, len);
	buf[len] = '\n';
	memset(buf + len + 1, 0, 32);
	/* Into a copy: a declined line leaves *ev as it was, for the paths
	 * after this one, which do not all write it. */
	if (exact_match(p, buf, &e, &got) != MT_PARSE_OK || got != len)
		return MT_PARSE_DECLINED;
	*ev = e;
	return MT_PARSE_OK;
}

mt_parse_result_t mt_parser_parse(mt_parser_t *p, const char *line, size_t len,
				  mt_event_t *ev)
{
	mt_parse_result_t r = mt_parse_exact(p, line, len, ev);

	if (r != MT_PARSE_DECLINED)
		return r;
	r = mt_parse_fast(p, line, len, ev);
	if (r != MT_PARSE_DECLINED)
		return r;
	return mt_parse_json_c(p, line, len, ev);
}

mt_parse_result_t mt_parser_parse_inexact(mt_parser_t *p, const char *line,
					  size_t len, mt_event_t *ev)
{
	mt_parse_result_t r = mt_parse_fast(p, line, len, ev);

	if (r != MT_PARSE_DECLINED)
		return r;
	return mt_parse_json_c(p, line, len, ev);
}
