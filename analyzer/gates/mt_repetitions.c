/*
 * mt_repetitions: statistics over the runs of a repetitions file.  It
 * keeps a handful of numbers per run, never the rows themselves, and must
 * never flag a field on runs it could not read: a bad row is bad input.
 */
#include "../gates/mt_repetitions.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mt_buf.h"
#include "../base/mt_error.h"
#include "../model/mt_integrity.h"
#include "../base/mt_mem.h"
#include "../gates/mt_profile.h"
#include "../read/mt_reader.h"
#include "../gates/mt_run_lines.h"

#define REPETITION_SCHEMA "tiny.profiling.allocation-repetition/v1"

static const char *const states[] = {
	"summary_written", "workload_failed", "capture_missing",
	"summary_invalid",
};
#define NSTATES (sizeof(states) / sizeof(states[0]))
#define NSTATUSES (1 + MT_CAVEAT_COUNT)

static const char *status_name(int i)
{
	return i ? mt_integrity_caveat_name((mt_caveat_t)(i - 1)) : "complete";
}

typedef struct {
	int64_t exit_code;
	int state;  /* index in states */
	int status; /* index by status_name, for a summarized run */
	uint64_t total[MT_PF_COUNT];
} run_t;

typedef struct {
	uint64_t min, median, max;
	int varies;
} stat_t;

typedef struct {
	const char *path;
	int json;
	run_t *runs;
	size_t nruns, cap, summarized;
	stat_t stat[MT_PF_COUNT];
	int exit_varies, state_varies, status_varies;
	size_t nvarying;
} reps_t;

/* ---- reading ---- */

static int index_of(const char *s, int n, const char *(*name)(int))
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, name(i)))
			return i;
	return -1;
}

static const char *state_name(int i)
{
	return states[i];
}

/* One row into run; a sentence in why when it is not a repetition row. */
static int read_row(struct json_object *o, run_t *run, char *why, size_t cap)
{
	struct json_object *v, *summary;
	const char *status, *message;

	if (!json_object_object_get_ex(o, "schema", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), REPETITION_SCHEMA)) {
		snprintf(why, cap, "its schema is not \"%s\"", REPETITION_SCHEMA);
		return -1;
	}
	if (!json_object_object_get_ex(o, "exit_code", &v) ||
	    !json_object_is_type(v, json_type_int)) {
		snprintf(why, cap, "its \"exit_code\" is not an integer");
		return -1;
	}
	run->exit_code = json_object_get_int64(v);
	if (!json_object_object_get_ex(o, "state", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    (run->state = index_of(json_object_get_string(v), (int)NSTATES,
				   state_name)) < 0) {
		snprintf(why, cap, "its \"state\" is not a repetition state");
		return -1;
	}
	if (run->state != 0)
		return 0; /* no summary to read */
	if (!json_object_object_get_ex(o, "summary", &summary) ||
	    !json_object_is_type(summary, json_type_object)) {
		snprintf(why, cap, "its state is summary_written but its "
			 "\"summary\" is not an object");
		return -1;
	}
	if (mt_profile_read_summary(summary, run->total, &status, &message,
				    why, cap))
		return -1;
	run->status = index_of(status, (int)NSTATUSES, status_name);
	return 0;
}

static int add_run(reps_t *r, const run_t *run)
{
	if (r->nruns == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		run_t *n = mt_mem_realloc(r->runs, cap * sizeof(*n));

		if (!n)
			return MT_ENOMEM;
		r->runs = n;
		r->cap = cap;
	}
	r->runs[r->nruns++] = *run;
	return MT_OK;
}

/* MT_OK when the file is read; MT_ENOMEM; MT_EIO (*err says why); or
 * MT_ECORRUPT, not a repetitions file (why says why). */
