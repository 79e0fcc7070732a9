/*
 * check_parse: the differential test that holds the fast path to json-c,
 * and the validator's verdicts.
 *
 * Whenever mt_fast_parse() accepts a line (returns anything but DECLINED),
 * mt_jsonc_parse() must return the same verdict, the same reason and an
 * identical mt_event_t; and mt_parser_parse() must always agree with
 * json-c.  The lines are those of the fixture traces, a corpus written
 * here, many thousands generated in the preload's style (which the fast
 * path must accept, with the values they were written with), and many
 * more mutated from them.  The exact-layout matcher, mt_exact_parse(), is
 * held to json-c on every one of those lines too (OK with json-c's event,
 * or DECLINED), reading each from a buffer of its exact length, and on
 * tens of thousands of lines in the preload's layout and every single-byte
 * change of typical ones.  The PRNG seed is fixed so a failure reproduces;
 * a failure prints the line.
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
#include "../analyzer/mt_error.h"
#include "../analyzer/mt_exact.h"
#include "../analyzer/mt_fast.h"
#include "../analyzer/mt_jsonc.h"
#include "../analyzer/mt_mem.h"
#include "../analyzer/mt_parse.h"
#include "../analyzer/mt_reader.h"
#include "../common/mt_event.h"

#define GEN_LINES 40000   /* preload-style lines */
#define MUTANTS_PER_LINE 5

/* splitmix64, fixed seed. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return rng() % n;
}

/* Where a value takes several draws, each is a statement of its own: the
 * order of a call's arguments is unspecified, and a seed must give the
 * same lines whatever the compiler. */

static const char *const result_names[] = {
	"OK", "NOT_EVENT", "BAD_VERSION", "MALFORMED", "DECLINED", "NOMEM",
};

static const char *rname(mt_parse_result_t r)
{
	return (unsigned)r < sizeof(result_names) / sizeof(result_names[0]) ?
		       result_names[r] : "?";
}

/* The line, printable: non-ASCII and control bytes as \xNN. */
static const char *show(const char *line, size_t len)
{
	static char out[8192];
	size_t n = 0;

	for (size_t i = 0; i < len && n < sizeof(out) - 16; i++) {
		unsigned char c = (unsigned char)line[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, 8, "\\x%02x", c);
	}
	if (n >= sizeof(out) - 16)
		n += (size_t)snprintf(out + n, 8, "...");
	out[n] = '\0';
	return out;
}

static int str_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (!alen || !memcmp(a, b, alen));
}

/* NULL when the events are identical, else the name of a field that
 * differs. */
static const char *event_diff(const mt_event_t *a, const mt_event_t *b)
{
#define SAME(f) if (a->f != b->f) return #f
	SAME(seq);
	SAME(kind);
	SAME(has);
	SAME(fn);
	SAME(allocator_id);
	SAME(ptr);
	SAME(new_ptr);
	SAME(size);
	SAME(align);
	SAME(stack);
	SAME(tid);
	SAME(t);
	SAME(frame_id);
	SAME(ip);
	SAME(offset);
	SAME(module_offset);
	SAME(stack_id);
	SAME(dropped);
	SAME(nframes);
#undef SAME
	if (!str_eq(a->symbol, a->symbol_len, b->symbol, b->symbol_len))
		return "symbol";
	if (!str_eq(a->module, a->module_len, b->module, b->module_len))
		return "module";
	if (!str_eq(a->name, a->name_len, b->name, b->name_len))
		return "name";
	if (!str_eq(a->reason, a->reason_len, b->reason, b->reason_len))
		return "reason";
	for (size_t i = 0; i < a->nframes; i++)
		if (a->frames[i] != b->frames[i])
			return "frames";
	return NULL;
}

static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* ---- the differential check ---- */

typedef struct {
	mt_parser_t fast, json, both, exact;
	uint64_t lines, accepted, declined, exact_accepted;
	uint64_t verdicts[MT_PARSE_NOMEM + 1];
} diff_t;

static void diff_init(diff_t *d)
{
	memset(d, 0, sizeof(*d));
	mt_quiet_int_eq(mt_parser_init(&d->fast), MT_OK);
	mt_quiet_int_eq(mt_parser_init(&d->json), MT_OK);
	mt_quiet_int_eq(mt_parser_init(&d->both), MT_OK);
	mt_quiet_int_eq(mt_parser_init(&d->exact), MT_OK);
}

static void diff_release(diff_t *d)
{
	mt_parser_release(&d->fast);
	mt_parser_release(&d->json);
	mt_parser_release(&d->both);
	mt_parser_release(&d->exact);
}

/*
 * mt_exact_parse_window() on the line as the analyzer hands it over, from
 * the reader's buffer: the line, its '\n', then whatever follows (the
 * line again, zeros, digits, or nothing when it fills the span), in a
 * buffer of exactly MT_PARSE_EXACT_SPAN bytes, so that a read past the
 * span is AddressSanitizer's to catch.  It must say what mt_exact_parse()
 * says of the line, give the same event, and find the line's length.
 */
static void exact_window_agrees(diff_t *d, const char *line, size_t len,
				const char *what)
{
	static const char *const tails[] = { NULL, "", "0123456789abcdef" };
	const char *nl = memchr(line, '\n', len);
	size_t line_len = nl ? (size_t)(nl - line) : len;

	for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
		char *buf = malloc(MT_PARSE_EXACT_SPAN);
		mt_event_t ex, ew;
		mt_parse_result_t rx, rw;
		size_t got = 0, n = len < MT_PARSE_EXACT_SPAN ? len : MT_PARSE_EXACT_SPAN;
		const char *field;

		mt_quiet_ptr_nonnull(buf);
		memcpy(buf, line, n);
		for (size_t i = n; i < MT_PARSE_EXACT_SPAN; i++) {
			if (i == len)
				buf[i] = '\n';
			else if (!tails[t])
				buf[i] = line[(i - len - 1) % (len ? len : 1)];
			else if (!tails[t][0])
				buf[i] = '\0';
			else
				buf[i] = tails[t][i % 16];
		}
		memset(&ex, 0, sizeof(ex));
		memset(&ew, 0xa5, sizeof(ew));
		/* The reader ends a line at its first '\n', wherever it is. */
		rx = mt_exact_parse(&d->exact, line, line_len, &ex);
		rw = mt_exact_parse_window(&d->exact, buf, &ew, &got);
		free(buf);
		mt_quiet(rw == rx,
			 "%s: the window matcher says %s, the exact one %s on line %s",
			 what, rname(rw), rname(rx), show(line, len));
		if (rw != MT_PARSE_OK)
			continue;
		mt_quiet(got == line_len,
			 "%s: the window matcher finds %zu bytes, not %zu, in line %s",
			 what, got, line_len, show(line, len));
		field = event_diff(&ew, &ex);
		mt_quiet(!field,
			 "%s: the window matcher's event differs in %s on line %s",
			 what, field, show(line, len));
		mt_quiet(!d->exact.why && !d->exact.why_field &&
				 !d->exact.used_json_c,
			 "%s: the window matcher left a reason on line %s", what,
			 show(line, len));
	}
}

/*
 * Judge one line three ways.  Returns the fast path's verdict; the event
 * it made is left in *fast_ev (valid until the next call).
 */
