/*
 * mt_summary: JSON rendering of summary, site and verdict lines.  It must
 * never write a line longer than MT_SUMMARY_LINE_MAX, nor half a line.
 */
#include "../rows/mt_summary.h"

#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

static int add_field_u64(mt_buf_t *b, const char *key, uint64_t v)
{
	int rc = mt_buf_add_str(b, key);

	return rc ? rc : mt_buf_add_u64(b, v);
}

static int add_caveats(mt_buf_t *b, const mt_integrity_t *ig)
{
	int rc, first = 1;

	if ((rc = mt_buf_add_str(b, "[")))
		return rc;
	for (int c = 0; c < MT_CAVEAT_COUNT; c++) {
		if (!(ig->caveats & (1u << c)))
			continue;
		if (!first && (rc = mt_buf_add_str(b, ",")))
			return rc;
		first = 0;
		if ((rc = mt_buf_add_json_cstr_or_null(
			     b, mt_integrity_caveat_name((mt_caveat_t)c))))
			return rc;
	}
	return mt_buf_add_str(b, "]");
}

static int cmp_allocator(const void *x, const void *y)
{
	const mt_allocator_t *a = *(mt_allocator_t *const *)x;
	const mt_allocator_t *b = *(mt_allocator_t *const *)y;

	return a->id < b->id ? -1 : a->id > b->id;
}

/* The allocators to list, by id.  *out is NULL when there are none. */
static int collect_allocators(const mt_heap_t *h, int include_zero_live,
			      mt_allocator_t ***out, size_t *n)
{
	size_t pos = 0, count = 0;
	uint64_t key;
	void *v;
	mt_allocator_t **list;

	*out = NULL;
	*n = 0;
	if (!mt_map_count(&h->allocators))
		return MT_OK;
	list = mt_mem_malloc(mt_map_count(&h->allocators) * sizeof(*list));
	if (!list)
		return MT_ENOMEM;
	while (mt_map_iter(&h->allocators, &pos, &key, &v)) {
		mt_allocator_t *a = *(mt_allocator_t **)v;

		if (include_zero_live || a->live_bytes)
			list[count++] = a;
	}
	qsort(list, count, sizeof(*list), cmp_allocator);
	*out = list;
	*n = count;
	return MT_OK;
}

/* A sampled summary's "<figure>_stderr" fields, in its figures' order. */
static int add_stderrs(mt_buf_t *line, const mt_heap_t *h)
{
	const struct {
		const char *key;
		mt_sampling_var_t var;
	} f[] = {
		{ ",\"allocations_stderr\":", h->var.allocations },
		{ ",\"frees_stderr\":", h->var.frees },
		{ ",\"resizes_stderr\":", h->var.resizes },
		{ ",\"remaps_stderr\":", h->var.remaps },
		{ ",\"bytes_allocated_stderr\":", h->var.bytes_allocated },
		{ ",\"bytes_freed_stderr\":", h->var.bytes_freed },
		{ ",\"live_allocations_stderr\":", h->var.live_allocations },
		{ ",\"live_bytes_stderr\":", h->var.live_bytes },
		{ ",\"peak_live_bytes_stderr\":", h->var.peak_live_bytes },
		{ ",\"peak_live_allocations_stderr\":", h->var.peak_live_allocations },
	};
	int rc = MT_OK;

	for (size_t i = 0; !rc && i < sizeof(f) / sizeof(f[0]); i++)
		rc = add_field_u64(line, f[i].key, mt_sampling_stderr(f[i].var));
	return rc;
}

