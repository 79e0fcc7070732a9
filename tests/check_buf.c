/*
 * check_buf: unit tests of mt_buf: the size limit, failed appends, JSON
 * string escaping.
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
#include "../analyzer/base/mt_buf.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/base/mt_mem.h"

static void assert_buf(const mt_buf_t *b, const char *want, size_t n)
{
	mt_quiet(b->len == n, "buffer length %zu, want %zu", b->len, n);
	if (n || b->data) {
		mt_quiet_ptr_nonnull(b->data);
		mt_quiet(!memcmp(b->data, want, n), "buffer holds '%.*s'",
			 (int)b->len, b->data);
		mt_quiet(b->data[n] == '\0', "buffer not NUL-terminated");
	}
}

START_TEST(test_buf_appends_numbers)
{
	mt_buf_t b = MT_BUF_INIT;
	int64_t before = mt_mem_outstanding();
	static const char want[] =
		"u=18446744073709551615 i=-9223372036854775808 h=0x0,0xffffffffffffffff";

	mt_quiet_int_eq(mt_buf_add_str(&b, "u="), MT_OK);
	mt_quiet_int_eq(mt_buf_add_u64(&b, UINT64_MAX), MT_OK);
	mt_quiet_int_eq(mt_buf_add_str(&b, " i="), MT_OK);
	mt_quiet_int_eq(mt_buf_add_i64(&b, INT64_MIN), MT_OK);
	mt_quiet_int_eq(mt_buf_add_str(&b, " h="), MT_OK);
	mt_quiet_int_eq(mt_buf_add_hex(&b, 0), MT_OK);
	mt_quiet_int_eq(mt_buf_add(&b, ",", 1), MT_OK);
	mt_quiet_int_eq(mt_buf_add_hex(&b, UINT64_MAX), MT_OK);
	assert_buf(&b, want, strlen(want));
	mt_buf_release(&b);
	mt_quiet_ptr_null(b.data);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(test_buf_limit_too_long_leaves_buffer_unchanged)
{
	mt_buf_t b;

	mt_buf_init(&b, 10);
	mt_quiet_int_eq(mt_buf_add_str(&b, "abcdef"), MT_OK);
	mt_quiet_int_eq(mt_buf_add_str(&b, "ghijk"), MT_ETOOLONG);
	assert_buf(&b, "abcdef", 6);
	mt_quiet_int_eq(mt_buf_add_u64(&b, 12345), MT_ETOOLONG);
	mt_quiet_int_eq(mt_buf_add_hex(&b, 0x12345), MT_ETOOLONG);
	mt_quiet_int_eq(mt_buf_add_i64(&b, -1234), MT_ETOOLONG);
	mt_quiet_int_eq(mt_buf_add(&b, "x", SIZE_MAX), MT_ETOOLONG);
	assert_buf(&b, "abcdef", 6);
	/* Exactly up to the limit is fine; one more byte is not. */
	mt_quiet_int_eq(mt_buf_add_str(&b, "ghij"), MT_OK);
	assert_buf(&b, "abcdefghij", 10);
	mt_quiet_int_eq(mt_buf_add(&b, "k", 1), MT_ETOOLONG);
	mt_quiet_int_eq(mt_buf_add(&b, "", 0), MT_OK);
	assert_buf(&b, "abcdefghij", 10);
	mt_buf_release(&b);
}
END_TEST

START_TEST(test_buf_json_str_too_long_leaves_buffer_unchanged)
{
	mt_buf_t b;

	/* The string's head fits, its escape does not: nothing of it stays. */
	mt_buf_init(&b, 12);
	mt_quiet_int_eq(mt_buf_add_str(&b, "ab"), MT_OK);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "cdefg\001", 6), MT_ETOOLONG);
	assert_buf(&b, "ab", 2);
	/* Everything fits but the closing quote. */
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "cdefghijk", 9), MT_ETOOLONG);
	assert_buf(&b, "ab", 2);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "cdefghij", 8), MT_OK);
	assert_buf(&b, "ab\"cdefghij\"", 12);
	mt_buf_truncate(&b, 2);
	assert_buf(&b, "ab", 2);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "cdefghi", 7), MT_OK);
	assert_buf(&b, "ab\"cdefghi\"", 11);
	mt_buf_release(&b);
}
END_TEST