static mt_parse_result_t diff_line(diff_t *d, const char *line, size_t len,
				   const char *what, mt_event_t *fast_ev)
{
	mt_event_t ej, eb;
	mt_parse_result_t rf, rj, rb;
	const char *field;

	memset(fast_ev, 0, sizeof(*fast_ev));
	memset(&ej, 0, sizeof(ej));
	memset(&eb, 0, sizeof(eb));
	rf = mt_fast_parse(&d->fast, line, len, fast_ev);
	rj = mt_jsonc_parse(&d->json, line, len, &ej);
	rb = mt_parser_parse(&d->both, line, len, &eb);
	d->lines++;
	mt_quiet(rf != MT_PARSE_NOMEM && rj != MT_PARSE_NOMEM,
		 "%s: out of memory on line %s", what, show(line, len));
	mt_quiet(rj != MT_PARSE_DECLINED, "%s: json-c declined line %s",
		 what, show(line, len));
	d->verdicts[rj]++;
	if (rf == MT_PARSE_DECLINED) {
		d->declined++;
	} else {
		d->accepted++;
		mt_quiet(rf == rj,
			 "%s: fast path says %s (%s), json-c says %s (%s) on line %s",
			 what, rname(rf), d->fast.why ? d->fast.why : "-",
			 rname(rj), d->json.why ? d->json.why : "-",
			 show(line, len));
		mt_quiet(same_text(d->fast.why, d->json.why) &&
				      same_text(d->fast.why_field, d->json.why_field),
			      "%s: fast path gives why '%s' (%s), json-c '%s' (%s) on line %s",
			      what, d->fast.why ? d->fast.why : "-",
			      d->fast.why_field ? d->fast.why_field : "-",
			      d->json.why ? d->json.why : "-",
			      d->json.why_field ? d->json.why_field : "-",
			      show(line, len));
		if (rf == MT_PARSE_BAD_VERSION)
			mt_quiet(d->fast.version == d->json.version,
				 "%s: version %" PRId64 " vs %" PRId64
				 " on line %s", what, d->fast.version,
				 d->json.version, show(line, len));
		field = event_diff(fast_ev, &ej);
		mt_quiet(!field,
			 "%s: the paths' events differ in %s (%s) on line %s",
			 what, field, rname(rf), show(line, len));
	}
	/* The exact-layout matcher: OK with json-c's event, or DECLINED; it
	 * reads the line from a buffer of its exact length, so that a read
	 * past the line's end is AddressSanitizer's to catch. */
	{
		char *copy = malloc(len ? len : 1);
		mt_event_t ex;
		mt_parse_result_t rx;

		mt_quiet_ptr_nonnull(copy);
		memcpy(copy, line, len);
		memset(&ex, 0xa5, sizeof(ex));
		rx = mt_exact_parse(&d->exact, copy, len, &ex);
		free(copy);
		mt_quiet(rx == MT_PARSE_OK || rx == MT_PARSE_DECLINED,
			 "%s: the exact matcher says %s on line %s", what,
			 rname(rx), show(line, len));
		if (rx == MT_PARSE_OK) {
			d->exact_accepted++;
			mt_quiet(rj == MT_PARSE_OK,
				 "%s: the exact matcher accepts, json-c says %s (%s) on line %s",
				 what, rname(rj), d->json.why ? d->json.why : "-",
				 show(line, len));
			mt_quiet(rf == MT_PARSE_OK,
				 "%s: the exact matcher accepts, the fast path says %s on line %s",
				 what, rname(rf), show(line, len));
			mt_quiet(!d->exact.why && !d->exact.why_field &&
					      !d->exact.used_json_c,
				      "%s: the exact matcher left a reason on line %s",
				      what, show(line, len));
			field = event_diff(&ex, &ej);
			mt_quiet(!field,
				 "%s: the exact matcher's event differs from json-c's in %s on line %s",
				 what, field, show(line, len));
		}
	}
	exact_window_agrees(d, line, len, what);
	/* The parser as the analyzer uses it: one verdict, json-c's. */
	mt_quiet(rb == rj, "%s: mt_parser_parse says %s, json-c %s on line %s",
		 what, rname(rb), rname(rj), show(line, len));
	mt_quiet(rb == MT_PARSE_DECLINED ||
			      same_text(d->both.why, d->json.why),
		      "%s: mt_parser_parse gives why '%s', json-c '%s' on line %s",
		      what, d->both.why ? d->both.why : "-",
		      d->json.why ? d->json.why : "-", show(line, len));
	field = event_diff(&eb, &ej);
	mt_quiet(!field,
		 "%s: mt_parser_parse's event differs from json-c's in %s on line %s",
		 what, field, show(line, len));
	mt_quiet_int_eq(d->both.used_json_c, rf == MT_PARSE_DECLINED);
	return rf;
}

static void diff_cstr(diff_t *d, const char *line, const char *what)
{
	mt_event_t ev;

	diff_line(d, line, strlen(line), what, &ev);
}

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

/* The fast path may leave numbers of 20 digits to json-c (mt_parse.c:
 * scan_digits); the preload's sizes, ids and times have fewer. */
#define TWENTY_DIGITS 10000000000000000000ull

