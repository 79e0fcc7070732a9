/*
 * mt_lines: the collector's block lines (mt_lines.h).  It must never
 * write a byte other than mt_jsonl_block_line() would: every shape it
 * does not build itself goes there.
 */
#include "mt_lines.h"

#include <string.h>
#include <emmintrin.h>

#include "../common/mt_event.h"
#include "../common/mt_fmt.h"

#define SEQ_PREFIX "{\"v\":1,\"seq\":"
#define SEQ_PREFIX_LEN (sizeof(SEQ_PREFIX) - 1)

/* A piece of at most 48 bytes, copied whole and counted for len. */
typedef struct {
	char s[48];
	unsigned len;
} piece_t;

/* The head of each fast kind, up to the ptr's digits (libc's allocator). */
static const piece_t heads[MT_KIND_COUNT] = {
#define HEAD(k, s) [k] = { s, sizeof(s) - 1 }
	HEAD(MT_KIND_ALLOC, ",\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x"),
	HEAD(MT_KIND_FREE, ",\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x"),
	HEAD(MT_KIND_RESIZE, ",\"kind\":\"resize\",\"allocator_id\":0,\"ptr\":\"0x"),
	HEAD(MT_KIND_REMAP, ",\"kind\":\"remap\",\"allocator_id\":0,\"ptr\":\"0x"),
#undef HEAD
};

/* Each fn's ,"fn":"NAME" followed by ,"stack": (cut off without a
 * stack); MT_FN_COUNT, no fn (a free), the stack's key alone. */
#define STACK_KEY ",\"stack\":"
#define STACK_KEY_LEN (sizeof(STACK_KEY) - 1)
static const piece_t fns[MT_FN_COUNT + 1] = {
#define FN(e, s) [e] = { ",\"fn\":\"" s "\"" STACK_KEY, sizeof(",\"fn\":\"" s "\"" STACK_KEY) - 1 },
	MT_EVENT_FNS(FN)
	[MT_FN_COUNT] = { STACK_KEY, STACK_KEY_LEN },
#undef FN
};

/* What follows the ptr: its closing quote, and size's key; a remap's
 * new_ptr first. */
static const char size_key[16] = "\",\"size\":";
#define NEW_PTR_KEY "\",\"new_ptr\":\"0x"
#define NEW_PTR_KEY_LEN (sizeof(NEW_PTR_KEY) - 1)
static const char new_ptr_key[16] = NEW_PTR_KEY;

/* Copy a fixed n bytes: one or two vector stores, whatever part of them
 * the caller counts. */
#define COPY(dst, src, n) memcpy((dst), (src), (n))

static inline void store64(char *dst, uint64_t v)
{
	memcpy(dst, &v, 8);
}

/* The eight digits of v < 10^8, leading zeros included, as the bytes of
 * a little-endian word: two digit pairs per 32-bit lane, then one digit
 * per byte, by multiplications that stay within their lanes. */
static inline uint64_t digits8(uint32_t v)
{
	uint64_t merged = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
	uint64_t top = (merged * 10486) >> 20 & (0x7Full << 32 | 0x7F);
	uint64_t hundreds = (merged - 100 * top) << 16 | top;
	uint64_t tens = (hundreds * 103) >> 10 & 0x000F000F000F000Full;

	tens |= (hundreds - 10 * tens) << 8;
	return tens + 0x3030303030303030ull;
}

/* How many decimal digits v < 10^8 has: those of the least number of
 * its bit length, or one more.  1233 / 4096 is log10(2) to within a
 * part in 60,000, close enough for every bit length up to 64. */
static inline size_t dec_len(uint64_t v)
{
	static const uint32_t pow10[9] = { 1,	    10,	     100,      1000,	  10000,
					   100000,  1000000, 10000000, 100000000 };
	size_t n = (size_t)((63 - __builtin_clzll(v | 1)) * 1233 >> 12) + 1;

	return n + (v >= pow10[n]);
}

/* Decimal digits of v; writes 8 bytes when v < 10^8. */
static inline size_t dec(char *dst, uint64_t v)
{
	size_t n;

	if (__builtin_expect(v >= 100000000, 0))
		return mt_fmt_u64(dst, v);
	n = dec_len(v);
	store64(dst, digits8((uint32_t)v) >> (8 * (8 - n)));
	return n;
}