static int read_file(reps_t *r, int *err, char *why, size_t cap)
{
	mt_reader_t reader;
	mt_line_t line;
	void *tok = NULL;
	int status = MT_OK, got, rc;
	char row_why[MT_PROFILE_WHY_MAX];
	const char *unit;
	uint64_t at;

	if ((rc = mt_reader_open(&reader, r->path))) {
		*err = errno;
		return rc == MT_ENOMEM ? MT_ENOMEM : MT_EIO;
	}
	if (!(tok = mt_profile_json_tokener()))
		goto nomem;
	while ((got = mt_reader_next(&reader, &line)) > 0) {
		struct json_object *o;
		const char *bad;
		run_t run;

		memset(&run, 0, sizeof(run));
		if (line.too_long || !line.terminated) {
			snprintf(row_why, sizeof(row_why), "%s", line.too_long ?
				 "it is longer than 1 MiB" :
				 "it is cut off: it does not end in a newline");
			goto invalid;
		}
		if (mt_profile_json_line(tok, line.data, line.len, &o, &bad))
			goto nomem;
		if (!o) {
			snprintf(row_why, sizeof(row_why), "%s", bad);
			goto invalid;
		}
		rc = read_row(o, &run, row_why, sizeof(row_why));
		json_object_put(o);
		if (rc)
			goto invalid;
		if (add_run(r, &run))
			goto nomem;
		r->summarized += run.state == 0;
	}
	if (got == MT_ECORRUPT) {
		snprintf(why, cap, "%s (after line %llu)", mt_reader_why(&reader),
			 (unsigned long long)reader.line_no);
		status = MT_ECORRUPT;
	} else if (got == MT_ENOMEM) {
		goto nomem;
	} else if (got < 0) {
		*err = errno;
		status = MT_EIO;
	} else if (mt_reader_cut(&reader, &unit, &at)) {
		snprintf(why, cap, "its %s stream is cut off inside its %s at "
			 "byte %llu", mt_reader_format(&reader), unit,
			 (unsigned long long)at);
		status = MT_ECORRUPT;
	} else if (!r->nruns) {
		snprintf(why, cap, "it holds no row");
		status = MT_ECORRUPT;
	}
	goto cleanup;
invalid:
	snprintf(why, cap, "line %llu is not a repetition row: %s",
		 (unsigned long long)line.number, row_why);
	status = MT_ECORRUPT;
	goto cleanup;
nomem:
	status = MT_ENOMEM;
cleanup:
	mt_profile_json_tokener_free(tok);
	mt_reader_release(&reader);
	return status;
}

/* ---- statistics ---- */

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static int compute(reps_t *r)
{
	uint64_t *v;
	int64_t first_exit = r->runs[0].exit_code;
	int first_status = -1;

	for (size_t i = 0; i < r->nruns; i++) {
		const run_t *run = &r->runs[i];

		r->exit_varies |= run->exit_code != first_exit;
		r->state_varies |= run->state != r->runs[0].state;
		if (run->state)
			continue;
		if (first_status < 0)
			first_status = run->status;
		r->status_varies |= run->status != first_status;
	}
	r->nvarying = (size_t)(r->exit_varies + r->state_varies +
			       r->status_varies);
	if (!r->summarized)
		return MT_OK;
	v = mt_mem_calloc(r->summarized, sizeof(*v));
	if (!v)
		return MT_ENOMEM;
	for (int f = 0; f < MT_PF_COUNT; f++) {
		stat_t *s = &r->stat[f];
		size_t n = 0;

		for (size_t i = 0; i < r->nruns; i++)
			if (!r->runs[i].state)
				v[n++] = r->runs[i].total[f];
		qsort(v, n, sizeof(*v), cmp_u64);
		s->min = v[0];
		s->max = v[n - 1];
		s->median = mt_run_lines_median(v, n);
		s->varies = s->min != s->max && f != MT_PF_DURATION_NS;
		r->nvarying += (size_t)s->varies;
	}
	mt_mem_free(v);
	return MT_OK;
}

/* ---- rendering ---- */

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