/* A number, often at an edge. */
static uint64_t gen_u64(void)
{
	uint64_t r = below(64);

	/* 20-digit numbers, rarely: the preload writes few. */
	if (r == 0) {
		uint64_t off = below(2);

		return UINT64_MAX - off * below(1000);
	}
	if (r == 1)
		return TWENTY_DIGITS + (rng() >> 2);
	switch (below(12)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return INT64_MAX;
	case 3:
		return (uint64_t)INT64_MAX + 1;
	case 4:
		return TWENTY_DIGITS - 1 - below(1000);
	case 5:
		return (uint64_t)1 << below(63);
	case 6:
		return 9999999999999999999ull; /* 19 digits */
	case 7:
		return rng() % TWENTY_DIGITS;
	case 8:
		return below(1000);
	case 9:
		return (uint32_t)rng();
	default:
		r = rng() >> 1;
		return r >> below(63);
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

	if (below(4)) {
		v = rng();
		shift = below(64);
		align = below(16);
		v = (v >> shift) & ~align;
	} else {
		v = gen_u64();
	}
	form = (int)below(10);

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
	size_t n = (size_t)below(below(8) ? 40 : sizeof(g->strs[i]) - 1);
	char *p = g->strs[i];

	if (below(4) == 0) {
		/* A symbol or a module path, like the preload's. */
		static const char *const words[] = {
			"main", "xstrdup", "__libc_start_main", "std::vector<int>::push_back",
			"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/local/bin/demo",
			"operator new(unsigned long)", "[vdso]", "}", "{", "a}b",
		};
		snprintf(p, sizeof(g->strs[i]), "%s",
			 words[below(sizeof(words) / sizeof(words[0]))]);
		n = strlen(p);
	} else {
		for (size_t j = 0; j < n; j++)
			p[j] = alphabet[below(sizeof(alphabet) - 1)];
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
	uint64_t r = below(100);

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
		if (below(2)) {
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
	mt_fn_t fn = allocating ? (mt_fn_t)below(MT_FN_FREE) :
				  (mt_fn_t)below(MT_FN_COUNT);

	if (!allocating && below(8) == 0) {
		/* Any name is shown for a free, resize or remap. */
		add(g, "fn", "\"%s\"", below(2) ? "munmap" : "");
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
	int n = below(4) ? 0 : (int)below(4);

	for (int i = 0; i < n; i++) {
		char key[32];

		snprintf(key, sizeof(key), "x%d_%" PRIu64, i, below(100));
		switch (below(7)) {
		case 0:
			add_uint(g, key, gen_u64());
			break;
		case 1:
			add(g, key, "-%" PRIu64, 1 + below(INT64_MAX / 10));
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
		if (below(2))
			add_uint(g, "pid", below(1u << 22));
		if (below(2))
			add_uint(g, "ppid", below(1u << 22));
		if (below(2))
			add(g, "exe", "\"/usr/local/bin/demo\"");
		if (below(3) == 0) {
			/* The only array but frames: json-c's to judge. */
			add(g, "argv", "[\"demo\",\"--records\",\"3\"]");
			g->fast_expected = 0;
		}
		if (below(2))
			add_uint(g, "time_ns", gen_u64());
		if (below(2))
			add(g, "tool_version", "\"0.1.0\"");
		if (below(2))
			add_uint(g, "stack_depth", below(256));
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
		ev->nframes = (size_t)below(below(4) ? 8 : MAX_FRAMES + 1);
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
			const char *r = reasons[below(3)];

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
	if (below(5) == 0) {
		/* Any order: the preload's is only the usual one. */
		for (int i = g->n - 1; i > 0; i--) {
			int j = (int)below((uint64_t)i + 1);
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
	return odd_values[below(sizeof(odd_values) / sizeof(odd_values[0]))];
}

static const char *const known_keys[] = {
	"v", "seq", "kind", "allocator_id", "ptr", "new_ptr", "size", "fn",
	"align", "stack", "tid", "t", "frame_id", "ip", "symbol", "offset",
	"module", "module_offset", "stack_id", "frames", "reason", "dropped",
	"name",
};

static const char *known_key(void)
{
	return known_keys[below(sizeof(known_keys) / sizeof(known_keys[0]))];
}

static void mutate_fields(gline_t *g)
{
	int i = g->n ? (int)below((uint64_t)g->n) : 0;
	gfield_t *f = g->n ? &g->f[i] : NULL;

	switch (below(11)) {
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

			if (below(2))
				snprintf(copy.val, sizeof(copy.val), "%s",
					 odd_value());
			int at = (int)below((uint64_t)g->n + 1);

			add_at(g, at, copy.key, "%s", copy.val);
		}
		break;
	case 3: /* a known field where it does not belong */
		if (g->n < MAX_FIELDS) {
			int at = (int)below((uint64_t)g->n + 1);
			const char *key = known_key();

			add_at(g, at, key, "%s", odd_value());
		}
		break;
	case 4: /* another kind */
		for (int j = 0; j < g->n; j++)
			if (!strcmp(g->f[j].key, "kind")) {
				mt_kind_t k = (mt_kind_t)below(MT_KIND_COUNT + 1);

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
			switch (below(4)) {
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
			const char *before = pre[below(6)];

			snprintf(v, sizeof(v), "%s%s%s", before, f->val,
				 post[below(11)]);
			memcpy(f->val, v, sizeof(v));
		}
		break;
	case 7: /* nesting */
		if (f) {
			char v[sizeof(f->val)];

			snprintf(v, sizeof(v), below(2) ? "{\"x\":%s}" : "[%s]",
				 f->val);
			memcpy(f->val, v, sizeof(v));
		}
		break;
	case 8: /* an unknown field of any type */
		if (g->n < MAX_FIELDS) {
			int at = (int)below((uint64_t)g->n + 1);

			add_at(g, at, "extra", "%s", odd_value());
		}
		break;
	case 9: /* a value past 2^64 or below -2^63 */
		if (f) {
			const char *sign = below(4) ? "" : "-";
			uint64_t high = 1 + below(UINT64_MAX);

			snprintf(f->val, sizeof(f->val), "%s%" PRIu64 "%" PRIu64,
				 sign, high, below(1000000));
		}
		break;
	default: /* a string value with a byte that needs json-c */
		if (f && f->val[0] == '"' && strlen(f->val) >= 2) {
			static const char *const ins[] = {
				"\\\"", "\\\\", "\\u0000", "\\n", "\xc3\xa9", "\xc3",
				"\xff", "\x01", "\t", "\x7f", "}", "{", "]",
			};
			char v[sizeof(f->val)];
			size_t at = 1 + (size_t)below(strlen(f->val) - 1);

			snprintf(v, sizeof(v), "%.*s%s%s", (int)at, f->val,
				 ins[below(sizeof(ins) / sizeof(ins[0]))],
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
	size_t at = len ? (size_t)below(len + 1) : 0;

	switch (below(6)) {
	case 0: /* a byte flipped */
		if (len) {
			at = (size_t)below(len);
			buf[at] = below(2) ? (char)below(256) :
					     "{}[]\",:\\0-. e"[below(14)];
		}
		break;
	case 1: { /* bytes deleted */
		size_t n = 1 + (size_t)below(4);

		if (at + n > len)
			n = len - at;
		memmove(buf + at, buf + at + n, len - at - n);
		len -= n;
		break;
	}
	case 2: { /* a snippet inserted */
		const char *s = snippets[below(sizeof(snippets) / sizeof(snippets[0]))];
		size_t n = strlen(s);

		if (below(16) == 0) {
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
			buf[below(len)] = '\0';
		break;
	default: { /* a piece repeated elsewhere */
		size_t from = len ? (size_t)below(len) : 0;
		size_t n = (size_t)below(len - from + 1);

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
static void check_generated(diff_t *d, const gline_t *g, const char *line,
			    size_t len, const char *what)
{
	mt_event_t ev;
	mt_parse_result_t r = diff_line(d, line, len, what, &ev);
	const char *field;

	if (!g->fast_expected)
		return;
	mt_quiet(r != MT_PARSE_DECLINED,
		 "%s: the fast path declined a preload-style line: %s",
		 what, show(line, len));
	mt_quiet(r == g->verdict, "%s: verdict %s (%s), want %s on line %s",
		 what, rname(r), d->fast.why ? d->fast.why : "-",
		 rname(g->verdict), show(line, len));
	if (r != MT_PARSE_OK)
		return;
	field = event_diff(&ev, &g->ev);
	mt_quiet(!field, "%s: event differs from what was written in %s on line %s",
		 what, field, show(line, len));
}

START_TEST(generated_lines_take_the_fast_path)
{
	static gline_t g;
	static char line[MAX_FIELDS * 1700];
	diff_t d;
	char what[64];
	uint64_t expected = 0;

	rng_state = 0x6d656d7472616365ull;
	diff_init(&d);
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
	diff_release(&d);
}
END_TEST

START_TEST(mutated_lines_agree)
{
	static gline_t g, m;
	static char line[MAX_FIELDS * 1700 + 4096];
	diff_t d;
	char what[64];

	rng_state = 0x6d75746174696f6eull;
	diff_init(&d);
	for (int i = 0; i < GEN_LINES; i++) {
		gen_event(&g, (mt_kind_t)(i % MT_KIND_COUNT));
		for (int j = 0; j < MUTANTS_PER_LINE; j++) {
			size_t len;
			int nf = (int)below(3), nb = (int)below(3);
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
			diff_line(&d, line, len, what, &ev);
		}
	}
	/* The mutants reach every verdict, and both paths judge many. */
	for (int r = MT_PARSE_OK; r <= MT_PARSE_MALFORMED; r++)
		mt_quiet(d.verdicts[r] > 200, "only %" PRIu64 " mutants are %s",
			 d.verdicts[r], rname((mt_parse_result_t)r));
	mt_quiet_uint_gt(d.accepted, d.lines / 10);
	mt_quiet_uint_gt(d.declined, d.lines / 10);
	diff_release(&d);
}
END_TEST

/* Hand-written lines: the spec's examples, and the lines around the fast
 * path's edges. */
static const char *const corpus_fast[] = {
	/* The spec's smallest complete trace. */
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

START_TEST(corpus_lines_agree)
{
	diff_t d;
	mt_event_t ev;
	char what[64];

	diff_init(&d);
	for (size_t i = 0; i < sizeof(corpus_fast) / sizeof(corpus_fast[0]); i++) {
		const char *line = corpus_fast[i];

		snprintf(what, sizeof(what), "corpus line %zu", i);
		mt_quiet(diff_line(&d, line, strlen(line), what, &ev) !=
				      MT_PARSE_DECLINED,
			      "the fast path declined a preload-style line: %s",
			      line);
	}
	for (size_t i = 0; i < sizeof(corpus_declined) / sizeof(corpus_declined[0]); i++) {
		const char *line = corpus_declined[i];

		snprintf(what, sizeof(what), "declined corpus line %zu", i);
		mt_quiet(diff_line(&d, line, strlen(line), what, &ev) ==
				      MT_PARSE_DECLINED,
			      "the fast path judged a line json-c must: %s", line);
	}
	for (size_t i = 0; i < sizeof(corpus_either) / sizeof(corpus_either[0]); i++) {
		snprintf(what, sizeof(what), "corpus line %zu of either path", i);
		diff_cstr(&d, corpus_either[i], what);
	}
	/* Every prefix of every corpus line: truncation anywhere. */
	for (size_t i = 0; i < sizeof(corpus_fast) / sizeof(corpus_fast[0]); i++) {
		for (size_t n = 0; n < strlen(corpus_fast[i]); n++) {
			snprintf(what, sizeof(what), "prefix %zu of corpus line %zu",
				 n, i);
			diff_line(&d, corpus_fast[i], n, what, &ev);
		}
	}
	diff_release(&d);
}
END_TEST

/* Every line of a file, as the analyzer reads it. */
static uint64_t diff_file(diff_t *d, const char *path)
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
		diff_line(d, line.data, line.len, what, &ev);
		n++;
	}
	mt_quiet_int_eq(got, 0);
	mt_reader_release(&r);
	return n;
}

START_TEST(fixture_lines_agree)
{
	char *demo = mt_test_fixture("demo.jsonl");
	char *dir = mt_test_fixture("traces");
	DIR *dh;
	diff_t d;
	uint64_t n;

	diff_init(&d);
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
	diff_release(&d);
	free(dir);
	free(demo);
}
END_TEST

/* ---- the validator's verdicts ---- */

typedef struct {
	mt_parser_t p;
	mt_event_t ev;
} judge_t;

/* Judge line through the analyzer's parser, and hold the two paths to
 * each other on it. */
static mt_parse_result_t judge(judge_t *j, const char *line)
{
	diff_t d;

	diff_init(&d);
	diff_cstr(&d, line, "verdict");
	diff_release(&d);
	memset(&j->ev, 0, sizeof(j->ev));
	return mt_parser_parse(&j->p, line, strlen(line), &j->ev);
}

static void expect(judge_t *j, const char *line, mt_parse_result_t want,
		   const char *field)
{
	mt_parse_result_t got = judge(j, line);

	mt_quiet(got == want, "%s, want %s (%s) for %s", rname(got),
		 rname(want), j->p.why ? j->p.why : "-", line);
	if (want != MT_PARSE_OK)
		mt_quiet(j->p.why != NULL, "no reason given for %s", line);
	if (field)
		mt_quiet(same_text(j->p.why_field, field),
			 "the reason names field %s, want %s, for %s",
			 j->p.why_field ? j->p.why_field : "none", field,
			 line);
}

static void judge_init(judge_t *j)
{
	mt_quiet_int_eq(mt_parser_init(&j->p), MT_OK);
}

static void judge_release(judge_t *j)
{
	mt_parser_release(&j->p);
}

START_TEST(verdict_not_event_for_non_objects)
{
	static const char *const lines[] = {
		"", " ", "[]", "[{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}]",
		"1", "\"v\"", "null", "true", "{", "}", "{\"v\":1,\"seq\":1,",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"", "not json",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"} x",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}{}",
		"{'v':1,'seq':1,'kind':'trace.start'}",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",}",
		"{v:1,seq:1,kind:\"trace.start\"}",
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"} // comment",
		"{\"v\":1,\"seq\":1,\"kind\":\"caf\xc3\"}",
		"{\"v\":1,\"seq\":1,\"kind\":\"\xff\"}",
		"{\"v\":1,\"seq\":1,\"kind\":\"\xf8\x88\x80\x80\x80\"}",
	};
	judge_t j;

	judge_init(&j);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		expect(&j, lines[i], MT_PARSE_NOT_EVENT, NULL);
	/* A NUL byte anywhere. */
	{
		static const char nul[] = "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\0";
		mt_event_t ev;

		mt_quiet_int_eq(mt_parser_parse(&j.p, nul, sizeof(nul) - 1, &ev),
				MT_PARSE_NOT_EVENT);
		mt_quiet_int_eq(mt_parser_parse(&j.p, nul + 1, sizeof(nul) - 2, &ev),
				MT_PARSE_NOT_EVENT);
	}
	judge_release(&j);
}
END_TEST

/* json-c's own UTF-8 check lets overlong forms and surrogates through;
 * the reader does not, whichever key or value holds them, so that no row
 * ever copies them out.  A valid sequence of each length is an event. */
START_TEST(verdict_not_event_for_utf8_json_c_lets_through)
{
	static const char *const bad[] = {
		"\xc0\x80", "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xed\xa0\x80",
		"\xed\xbf\xbf", "\xf4\x90\x80\x80",
	};
	judge_t j;

	judge_init(&j);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[256];

		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,"
			 "\"ip\":\"0x10\",\"symbol\":\"f%sg\"}", bad[i]);
		expect(&j, line, MT_PARSE_NOT_EVENT, NULL);
		ck_assert_str_eq(j.p.why, "it is not valid UTF-8");
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,"
			 "\"ip\":\"0x10\",\"x%s\":1}", bad[i]);
		expect(&j, line, MT_PARSE_NOT_EVENT, NULL);
	}
	expect(&j, "{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x10\","
		   "\"symbol\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"}",
	       MT_PARSE_OK, NULL);
	judge_release(&j);
}
END_TEST

START_TEST(verdict_not_event_without_header)
{
	static const char *const lines[] = {
		"{}",
		"{\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":1}",
		"{\"v\":null,\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":\"1\",\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1.0,\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":true,\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":[1],\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":\"1\",\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":1.5,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":null,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":1,\"kind\":null}",
		"{\"v\":1,\"seq\":1,\"kind\":7}",
		"{\"v\":1,\"seq\":1,\"kind\":[\"alloc\"]}",
		"{\"V\":1,\"seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"Seq\":1,\"kind\":\"trace.start\"}",
		"{\"v\":1,\"seq\":1,\"header\":{\"kind\":\"trace.start\"}}",
	};
	judge_t j;

	judge_init(&j);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		expect(&j, lines[i], MT_PARSE_NOT_EVENT, NULL);
	judge_release(&j);
}
END_TEST

START_TEST(verdict_bad_version)
{
	static const struct {
		const char *line;
		int64_t version;
	} lines[] = {
		{ "{\"v\":2,\"seq\":1,\"kind\":\"trace.start\"}", 2 },
		{ "{\"v\":0,\"seq\":1,\"kind\":\"trace.start\"}", 0 },
		{ "{\"v\":-1,\"seq\":1,\"kind\":\"trace.start\"}", -1 },
		{ "{\"v\":2,\"seq\":1,\"kind\":\"bogus\"}", 2 },
		{ "{\"v\":2,\"seq\":-5,\"kind\":\"alloc\"}", 2 },
		{ "{\"v\":9223372036854775807,\"seq\":1,\"kind\":\"trace.start\"}",
		  INT64_MAX },
		{ "{\"v\":-9223372036854775808,\"seq\":1,\"kind\":\"trace.start\"}",
		  INT64_MIN },
		{ "{\"kind\":\"trace.start\",\"seq\":1,\"v\":2}", 2 },
		{ "{\"v\": 2, \"seq\": 1, \"kind\": \"trace.start\"}", 2 },
	};
	judge_t j;

	judge_init(&j);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		expect(&j, lines[i].line, MT_PARSE_BAD_VERSION, NULL);
		mt_quiet(j.p.version == lines[i].version,
			 "version %" PRId64 ", want %" PRId64 " for %s",
			 j.p.version, lines[i].version, lines[i].line);
	}
	judge_release(&j);
}
END_TEST

/* A full valid line of each kind with its required fields (spec section
 * 2), to take fields out of or spoil. */
typedef struct {
	const char *kind;
	const char *fields[6][2]; /* required: name and a valid value */
	const char *optional;     /* optional fields, all present */
} kind_case_t;

static const kind_case_t kind_cases[] = {
	{ "allocator", { { "allocator_id", "3" } }, "\"name\":\"jemalloc\"" },
	{ "frame", { { "frame_id", "1" }, { "ip", "\"0x401000\"" } },
	  "\"symbol\":\"main\",\"offset\":\"0x10\",\"module\":\"/bin/x\",\"module_offset\":16" },
	{ "stack", { { "stack_id", "1" }, { "frames", "[1,2]" } }, NULL },
	{ "alloc", { { "allocator_id", "0" }, { "ptr", "\"0x1000\"" },
		     { "size", "16" }, { "fn", "\"malloc\"" } },
	  "\"align\":16,\"stack\":1,\"tid\":7,\"t\":100" },
	{ "free", { { "allocator_id", "0" }, { "ptr", "\"0x1000\"" } },
	  "\"fn\":\"free\",\"tid\":7,\"t\":100" },
	{ "resize", { { "allocator_id", "0" }, { "ptr", "\"0x1000\"" },
		      { "size", "32" } },
	  "\"fn\":\"realloc\",\"stack\":1,\"tid\":7,\"t\":100" },
	{ "remap", { { "allocator_id", "0" }, { "ptr", "\"0x1000\"" },
		     { "new_ptr", "\"0x2000\"" }, { "size", "64" } },
	  "\"fn\":\"realloc\",\"stack\":1,\"tid\":7,\"t\":100" },
	{ "alloc.fail", { { "allocator_id", "0" }, { "size", "1099511627776" },
			  { "fn", "\"calloc\"" } },
	  "\"stack\":1,\"tid\":7,\"t\":100" },
	{ "trace.start", { { NULL, NULL } },
	  "\"pid\":1,\"exe\":\"/bin/x\",\"argv\":[\"x\"],\"stack_depth\":8" },
	{ "trace.stop", { { NULL, NULL } },
	  "\"reason\":\"signal\",\"dropped\":3,\"t\":100" },
};

/* The line of case c with required field skip left out (-1: none), field
 * spoil's value replaced by value, and the optional fields when asked. */
static void kind_line(char *buf, size_t cap, const kind_case_t *c, int skip,
		      int spoil, const char *value, int with_optional)
{
	size_t n = (size_t)snprintf(buf, cap, "{\"v\":1,\"seq\":5,\"kind\":\"%s\"",
				    c->kind);

	for (int i = 0; i < 6 && c->fields[i][0]; i++) {
		if (i == skip)
			continue;
		n += (size_t)snprintf(buf + n, cap - n, ",\"%s\":%s",
				      c->fields[i][0],
				      i == spoil ? value : c->fields[i][1]);
	}
	if (with_optional && c->optional)
		n += (size_t)snprintf(buf + n, cap - n, ",%s", c->optional);
	snprintf(buf + n, cap - n, "}");
}

START_TEST(verdict_ok_for_every_kind)
{
	judge_t j;
	char line[1024];

	judge_init(&j);
	for (size_t i = 0; i < sizeof(kind_cases) / sizeof(kind_cases[0]); i++) {
		const kind_case_t *c = &kind_cases[i];

		kind_line(line, sizeof(line), c, -1, -1, NULL, 0);
		expect(&j, line, MT_PARSE_OK, NULL);
		ck_assert_str_eq(mt_event_kind_name(j.ev.kind), c->kind);
		mt_quiet_uint_eq(j.ev.seq, 5);
		kind_line(line, sizeof(line), c, -1, -1, NULL, 1);
		expect(&j, line, MT_PARSE_OK, NULL);
	}
	/* The values land where they belong. */
	expect(&j, "{\"v\":1,\"seq\":9,\"kind\":\"remap\",\"allocator_id\":2,"
		   "\"ptr\":\"0xAbC\",\"new_ptr\":\"0xffffffffffffffff\",\"size\":64,"
		   "\"fn\":\"realloc\",\"stack\":4,\"tid\":7,\"t\":100}",
	       MT_PARSE_OK, NULL);
	mt_quiet_int_eq(j.ev.kind, MT_KIND_REMAP);
	mt_quiet_uint_eq(j.ev.allocator_id, 2);
	mt_quiet_uint_eq(j.ev.ptr, 0xabc);
	mt_quiet_uint_eq(j.ev.new_ptr, UINT64_MAX);
	mt_quiet_uint_eq(j.ev.size, 64);
	mt_quiet_int_eq(j.ev.fn, MT_FN_REALLOC);
	mt_quiet_uint_eq(j.ev.stack, 4);
	mt_quiet_uint_eq(j.ev.tid, 7);
	mt_quiet_uint_eq(j.ev.t, 100);
	mt_quiet_uint_eq(j.ev.has, MT_HAS_FN | MT_HAS_STACK | MT_HAS_TID | MT_HAS_T);
	expect(&j, "{\"v\":1,\"seq\":9,\"kind\":\"frame\",\"frame_id\":3,"
		   "\"ip\":\"0x10\",\"offset\":\"0x4\",\"module_offset\":4096}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.frame_id, 3);
	mt_quiet_uint_eq(j.ev.ip, 0x10);
	mt_quiet_uint_eq(j.ev.offset, 4);
	mt_quiet_uint_eq(j.ev.module_offset, 4096);
	mt_quiet_uint_eq(j.ev.has, MT_HAS_OFFSET | MT_HAS_MODULE_OFFSET);
	/* json-c unescapes; the event holds the bytes. */
	expect(&j, "{\"v\":1,\"seq\":9,\"kind\":\"allocator\",\"allocator_id\":1,"
		   "\"name\":\"a\\\"b\\u00e9\"}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.name_len, 5);
	mt_quiet_mem_eq(j.ev.name, "a\"b\xc3\xa9", 5);
	judge_release(&j);
}
END_TEST

START_TEST(verdict_malformed_without_required_field)
{
	judge_t j;
	char line[1024];
	int n = 0;

	judge_init(&j);
	for (size_t i = 0; i < sizeof(kind_cases) / sizeof(kind_cases[0]); i++) {
		const kind_case_t *c = &kind_cases[i];

		for (int f = 0; f < 6 && c->fields[f][0]; f++) {
			/* Left out, or null (which counts as absent). */
			kind_line(line, sizeof(line), c, f, -1, NULL, 1);
			expect(&j, line, MT_PARSE_MALFORMED, c->fields[f][0]);
			kind_line(line, sizeof(line), c, -1, f, "null", 1);
			expect(&j, line, MT_PARSE_MALFORMED, c->fields[f][0]);
			n++;
		}
	}
	mt_quiet_int_eq(n, 21);
	judge_release(&j);
}
END_TEST

START_TEST(verdict_malformed_for_wrong_types)
{
	/* Values of the wrong type for an integer, a pointer, a string and
	 * the frames field. */
	static const char *const not_uint[] = {
		"\"1\"", "1.0", "1e0", "true", "[1]", "{}", "-1", "\"0x1\"",
		"-9223372036854775808",
	};
	static const char *const not_ptr[] = {
		"4096", "\"4096\"", "\"0x\"", "\"0X10\"", "\"x10\"", "\"0x1g\"",
		"\"0x00000000000000001\"", "\" 0x1\"", "\"0x1 \"", "true", "[]",
		"\"-0x1\"", "\"0x\\u0000\"",
	};
	static const char *const not_str[] = {
		"1", "true", "[\"malloc\"]", "{}", "\"\\u0000malloc\"",
	};
	static const char *const not_frames[] = {
		"1", "\"1,2\"", "[1,-2]", "[1,2.0]", "[\"1\"]", "[null]", "[[1]]",
		"{}", "[1,{}]", "true",
	};
	judge_t j;
	char line[1024];

	judge_init(&j);
	for (size_t i = 0; i < sizeof(kind_cases) / sizeof(kind_cases[0]); i++) {
		const kind_case_t *c = &kind_cases[i];

		for (int f = 0; f < 6 && c->fields[f][0]; f++) {
			const char *name = c->fields[f][0];
			const char *const *bad;
			size_t nbad;

			if (!strcmp(name, "ptr") || !strcmp(name, "ip") ||
			    !strcmp(name, "new_ptr")) {
				bad = not_ptr;
				nbad = sizeof(not_ptr) / sizeof(not_ptr[0]);
			} else if (!strcmp(name, "fn")) {
				bad = not_str;
				nbad = sizeof(not_str) / sizeof(not_str[0]);
			} else if (!strcmp(name, "frames")) {
				bad = not_frames;
				nbad = sizeof(not_frames) / sizeof(not_frames[0]);
			} else {
				bad = not_uint;
				nbad = sizeof(not_uint) / sizeof(not_uint[0]);
			}
			for (size_t b = 0; b < nbad; b++) {
				kind_line(line, sizeof(line), c, -1, f, bad[b], 1);
				expect(&j, line, MT_PARSE_MALFORMED,
				       strcmp(name, "fn") ? name : NULL);
			}
		}
	}
	/* Optional fields of the wrong type. */
	{
		static const char *const lines[] = {
			"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":5}",
			"{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"a\\u0000\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"symbol\":true}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"offset\":\"12\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"offset\":-1}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"module\":[]}",
			"{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"module_offset\":1.5}",
			"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"align\":\"16\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"stack\":-1}",
			"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"tid\":\"7\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"t\":1.5}",
			"{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x1\",\"fn\":1}",
			"{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"reason\":0}",
			"{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"dropped\":-1}",
			"{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"dropped\":\"0\"}",
			"{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"t\":false}",
		};

		for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
			expect(&j, lines[i], MT_PARSE_MALFORMED, NULL);
	}
	judge_release(&j);
}
END_TEST

START_TEST(verdict_malformed_for_unknown_kind)
{
	static const char *const kinds[] = {
		"", "bogus", "Alloc", "ALLOC", "alloc ", "alloc.ok", "trace",
		"trace.begin", "allocators", "\\u0000", "caf\\u00e9",
	};
	judge_t j;
	char line[256];

	judge_init(&j);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"%s\",\"allocator_id\":0}",
			 kinds[i]);
		expect(&j, line, MT_PARSE_MALFORMED, NULL);
	}
	judge_release(&j);
}
END_TEST

START_TEST(verdict_fn_must_allocate_in_alloc)
{
	static const char *const fns[] = { "free", "mmap", "", "Malloc", "malloc " };
	judge_t j;
	char line[256];

	judge_init(&j);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"%s\"}", fns[i]);
		expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc.fail\",\"allocator_id\":0,"
			 "\"size\":1,\"fn\":\"%s\"}", fns[i]);
		expect(&j, line, MT_PARSE_MALFORMED, NULL);
	}
	/* Every allocating function is fine. */
	for (int f = 0; f < MT_FN_FREE; f++) {
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"%s\"}",
			 mt_event_fn_name((mt_fn_t)f));
		expect(&j, line, MT_PARSE_OK, NULL);
		mt_quiet_int_eq(j.ev.fn, f);
	}
	/* A free, resize or remap may name any function; it is only shown. */
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"fn\":\"munmap\"}", MT_PARSE_OK, NULL);
	mt_quiet_int_eq(j.ev.fn, MT_FN_UNKNOWN);
	ck_assert(j.ev.has & MT_HAS_FN);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"resize\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":2,\"fn\":\"realloc\"}", MT_PARSE_OK, NULL);
	mt_quiet_int_eq(j.ev.fn, MT_FN_REALLOC);
	judge_release(&j);
}
END_TEST

START_TEST(verdict_malformed_for_zero_ids)
{
	judge_t j;

	judge_init(&j);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":0,\"ip\":\"0x1\"}",
	       MT_PARSE_MALFORMED, NULL);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":0,\"frames\":[1]}",
	       MT_PARSE_MALFORMED, NULL);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1,0]}",
	       MT_PARSE_MALFORMED, NULL);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"stack\":0}",
	       MT_PARSE_MALFORMED, NULL);
	/* Allocator 0 is libc's, and a pointer or a size may be 0. */
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x0\",\"size\":0,\"fn\":\"malloc\"}",
	       MT_PARSE_OK, NULL);
	/* A stack without frames. */
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[]}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.nframes, 0);
	judge_release(&j);
}
END_TEST

