/*
 * mt_analysis: the driver of the one pass: reader, parser, integrity and
 * heap.  A line is judged malformed only once another line follows it,
 * because the spec drops an invalid last line as a cut-off tail instead.
 * It must never read the trace twice.
 */
#include "mt_analysis.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/mt_cpu.h"
#include "mt_error.h"
#include "mt_mem.h"
#include "mt_pipe.h"
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

/* What the pass carries from line to line.  With two threads, the
 * consumer (apply_batch) owns everything here while a batch is in flight,
 * but rc: the first error of a batch applied, which the producer may look
 * at any time (atomic, and only ever set once). */
typedef struct {
	mt_analysis_t *a;
	mt_analysis_observer_t *observe;
	void *ctx;
	pending_t pending;
	uint64_t expected, last;
	atomic_int rc;
	mt_reader_t *reader; /* whose reads the second thread may make */
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

/*
 * With two threads, the held events go to the second one in batches of
 * BATCH (mt_pipe), which applies them while the first reads and parses
 * the next batch: on the bench trace the parse and the heap are each
 * about half the pass.  The prefetches then happen there, AHEAD events
 * before each is applied, since the heap is the consumer's while a batch
 * is in flight.  Every line that is not held waits for the batches before
 * it (a drain) and is then handled on the first thread as with one, so the
 * order of everything the pass decides is the same.
 */
#define BATCH 1024
#define NBATCHES 4
#define PACK_AHEAD 8

/*
 * A held event as it crosses to the other core: the fields a block event
 * has, in one cache line (the 200-byte mt_event_t would be four, and
 * every line the parser writes there is one the consumer's core must give
 * up first).  The lines of a batch are consecutive, every other line
 * draining the pipe, so a batch keeps only its first line's number.  An
 * event whose allocator_id does not fit 32 bits is not held.
 */
typedef struct {
	uint64_t seq, ptr, new_ptr, size, stack, tid, t;
	uint32_t allocator_id;
	uint16_t has;
	uint8_t kind;
} __attribute__((aligned(64))) packed_t;

typedef struct {
	uint64_t first; /* the line number of held[0] */
	size_t n;
	packed_t held[BATCH];
} batch_t;

static void pack(packed_t *d, const mt_event_t *ev)
{
	d->seq = ev->seq;
	d->ptr = ev->ptr;
	d->new_ptr = ev->new_ptr;
	d->size = ev->size;
	d->stack = ev->stack;
	d->tid = ev->tid;
	d->t = ev->t;
	d->allocator_id = (uint32_t)ev->allocator_id;
	/* Only the bits of the fields carried: align and fn stay behind. */
	d->has = (uint16_t)(ev->has & (MT_HAS_STACK | MT_HAS_TID | MT_HAS_T));
	d->kind = (uint8_t)ev->kind;
}

static void unpack(held_t *d, const packed_t *s, uint64_t number)
{
	d->number = number;
	d->ev.seq = s->seq;
	d->ev.ptr = s->ptr;
	d->ev.new_ptr = s->new_ptr;
	d->ev.size = s->size;
	d->ev.stack = s->stack;
	d->ev.tid = s->tid;
	d->ev.t = s->t;
	d->ev.allocator_id = s->allocator_id;
	d->ev.has = s->has;
	d->ev.kind = (mt_kind_t)s->kind;
}

/* The prefetch needs kind, allocator_id and the pointers only. */
static void prefetch_packed(const mt_heap_t *h, const packed_t *s)
{
	mt_event_t ev;

	ev.kind = (mt_kind_t)s->kind;
	ev.allocator_id = s->allocator_id;
	ev.ptr = s->ptr;
	ev.new_ptr = s->new_ptr;
	mt_heap_prefetch(h, &ev);
}

/* Whichever thread waits for the other makes the read the reader asked
 * for (and the reading thread when it needs it and none has): the read is
 * a sixth of the pass, and it goes to the side with time to spare, which
 * is the parser's on one trace and the heap's on another. */
static void read_ahead(void *ctx)
{
	pass_t *ps = ctx;

	mt_reader_ahead_run(ps->reader);
}

static void apply_batch(void *ctx, void *slot)
{
	pass_t *ps = ctx;
	batch_t *b = slot;
	/* Zeroed once: the fields a block event lacks stay as the parser
	 * leaves them for a held one. */
	held_t hd;
	int rc;

	if (atomic_load_explicit(&ps->rc, memory_order_relaxed))
		return; /* failed already: the producer stops at its next look */
	memset(&hd, 0, sizeof(hd));
	for (size_t i = 0; i < b->n && i < AHEAD; i++)
		prefetch_packed(&ps->a->heap, &b->held[i]);
	for (size_t i = 0; i < b->n; i++) {
		if (i + AHEAD < b->n)
			prefetch_packed(&ps->a->heap, &b->held[i + AHEAD]);
		unpack(&hd, &b->held[i], b->first + i);
		begin_line(ps, hd.number);
		rc = apply_held(ps, &hd);
		if (rc) {
			atomic_store_explicit(&ps->rc, rc, memory_order_release);
			return;
		}
	}
}

/*
 * Chosen, not told (MT_ANALYSIS_TIMED), the pass times the two ways
 * against each other as it goes: PROBE events piped, the next PROBE on
 * this thread alone, then the next KEEP the faster way, and again.  On a
 * machine whose two cores pass a cache line in 70 ns the two threads took
 * 0.73 of one thread's time; on the same guest in the hours its cores
 * were 215 ns apart, 1.7 times as long, and so did two threads beside
 * busy processes (docs/performance.md, "The analyzer, stop 17").  A probe
 * of the slower way costs PROBE / (2 PROBE + KEEP), about 6 %, of the
 * difference.  Which thread applies a batch changes no result: the pipe
 * is drained before the pass applies events itself.  The sizes are the
 * tests' to change (mt_analysis_test_schedule).
 */
#define PROBE_EVENTS (16 * BATCH)
#define KEEP_EVENTS (256 * BATCH)
static uint64_t probe_events = PROBE_EVENTS, keep_events = KEEP_EVENTS;
static int timed_for_tests;

enum { PROBE_PIPED, PROBE_ALONE, KEEP };

/* Where the held events go: a local array of AHEAD applied in place, or
 * packed into the pipe's slots. */
typedef struct {
	held_t local[AHEAD];
	size_t n, cap;
	mt_pipe_t pipe;
	int piped;          /* the pipe exists (two threads, told or timed) */
	batch_t *slot;      /* the pipe's slot being filled, or NULL: local */
	batch_t *parked;    /* that slot while the pass runs alone (timed) */
	mt_event_t scratch; /* what the parser fills when piped */
	/* The timing of the two ways (MT_ANALYSIS_TIMED), else timed 0. */
	int timed, phase;
	uint64_t left;            /* events before the phase ends */
	uint64_t since, piped_ns; /* when it began; the piped probe's time */
} holder_t;

int mt_analysis_choose_threads(const char *env, int cpus)
{
	if (env && env[0] && !env[1] && (env[0] == '1' || env[0] == '2'))
		return env[0] - '0';
	return cpus < 2 ? 1 : MT_ANALYSIS_TIMED;
}

void mt_analysis_test_schedule(uint64_t probe, uint64_t keep)
{
	timed_for_tests = probe != 0;
	probe_events = probe ? probe : PROBE_EVENTS;
	keep_events = probe ? keep : KEEP_EVENTS;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int pass_threads(void)
{
	int cpus = timed_for_tests ? 2 : mt_pipe_cpus();

	return mt_analysis_choose_threads(getenv("MEMTRACE_ANALYZER_THREADS"),
					  cpus);
}

static int holder_init(holder_t *h, pass_t *ps)
{
	int threads = pass_threads(), rc;

	h->n = 0;
	h->cap = AHEAD;
	h->slot = h->parked = NULL;
	h->piped = 0;
	h->timed = threads == MT_ANALYSIS_TIMED;
	h->phase = PROBE_PIPED;
	h->left = probe_events;
	h->since = 0;
	if (threads < 2)
		return MT_OK;
	rc = mt_pipe_init(&h->pipe, sizeof(batch_t), NBATCHES, apply_batch, ps);
	if (rc)
		return rc;
	rc = mt_reader_ahead_enable(ps->reader);
	if (rc) {
		mt_pipe_release(&h->pipe);
		return rc;
	}
	mt_pipe_set_idle(&h->pipe, read_ahead);
	h->slot = mt_pipe_slot(&h->pipe);
	h->cap = BATCH;
	h->piped = 1;
	return MT_OK;
}

/* From now on the pass applies the events itself: what the pipe holds is
 * applied first.  Between batches (h->n is 0). */
static int holder_alone(holder_t *h, pass_t *ps)
{
	mt_pipe_drain(&h->pipe);
	h->parked = h->slot;
	h->slot = NULL;
	h->cap = AHEAD;
	return atomic_load(&ps->rc);
}

/* From now on the events go through the pipe again.  Between batches. */
static void holder_pipe(holder_t *h)
{
	h->slot = h->parked;
	h->parked = NULL;
	h->cap = BATCH;
}

/* n more events applied or handed over: the timed pass's next phase
 * when this one is over, the way it runs changed at its start. */
static int holder_count(holder_t *h, pass_t *ps, size_t n)
{
	uint64_t now;

	if (!h->timed)
		return MT_OK;
	if (!h->since) {
		/* The clock starts at the first batch: the thread's start
		 * and the trace's first lines are neither way's. */
		h->since = now_ns();
		return MT_OK;
	}
	if (h->left > n) {
		h->left -= n;
		return MT_OK;
	}
	if (h->phase == PROBE_PIPED) {
		/* The batches still in the pipe are the piped probe's: its
		 * time ends once they are applied. */
		int rc = holder_alone(h, ps);

		now = now_ns();
		h->piped_ns = now - h->since;
		h->phase = PROBE_ALONE;
		h->left = probe_events;
		h->since = now;
		return rc;
	}
	now = now_ns();
	if (h->phase == PROBE_ALONE) {
		h->phase = KEEP;
		h->left = keep_events;
		if (now - h->since >= h->piped_ns)
			holder_pipe(h);
	} else {
		h->phase = PROBE_PIPED;
		h->left = probe_events;
		if (!h->slot)
			holder_pipe(h);
		h->since = now;
	}
	return MT_OK;
}

/* Apply the events held on this thread, and count them. */
static int holder_flush(holder_t *h, pass_t *ps)
{
	size_t n = h->n;
	int rc = flush(ps, h->local, &h->n);

	return rc ? rc : holder_count(h, ps, n);
}

/* Where the next line is parsed: the next free slot of the local batch,
 * so that a held event needs no copy, or the scratch event. */
static inline mt_event_t *holder_event(holder_t *h)
{
	return h->slot ? &h->scratch : &h->local[h->n].ev;
}

/* Whether an OK block event can be held (else it is a line not held). */
static inline int holder_takes(const holder_t *h, const mt_event_t *ev)
{
	return !h->slot || ev->allocator_id <= UINT32_MAX;
}

/* The batch is full: apply it, or hand it over and take the next slot. */
static int holder_full(holder_t *h, pass_t *ps)
{
	size_t n = h->n;

	if (!h->slot)
		return holder_flush(h, ps);
	h->slot->n = h->n;
	mt_pipe_publish(&h->pipe);
	h->slot = mt_pipe_slot(&h->pipe);
	h->n = 0;
	if (atomic_load_explicit(&ps->rc, memory_order_acquire)) {
		mt_pipe_drain(&h->pipe);
		return atomic_load(&ps->rc);
	}
	return holder_count(h, ps, n);
}

/* Every held event applied, on either thread: the pass is the first
 * thread's again. */
static int holder_drain(holder_t *h, pass_t *ps)
{
	if (!h->slot)
		return holder_flush(h, ps);
	if (!h->pipe.started) {
		/* No batch has filled yet (a short trace, or the lines before
		 * the first block event): no thread to start for these. */
		h->slot->n = h->n;
		apply_batch(ps, h->slot);
		h->n = 0;
		return atomic_load(&ps->rc);
	}
	if (h->n) {
		int rc = holder_full(h, ps);

		if (rc)
			return rc;
	}
	mt_pipe_drain(&h->pipe);
	return atomic_load(&ps->rc);
}

/* Hold the event just parsed into holder_event(h), of line number. */
static inline int holder_add(holder_t *h, pass_t *ps, uint64_t number)
{
	if (h->slot) {
		if (!h->n)
			h->slot->first = number;
		/* The line is the consumer core's, from this slot's last
		 * round: ask for it early, and for writing, so the store
		 * does not wait (with a plain prefetch it waited still: the
		 * two-thread pass took 1.27 times as long on the 8-thread
		 * churn's trace, where the cores were 215 ns apart). */
		if (h->n + PACK_AHEAD < BATCH)
			mt_cpu_prefetch_write(&h->slot->held[h->n + PACK_AHEAD]);
		pack(&h->slot->held[h->n], &h->scratch);
	} else {
		h->local[h->n].number = number;
		mt_heap_prefetch(&ps->a->heap, &h->local[h->n].ev);
	}
	if (++h->n == h->cap)
		return holder_full(h, ps);
	return MT_OK;
}

static void holder_release(holder_t *h)
{
	if (h->piped)
		mt_pipe_release(&h->pipe);
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
	mt_reader_t reader;
	mt_parser_t parser;
	mt_line_t line;
	holder_t holder, *hold = NULL;
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
	ps.reader = &reader;
	if ((rc = holder_init(&holder, &ps)))
		goto cleanup;
	hold = &holder;

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
		window = mt_reader_window(&reader, &avail);
		if (avail >= MT_PARSE_EXACT_SPAN && reader.line_no) {
			if (mt_parse_exact_window(&parser, window, ev, &len) ==
				    MT_PARSE_OK &&
			    holder_takes(hold, ev)) {
				if ((rc = holder_add(hold, &ps,
						     mt_reader_take(&reader, len))))
					goto cleanup;
				continue;
			}
			declined = 1;
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
			    line.number != 1 && is_block_kind(ev->kind) &&
			    holder_takes(hold, ev)) {
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
	if (hold)
		holder_release(hold);
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
