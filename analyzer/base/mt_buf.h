/*
 * mt_buf: a growable byte buffer for the rows the analyzer writes, with the
 * JSON appenders those rows need (in the manner of git's strbuf).
 *
 * Invariants: data[0..len) is the content and data[len] is a NUL whenever
 * data is not NULL; len never exceeds limit (0 = no limit).  An append that
 * would pass the limit appends nothing and returns MT_ETOOLONG; one that
 * cannot allocate appends nothing and returns MT_ENOMEM.  A failed append
 * leaves the buffer as it was, so a row is either whole or absent.
 */
#ifndef MT_BUF_H
#define MT_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	char *data;
	size_t len;
	size_t cap;
	size_t limit;
} mt_buf_t;

#define MT_BUF_INIT { NULL, 0, 0, 0 }

void mt_buf_init(mt_buf_t *b, size_t limit);
void mt_buf_release(mt_buf_t *b);
/* Empty the buffer, keeping its storage. */
void mt_buf_reset(mt_buf_t *b);
/* Cut the content back to len bytes (len <= b->len). */
void mt_buf_truncate(mt_buf_t *b, size_t len);

int mt_buf_add(mt_buf_t *b, const void *p, size_t n);
int mt_buf_add_str(mt_buf_t *b, const char *s);
int mt_buf_add_u64(mt_buf_t *b, uint64_t v);
int mt_buf_add_i64(mt_buf_t *b, int64_t v);
int mt_buf_add_hex(mt_buf_t *b, uint64_t v);
/* printf's formatting of a short piece (an SVG element's coordinates, a
 * figure with its unit): at most 511 bytes, a longer one being the
 * caller's bug (assert). */
int mt_buf_addf(mt_buf_t *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A JSON string literal of the n bytes at s, quotes included.  Bytes below
 * 0x20, '"' and '\\' are escaped; other bytes are copied as they are (the
 * reader has already checked the trace's strings are UTF-8). */
int mt_buf_add_json_str(mt_buf_t *b, const char *s, size_t n);
/* A JSON string literal of s, or null when s is NULL. */
int mt_buf_add_json_cstr_or_null(mt_buf_t *b, const char *s);

#endif