START_TEST(verdict_malformed_for_negative_numbers)
{
	judge_t j;

	judge_init(&j);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":-1,\"fn\":\"malloc\"}",
	       MT_PARSE_MALFORMED, "size");
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":-9223372036854775808,\"fn\":\"malloc\"}",
	       MT_PARSE_MALFORMED, "size");
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":-3}",
	       MT_PARSE_MALFORMED, "allocator_id");
	expect(&j, "{\"v\":1,\"seq\":-1,\"kind\":\"trace.start\"}",
	       MT_PARSE_MALFORMED, NULL);
	/* -0 is 0. */
	expect(&j, "{\"v\":1,\"seq\":-0,\"kind\":\"alloc\",\"allocator_id\":-0,"
		   "\"ptr\":\"0x1\",\"size\":-0,\"fn\":\"malloc\"}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.size, 0);
	judge_release(&j);
}
END_TEST

START_TEST(verdict_malformed_for_numbers_out_of_range)
{
	static const char *const big[] = {
		"18446744073709551616", "99999999999999999999",
		"100000000000000000000000", "-9223372036854775809",
		"-18446744073709551616",
	};
	judge_t j;
	char line[512];

	judge_init(&j);
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		/* In a required field, an optional one and the frames, as the
		 * line's last number or with more after it. */
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"fn\":\"malloc\",\"size\":%s}", big[i]);
		expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"size\":%s,\"fn\":\"malloc\",\"tid\":3}",
			 big[i]);
		expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
			 "\"ptr\":\"0x1\",\"size\":8,\"fn\":\"malloc\",\"tid\":%s,\"t\":5}",
			 big[i]);
		expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":%s,\"kind\":\"trace.stop\",\"dropped\":0}",
			 big[i]);
		expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,"
			 "\"frames\":[%s,2]}", big[i]);
		expect(&j, line, MT_PARSE_MALFORMED, NULL);
		snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,"
			 "\"ip\":\"0x1\",\"offset\":%s,\"module_offset\":0}", big[i]);
		expect(&j, line, MT_PARSE_MALFORMED, NULL);
	}
	/* The largest numbers that fit are numbers. */
	expect(&j, "{\"v\":1,\"seq\":18446744073709551615,\"kind\":\"alloc\","
		   "\"allocator_id\":18446744073709551615,\"ptr\":\"0x1\","
		   "\"size\":18446744073709551615,\"fn\":\"malloc\",\"tid\":1}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.size, UINT64_MAX);
	mt_quiet_uint_eq(j.ev.seq, UINT64_MAX);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":-9223372036854775808,\"y\":1}",
	       MT_PARSE_OK, NULL);
	/* Digits inside a string are no number. */
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"allocator\",\"allocator_id\":1,"
		   "\"name\":\"99999999999999999999\\\"99999999999999999999\",\"x\":1}",
	       MT_PARSE_OK, NULL);
	judge_release(&j);
}
END_TEST

