/*
 * check_flat: the general fast path (mt_flat) against json-c, the
 * reference.  Whenever mt_flat_parse() accepts a line (returns anything
 * but DECLINED), mt_any_json_parse() must return the same verdict, the same
 * reason and an identical mt_event_t (mt_test_diff_line(), which holds
 * the exact matcher and the dispatch to json-c on the same lines).  The
 * lines are those of the fixture traces, a corpus written here, many
 * thousands generated in the preload's style (which the fast path must
 * accept, with the values they were written with), and many more mutated
 * from them.  The PRNG seed is fixed so a failure reproduces; a failure
 * prints the line.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mt_test.h"
#include "mt_test_parse.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/parse/mt_parse.h"
#include "../analyzer/read/mt_reader.h"
#include "../common/mt_event.h"

#define GEN_LINES 40000   /* preload-style lines */
#define MUTANTS_PER_LINE 5

/* ---- the preload-style line generator ---- */

#define MAX_FIELDS 40
#define MAX_FRAMES 64

typedef struct {
	char key[64];   /* JSON text of the key, without its quotes */
	char val[1600]; /* JSON text of the value */
} gfield_t;

typedef struct {
	gfield_t f[MAX_FIELDS];
	int n;
	int fast_expected;     /* the fast path must accept it */
	mt_parse_result_t verdict; /* ... with this verdict */
	mt_event_t ev;         /* and this event, when the verdict is OK */
	char strs[4][200];     /* storage of ev's strings */
	uint64_t frames[MAX_FRAMES];
} gline_t;

static void vadd(gline_t *g, int at, const char *key, const char *fmt,
		 va_list ap)
{
	gfield_t *f;

	mt_quiet(g->n < MAX_FIELDS, "more than %d fields", MAX_FIELDS);
	if (at < 0 || at > g->n)
		at = g->n;
	memmove(&g->f[at + 1], &g->f[at], sizeof(gfield_t) * (size_t)(g->n - at));
	g->n++;
	f = &g->f[at];
	snprintf(f->key, sizeof(f->key), "%s", key);
	vsnprintf(f->val, sizeof(f->val), fmt, ap);
}

static void add(gline_t *g, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(g, -1, key, fmt, ap);
	va_end(ap);
}

static void add_at(gline_t *g, int at, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(g, at, key, fmt, ap);
	va_end(ap);
}

static size_t render(const gline_t *g, char *out, size_t cap)
{
	size_t n = 0;

	out[n++] = '{';
	for (int i = 0; i < g->n; i++) {
		n += (size_t)snprintf(out + n, cap - n, "%s\"%s\":%s",
				      i ? "," : "", g->f[i].key, g->f[i].val);
		mt_quiet(n < cap - 2, "a line of %zu bytes", n);
	}
	out[n++] = '}';
	out[n] = '\0';
	return n;
}

/* The fast path may leave numbers of 20 digits to json-c (mt_flat.c:
 * scan_digits); the preload's sizes, ids and times have fewer. */
#define TWENTY_DIGITS 10000000000000000000ull

/* A number, often at an edge. */
static uint64_t gen_u64(void)
{
	uint64_t r = mt_test_below(64);

	/* 20-digit numbers, rarely: the preload writes few. */
	if (r == 0) {
		uint64_t off = mt_test_below(2);

		return UINT64_MAX - off * mt_test_below(1000);
	}
	if (r == 1)
		return TWENTY_DIGITS + (mt_test_rng() >> 2);
	switch (mt_test_below(12)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return INT64_MAX;
	case 3:
		return (uint64_t)INT64_MAX + 1;
	case 4:
		return TWENTY_DIGITS - 1 - mt_test_below(1000);
	case 5:
		return (uint64_t)1 << mt_test_below(63);
	case 6:
		return 9999999999999999999ull; /* 19 digits */
	case 7:
		return mt_test_rng() % TWENTY_DIGITS;
	case 8:
		return mt_test_below(1000);
	case 9:
		return (uint32_t)mt_test_rng();
	default:
		r = mt_test_rng() >> 1;
		return r >> mt_test_below(63);
	}
}

static uint64_t gen_nonzero(void)
{
	uint64_t v = gen_u64();

	return v ? v : 1;
}

/* A pointer as the preload writes it (lower case, no leading zeros), or
 * in the other spellings the decisions allow (upper case, leading zeros). */
static void add_ptr(gline_t *g, const char *key, uint64_t *out)
{
	uint64_t v, shift, align;
	int form;

	if (mt_test_below(4)) {
		v = mt_test_rng();
		shift = mt_test_below(64);
		align = mt_test_below(16);
		v = (v >> shift) & ~align;
	} else {
		v = gen_u64();
	}
	form = (int)mt_test_below(10);

	*out = v;
	if (form == 0)
		add(g, key, "\"0x%016" PRIX64 "\"", v);
	else if (form == 1)
		add(g, key, "\"0x%" PRIX64 "\"", v);
	else if (form == 2)
		add(g, key, "\"0x%016" PRIx64 "\"", v);
	else
		add(g, key, "\"0x%" PRIx64 "\"", v);
}

