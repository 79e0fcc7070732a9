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

int mt_analysis_run_observed(mt_analysis_t *a, const char *path,
			     mt_analysis_observer_t *observe, void *ctx)
{
	mt_reader_t reader;
	mt_parser_t parser;
	mt_line_t line;
	mt_event_t ev;
	pending_t pending = { 0, NULL, NULL };
	uint64_t expected = 1, last = 0;
	int have_parser = 0, have_reader = 0;
	int rc, got;

	memset(a, 0, sizeof(*a));
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

	while ((got = mt_reader_next(&reader, &line)) > 0) {
		mt_parse_result_t r;
		const char *why = NULL, *field = NULL;

		last = line.number;
		if (pending.line) {
			mt_integrity_malformed(&a->integrity, pending.line,
					       pending.why, pending.field);
			pending.line = 0;
		}
		if (a->integrity.stop_line)
			mt_integrity_after_stop(&a->integrity, line.number);

		if (line.too_long) {
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
			r = mt_parser_parse(&parser, line.data, line.len, &ev);
			if (parser.used_json_c)
				a->json_c_lines++;
			if (r == MT_PARSE_NOMEM) {
				rc = MT_ENOMEM;
				goto cleanup;
			}
			if (line.number == 1) {
				judge_first_line(a, &parser, r, &ev);
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
		if (r == MT_PARSE_OK) {
			rc = mt_heap_apply(&a->heap, &ev, &why, &field);
			if (rc == MT_HEAP_REJECTED)
				r = MT_PARSE_MALFORMED;
			else if (rc)
				goto cleanup;
			else if (observe)
				observe(ctx, &a->heap, &ev);
		}
		if (r != MT_PARSE_OK) {
			if (r == MT_PARSE_BAD_VERSION)
				why = "its format version is not 1";
			pending.line = line.number;
			pending.why = why ? why : "it is not a valid event";
			pending.field = field;
			expected++;
			continue;
		}
		if (ev.seq != expected)
			mt_integrity_gap(&a->integrity, line.number, expected,
					 ev.seq);
		expected = ev.seq + 1;
		if (ev.kind == MT_KIND_TRACE_STOP)
			mt_integrity_stop(&a->integrity, line.number,
					  ev.dropped);
	}
	if (got < 0) {
		a->error_errno = errno;
		rc = MT_EIO;
		goto cleanup;
	}
	rc = MT_OK;
	if (a->integrity.invalid)
		goto cleanup;
	if (!last) {
		mt_integrity_set_invalid(&a->integrity, "%s",
					 reader.zero_padded ?
						 "the trace holds only zero bytes" :
						 "the trace is empty");
		goto cleanup;
	}
	if (pending.line)
		mt_integrity_cut(&a->integrity, pending.line, 0);
	mt_integrity_finish(&a->integrity, last, reader.zero_padded);
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
