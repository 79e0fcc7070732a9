/*
 * mt_flat: the general fast path.  It reads the flat, compact objects a
 * JSONL writer like the preload makes (no whitespace, no escapes, no
 * nesting but an array of integers) into the validator's record, so that
 * the lines the exact matcher does not know (frame, stack, allocator,
 * trace.stop, a block event in another key order) skip json-c.
 *
 * It must never accept a line json-c would judge differently: when in
 * doubt it declines, and json-c judges.  It allocates nothing per line but
 * the parser's frames storage.
 */
#include "../parse/mt_flat.h"

#include <string.h>

#include "../parse/mt_scan.h"
#include "../parse/mt_validate.h"

#ifdef MT_SCAN_SSE2
#include <emmintrin.h>
#endif

void mt_flat_init(mt_parser_t *p)
{
	memset(p->next_key, 0xff, sizeof(p->next_key));
	for (int f = 0; f < MT_F_COUNT; f++) {
		size_t n = strlen(mt_parse_field_names[f]);

		p->key_text[f][0] = '"';
		memcpy(p->key_text[f] + 1, mt_parse_field_names[f], n);
		p->key_text[f][n + 1] = '"';
		p->key_text[f][n + 2] = ':';
		p->key_text_len[f] = (unsigned char)(n + 3);
	}
}

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
		if (!memcmp(k, "pid", 3)) return MT_F_PID;
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
		if (!memcmp(k, "build_id", 8)) return MT_F_BUILD_ID;
		break;
	case 11:
		if (!memcmp(k, "stack_depth", 11)) return MT_F_STACK_DEPTH;
		break;
	case 12:
		if (!memcmp(k, "allocator_id", 12)) return MT_F_ALLOCATOR_ID;
		if (!memcmp(k, "sample_bytes", 12)) return MT_F_SAMPLE_BYTES;
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
static const unsigned char plain[256] = MT_SCAN_TABLE256(PLAIN_OF);

#ifdef MT_SCAN_SSE2
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
#ifdef MT_SCAN_SSE2
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


/* Adds the digits at s to *v; returns the first byte that is not one. */
static inline const char *add_digits(const char *s, const char *last,
				     uint64_t *v)
{
#ifdef MT_SCAN_WIDE_DIGITS
	static const uint64_t pow10[9] = { 1, 10, 100, 1000, 10000, 100000,
					   1000000, 10000000, 100000000 };

	while (last - s >= 7) {
		uint64_t w;
		unsigned n;

		memcpy(&w, s, sizeof(w));
		n = mt_scan_leading_digits(w);
		if (n)
			*v = *v * pow10[n] + mt_scan_digits_value(w, n);
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

#ifdef MT_SCAN_SSE2
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
	return (size_t)(last - s) >= n && mt_scan_same_bytes(s, p->key_text[f], n);
}

/* The fields the validator reads as a "0x" hex string. */
static const unsigned char hex_field[MT_F_COUNT] = {
	[MT_F_PTR] = 1, [MT_F_NEW_PTR] = 1, [MT_F_IP] = 1,
	[MT_F_OFFSET] = 1, [MT_F_MODULE_OFFSET] = 1,
};

/* A string of "0x" and 1 to 16 hex digits from its opening quote at s,
 * parsed as mt_scan_hex() would, in the same pass as the scan: returns the
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
	while ((x = mt_scan_hex_value[(unsigned char)*d]) < 16) {
		v = v << 4 | x;
		d++;
	}
	if (*d != '"' || d == s + 3 || d > s + 3 + 16)
		return NULL;
	*out = v;
	return d + 1;
}

mt_parse_result_t mt_flat_parse(mt_parser_t *p, const char *line, size_t len,
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
				raw.kind = kind = mt_scan_name(&p->kinds, rv->s,
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
					if (mt_parser_reserve(p, narr + 1))
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
	return mt_validate_event(p, &raw, ev);
}
