/*
 * mt_report: the human-readable report.  It must put the integrity
 * verdict before any figure, so that no one reads a caveated trace's
 * numbers as a whole run's, and must never write half a report.
 */
#include "../render/mt_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../model/mt_label.h"
#include "../model/mt_sites.h"
#include "../model/mt_srcline.h"
#include "../base/mt_units.h"

/* The column the totals' labels end in. */
#define LABEL_WIDTH 24

#define DEFAULT_TOP 10

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

typedef struct {
	const mt_analysis_t *a;
	mt_srcline_t lines;
	mt_buf_t *out;
	mt_suppress_left_t left; /* what suppressions left out */
	char **labels; /* each site's, in mt_sites_list()'s order */
	uint64_t live_bytes, live_allocations; /* the heap's, less left */
	mt_sampling_block_t left_var; /* the variances of what left out holds */
} report_t;

/* ---- the verdict and the totals ---- */

/* A sentence of the integrity module's, capitalized and ended. */
static int add_sentence(mt_buf_t *b, const char *s)
{
	int rc;

	if (s[0] >= 'a' && s[0] <= 'z') {
		char first = (char)(s[0] - 'a' + 'A');

		if ((rc = mt_buf_add(b, &first, 1)))
			return rc;
		s++;
	}
	if ((rc = mt_buf_add_str(b, s)))
		return rc;
	return mt_buf_add_str(b, ".");
}

static int add_integrity(report_t *r)
{
	const mt_integrity_t *ig = &r->a->integrity;
	mt_buf_t *b = r->out;
	int rc;

	if (mt_integrity_complete(ig))
		return mt_buf_add_str(b,
			"Integrity: complete\n"
			"  The trace starts and stops, with no gap, no malformed event and\n"
			"  nothing dropped: the figures below are the whole run.\n");
	ADD(mt_buf_add_str(b, "Integrity: CAVEATED ("));
	ADD(mt_buf_add_str(b, mt_integrity_status(ig)));
	ADD(mt_buf_add_str(b,
		")\n"
		"  The trace may not hold the whole run: every figure below covers\n"
		"  only what it recorded.\n"));
	for (int c = 0; c < MT_CAVEAT_COUNT; c++) {
		if (!(ig->caveats & (1u << c)))
			continue;
		ADD(mt_buf_add_str(b, "  - "));
		ADD(mt_buf_add_str(b, mt_integrity_caveat_name((mt_caveat_t)c)));
		ADD(mt_buf_add_str(b, ": "));
		ADD(add_sentence(b, ig->message[c]));
		ADD(mt_buf_add_str(b, "\n"));
	}
cleanup:
	return rc;
}

/* A sampled trace (format.md 2.1): what each figure below stands for. */
static int add_sampling(report_t *r)
{
	uint64_t bytes = r->a->heap.sample_bytes;
	mt_buf_t *b = r->out;
	int rc = MT_OK;

	if (!bytes)
		return MT_OK;
	ADD(mt_buf_add_str(b, "\nSampled: one allocation recorded per "));
	ADD(mt_units_add_size(b, bytes));
	ADD(mt_buf_add_str(b, " allocated, on average (MEMTRACE_SAMPLE="));
	ADD(mt_buf_add_u64(b, bytes));
	ADD(mt_buf_add_str(b,
		")\n"
		"  Every count and size below is an estimate: each recorded block\n"
		"  stands for the blocks of its size that sampling passed over.\n"
		"  A total's standard error follows it (+-).\n"
		"  Temporary allocations are not counted.\n"));
cleanup:
	return rc;
}

/* A sampled figure's standard error (of variance v) after it: " +- 64"
 * for a count, " +- 4.0 KiB" for a size; nothing for a full trace. */
static int add_pm(report_t *r, mt_sampling_var_t v, int size)
{
	if (!r->a->heap.sample_bytes)
		return MT_OK;
	return size ? mt_units_add_pm_size(r->out, mt_sampling_stderr(v)) :
		      mt_units_add_pm_count(r->out, mt_sampling_stderr(v));
}

