/*
 * mt_profile: totals and sites of a trace or a summary file.  A trace is
 * read once, through mt_analysis_run, never by a second reader; a summary
 * file is judged as strictly as the analyzer writes it, so a file that is
 * not ours is refused with the line at fault, never half read.
 */
#include "../gates/mt_profile.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/mt_demangle.h"
#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../parse/mt_scan.h"
#include "../parse/mt_parse.h"
#include "../base/mt_units.h"
#include "../read/mt_reader.h"
#include "../../common/mt_utf8.h"

static const char *const field_names[MT_PF_COUNT] = {
	[MT_PF_EVENTS] = "events",
	[MT_PF_THREADS] = "threads",
	[MT_PF_ALLOCATIONS] = "allocations",
	[MT_PF_FREES] = "frees",
	[MT_PF_RESIZES] = "resizes",
	[MT_PF_REMAPS] = "remaps",
	[MT_PF_FAILED_ALLOCATIONS] = "failed_allocations",
	[MT_PF_UNKNOWN_FREES] = "unknown_frees",
	[MT_PF_OVERLAPPING_ALLOCS] = "overlapping_allocs",
	[MT_PF_MALFORMED_EVENTS] = "malformed_events",
	[MT_PF_BYTES_ALLOCATED] = "bytes_allocated",
	[MT_PF_BYTES_FREED] = "bytes_freed",
	[MT_PF_LIVE_ALLOCATIONS] = "live_allocations",
	[MT_PF_LIVE_BYTES] = "live_bytes",
	[MT_PF_PEAK_LIVE_BYTES] = "peak_live_bytes",
	[MT_PF_PEAK_LIVE_ALLOCATIONS] = "peak_live_allocations",
	[MT_PF_PEAK_SEQ] = "peak_seq",
	[MT_PF_TEMPORARY_ALLOCATIONS] = "temporary_allocations",
	[MT_PF_DURATION_NS] = "duration_ns",
};

#define SUMMARY_SCHEMA "memtrace.summary/v1"
#define SITE_SCHEMA "memtrace.site/v1"
#define REPETITION_SCHEMA "tiny.profiling.allocation-repetition/v1"

const char *mt_profile_field_name(mt_profile_field_t f)
{
	return f < MT_PF_COUNT ? field_names[f] : NULL;
}