/*
 * Hex digits of v without leading zeros ("0" for 0); writes 16 bytes.
 * All sixteen are made at once in SSE2's byte lanes (every x86-64 has
 * them): v's bytes most significant first, each split into its two
 * nibbles, '0' added to each and 'a' - '0' - 10 more where it is over 9.
 * Then the leading zeros are shifted out.
 */
static inline size_t hex(char *dst, uint64_t v)
{
	size_t n = (size_t)(67 - __builtin_clzll(v | 1)) / 4;
	__m128i x = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
	__m128i lo = _mm_and_si128(x, _mm_set1_epi8(0x0F));
	__m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), _mm_set1_epi8(0x0F));
	__m128i d = _mm_unpacklo_epi8(hi, lo);
	__m128i over9 = _mm_cmpgt_epi8(d, _mm_set1_epi8(9));
	unsigned __int128 c;

	d = _mm_add_epi8(d, _mm_set1_epi8('0'));
	d = _mm_add_epi8(d, _mm_and_si128(over9, _mm_set1_epi8('a' - '0' - 10)));
	memcpy(&c, &d, 16);
	c >>= 8 * (16 - n);
	memcpy(dst, &c, 16);
	return n;
}

void mt_lines_init(mt_lines_t *l)
{
	memset(l, 0, sizeof(*l));
}

int mt_lines_event(const mt_ring_block_t *b, uint64_t w, mt_jsonl_block_t *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = (mt_kind_t)MT_RING_ARG_A(w);
	ev->fn = (mt_fn_t)MT_RING_ARG_B(w);
	ev->tid = MT_RING_VALUE(w);
	ev->ptr = b->ptr;
	ev->new_ptr = b->new_ptr;
	ev->size = b->size;
	if (ev->fn == MT_FN_API)
		ev->allocator_id = b->allocator_id;
	else
		ev->align = b->align;
	ev->fail_at = b->fail_at;
	switch (ev->kind) {
	case MT_KIND_ALLOC:
	case MT_KIND_RESIZE:
		ev->has_ptr = ev->has_size = 1;
		return 0;
	case MT_KIND_ALLOC_FAIL:
		ev->has_size = 1;
		return 0;
	case MT_KIND_FREE:
		ev->has_ptr = 1;
		return 0;
	case MT_KIND_REMAP:
		ev->has_ptr = ev->has_new_ptr = ev->has_size = 1;
		return 0;
	default:
		return -1;
	}
}

/* Any shape, the reference's way. */
static size_t slow_line(char *dst, uint64_t seq, const mt_ring_block_t *b,
			uint64_t w, uint64_t t)
{
	mt_jsonl_block_t ev;
	char tail[MT_JSONL_BLOCK_TAIL_MAX];
	size_t tail_len;

	if (mt_lines_event(b, w, &ev) < 0)
		return 0;
	tail_len = mt_jsonl_block_tail(tail, &ev);
	return mt_jsonl_block_line(dst, seq, &ev, b->stack, tail, tail_len, t);
}

/*
 * The seq prefix for seq into dst (48 bytes), and into l for the next.
 * The next seq is the last one's copy with its digits counted up in both
 * places: counted up in l alone and then copied, each line's copy would
 * read bytes just stored, which the CPU cannot forward into a wider load
 * (a stall of some cycles every line).  Written afresh otherwise, or
 * when a digit is added.
 */
static size_t seq_put(mt_lines_t *l, char *dst, uint64_t seq)
{
	if (seq && seq - 1 == l->seq_of && l->seq_len) {
		unsigned i = l->seq_len - 1;

		COPY(dst, l->seq, 48);
		while (l->seq[i] == '9' && i > SEQ_PREFIX_LEN) {
			l->seq[i] = dst[i] = '0';
			i--;
		}
		if (l->seq[i] != '9') {
			dst[i] = ++l->seq[i];
			l->seq_of = seq;
			return l->seq_len;
		}
	}
	memcpy(l->seq, SEQ_PREFIX, SEQ_PREFIX_LEN);
	l->seq_len = (unsigned)(SEQ_PREFIX_LEN + mt_fmt_u64(l->seq + SEQ_PREFIX_LEN, seq));
	l->seq_of = seq;
	COPY(dst, l->seq, 48);
	return l->seq_len;
}