static void add_uint(gline_t *g, const char *key, uint64_t v)
{
	add(g, key, "%" PRIu64, v);
	if (v >= TWENTY_DIGITS)
		g->fast_expected = 0;
}

/* A plain string (printable ASCII, no quote or backslash), kept in slot i
 * of the line's storage. */
static void add_plain(gline_t *g, const char *key, int i, const char **s,
		      size_t *len)
{
	static const char alphabet[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		"_.:/<>()[]{}@+-*&~ ,;=!?#$%^|'`";
	size_t n = (size_t)mt_test_below(mt_test_below(8) ? 40 : sizeof(g->strs[i]) - 1);
	char *p = g->strs[i];

	if (mt_test_below(4) == 0) {
		/* A symbol or a module path, like the preload's. */
		static const char *const words[] = {
			"main", "xstrdup", "__libc_start_main", "std::vector<int>::push_back",
			"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/local/bin/demo",
			"operator new(unsigned long)", "[vdso]", "}", "{", "a}b",
		};
		snprintf(p, sizeof(g->strs[i]), "%s",
			 words[mt_test_below(sizeof(words) / sizeof(words[0]))]);
		n = strlen(p);
	} else {
		for (size_t j = 0; j < n; j++)
			p[j] = alphabet[mt_test_below(sizeof(alphabet) - 1)];
		p[n] = '\0';
	}
	add(g, key, "\"%s\"", p);
	*s = p;
	*len = n;
}

/* An optional field: 0 leave it out, 1 write it, 2 write null (which
 * counts as absent). */
static int optional(void)
{
	uint64_t r = mt_test_below(100);

	return r < 40 ? 0 : r < 94 ? 1 : 2;
}

static void gen_opt_uint(gline_t *g, const char *key, uint64_t *out,
			 unsigned flag, int nonzero)
{
	switch (optional()) {
	case 1:
		*out = nonzero ? gen_nonzero() : gen_u64();
		add_uint(g, key, *out);
		g->ev.has |= flag;
		break;
	case 2:
		add(g, key, "null");
		break;
	}
}

static void gen_opt_str(gline_t *g, const char *key, int i, const char **s,
			size_t *len, unsigned flag)
{
	switch (optional()) {
	case 1:
		add_plain(g, key, i, s, len);
		g->ev.has |= flag;
		break;
	case 2:
		add(g, key, "null");
		break;
	}
}

/* An offset: an integer or a hex string. */
static void gen_opt_offset(gline_t *g, const char *key, uint64_t *out,
			   unsigned flag)
{
	switch (optional()) {
	case 1:
		if (mt_test_below(2)) {
			add_ptr(g, key, out);
		} else {
			*out = gen_u64();
			add_uint(g, key, *out);
		}
		g->ev.has |= flag;
		break;
	case 2:
		add(g, key, "null");
		break;
	}
}

static void gen_fn(gline_t *g, int allocating)
{
	mt_fn_t fn = allocating ? (mt_fn_t)mt_test_below(MT_FN_FREE) :
				  (mt_fn_t)mt_test_below(MT_FN_COUNT);

	if (!allocating && mt_test_below(8) == 0) {
		/* Any name is shown for a free, resize or remap. */
		add(g, "fn", "\"%s\"", mt_test_below(2) ? "munmap" : "");
		g->ev.fn = MT_FN_UNKNOWN;
	} else {
		add(g, "fn", "\"%s\"", mt_event_fn_name(fn));
		g->ev.fn = fn;
	}
	g->ev.has |= MT_HAS_FN;
}

/* Fields memtrace does not read: a reader ignores them. */
static void gen_unknown_fields(gline_t *g)
{
	int n = mt_test_below(4) ? 0 : (int)mt_test_below(4);

	for (int i = 0; i < n; i++) {
		char key[32];

		snprintf(key, sizeof(key), "x%d_%" PRIu64, i, mt_test_below(100));
		switch (mt_test_below(7)) {
		case 0:
			add_uint(g, key, gen_u64());
			break;
		case 1:
			add(g, key, "-%" PRIu64, 1 + mt_test_below(INT64_MAX / 10));
			break;
		case 2:
			add(g, key, "\"x}y\"");
			break;
		case 3:
			add(g, key, "true");
			break;
		case 4:
			add(g, key, "false");
			break;
		case 5:
			add(g, key, "null");
			break;
		default:
			add(g, key, "\"\"");
			break;
		}
	}
}

static void gen_common_tail(gline_t *g, int with_stack)
{
	if (with_stack)
		gen_opt_uint(g, "stack", &g->ev.stack, MT_HAS_STACK, 1);
	gen_opt_uint(g, "tid", &g->ev.tid, MT_HAS_TID, 0);
	gen_opt_uint(g, "t", &g->ev.t, MT_HAS_T, 0);
}

/* A preload-style line of the given kind, with its expected event. */
static void gen_event(gline_t *g, mt_kind_t kind)
{
	mt_event_t *ev = &g->ev;

	memset(g, 0, sizeof(*g));
	g->fast_expected = 1;
	g->verdict = MT_PARSE_OK;
	add(g, "v", "1");
	ev->seq = gen_u64();
	add_uint(g, "seq", ev->seq);
	ev->kind = kind;
	add(g, "kind", "\"%s\"", mt_event_kind_name(kind));
	switch (kind) {
	case MT_KIND_TRACE_START:
		if (mt_test_below(2)) {
			/* Read for `top`, which watches it; 0 is none. */
			ev->pid = mt_test_below(1u << 22);
			if (ev->pid)
				ev->has |= MT_HAS_PID;
			add_uint(g, "pid", ev->pid);
		}
		if (mt_test_below(2))
			add_uint(g, "ppid", mt_test_below(1u << 22));
		if (mt_test_below(2))
			add(g, "exe", "\"/usr/local/bin/demo\"");
		if (mt_test_below(3) == 0) {
			/* The only array but frames: json-c's to judge. */
			add(g, "argv", "[\"demo\",\"--records\",\"3\"]");
			g->fast_expected = 0;
		}
		if (mt_test_below(2))
			add_uint(g, "time_ns", gen_u64());
		if (mt_test_below(2))
			add(g, "tool_version", "\"0.1.0\"");
		if (mt_test_below(2)) {
			ev->stack_depth = mt_test_below(256);
			ev->has |= MT_HAS_STACK_DEPTH;
			add_uint(g, "stack_depth", ev->stack_depth);
		}
		break;
	case MT_KIND_ALLOCATOR:
		ev->allocator_id = gen_u64();
		add_uint(g, "allocator_id", ev->allocator_id);
		gen_opt_str(g, "name", 0, &ev->name, &ev->name_len, MT_HAS_NAME);
		break;
	case MT_KIND_FRAME:
		ev->frame_id = gen_nonzero();
		add_uint(g, "frame_id", ev->frame_id);
		add_ptr(g, "ip", &ev->ip);
		gen_opt_str(g, "symbol", 0, &ev->symbol, &ev->symbol_len,
			    MT_HAS_SYMBOL);
		gen_opt_offset(g, "offset", &ev->offset, MT_HAS_OFFSET);
		gen_opt_str(g, "module", 1, &ev->module, &ev->module_len,
			    MT_HAS_MODULE);
		gen_opt_offset(g, "module_offset", &ev->module_offset,
			       MT_HAS_MODULE_OFFSET);
		break;
	case MT_KIND_STACK: {
		char *p;
		size_t n = 0;

		ev->stack_id = gen_nonzero();
		add_uint(g, "stack_id", ev->stack_id);
		ev->nframes = (size_t)mt_test_below(mt_test_below(4) ? 8 : MAX_FRAMES + 1);
		add(g, "frames", "[");
		p = g->f[g->n - 1].val;
		n = 1;
		for (size_t i = 0; i < ev->nframes; i++) {
			g->frames[i] = gen_nonzero();
			if (g->frames[i] >= TWENTY_DIGITS)
				g->fast_expected = 0;
			n += (size_t)sprintf(p + n, "%s%" PRIu64, i ? "," : "",
					     g->frames[i]);
		}
		p[n++] = ']';
		p[n] = '\0';
		ev->frames = g->frames;
		break;
	}
	case MT_KIND_ALLOC:
	case MT_KIND_ALLOC_FAIL:
		ev->allocator_id = gen_u64();
		add_uint(g, "allocator_id", ev->allocator_id);
		if (kind == MT_KIND_ALLOC)
			add_ptr(g, "ptr", &ev->ptr);
		ev->size = gen_u64();
		add_uint(g, "size", ev->size);
		gen_fn(g, 1);
		if (kind == MT_KIND_ALLOC)
			gen_opt_uint(g, "align", &ev->align, MT_HAS_ALIGN, 0);
		gen_common_tail(g, 1);
		break;
	case MT_KIND_FREE:
	case MT_KIND_RESIZE:
	case MT_KIND_REMAP:
		ev->allocator_id = gen_u64();
		add_uint(g, "allocator_id", ev->allocator_id);
		add_ptr(g, "ptr", &ev->ptr);
		if (kind == MT_KIND_REMAP)
			add_ptr(g, "new_ptr", &ev->new_ptr);
		if (kind != MT_KIND_FREE) {
			ev->size = gen_u64();
			add_uint(g, "size", ev->size);
		}
		if (optional() == 1)
			gen_fn(g, 0);
		gen_common_tail(g, kind != MT_KIND_FREE);
		break;
	case MT_KIND_TRACE_STOP:
		if (optional() == 1) {
			static const char *const reasons[] = { "exit", "signal", "api" };
			const char *r = reasons[mt_test_below(3)];

			add(g, "reason", "\"%s\"", r);
			ev->reason = r;
			ev->reason_len = strlen(r);
			ev->has |= MT_HAS_REASON;
		}
		gen_opt_uint(g, "dropped", &ev->dropped, MT_HAS_DROPPED, 0);
		gen_opt_uint(g, "t", &ev->t, MT_HAS_T, 0);
		break;
	default:
		break;
	}
	gen_unknown_fields(g);
	if (mt_test_below(5) == 0) {
		/* Any order: the preload's is only the usual one. */
		for (int i = g->n - 1; i > 0; i--) {
			int j = (int)mt_test_below((uint64_t)i + 1);
			gfield_t t = g->f[i];

			g->f[i] = g->f[j];
			g->f[j] = t;
		}
	}
}

/* ---- mutations ---- */

/* Values that are wrong, odd, or at an edge somewhere. */
static const char *const odd_values[] = {
	"0", "-0", "1", "-1", "01", "00", "-01", "-00", "1.0", "1e3", "1E3",
	"1e-3", "0.5", "-0.0", "0e0", "1e999", "-1e999", "1e-999",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808",
	"-9223372036854775809", "18446744073709551615", "18446744073709551616",
	"99999999999999999999", "184467440737095516150", "-18446744073709551616",
	"12345678901234567890123", "0000000000000000000001",
	"true", "false", "null", "tru", "nul", "True", "NaN", "Infinity",
	"-Infinity", "+1", "--1", "- 1", "1 ", " 1", "0x10",
	"\"\"", "\"0x\"", "\"0x0\"", "\"0x1\"", "\"0X1\"", "\"0xABC\"",
	"\"0x00000000000000001\"", "\"0xffffffffffffffff\"", "\"0x1g\"",
	"\"1\"", "\"12\"", "\"malloc\"", "\"free\"", "\"calloc\"",
	"\"alloc\"", "\"trace.stop\"", "\"\\u0000\"", "\"a\\u0000b\"",
	"\"\\\"\"", "\"\\\\\"", "\"\\n\"", "\"\\/\"", "\"\\u00e9\"",
	"\"\\ud800\"", "\"\\ud83d\\ude00\"", "\"\\udc00\\ud800\"",
	"\"\xc3\xa9\"", "\"\xc3\"", "\"\xff\"", "\"\xed\xa0\x80\"",
	"\"\xc0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\x7f\"", "\"\t\"",
	"\"\\u0061\"", "\"\\x41\"", "\"}\"", "\"a}\"", "\"{\"", "'a'",
	"[]", "[1]", "[0]", "[1,2,3]", "[-1]", "[-0]", "[1.5]", "[\"1\"]",
	"[null]", "[1,[2]]", "[18446744073709551616]", "[ 1 ]", "[1,]",
	"[,1]", "[01]", "[1e2]", "{}", "{\"a\":1}", "{\"frames\":[1]}",
	"{\"v\":1,\"seq\":1,\"kind\":\"alloc\"}", "[{}]", "[[]]",
};

static const char *odd_value(void)
{
	return odd_values[mt_test_below(sizeof(odd_values) / sizeof(odd_values[0]))];
}

static const char *const known_keys[] = {
	"v", "seq", "kind", "allocator_id", "ptr", "new_ptr", "size", "fn",
	"align", "stack", "tid", "t", "frame_id", "ip", "symbol", "offset",
	"module", "module_offset", "stack_id", "frames", "reason", "dropped",
	"name",
};

static const char *known_key(void)
{
	return known_keys[mt_test_below(sizeof(known_keys) / sizeof(known_keys[0]))];
}

static void mutate_fields(gline_t *g)
{
	int i = g->n ? (int)mt_test_below((uint64_t)g->n) : 0;
	gfield_t *f = g->n ? &g->f[i] : NULL;

	switch (mt_test_below(11)) {
	case 0: /* another value */
		if (f)
			snprintf(f->val, sizeof(f->val), "%s", odd_value());
		break;
	case 1: /* a field less */
		if (f) {
			memmove(f, f + 1, sizeof(*f) * (size_t)(g->n - i - 1));
			g->n--;
		}
		break;
	case 2: /* a key twice, with the same or another value */
		if (f && g->n < MAX_FIELDS) {
			gfield_t copy = *f;

			if (mt_test_below(2))
				snprintf(copy.val, sizeof(copy.val), "%s",
					 odd_value());
			int at = (int)mt_test_below((uint64_t)g->n + 1);

			add_at(g, at, copy.key, "%s", copy.val);
		}
		break;
	case 3: /* a known field where it does not belong */
		if (g->n < MAX_FIELDS) {
			int at = (int)mt_test_below((uint64_t)g->n + 1);
			const char *key = known_key();

			add_at(g, at, key, "%s", odd_value());
		}
		break;
	case 4: /* another kind */
		for (int j = 0; j < g->n; j++)
			if (!strcmp(g->f[j].key, "kind")) {
				mt_kind_t k = (mt_kind_t)mt_test_below(MT_KIND_COUNT + 1);

				snprintf(g->f[j].val, sizeof(g->f[j].val),
					 "\"%s\"",
					 k < MT_KIND_COUNT ? mt_event_kind_name(k) :
							     "alloc.ok");
			}
		break;
	case 5: /* a key spelled otherwise: escaped, cased, cut */
		if (f) {
			char k[40];

			snprintf(k, sizeof(k), "%.39s", f->key);
			switch (mt_test_below(4)) {
			case 0:
				snprintf(f->key, sizeof(f->key), "\\u%04x%s",
					 (unsigned char)k[0], k + 1);
				break;
			case 1:
				f->key[0] = (char)(f->key[0] ^ 0x20);
				break;
			case 2:
				f->key[strlen(f->key) - (*k ? 1 : 0)] = '\0';
				break;
			default:
				snprintf(f->key, sizeof(f->key), "%s ", k);
				break;
			}
		}
		break;
	case 6: /* a number made odd */
		if (f && ((f->val[0] >= '0' && f->val[0] <= '9') ||
			  f->val[0] == '-')) {
			static const char *const pre[] = { "0", "-", "-0", "00", "+", "" };
			static const char *const post[] = {
				".0", "e0", "E+2", ".5e-3", "0", "00000", "9", "", ".",
				"e", "1e400",
			};
			char v[sizeof(f->val)];
			const char *before = pre[mt_test_below(6)];

			snprintf(v, sizeof(v), "%s%s%s", before, f->val,
				 post[mt_test_below(11)]);
			memcpy(f->val, v, sizeof(v));
		}
		break;
	case 7: /* nesting */
		if (f) {
			char v[sizeof(f->val)];

			snprintf(v, sizeof(v), mt_test_below(2) ? "{\"x\":%s}" : "[%s]",
				 f->val);
			memcpy(f->val, v, sizeof(v));
		}
		break;
	case 8: /* an unknown field of any type */
		if (g->n < MAX_FIELDS) {
			int at = (int)mt_test_below((uint64_t)g->n + 1);

			add_at(g, at, "extra", "%s", odd_value());
		}
		break;
	case 9: /* a value past 2^64 or below -2^63 */
		if (f) {
			const char *sign = mt_test_below(4) ? "" : "-";
			uint64_t high = 1 + mt_test_below(UINT64_MAX);

			snprintf(f->val, sizeof(f->val), "%s%" PRIu64 "%" PRIu64,
				 sign, high, mt_test_below(1000000));
		}
		break;
	default: /* a string value with a byte that needs json-c */
		if (f && f->val[0] == '"' && strlen(f->val) >= 2) {
			static const char *const ins[] = {
				"\\\"", "\\\\", "\\u0000", "\\n", "\xc3\xa9", "\xc3",
				"\xff", "\x01", "\t", "\x7f", "}", "{", "]",
			};
			char v[sizeof(f->val)];
			size_t at = 1 + (size_t)mt_test_below(strlen(f->val) - 1);

			snprintf(v, sizeof(v), "%.*s%s%s", (int)at, f->val,
				 ins[mt_test_below(sizeof(ins) / sizeof(ins[0]))],
				 f->val + at);
			memcpy(f->val, v, sizeof(v));
		}
		break;
	}
}

static const char *const snippets[] = {
	" ", "\t", "\n", "\r", "\\", "\"", "[", "]", "{", "}", ",", ":", "\\u0000",
	"\\n", "\\\"", "\\u00e9", "\\ud800", "\xc3\xa9", "\xc3", "\xff",
	"\xed\xa0\x80", "\xc0\x80", "0", "-", ".5", "e5", "00", "null", "true",
	",\"v\":1", ",\"x\":{}", "}}", "{{", "\"\"", "\"a\":", ",,",
};

/* Byte-level damage to a rendered line; the new length.  buf has room for
 * cap bytes. */
static size_t mutate_bytes(char *buf, size_t len, size_t cap)
{
	size_t at = len ? (size_t)mt_test_below(len + 1) : 0;

	switch (mt_test_below(6)) {
	case 0: /* a byte flipped */
		if (len) {
			at = (size_t)mt_test_below(len);
			buf[at] = mt_test_below(2) ? (char)mt_test_below(256) :
					     "{}[]\",:\\0-. e"[mt_test_below(14)];
		}
		break;
	case 1: { /* bytes deleted */
		size_t n = 1 + (size_t)mt_test_below(4);

		if (at + n > len)
			n = len - at;
		memmove(buf + at, buf + at + n, len - at - n);
		len -= n;
		break;
	}
	case 2: { /* a snippet inserted */
		const char *s = snippets[mt_test_below(sizeof(snippets) / sizeof(snippets[0]))];
		size_t n = strlen(s);

		if (mt_test_below(16) == 0) {
			s = "\0";
			n = 1;
		}
		if (len + n < cap) {
			memmove(buf + at + n, buf + at, len - at);
			memcpy(buf + at, s, n);
			len += n;
		}
		break;
	}
	case 3: /* truncated */
		len = at;
		break;
	case 4: /* a NUL byte */
		if (len)
			buf[mt_test_below(len)] = '\0';
		break;
	default: { /* a piece repeated elsewhere */
		size_t from = len ? (size_t)mt_test_below(len) : 0;
		size_t n = (size_t)mt_test_below(len - from + 1);

		if (n > 64)
			n = 64;
		if (len + n < cap) {
			char piece[64];

			memcpy(piece, buf + from, n);
			memmove(buf + at + n, buf + at, len - at);
			memcpy(buf + at, piece, n);
			len += n;
		}
		break;
	}
	}
	return len;
}


/* ---- the tests ---- */

/* A preload-style line the fast path must take, with the values it was
 * written with. */
static void check_generated(mt_test_diff_t *d, const gline_t *g,
			    const char *line, size_t len, const char *what)
{
	mt_event_t ev;
	mt_parse_result_t r = mt_test_diff_line(d, line, len, what, &ev);
	const char *field;

	if (!g->fast_expected)
		return;
	mt_quiet(r != MT_PARSE_DECLINED,
		 "%s: the fast path declined a preload-style line: %s",
		 what, mt_test_show(line, len));
	mt_quiet(r == g->verdict, "%s: verdict %s (%s), want %s on line %s",
		 what, mt_test_rname(r), d->fast.why ? d->fast.why : "-",
		 mt_test_rname(g->verdict), mt_test_show(line, len));
	if (r != MT_PARSE_OK)
		return;
	field = mt_test_event_diff(&ev, &g->ev);
	mt_quiet(!field, "%s: event differs from what was written in %s on line %s",
		 what, field, mt_test_show(line, len));
}

START_TEST(test_generated_lines_take_the_fast_path)
{
	static gline_t g;
	static char line[MAX_FIELDS * 1700];
	mt_test_diff_t d;
	char what[64];
	uint64_t expected = 0;

	mt_test_rng_state = 0x6d656d7472616365ull;
	mt_test_diff_init(&d);
	for (int i = 0; i < GEN_LINES; i++) {
		size_t len;

		gen_event(&g, (mt_kind_t)(i % MT_KIND_COUNT));
		len = render(&g, line, sizeof(line));
		snprintf(what, sizeof(what), "generated line %d", i);
		check_generated(&d, &g, line, len, what);
		expected += g.fast_expected;
	}
	/* Nearly every line is the fast path's. */
	mt_quiet_uint_ge(d.accepted, expected);
	mt_quiet_uint_ge(expected, GEN_LINES * 8 / 10);
	mt_test_diff_release(&d);
}
END_TEST

START_TEST(test_mutated_lines_agree)
{
	static gline_t g, m;
	static char line[MAX_FIELDS * 1700 + 4096];
	mt_test_diff_t d;
	char what[64];

	mt_test_rng_state = 0x6d75746174696f6eull;
	mt_test_diff_init(&d);
	for (int i = 0; i < GEN_LINES; i++) {
		gen_event(&g, (mt_kind_t)(i % MT_KIND_COUNT));
		for (int j = 0; j < MUTANTS_PER_LINE; j++) {
			size_t len;
			int nf = (int)mt_test_below(3), nb = (int)mt_test_below(3);
			mt_event_t ev;

			if (!nf && !nb)
				nf = 1;
			m = g;
			for (int k = 0; k < nf; k++)
				mutate_fields(&m);
			len = render(&m, line, sizeof(line) - 4096);
			for (int k = 0; k < nb; k++)
				len = mutate_bytes(line, len, sizeof(line));
			snprintf(what, sizeof(what), "mutant %d of line %d", j, i);
			mt_test_diff_line(&d, line, len, what, &ev);
		}
	}
	/* The mutants reach every verdict, and both paths judge many. */
	for (int r = MT_PARSE_OK; r <= MT_PARSE_MALFORMED; r++)
		mt_quiet(d.verdicts[r] > 200, "only %" PRIu64 " mutants are %s",
			 d.verdicts[r], mt_test_rname((mt_parse_result_t)r));
	mt_quiet_uint_gt(d.accepted, d.lines / 10);
	mt_quiet_uint_gt(d.declined, d.lines / 10);
	mt_test_diff_release(&d);
}
END_TEST

/* Hand-written lines: format.md's examples, and the lines around the fast
 * path's edges. */
static const char *const corpus_fast[] = {
	/* format.md's smallest complete trace. */
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}",
	"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}",
	"{\"v\":1,\"seq\":3,\"kind\":\"trace.stop\"}",
	/* One of each kind, as the preload writes them. */
	"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}",
	"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x55d0c1a01234\",\"symbol\":\"xstrdup\",\"offset\":\"0x14\",\"module\":\"/usr/local/bin/demo\",\"module_offset\":\"0x1234\"}",
	"{\"v\":1,\"seq\":4,\"kind\":\"frame\",\"frame_id\":2,\"ip\":\"0x7f3a5d2a4f10\"}",
	"{\"v\":1,\"seq\":5,\"kind\":\"frame\",\"frame_id\":3,\"ip\":\"0x1\",\"offset\":20,\"module_offset\":4660}",
	"{\"v\":1,\"seq\":6,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1,2,3]}",
	"{\"v\":1,\"seq\":7,\"kind\":\"stack\",\"stack_id\":2,\"frames\":[]}",
	"{\"v\":1,\"seq\":8,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x55d0c2b002a0\",\"size\":64,\"fn\":\"malloc\",\"stack\":1,\"tid\":4242,\"t\":1200}",
	"{\"v\":1,\"seq\":9,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x55d0c2b00400\",\"size\":4096,\"fn\":\"posix_memalign\",\"align\":64}",
	"{\"v\":1,\"seq\":10,\"kind\":\"resize\",\"allocator_id\":0,\"ptr\":\"0x55d0c2b00320\",\"size\":8192,\"fn\":\"realloc\",\"stack\":3,\"tid\":4242,\"t\":3100}",
	"{\"v\":1,\"seq\":11,\"kind\":\"remap\",\"allocator_id\":0,\"ptr\":\"0x55d0c2b00320\",\"new_ptr\":\"0x7f3a5c000b60\",\"size\":16384,\"fn\":\"realloc\",\"stack\":3,\"tid\":4242,\"t\":3900}",
	"{\"v\":1,\"seq\":12,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x55d0c2b05340\",\"fn\":\"free\",\"tid\":4242,\"t\":4700}",
	"{\"v\":1,\"seq\":13,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x55d0c2b05340\"}",
	"{\"v\":1,\"seq\":14,\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":1099511627776,\"fn\":\"malloc\",\"stack\":2,\"tid\":4242,\"t\":5600}",
	"{\"v\":1,\"seq\":15,\"kind\":\"trace.stop\",\"reason\":\"exit\",\"dropped\":0,\"t\":7000}",
	"{\"v\":1,\"seq\":16,\"kind\":\"trace.start\",\"pid\":4242,\"ppid\":4200,\"exe\":\"/usr/local/bin/demo\",\"time_ns\":1764685200000000000,\"tool_version\":\"0.1.0\",\"stack_depth\":32}",
	/* Edges the fast path still takes. */
	"{\"v\":1,\"seq\":9999999999999999999,\"kind\":\"trace.stop\"}",
	"{\"v\":1,\"seq\":0,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x0\",\"size\":0,\"fn\":\"calloc\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0xFFFFFFFFFFFFFFFF\",\"size\":-0,\"fn\":\"valloc\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x0000000000000001\",\"size\":1,\"fn\":\"pvalloc\",\"stack\":null,\"tid\":null}",
	"{\"kind\":\"trace.start\",\"seq\":1,\"v\":1}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"\":1,\"x\":-9223372036854775808,\"y\":true,\"z\":false,\"w\":null,\"u\":\"}\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":1,\"x\":\"dup unknown\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":1,\"name\":\"a}b{c]d[\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":1,\"name\":\"}\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":1,\"na}me\":\"}\"}",
	/* Fast-path verdicts other than OK. */
	"{\"v\":2,\"seq\":1,\"kind\":\"trace.start\"}",
	"{\"v\":-1,\"seq\":1,\"kind\":\"trace.start\"}",
	"{\"v\":0,\"seq\":1,\"kind\":\"trace.start\"}",
	"{\"v\":1,\"seq\":1}",
	"{\"v\":1,\"seq\":1,\"kind\":1}",
	"{\"v\":1,\"seq\":\"1\",\"kind\":\"trace.start\"}",
	"{\"v\":1,\"seq\":-1,\"kind\":\"trace.start\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"bogus\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[0]}",
	"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":-1,\"fn\":\"malloc\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":1,\"fn\":\"free\"}",
};