static int render_summary_line(const mt_analysis_t *a, int include_zero_live,
			       mt_buf_t *line)
{
	const mt_heap_t *h = &a->heap;
	const mt_integrity_t *ig = &a->integrity;
	mt_allocator_t **list = NULL;
	size_t n = 0;
	int rc;

	ADD(mt_buf_add_str(line, "{\"schema\":\"memtrace.summary/v1\",\"status\":"));
	ADD(mt_buf_add_json_cstr_or_null(line, mt_integrity_status(ig)));
	ADD(mt_buf_add_str(line, ",\"message\":"));
	ADD(mt_buf_add_json_cstr_or_null(line, mt_integrity_message(ig)));
	ADD(mt_buf_add_str(line, ",\"caveats\":"));
	ADD(add_caveats(line, ig));
	ADD(add_field_u64(line, ",\"format_version\":", 1));
	ADD(add_field_u64(line, ",\"events\":", h->events));
	ADD(add_field_u64(line, ",\"threads\":", mt_heap_threads(h)));
	ADD(add_field_u64(line, ",\"allocations\":", h->allocations));
	ADD(add_field_u64(line, ",\"frees\":", h->frees));
	ADD(add_field_u64(line, ",\"resizes\":", h->resizes));
	ADD(add_field_u64(line, ",\"remaps\":", h->remaps));
	ADD(add_field_u64(line, ",\"failed_allocations\":", h->failed_allocations));
	ADD(add_field_u64(line, ",\"unknown_frees\":", h->unknown_frees));
	ADD(add_field_u64(line, ",\"overlapping_allocs\":", h->overlapping_allocs));
	ADD(add_field_u64(line, ",\"malformed_events\":", ig->malformed));
	ADD(add_field_u64(line, ",\"bytes_allocated\":", h->bytes_allocated));
	ADD(add_field_u64(line, ",\"bytes_freed\":", h->bytes_freed));
	ADD(add_field_u64(line, ",\"live_allocations\":", h->live_allocations));
	ADD(add_field_u64(line, ",\"live_bytes\":", h->live_bytes));
	ADD(add_field_u64(line, ",\"peak_live_bytes\":", h->peak_live_bytes));
	ADD(add_field_u64(line, ",\"peak_live_allocations\":", h->peak_live_allocations));
	ADD(add_field_u64(line, ",\"peak_seq\":", h->peak_seq));
	ADD(add_field_u64(line, ",\"temporary_allocations\":", h->temporary_allocations));
	ADD(add_field_u64(line, ",\"duration_ns\":", h->duration_ns));
	ADD(mt_buf_add_str(line, ",\"by_allocator\":["));
	ADD(collect_allocators(h, include_zero_live, &list, &n));
	for (size_t i = 0; i < n; i++) {
		const mt_allocator_t *al = list[i];
		const char *name = al->name;

		if (!name && al->id == 0)
			name = "libc";
		ADD(mt_buf_add_str(line, i ? ",{" : "{"));
		ADD(add_field_u64(line, "\"allocator_id\":", al->id));
		ADD(mt_buf_add_str(line, ",\"name\":"));
		ADD(mt_buf_add_json_cstr_or_null(line, name));
		ADD(add_field_u64(line, ",\"allocations\":", al->allocations));
		ADD(add_field_u64(line, ",\"frees\":", al->frees));
		ADD(add_field_u64(line, ",\"resizes\":", al->resizes));
		ADD(add_field_u64(line, ",\"remaps\":", al->remaps));
		ADD(add_field_u64(line, ",\"live_bytes\":", al->live_bytes));
		ADD(add_field_u64(line, ",\"peak_live_bytes\":", al->peak_live_bytes));
		ADD(mt_buf_add_str(line, "}"));
	}
	ADD(mt_buf_add_str(line, "]"));
	/* A sampled trace's figures are estimates: say of which mean, and
	 * each one's standard error (format.md 2.1). */
	if (h->sample_bytes) {
		ADD(add_field_u64(line, ",\"sample_bytes\":", h->sample_bytes));
		ADD(add_stderrs(line, h));
	}
	ADD(mt_buf_add_str(line, "}\n"));
cleanup:
	mt_mem_free(list);
	return rc;
}

typedef struct {
	uint64_t stack_id;
	const mt_site_t *site;
	const mt_stack_t *stack; /* NULL for site 0 */
} site_ref_t;