START_TEST(verdict_null_optional_is_absent)
{
	judge_t j;

	judge_init(&j);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"align\":null,"
		   "\"stack\":null,\"tid\":null,\"t\":null}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has, MT_HAS_FN);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\","
		   "\"symbol\":null,\"offset\":null,\"module\":null,\"module_offset\":null}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has, 0);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"trace.stop\",\"reason\":null,"
		   "\"dropped\":null,\"t\":null}", MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has, 0);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"fn\":null}", MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has, 0);
	judge_release(&j);
}
END_TEST

START_TEST(verdict_unknown_fields_ignored)
{
	judge_t j;

	judge_init(&j);
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"alloc\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":1,\"fn\":\"malloc\",\"x\":{\"size\":-1},"
		   "\"y\":[1,[2,{}]],\"z\":1.5e3,\"w\":\"\\u00e9\",\"Size\":\"big\"}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.size, 1);
	/* Fields of other kinds are unknown to this one. */
	expect(&j, "{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,"
		   "\"ptr\":\"0x1\",\"size\":\"x\",\"stack\":0,\"frames\":7}",
	       MT_PARSE_OK, NULL);
	mt_quiet_uint_eq(j.ev.has & MT_HAS_STACK, 0);
	judge_release(&j);
}
END_TEST