static int add_totals(report_t *r)
{
	const mt_heap_t *h = &r->a->heap;
	mt_buf_t *b = r->out;
	int rc;

	ADD(mt_buf_add_str(b, "\nTotals\n"));
	ADD(mt_units_add_label(b, "duration", LABEL_WIDTH));
	if (h->duration_ns)
		ADD(mt_units_add_duration(b, h->duration_ns));
	else
		ADD(mt_buf_add_str(b, "not recorded (no event has a time)"));
	ADD(mt_buf_add_str(b, "\n"));
	ADD(mt_units_add_label(b, "events", LABEL_WIDTH));
	ADD(mt_buf_add_u64(b, h->events));
	ADD(mt_buf_add_str(b, " ("));
	ADD(mt_units_add_count(b, mt_heap_threads(h), "thread", "threads"));
	ADD(mt_buf_add_str(b, ")\n"));
	ADD(mt_units_add_label(b, "allocations", LABEL_WIDTH));
	ADD(mt_buf_add_u64(b, h->allocations));
	ADD(add_pm(r, h->var.allocations, 0));
	ADD(mt_buf_add_str(b, "\n"));
	ADD(mt_units_add_label(b, "reallocations", LABEL_WIDTH));
	ADD(mt_buf_add_u64(b, h->resizes + h->remaps));
	ADD(add_pm(r, h->var.resizes + h->var.remaps, 0));
	ADD(mt_buf_add_str(b, " ("));
	ADD(mt_buf_add_u64(b, h->resizes));
	ADD(mt_buf_add_str(b, " in place, "));
	ADD(mt_buf_add_u64(b, h->remaps));
	ADD(mt_buf_add_str(b, " moved)\n"));
	ADD(mt_units_add_label(b, "frees", LABEL_WIDTH));
	ADD(mt_buf_add_u64(b, h->frees));
	ADD(add_pm(r, h->var.frees, 0));
	ADD(mt_buf_add_str(b, "\n"));
	ADD(mt_units_add_label(b, "temporary allocations", LABEL_WIDTH));
	ADD(mt_buf_add_u64(b, h->temporary_allocations));
	ADD(mt_buf_add_str(b, " (freed before their thread's next allocation)\n"));
	ADD(mt_units_add_label(b, "failed allocations", LABEL_WIDTH));
	ADD(mt_buf_add_u64(b, h->failed_allocations));
	ADD(mt_buf_add_str(b, "\n"));
	ADD(mt_units_add_label(b, "unknown frees", LABEL_WIDTH));
	ADD(mt_buf_add_u64(b, h->unknown_frees));
	ADD(mt_buf_add_str(b, " (of blocks the trace never saw allocated)\n"));
	if (h->overlapping_allocs) {
		ADD(mt_units_add_label(b, "overlapping allocations", LABEL_WIDTH));
		ADD(mt_buf_add_u64(b, h->overlapping_allocs));
		ADD(mt_buf_add_str(b, " (of an address already live)\n"));
	}
	ADD(mt_units_add_label(b, "bytes allocated", LABEL_WIDTH));
	ADD(mt_units_add_size_exact(b, h->bytes_allocated));
	ADD(add_pm(r, h->var.bytes_allocated, 1));
	ADD(mt_buf_add_str(b, "\n"));
	ADD(mt_units_add_label(b, "peak heap", LABEL_WIDTH));
	ADD(mt_units_add_size_exact(b, h->peak_live_bytes));
	ADD(add_pm(r, h->var.peak_live_bytes, 1));
	if (h->peak_live_bytes) {
		ADD(mt_buf_add_str(b, ", first reached at seq "));
		ADD(mt_buf_add_u64(b, h->peak_seq));
	}
	ADD(mt_buf_add_str(b, "\n"));
	ADD(mt_units_add_label(b, "peak live blocks", LABEL_WIDTH));
	ADD(mt_buf_add_u64(b, h->peak_live_allocations));
	ADD(add_pm(r, h->var.peak_live_allocations, 0));
	ADD(mt_buf_add_str(b, "\n"));
	ADD(mt_units_add_label(b, "leaked", LABEL_WIDTH));
	ADD(mt_units_add_size_exact(b, r->live_bytes));
	ADD(add_pm(r, h->var.live_bytes - r->left_var.bytes, 1));
	ADD(mt_buf_add_str(b, " in "));
	if (h->sample_bytes) {
		ADD(mt_buf_add_u64(b, r->live_allocations));
		ADD(add_pm(r, h->var.live_allocations - r->left_var.count, 0));
		ADD(mt_buf_add_str(b, r->live_allocations == 1 ? " block" : " blocks"));
	} else {
		ADD(mt_units_add_count(b, r->live_allocations, "block", "blocks"));
	}
	ADD(mt_buf_add_str(b, ", still live at the end of the trace\n"));
	if (r->left.sites) {
		ADD(mt_buf_add_str(b, "                          "));
		ADD(mt_suppress_add_left_out(b, &r->left));
		ADD(mt_buf_add_str(b, "\n"));
	}
cleanup:
	return rc;
}

