/*
 * mt_analysis: the driver of the one pass: reader, parser, integrity and
 * heap.  A line is judged malformed only once another line follows it,
 * because the spec drops an invalid last line as a cut-off tail instead.
 * It must never read the trace twice.
 */
#include "mt_analysis.h"

#include <errno.h>
#include <string.h>

#include "mt_error.h"
#include "mt_reader.h"

typedef struct {
	uint64_t line;
	const char *why;   /* static text */
	const char *field; /* static text or NULL */
} pending_t;

static void judge_first_line(mt_analysis_t *a, mt_parser_t *p,
			     mt_parse_result_t r, const mt_event_t *ev)
{
	if (r == MT_PARSE_NOT_EVENT) {
		mt_integrity_set_invalid(&a->integrity,
					 "line 1 is not a memtrace event: %s",
					 p->why);
		return;
	}
	if (r == MT_PARSE_BAD_VERSION) {
		mt_integrity_set_invalid(&a->integrity,
					 "line 1 has format version %lld; this "
					 "memtrace reads version 1",
					 (long long)p->version);
		return;
	}
	/* A malformed line is no trace.start, whatever its kind; and the
	 * validator may reject it (a negative seq) before reading its kind,
	 * leaving ev->kind 0, which is MT_KIND_TRACE_START. */
	if (r != MT_PARSE_OK && ev->kind == MT_KIND_TRACE_START)
		mt_integrity_missing_start(&a->integrity, NULL);
	else if (ev->kind != MT_KIND_TRACE_START)
		mt_integrity_missing_start(&a->integrity,
					   mt_event_kind_name(ev->kind));
}

int mt_analysis_run(mt_analysis_t *a, const char *path)
{
	return mt_analysis_run_observed(a, path, NULL, NULL);
}

/* What the pass carries from line to line. */
typedef struct {
	mt_analysis_t *a;
	mt_analysis_observer_t *observe;
	void *ctx;
	pending_t pending;
	uint64_t expected, last;
} pass_t;

/* A line the parser has judged, waiting to be applied. */
typedef struct {
	uint64_t number;
	mt_event_t ev;
} held_t;

/*
 * How many block events the pass parses ahead of applying them.  A block
 * event's live-block slot is a cache miss of 130 ns or so once the table
 * outgrows the cache; parsing ahead, with each slot prefetched as its line
 * is parsed, lets the misses of the batch overlap each other and the
 * parsing instead of stalling one by one.  Only OK block events are held:
 * they point into neither the reader's buffer nor the parser, so the
 * lines after them may be read and parsed first.  Everything the pass
 * does with a line, integrity included, still happens line by line in
 * trace order, so no verdict or message changes.
 */
#define AHEAD 16

static int is_block_kind(mt_kind_t k)
{
	return k == MT_KIND_ALLOC || k == MT_KIND_FREE || k == MT_KIND_RESIZE ||
	       k == MT_KIND_REMAP || k == MT_KIND_ALLOC_FAIL;
}

/* Everything after the parse for one terminated line that is not line 1's
 * judgement: the pending malformed line, the heap, the sequence. */
static int apply_line(pass_t *ps, uint64_t number, mt_parse_result_t r,
		      const mt_event_t *ev, const char *why, const char *field)
{
	mt_analysis_t *a = ps->a;
	int rc;

	if (r == MT_PARSE_OK) {
		rc = mt_heap_apply(&a->heap, ev, &why, &field);
		if (rc == MT_HEAP_REJECTED)
			r = MT_PARSE_MALFORMED;
		else if (rc)
			return rc;
		else if (ps->observe)
			ps->observe(ps->ctx, &a->heap, ev);
	}
	if (r != MT_PARSE_OK) {
		if (r == MT_PARSE_BAD_VERSION)
			why = "its format version is not 1";
		ps->pending.line = number;
		ps->pending.why = why ? why : "it is not a valid event";
		ps->pending.field = field;
		ps->expected++;
		return MT_OK;
	}
	if (ev->seq != ps->expected)
		mt_integrity_gap(&a->integrity, number, ps->expected, ev->seq);
	ps->expected = ev->seq + 1;
	if (ev->kind == MT_KIND_TRACE_STOP)
		mt_integrity_stop(&a->integrity, number, ev->dropped);
	return MT_OK;
}

/* What every line meets first, in order: the line before it judged
 * malformed now that a line follows, and the events after a stop. */
static void begin_line(pass_t *ps, uint64_t number)
{
	mt_analysis_t *a = ps->a;

	ps->last = number;
	if (ps->pending.line) {
		mt_integrity_malformed(&a->integrity, ps->pending.line,
				       ps->pending.why, ps->pending.field);
		ps->pending.line = 0;
	}
	if (a->integrity.stop_line)
		mt_integrity_after_stop(&a->integrity, number);
}

/* apply_line() for a held line: an OK block event, so neither line 1 nor
 * a trace.stop, and the heap needs no dispatch on its kind. */
static inline int apply_held(pass_t *ps, const held_t *hd)
{
	mt_analysis_t *a = ps->a;
	const char *why = NULL, *field = NULL;
	int rc = mt_heap_apply_block(&a->heap, &hd->ev, &why, &field);

	if (rc == MT_HEAP_REJECTED)
		return apply_line(ps, hd->number, MT_PARSE_MALFORMED, &hd->ev,
				  why, field);
	if (rc)
		return rc;
	if (ps->observe)
		ps->observe(ps->ctx, &a->heap, &hd->ev);
	if (hd->ev.seq != ps->expected)
		mt_integrity_gap(&a->integrity, hd->number, ps->expected,
				 hd->ev.seq);
	ps->expected = hd->ev.seq + 1;
	return MT_OK;
}

