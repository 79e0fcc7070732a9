/*
 * mt_jsonl: the preload's line formatter.  It must never allocate nor
 * write past its buffer: it runs inside malloc, on every event.
 */
#include "mt_jsonl.h"

#include <string.h>

#include "mt_fmt.h"

/* Room always kept for the closing "}\n" (and "]" of an open array). */
#define TAIL 4

static inline size_t room(const mt_jsonl_t *l)
{
	return l->len + TAIL < l->cap ? l->cap - l->len - TAIL : 0;
}

static inline void put(mt_jsonl_t *l, const char *s, size_t n)
{
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

/* ,"key": — returns 0 when it does not fit (nothing written). */
static int key(mt_jsonl_t *l, const char *k, size_t value_room)
{
	size_t n = strlen(k);

	if (room(l) < n + 4 + value_room) {
		l->truncated = 1;
		return 0;
	}
	put(l, ",\"", 2);
	put(l, k, n);
	put(l, "\":", 2);
	return 1;
}

void mt_jsonl_begin(mt_jsonl_t *l, char *buf, size_t cap, uint64_t seq,
		    const char *kind)
{
	l->buf = buf;
	l->cap = cap;
	l->len = 0;
	l->truncated = 0;
	put(l, "{\"v\":1,\"seq\":", 13);
	l->len += mt_fmt_u64(l->buf + l->len, seq);
	put(l, ",\"kind\":\"", 9);
	put(l, kind, strlen(kind));
	put(l, "\"", 1);
}

void mt_jsonl_u64(mt_jsonl_t *l, const char *k, uint64_t v)
{
	if (key(l, k, MT_FMT_U64_MAX))
		l->len += mt_fmt_u64(l->buf + l->len, v);
}

void mt_jsonl_i64(mt_jsonl_t *l, const char *k, int64_t v)
{
	if (key(l, k, MT_FMT_I64_MAX))
		l->len += mt_fmt_i64(l->buf + l->len, v);
}

void mt_jsonl_hex(mt_jsonl_t *l, const char *k, uint64_t v)
{
	if (!key(l, k, MT_FMT_HEX_MAX + 2))
		return;
	put(l, "\"", 1);
	l->len += mt_fmt_hex(l->buf + l->len, v);
	put(l, "\"", 1);
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
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
		return 0;
	if (len > n)
		return 0;
	/* The second byte's range excludes overlong forms and surrogates. */
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

/* The escaped string s, quotes included, in at most limit bytes.  Bytes
 * that are not UTF-8 become '?': a symbol name from a binary is not
 * guaranteed to be text, and one bad byte must not make the line (and
 * every stack using the frame) unreadable. */
static void string_body(mt_jsonl_t *l, const char *s, size_t n, size_t limit)
{
	static const char hex[] = "0123456789abcdef";
	size_t end;

	/* 2 quotes and 3 dots are always kept room for. */
	if (limit < 5)
		return;
	end = l->len + limit - 4;
	put(l, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		char esc[6];
		const char *src = esc;
		size_t elen = 1, step = 1;

		esc[0] = (char)c;
		if (c >= 0x80) {
			step = utf8_len((const unsigned char *)s + i, n - i);
			if (step) {
				src = s + i;
				elen = step;
			} else {
				esc[0] = '?';
				step = 1;
			}
		} else if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			elen = 2;
		} else if (c < 0x20 || c == 0x7f) {
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			elen = 6;
		}
		if (l->len + elen > end) {
			/* Whole characters only: the cut stays valid UTF-8. */
			put(l, "...", 3);
			l->truncated = 1;
			break;
		}
		put(l, src, elen);
		i += step;
	}
	put(l, "\"", 1);
}

void mt_jsonl_str(mt_jsonl_t *l, const char *k, const char *s, size_t n,
		  size_t max_bytes)
{
	size_t limit;

	if (!key(l, k, 5))
		return;
	limit = room(l);
	if (max_bytes && max_bytes + 2 < limit)
		limit = max_bytes + 2;
	string_body(l, s, n, limit);
}

void mt_jsonl_u64_array(mt_jsonl_t *l, const char *k, const uint64_t *v,
			size_t n)
{
	if (!key(l, k, 2))
		return;
	put(l, "[", 1);
	for (size_t i = 0; i < n; i++) {
		if (room(l) < MT_FMT_U64_MAX + 2) {
			l->truncated = 1;
			break;
		}
		if (i)
			put(l, ",", 1);
		l->len += mt_fmt_u64(l->buf + l->len, v[i]);
	}
	put(l, "]", 1);
}

void mt_jsonl_str_array(mt_jsonl_t *l, const char *k,
			const char *const *strs, size_t n, size_t max_each)
{
	if (!key(l, k, 2))
		return;
	put(l, "[", 1);
	for (size_t i = 0; i < n; i++) {
		size_t limit;

		/* Keep room for this element's quotes and dots and the "]". */
		if (room(l) < 8) {
			l->truncated = 1;
			break;
		}
		if (i)
			put(l, ",", 1);
		limit = room(l) - 1;
		if (max_each && max_each + 2 < limit)
			limit = max_each + 2;
		string_body(l, strs[i], strlen(strs[i]), limit);
	}
	put(l, "]", 1);
}

size_t mt_jsonl_end(mt_jsonl_t *l)
{
	put(l, "}\n", 2);
	return l->len;
}
