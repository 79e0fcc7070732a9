/*
 * mt_top: the views of `memtrace top`.  It must render from the heap as
 * it stands, never keep a pointer into it across views but the frames'
 * names (which live as long as the heap), and never write half a view.
 */
#include "../render/mt_top.h"

#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../model/mt_label.h"
#include "../model/mt_sites.h"
#include "../base/mt_units.h"

/* The column the figures' labels end in. */
#define LABEL_WIDTH 12

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

void mt_top_init(mt_top_t *t, const char *name, int64_t pid, uint64_t top)
{
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->pid = pid;
	t->top = top;
	mt_srcline_init(&t->lines);
}

void mt_top_release(mt_top_t *t)
{
	mt_srcline_release(&t->lines);
}

void mt_top_stop_reason(mt_top_t *t, const char *s, size_t len)
{
	size_t n = 0;

	/* A word of the spec's ("exit", "signal"): anything else is cut
	 * and kept printable. */
	for (; n < len && n + 1 < sizeof(t->stop_reason); n++)
		t->stop_reason[n] = s[n] >= 0x20 && s[n] < 0x7f ? s[n] : '?';
	t->stop_reason[n] = '\0';
}

static int add_state(mt_top_t *t, mt_top_state_t state, mt_buf_t *b)
{
	int rc = MT_OK;

	switch (state) {
	case MT_TOP_RUNNING:
		ADD(mt_buf_add_str(b, "running"));
		break;
	case MT_TOP_WRITTEN:
		ADD(mt_buf_add_str(b, "as written so far"));
		break;
	case MT_TOP_STOPPED:
		ADD(mt_buf_add_str(b, "stopped (trace.stop"));
		if (t->stop_reason[0]) {
			ADD(mt_buf_add_str(b, ", "));
			ADD(mt_buf_add_str(b, t->stop_reason));
		}
		ADD(mt_buf_add_str(b, ")"));
		break;
	case MT_TOP_GONE:
		ADD(mt_buf_add_str(b, "ended without trace.stop (the process is "
				      "gone and the trace no longer grows)"));
		break;
	case MT_TOP_TIMEOUT:
		ADD(mt_buf_add_str(b, "gave up waiting (the trace no longer "
				      "grows)"));
		break;
	}
cleanup:
	return rc;
}

