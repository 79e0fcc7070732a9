/*
 * mt_fmt: integer and hexadecimal formatting for trace lines and rows.
 * Must never allocate or lock: the preload calls it from inside malloc.
 */
#include "mt_fmt.h"

/* Two digits at a time from a table, in independent chunks of eight
 * digits: the preload formats several numbers per event, inside malloc,
 * so this is on its hot path (a t of 10 digits made one digit pair after
 * another would be a long chain of dependent multiplications). */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static inline void put2(char *dst, uint32_t v)
{
	dst[0] = digit_pairs[v * 2];
	dst[1] = digit_pairs[v * 2 + 1];
}

/* Exactly eight digits, leading zeros included. */
static inline void put8(char *dst, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;

	put2(dst, hi / 100);
	put2(dst + 2, hi % 100);
	put2(dst + 4, lo / 100);
	put2(dst + 6, lo % 100);
}

/* The digits of v < 100000000, without leading zeros. */
static size_t put_small(char *dst, uint32_t v)
{
	size_t n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 :
		   v < 100000 ? 5 : v < 1000000 ? 6 : v < 10000000 ? 7 : 8;
	size_t i = n;

	while (i >= 2) {
		i -= 2;
		put2(dst + i, v % 100);
		v /= 100;
	}
	if (i)
		dst[0] = (char)('0' + v);
	return n;
}

size_t mt_fmt_u64(char *dst, uint64_t v)
{
	size_t n;

	if (v < 100000000)
		return put_small(dst, (uint32_t)v);
	if (v < 10000000000000000ull) {
		n = put_small(dst, (uint32_t)(v / 100000000));
	} else {
		n = put_small(dst, (uint32_t)(v / 10000000000000000ull));
		put8(dst + n, (uint32_t)(v / 100000000 % 100000000));
		n += 8;
	}
	put8(dst + n, (uint32_t)(v % 100000000));
	return n + 8;
}

size_t mt_fmt_i64(char *dst, int64_t v)
{
	if (v >= 0)
		return mt_fmt_u64(dst, (uint64_t)v);
	dst[0] = '-';
	/* Negate in unsigned arithmetic so INT64_MIN does not overflow. */
	return 1 + mt_fmt_u64(dst + 1, (uint64_t)0 - (uint64_t)v);
}

size_t mt_fmt_hex(char *dst, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	/* Digits without leading zeros; v | 1 gives 0 its one digit. */
	size_t n = 2 + (size_t)(67 - __builtin_clzll(v | 1)) / 4, i = n;

	dst[0] = '0';
	dst[1] = 'x';
	/* A byte at a time, two digits each. */
	while (i >= 4) {
		unsigned b = (unsigned)(v & 0xff);

		dst[--i] = digits[b & 0xf];
		dst[--i] = digits[b >> 4];
		v >>= 8;
	}
	if (i > 2)
		dst[--i] = digits[v & 0xf];
	return n;
}

int mt_fmt_parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len < 3 || len > 18 || s[0] != '0' || s[1] != 'x')
		return -1;
	for (size_t i = 2; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}