/* The allocators the report counts (--allocator: the one it names), by
 * id, with what each did; only when one of them is not libc's, so that a
 * report of malloc alone reads as it always has. */
static int add_allocators(report_t *r)
{
	const mt_heap_t *h = &r->a->heap;
	mt_buf_t *b = r->out;
	const mt_allocator_t *next;
	uint64_t last = 0, key;
	size_t pos = 0;
	int rc = MT_OK, first = 1, any = 0;
	void *v;

	while (mt_map_iter(&h->allocators, &pos, &key, &v)) {
		const mt_allocator_t *a = *(mt_allocator_t **)v;

		if (!a->skipped && a->id && (a->allocations || a->resizes ||
					     a->remaps || a->live_bytes))
			any = 1;
	}
	if (h->only_allocator) {
		ADD(mt_buf_add_str(b, "\nAllocator: "));
		ADD(mt_srcline_add_clean(b, h->only_allocator));
		ADD(mt_buf_add_str(b,
			" alone: every figure below counts its blocks only;\n"
			"  the integrity verdict above is the whole trace's.\n"));
	}
	if (!any && !h->only_allocator)
		return MT_OK;
	ADD(mt_buf_add_str(b, "\nAllocators\n"));
	/* By id, without a list to sort: a trace declares a few. */
	for (;;) {
		static const char pad[] = "                          ";
		const char *name;
		char label[64];
		size_t start;

		next = NULL;
		pos = 0;
		while (mt_map_iter(&h->allocators, &pos, &key, &v)) {
			const mt_allocator_t *a = *(mt_allocator_t **)v;

			if (!a->skipped && (first || a->id > last) &&
			    (!next || a->id < next->id))
				next = a;
		}
		if (!next)
			break;
		first = 0;
		last = next->id;
		name = mt_heap_allocator_name(next);
		start = b->len;
		ADD(mt_buf_add_str(b, "  "));
		ADD(mt_srcline_add_clean(b, name ? name : "(no name)"));
		snprintf(label, sizeof(label), " (id %llu)", (unsigned long long)next->id);
		ADD(mt_buf_add_str(b, label));
		/* The figures in the totals' column, as mt_units_add_label(, LABEL_WIDTH) puts them. */
		ADD(mt_buf_add(b, pad, b->len - start < sizeof(pad) - 1 ?
					       sizeof(pad) - 1 - (b->len - start) : 1));
		ADD(mt_units_add_count(b, next->allocations, "allocation", "allocations"));
		ADD(mt_buf_add_str(b, ", "));
		ADD(mt_units_add_count(b, next->resizes + next->remaps,
				       "reallocation", "reallocations"));
		ADD(mt_buf_add_str(b, ", "));
		ADD(mt_units_add_count(b, next->frees, "free", "frees"));
		ADD(mt_buf_add_str(b, "\n"));
		ADD(mt_buf_add(b, pad, sizeof(pad) - 1));
		ADD(mt_buf_add_str(b, "peak "));
		ADD(mt_units_add_size(b, next->peak_live_bytes));
		ADD(mt_buf_add_str(b, ", live at the end "));
		ADD(mt_units_add_size(b, next->live_bytes));
		ADD(mt_buf_add_str(b, "\n"));
	}
cleanup:
	return rc;
}

