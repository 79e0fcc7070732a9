/*
 * mt_analysis: the driver of the one pass: reader, parser, integrity and
 * heap.  A line is judged malformed only once another line follows it,
 * because the spec drops an invalid last line as a cut-off tail instead.
 * It must never read the trace twice.
 */
#include "../model/mt_analysis.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../read/mt_ahead.h"
#include "../read/mt_reader.h"

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
	if (r == MT_PARSE_OK && ev->kind == MT_KIND_TRACE_START &&
	    (ev->has & MT_HAS_STACK_DEPTH)) {
		a->stack_depth = ev->stack_depth;
		a->has_stack_depth = 1;
	}
	if (r == MT_PARSE_OK && ev->kind == MT_KIND_TRACE_START &&
	    (ev->has & MT_HAS_SAMPLE_BYTES))
		a->heap.sample_bytes = ev->sample_bytes;
	if (r != MT_PARSE_OK && ev->kind == MT_KIND_TRACE_START)
		mt_integrity_missing_start(&a->integrity, NULL);
	else if (ev->kind != MT_KIND_TRACE_START)
		mt_integrity_missing_start(&a->integrity,
					   mt_event_kind_name(ev->kind));
}

/* 0: the CPUs this process may run on. */
static unsigned mt_analysis_threads;

void mt_analysis_set_threads(unsigned n)
{
	mt_analysis_threads = n;
}

int mt_analysis_run(mt_analysis_t *a, const char *path)
{
	return mt_analysis_run_observed(a, path, NULL, NULL);
}

/* The CPUs this process may run on (its affinity mask); 1 when it
 * cannot tell. */
static int cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	return CPU_COUNT(&set);
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

/* The held events: up to AHEAD of them, each parsed in place into its
 * slot, prefetched, and applied in order once the batch is full or a line
 * that is not held comes. */
typedef struct {
	held_t local[AHEAD];
	size_t n;
} holder_t;

/* Where the next line is parsed: the next free slot, so that a held
 * event needs no copy. */
static inline mt_event_t *holder_event(holder_t *h)
{
	return &h->local[h->n].ev;
}

/* Hold the event just parsed into holder_event(h), of line number. */
static inline int holder_add(holder_t *h, pass_t *ps, uint64_t number)
{
	h->local[h->n].number = number;
	mt_heap_prefetch(&ps->a->heap, &h->local[h->n].ev);
	if (++h->n == AHEAD)
		return flush(ps, h->local, &h->n);
	return MT_OK;
}

/* Every held event applied: the lines before a line not held go first. */
static int holder_drain(holder_t *h, pass_t *ps)
{
	return flush(ps, h->local, &h->n);
}

/* A compressed trace's data the decoder refused: the lines before it may
 * hold anything the corrupt frame did, and no verdict rests on them. */
static __attribute__((noinline, cold)) void judge_corrupt(mt_analysis_t *a,
							  const mt_reader_t *r)
{
	if (r->line_no)
		mt_integrity_set_invalid(&a->integrity, "%s (after line %llu)",
					 mt_reader_why(r),
					 (unsigned long long)r->line_no);
	else
		mt_integrity_set_invalid(&a->integrity, "%s", mt_reader_why(r));
}

/* The end of a trace read whole, or cut (last: its last line; pending:
 * a last line dropped as not an event).  Out of the pass's function, so
 * that what only the end needs takes nothing from its loop. */
static __attribute__((noinline)) void judge_end(mt_analysis_t *a,
						const mt_reader_t *r,
						uint64_t last, uint64_t pending)
{
	const char *unit;
	uint64_t at;
	int cut = mt_reader_cut(r, &unit, &at);

	if (!last) {
		if (cut)
			mt_integrity_set_invalid(&a->integrity,
						 "the trace is empty: its %s stream is "
						 "cut off inside its first %s",
						 mt_reader_format(r), unit);
		else
			mt_integrity_set_invalid(&a->integrity, "%s",
						 r->zero_padded ?
							 "the trace holds only zero bytes" :
							 "the trace is empty");
		return;
	}
	if (cut)
		mt_integrity_stream_cut(&a->integrity, mt_reader_format(r), unit, at);
	if (pending)
		mt_integrity_cut(&a->integrity, pending, 0);
	mt_integrity_finish(&a->integrity, last, r->zero_padded);
}

int mt_analysis_run_observed(mt_analysis_t *a, const char *path,
			     mt_analysis_observer_t *observe, void *ctx)
{
	return mt_analysis_run_full(a, path, NULL, observe, ctx, NULL, NULL);
}

int mt_analysis_run_allocator(mt_analysis_t *a, const char *path,
			      const char *allocator,
			      mt_analysis_observer_t *observe, void *ctx)
{
	return mt_analysis_run_full(a, path, allocator, observe, ctx, NULL, NULL);
}

