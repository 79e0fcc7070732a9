/*
 * mt_fmt: integer and hexadecimal formatting for trace lines and rows.
 * Must never allocate or lock: the preload calls it from inside malloc.
 */
#include "mt_fmt.h"

size_t mt_fmt_u64(char *dst, uint64_t v)
{
	char tmp[MT_FMT_U64_MAX];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		dst[i] = tmp[n - 1 - i];
	return n;
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
	int shift = 60;
	size_t n = 2;

	dst[0] = '0';
	dst[1] = 'x';
	while (shift > 0 && ((v >> shift) & 0xf) == 0)
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		dst[n++] = digits[(v >> shift) & 0xf];
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
