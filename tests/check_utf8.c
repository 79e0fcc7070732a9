/*
 * check_utf8: unit tests of mt_utf8: what a strict UTF-8 decoder accepts
 * (RFC 3629), byte for byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mt_test.h"
#include "../common/mt_utf8.h"

/* What a strict decoder accepts (RFC 3629), byte for byte: the shortest
 * form only, no surrogates, nothing above U+10FFFF, no cut sequence. */
START_TEST(test_utf8_accepts_exactly_rfc_3629)
{
	static const struct {
		const char *s;
		int valid;
	} cases[] = {
		{ "", 1 }, { "plain ascii", 1 },
		{ "\xc2\x80", 1 }, { "\xdf\xbf", 1 },             /* U+0080, U+07FF */
		{ "\xe0\xa0\x80", 1 }, { "\xef\xbf\xbf", 1 },     /* U+0800, U+FFFF */
		{ "\xed\x9f\xbf", 1 }, { "\xee\x80\x80", 1 },     /* around the surrogates */
		{ "\xf0\x90\x80\x80", 1 }, { "\xf4\x8f\xbf\xbf", 1 }, /* U+10000, U+10FFFF */
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 1 },
		{ "\xc0\x80", 0 }, { "\xc1\xbf", 0 },             /* overlong 2 */
		{ "\xe0\x80\x80", 0 }, { "\xe0\x9f\xbf", 0 },     /* overlong 3 */
		{ "\xf0\x80\x80\x80", 0 }, { "\xf0\x8f\xbf\xbf", 0 }, /* overlong 4 */
		{ "\xed\xa0\x80", 0 }, { "\xed\xbf\xbf", 0 },     /* surrogates */
		{ "\xf4\x90\x80\x80", 0 }, { "\xf5\x80\x80\x80", 0 }, /* > U+10FFFF */
		{ "\xf8\x88\x80\x80\x80", 0 }, { "\xff", 0 }, { "\xfe", 0 },
		{ "\x80", 0 }, { "\xbf", 0 },                     /* lone continuation */
		{ "\xc3", 0 }, { "\xe2\x82", 0 }, { "\xf0\x9f\x98", 0 }, /* cut */
		{ "\xc3(", 0 }, { "\xe2\x28\xa1", 0 }, { "a\xc3\xa9\xa9", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		mt_quiet(mt_utf8_valid(cases[i].s, strlen(cases[i].s)) == cases[i].valid,
			 "case %zu: want %s", i, cases[i].valid ? "valid" : "invalid");
	/* The length of each sequence, and 0 past the buffer's end. */
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"a", 1), 1);
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"\xc3\xa9", 2), 2);
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	mt_quiet_uint_eq(mt_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80", 3), 0);
}
END_TEST

Suite *mt_suite_utf8(void)
{
	Suite *s = suite_create("utf8");
	TCase *tc = tcase_create("utf8");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_utf8_accepts_exactly_rfc_3629);
	suite_add_tcase(s, tc);
	return s;
}
