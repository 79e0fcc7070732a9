/*
 * mt_run_lines: memtrace-run's lines (mt_run_lines.h).  Each function reads what it
 * is given whole, renders into a buffer and prints nothing.
 */
#include "../gates/mt_run_lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../model/mt_analysis.h"
#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../parse/mt_parse.h"
#include "../gates/mt_profile.h"
#include "../read/mt_reader.h"
#include "../base/mt_units.h"

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

/* At most this many frames of the failed allocation's stack. */
#define OOM_FRAMES 8

/* ---- a run's row ---- */

static void copy_str(char *dst, size_t cap, const char *s)
{
	snprintf(dst, cap, "%s", s ? s : "");
}

/* The row in line into row; a sentence in why when it says
 * summary_written with no summary to read.  A line that is no row leaves
 * the state empty, as a file with no line does. */
static int read_row(void *tok, const mt_line_t *line, mt_run_lines_row_t *row,
		    char *why, size_t cap)
{
	struct json_object *o, *v, *summary;
	uint64_t total[MT_PF_COUNT];
	const char *bad, *status, *message;
	char sum_why[MT_PROFILE_WHY_MAX];
	int rc;

	memset(row, 0, sizeof(*row));
	if ((rc = mt_profile_json_line(tok, line->data, line->len, &o, &bad)))
		return rc;
	if (!o)
		return MT_OK;
	rc = MT_OK;
	if (json_object_object_get_ex(o, "state", &v) &&
	    json_object_is_type(v, json_type_string))
		copy_str(row->state, sizeof(row->state), json_object_get_string(v));
	if (!strcmp(row->state, "summary_written")) {
		if (!json_object_object_get_ex(o, "summary", &summary) ||
		    mt_profile_read_summary(summary, total, &status, &message,
					    sum_why, sizeof(sum_why))) {
			snprintf(why, cap, "its last row says summary_written "
				 "but holds no summary");
			rc = MT_ECORRUPT;
		} else {
			copy_str(row->status, sizeof(row->status), status);
			row->allocations = total[MT_PF_ALLOCATIONS];
			row->peak_live_bytes = total[MT_PF_PEAK_LIVE_BYTES];
			row->live_bytes = total[MT_PF_LIVE_BYTES];
			/* A sampled summary's errors, when it gives them. */
			row->sampled = json_object_object_get_ex(summary, "sample_bytes", &v);
			if (json_object_object_get_ex(summary, "allocations_stderr", &v))
				row->stderr_of.allocations = (uint64_t)json_object_get_uint64(v);
			if (json_object_object_get_ex(summary, "peak_live_bytes_stderr", &v))
				row->stderr_of.peak = (uint64_t)json_object_get_uint64(v);
		}
	}
	json_object_put(o);
	return rc;
}

int mt_run_lines_last_row(const char *path, mt_run_lines_row_t *row, int *err,
			  char *why, size_t cap)
{
	mt_reader_t reader;
	mt_line_t line;
	mt_buf_t last = MT_BUF_INIT;
	void *tok = NULL;
	int rc, got, have = 0;

	memset(row, 0, sizeof(*row));
	if ((rc = mt_reader_open(&reader, path))) {
		*err = errno;
		return rc == MT_ENOMEM ? MT_ENOMEM : MT_EIO;
	}
	while ((got = mt_reader_next(&reader, &line)) > 0) {
		mt_buf_reset(&last);
		if ((rc = mt_buf_add(&last, line.data, line.len)))
			goto cleanup;
		have = !line.too_long;
	}
	if (got == MT_ENOMEM) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	if (got < 0) {
		*err = got == MT_EIO ? errno : EIO;
		rc = MT_EIO;
		goto cleanup;
	}
	if (!have)
		goto cleanup;
	if (!(tok = mt_profile_json_tokener())) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	line.data = last.data;
	line.len = last.len;
	rc = read_row(tok, &line, row, why, cap);
cleanup:
	mt_profile_json_tokener_free(tok);
	mt_buf_release(&last);
	mt_reader_release(&reader);
	return rc;
}