/* per second of the trace's dt nanoseconds: n * 10^9 / dt */
static uint64_t per_second(uint64_t n, uint64_t dt)
{
	unsigned __int128 v = (unsigned __int128)n * 1000000000u / dt;

	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static int add_rate(mt_top_t *t, const mt_heap_t *h, mt_buf_t *b)
{
	uint64_t db = h->bytes_allocated - t->bytes_allocated;
	uint64_t dn = h->allocations - t->allocations;
	uint64_t dt = h->duration_ns - t->duration_ns;
	int rc = MT_OK;

	ADD(mt_units_add_label(b, "rate", LABEL_WIDTH));
	if (!dt && (db || dn)) {
		ADD(mt_buf_add_str(b, "unknown (the events record no time)\n"));
		goto cleanup;
	}
	if (!dt && t->rate_ns) {
		/* Nothing new: the writer has not flushed since (a collector
		 * does every second); the last rate stands. */
		db = t->rate_bytes;
		dn = t->rate_allocations;
		dt = t->rate_ns;
	}
	ADD(mt_units_add_size(b, dt ? per_second(db, dt) : 0));
	ADD(mt_buf_add_str(b, "/s, "));
	ADD(mt_buf_add_u64(b, dt ? per_second(dn, dt) : 0));
	ADD(mt_buf_add_str(b, " allocations/s"));
	if (dt) {
		ADD(mt_buf_add_str(b, t->duration_ns ? " over the trace's last "
						     : " over the trace's first "));
		ADD(mt_units_add_duration(b, dt));
	}
	ADD(mt_buf_add_str(b, "\n"));
	if (h->duration_ns != t->duration_ns) {
		t->rate_bytes = db;
		t->rate_allocations = dn;
		t->rate_ns = dt;
	}
cleanup:
	return rc;
}

typedef struct {
	uint64_t live_bytes, bytes_allocated, stack_id;
	const mt_site_ref_t *ref;
} ranked_t;

/* By live bytes, then bytes allocated, then stack id: the summary's
 * order of sites. */
static int cmp_ranked(const void *x, const void *y)
{
	const ranked_t *a = x, *b = y;

	if (a->live_bytes != b->live_bytes)
		return a->live_bytes > b->live_bytes ? -1 : 1;
	if (a->bytes_allocated != b->bytes_allocated)
		return a->bytes_allocated > b->bytes_allocated ? -1 : 1;
	return a->stack_id < b->stack_id ? -1 : a->stack_id > b->stack_id;
}

static int add_sites(mt_top_t *t, const mt_heap_t *h, mt_buf_t *b)
{
	mt_site_ref_t *sites = NULL;
	ranked_t *ranked = NULL;
	char **labels = NULL;
	size_t nsites = 0, n = 0;
	int rc;

	ADD(mt_sites_list(h, &sites, &nsites));
	/* Every site's label, as the report names them among the same
	 * sites, so that a site reads the same in both. */
	ADD(mt_label_sites(h, &t->lines, t->labels, sites, nsites, &labels));
	ranked = mt_mem_malloc((nsites ? nsites : 1) * sizeof(*ranked));
	if (!ranked) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < nsites; i++)
		if (sites[i].site->live_bytes)
			ranked[n++] = (ranked_t){ sites[i].site->live_bytes,
						  sites[i].site->bytes_allocated,
						  sites[i].stack_id, &sites[i] };
	qsort(ranked, n, sizeof(*ranked), cmp_ranked);
	ADD(mt_buf_add_str(b, "  sites by live bytes ("));
	ADD(mt_units_add_count(b, n, "site holds", "sites hold"));
	ADD(mt_buf_add_str(b, " live bytes)\n"));
	for (size_t i = 0; i < n && i < t->top; i++) {
		const mt_site_ref_t *ref = ranked[i].ref;

		ADD(mt_buf_add_str(b, "  #"));
		ADD(mt_buf_add_u64(b, i + 1));
		ADD(mt_buf_add_str(b, " "));
		ADD(mt_units_add_size(b, ref->site->live_bytes));
		ADD(mt_buf_add_str(b, " in "));
		ADD(mt_units_add_count(b, ref->site->live_allocations, "block",
				       "blocks"));
		if (!ref->stack || !ref->stack->nframes) {
			ADD(mt_buf_add_str(b, ", no stack\n"));
			continue;
		}
		ADD(mt_buf_add_str(b, ", stack "));
		ADD(mt_buf_add_u64(b, ref->stack_id));
		ADD(mt_buf_add_str(b, ": "));
		ADD(mt_srcline_add_clean(b, labels[ref - sites]));
		ADD(mt_buf_add_str(b, "\n"));
	}
cleanup:
	mt_label_free(labels, nsites);
	mt_mem_free(ranked);
	mt_mem_free(sites);
	return rc;
}

/* A count and then one or the other word; in a sampled trace (sampled),
 * its standard error (of variance v) before the word: "64 +- 8 blocks". */
static int add_count(mt_buf_t *out, int sampled, uint64_t count,
		     mt_sampling_var_t v, const char *one, const char *many)
{
	int rc;

	if (!sampled)
		return mt_units_add_count(out, count, one, many);
	ADD(mt_buf_add_u64(out, count));
	ADD(mt_units_add_pm_count(out, mt_sampling_stderr(v)));
	ADD(mt_buf_add_str(out, " "));
	ADD(mt_buf_add_str(out, count == 1 ? one : many));
cleanup:
	return rc;
}

/* A size; in a sampled trace, and its standard error (of variance v). */
static int add_size(mt_buf_t *out, int sampled, uint64_t bytes,
		    mt_sampling_var_t v)
{
	int rc = mt_units_add_size_exact(out, bytes);

	if (!rc && sampled)
		rc = mt_units_add_pm_size(out, mt_sampling_stderr(v));
	return rc;
}

/* A figure's line: "  LABEL  <bytes> in <count> blocks", each with its
 * standard error in a sampled trace (variances vb and vc). */
static int add_bytes_in(mt_buf_t *out, const mt_heap_t *h, const char *label,
			uint64_t bytes, mt_sampling_var_t vb, uint64_t count,
			mt_sampling_var_t vc)
{
	int rc;

	ADD(mt_units_add_label(out, label, LABEL_WIDTH));
	ADD(add_size(out, h->sample_bytes != 0, bytes, vb));
	ADD(mt_buf_add_str(out, " in "));
	ADD(add_count(out, h->sample_bytes != 0, count, vc, "block", "blocks"));
	ADD(mt_buf_add_str(out, "\n"));
cleanup:
	return rc;
}