static int pad_left(mt_buf_t *b, size_t mark, size_t width)
{
	size_t len = b->len - mark;
	int rc;

	for (size_t i = len; i < width; i++)
		if ((rc = mt_buf_add_str(b, " ")))
			return rc;
	if (len < width) {
		memmove(b->data + mark + (width - len), b->data + mark, len);
		memset(b->data + mark, ' ', width - len);
	}
	return MT_OK;
}

static int add_cell(mt_buf_t *b, uint64_t v, size_t width)
{
	size_t mark = b->len;
	int rc;

	if ((rc = mt_buf_add_u64(b, v)) || (rc = pad_left(b, mark, width)))
		mt_buf_truncate(b, mark);
	return rc;
}

/* Spread in percent of the median, one decimal, rounded toward zero. */
static int add_spread_pct(mt_buf_t *b, const stat_t *s)
{
	unsigned __int128 t;
	int rc;

	if (!s->median)
		return mt_buf_add_str(b, "-");
	t = (unsigned __int128)(s->max - s->min) * 1000 / s->median;
	if (t > UINT64_MAX)
		t = UINT64_MAX;
	ADD(mt_buf_add_u64(b, (uint64_t)(t / 10)));
	ADD(mt_buf_add_str(b, "."));
	ADD(mt_buf_add_u64(b, (uint64_t)(t % 10)));
	ADD(mt_buf_add_str(b, "%"));
cleanup:
	return rc;
}

#define COL_NAME 24
#define COL_VALUE 13

/*
 * The runs by value of what (0: exit code, 1: state, 2: trace status of
 * the summarized runs), the values in increasing order: the smallest
 * value above *last (any value when !*have), with its count of runs; 0
 * when none is left.  Few distinct values: a scan per value will do.
 */
static size_t next_value(const reps_t *r, int what, int *have, int64_t *last)
{
	int64_t next = 0;
	size_t count = 0;

	for (size_t i = 0; i < r->nruns; i++) {
		const run_t *run = &r->runs[i];
		int64_t v = what == 0 ? run->exit_code :
			    what == 1 ? run->state : run->status;

		if ((what == 2 && run->state) || (*have && v <= *last))
			continue;
		if (!count || v < next) {
			next = v;
			count = 0;
		}
		count += v == next;
	}
	*have = 1;
	*last = next;
	return count;
}

/* A value of next_value() as text or JSON. */
static int add_value(mt_buf_t *b, int what, int64_t v, int json)
{
	const char *s;

	if (what == 0)
		return mt_buf_add_i64(b, v);
	s = what == 1 ? states[v] : status_name((int)v);
	return json ? mt_buf_add_json_cstr_or_null(b, s) : mt_buf_add_str(b, s);
}

/* "0 (4 runs), 139 (1 run)", or as JSON [{"value":0,"runs":4},...]. */
static int add_tally(mt_buf_t *b, const reps_t *r, int what, int json)
{
	int rc = MT_OK, have = 0;
	int64_t v = 0;
	size_t count;

	if (json)
		ADD(mt_buf_add_str(b, "["));
	for (int first = 1; (count = next_value(r, what, &have, &v)); first = 0) {
		if (json) {
			ADD(mt_buf_add_str(b, first ? "{\"value\":" : ",{\"value\":"));
			ADD(add_value(b, what, v, 1));
			ADD(mt_buf_add_str(b, ",\"runs\":"));
			ADD(mt_buf_add_u64(b, count));
			ADD(mt_buf_add_str(b, "}"));
			continue;
		}
		ADD(mt_buf_add_str(b, first ? "" : ", "));
		ADD(add_value(b, what, v, 0));
		ADD(mt_buf_add_str(b, " ("));
		ADD(mt_buf_add_u64(b, count));
		ADD(mt_buf_add_str(b, count == 1 ? " run)" : " runs)"));
	}
	if (json)
		ADD(mt_buf_add_str(b, "]"));
cleanup:
	return rc;
}

