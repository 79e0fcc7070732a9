/*
 * mt_jsonl: the preload's line formatter.  It must never allocate nor
 * write past its buffer: it runs inside malloc, on every event.
 */
#include "mt_jsonl.h"

#include <string.h>

#include "mt_fmt.h"
#include "mt_utf8.h"

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
			step = mt_utf8_len((const unsigned char *)s + i, n - i);
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

/* ---- the fixed layout of block events ---- */

/* Each part at its longest (every field present, every number and name
 * at its longest) fits the room mt_jsonl.h gives it: head, tail, and the
 * whole line. */
#define LEN(s) (sizeof(s) - 1)
_Static_assert(LEN(",\"kind\":\"\"") + MT_EVENT_KIND_NAME_MAX +
		       LEN(",\"allocator_id\":") + MT_FMT_U64_MAX +
		       LEN(",\"ptr\":\"\"") + MT_FMT_HEX_MAX +
		       LEN(",\"new_ptr\":\"\"") + MT_FMT_HEX_MAX +
		       LEN(",\"size\":") + MT_FMT_U64_MAX +
		       LEN(",\"fn\":\"\"") + MT_EVENT_FN_NAME_MAX +
		       LEN(",\"align\":") + MT_FMT_U64_MAX <= MT_JSONL_BLOCK_HEAD_MAX,
	       "the longest head fits MT_JSONL_BLOCK_HEAD_MAX");
_Static_assert(LEN(",\"fail_at\":") + MT_FMT_U64_MAX + LEN(",\"tid\":") +
			       MT_FMT_U64_MAX <= MT_JSONL_BLOCK_TAIL_MAX,
	       "the longest tail fits MT_JSONL_BLOCK_TAIL_MAX");
_Static_assert(LEN("{\"v\":1,\"seq\":") + MT_FMT_U64_MAX + MT_JSONL_BLOCK_HEAD_MAX +
			       LEN(",\"stack\":") + MT_FMT_U64_MAX + MT_JSONL_BLOCK_TAIL_MAX +
			       LEN(",\"t\":") + MT_FMT_U64_MAX + LEN("}\n") <=
		       MT_JSONL_BLOCK_MAX,
	       "the longest line fits MT_JSONL_BLOCK_MAX");
#undef LEN

/* Append a string literal: its length is known at compile time. */
#define LIT(dst, n, s) (memcpy((dst) + (n), (s), sizeof(s) - 1), (n) += sizeof(s) - 1)

static size_t put_name(char *dst, const char *s)
{
	size_t n = strlen(s);

	memcpy(dst, s, n);
	return n;
}

/* The fn names of MT_EVENT_FNS with their lengths, so the hot path needs
 * no strlen. */
#define FN(e, s) [e] = { s, sizeof(s) - 1 },
static const struct {
	const char *s;
	size_t n;
} fn_names[MT_FN_COUNT] = {
	MT_EVENT_FNS(FN)
};
#undef FN

size_t mt_jsonl_block_head(char *dst, const mt_jsonl_block_t *ev)
{
	size_t n = 0;

	switch (ev->kind) {
	case MT_KIND_ALLOC:
		LIT(dst, n, ",\"kind\":\"alloc\"");
		break;
	case MT_KIND_FREE:
		LIT(dst, n, ",\"kind\":\"free\"");
		break;
	case MT_KIND_RESIZE:
		LIT(dst, n, ",\"kind\":\"resize\"");
		break;
	case MT_KIND_REMAP:
		LIT(dst, n, ",\"kind\":\"remap\"");
		break;
	default:
		LIT(dst, n, ",\"kind\":\"");
		n += put_name(dst + n, mt_event_kind_name(ev->kind));
		LIT(dst, n, "\"");
		break;
	}
	LIT(dst, n, ",\"allocator_id\":");
	if (!ev->allocator_id) /* libc's, nearly always */
		LIT(dst, n, "0");
	else
		n += mt_fmt_u64(dst + n, ev->allocator_id);
	if (ev->has_ptr) {
		LIT(dst, n, ",\"ptr\":\"");
		n += mt_fmt_hex(dst + n, ev->ptr);
		LIT(dst, n, "\"");
	}
	if (ev->has_new_ptr) {
		LIT(dst, n, ",\"new_ptr\":\"");
		n += mt_fmt_hex(dst + n, ev->new_ptr);
		LIT(dst, n, "\"");
	}
	if (ev->has_size) {
		LIT(dst, n, ",\"size\":");
		n += mt_fmt_u64(dst + n, ev->size);
	}
	if ((unsigned)ev->fn < MT_FN_COUNT) {
		LIT(dst, n, ",\"fn\":\"");
		memcpy(dst + n, fn_names[ev->fn].s, fn_names[ev->fn].n);
		n += fn_names[ev->fn].n;
		LIT(dst, n, "\"");
	}
	if (ev->align) {
		LIT(dst, n, ",\"align\":");
		n += mt_fmt_u64(dst + n, ev->align);
	}
	return n;
}

size_t mt_jsonl_block_tail(char *dst, const mt_jsonl_block_t *ev)
{
	size_t n = 0;

	if (ev->fail_at) {
		LIT(dst, n, ",\"fail_at\":");
		n += mt_fmt_u64(dst + n, ev->fail_at);
	}
	LIT(dst, n, ",\"tid\":");
	n += mt_fmt_u64(dst + n, ev->tid);
	return n;
}

size_t mt_jsonl_block_line(char *dst, uint64_t seq, const mt_jsonl_block_t *ev,
			   uint64_t stack, const char *tail, size_t tail_len,
			   uint64_t t)
{
	size_t n = 0;

	LIT(dst, n, "{\"v\":1,\"seq\":");
	n += mt_fmt_u64(dst + n, seq);
	n += mt_jsonl_block_head(dst + n, ev);
	if (stack) {
		LIT(dst, n, ",\"stack\":");
		n += mt_fmt_u64(dst + n, stack);
	}
	memcpy(dst + n, tail, tail_len);
	n += tail_len;
	LIT(dst, n, ",\"t\":");
	n += mt_fmt_u64(dst + n, t);
	LIT(dst, n, "}\n");
	return n;
}