/* ---- the lists of sites ---- */

typedef enum { BY_PEAK, BY_LEAKED, BY_CALLS, BY_TEMPORARY, NLISTS } list_t;

typedef struct {
	mt_site_ref_t ref;
	uint64_t key;
	int left_out; /* a suppression matches its stack */
	const char *label; /* mt_label's */
} ranked_t;

static uint64_t site_figure(const mt_heap_t *h, const mt_site_ref_t *ref,
			    list_t l, int left_out)
{
	const mt_site_t *s = ref->site;

	switch (l) {
	case BY_PEAK:
		return mt_heap_site_at_peak(h, s);
	case BY_LEAKED:
		return left_out ? 0 : s->live_bytes;
	case BY_CALLS:
		/* A realloc is a call, as heaptrack counts it: a site whose
		 * blocks are all made or grown by realloc is not "0 calls". */
		return ref->calls;
	default:
		return s->temporary_allocations;
	}
}

static int cmp_ranked(const void *x, const void *y)
{
	const ranked_t *a = x, *b = y;

	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	if (a->ref.site->bytes_allocated != b->ref.site->bytes_allocated)
		return a->ref.site->bytes_allocated >
				       b->ref.site->bytes_allocated ? -1 : 1;
	return a->ref.stack_id < b->ref.stack_id ? -1 :
	       a->ref.stack_id > b->ref.stack_id;
}

/* "48.6%" of whole, rounded toward zero. */
static int add_share(mt_buf_t *b, uint64_t part, uint64_t whole)
{
	unsigned __int128 tenths = whole ? (unsigned __int128)part * 1000 / whole : 0;
	int rc;

	if ((rc = mt_buf_add_u64(b, (uint64_t)(tenths / 10))) ||
	    (rc = mt_buf_add_str(b, ".")) ||
	    (rc = mt_buf_add_u64(b, (uint64_t)(tenths % 10))))
		return rc;
	return mt_buf_add_str(b, "%");
}

static int add_headline(report_t *r, const mt_site_ref_t *ref, list_t l,
			uint64_t key)
{
	const mt_site_t *s = ref->site;
	const mt_heap_t *h = &r->a->heap;
	mt_buf_t *b = r->out;
	int rc;

	switch (l) {
	case BY_PEAK:
		ADD(mt_units_add_size(b, key));
		ADD(mt_buf_add_str(b, " at the peak ("));
		ADD(add_share(b, key, h->peak_live_bytes));
		ADD(mt_buf_add_str(b, " of it)"));
		break;
	case BY_LEAKED:
		ADD(mt_units_add_size(b, key));
		ADD(mt_buf_add_str(b, " leaked in "));
		ADD(mt_units_add_count(b, s->live_allocations, "block", "blocks"));
		ADD(mt_buf_add_str(b, " ("));
		ADD(add_share(b, key, r->live_bytes));
		ADD(mt_buf_add_str(b, " of all leaked)"));
		break;
	case BY_CALLS:
		ADD(mt_units_add_count(b, key, "call", "calls"));
		ADD(mt_buf_add_str(b, " to allocation functions"));
		break;
	default:
		ADD(mt_units_add_count(b, key, "temporary allocation",
				     "temporary allocations"));
		ADD(mt_buf_add_str(b, " of "));
		ADD(mt_units_add_count(b, ref->calls, "call", "calls"));
		break;
	}
cleanup:
	return rc;
}