static int render_text(mt_buf_t *b, const reps_t *r)
{
	static const char *const cols[] = { "min", "median", "max", "spread" };
	int rc = MT_OK, first = 1;
	size_t mark;

	ADD(mt_buf_add_str(b, "memtrace repetitions: "));
	ADD(mt_buf_add_u64(b, r->nruns));
	ADD(mt_buf_add_str(b, r->nruns == 1 ? " run in " : " runs in "));
	ADD(mt_buf_add_str(b, r->path));
	ADD(mt_buf_add_str(b, ", "));
	ADD(mt_buf_add_u64(b, r->summarized));
	ADD(mt_buf_add_str(b, " summarized\n"));
	ADD(mt_buf_add_str(b, "  exit codes: "));
	ADD(add_tally(b, r, 0, 0));
	ADD(mt_buf_add_str(b, r->exit_varies ? "  VARIES\n  states: " : "\n  states: "));
	ADD(add_tally(b, r, 1, 0));
	ADD(mt_buf_add_str(b, r->state_varies ? "  VARIES\n" : "\n"));
	if (r->summarized) {
		ADD(mt_buf_add_str(b, "  trace statuses: "));
		ADD(add_tally(b, r, 2, 0));
		ADD(mt_buf_add_str(b, r->status_varies ? "  VARIES\n" : "\n"));
		ADD(mt_buf_add_str(b, "  field"));
		for (size_t k = 5; k < COL_NAME; k++)
			ADD(mt_buf_add_str(b, " "));
		for (int i = 0; i < 4; i++) {
			mark = b->len;
			ADD(mt_buf_add_str(b, cols[i]));
			ADD(pad_left(b, mark, COL_VALUE));
		}
		ADD(mt_buf_add_str(b, "\n"));
	}
	for (int f = 0; r->summarized && f < MT_PF_COUNT; f++) {
		const stat_t *s = &r->stat[f];

		ADD(mt_buf_add_str(b, "  "));
		mark = b->len;
		ADD(mt_buf_add_str(b, mt_profile_field_name((mt_profile_field_t)f)));
		for (size_t k = b->len - mark; k < COL_NAME; k++)
			ADD(mt_buf_add_str(b, " "));
		ADD(add_cell(b, s->min, COL_VALUE));
		ADD(add_cell(b, s->median, COL_VALUE));
		ADD(add_cell(b, s->max, COL_VALUE));
		ADD(add_cell(b, s->max - s->min, COL_VALUE));
		if (s->max != s->min) {
			ADD(mt_buf_add_str(b, " ("));
			ADD(add_spread_pct(b, s));
			ADD(mt_buf_add_str(b, ")"));
		}
		if (s->varies)
			ADD(mt_buf_add_str(b, "  VARIES"));
		else if (f == MT_PF_DURATION_NS)
			ADD(mt_buf_add_str(b, "  (timing: not flagged)"));
		ADD(mt_buf_add_str(b, "\n"));
	}
	ADD(mt_buf_add_str(b, "memtrace repetitions: "));
	if (!r->nvarying) {
		ADD(mt_buf_add_str(b, r->summarized ?
				      "nothing varies between the runs\n" :
				      "nothing varies between the runs, but none "
				      "has a summary\n"));
		goto cleanup;
	}
	ADD(mt_buf_add_str(b, "the runs vary in "));
	if (r->exit_varies) {
		ADD(mt_buf_add_str(b, "exit code"));
		first = 0;
	}
	if (r->state_varies) {
		ADD(mt_buf_add_str(b, first ? "state" : ", state"));
		first = 0;
	}
	if (r->status_varies) {
		ADD(mt_buf_add_str(b, first ? "trace status" : ", trace status"));
		first = 0;
	}
	for (int f = 0; r->summarized && f < MT_PF_COUNT; f++) {
		if (!r->stat[f].varies)
			continue;
		ADD(mt_buf_add_str(b, first ? "" : ", "));
		ADD(mt_buf_add_str(b, mt_profile_field_name((mt_profile_field_t)f)));
		ADD(mt_buf_add_str(b, " ("));
		ADD(mt_buf_add_u64(b, r->stat[f].min));
		ADD(mt_buf_add_str(b, " to "));
		ADD(mt_buf_add_u64(b, r->stat[f].max));
		ADD(mt_buf_add_str(b, ")"));
		first = 0;
	}
	ADD(mt_buf_add_str(b, "; a deterministic workload gives the same every "
			      "run\n"));
cleanup:
	return rc;
}