/* Lines the fast path may judge or leave to json-c. */
static const char *const corpus_either[] = {
	"{\"v\":1,\"seq\":18446744073709551615,\"kind\":\"trace.stop\",\"dropped\":18446744073709551615,\"t\":0}",
	"{\"v\":1,\"seq\":10000000000000000000,\"kind\":\"trace.start\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":18446744073709551615,\"fn\":\"malloc\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":-9223372036854775808}",
	"{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[18446744073709551615]}",
};

/* Lines the fast path must leave to json-c. */
static const char *const corpus_declined[] = {
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"argv\":[\"demo\",\"--records\",\"3\"]}",
	"{\"v\": 1,\"seq\":1,\"kind\":\"trace.start\"}",
	" {\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"} ",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\r",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace\\u002estart\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"v\":1}",
	"{\"v\":1,\"\\u0076\":2,\"seq\":1,\"kind\":\"trace.start\"}",
	"{\"v\":01,\"seq\":1,\"kind\":\"trace.start\"}",
	"{\"v\":1.0,\"seq\":1,\"kind\":\"trace.start\"}",
	"{\"v\":1,\"seq\":1e0,\"kind\":\"trace.start\"}",
	"{\"v\":1,\"seq\":18446744073709551616,\"kind\":\"trace.start\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":-9223372036854775809}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":{\"y\":1}}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":[1]}",
	"{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1, 2]}",
	"{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[-1]}",
	"{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1,[2]]}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"caf\xc3\xa9\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"\xff\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"a\\\"b\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"a\\u0000b\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"a\tb\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"}\"",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}{}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":tru}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":nul}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\"}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":-}",
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":truex}",
	"{}",
	"{",
	"}",
	"",
	"[]",
	"[{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}]",
	"1",
	"\"x\"",
	"null",
};

