/*
 * mt_tree: a process tree's traces summed (mt_tree.h).  It only adds and
 * renders: the analyses are the caller's, one trace at a time, so memory
 * is one trace's whatever the tree's size.  It must never write half a
 * line.
 */
#include "../rows/mt_tree.h"

#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_map.h"
#include "../base/mt_mem.h"
#include "../base/mt_units.h"
#include "../gates/mt_run_lines.h"
#include "../model/mt_integrity.h"

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

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
	if (h->sample_bytes) {
		t->sampled++;
		t->var_allocations += h->var.allocations;
		t->var_peak += h->var.peak_live_bytes;
	}
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

/* ,"pid":N,"ppid":N,"exe":"...","argv":[...], each null when the trace
 * does not say. */
static int add_identity(mt_buf_t *b, const mt_identity_t *id)
{
	int rc;

	ADD(mt_buf_add_str(b, ",\"pid\":"));
	ADD(id->has_pid ? mt_buf_add_u64(b, id->pid) : mt_buf_add_str(b, "null"));
	ADD(mt_buf_add_str(b, ",\"ppid\":"));
	ADD(id->has_ppid ? mt_buf_add_u64(b, id->ppid) : mt_buf_add_str(b, "null"));
	ADD(mt_buf_add_str(b, ",\"exe\":"));
	ADD(id->exe_len ? mt_buf_add_json_str(b, id->exe, id->exe_len) :
			  mt_buf_add_str(b, "null"));
	ADD(mt_buf_add_str(b, ",\"argv\":"));
	if (!id->argc)
		return mt_buf_add_str(b, "null");
	for (size_t i = 0; i < id->argc; i++) {
		const char *arg = mt_identity_arg(id, i);

		ADD(mt_buf_add_str(b, i ? "," : "["));
		ADD(mt_buf_add_json_str(b, arg, strlen(arg)));
	}
	rc = mt_buf_add_str(b, "]");
cleanup:
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
	    add_identity(&b, &a->identity) ||
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

/* ---- the tree for a person ---- */

struct mt_tree_proc {
	const char *path;   /* the caller's */
	size_t text;        /* the program's text in the view's text */
	size_t message;     /* an invalid trace's message there */
	const char *status; /* static text */
	int known, invalid;
	int has_pid, has_ppid, has_time;
	uint64_t pid, ppid, time_ns, allocations, peak;
	int sampled;
	mt_run_lines_stderr_t se; /* when sampled */
	size_t added;       /* its place in the order added */
};

/* How deep the lines indent: deeper processes line up at this depth. */
#define MAX_INDENT 16

int mt_tree_view_add(mt_tree_view_t *v, const char *path,
		     const mt_analysis_t *a)
{
	const mt_identity_t *id = &a->identity;
	const char *slash = strrchr(path, '/');
	mt_tree_proc_t *p;
	size_t mark = v->text.len;
	int rc;

	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 16;
		mt_tree_proc_t *procs = mt_mem_realloc(v->procs,
						       cap * sizeof(*procs));

		if (!procs)
			return MT_ENOMEM;
		v->procs = procs;
		v->cap = cap;
	}
	p = &v->procs[v->n];
	memset(p, 0, sizeof(*p));
	p->path = path;
	p->added = v->n;
	p->text = v->text.len;
	ADD(mt_identity_describe(id, slash && slash[1] ? slash + 1 : path,
				 MT_IDENTITY_PIDS, &v->text));
	ADD(mt_buf_add(&v->text, "", 1));
	p->message = v->text.len;
	p->invalid = a->integrity.invalid;
	if (p->invalid) {
		ADD(mt_buf_add_str(&v->text, a->integrity.invalid_message));
		ADD(mt_buf_add(&v->text, "", 1));
	}
	p->status = p->invalid ? "invalid" : mt_integrity_status(&a->integrity);
	p->known = mt_identity_known(id);
	p->has_pid = id->has_pid;
	p->has_ppid = id->has_ppid;
	p->has_time = id->has_time;
	p->pid = id->pid;
	p->ppid = id->ppid;
	p->time_ns = id->time_ns;
	p->allocations = a->heap.allocations;
	p->peak = a->heap.peak_live_bytes;
	p->sampled = a->heap.sample_bytes != 0;
	p->se.allocations = mt_sampling_stderr(a->heap.var.allocations);
	p->se.peak = mt_sampling_stderr(a->heap.var.peak_live_bytes);
	v->n++;
cleanup:
	if (rc)
		mt_buf_truncate(&v->text, mark);
	return rc;
}

void mt_tree_view_release(mt_tree_view_t *v)
{
	mt_mem_free(v->procs);
	mt_buf_release(&v->text);
	memset(v, 0, sizeof(*v));
}

static int by_start(const void *x, const void *y)
{
	const mt_tree_proc_t *const *a = x, *const *b = y;

	if ((*a)->time_ns != (*b)->time_ns)
		return (*a)->time_ns < (*b)->time_ns ? -1 : 1;
	return (*a)->added < (*b)->added ? -1 : (*a)->added > (*b)->added;
}