static int add_site(report_t *r, const ranked_t *e, size_t rank, list_t l)
{
	const mt_heap_t *h = &r->a->heap;
	const mt_site_t *s = e->ref.site;
	mt_buf_t *b = r->out;
	int rc;

	ADD(mt_buf_add_str(b, "  #"));
	ADD(mt_buf_add_u64(b, rank));
	ADD(mt_buf_add_str(b, " "));
	ADD(add_headline(r, &e->ref, l, e->key));
	ADD(mt_buf_add_str(b, "\n     site: "));
	ADD(mt_srcline_add_clean(b, e->label));
	ADD(mt_buf_add_str(b, "\n     stack "));
	ADD(mt_buf_add_u64(b, e->ref.stack_id));
	ADD(mt_buf_add_str(b, ": "));
	ADD(mt_units_add_count(b, e->ref.calls, "call", "calls"));
	ADD(mt_buf_add_str(b, ", "));
	ADD(mt_buf_add_u64(b, s->temporary_allocations));
	ADD(mt_buf_add_str(b, " temporary, "));
	ADD(mt_units_add_size(b, s->bytes_allocated));
	ADD(mt_buf_add_str(b, " allocated, "));
	ADD(mt_units_add_size(b, mt_heap_site_at_peak(h, s)));
	ADD(mt_buf_add_str(b, " at the peak, "));
	ADD(mt_units_add_size(b, e->left_out ? 0 : s->live_bytes));
	ADD(mt_buf_add_str(b, e->left_out && s->live_bytes ?
				" leaked (its live bytes left out: a runtime "
				"allocation)\n" : " leaked\n"));
	if (!e->ref.stack || !e->ref.stack->nframes) {
		ADD(mt_buf_add_str(b, "       (no stack: the trace recorded these "
				      "allocations without one)\n"));
		goto cleanup;
	}
	/* Each level of each frame on its own line, innermost first: an
	 * inlined call is a frame of the source as much as a real one. */
	for (size_t i = 0; i < e->ref.stack->nframes; i++) {
		uint64_t id = e->ref.stack->frames[i];
		const mt_frame_t *f = mt_map_find(&h->frames, id);
		mt_srcline_loc_t loc = { 0 };

		if (f)
			ADD(mt_srcline_resolve(&r->lines, id, f, &loc));
		for (size_t k = 0; k < mt_srcline_nlevels(&loc); k++) {
			ADD(mt_buf_add_str(b, "       "));
			ADD(mt_srcline_add_level(b, &loc, k, f, 1));
			ADD(mt_buf_add_str(b, "\n"));
		}
	}
cleanup:
	return rc;
}

static const char *const list_title[NLISTS] = {
	[BY_PEAK] = "Peak contribution: the sites by their live bytes at the peak",
	[BY_LEAKED] = "Leaked: the sites by their bytes still live at the end",
	[BY_CALLS] = "Calls: the sites by their calls to allocation functions",
	/* Parenthesized: clang's -Wstring-concatenation would take the
	 * split literal for a missing comma. */
	[BY_TEMPORARY] = ("Temporary: the sites by allocations freed before "
			  "their thread's next one"),
};

static const char *const list_none[NLISTS] = {
	[BY_PEAK] = "  (nothing was live at the peak)\n",
	[BY_LEAKED] = "  (nothing leaked)\n",
	[BY_CALLS] = "  (no allocations)\n",
	[BY_TEMPORARY] = "  (no temporary allocations)\n",
};