START_TEST(test_corpus_lines_agree)
{
	mt_test_diff_t d;
	mt_event_t ev;
	char what[64];

	mt_test_diff_init(&d);
	for (size_t i = 0; i < sizeof(corpus_fast) / sizeof(corpus_fast[0]); i++) {
		const char *line = corpus_fast[i];

		snprintf(what, sizeof(what), "corpus line %zu", i);
		mt_quiet(mt_test_diff_line(&d, line, strlen(line), what, &ev) !=
				      MT_PARSE_DECLINED,
			      "the fast path declined a preload-style line: %s",
			      line);
	}
	for (size_t i = 0; i < sizeof(corpus_declined) / sizeof(corpus_declined[0]); i++) {
		const char *line = corpus_declined[i];

		snprintf(what, sizeof(what), "declined corpus line %zu", i);
		mt_quiet(mt_test_diff_line(&d, line, strlen(line), what, &ev) ==
				      MT_PARSE_DECLINED,
			      "the fast path judged a line json-c must: %s", line);
	}
	for (size_t i = 0; i < sizeof(corpus_either) / sizeof(corpus_either[0]); i++) {
		snprintf(what, sizeof(what), "corpus line %zu of either path", i);
		mt_test_diff_cstr(&d, corpus_either[i], what);
	}
	/* Every prefix of every corpus line: truncation anywhere. */
	for (size_t i = 0; i < sizeof(corpus_fast) / sizeof(corpus_fast[0]); i++) {
		for (size_t n = 0; n < strlen(corpus_fast[i]); n++) {
			snprintf(what, sizeof(what), "prefix %zu of corpus line %zu",
				 n, i);
			mt_test_diff_line(&d, corpus_fast[i], n, what, &ev);
		}
	}
	mt_test_diff_release(&d);
}
END_TEST

