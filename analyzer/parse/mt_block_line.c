/*
 * mt_block_line: the exact-layout matcher, the parser of nearly every line.
 * It reads the block events (alloc, free, resize, remap, alloc.fail)
 * exactly as the preload writes them, byte for byte, and fills the event
 * itself, with no record of fields and no key lookup in between.
 *
 * It must never change a verdict: it accepts only lines the validator
 * would accept, with the very event the validator would make of them, and
 * declines anything else to the paths after it.  It never allocates and
 * never reads past MT_PARSE_EXACT_SPAN bytes from a line's start.
 */
#include "../parse/mt_block_line.h"

#include <string.h>

#include "../parse/mt_scan.h"

#ifdef MT_SCAN_SSE2
#include <emmintrin.h>
#endif

/*
 * The block events as the preload writes them, byte for byte: the keys
 * v, seq, kind, allocator_id, ptr, new_ptr, size, fn, align, stack,
 * fail_at, tid, t in this order, each from ptr on present or not (but
 * for a free only ptr, fn, tid and t, and for an alloc no new_ptr, as the
 * preload writes them), no whitespace, v exactly 1, integers of 1 to 19
 * digits without a leading zero, pointers "0x" and 1 to 16 lower-case hex
 * digits, kind and fn names memtrace knows, and '}' the line's last byte,
 * followed by its '\n' (mt_block_line_parse() adds one).  Such a line is
 * valid JSON, json-c reads the same values from it, and nothing in it is
 * out of range.  Anything else declines, to the general fast path and then
 * json-c, so the matcher can only save time, never change a verdict: about
 * a third of the general fast path's instructions, with no key lookup and
 * no record of fields in between.
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
#if defined(MT_SCAN_SSE2) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
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
		v = v << 4 | mt_scan_hex_value[(unsigned char)*d];
		d++;
	}
	if (d == s || d - s > 16 || *d != '"')
		return NULL;
	*out = v;
	return d + 1;
#endif
}

#ifdef MT_SCAN_WIDE_DIGITS
static const uint64_t pow10_8[9] = { 1, 10, 100, 1000, 10000, 100000,
				     1000000, 10000000, 100000000 };
#endif

/* scan_digits() for the matcher: the same digits, the same value, the same
 * NULL (1 to 19 digits, no leading zero), in at most three words and
 * without a loop. */
static inline __attribute__((always_inline)) const char *
exact_digits(const char *s, uint64_t *out)
{
#ifdef MT_SCAN_WIDE_DIGITS
	uint64_t w, w2, w3, v;
	unsigned n, n2, n3;

	memcpy(&w, s, 8);
	n = mt_scan_leading_digits(w);
	if (n < 8) {
		if (!n || (n > 1 && (w & 0xff) == '0'))
			return NULL;
		*out = mt_scan_digits_value(w, n);
		return s + n;
	}
	if ((w & 0xff) == '0')
		return NULL;
	memcpy(&w2, s + 8, 8);
	n2 = mt_scan_leading_digits(w2);
	if (n2 < 8) {
		*out = n2 ? mt_scan_digits_value(w, 8) * pow10_8[n2] +
				    mt_scan_digits_value(w2, n2) :
			    mt_scan_digits_value(w, 8);
		return s + 8 + n2;
	}
	memcpy(&w3, s + 16, 8);
	n3 = mt_scan_leading_digits(w3);
	if (n3 > 3)
		return NULL; /* more than 19 digits */
	v = mt_scan_digits_value(w, 8) * 100000000 + mt_scan_digits_value(w2, 8);
	if (n3)
		v = v * pow10_8[n3] + mt_scan_digits_value(w3, n3);
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
 * It fills the event itself, as mt_validate_event() does for these kinds,
 * and only for a line the validator accepts: a line it would reject (a
 * required field missing, stack 0, an alloc whose fn does not allocate)
 * declines, and the general fast path brings it to the validator for the
 * verdict and the reason.  What the validator does with the fields of a
 * matched line, whose types are all right by construction:
 *
 *   alloc:       allocator_id, ptr, size, fn (allocating), [align], [stack]
 *   alloc.fail:  allocator_id, size, fn (allocating), [align], [stack]
 *   free:        allocator_id, ptr, [fn]
 *   resize:      allocator_id, ptr, size, [fn], [stack]
 *   remap:       allocator_id, ptr, size, new_ptr, [fn], [stack]
 *
 * each with [tid] and [t], a present stack non-zero; every other key is
 * not read and leaves its field of the event 0: its number goes to a
 * scratch word instead of the event.  tests/check_block_line.c holds this to
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
/* What the validator reads: the needed keys and these optional ones. */
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
			fn = mt_scan_name(&p->fns, name, (size_t)(q - name));
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
	uint64_t seq;
	int kind;

	if (!LIT(line, "{\"v\":1,\"seq\":"))
		return MT_PARSE_DECLINED;
	s = line + 13;
	EXACT_INT(seq);
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
	mt_event_clear(ev);
	ev->seq = seq;
	ev->kind = (mt_kind_t)kind;
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

mt_parse_result_t mt_block_line_parse_window(mt_parser_t *p, const char *s,
					     mt_event_t *ev, size_t *len)
{
	return exact_match(p, s, ev, len);
}

mt_parse_result_t mt_block_line_parse(mt_parser_t *p, const char *line, size_t len,
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