static int cmp_site(const void *x, const void *y)
{
	const site_ref_t *a = x, *b = y;

	if (a->site->live_bytes != b->site->live_bytes)
		return a->site->live_bytes > b->site->live_bytes ? -1 : 1;
	if (a->site->bytes_allocated != b->site->bytes_allocated)
		return a->site->bytes_allocated > b->site->bytes_allocated ? -1 : 1;
	return a->stack_id < b->stack_id ? -1 : a->stack_id > b->stack_id;
}

static int site_listed(const mt_site_t *s, int include_zero_live)
{
	if (s->live_bytes)
		return 1;
	return include_zero_live && (s->allocations || s->bytes_allocated);
}

static int add_frame(mt_buf_t *line, const mt_frame_t *f)
{
	uint64_t offset = f->ip;
	int rc;

	if ((f->has & MT_HAS_SYMBOL) && (f->has & MT_HAS_OFFSET))
		offset = f->offset;
	else if (f->has & MT_HAS_MODULE_OFFSET)
		offset = f->module_offset;
	if ((rc = mt_buf_add_str(line, "{\"symbol\":")) ||
	    (rc = mt_buf_add_json_cstr_or_null(line, f->symbol)) ||
	    (rc = mt_buf_add_str(line, ",\"module\":")) ||
	    (rc = mt_buf_add_json_cstr_or_null(line, f->module)) ||
	    (rc = mt_buf_add_str(line, ",\"offset\":\"")) ||
	    (rc = mt_buf_add_hex(line, offset)) ||
	    (rc = mt_buf_add_str(line, "\"}")))
		return rc;
	return MT_OK;
}

/* Room kept for what closes a site line: ],"frames_omitted":N}\n */
#define SITE_TAIL_ROOM 48

static int render_site_line(const mt_heap_t *h, const site_ref_t *ref,
			    uint64_t rank, mt_buf_t *line)
{
	const mt_site_t *s = ref->site;
	size_t nframes = ref->stack ? ref->stack->nframes : 0;
	size_t written = 0;
	int rc;

	line->limit = MT_SUMMARY_LINE_MAX - SITE_TAIL_ROOM;
	ADD(add_field_u64(line, "{\"schema\":\"memtrace.site/v1\",\"rank\":", rank));
	ADD(add_field_u64(line, ",\"stack_id\":", ref->stack_id));
	ADD(add_field_u64(line, ",\"allocations\":", s->allocations));
	ADD(add_field_u64(line, ",\"bytes_allocated\":", s->bytes_allocated));
	ADD(add_field_u64(line, ",\"live_allocations\":", s->live_allocations));
	ADD(add_field_u64(line, ",\"live_bytes\":", s->live_bytes));
	ADD(add_field_u64(line, ",\"peak_live_bytes\":", s->peak_live_bytes));
	ADD(mt_buf_add_str(line, ",\"frames\":["));
	for (; written < nframes; written++) {
		const mt_frame_t *f = mt_map_find(&h->frames,
						  ref->stack->frames[written]);
		size_t mark = line->len;

		if (written && (rc = mt_buf_add_str(line, ",")))
			goto full;
		if ((rc = add_frame(line, f)))
			goto full;
		continue;
full:
		mt_buf_truncate(line, mark);
		if (rc != MT_ETOOLONG)
			goto cleanup;
		break;
	}
	line->limit = MT_SUMMARY_LINE_MAX;
	ADD(mt_buf_add_str(line, "]"));
	if (written < nframes)
		ADD(add_field_u64(line, ",\"frames_omitted\":", nframes - written));
	ADD(mt_buf_add_str(line, "}\n"));
	rc = MT_OK;
cleanup:
	return rc;
}

/*
 * The best `cap` sites kept in refs[0..*n) as a heap whose root is the
 * worst of them, so a site better than the root replaces it.  With
 * millions of stacks and --top 10 this costs n log 10 compares instead of
 * sorting every site, and memory for cap entries instead of n.
 */
