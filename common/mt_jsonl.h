/*
 * mt_jsonl: builds one memtrace JSONL event line in a caller's fixed buffer
 * (spec section 2), the way the preload writes every line of a trace.
 *
 * It never allocates, locks or touches errno, so the preload can use it
 * inside malloc.  A line that would not fit is never cut: each appender
 * checks room first, and a string too long for what is left is shortened
 * at a UTF-8 boundary and ends in "..." (mt_jsonl_t.truncated says so), so
 * the line stays valid JSON.
 *
 * Usage: mt_jsonl_begin(&l, buf, cap, seq, "alloc"); mt_jsonl_u64(&l,
 * "size", 48); ...; len = mt_jsonl_end(&l);  The result ends in "}\n".
 */
#ifndef MT_JSONL_H
#define MT_JSONL_H

#include <stddef.h>
#include <stdint.h>

/* Room an event needs beyond its strings: generous for the longest line
 * of numbers and hex the preload writes. */
#define MT_JSONL_FIXED_MAX 512

typedef struct {
	char *buf;
	size_t cap;
	size_t len;
	int truncated;
} mt_jsonl_t;

/* Starts {"v":1,"seq":SEQ,"kind":"KIND" ; cap must be at least
 * MT_JSONL_FIXED_MAX. */
void mt_jsonl_begin(mt_jsonl_t *l, char *buf, size_t cap, uint64_t seq,
		    const char *kind);
void mt_jsonl_u64(mt_jsonl_t *l, const char *key, uint64_t v);
void mt_jsonl_i64(mt_jsonl_t *l, const char *key, int64_t v);
void mt_jsonl_hex(mt_jsonl_t *l, const char *key, uint64_t v);
/* A string field; at most max_bytes of s are kept (0 = as many as fit). */
void mt_jsonl_str(mt_jsonl_t *l, const char *key, const char *s, size_t n,
		  size_t max_bytes);
/* "key":[a,b,c] of unsigned integers. */
void mt_jsonl_u64_array(mt_jsonl_t *l, const char *key, const uint64_t *v,
			size_t n);
/* "key":["a","b"] of NUL-terminated strings, each cut to max_each bytes
 * (0 = no limit); elements that do not fit are left out. */
void mt_jsonl_str_array(mt_jsonl_t *l, const char *key,
			const char *const *strs, size_t n, size_t max_each);
/* Closes the object with "}\n" and returns the line's length. */
size_t mt_jsonl_end(mt_jsonl_t *l);

#endif