START_TEST(parser_release_frees_everything)
{
	mt_parser_t p;
	mt_event_t ev;
	int64_t before = mt_mem_outstanding();
	static const char line[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1, 2, 3]}";
	static const char compact[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1]}";

	mt_quiet_int_eq(mt_parser_init(&p), MT_OK);
	mt_quiet_int_eq(mt_parser_parse(&p, line, strlen(line), &ev), MT_PARSE_OK);
	mt_quiet_uint_eq(ev.nframes, 3);
	mt_quiet_uint_eq(ev.frames[2], 3);
	mt_parser_release(&p);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	/* No room for the frames: out of memory, never malformed. */
	mt_quiet_int_eq(mt_parser_init(&p), MT_OK);
	mt_mem_fail_at(1, 1);
	mt_quiet_int_eq(mt_jsonc_parse(&p, line, strlen(line), &ev),
			MT_PARSE_NOMEM);
	mt_quiet_int_eq(mt_fast_parse(&p, compact, strlen(compact), &ev),
			MT_PARSE_NOMEM);
	mt_mem_fail_at(0, 0);
	mt_parser_release(&p);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* ---- the exact-layout matcher ---- */

#define EXACT_LINES 20000

/* A number of 1 to 19 digits, the count drawn first: small and large ones
 * alike, as the matcher's digit loop sees them. */