int mt_analysis_run_followed(mt_analysis_t *a, const char *path,
			     mt_analysis_observer_t *observe, void *ctx,
			     mt_reader_wait_t *wait, void *wait_ctx)
{
	return mt_analysis_run_full(a, path, NULL, observe, ctx, wait, wait_ctx);
}

int mt_analysis_run_full(mt_analysis_t *a, const char *path,
			 const char *allocator,
			 mt_analysis_observer_t *observe, void *ctx,
			 mt_reader_wait_t *wait, void *wait_ctx)
{
	mt_reader_t reader;
	mt_parser_t parser;
	mt_line_t line;
	holder_t holder = { .n = 0 }, *hold = &holder;
	pass_t ps;
	int have_parser = 0, have_reader = 0;
	int rc, got = 0;
	unsigned threads = mt_analysis_threads ? mt_analysis_threads :
						 (unsigned)cpus();

	memset(a, 0, sizeof(*a));
	memset(&ps, 0, sizeof(ps));
	ps.a = a;
	ps.observe = observe;
	ps.ctx = ctx;
	ps.expected = 1;
	mt_integrity_init(&a->integrity);
	mt_heap_init(&a->heap);
	a->heap.only_allocator = allocator;

	rc = mt_reader_open(&reader, path);
	if (rc) {
		a->error_errno = errno;
		goto cleanup;
	}
	have_reader = 1;
	/* Where a second CPU may be had, the reads (and a compressed
	 * trace's decompression) run beside the parse: side by side on two
	 * cores, a sixth of a plain trace's pass and about half of a zstd
	 * one's.  A followed file's reads wait for its writer, and the
	 * waits look at the heap: they stay on this thread. */
	if (wait) {
		mt_reader_follow(&reader, wait, wait_ctx);
	} else if (threads >= 2) {
		/* A plain or zstd regular file in chunks on every thread
		 * (mt_ahead); a gzip one or a pipe is read on one thread
		 * beside this one. */
		if ((rc = mt_ahead_start(&reader, threads)))
			goto cleanup;
		if (!reader.par && (rc = mt_reader_ahead(&reader)))
			goto cleanup;
	}
	rc = mt_parser_init(&parser);
	if (rc)
		goto cleanup;
	have_parser = 1;

	for (;;) {
		/* Parsed into the next free slot of the batch, so that a held
		 * event needs no copy. */
		mt_event_t *ev = holder_event(hold);
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
		/* A line a thread ahead already parsed (mt_ahead): its
		 * event is the exact matcher's, as below. */
		if (reader.nrecs) {
			const mt_ahead_rec_t *x = mt_ahead_at(&reader);

			if (x) {
				mt_ahead_event(x, ev);
				if ((rc = holder_add(hold, &ps,
						     mt_reader_take(&reader, x->len))))
					goto cleanup;
				continue;
			}
		}
		window = mt_reader_window(&reader, &avail);
		if (avail >= MT_PARSE_EXACT_SPAN && reader.line_no) {
			if (mt_parse_exact_window(&parser, window, ev, &len) ==
			    MT_PARSE_OK) {
				if ((rc = holder_add(hold, &ps,
						     mt_reader_take(&reader, len))))
					goto cleanup;
				continue;
			}
			declined = 1;
		}
		/* The reader may wait for the file to grow in there: what was
		 * read before is applied first, and the line is parsed into
		 * the batch's first slot. */
		if (wait && hold->n) {
			if ((rc = holder_drain(hold, &ps)))
				goto cleanup;
			ev = holder_event(hold);
		}
		if ((got = mt_reader_next(&reader, &line)) <= 0)
			break;

		if (line.too_long) {
			if ((rc = holder_drain(hold, &ps)))
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
				if ((rc = holder_add(hold, &ps, line.number)))
					goto cleanup;
				continue;
			}
			/* Not held: the lines before it go first.  This
			 * line's event and reasons stay valid meanwhile: the
			 * flush neither reads nor parses, and leaves the slot
			 * ev is in alone (it is past the held ones). */
			if ((rc = holder_drain(hold, &ps)))
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
				if (r == MT_PARSE_OK &&
				    ev->kind == MT_KIND_TRACE_START &&
				    (rc = mt_identity_read(&a->identity,
							   line.data, line.len)))
					goto cleanup;
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
	if ((rc = holder_drain(hold, &ps)))
		goto cleanup;
	if (got == MT_ECORRUPT) {
		judge_corrupt(a, &reader);
		rc = MT_OK;
		goto cleanup;
	}
	if (got < 0) {
		a->error_errno = errno;
		rc = got == MT_ENOMEM ? MT_ENOMEM : MT_EIO;
		goto cleanup;
	}
	rc = MT_OK;
	if (!a->integrity.invalid)
		judge_end(a, &reader, ps.last, ps.pending.line);
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