START_TEST(test_buf_out_of_memory_leaves_buffer_unchanged)
{
	mt_buf_t b = MT_BUF_INIT;
	char big[1000];
	int64_t before = mt_mem_outstanding();

	memset(big, 'z', sizeof(big));
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_buf_add_str(&b, "abc"), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_ptr_null(b.data);
	mt_quiet_uint_eq(b.len, 0);
	mt_quiet_int_eq(mt_buf_add_str(&b, "abc"), MT_OK);
	/* Growing fails: the content and its storage stay. */
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_buf_add(&b, big, sizeof(big)), MT_ENOMEM);
	assert_buf(&b, "abc", 3);
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, big, sizeof(big)), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	assert_buf(&b, "abc", 3);
	/* A size no buffer can have fails the same way, without wrapping. */
	mt_quiet_int_eq(mt_buf_add(&b, big, SIZE_MAX), MT_ENOMEM);
	mt_quiet_int_eq(mt_buf_add(&b, big, SIZE_MAX - 3), MT_ENOMEM);
	mt_quiet_int_eq(mt_buf_add(&b, big, SIZE_MAX - 10), MT_ENOMEM);
	assert_buf(&b, "abc", 3);
	mt_buf_release(&b);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(test_buf_reset_and_truncate)
{
	mt_buf_t b = MT_BUF_INIT;

	mt_quiet_int_eq(mt_buf_add_str(&b, "hello world"), MT_OK);
	mt_buf_truncate(&b, 5);
	assert_buf(&b, "hello", 5);
	mt_buf_truncate(&b, 9); /* longer than the content: no change */
	assert_buf(&b, "hello", 5);
	mt_buf_reset(&b);
	assert_buf(&b, "", 0);
	mt_quiet_uint_gt(b.cap, 0);
	mt_buf_release(&b);
}
END_TEST

START_TEST(test_buf_json_str_escapes_quote_and_backslash)
{
	mt_buf_t b = MT_BUF_INIT;
	static const char want[] = "\"a\\\"b\\\\c\\\\\\\"\"";

	mt_quiet_int_eq(mt_buf_add_json_str(&b, "a\"b\\c\\\"", 7), MT_OK);
	assert_buf(&b, want, strlen(want));
	mt_buf_release(&b);
}
END_TEST

START_TEST(test_buf_json_str_escapes_control_chars)
{
	mt_buf_t b = MT_BUF_INIT;
	char in[32];
	static const char want[] =
		"\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007"
		"\\u0008\\t\\n\\u000b\\u000c\\r\\u000e\\u000f"
		"\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017"
		"\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\"";

	for (int i = 0; i < 32; i++)
		in[i] = (char)i;
	mt_quiet_int_eq(mt_buf_add_json_str(&b, in, sizeof(in)), MT_OK);
	assert_buf(&b, want, strlen(want));
	mt_buf_release(&b);
}
END_TEST

START_TEST(test_buf_json_str_escapes_nul)
{
	mt_buf_t b = MT_BUF_INIT;
	static const char want[] = "\"a\\u0000b\\u0000\"";

	/* The length decides: a NUL is content, not the end. */
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "a\0b\0", 4), MT_OK);
	assert_buf(&b, want, strlen(want));
	mt_buf_release(&b);
}
END_TEST

START_TEST(test_buf_json_str_copies_other_bytes)
{
	mt_buf_t b = MT_BUF_INIT;
	static const char in[] = " ~/\x7f\xc3\xa9\xe2\x82\xac'";

	mt_quiet_int_eq(mt_buf_add_json_str(&b, in, strlen(in)), MT_OK);
	mt_quiet_uint_eq(b.len, strlen(in) + 2);
	mt_quiet_int_eq(b.data[0], '"');
	mt_quiet_mem_eq(b.data + 1, in, strlen(in));
	mt_quiet_int_eq(b.data[b.len - 1], '"');
	mt_buf_reset(&b);
	mt_quiet_int_eq(mt_buf_add_json_str(&b, "", 0), MT_OK);
	assert_buf(&b, "\"\"", 2);
	mt_buf_reset(&b);
	mt_quiet_int_eq(mt_buf_add_json_cstr_or_null(&b, NULL), MT_OK);
	mt_quiet_int_eq(mt_buf_add_json_cstr_or_null(&b, "x\"y"), MT_OK);
	assert_buf(&b, "null\"x\\\"y\"", 10);
	mt_buf_release(&b);
}
END_TEST

Suite *mt_suite_buf(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_buf_appends_numbers);
	tcase_add_test(tc, test_buf_limit_too_long_leaves_buffer_unchanged);
	tcase_add_test(tc, test_buf_json_str_too_long_leaves_buffer_unchanged);
	tcase_add_test(tc, test_buf_out_of_memory_leaves_buffer_unchanged);
	tcase_add_test(tc, test_buf_reset_and_truncate);
	tcase_add_test(tc, test_buf_json_str_escapes_quote_and_backslash);
	tcase_add_test(tc, test_buf_json_str_escapes_control_chars);
	tcase_add_test(tc, test_buf_json_str_escapes_nul);
	tcase_add_test(tc, test_buf_json_str_copies_other_bytes);
	suite_add_tcase(s, tc);
	return s;
}
