/*
 * mt_tree: a process tree's traces summed (mt_tree.h).  It only adds and
 * renders: the analyses are the caller's, one trace at a time, so memory
 * is one trace's whatever the tree's size.  It must never write half a
 * line.
 */
#include "../rows/mt_tree.h"

#include <string.h>

#include "../base/mt_error.h"
#include "../model/mt_integrity.h"

void mt_tree_add(mt_tree_t *t, const char *path, const mt_analysis_t *a)
{
	const mt_heap_t *h = &a->heap;

	t->processes++;
	if (a->integrity.invalid) {
		t->invalid++;
		if (!t->status) {
			t->status = "invalid";
			t->trace = path;
		}
		return;
	}
	if (mt_integrity_complete(&a->integrity)) {
		t->complete++;
	} else {
		t->caveated++;
		if (!t->status) {
			t->status = mt_integrity_status(&a->integrity);
			t->trace = path;
		}
	}
	t->events += h->events;
	t->allocations += h->allocations;
	t->frees += h->frees;
	t->resizes += h->resizes;
	t->remaps += h->remaps;
	t->failed_allocations += h->failed_allocations;
	t->unknown_frees += h->unknown_frees;
	t->bytes_allocated += h->bytes_allocated;
	t->bytes_freed += h->bytes_freed;
	t->live_allocations += h->live_allocations;
	t->live_bytes += h->live_bytes;
	t->peak_live_bytes += h->peak_live_bytes;
	t->temporary_allocations += h->temporary_allocations;
}

static int add_u64(mt_buf_t *b, const char *key, uint64_t v)
{
	int rc = mt_buf_add_str(b, key);

	return rc ? rc : mt_buf_add_u64(b, v);
}

static int add_str(mt_buf_t *b, const char *key, const char *s)
{
	int rc = mt_buf_add_str(b, key);

	return rc ? rc : mt_buf_add_json_cstr_or_null(b, s);
}

/* The figures a process line and a tree line share, from "events" on. */
#define FIGURES(b, x)                                                    \
	(add_u64(b, ",\"events\":", (x)->events) ||                      \
	 add_u64(b, ",\"allocations\":", (x)->allocations) ||            \
	 add_u64(b, ",\"frees\":", (x)->frees) ||                        \
	 add_u64(b, ",\"resizes\":", (x)->resizes) ||                    \
	 add_u64(b, ",\"remaps\":", (x)->remaps) ||                      \
	 add_u64(b, ",\"failed_allocations\":", (x)->failed_allocations) || \
	 add_u64(b, ",\"unknown_frees\":", (x)->unknown_frees) ||        \
	 add_u64(b, ",\"bytes_allocated\":", (x)->bytes_allocated) ||    \
	 add_u64(b, ",\"bytes_freed\":", (x)->bytes_freed) ||            \
	 add_u64(b, ",\"live_allocations\":", (x)->live_allocations) ||  \
	 add_u64(b, ",\"live_bytes\":", (x)->live_bytes) ||              \
	 add_u64(b, ",\"peak_live_bytes\":", (x)->peak_live_bytes) ||    \
	 add_u64(b, ",\"temporary_allocations\":", (x)->temporary_allocations))

int mt_tree_render(const mt_tree_t *t, mt_buf_t *out)
{
	mt_buf_t b = MT_BUF_INIT;
	int rc = MT_ENOMEM;

	if (mt_buf_add_str(&b, "{\"schema\":\"memtrace.tree/v1\"") ||
	    add_u64(&b, ",\"processes\":", t->processes) ||
	    add_str(&b, ",\"status\":", t->status ? t->status : "complete") ||
	    add_str(&b, ",\"trace\":", t->trace) ||
	    add_u64(&b, ",\"complete\":", t->complete) ||
	    add_u64(&b, ",\"caveated\":", t->caveated) ||
	    add_u64(&b, ",\"invalid\":", t->invalid) || FIGURES(&b, t) ||
	    mt_buf_add_str(&b, "}\n") || mt_buf_add(out, b.data, b.len))
		goto cleanup;
	rc = MT_OK;
cleanup:
	mt_buf_release(&b);
	return rc;
}

int mt_tree_render_process(const char *path, const mt_analysis_t *a,
			   mt_buf_t *out)
{
	mt_buf_t b = MT_BUF_INIT;
	const char *status = a->integrity.invalid ? "invalid" :
			     mt_integrity_status(&a->integrity);
	int rc = MT_ENOMEM;

	if (mt_buf_add_str(&b, "{\"schema\":\"memtrace.process/v1\"") ||
	    mt_buf_add_str(&b, ",\"trace\":") ||
	    mt_buf_add_json_str(&b, path, strlen(path)) ||
	    add_str(&b, ",\"status\":", status))
		goto cleanup;
	/* Why a trace is no evidence: its figures are none. */
	if (a->integrity.invalid ?
		    add_str(&b, ",\"message\":", a->integrity.invalid_message) :
		    FIGURES(&b, &a->heap))
		goto cleanup;
	if (mt_buf_add_str(&b, "}\n") || mt_buf_add(out, b.data, b.len))
		goto cleanup;
	rc = MT_OK;
cleanup:
	mt_buf_release(&b);
	return rc;
}