int mt_run_lines_add_figures(mt_buf_t *b, uint64_t allocations, uint64_t peak,
			     const mt_run_lines_stderr_t *se, const char *status)
{
	size_t mark = b->len;
	int rc;

	if (se) {
		ADD(mt_buf_add_u64(b, allocations));
		ADD(mt_units_add_pm_count(b, se->allocations));
		ADD(mt_buf_add_str(b, allocations == 1 ? " allocation" : " allocations"));
	} else {
		ADD(mt_units_add_count(b, allocations, "allocation", "allocations"));
	}
	ADD(mt_buf_add_str(b, ", peak "));
	ADD(mt_units_add_size(b, peak));
	if (se)
		ADD(mt_units_add_pm_size(b, se->peak));
	ADD(mt_buf_add_str(b, ", "));
	ADD(mt_buf_add_str(b, status));
cleanup:
	if (rc)
		mt_buf_truncate(b, mark);
	return rc;
}

uint64_t mt_run_lines_median(const uint64_t *v, size_t n)
{
	uint64_t a = v[(n - 1) / 2], b = v[n / 2];

	/* Halves first: the sum of two values could wrap. */
	return a / 2 + b / 2 + (a % 2 + b % 2) / 2;
}

/* ---- the table ---- */

typedef struct {
	char exit[24];
	uint64_t exit_status; /* exit, read */
	char state[32];
	char status[32];
	uint64_t fig[3]; /* allocations, peak live, live at exit */
	int has_fig;     /* status and fig were given */
} run_t;

/* The next word of *s (spaces between), copied into w (cap bytes): 0, or
 * -1 when there is none or it does not fit. */
static int word(const char **s, char *w, size_t cap)
{
	size_t n = strcspn(*s, " ");

	if (!n || n >= cap)
		return -1;
	memcpy(w, *s, n);
	w[n] = '\0';
	*s += n;
	if (**s == ' ')
		(*s)++;
	return 0;
}

