/*
 * mt_test_parse: the differential check the parser suites share
 * (mt_test_parse.h): every path held to json-c on one line.
 */
#include "mt_test_parse.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_test.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/parse/mt_block_line.h"
#include "../analyzer/parse/mt_flat.h"
#include "../analyzer/parse/mt_any_json.h"

uint64_t mt_test_below(uint64_t n)
{
	return mt_test_rng() % n;
}

static const char *const result_names[] = {
	"OK", "NOT_EVENT", "BAD_VERSION", "MALFORMED", "DECLINED", "NOMEM",
};

const char *mt_test_rname(mt_parse_result_t r)
{
	return (unsigned)r < sizeof(result_names) / sizeof(result_names[0]) ?
		       result_names[r] : "?";
}

/* The line, printable: non-ASCII and control bytes as \xNN. */
const char *mt_test_show(const char *line, size_t len)
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
const char *mt_test_event_diff(const mt_event_t *a, const mt_event_t *b)
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
	SAME(stack_depth);
	SAME(sample_bytes);
	SAME(pid);
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

int mt_test_same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* ---- the differential check ---- */

void mt_test_diff_init(mt_test_diff_t *d)
{
	memset(d, 0, sizeof(*d));
	mt_quiet_int_eq(mt_parser_init(&d->fast), MT_OK);
	mt_quiet_int_eq(mt_parser_init(&d->json), MT_OK);
	mt_quiet_int_eq(mt_parser_init(&d->both), MT_OK);
	mt_quiet_int_eq(mt_parser_init(&d->exact), MT_OK);
}

void mt_test_diff_release(mt_test_diff_t *d)
{
	mt_parser_release(&d->fast);
	mt_parser_release(&d->json);
	mt_parser_release(&d->both);
	mt_parser_release(&d->exact);
}

/*
 * mt_block_line_parse_window() on the line as the analyzer hands it over, from
 * the reader's buffer: the line, its '\n', then whatever follows (the
 * line again, zeros, digits, or nothing when it fills the span), in a
 * buffer of exactly MT_PARSE_EXACT_SPAN bytes, so that a read past the
 * span is AddressSanitizer's to catch.  It must say what mt_block_line_parse()
 * says of the line, give the same event, and find the line's length.
 */
static void exact_window_agrees(mt_test_diff_t *d, const char *line,
				size_t len, const char *what)
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
		rx = mt_block_line_parse(&d->exact, line, line_len, &ex);
		rw = mt_block_line_parse_window(&d->exact, buf, &ew, &got);
		free(buf);
		mt_quiet(rw == rx,
			 "%s: the window matcher says %s, the exact one %s on line %s",
			 what, mt_test_rname(rw), mt_test_rname(rx), mt_test_show(line, len));
		if (rw != MT_PARSE_OK)
			continue;
		mt_quiet(got == line_len,
			 "%s: the window matcher finds %zu bytes, not %zu, in line %s",
			 what, got, line_len, mt_test_show(line, len));
		field = mt_test_event_diff(&ew, &ex);
		mt_quiet(!field,
			 "%s: the window matcher's event differs in %s on line %s",
			 what, field, mt_test_show(line, len));
		mt_quiet(!d->exact.why && !d->exact.why_field &&
				 !d->exact.used_json_c,
			 "%s: the window matcher left a reason on line %s", what,
			 mt_test_show(line, len));
	}
}