static uint64_t gen_digits(void)
{
	int n = 1 + (int)below(19);
	uint64_t v = 1 + below(9);

	for (int i = 1; i < n; i++)
		v = v * 10 + below(10);
	return below(8) ? v : below(3); /* 0, 1 and 2 often */
}

static uint64_t gen_hex(void)
{
	int bits = 4 * (1 + (int)below(16));
	uint64_t v = rng();

	return bits == 64 ? v : v & ((1ull << bits) - 1);
}

/*
 * A block event exactly as preload/mt_trace.c writes it, optional keys
 * drawn at random, and in *want the event the validator makes of it (the
 * fields it does not read stay 0).  Returns the length.
 */
static size_t preload_line(char *buf, size_t cap, mt_kind_t kind,
			   mt_event_t *want)
{
	static const mt_fn_t allocating[] = {
		MT_FN_MALLOC, MT_FN_CALLOC, MT_FN_REALLOC, MT_FN_REALLOCARRAY,
		MT_FN_POSIX_MEMALIGN, MT_FN_ALIGNED_ALLOC, MT_FN_MEMALIGN,
		MT_FN_VALLOC, MT_FN_PVALLOC,
	};
	int n, allocs = kind == MT_KIND_ALLOC || kind == MT_KIND_ALLOC_FAIL;
	uint64_t v;
	mt_fn_t fn;

	memset(want, 0, sizeof(*want));
	want->kind = kind;
	want->seq = gen_digits();
	want->allocator_id = below(4) ? 0 : gen_digits();
	n = snprintf(buf, cap, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"%s\","
		     "\"allocator_id\":%" PRIu64, want->seq,
		     mt_event_kind_name(kind), want->allocator_id);
#define OUT(...) (n += snprintf(buf + n, cap - (size_t)n, __VA_ARGS__))
	if (kind != MT_KIND_ALLOC_FAIL) {
		v = gen_hex();
		OUT(",\"ptr\":\"0x%" PRIx64 "\"", v);
		want->ptr = v;
	}
	if (kind == MT_KIND_REMAP) {
		v = gen_hex();
		OUT(",\"new_ptr\":\"0x%" PRIx64 "\"", v);
		want->new_ptr = v;
	}
	if (kind != MT_KIND_FREE) {
		v = gen_digits();
		OUT(",\"size\":%" PRIu64, v);
		want->size = v;
	}
	if (allocs)
		fn = allocating[below(sizeof(allocating) / sizeof(allocating[0]))];
	else
		fn = kind == MT_KIND_FREE && below(2) ? MT_FN_FREE :
			below(2) ? MT_FN_REALLOC : MT_FN_REALLOCARRAY;
	/* fn may be absent but where it is required. */
	if (allocs || below(8)) {
		OUT(",\"fn\":\"%s\"", mt_event_fn_name(fn));
		want->fn = fn;
		want->has |= MT_HAS_FN;
	}
	if (allocs && below(4) == 0) {
		v = gen_digits();
		OUT(",\"align\":%" PRIu64, v);
		want->align = v;
		want->has |= MT_HAS_ALIGN;
	}
	if (kind != MT_KIND_FREE && below(8)) {
		v = 1 + below(5000);
		OUT(",\"stack\":%" PRIu64, v);
		want->stack = v;
		want->has |= MT_HAS_STACK;
	}
	if (allocs && below(16) == 0)
		OUT(",\"fail_at\":%" PRIu64, gen_digits());
	if (below(16)) {
		v = gen_digits();
		OUT(",\"tid\":%" PRIu64, v);
		want->tid = v;
		want->has |= MT_HAS_TID;
	}
	if (below(16)) {
		v = gen_digits();
		OUT(",\"t\":%" PRIu64, v);
		want->t = v;
		want->has |= MT_HAS_T;
	}
	OUT("}");
#undef OUT
	mt_quiet(n < (int)cap, "a line of %d bytes", n);
	return (size_t)n;
}

static const mt_kind_t block_kinds[] = {
	MT_KIND_ALLOC, MT_KIND_FREE, MT_KIND_RESIZE, MT_KIND_REMAP,
	MT_KIND_ALLOC_FAIL,
};
#define NBLOCK_KINDS (sizeof(block_kinds) / sizeof(block_kinds[0]))