static int parse_figures(const char *line, run_t *run)
{
	char num[24];

	memset(run, 0, sizeof(*run));
	if (word(&line, run->exit, sizeof(run->exit)) ||
	    mt_units_parse_count(run->exit, &run->exit_status) ||
	    word(&line, run->state, sizeof(run->state)))
		return -1;
	/* A failed workload's row has no summary, but its trace may still
	 * give its figures. */
	if (strcmp(run->state, "summary_written") &&
	    (strcmp(run->state, "workload_failed") || !*line))
		return *line ? -1 : 0;
	if (word(&line, run->status, sizeof(run->status)))
		return -1;
	for (int f = 0; f < 3; f++)
		if (word(&line, num, sizeof(num)) ||
		    mt_units_parse_count(num, &run->fig[f]))
			return -1;
	run->has_fig = 1;
	return *line ? -1 : 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* A cell of the table: right-aligned in 12 columns, as printf's %12s. */
static int add_cell(mt_buf_t *b, const char *s, size_t len)
{
	int rc = MT_OK;

	for (size_t i = len; i < 12 && !rc; i++)
		rc = mt_buf_add_str(b, " ");
	if (!rc)
		rc = mt_buf_add(b, s, len);
	return rc;
}

/* A row of the table: its label in 14 columns, then a cell each. */
static int add_row(mt_buf_t *b, const char *label, const uint64_t v[3],
		   int size)
{
	mt_buf_t cell = MT_BUF_INIT;
	int rc;

	ADD(mt_buf_add_str(b, "  "));
	ADD(mt_buf_add_str(b, label));
	for (size_t i = strlen(label); i < 14; i++)
		ADD(mt_buf_add_str(b, " "));
	for (int i = 0; i < 3; i++) {
		mt_buf_reset(&cell);
		ADD(size ? mt_units_add_size(&cell, v[i]) :
			   mt_buf_add_u64(&cell, v[i]));
		ADD(mt_buf_add_str(b, " "));
		ADD(add_cell(b, cell.data, cell.len));
	}
	ADD(mt_buf_add_str(b, "\n"));
cleanup:
	mt_buf_release(&cell);
	return rc;
}

/* ", " before every item of the warning's list but the first. */
static int add_item(mt_buf_t *b, int *items, const char *s)
{
	int rc = (*items)++ ? mt_buf_add_str(b, ", ") : MT_OK;

	return rc ? rc : mt_buf_add_str(b, s);
}

static int add_range(mt_buf_t *b, int *items, const char *what,
		     const uint64_t v[3], int size)
{
	int rc;

	ADD(add_item(b, items, what));
	ADD(mt_buf_add_str(b, " ("));
	ADD(size ? mt_units_add_size(b, v[0]) : mt_buf_add_u64(b, v[0]));
	ADD(mt_buf_add_str(b, " to "));
	ADD(size ? mt_units_add_size(b, v[2]) : mt_buf_add_u64(b, v[2]));
	ADD(mt_buf_add_str(b, ")"));
cleanup:
	return rc;
}

static int render_table(mt_buf_t *b, const run_t *runs, size_t n,
			const char *name, const char *rows)
{
	static const char *const labels[] = { "allocations", "peak live",
					      "live at exit" };
	uint64_t *v = NULL, stat[3][3];
	mt_buf_t warn = MT_BUF_INIT;
	size_t summarized = 0, counted = 0;
	int exit_differs = 0, status_differs = 0, items = 0, rc = MT_OK;
	const char *first_status = NULL;

	for (size_t i = 0; i < n; i++) {
		exit_differs |= strcmp(runs[i].exit, runs[0].exit) != 0;
		summarized += !strcmp(runs[i].state, "summary_written");
		if (!runs[i].has_fig)
			continue;
		counted++;
		if (!first_status)
			first_status = runs[i].status;
		status_differs |= strcmp(runs[i].status, first_status) != 0;
	}
	ADD(mt_buf_add_str(b, "memtrace-run: "));
	ADD(mt_units_add_count(b, n, "run", "runs"));
	ADD(mt_buf_add_str(b, " of "));
	ADD(mt_buf_add_str(b, name));
	ADD(mt_buf_add_str(b, ", "));
	if (summarized)
		ADD(mt_units_add_count(b, summarized, "summarized",
				       "summarized"));
	else
		ADD(mt_buf_add_str(b, "none left a summary"));
	if (counted > summarized) {
		ADD(mt_buf_add_str(b, ", "));
		ADD(mt_units_add_count(b, counted - summarized, "failed run",
				       "failed runs"));
		ADD(mt_buf_add_str(b, " counted from "));
		ADD(mt_buf_add_str(b, counted - summarized == 1 ? "its trace" :
							      "their traces"));
	}
	ADD(mt_buf_add_str(b, "; rows in "));
	ADD(mt_buf_add_str(b, rows));
	ADD(mt_buf_add_str(b, "\n"));
	if (exit_differs)
		ADD(add_item(&warn, &items, "exit status"));
	if (status_differs)
		ADD(add_item(&warn, &items, "trace status"));
	if (counted) {
		if (!(v = mt_mem_calloc(counted, sizeof(*v)))) {
			rc = MT_ENOMEM;
			goto cleanup;
		}
		for (int f = 0; f < 3; f++) {
			size_t k = 0;

			for (size_t i = 0; i < n; i++)
				if (runs[i].has_fig)
					v[k++] = runs[i].fig[f];
			qsort(v, k, sizeof(*v), cmp_u64);
			stat[f][0] = v[0];
			stat[f][1] = mt_run_lines_median(v, k);
			stat[f][2] = v[k - 1];
		}
		ADD(mt_buf_add_str(b, "                          min       "
				      "median          max\n"));
		for (int f = 0; f < 3; f++)
			ADD(add_row(b, labels[f], stat[f], f > 0));
		for (int f = 0; f < 3; f++)
			if (stat[f][0] != stat[f][2])
				ADD(add_range(&warn, &items, labels[f], stat[f],
					      f > 0));
	}
	if (items) {
		ADD(mt_buf_add_str(b, "memtrace-run: warning: the runs differ in "));
		ADD(mt_buf_add(b, warn.data, warn.len));
		ADD(mt_buf_add_str(b, "; a deterministic workload gives the "
				      "same every run\n"));
	}
cleanup:
	mt_mem_free(v);
	mt_buf_release(&warn);
	return rc;
}

/*
 * The status memtrace-run ends with: the first non-zero EXIT; else, under
 * --strict, the first run whose trace is caveated (1), not evidence (2)
 * or missing (3), as the analyzer's own --strict, with the line saying
 * so into note; else 0.
 */
static int add_verdict(mt_buf_t *b, mt_buf_t *note, const run_t *runs,
		       size_t n, int strict)
{
	char line[128];
	uint64_t status = 0;

	for (size_t i = 0; i < n && !status; i++)
		status = runs[i].exit_status;
	for (size_t i = 0; i < n && strict && !status; i++) {
		const char *state = runs[i].state;
		int len = 0;

		if (!strcmp(state, "summary_written")) {
			if (strcmp(runs[i].status, "complete")) {
				status = 1;
				len = snprintf(line, sizeof(line), "run %zu's trace "
					       "is %s", i + 1, runs[i].status);
			}
		} else if (!strcmp(state, "capture_missing")) {
			status = 3;
			len = snprintf(line, sizeof(line), "run %zu left no trace",
				       i + 1);
		} else if (strcmp(state, "workload_failed")) {
			status = 2;
			len = snprintf(line, sizeof(line), "run %zu's trace is not "
				       "valid memtrace evidence", i + 1);
		}
		if (len && (mt_buf_add_str(note, "memtrace-run: --strict: ") ||
			    mt_buf_add(note, line, (size_t)len) ||
			    mt_buf_add_str(note, "\n")))
			return MT_ENOMEM;
	}
	return mt_buf_add_u64(b, status) || mt_buf_add_str(b, "\n") ?
		       MT_ENOMEM : MT_OK;
}

int mt_run_lines_table(const char *path, const char *name, const char *rows,
		       int flags, mt_buf_t *out, int *err, char *why, size_t cap)
{
	mt_buf_t note = MT_BUF_INIT;
	mt_reader_t reader;
	mt_line_t line;
	run_t *runs = NULL;
	size_t n = 0, runs_cap = 0;
	int rc, got;

	if ((rc = mt_reader_open(&reader, path))) {
		*err = errno;
		return rc == MT_ENOMEM ? MT_ENOMEM : MT_EIO;
	}
	while ((got = mt_reader_next(&reader, &line)) > 0) {
		char text[160];

		if (n == runs_cap) {
			size_t c = runs_cap ? runs_cap * 2 : 16;
			run_t *r = mt_mem_realloc(runs, c * sizeof(*r));

			if (!r) {
				rc = MT_ENOMEM;
				goto cleanup;
			}
			runs = r;
			runs_cap = c;
		}
		if (line.too_long || line.len >= sizeof(text) ||
		    memchr(line.data, '\0', line.len) ||
		    (memcpy(text, line.data, line.len), text[line.len] = '\0',
		     parse_figures(text, &runs[n]))) {
			snprintf(why, cap, "line %llu is not a run's figures "
				 "(EXIT STATE [STATUS ALLOCATIONS PEAK LIVE])",
				 (unsigned long long)line.number);
			rc = MT_ECORRUPT;
			goto cleanup;
		}
		n++;
	}
	if (got == MT_ENOMEM) {
		rc = MT_ENOMEM;
	} else if (got < 0) {
		*err = got == MT_EIO ? errno : EIO;
		rc = MT_EIO;
	} else if (!n) {
		snprintf(why, cap, "it holds no run's figures");
		rc = MT_ECORRUPT;
	} else if (!(rc = (flags & MT_RUN_LINES_VERDICT) ?
				  add_verdict(out, &note, runs, n,
					      flags & MT_RUN_LINES_STRICT) : MT_OK) &&
		   !(rc = (flags & MT_RUN_LINES_QUIET) ? MT_OK :
				  render_table(out, runs, n, name, rows))) {
		rc = mt_buf_add(out, note.data, note.len);
	}
cleanup:
	mt_buf_release(&note);
	mt_mem_free(runs);
	mt_reader_release(&reader);
	return rc;
}

/* ---- the out-of-memory sweep ---- */

/* The failed allocation's stack from the heap's frames. */
static int add_stack(mt_buf_t *b, const mt_heap_t *h, uint64_t id)
{
	mt_stack_t **sp = id ? mt_map_find(&h->stacks, id) : NULL;
	const mt_stack_t *s = sp ? *sp : NULL;
	mt_profile_frame_t frames[OOM_FRAMES];
	mt_profile_site_t site = { .stack_id = id, .frames = frames };

	if (!s || !s->nframes)
		return mt_buf_add_str(b, "(no stack recorded)\n");
	site.nframes = s->nframes;
	for (size_t i = 0; i < s->nframes && i < OOM_FRAMES; i++) {
		const mt_frame_t *f = mt_map_find(&h->frames, s->frames[i]);

		mt_profile_frame_of(&frames[i], f);
	}
	return mt_profile_add_frames(b, NULL, &site, OOM_FRAMES) ||
	       mt_buf_add_str(b, "\n") ? MT_ENOMEM : MT_OK;
}

int mt_run_lines_oom(const char *path, uint64_t n, mt_buf_t *out, int *found,
		     int *err)
{
	mt_reader_t reader;
	mt_line_t line;
	mt_parser_t parser;
	mt_analysis_t a;
	mt_event_t ev;
	char key[40];
	size_t klen;
	int rc, got, have_event = 0, have_parser = 0;

	*found = 0;
	klen = (size_t)snprintf(key, sizeof(key), "\"fail_at\":%llu,",
				(unsigned long long)n);
	if ((rc = mt_reader_open(&reader, path))) {
		*err = errno;
		return rc == MT_ENOMEM ? MT_ENOMEM : MT_EIO;
	}
	if ((rc = mt_parser_init(&parser)))
		goto cleanup;
	have_parser = 1;
	/* The first line that names allocation n, as the preload writes it. */
	while ((got = mt_reader_next(&reader, &line)) > 0) {
		if (!memmem(line.data, line.len, key, klen))
			continue;
		have_event = memmem(line.data, line.len,
				    "\"kind\":\"alloc.fail\"", 19) &&
			     mt_parser_parse(&parser, line.data, line.len,
					     &ev) == MT_PARSE_OK &&
			     ev.kind == MT_KIND_ALLOC_FAIL;
		break;
	}
	if (got == MT_ENOMEM) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	if (got < 0) {
		*err = got == MT_EIO ? errno : EIO;
		rc = MT_EIO;
		goto cleanup;
	}
	if (!have_event)
		goto cleanup;
	ADD(mt_buf_add_str(out, mt_event_fn_name(ev.fn)));
	ADD(mt_buf_add_str(out, " of "));
	ADD(mt_units_add_size(out, ev.size));
	ADD(mt_buf_add_str(out, "\n"));
	/* The frames and the stack, wherever the trace declares them. */
	rc = mt_analysis_run(&a, path);
	if (rc == MT_EIO)
		*err = a.error_errno;
	if (!rc)
		rc = add_stack(out, &a.heap,
			       ev.has & MT_HAS_STACK ? ev.stack : 0);
	mt_analysis_release(&a);
	*found = !rc;
cleanup:
	if (have_parser)
		mt_parser_release(&parser);
	mt_reader_release(&reader);
	return rc;
}

/* ---- a sweep run's lines ---- */

int mt_run_lines_oom_line(const mt_run_lines_oom_run_t *r, mt_buf_t *out, int *err)
{
	mt_buf_t fail = MT_BUF_INIT;
	char what[64], result[96];
	const char *call, *stack = NULL, *kind;
	int found = 0, rc;

	if ((rc = mt_run_lines_oom(r->trace, r->n, &fail, &found, err)))
		goto cleanup;
	if (found) {
		/* Two lines, "CALL\nSTACK\n": split in place. */
		char *nl;

		call = fail.data;
		nl = strchr(fail.data, '\n');
		*nl = '\0';
		stack = nl + 1;
		if ((nl = strchr(nl + 1, '\n')))
			*nl = '\0';
	} else {
		snprintf(what, sizeof(what), "no allocation %llu to fail",
			 (unsigned long long)r->n);
		call = what;
	}
	if (r->stopped) {
		kind = "stopped";
		snprintf(result, sizeof(result),
			 "stopped (memtrace-run was interrupted)");
	} else if (r->hung) {
		kind = "hang";
		snprintf(result, sizeof(result), "timed out after %s s (hang)",
			 r->hung);
	} else if (r->signal) {
		kind = "crash";
		snprintf(result, sizeof(result), "killed by SIG%s (crash)",
			 r->signal);
	} else {
		kind = r->exit ? "error" : "clean";
		snprintf(result, sizeof(result), "exit %llu (%s)",
			 (unsigned long long)r->exit, kind);
	}
	ADD(mt_buf_add_str(out, found ? "fail " : "none "));
	ADD(mt_buf_add_str(out, kind));
	ADD(mt_buf_add_str(out, "\n"));
	if (r->quiet && (!strcmp(kind, "clean") || !strcmp(kind, "error")))
		goto cleanup;
	ADD(mt_buf_add_str(out, "N="));
	ADD(mt_buf_add_u64(out, r->n));
	ADD(mt_buf_add_str(out, " "));
	ADD(mt_buf_add_str(out, call));
	ADD(mt_buf_add_str(out, ": "));
	ADD(mt_buf_add_str(out, result));
	ADD(mt_buf_add_str(out, "\n"));
	if (strcmp(kind, "crash") && strcmp(kind, "hang"))
		goto cleanup;
	if (stack) {
		ADD(mt_buf_add_str(out, "    at "));
		ADD(mt_buf_add_str(out, stack));
		ADD(mt_buf_add_str(out, "\n"));
	}
	ADD(mt_buf_add_str(out, "    trace "));
	ADD(mt_buf_add_str(out, r->trace));
	ADD(mt_buf_add_str(out, ", output "));
	ADD(mt_buf_add_str(out, r->log));
	ADD(mt_buf_add_str(out, "\n"));
cleanup:
	mt_buf_release(&fail);
	return rc;
}