static int add_list(report_t *r, list_t l, const mt_site_ref_t *sites,
		    const unsigned char *left_out, size_t nsites,
		    ranked_t *scratch, uint64_t top)
{
	const mt_heap_t *h = &r->a->heap;
	mt_buf_t *b = r->out;
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < nsites; i++) {
		uint64_t key = site_figure(h, &sites[i], l, left_out[i]);

		if (key)
			scratch[n++] = (ranked_t){ sites[i], key, left_out[i],
						    r->labels[i] };
	}
	qsort(scratch, n, sizeof(*scratch), cmp_ranked);
	ADD(mt_buf_add_str(b, "\n"));
	ADD(mt_buf_add_str(b, list_title[l]));
	if (l == BY_PEAK && h->peak_live_bytes) {
		ADD(mt_buf_add_str(b, " (seq "));
		ADD(mt_buf_add_u64(b, h->peak_seq));
		ADD(mt_buf_add_str(b, ")"));
	}
	ADD(mt_buf_add_str(b, "\n"));
	if (!n)
		ADD(mt_buf_add_str(b, list_none[l]));
	for (size_t i = 0; i < n && i < top; i++)
		ADD(add_site(r, &scratch[i], i + 1, l));
	if (n > top) {
		ADD(mt_buf_add_str(b, "  ... and "));
		ADD(mt_units_add_count(b, n - top, "more site", "more sites"));
		ADD(mt_buf_add_str(b, "\n"));
	}
cleanup:
	return rc;
}

int mt_report_render(const mt_analysis_t *a, const char *name, uint64_t top,
		     const mt_suppress_t *supp, mt_buf_t *out)
{
	return mt_report_render_labelled(a, name, top, supp, NULL, out);
}

int mt_report_render_labelled(const mt_analysis_t *a, const char *name,
			      uint64_t top, const mt_suppress_t *supp,
			      const mt_label_opts_t *labels, mt_buf_t *out)
{
	report_t r = { .a = a, .out = out };
	mt_site_ref_t *sites = NULL;
	ranked_t *scratch = NULL;
	unsigned char *left_out = NULL;
	size_t nsites = 0, mark = out->len;
	int rc;

	mt_srcline_init(&r.lines);
	ADD(mt_sites_list(&a->heap, &sites, &nsites));
	if (top)
		ADD(mt_label_sites(&a->heap, &r.lines, labels, sites, nsites,
				   &r.labels));
	scratch = mt_mem_malloc((nsites ? nsites : 1) * sizeof(*scratch));
	left_out = mt_mem_calloc(nsites ? nsites : 1, 1);
	if (!scratch || !left_out) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	r.live_bytes = a->heap.live_bytes;
	r.live_allocations = a->heap.live_allocations;
	for (size_t i = 0; i < nsites; i++) {
		mt_sampling_block_t var;
		int hit;

		ADD(mt_suppress_site(supp, &a->heap, &r.lines, &sites[i], &hit));
		if (!hit)
			continue;
		left_out[i] = 1;
		r.left.sites++;
		r.left.live_bytes += sites[i].site->live_bytes;
		r.left.live_allocations += sites[i].site->live_allocations;
		r.live_bytes -= sites[i].site->live_bytes;
		r.live_allocations -= sites[i].site->live_allocations;
		var = mt_heap_site_live_var(&a->heap, sites[i].stack);
		r.left_var.bytes += var.bytes;
		r.left_var.count += var.count;
	}
	ADD(mt_buf_add_str(out, "memtrace report of "));
	ADD(mt_srcline_add_clean(out, name));
	ADD(mt_buf_add_str(out, "\n"));
	/* Which program, when the trace says: a directory of traces is
	 * told apart by what ran, not by file names. */
	if (mt_identity_known(&a->identity)) {
		ADD(mt_buf_add_str(out, "program: "));
		ADD(mt_identity_describe(&a->identity, name, MT_IDENTITY_PIDS,
					 out));
		ADD(mt_buf_add_str(out, "\n"));
	}
	ADD(mt_buf_add_str(out, "\n"));
	ADD(add_integrity(&r));
	ADD(add_sampling(&r));
	ADD(add_allocators(&r));
	ADD(add_totals(&r));
	if (top)
		for (int l = 0; l < NLISTS; l++)
			ADD(add_list(&r, (list_t)l, sites, left_out, nsites,
				     scratch, top));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	mt_mem_free(left_out);
	mt_mem_free(scratch);
	mt_label_free(r.labels, nsites);
	mt_mem_free(sites);
	mt_srcline_release(&r.lines);
	return rc;
}