static int render_json(mt_buf_t *b, const reps_t *r)
{
	static const char *const keys[] = { "min", "median", "max", "spread" };
	int rc = MT_OK, first = 1;

	ADD(mt_buf_add_str(b, "{\"schema\":\"memtrace.repetitions/v1\",\"path\":"));
	ADD(mt_buf_add_json_cstr_or_null(b, r->path));
	ADD(mt_buf_add_str(b, ",\"runs\":"));
	ADD(mt_buf_add_u64(b, r->nruns));
	ADD(mt_buf_add_str(b, ",\"summarized\":"));
	ADD(mt_buf_add_u64(b, r->summarized));
	ADD(mt_buf_add_str(b, ",\"exit_codes\":"));
	ADD(add_tally(b, r, 0, 1));
	ADD(mt_buf_add_str(b, ",\"states\":"));
	ADD(add_tally(b, r, 1, 1));
	ADD(mt_buf_add_str(b, ",\"statuses\":"));
	ADD(add_tally(b, r, 2, 1));
	ADD(mt_buf_add_str(b, ",\"metrics\":["));
	for (int f = 0; r->summarized && f < MT_PF_COUNT; f++) {
		const stat_t *s = &r->stat[f];
		const uint64_t vals[] = { s->min, s->median, s->max, s->max - s->min };

		ADD(mt_buf_add_str(b, f ? ",{\"name\":" : "{\"name\":"));
		ADD(mt_buf_add_json_cstr_or_null(b,
			mt_profile_field_name((mt_profile_field_t)f)));
		for (int k = 0; k < 4; k++) {
			ADD(mt_buf_add_str(b, ",\""));
			ADD(mt_buf_add_str(b, keys[k]));
			ADD(mt_buf_add_str(b, "\":"));
			ADD(mt_buf_add_u64(b, vals[k]));
		}
		ADD(mt_buf_add_str(b, f == MT_PF_DURATION_NS ?
				      ",\"deterministic\":false" :
				      ",\"deterministic\":true"));
		ADD(mt_buf_add_str(b, s->varies ? ",\"varies\":true}" :
						  ",\"varies\":false}"));
	}
	ADD(mt_buf_add_str(b, "],\"varying\":["));
	if (r->exit_varies) {
		ADD(mt_buf_add_str(b, "\"exit_code\""));
		first = 0;
	}
	if (r->state_varies) {
		ADD(mt_buf_add_str(b, first ? "\"state\"" : ",\"state\""));
		first = 0;
	}
	if (r->status_varies) {
		ADD(mt_buf_add_str(b, first ? "\"status\"" : ",\"status\""));
		first = 0;
	}
	for (int f = 0; r->summarized && f < MT_PF_COUNT; f++) {
		if (!r->stat[f].varies)
			continue;
		ADD(mt_buf_add_str(b, first ? "" : ","));
		ADD(mt_buf_add_json_cstr_or_null(b,
			mt_profile_field_name((mt_profile_field_t)f)));
		first = 0;
	}
	ADD(mt_buf_add_str(b, "]}\n"));
cleanup:
	return rc;
}

int mt_repetitions_run(const char *path, int json, mt_buf_t *out,
		       int *varies, int *err, char *why, size_t cap)
{
	reps_t r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.path = path;
	r.json = json;
	if ((rc = read_file(&r, err, why, cap)) == MT_OK &&
	    (compute(&r) ||
	     (r.json ? render_json(out, &r) : render_text(out, &r))))
		rc = MT_ENOMEM;
	*varies = r.nvarying != 0;
	mt_mem_free(r.runs);
	return rc;
}