static void set_invalid(mt_profile_t *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_invalid(mt_profile_t *p, const char *fmt, ...)
{
	va_list ap;

	p->invalid = 1;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
}

/* ---- json-c ---- */

void *mt_profile_json_tokener(void)
{
	struct json_tokener *tok = json_tokener_new();

	if (tok)
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	return tok;
}

void mt_profile_json_tokener_free(void *tok)
{
	if (tok)
		json_tokener_free(tok);
}

int mt_profile_json_line(void *tokp, const char *line, size_t len,
			 struct json_object **out, const char **why)
{
	struct json_tokener *tok = tokp;
	struct json_object *o;
	size_t end;

	*out = NULL;
	*why = NULL;
	if (memchr(line, '\0', len)) {
		*why = "it contains a NUL byte";
		return MT_OK;
	}
	/* What the trace reader refuses (mt_parse_json_c() says why), a
	 * summary file may not smuggle into diff's rows either. */
	if (!mt_utf8_valid(line, len)) {
		*why = "it is not valid UTF-8";
		return MT_OK;
	}
	json_tokener_reset(tok);
	/* json-c reports no allocation failure: errno is the witness. */
	errno = 0;
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (errno == ENOMEM) {
		if (o)
			json_object_put(o);
		return MT_ENOMEM;
	}
	if (!o) {
		*why = "it is not valid JSON";
		return MT_OK;
	}
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
		if (!strchr(" \t\r", line[end])) {
			*why = "it has bytes after its JSON value";
			json_object_put(o);
			return MT_OK;
		}
	if (!json_object_is_type(o, json_type_object)) {
		*why = "it is not a JSON object";
		json_object_put(o);
		return MT_OK;
	}
	if (mt_parse_number_out_of_range(line, len)) {
		*why = "a number is out of range";
		json_object_put(o);
		return MT_OK;
	}
	*out = o;
	return MT_OK;
}

/* A non-negative integer field; -1 when absent or anything else. */
static int get_u64(struct json_object *o, const char *key, uint64_t *v)
{
	struct json_object *f;

	if (!json_object_object_get_ex(o, key, &f) ||
	    !json_object_is_type(f, json_type_int) ||
	    json_object_get_int64(f) < 0)
		return -1;
	*v = json_object_get_uint64(f);
	return 0;
}

/* A string or null field; -1 when absent or anything else. */
static int get_str_or_null(struct json_object *o, const char *key,
			   const char **s)
{
	struct json_object *f;

	if (!json_object_object_get_ex(o, key, &f))
		return -1;
	if (!f) { /* json-c's null */
		*s = NULL;
		return 0;
	}
	if (!json_object_is_type(f, json_type_string))
		return -1;
	*s = json_object_get_string(f);
	return 0;
}

static const char *schema_of(struct json_object *o)
{
	const char *s = NULL;

	if (get_str_or_null(o, "schema", &s))
		return NULL;
	return s;
}

static int known_status(const char *s)
{
	if (!strcmp(s, "complete"))
		return 1;
	for (int c = 0; c < MT_CAVEAT_COUNT; c++)
		if (!strcmp(s, mt_integrity_caveat_name((mt_caveat_t)c)))
			return 1;
	return 0;
}

int mt_profile_read_summary(struct json_object *obj,
			    uint64_t total[MT_PF_COUNT], const char **status,
			    const char **message, char *why, size_t cap)
{
	const char *schema = schema_of(obj);

	if (!schema || strcmp(schema, SUMMARY_SCHEMA)) {
		snprintf(why, cap, "its schema is not \"%s\"", SUMMARY_SCHEMA);
		return -1;
	}
	if (get_str_or_null(obj, "status", status) || !*status ||
	    !known_status(*status)) {
		snprintf(why, cap, "its \"status\" is not a memtrace status");
		return -1;
	}
	if (get_str_or_null(obj, "message", message)) {
		snprintf(why, cap, "its \"message\" is not a string or null");
		return -1;
	}
	for (int f = 0; f < MT_PF_COUNT; f++)
		if (get_u64(obj, field_names[f], &total[f])) {
			snprintf(why, cap, "its \"%s\" is missing or not a "
				 "whole number", field_names[f]);
			return -1;
		}
	return 0;
}

/* ---- sites for a person ---- */

int mt_profile_add_sampled_note(mt_buf_t *b, const char *who, uint64_t bytes)
{
	if (!bytes)
		return MT_OK;
	if (mt_buf_add_str(b, "note: ") || mt_buf_add_str(b, who) ||
	    mt_buf_add_str(b, " is sampled (one allocation recorded per ") ||
	    mt_units_add_size(b, bytes) ||
	    mt_buf_add_str(b, " allocated, on average): its figures are estimates\n"))
		return MT_ENOMEM;
	return MT_OK;
}

const char *mt_profile_module_name(const char *module)
{
	const char *slash = strrchr(module, '/');

	return slash && slash[1] ? slash + 1 : module;
}

void mt_profile_frame_of(mt_profile_frame_t *f, const mt_frame_t *tf)
{
	f->symbol = tf ? tf->symbol : NULL;
	f->module = tf ? tf->module : NULL;
	f->has_offset = tf && !tf->symbol && (tf->has & MT_HAS_MODULE_OFFSET);
	f->offset = f->has_offset ? tf->module_offset : 0;
	f->trace_frame = NULL;
	f->frame_id = 0;
}

/* A frame as every one-line list names it: its symbol and its module's
 * file name, or, without a symbol, "0xOFFSET in MODULE" as the flame
 * graph names it (mt_flame_add_frame()). */
static int add_frame(mt_buf_t *b, const mt_profile_frame_t *f)
{
	const char *module = f->module ? mt_profile_module_name(f->module) : "?";

	if (!f->symbol && f->has_offset)
		return mt_buf_add_hex(b, f->offset) ||
		       mt_buf_add_str(b, " in ") || mt_buf_add_str(b, module) ?
			       MT_ENOMEM : MT_OK;
	return mt_demangle_add(b, f->symbol ? f->symbol : "?") ||
	       mt_buf_add_str(b, " (") || mt_buf_add_str(b, module) ||
	       mt_buf_add_str(b, ")") ? MT_ENOMEM : MT_OK;
}

/* Level k of frame f, resolved as loc: the level's function and the
 * module, or the frame as add_frame() names it when no function is
 * known at its own level. */
static int add_level(mt_buf_t *b, const mt_profile_frame_t *f,
		     const mt_srcline_loc_t *loc, size_t k)
{
	mt_srcline_level_t l = mt_srcline_level(loc, k);
	const char *module = f->module ? mt_profile_module_name(f->module) : "?";

	if (!l.function && !l.inlined)
		return add_frame(b, f);
	return mt_srcline_add_clean(b, l.function ? l.function : "??") ||
	       mt_buf_add_str(b, " (") || mt_buf_add_str(b, module) ||
	       mt_buf_add_str(b, ")") ? MT_ENOMEM : MT_OK;
}

int mt_profile_add_frames(mt_buf_t *b, const mt_profile_t *p,
			  const mt_profile_site_t *s, size_t max)
{
	mt_srcline_t *lines = p ? p->srclines : NULL;
	size_t mark = b->len, shown = 0, total = 0;
	int rc = MT_OK;

	if (!s->nframes)
		return mt_buf_add_str(b, "(no stack)");
	for (size_t i = 0; i < s->nframes; i++) {
		const mt_profile_frame_t *f = &s->frames[i];
		mt_srcline_loc_t loc = { 0 };
		size_t n = 1;

		if (lines && f->trace_frame) {
			if ((rc = mt_srcline_resolve(lines, f->frame_id,
						     f->trace_frame, &loc)))
				goto cleanup;
			n = mt_srcline_nlevels(&loc);
		}
		for (size_t k = 0; k < n; k++, total++) {
			if (shown == max)
				continue;
			if ((shown && (rc = mt_buf_add_str(b, " < "))) ||
			    (rc = lines && f->trace_frame ? add_level(b, f, &loc, k) :
							     add_frame(b, f)))
				goto cleanup;
			shown++;
		}
	}
	if (total > shown &&
	    ((rc = mt_buf_add_str(b, " < ... (")) ||
	     (rc = mt_buf_add_u64(b, total - shown)) ||
	     (rc = mt_buf_add_str(b, " more)"))))
		goto cleanup;
cleanup:
	if (rc)
		mt_buf_truncate(b, mark);
	return rc;
}

/* ---- a trace ---- */

/* As `memtrace summary --include-zero-live` lists them, so that a trace
 * and its summary file give the same sites. */
static int site_active(const mt_site_t *s)
{
	return s->live_bytes || s->allocations || s->bytes_allocated;
}

static int cmp_site(const void *x, const void *y)
{
	const mt_profile_site_t *a = x, *b = y;

	if (a->live_bytes != b->live_bytes)
		return a->live_bytes > b->live_bytes ? -1 : 1;
	if (a->bytes_allocated != b->bytes_allocated)
		return a->bytes_allocated > b->bytes_allocated ? -1 : 1;
	return a->stack_id < b->stack_id ? -1 : a->stack_id > b->stack_id;
}

static void take_site(mt_profile_site_t *out, const mt_heap_t *h, uint64_t id,
		      const mt_site_t *s, uint64_t calls)
{
	out->stack_id = id;
	out->allocations = s->allocations;
	out->calls = calls;
	out->bytes_allocated = s->bytes_allocated;
	out->live_allocations = s->live_allocations;
	out->live_bytes = s->live_bytes;
	out->peak_live_bytes = s->peak_live_bytes;
	out->at_peak = mt_heap_site_at_peak(h, s);
	out->nframes = 0;
	out->frames = NULL;
}

static int load_trace(mt_profile_t *p, const char *path, const char *allocator)
{
	const mt_heap_t *h;
	const mt_integrity_t *ig;
	size_t nsites = 0, nframes = 0, pos = 0, used = 0;
	uint64_t key;
	void *v;
	int rc;

	p->source = MT_PROFILE_TRACE;
	p->have_analysis = 1;
	rc = mt_analysis_run_allocator(&p->analysis, path, allocator, NULL, NULL);
	if (rc == MT_EIO)
		p->error_errno = p->analysis.error_errno;
	if (rc)
		return rc;
	h = &p->analysis.heap;
	ig = &p->analysis.integrity;
	if (ig->invalid) {
		set_invalid(p, "%s", ig->invalid_message);
		return MT_OK;
	}
	p->status = mt_integrity_status(ig);
	p->message = mt_integrity_message(ig);
	p->total[MT_PF_EVENTS] = h->events;
	p->total[MT_PF_THREADS] = mt_heap_threads(h);
	p->total[MT_PF_ALLOCATIONS] = h->allocations;
	p->total[MT_PF_FREES] = h->frees;
	p->total[MT_PF_RESIZES] = h->resizes;
	p->total[MT_PF_REMAPS] = h->remaps;
	p->total[MT_PF_FAILED_ALLOCATIONS] = h->failed_allocations;
	p->total[MT_PF_UNKNOWN_FREES] = h->unknown_frees;
	p->total[MT_PF_OVERLAPPING_ALLOCS] = h->overlapping_allocs;
	p->total[MT_PF_MALFORMED_EVENTS] = ig->malformed;
	p->total[MT_PF_BYTES_ALLOCATED] = h->bytes_allocated;
	p->total[MT_PF_BYTES_FREED] = h->bytes_freed;
	p->total[MT_PF_LIVE_ALLOCATIONS] = h->live_allocations;
	p->total[MT_PF_LIVE_BYTES] = h->live_bytes;
	p->total[MT_PF_PEAK_LIVE_BYTES] = h->peak_live_bytes;
	p->total[MT_PF_PEAK_LIVE_ALLOCATIONS] = h->peak_live_allocations;
	p->total[MT_PF_PEAK_SEQ] = h->peak_seq;
	p->total[MT_PF_TEMPORARY_ALLOCATIONS] = h->temporary_allocations;
	p->total[MT_PF_DURATION_NS] = h->duration_ns;
	p->sample_bytes = h->sample_bytes;
	p->has_at_peak = 1;
	if (!(p->srclines = mt_mem_malloc(sizeof(*p->srclines))))
		return MT_ENOMEM;
	mt_srcline_init(p->srclines);
	p->srclines->names_only = 1;

	while (mt_map_iter(&h->stacks, &pos, &key, &v)) {
		const mt_stack_t *s = *(mt_stack_t **)v;

		if (site_active(mt_heap_stack_site(h, s))) {
			nsites++;
			nframes += s->nframes;
		}
	}
	nsites += site_active(&h->no_stack);
	if (!nsites)
		return MT_OK;
	p->sites = mt_mem_calloc(nsites, sizeof(*p->sites));
	if (!p->sites)
		return MT_ENOMEM;
	if (nframes) {
		p->frame_store = mt_mem_calloc(nframes, sizeof(*p->frame_store));
		if (!p->frame_store)
			return MT_ENOMEM;
	}
	if (site_active(&h->no_stack))
		take_site(&p->sites[p->nsites++], h, 0, &h->no_stack,
			  mt_heap_site_calls(h, NULL));
	pos = 0;
	while (mt_map_iter(&h->stacks, &pos, &key, &v)) {
		const mt_stack_t *s = *(mt_stack_t **)v;
		mt_profile_site_t *site;

		if (!site_active(mt_heap_stack_site(h, s)))
			continue;
		site = &p->sites[p->nsites++];
		take_site(site, h, s->id, mt_heap_stack_site(h, s),
			  mt_heap_site_calls(h, s));
		site->frames = p->frame_store + used;
		site->nframes = s->nframes;
		for (size_t i = 0; i < s->nframes; i++) {
			/* Every frame a stack names was declared (the heap
			 * rejects a stack that names an unknown one). */
			const mt_frame_t *f = mt_map_find(&h->frames, s->frames[i]);

			mt_profile_frame_of(&p->frame_store[used], f);
			p->frame_store[used].trace_frame = f;
			p->frame_store[used].frame_id = s->frames[i];
			used++;
		}
	}
	qsort(p->sites, p->nsites, sizeof(*p->sites), cmp_site);
	return MT_OK;
}

/* ---- a summary file ---- */

static int keep_line(mt_profile_t *p, struct json_object *o)
{
	if (p->nlines == p->lines_cap) {
		size_t cap = p->lines_cap ? p->lines_cap * 2 : 16;
		struct json_object **n = mt_mem_realloc(p->lines,
							cap * sizeof(*n));

		if (!n)
			return MT_ENOMEM;
		p->lines = n;
		p->lines_cap = cap;
	}
	p->lines[p->nlines++] = o;
	return MT_OK;
}

/* A site line's frames array, or NULL with why set. */
static struct json_object *site_frames(struct json_object *o, const char **why)
{
	struct json_object *frames;

	if (!json_object_object_get_ex(o, "frames", &frames) ||
	    !json_object_is_type(frames, json_type_array)) {
		*why = "its \"frames\" is not an array";
		return NULL;
	}
	for (size_t i = 0; i < json_object_array_length(frames); i++) {
		struct json_object *f = json_object_array_get_idx(frames, i);
		const char *s;

		if (!json_object_is_type(f, json_type_object) ||
		    get_str_or_null(f, "symbol", &s) ||
		    get_str_or_null(f, "module", &s)) {
			*why = "a frame is not an object with \"symbol\" and "
			       "\"module\" (strings or null)";
			return NULL;
		}
	}
	return frames;
}

static int read_site(struct json_object *o, mt_profile_site_t *site,
		     const char **why)
{
	static const char *const keys[] = {
		"stack_id", "allocations", "bytes_allocated",
		"live_allocations", "live_bytes", "peak_live_bytes",
	};
	uint64_t *const vals[] = {
		&site->stack_id, &site->allocations, &site->bytes_allocated,
		&site->live_allocations, &site->live_bytes,
		&site->peak_live_bytes,
	};
	const char *schema = schema_of(o);

	if (!schema || strcmp(schema, SITE_SCHEMA)) {
		*why = "it is not a site line (schema \"" SITE_SCHEMA "\")";
		return -1;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (get_u64(o, keys[i], vals[i])) {
			*why = "a count of the site line is missing or not a "
			       "whole number";
			return -1;
		}
	return site_frames(o, why) ? 0 : -1;
}

static int load_summary(mt_profile_t *p, const char *path)
{
	mt_reader_t reader;
	mt_line_t line;
	void *tok = NULL;
	size_t nframes = 0, used = 0;
	int have_reader = 0, got, rc;

	p->source = MT_PROFILE_SUMMARY;
	if ((rc = mt_reader_open(&reader, path))) {
		p->error_errno = errno;
		return rc;
	}
	have_reader = 1;
	if (!(tok = mt_profile_json_tokener())) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	while ((got = mt_reader_next(&reader, &line)) > 0) {
		struct json_object *o;
		const char *why;

		if (line.too_long) {
			set_invalid(p, "line %llu is longer than %u bytes",
				    (unsigned long long)line.number,
				    MT_READER_LINE_MAX);
			goto cleanup;
		}
		if (!line.terminated) {
			set_invalid(p, "line %llu is cut off: it does not end "
				    "in a newline", (unsigned long long)line.number);
			goto cleanup;
		}
		if ((rc = mt_profile_json_line(tok, line.data, line.len, &o, &why)))
			goto cleanup;
		if (!o) {
			set_invalid(p, "line %llu is not a summary or site line: %s",
				    (unsigned long long)line.number, why);
			goto cleanup;
		}
		if ((rc = keep_line(p, o))) {
			json_object_put(o);
			goto cleanup;
		}
	}
	if (got == MT_ECORRUPT) {
		rc = MT_OK;
		if (reader.line_no)
			set_invalid(p, "%s (after line %llu)", mt_reader_why(&reader),
				    (unsigned long long)reader.line_no);
		else
			set_invalid(p, "%s", mt_reader_why(&reader));
		goto cleanup;
	}
	if (got < 0) {
		p->error_errno = errno;
		rc = got == MT_ENOMEM ? MT_ENOMEM : MT_EIO;
		goto cleanup;
	}
	rc = MT_OK;
	{
		const char *unit;
		uint64_t at;

		/* A summary is whole or nothing: a compressed one cut off is
		 * not one. */
		if (mt_reader_cut(&reader, &unit, &at)) {
			set_invalid(p, "its %s stream is cut off inside its %s "
				    "at byte %llu", mt_reader_format(&reader),
				    unit, (unsigned long long)at);
			goto cleanup;
		}
	}
	if (!p->nlines) {
		/* The first line named the summary schema, and is gone. */
		set_invalid(p, "the file changed while it was read");
		goto cleanup;
	}
	if (mt_profile_read_summary(p->lines[0], p->total, &p->status,
				    &p->message, p->why, sizeof(p->why))) {
		char why[MT_PROFILE_WHY_MAX];

		memcpy(why, p->why, sizeof(why));
		set_invalid(p, "line 1 is not a summary line: %s", why);
		goto cleanup;
	}
	/* Absent from an unsampled summary; anything but a positive whole
	 * number reads as absent, as in a trace.start. */
	if (get_u64(p->lines[0], "sample_bytes", &p->sample_bytes))
		p->sample_bytes = 0;
	if (p->nlines > 1) {
		p->sites = mt_mem_calloc(p->nlines - 1, sizeof(*p->sites));
		if (!p->sites) {
			rc = MT_ENOMEM;
			goto cleanup;
		}
	}
	for (size_t i = 1; i < p->nlines; i++) {
		const char *why;

		if (read_site(p->lines[i], &p->sites[i - 1], &why)) {
			set_invalid(p, "line %zu is not a site line: %s", i + 1, why);
			goto cleanup;
		}
		/* The line does not count the site's reallocs. */
		p->sites[i - 1].calls = p->sites[i - 1].allocations;
		p->sites[i - 1].nframes = json_object_array_length(
			site_frames(p->lines[i], &why));
		nframes += p->sites[i - 1].nframes;
	}
	p->nsites = p->nlines - 1;
	if (nframes) {
		p->frame_store = mt_mem_calloc(nframes, sizeof(*p->frame_store));
		if (!p->frame_store) {
			rc = MT_ENOMEM;
			goto cleanup;
		}
	}
	for (size_t i = 0; i < p->nsites; i++) {
		const char *why;
		struct json_object *frames = site_frames(p->lines[i + 1], &why);

		p->sites[i].frames = p->frame_store + used;
		for (size_t k = 0; k < p->sites[i].nframes; k++) {
			struct json_object *f = json_object_array_get_idx(frames, k);

			mt_profile_frame_t *pf = &p->frame_store[used];
			const char *off = NULL;

			get_str_or_null(f, "symbol", &pf->symbol);
			get_str_or_null(f, "module", &pf->module);
			/* A site line's offset is the module's when the frame
			 * has no symbol (format.md, section 4). */
			if (!pf->symbol && !get_str_or_null(f, "offset", &off) && off &&
			    !mt_scan_hex(off, strlen(off), &pf->offset))
				pf->has_offset = 1;
			used++;
		}
	}
cleanup:
	mt_profile_json_tokener_free(tok);
	if (have_reader)
		mt_reader_release(&reader);
	return rc;
}

/* ---- which kind of file ---- */

typedef enum { KIND_TRACE, KIND_SUMMARY, KIND_OTHER } kind_t;

/*
 * What the first line says the file is: a summary line, another JSON row
 * of ours (*what names it), or anything else, which the trace reader
 * judges.  Reads one line; the analysis opens the file afresh.
 */
static int peek_kind(const char *path, kind_t *kind, const char **what,
		     int *error_errno)
{
	mt_reader_t reader;
	mt_line_t line;
	struct json_object *o = NULL;
	void *tok = NULL;
	const char *why, *schema;
	int rc, got;

	*kind = KIND_TRACE;
	if (!strcmp(path, "-"))
		return MT_OK;
	if ((rc = mt_reader_open(&reader, path))) {
		*error_errno = errno;
		return rc;
	}
	got = mt_reader_next(&reader, &line);
	if (got == MT_ECORRUPT)
		got = 0; /* a trace, for the analysis to judge */
	if (got < 0) {
		*error_errno = errno;
		rc = got == MT_ENOMEM ? MT_ENOMEM : MT_EIO;
		goto cleanup;
	}
	rc = MT_OK;
	if (got == 0 || line.too_long)
		goto cleanup;
	if (!(tok = mt_profile_json_tokener())) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	if ((rc = mt_profile_json_line(tok, line.data, line.len, &o, &why)) || !o)
		goto cleanup;
	if (!(schema = schema_of(o)))
		goto cleanup;
	if (!strcmp(schema, SUMMARY_SCHEMA)) {
		*kind = KIND_SUMMARY;
	} else {
		*kind = KIND_OTHER;
		*what = !strcmp(schema, REPETITION_SCHEMA) ?
				"a repetitions file (read it with "
				"'memtrace repetitions')" :
			!strcmp(schema, SITE_SCHEMA) ?
				"a site line without its summary line" :
				"a JSON row of another schema";
	}
cleanup:
	if (o)
		json_object_put(o);
	mt_profile_json_tokener_free(tok);
	mt_reader_release(&reader);
	return rc;
}

int mt_profile_load(mt_profile_t *p, const char *path)
{
	return mt_profile_load_allocator(p, path, NULL);
}

int mt_profile_load_allocator(mt_profile_t *p, const char *path,
			      const char *allocator)
{
	const char *what = NULL;
	kind_t kind;
	int rc;

	memset(p, 0, sizeof(*p));
	if ((rc = peek_kind(path, &kind, &what, &p->error_errno)))
		return rc;
	if (kind == KIND_OTHER) {
		set_invalid(p, "it is %s, not a trace or a summary", what);
		return MT_OK;
	}
	if (kind == KIND_SUMMARY)
		return load_summary(p, path);
	return load_trace(p, path, allocator);
}

const mt_heap_t *mt_profile_heap(const mt_profile_t *p)
{
	return p->have_analysis ? &p->analysis.heap : NULL;
}

void mt_profile_release(mt_profile_t *p)
{
	for (size_t i = 0; i < p->nlines; i++)
		json_object_put(p->lines[i]);
	mt_mem_free(p->lines);
	mt_mem_free(p->sites);
	mt_mem_free(p->frame_store);
	if (p->srclines) {
		mt_srcline_release(p->srclines);
		mt_mem_free(p->srclines);
	}
	if (p->have_analysis)
		mt_analysis_release(&p->analysis);
	memset(p, 0, sizeof(*p));
}