START_TEST(exact_matcher_takes_preload_lines)
{
	static char line[1024];
	diff_t d;
	char what[64];

	rng_state = 0x6578616374ull;
	diff_init(&d);
	for (int i = 0; i < EXACT_LINES; i++) {
		mt_event_t want, ev;
		size_t len = preload_line(line, sizeof(line),
					  block_kinds[i % NBLOCK_KINDS], &want);
		const char *field;

		snprintf(what, sizeof(what), "preload line %d", i);
		mt_quiet(mt_exact_parse(&d.exact, line, len, &ev) ==
				      MT_PARSE_OK,
			      "%s: the exact matcher declined %s", what,
			      show(line, len));
		field = event_diff(&ev, &want);
		mt_quiet(!field, "%s: event differs from what was written in %s on line %s",
			 what, field, show(line, len));
		diff_line(&d, line, len, what, &ev);
	}
	mt_quiet_uint_eq(d.exact_accepted, EXACT_LINES);
	diff_release(&d);
}
END_TEST

/* Lines the preload and mt-gen-trace write, and a few around the matcher's
 * edges: 16-digit pointers, 19-digit numbers, every key present. */
static const char *const exact_typical[] = {
	"{\"v\":1,\"seq\":101,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x7f32f0002400\",\"size\":45,\"fn\":\"malloc\",\"stack\":3,\"tid\":2228,\"t\":5543510}",
	"{\"v\":1,\"seq\":7098,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x7f3a5c006620\",\"size\":25391,\"fn\":\"posix_memalign\",\"align\":64,\"stack\":117,\"tid\":4242,\"t\":21772}",
	"{\"v\":1,\"seq\":35,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x7ffb3c001080\",\"fn\":\"free\",\"tid\":6020,\"t\":5193669}",
	"{\"v\":1,\"seq\":36,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x7ffb3c001080\",\"tid\":6020,\"t\":5193669}",
	"{\"v\":1,\"seq\":42,\"kind\":\"resize\",\"allocator_id\":0,\"ptr\":\"0x7ffb3c001560\",\"size\":151,\"fn\":\"realloc\",\"stack\":3,\"tid\":6020,\"t\":5199828}",
	"{\"v\":1,\"seq\":62,\"kind\":\"remap\",\"allocator_id\":0,\"ptr\":\"0x7ffb3c000bd0\",\"new_ptr\":\"0x7ffb3c001dd0\",\"size\":69,\"fn\":\"realloc\",\"stack\":3,\"tid\":6020,\"t\":5206628}",
	"{\"v\":1,\"seq\":7009,\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":1099511627776,\"fn\":\"malloc\",\"stack\":392,\"tid\":4244,\"t\":1226}",
	"{\"v\":1,\"seq\":9,\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":8,\"fn\":\"calloc\",\"stack\":1,\"fail_at\":3,\"tid\":1,\"t\":2}",
	"{\"v\":1,\"seq\":1234567890123456789,\"kind\":\"remap\",\"allocator_id\":9999999999999999999,\"ptr\":\"0xffffffffffffffff\",\"new_ptr\":\"0x0\",\"size\":9999999999999999999,\"fn\":\"reallocarray\",\"stack\":1000000000000000000,\"tid\":1,\"t\":0}",
	"{\"v\":1,\"seq\":1,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x1\"}",
};

/* Judge every single-byte change of a line: each byte replaced by every
 * byte value, deleted, or preceded by another; and every prefix. */
static void mutate_each_byte(diff_t *d, const char *orig, const char *what0)
{
	static const char inserts[] = " \t\n\r0119aAfFx\"\\,:{}[]-.e";
	size_t len = strlen(orig);
	char *buf = malloc(len + 2);
	char what[160];
	mt_event_t ev;

	mt_quiet_ptr_nonnull(buf);
	for (size_t i = 0; i < len; i++) {
		for (int c = 0; c < 256; c++) {
			if ((unsigned char)orig[i] == c)
				continue;
			memcpy(buf, orig, len);
			buf[i] = (char)c;
			snprintf(what, sizeof(what), "%s, byte %zu set to %d", what0, i, c);
			diff_line(d, buf, len, what, &ev);
		}
		memcpy(buf, orig, i);
		memcpy(buf + i, orig + i + 1, len - i - 1);
		snprintf(what, sizeof(what), "%s, byte %zu deleted", what0, i);
		diff_line(d, buf, len - 1, what, &ev);
		for (size_t k = 0; k < sizeof(inserts) - 1; k++) {
			memcpy(buf, orig, i);
			buf[i] = inserts[k];
			memcpy(buf + i + 1, orig + i, len - i);
			snprintf(what, sizeof(what), "%s, '%c' inserted at %zu",
				 what0, inserts[k], i);
			diff_line(d, buf, len + 1, what, &ev);
		}
		snprintf(what, sizeof(what), "%s, its first %zu bytes", what0, i);
		diff_line(d, orig, i, what, &ev);
	}
	free(buf);
}

START_TEST(exact_matcher_single_byte_mutations_agree)
{
	static char line[1024];
	diff_t d;
	char what[64];
	uint64_t before;

	rng_state = 0x6d7574616e7473ull;
	diff_init(&d);
	for (size_t i = 0; i < sizeof(exact_typical) / sizeof(exact_typical[0]); i++) {
		mt_event_t ev;

		before = d.exact_accepted;
		snprintf(what, sizeof(what), "typical line %zu", i);
		diff_line(&d, exact_typical[i], strlen(exact_typical[i]), what, &ev);
		mt_quiet(d.exact_accepted == before + 1,
			 "the exact matcher declined %s", exact_typical[i]);
		mutate_each_byte(&d, exact_typical[i], what);
	}
	/* Two generated lines of each kind. */
	for (int i = 0; i < 2 * (int)NBLOCK_KINDS; i++) {
		mt_event_t want;

		line[preload_line(line, sizeof(line), block_kinds[i % NBLOCK_KINDS],
				  &want)] = '\0';
		snprintf(what, sizeof(what), "generated line %d", i);
		mutate_each_byte(&d, line, what);
	}
	/* The mutants are mostly declined, but some still match (a digit for
	 * a digit) and must agree. */
	mt_quiet_uint_gt(d.exact_accepted, 1000);
	mt_quiet_uint_gt(d.lines - d.exact_accepted, d.lines / 2);
	diff_release(&d);
}
END_TEST

Suite *mt_suite_parse(void)
{
	Suite *s = suite_create("parse");
	TCase *tc;

	tc = tcase_create("differential");
	tcase_set_timeout(tc, 180); /* a few seconds; minutes under ASan */
	tcase_add_test(tc, corpus_lines_agree);
	tcase_add_test(tc, fixture_lines_agree);
	tcase_add_test(tc, generated_lines_take_the_fast_path);
	tcase_add_test(tc, mutated_lines_agree);
	tcase_add_test(tc, exact_matcher_takes_preload_lines);
	tcase_add_test(tc, exact_matcher_single_byte_mutations_agree);
	suite_add_tcase(s, tc);

	tc = tcase_create("verdicts");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, verdict_not_event_for_non_objects);
	tcase_add_test(tc, verdict_not_event_for_utf8_json_c_lets_through);
	tcase_add_test(tc, verdict_not_event_without_header);
	tcase_add_test(tc, verdict_bad_version);
	tcase_add_test(tc, verdict_ok_for_every_kind);
	tcase_add_test(tc, verdict_malformed_without_required_field);
	tcase_add_test(tc, verdict_malformed_for_wrong_types);
	tcase_add_test(tc, verdict_malformed_for_unknown_kind);
	tcase_add_test(tc, verdict_fn_must_allocate_in_alloc);
	tcase_add_test(tc, verdict_malformed_for_zero_ids);
	tcase_add_test(tc, verdict_malformed_for_negative_numbers);
	tcase_add_test(tc, verdict_malformed_for_numbers_out_of_range);
	tcase_add_test(tc, verdict_null_optional_is_absent);
	tcase_add_test(tc, verdict_unknown_fields_ignored);
	tcase_add_test(tc, parser_release_frees_everything);
	suite_add_tcase(s, tc);
	return s;
}
