/*
 * mt_scan: the byte-level pieces the parsers share (see mt_scan.h): the
 * tables of names and of hex digits, and hex parsing.
 */
#include "../parse/mt_scan.h"

#include <string.h>

void mt_scan_names_init(mt_names_t *t)
{
	memset(t->by_hash, 0, sizeof(t->by_hash));
	for (int k = 0; k < t->count; k++) {
		unsigned char *slot;

		t->len[k] = strlen(t->name[k]);
		slot = &t->by_hash[mt_scan_name_hash(t->name[k], t->len[k])];
		*slot = *slot ? 0xff : (unsigned char)(k + 1);
	}
}

#define HEX_OF(c)                                                          \
	((c) >= '0' && (c) <= '9' ? (c) - '0' :                            \
	 (c) >= 'a' && (c) <= 'f' ? (c) - 'a' + 10 :                       \
	 (c) >= 'A' && (c) <= 'F' ? (c) - 'A' + 10 : 0xff)

const unsigned char mt_scan_hex_value[256] = MT_SCAN_TABLE256(HEX_OF);

/* A table lookup per digit instead of three range tests: the digits of a
 * pointer are random, so the tests' branches mispredict.  Non-digits are
 * 0xff in the table; OR-ing the entries keeps the loop branch-free and the
 * high nibble tells a bad byte. */
int mt_scan_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned bad = 0;

	if (len < 3 || len > 18 || s[0] != '0' || s[1] != 'x')
		return -1;
	for (size_t i = 2; i < len; i++) {
		unsigned d = mt_scan_hex_value[(unsigned char)s[i]];

		bad |= d;
		v = v << 4 | (d & 0xf);
	}
	if (bad & 0xf0)
		return -1;
	*out = v;
	return 0;
}