/* Judge one line every way (mt_test_parse.h). */
mt_parse_result_t mt_test_diff_line(mt_test_diff_t *d, const char *line,
				    size_t len, const char *what,
				    mt_event_t *fast_ev)
{
	mt_event_t ej, eb;
	mt_parse_result_t rf, rj, rb;
	const char *field;

	memset(fast_ev, 0, sizeof(*fast_ev));
	memset(&ej, 0, sizeof(ej));
	memset(&eb, 0, sizeof(eb));
	rf = mt_flat_parse(&d->fast, line, len, fast_ev);
	rj = mt_any_json_parse(&d->json, line, len, &ej);
	rb = mt_parser_parse(&d->both, line, len, &eb);
	d->lines++;
	mt_quiet(rf != MT_PARSE_NOMEM && rj != MT_PARSE_NOMEM,
		 "%s: out of memory on line %s", what, mt_test_show(line, len));
	mt_quiet(rj != MT_PARSE_DECLINED, "%s: json-c declined line %s",
		 what, mt_test_show(line, len));
	d->verdicts[rj]++;
	if (rf == MT_PARSE_DECLINED) {
		d->declined++;
	} else {
		d->accepted++;
		mt_quiet(rf == rj,
			 "%s: fast path says %s (%s), json-c says %s (%s) on line %s",
			 what, mt_test_rname(rf), d->fast.why ? d->fast.why : "-",
			 mt_test_rname(rj), d->json.why ? d->json.why : "-",
			 mt_test_show(line, len));
		mt_quiet(mt_test_same_text(d->fast.why, d->json.why) &&
				      mt_test_same_text(d->fast.why_field, d->json.why_field),
			      "%s: fast path gives why '%s' (%s), json-c '%s' (%s) on line %s",
			      what, d->fast.why ? d->fast.why : "-",
			      d->fast.why_field ? d->fast.why_field : "-",
			      d->json.why ? d->json.why : "-",
			      d->json.why_field ? d->json.why_field : "-",
			      mt_test_show(line, len));
		if (rf == MT_PARSE_BAD_VERSION)
			mt_quiet(d->fast.version == d->json.version,
				 "%s: version %" PRId64 " vs %" PRId64
				 " on line %s", what, d->fast.version,
				 d->json.version, mt_test_show(line, len));
		field = mt_test_event_diff(fast_ev, &ej);
		mt_quiet(!field,
			 "%s: the paths' events differ in %s (%s) on line %s",
			 what, field, mt_test_rname(rf), mt_test_show(line, len));
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
		rx = mt_block_line_parse(&d->exact, copy, len, &ex);
		free(copy);
		mt_quiet(rx == MT_PARSE_OK || rx == MT_PARSE_DECLINED,
			 "%s: the exact matcher says %s on line %s", what,
			 mt_test_rname(rx), mt_test_show(line, len));
		if (rx == MT_PARSE_OK) {
			d->exact_accepted++;
			mt_quiet(rj == MT_PARSE_OK,
				 "%s: the exact matcher accepts, json-c says %s (%s) on line %s",
				 what, mt_test_rname(rj), d->json.why ? d->json.why : "-",
				 mt_test_show(line, len));
			mt_quiet(rf == MT_PARSE_OK,
				 "%s: the exact matcher accepts, the fast path says %s on line %s",
				 what, mt_test_rname(rf), mt_test_show(line, len));
			mt_quiet(!d->exact.why && !d->exact.why_field &&
					      !d->exact.used_json_c,
				      "%s: the exact matcher left a reason on line %s",
				      what, mt_test_show(line, len));
			field = mt_test_event_diff(&ex, &ej);
			mt_quiet(!field,
				 "%s: the exact matcher's event differs from json-c's in %s on line %s",
				 what, field, mt_test_show(line, len));
		}
	}
	exact_window_agrees(d, line, len, what);
	/* The parser as the analyzer uses it: one verdict, json-c's. */
	mt_quiet(rb == rj, "%s: mt_parser_parse says %s, json-c %s on line %s",
		 what, mt_test_rname(rb), mt_test_rname(rj), mt_test_show(line, len));
	mt_quiet(rb == MT_PARSE_DECLINED ||
			      mt_test_same_text(d->both.why, d->json.why),
		      "%s: mt_parser_parse gives why '%s', json-c '%s' on line %s",
		      what, d->both.why ? d->both.why : "-",
		      d->json.why ? d->json.why : "-", mt_test_show(line, len));
	field = mt_test_event_diff(&eb, &ej);
	mt_quiet(!field,
		 "%s: mt_parser_parse's event differs from json-c's in %s on line %s",
		 what, field, mt_test_show(line, len));
	mt_quiet_int_eq(d->both.used_json_c, rf == MT_PARSE_DECLINED);
	return rf;
}

void mt_test_diff_cstr(mt_test_diff_t *d, const char *line,
		       const char *what)
{
	mt_event_t ev;

	mt_test_diff_line(d, line, strlen(line), what, &ev);
}

/* ---- the verdict tests ---- */

/* Judge line through the analyzer's parser, and hold every path to
 * json-c on it. */
mt_parse_result_t mt_test_judge(mt_test_judge_t *j, const char *line)
{
	mt_test_diff_t d;

	mt_test_diff_init(&d);
	mt_test_diff_cstr(&d, line, "verdict");
	mt_test_diff_release(&d);
	memset(&j->ev, 0, sizeof(j->ev));
	return mt_parser_parse(&j->p, line, strlen(line), &j->ev);
}

void mt_test_expect(mt_test_judge_t *j, const char *line,
		    mt_parse_result_t want, const char *field)
{
	mt_parse_result_t got = mt_test_judge(j, line);

	mt_quiet(got == want, "%s, want %s (%s) for %s", mt_test_rname(got),
		 mt_test_rname(want), j->p.why ? j->p.why : "-", line);
	if (want != MT_PARSE_OK)
		mt_quiet(j->p.why != NULL, "no reason given for %s", line);
	if (field)
		mt_quiet(mt_test_same_text(j->p.why_field, field),
			 "the reason names field %s, want %s, for %s",
			 j->p.why_field ? j->p.why_field : "none", field,
			 line);
}

void mt_test_judge_init(mt_test_judge_t *j)
{
	mt_quiet_int_eq(mt_parser_init(&j->p), MT_OK);
}

void mt_test_judge_release(mt_test_judge_t *j)
{
	mt_parser_release(&j->p);
}
