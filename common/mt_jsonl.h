/*
 * mt_jsonl: builds one memtrace JSONL event line in a caller's fixed buffer
 * (format.md section 2), the way the preload writes every line of a trace.
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

#include "mt_event.h"

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

/*
 * The fixed layout of the block events (alloc, free, resize, remap,
 * alloc.fail), the collector's hot path: the same bytes the appenders above
 * would write, in the order v, seq, kind, allocator_id, ptr, new_ptr,
 * size, fn, align, stack, fail_at, tid, t, without their checks (every
 * field is a number or a constant name, so the length is bounded).  The
 * tail (fail_at and tid) is made apart, so that a writer can keep each
 * thread's:
 *
 *   tail = mt_jsonl_block_tail(t, &ev);
 *   len = mt_jsonl_block_line(line, seq, &ev, stack, t, tail, t_ns);
 *
 * A field is left out when its has_ flag is 0; fn when it is MT_FN_COUNT;
 * align, stack and fail_at when they are 0.
 */
typedef struct {
	mt_kind_t kind;
	mt_fn_t fn;
	int has_ptr, has_new_ptr, has_size;
	uint64_t allocator_id, ptr, new_ptr, size, align, fail_at, tid;
} mt_jsonl_block_t;

/* Room each part may need, every field at its longest (mt_jsonl.c checks
 * the sums at compile time). */
#define MT_JSONL_BLOCK_HEAD_MAX 208
#define MT_JSONL_BLOCK_TAIL_MAX 64
#define MT_JSONL_BLOCK_MAX (MT_JSONL_BLOCK_HEAD_MAX + MT_JSONL_BLOCK_TAIL_MAX + 128)

/* ,"kind":...  up to align; returns its length. */
size_t mt_jsonl_block_head(char *dst, const mt_jsonl_block_t *ev);
/* [,"fail_at":N],"tid":N ; returns its length. */
size_t mt_jsonl_block_tail(char *dst, const mt_jsonl_block_t *ev);
/* {"v":1,"seq":SEQ HEAD [,"stack":STACK] TAIL ,"t":T}\n into dst
 * (MT_JSONL_BLOCK_MAX bytes), in one pass; returns the line's length. */
size_t mt_jsonl_block_line(char *dst, uint64_t seq, const mt_jsonl_block_t *ev,
			   uint64_t stack, const char *tail, size_t tail_len,
			   uint64_t t);

#endif
