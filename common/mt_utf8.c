/*
 * mt_utf8: strict UTF-8 validation.  It must never allocate, lock or call
 * into libc: the preload uses it while recording.
 */
#include "mt_utf8.h"

size_t mt_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0; /* a continuation byte, an overlong lead, or > U+10FFFF */
	if (len > n)
		return 0;
	/* The second byte's range is what excludes the overlong forms of 3 and
	 * 4 bytes, the surrogates and the code points above U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

int mt_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	while (n) {
		size_t len;

		/* ASCII, a word at a time would be faster; only the lines
		 * that reach json-c come here. */
		if (*p < 0x80) {
			p++;
			n--;
			continue;
		}
		len = mt_utf8_len(p, n);
		if (!len)
			return 0;
		p += len;
		n -= len;
	}
	return 1;
}