static void tid_text(mt_lines_t *l, uint64_t tid)
{
	memcpy(l->tid, ",\"tid\":", 7);
	l->tid_len = (unsigned)(7 + mt_fmt_u64(l->tid + 7, tid));
	l->tid_of = tid;
}

/* ,"t":N}\n: t is whole microseconds, so its digits are those of the
 * microseconds and "000" (but for 0). */
static void t_text(mt_lines_t *l, uint64_t t)
{
	char *p = l->t + 5;

	memcpy(l->t, ",\"t\":", 5);
	if (t && t / 1000 < 100000000 && t % 1000 == 0) {
		p += dec(p, t / 1000);
		memcpy(p, "000", 3);
		p += 3;
	} else {
		p += mt_fmt_u64(p, t);
	}
	memcpy(p, "}\n", 2);
	l->t_len = (unsigned)(p + 2 - l->t);
	l->t_of = t;
}

/* ,"t":N}\n for t into dst (32 bytes) and l: a t other than the last
 * line's is made in registers and stored to both (copied from l just
 * after it is written, it would stall as seq_put says). */
static size_t t_put(mt_lines_t *l, char *dst, uint64_t t)
{
	static const char key[8] = ",\"t\":", end[8] = "000}\n";
	uint64_t us = t / 1000, k, e, d;
	size_t n;

	if (t == l->t_of && l->t_len) {
		COPY(dst, l->t, 32);
		return l->t_len;
	}
	if (!t || t % 1000 || us >= 100000000) {
		t_text(l, t);
		COPY(dst, l->t, 32);
		return l->t_len;
	}
	n = dec_len(us);
	d = digits8((uint32_t)us) >> (8 * (8 - n));
	memcpy(&k, key, 8);
	memcpy(&e, end, 8);
	store64(dst, k);
	store64(dst + 5, d);
	store64(dst + 5 + n, e);
	store64(l->t, k);
	store64(l->t + 5, d);
	store64(l->t + 5 + n, e);
	l->t_of = t;
	l->t_len = (unsigned)(5 + n + 5);
	return l->t_len;
}

size_t mt_lines_block(mt_lines_t *l, char *dst, uint64_t seq,
		      const mt_ring_block_t *b, uint64_t w, uint64_t t)
{
	unsigned kind = MT_RING_ARG_A(w), fn = MT_RING_ARG_B(w);
	uint64_t tid = MT_RING_VALUE(w), stack = b->stack;
	const piece_t *f;
	size_t n;

	/* Libc's allocator, no alignment, no fail_at: nearly every event. */
	if (__builtin_expect((kind != MT_KIND_ALLOC && kind != MT_KIND_FREE &&
			      kind != MT_KIND_RESIZE && kind != MT_KIND_REMAP) ||
				     fn > MT_FN_COUNT || fn == MT_FN_API || b->align ||
				     b->fail_at,
			     0))
		return slow_line(dst, seq, b, w, t);
	if (tid != l->tid_of || !l->tid_len)
		tid_text(l, tid);
	n = seq_put(l, dst, seq);
	COPY(dst + n, heads[kind].s, 48);
	n += heads[kind].len;
	n += hex(dst + n, b->ptr);
	if (kind == MT_KIND_REMAP) {
		COPY(dst + n, new_ptr_key, 16);
		n += NEW_PTR_KEY_LEN;
		n += hex(dst + n, b->new_ptr);
	}
	COPY(dst + n, size_key, 16);
	if (kind != MT_KIND_FREE) {
		n += 9;
		n += dec(dst + n, b->size);
	} else {
		n += 1;
	}
	f = &fns[fn];
	COPY(dst + n, f->s, 32);
	if (stack) {
		n += f->len;
		n += dec(dst + n, stack);
	} else {
		n += f->len - STACK_KEY_LEN;
	}
	COPY(dst + n, l->tid, 32);
	n += l->tid_len;
	return n + t_put(l, dst + n, t);
}