static void sift_down(site_ref_t *refs, size_t n, size_t i)
{
	for (;;) {
		size_t worst = i, l = 2 * i + 1, r = l + 1;
		site_ref_t tmp;

		if (l < n && cmp_site(&refs[l], &refs[worst]) > 0)
			worst = l;
		if (r < n && cmp_site(&refs[r], &refs[worst]) > 0)
			worst = r;
		if (worst == i)
			return;
		tmp = refs[i];
		refs[i] = refs[worst];
		refs[worst] = tmp;
		i = worst;
	}
}

static void keep_best(site_ref_t *refs, size_t *n, size_t cap, site_ref_t ref)
{
	if (*n < cap) {
		size_t i = (*n)++;

		refs[i] = ref;
		while (i && cmp_site(&refs[(i - 1) / 2], &refs[i]) < 0) {
			site_ref_t tmp = refs[i];

			refs[i] = refs[(i - 1) / 2];
			refs[(i - 1) / 2] = tmp;
			i = (i - 1) / 2;
		}
	} else if (cmp_site(&ref, &refs[0]) < 0) {
		refs[0] = ref;
		sift_down(refs, *n, 0);
	}
}

static int render_sites(const mt_analysis_t *a, uint64_t top,
			int include_zero_live, mt_buf_t *out)
{
	const mt_heap_t *h = &a->heap;
	site_ref_t *refs = NULL;
	mt_buf_t line = MT_BUF_INIT;
	size_t n = 0, pos = 0, cap = mt_map_count(&h->stacks) + 1;
	uint64_t key;
	void *v;
	int rc = MT_OK;

	if (top < cap)
		cap = (size_t)top;
	refs = mt_mem_malloc(cap * sizeof(*refs));
	if (!refs)
		return MT_ENOMEM;
	if (site_listed(&h->no_stack, include_zero_live))
		keep_best(refs, &n, cap,
			  (site_ref_t){ 0, &h->no_stack, NULL });
	while (mt_map_iter(&h->stacks, &pos, &key, &v)) {
		const mt_stack_t *s = *(mt_stack_t **)v;
		const mt_site_t *site = mt_heap_stack_site(h, s);

		if (site_listed(site, include_zero_live))
			keep_best(refs, &n, cap, (site_ref_t){ s->id, site, s });
	}
	qsort(refs, n, sizeof(*refs), cmp_site);
	for (size_t i = 0; i < n; i++) {
		mt_buf_reset(&line);
		ADD(render_site_line(h, &refs[i], i + 1, &line));
		line.limit = 0;
		ADD(mt_buf_add(out, line.data, line.len));
	}
cleanup:
	mt_buf_release(&line);
	mt_mem_free(refs);
	return rc;
}

int mt_summary_render(const mt_analysis_t *a, uint64_t top,
		      int include_zero_live, mt_buf_t *out)
{
	mt_buf_t line;
	size_t mark = out->len;
	int rc;

	mt_buf_init(&line, MT_SUMMARY_LINE_MAX);
	ADD(render_summary_line(a, include_zero_live, &line));
	ADD(mt_buf_add(out, line.data, line.len));
	if (top)
		ADD(render_sites(a, top, include_zero_live, out));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	mt_buf_release(&line);
	return rc;
}

int mt_summary_render_check(const mt_analysis_t *a, mt_buf_t *out)
{
	const mt_integrity_t *ig = &a->integrity;
	size_t mark = out->len;
	int rc;

	ADD(mt_buf_add_str(out, "{\"status\":"));
	if (ig->invalid) {
		ADD(mt_buf_add_str(out, "\"invalid\",\"message\":"));
		ADD(mt_buf_add_json_cstr_or_null(out, ig->invalid_message));
		ADD(mt_buf_add_str(out, ",\"caveats\":[]}\n"));
		goto cleanup;
	}
	ADD(mt_buf_add_json_cstr_or_null(out, mt_integrity_status(ig)));
	ADD(mt_buf_add_str(out, ",\"message\":"));
	ADD(mt_buf_add_json_cstr_or_null(out, mt_integrity_message(ig)));
	ADD(mt_buf_add_str(out, ",\"caveats\":"));
	ADD(add_caveats(out, ig));
	ADD(mt_buf_add_str(out, "}\n"));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	return rc;
}