/* One process's line, at depth, exec'd when it replaced its parent. */
static int add_line(mt_buf_t *out, const mt_tree_view_t *v,
		    const mt_tree_proc_t *p, size_t depth, int exec)
{
	int rc;

	for (size_t i = 0; i < depth && i < MAX_INDENT; i++)
		ADD(mt_buf_add_str(out, "  "));
	if (exec)
		ADD(mt_buf_add_str(out, "exec "));
	ADD(mt_buf_add_str(out, v->text.data + p->text));
	ADD(mt_buf_add_str(out, ": "));
	if (p->invalid) {
		ADD(mt_buf_add_str(out, "invalid: "));
		ADD(mt_buf_add_str(out, v->text.data + p->message));
	} else {
		ADD(mt_run_lines_add_figures(out, p->allocations, p->peak,
					     p->sampled ? &p->se : NULL, p->status));
	}
	/* The trace's file, unless it already stands for the program. */
	if (p->known) {
		ADD(mt_buf_add_str(out, "  "));
		ADD(mt_buf_add_str(out, p->path));
	}
	rc = mt_buf_add_str(out, "\n");
cleanup:
	return rc;
}

int mt_tree_view_render(const mt_tree_view_t *v, const mt_tree_t *t,
			mt_buf_t *out)
{
	const mt_tree_proc_t **order = NULL;
	/* By place in order: its parent's place + 1 (0: a root), whether
	 * it is an exec'd image, its first child and next sibling (+ 1). */
	size_t *parent = NULL, *child = NULL, *next = NULL, *stack = NULL;
	size_t *depth = NULL;
	unsigned char *exec = NULL;
	mt_map_t last = { 0 }; /* pid -> place + 1 of its latest process */
	size_t n = v->n, mark = out->len, top = 0;
	int rc = MT_ENOMEM, timed = 1;
	mt_run_lines_stderr_t se;

	mt_map_init(&last, sizeof(size_t));
	order = mt_mem_calloc(n ? n : 1, sizeof(*order));
	parent = mt_mem_calloc(n ? n : 1, sizeof(*parent));
	child = mt_mem_calloc(n ? n : 1, sizeof(*child));
	next = mt_mem_calloc(n ? n : 1, sizeof(*next));
	stack = mt_mem_calloc(n ? n : 1, sizeof(*stack));
	depth = mt_mem_calloc(n ? n : 1, sizeof(*depth));
	exec = mt_mem_calloc(n ? n : 1, 1);
	if (!order || !parent || !child || !next || !stack || !depth || !exec)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		order[i] = &v->procs[i];
		timed = timed && v->procs[i].has_time;
	}
	if (timed && n)
		qsort(order, n, sizeof(*order), by_start);
	/* Each process's parent started before it, so the links hold no
	 * cycle, whatever pids the traces claim. */
	for (size_t i = 0; i < n; i++) {
		const mt_tree_proc_t *p = order[i];
		size_t *seen;
		void *slot;

		if (p->has_pid && (seen = mt_map_find(&last, p->pid))) {
			parent[i] = *seen;
			exec[i] = 1;
		} else if (p->has_ppid && (seen = mt_map_find(&last, p->ppid))) {
			parent[i] = *seen;
		}
		if (p->has_pid) {
			ADD(mt_map_upsert(&last, p->pid, &slot, NULL));
			*(size_t *)slot = i + 1;
		}
	}
	/* Children in order: linked from the last one back. */
	for (size_t i = n; i-- > 0;)
		if (parent[i]) {
			next[i] = child[parent[i] - 1];
			child[parent[i] - 1] = i + 1;
		}

	ADD(mt_units_add_count(out, t->processes, "process", "processes"));
	ADD(mt_buf_add_str(out, ": "));
	se.allocations = mt_sampling_stderr(t->var_allocations);
	se.peak = mt_sampling_stderr(t->var_peak);
	ADD(mt_run_lines_add_figures(out, t->allocations, t->peak_live_bytes,
				     t->sampled ? &se : NULL,
				     t->status ? t->status : "complete"));
	if (t->trace) {
		ADD(mt_buf_add_str(out, " in "));
		ADD(mt_buf_add_str(out, t->trace));
	}
	if (t->invalid) {
		ADD(mt_buf_add_str(out, ", "));
		ADD(mt_units_add_count(out, t->invalid, "trace", "traces"));
		ADD(mt_buf_add_str(out, " not valid evidence"));
	}
	ADD(mt_buf_add_str(out, "\n"));
	/* Depth first from each root, in order. */
	for (size_t r = 0; r < n; r++) {
		if (parent[r])
			continue;
		stack[top++] = r;
		while (top) {
			size_t i = stack[--top], kids = 0;

			ADD(add_line(out, v, order[i], depth[i], exec[i]));
			for (size_t c = child[i]; c; c = next[c - 1])
				kids++;
			/* Pushed last first, so the first pops first. */
			top += kids;
			for (size_t c = child[i], k = 1; c; c = next[c - 1], k++) {
				stack[top - k] = c - 1;
				depth[c - 1] = depth[i] + 1;
			}
		}
	}
	rc = MT_OK;
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	mt_map_release(&last);
	mt_mem_free(exec);
	mt_mem_free(depth);
	mt_mem_free(stack);
	mt_mem_free(next);
	mt_mem_free(child);
	mt_mem_free(parent);
	mt_mem_free(order);
	return rc;
}
