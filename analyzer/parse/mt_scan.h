/*
 * mt_scan: the byte-level pieces the parsers share, where their speed
 * lies: the lookup of a kind or fn name, hex digits, eight decimal digits
 * at a time, short compares.
 *
 * It must never allocate nor read past what its caller says is there:
 * each function states how many bytes it reads.
 */
#ifndef MT_SCAN_H
#define MT_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* SSE2, which every x86-64 has, for the parsers' wide reads. */
#if defined(__SSE2__)
#define MT_SCAN_SSE2 1
#endif

/* A table of 256 entries, F(c) for each byte c: a lookup per byte instead
 * of range tests, whose branches mispredict on random digits. */
#define MT_SCAN_ROW16(F, b)                                                \
	F(b + 0), F(b + 1), F(b + 2), F(b + 3), F(b + 4), F(b + 5),         \
	F(b + 6), F(b + 7), F(b + 8), F(b + 9), F(b + 10), F(b + 11),       \
	F(b + 12), F(b + 13), F(b + 14), F(b + 15)
#define MT_SCAN_TABLE256(F)                                                \
	{ MT_SCAN_ROW16(F, 0x00), MT_SCAN_ROW16(F, 0x10),                   \
	  MT_SCAN_ROW16(F, 0x20), MT_SCAN_ROW16(F, 0x30),                   \
	  MT_SCAN_ROW16(F, 0x40), MT_SCAN_ROW16(F, 0x50),                   \
	  MT_SCAN_ROW16(F, 0x60), MT_SCAN_ROW16(F, 0x70),                   \
	  MT_SCAN_ROW16(F, 0x80), MT_SCAN_ROW16(F, 0x90),                   \
	  MT_SCAN_ROW16(F, 0xa0), MT_SCAN_ROW16(F, 0xb0),                   \
	  MT_SCAN_ROW16(F, 0xc0), MT_SCAN_ROW16(F, 0xd0),                   \
	  MT_SCAN_ROW16(F, 0xe0), MT_SCAN_ROW16(F, 0xf0) }

/* A hex digit's value (either case) for each byte; 0xff for the others. */
extern const unsigned char mt_scan_hex_value[256];

/* "0x" and 1 to 16 hex digits of either case, exactly the syntax of
 * mt_fmt_parse_hex() (docs/decisions.md promises it): 0 with *out set, or
 * -1.  Reads len bytes. */
int mt_scan_hex(const char *s, size_t len, uint64_t *out);

/* A vocabulary of mt_event names (the kinds or the fns) as the parsers
 * look it up on nearly every line: each name with its length, and from a
 * hash of length and first byte to the one name with that hash (its index
 * plus 1; 0 for none, 0xff for several). */
#define MT_NAMES_MAX 16
typedef struct {
	int count;
	const char *name[MT_NAMES_MAX];
	size_t len[MT_NAMES_MAX];
	unsigned char by_hash[64];
} mt_names_t;

/* Fill in the lengths and the hash table of t's count names. */
void mt_scan_names_init(mt_names_t *t);

static inline unsigned mt_scan_name_hash(const char *s, size_t len)
{
	return (unsigned)(len * 7 + (unsigned char)s[0]) & 63;
}

/* memcmp(a, b, n) == 0, inline for the short names of kinds and fns: two
 * overlapping loads cover any n from 4 to 16. */
static inline int mt_scan_same_bytes(const char *a, const char *b, size_t n)
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

/* The kind or fn named by the len bytes at s: mt_event_kind_parse() and
 * mt_event_fn_parse() (t->count when none), but with one candidate found
 * by a hash of length and first byte, and compared without a call, where
 * those two compare every name with strlen and memcmp. */
static inline int mt_scan_name(const mt_names_t *t, const char *s, size_t len)
{
	unsigned i;

	if (!len)
		return t->count;
	i = t->by_hash[mt_scan_name_hash(s, len)];
	if (i == 0xff) {
		for (int k = 0; k < t->count; k++)
			if (t->len[k] == len && !memcmp(t->name[k], s, len))
				return k;
		return t->count;
	}
	if (i && t->len[i - 1] == len &&
	    mt_scan_same_bytes(t->name[i - 1], s, len))
		return (int)i - 1;
	return t->count;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MT_SCAN_WIDE_DIGITS 1

/* How many of the 8 bytes of w (the first one lowest) are digits before
 * the first one that is not: 0 to 8. */
static inline unsigned mt_scan_leading_digits(uint64_t w)
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
static inline uint64_t mt_scan_digits_value(uint64_t w, unsigned n)
{
	w <<= 8 * (8 - n);
	w = (w & 0x0f0f0f0f0f0f0f0full) * 2561 >> 8;
	w = (w & 0x00ff00ff00ff00ffull) * 6553601 >> 16;
	return (w & 0x0000ffff0000ffffull) * 42949672960001ull >> 32;
}
#endif

#endif
