/*
 * mt_fmt: integer and hexadecimal formatting shared by the preload and the
 * analyzer.
 *
 * The preload formats every event on its hot path, from inside malloc, so
 * these functions must never allocate, lock, touch errno or call into libc
 * beyond plain memory access.  They write into a caller's buffer, which must
 * have room for the MT_FMT_*_MAX bytes named below, and return the number of
 * bytes written.  Nothing is NUL-terminated.
 */
#ifndef MT_FMT_H
#define MT_FMT_H

#include <stddef.h>
#include <stdint.h>

/* Longest output of each formatter: 18446744073709551615, -9223372036854775808,
 * 0xffffffffffffffff. */
#define MT_FMT_U64_MAX 20
#define MT_FMT_I64_MAX 20
#define MT_FMT_HEX_MAX 18

/* Decimal digits of v. */
size_t mt_fmt_u64(char *dst, uint64_t v);

/* Decimal digits of v, with a leading '-' when negative. */
size_t mt_fmt_i64(char *dst, int64_t v);

/* "0x" and the lower-case hex digits of v without leading zeros ("0x0"). */
size_t mt_fmt_hex(char *dst, uint64_t v);

/*
 * Parse a pointer written as "0x" followed by 1 to 16 hex digits (either
 * case).  Returns 0 and sets *out on success, -1 on anything else.
 */
int mt_fmt_parse_hex(const char *s, size_t len, uint64_t *out);

#endif