/* Apply the held lines in order and empty the batch. */
static int flush(pass_t *ps, held_t *held, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		int rc;

		begin_line(ps, held[i].number);
		rc = apply_held(ps, &held[i]);
		if (rc) {
			*n = 0;
			return rc;
		}
	}
	*n = 0;
	return MT_OK;
}

int mt_analysis_run_observed(mt_analysis_t *a, const char *path,
			     mt_analysis_observer_t *observe, void *ctx)
{
	mt_reader_t reader;
	mt_parser_t parser;
	mt_line_t line;
	held_t held[AHEAD];
	size_t nheld = 0;
	pass_t ps;
	int have_parser = 0, have_reader = 0;
	int rc, got = 0;

	memset(a, 0, sizeof(*a));
	memset(&ps, 0, sizeof(ps));
	ps.a = a;
	ps.observe = observe;
	ps.ctx = ctx;
	ps.expected = 1;
	mt_integrity_init(&a->integrity);
	mt_heap_init(&a->heap);

	rc = mt_reader_open(&reader, path);
	if (rc) {
		a->error_errno = errno;
		goto cleanup;
	}
	have_reader = 1;
	rc = mt_parser_init(&parser);
	if (rc)
		goto cleanup;
	have_parser = 1;

	for (;;) {
		/* Parsed into the next free slot of the batch, so that a held
		 * event needs no copy. */
		mt_event_t *ev = &held[nheld].ev;
		mt_parse_result_t r;
		const char *why = NULL, *field = NULL;
		const char *window;
		size_t avail, len;
		int declined = 0;

		/* Nearly every line is a block event the exact matcher takes
		 * from the reader's buffer, finding the line's end itself, so
		 * that the reader need not search for it first.  It needs its
		 * span of bytes read (near a buffer's end, the reader's own
		 * line goes first); the line is what mt_reader_next() would
		 * have returned, terminated and not line 1, so it is held as
		 * below. */
		window = mt_reader_window(&reader, &avail);
		if (avail >= MT_PARSE_EXACT_SPAN && reader.line_no) {
			if (mt_parse_exact_window(&parser, window, ev, &len) ==
			    MT_PARSE_OK) {
				held[nheld].number = mt_reader_take(&reader, len);
				mt_heap_prefetch(&a->heap, ev);
				if (++nheld == AHEAD &&
				    (rc = flush(&ps, held, &nheld)))
					goto cleanup;
				continue;
			}
			declined = 1;
		}
		if ((got = mt_reader_next(&reader, &line)) <= 0)
			break;

		if (line.too_long) {
			if ((rc = flush(&ps, held, &nheld)))
				goto cleanup;
			begin_line(&ps, line.number);
			if (line.number == 1) {
				mt_integrity_set_invalid(
					&a->integrity,
					"line 1 is longer than %u bytes",
					MT_READER_LINE_MAX);
				break;
			}
			r = MT_PARSE_MALFORMED;
			why = "it is longer than 1 MiB";
		} else {
			r = declined ? mt_parser_parse_inexact(&parser, line.data,
							       line.len, ev) :
				       mt_parser_parse(&parser, line.data,
						       line.len, ev);
			if (parser.used_json_c)
				a->json_c_lines++;
			if (r == MT_PARSE_OK && line.terminated &&
			    line.number != 1 && is_block_kind(ev->kind)) {
				held[nheld].number = line.number;
				mt_heap_prefetch(&a->heap, ev);
				if (++nheld == AHEAD &&
				    (rc = flush(&ps, held, &nheld)))
					goto cleanup;
				continue;
			}
			/* Not held: the lines before it go first.  This
			 * line's event and reasons stay valid meanwhile: the
			 * flush neither reads nor parses, and leaves the slot
			 * ev is in alone (it is past the held ones). */
			if ((rc = flush(&ps, held, &nheld)))
				goto cleanup;
			begin_line(&ps, line.number);
			if (r == MT_PARSE_NOMEM) {
				rc = MT_ENOMEM;
				goto cleanup;
			}
			if (line.number == 1) {
				judge_first_line(a, &parser, r, ev);
				if (a->integrity.invalid)
					break;
			}
			why = parser.why;
			field = parser.why_field;
		}

		if (!line.terminated) {
			/* Cut off mid-write: its content cannot be trusted,
			 * whatever it parses as. */
			mt_integrity_cut(&a->integrity, line.number, 1);
			break;
		}
		if ((rc = apply_line(&ps, line.number, r, ev, why, field)))
			goto cleanup;
	}
	if ((rc = flush(&ps, held, &nheld)))
		goto cleanup;
	if (got < 0) {
		a->error_errno = errno;
		rc = MT_EIO;
		goto cleanup;
	}
	rc = MT_OK;
	if (a->integrity.invalid)
		goto cleanup;
	if (!ps.last) {
		mt_integrity_set_invalid(&a->integrity, "%s",
					 reader.zero_padded ?
						 "the trace holds only zero bytes" :
						 "the trace is empty");
		goto cleanup;
	}
	if (ps.pending.line)
		mt_integrity_cut(&a->integrity, ps.pending.line, 0);
	mt_integrity_finish(&a->integrity, ps.last, reader.zero_padded);
cleanup:
	if (have_parser)
		mt_parser_release(&parser);
	if (have_reader)
		mt_reader_release(&reader);
	return rc;
}

void mt_analysis_release(mt_analysis_t *a)
{
	mt_heap_release(&a->heap);
}