/* Every line of a file, as the analyzer reads it. */
static uint64_t diff_file(mt_test_diff_t *d, const char *path)
{
	mt_reader_t r;
	mt_line_t line;
	mt_event_t ev;
	uint64_t n = 0;
	char what[600];
	int got;

	mt_quiet(mt_reader_open(&r, path) == MT_OK, "cannot read %s", path);
	while ((got = mt_reader_next(&r, &line)) > 0) {
		if (line.too_long)
			continue;
		snprintf(what, sizeof(what), "%s:%" PRIu64, path, line.number);
		mt_test_diff_line(d, line.data, line.len, what, &ev);
		n++;
	}
	mt_quiet_int_eq(got, 0);
	mt_reader_release(&r);
	return n;
}

START_TEST(test_fixture_lines_agree)
{
	char *demo = mt_test_fixture("demo.jsonl");
	char *dir = mt_test_fixture("traces");
	DIR *dh;
	mt_test_diff_t d;
	uint64_t n;

	mt_test_diff_init(&d);
	n = diff_file(&d, demo);
	mt_quiet_uint_gt(n, 0);
	/* Every line of the demo is the preload's but its first (argv). */
	mt_quiet_uint_ge(d.accepted, n - 1);
	dh = opendir(dir);
	if (dh) {
		struct dirent *de;
		struct stat st;

		while ((de = readdir(dh))) {
			char *path;

			if (de->d_name[0] == '.')
				continue;
			path = mt_test_path(dir, de->d_name);
			if (!stat(path, &st) && S_ISREG(st.st_mode))
				diff_file(&d, path);
			free(path);
		}
		closedir(dh);
	}
	mt_test_diff_release(&d);
	free(dir);
	free(demo);
}
END_TEST

Suite *mt_suite_flat(void)
{
	Suite *s = suite_create("flat");
	TCase *tc;

	tc = tcase_create("differential");
	tcase_set_timeout(tc, 180); /* a few seconds; minutes under ASan */
	tcase_add_test(tc, test_corpus_lines_agree);
	tcase_add_test(tc, test_fixture_lines_agree);
	tcase_add_test(tc, test_generated_lines_take_the_fast_path);
	tcase_add_test(tc, test_mutated_lines_agree);
	suite_add_tcase(s, tc);
	return s;
}