int mt_top_render(mt_top_t *t, const mt_heap_t *h, mt_top_state_t state,
		  const mt_integrity_t *ig, mt_buf_t *out)
{
	size_t mark = out->len;
	int rc, sampled = h->sample_bytes != 0;

	ADD(mt_buf_add_str(out, "memtrace top: "));
	ADD(mt_srcline_add_clean(out, t->name));
	if (t->pid) {
		ADD(mt_buf_add_str(out, ", pid "));
		ADD(mt_buf_add_u64(out, (uint64_t)t->pid));
	}
	ADD(mt_buf_add_str(out, ": "));
	ADD(add_state(t, state, out));
	ADD(mt_buf_add_str(out, "\n"));
	ADD(mt_units_add_label(out, "trace", LABEL_WIDTH));
	if (h->duration_ns) {
		ADD(mt_units_add_duration(out, h->duration_ns));
		ADD(mt_buf_add_str(out, ", "));
	}
	ADD(mt_units_add_count(out, h->events, "event", "events"));
	ADD(mt_buf_add_str(out, ", "));
	ADD(mt_units_add_count(out, mt_heap_threads(h), "thread", "threads"));
	ADD(mt_buf_add_str(out, "\n"));
	ADD(add_bytes_in(out, h, "live", h->live_bytes, h->var.live_bytes,
			 h->live_allocations, h->var.live_allocations));
	ADD(add_bytes_in(out, h, "peak", h->peak_live_bytes, h->var.peak_live_bytes,
			 h->peak_live_allocations, h->var.peak_live_allocations));
	ADD(mt_units_add_label(out, "allocated", LABEL_WIDTH));
	ADD(add_size(out, sampled, h->bytes_allocated, h->var.bytes_allocated));
	ADD(mt_buf_add_str(out, " in "));
	ADD(add_count(out, sampled, h->allocations, h->var.allocations,
		      "allocation", "allocations"));
	ADD(mt_buf_add_str(out, ", "));
	ADD(add_count(out, sampled, h->frees, h->var.frees, "free", "frees"));
	ADD(mt_buf_add_str(out, "\n"));
	if (sampled) {
		ADD(mt_units_add_label(out, "sampled", LABEL_WIDTH));
		ADD(mt_buf_add_str(out, "one allocation recorded per "));
		ADD(mt_units_add_size(out, h->sample_bytes));
		ADD(mt_buf_add_str(out, " on average: estimates +- their "
				      "standard errors\n"));
	}
	ADD(add_rate(t, h, out));
	if (ig) {
		ADD(mt_units_add_label(out, "integrity", LABEL_WIDTH));
		if (mt_integrity_complete(ig)) {
			ADD(mt_buf_add_str(out, "complete\n"));
		} else {
			ADD(mt_buf_add_str(out, "CAVEATED ("));
			ADD(mt_buf_add_str(out, mt_integrity_status(ig)));
			ADD(mt_buf_add_str(out, "): "));
			ADD(mt_buf_add_str(out, mt_integrity_message(ig)));
			ADD(mt_buf_add_str(out, "\n"));
		}
	}
	if (t->top)
		ADD(add_sites(t, h, out));
	t->bytes_allocated = h->bytes_allocated;
	t->allocations = h->allocations;
	t->duration_ns = h->duration_ns;
	t->views++;
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	return rc;
}

/* The bytes of a line of len bytes at s that fit in cols columns: one
 * column a character, cut before a UTF-8 character, never inside one. */
static size_t fit(const char *s, size_t len, unsigned cols)
{
	size_t n = 0, chars = 0;

	while (n < len) {
		size_t k = 1;

		while (n + k < len && ((unsigned char)s[n + k] & 0xc0) == 0x80)
			k++;
		if (++chars > cols)
			break;
		n += k;
	}
	return n;
}

int mt_top_frame(const mt_buf_t *view, unsigned cols, unsigned rows,
		 mt_buf_t *out)
{
	const char *p = view->data ? view->data : "";
	const char *end = p + view->len;
	size_t mark = out->len;
	unsigned lines = 0;
	int rc;

	ADD(mt_buf_add_str(out, "\033[H"));
	while (p < end && (!rows || lines + 1 < rows)) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		ADD(mt_buf_add(out, p, cols > 1 ? fit(p, len, cols - 1) : len));
		ADD(mt_buf_add_str(out, "\033[K\n"));
		lines++;
		p += len + (nl != NULL);
	}
	ADD(mt_buf_add_str(out, "\033[J"));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	return rc;
}
