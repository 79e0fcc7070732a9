/*
 * mt_html: the self-contained HTML report.  It must never write a page
 * that fetches anything, that a string from the trace can break out of
 * (every '<' of the data is \u003c), or that grows with the trace past
 * MT_HTML_MAX_BYTES; nor leave half a page in its output.
 */
#include "../render/mt_html.h"

#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../export/mt_flame.h"
#include "../base/mt_map.h"
#include "../base/mt_mem.h"
#include "../model/mt_label.h"
#include "../model/mt_sites.h"
#include "../model/mt_srcline.h"

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

/* The page's script and style sheet (mt_html_assets.S). */
extern const char mt_html_script[];
extern const char mt_html_style[];

/* The budgets a page starts with, halved while it comes out too big. */
#define SITES_PER_FIGURE 50
#define FLAME_NODES 4000
#define NAME_BYTES 512
/* A flame graph node is kept when it holds at least 1/FLAME_SHARE of
 * some figure's total. */
#define FLAME_SHARE 1000

/* The figures of a site and of a flame graph node, in this order in the
 * page's data. */
enum { F_CALLS, F_BYTES, F_PEAK, F_LEAKED, F_COUNT };

/* ---- the pass ---- */

void mt_html_pass_init(mt_html_pass_t *p)
{
	mt_plot_curve_init(&p->curve);
}

void mt_html_observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev)
{
	mt_plot_observe(&((mt_html_pass_t *)ctx)->curve, h, ev);
}

/* Whether the x axis is time: every heap event has one (mt_plot's rule). */
static int curve_timed(const mt_plot_curve_t *c)
{
	return c->heap_events && c->timed_events == c->heap_events &&
	       c->by_t.x_end > 0;
}

/* ---- the sites' own series: the second pass ---- */

typedef struct {
	uint64_t max, last;
	int used;
} point_t;

typedef struct {
	int timed;
	uint64_t x_end;
	size_t n;
	uint32_t site_index[MT_HTML_SERIES_SITES]; /* 0: site 0 */
	uint64_t seen[MT_HTML_SERIES_SITES];       /* its live bytes so far */
	point_t p[MT_HTML_SERIES_SITES][MT_HTML_SITE_POINTS];
} site_series_t;

static const mt_site_t *site_at(const mt_heap_t *h, uint32_t index)
{
	return index ? &h->sites[index] : &h->no_stack;
}

/* The heap is rebuilt in the same order on the second read, so a site
 * keeps its index; a site whose live bytes moved gets the event's x. */
static void series_observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev)
{
	site_series_t *s = ctx;
	uint64_t x;
	size_t k;

	if (!mt_event_kind_moves_heap(ev->kind))
		return;
	if (s->timed && !(ev->has & MT_HAS_T))
		return;
	x = s->timed ? ev->t : ev->seq;
	if (x > s->x_end)
		x = s->x_end;
	k = (size_t)((unsigned __int128)x * MT_HTML_SITE_POINTS / (s->x_end + 1));
	for (size_t i = 0; i < s->n; i++) {
		uint32_t idx = s->site_index[i];
		uint64_t v;
		point_t *p;

		if (idx > h->nsites)
			continue;
		v = site_at(h, idx)->live_bytes;
		if (v == s->seen[i])
			continue;
		s->seen[i] = v;
		p = &s->p[i][k];
		if (!p->used || v > p->max)
			p->max = v;
		p->last = v;
		p->used = 1;
	}
}

/* ---- strings: each once, by index ---- */

/* A string of the table: its text in text, and its index + 1 in the
 * page's list once it is written there (0 before). */
struct str_pos {
	size_t off, len;
	uint64_t out;
};

/*
 * The page's strings.  A string gets an index of the table when it is
 * met (every frame of every stack, for the flame graph's tree), and one
 * in the page's list only when something written refers to it, so that
 * the names of the frames left out cost nothing.
 */
typedef struct {
	mt_map_t by_hash;     /* hash of the text -> uint64_t, its index */
	struct str_pos *pos;  /* by index */
	size_t n, cap;
	mt_buf_t text;        /* the texts, end to end */
	mt_buf_t json;        /* the list's members, ',' between them */
	uint64_t nout;        /* strings in the list */
	size_t max_bytes;
} strings_t;

static void strings_init(strings_t *t, size_t max_bytes)
{
	memset(t, 0, sizeof(*t));
	mt_map_init(&t->by_hash, sizeof(uint64_t));
	mt_buf_init(&t->text, 0);
	mt_buf_init(&t->json, 0);
	t->max_bytes = max_bytes;
}

static void strings_release(strings_t *t)
{
	mt_map_release(&t->by_hash);
	mt_mem_free(t->pos);
	mt_buf_release(&t->text);
	mt_buf_release(&t->json);
}

static uint64_t hash_text(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/* A JSON string of s[0..n) with every '<' as \u003c. */
static int add_json(mt_buf_t *b, const char *s, size_t n)
{
	mt_buf_t tmp = MT_BUF_INIT;
	size_t mark = b->len, from = 0;
	int rc;

	ADD(mt_buf_add_json_str(&tmp, s, n));
	for (size_t i = 0; i < tmp.len; i++)
		if (tmp.data[i] == '<') {
			ADD(mt_buf_add(b, tmp.data + from, i - from));
			ADD(mt_buf_add_str(b, "\\u003c"));
			from = i + 1;
		}
	ADD(mt_buf_add(b, tmp.data + from, tmp.len - from));
cleanup:
	if (rc)
		mt_buf_truncate(b, mark);
	mt_buf_release(&tmp);
	return rc;
}

static int add_json_cstr(mt_buf_t *b, const char *s)
{
	return add_json(b, s, strlen(s));
}

/* The table's index of the string s[0..n), cut at the budget (on a
 * character's first byte, with "..." after it). */
static int strings_index(strings_t *t, const char *s, size_t n, uint64_t *out)
{
	char cut[NAME_BYTES + 4];
	uint64_t key, *found;
	void *v;
	int created = 0, rc;

	if (n > t->max_bytes) {
		size_t k = t->max_bytes;

		while (k && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
		memcpy(cut, s, k);
		memcpy(cut + k, "...", 3);
		s = cut;
		n = k + 3;
	}
	for (key = hash_text(s, n); (found = mt_map_find(&t->by_hash, key)); key++)
		if (t->pos[*found].len == n &&
		    !memcmp(t->text.data + t->pos[*found].off, s, n)) {
			*out = *found;
			return MT_OK;
		}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct str_pos *pos = mt_mem_realloc(t->pos, cap * sizeof(*pos));

		if (!pos)
			return MT_ENOMEM;
		t->pos = pos;
		t->cap = cap;
	}
	ADD(mt_map_upsert(&t->by_hash, key, &v, &created));
	if ((rc = mt_buf_add(&t->text, s, n))) {
		mt_map_remove(&t->by_hash, key, NULL);
		return rc;
	}
	*(uint64_t *)v = t->n;
	t->pos[t->n] = (struct str_pos){ t->text.len - n, n, 0 };
	*out = t->n++;
cleanup:
	return rc;
}

/* The page's index of the table's string i, listed if need be. */
static int strings_out(strings_t *t, uint64_t i, uint64_t *out)
{
	struct str_pos *p = &t->pos[i];
	size_t mark = t->json.len;
	int rc = MT_OK;

	if (!p->out) {
		if (t->nout)
			ADD(mt_buf_add_str(&t->json, ","));
		ADD(add_json(&t->json, t->text.data + p->off, p->len));
		p->out = ++t->nout;
	}
	*out = p->out - 1;
cleanup:
	if (rc)
		mt_buf_truncate(&t->json, mark);
	return rc;
}

/* Append the page's index of the table's string i. */
static int add_str(mt_buf_t *b, strings_t *t, uint64_t i)
{
	uint64_t k;
	int rc = strings_out(t, i, &k);

	return rc ? rc : mt_buf_add_u64(b, k);
}

/* ---- the flame graph's tree ---- */

typedef struct {
	uint64_t name;   /* string index */
	uint64_t parent; /* node index + 1; 0 for the root's children */
	uint64_t v[F_COUNT];
	double share;    /* the largest share of a figure's total it holds */
} node_t;

typedef struct {
	node_t *nodes;
	size_t n, cap;
	mt_map_t by_key; /* hash of (parent, name) -> node index */
} tree_t;

static void tree_release(tree_t *t)
{
	mt_mem_free(t->nodes);
	mt_map_release(&t->by_key);
}

static uint64_t node_key(uint64_t parent, uint64_t name)
{
	uint64_t k = parent * 0x9e3779b97f4a7c15ull ^ (name + 0x632be59bd9b4e019ull);

	return k ^ (k >> 29);
}

/* The child of parent (index + 1, or 0) named name, made if need be. */
static int tree_child(tree_t *t, uint64_t parent, uint64_t name, size_t *out)
{
	uint64_t key;
	uint64_t *found;
	void *v;
	int created, rc;

	for (key = node_key(parent, name); (found = mt_map_find(&t->by_key, key));
	     key++)
		if (t->nodes[*found].parent == parent && t->nodes[*found].name == name) {
			*out = *found;
			return MT_OK;
		}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		node_t *nodes = mt_mem_realloc(t->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return MT_ENOMEM;
		t->nodes = nodes;
		t->cap = cap;
	}
	if ((rc = mt_map_upsert(&t->by_key, key, &v, &created)))
		return rc;
	*(uint64_t *)v = t->n;
	memset(&t->nodes[t->n], 0, sizeof(t->nodes[0]));
	t->nodes[t->n].name = name;
	t->nodes[t->n].parent = parent;
	*out = t->n++;
	return MT_OK;
}

/* ---- a page ---- */

/* What a site shows. */
typedef struct {
	const mt_site_ref_t *ref;
	uint64_t v[F_COUNT];
	int shown;
	int series; /* index + 1 in the series, or 0 */
} site_t;

typedef struct {
	const mt_analysis_t *a;
	const mt_html_pass_t *pass;
	const char *path, *name;
	mt_srcline_t lines;
	mt_map_t frame_name; /* frame id -> string index of its name */
	strings_t strs;
	mt_site_ref_t *refs;
	char **labels; /* each site's (mt_label), as refs */
	site_t *sites;
	size_t nsites;
	site_series_t *series; /* NULL: none */
	mt_suppress_left_t left; /* what the suppressions left out */
	tree_t tree;
	mt_buf_t scratch;
	uint64_t no_stack, truncated; /* string index + 1 of the pseudo-frames */
} page_t;

/* The string index of level level of frame id's name (mt_flame's). */
static int frame_name(page_t *g, uint64_t id, size_t level, uint64_t *out)
{
	const mt_frame_t *f = mt_map_find(&g->a->heap.frames, id);
	uint64_t *found = level ? NULL : mt_map_find(&g->frame_name, id);
	void *v;
	int created, rc;

	if (found) {
		*out = *found;
		return MT_OK;
	}
	mt_buf_reset(&g->scratch);
	if ((rc = mt_flame_add_level(&g->scratch, &g->lines, id, f, level)) ||
	    (rc = strings_index(&g->strs, g->scratch.data ? g->scratch.data : "",
				g->scratch.len, out)))
		return rc;
	if (level)
		return MT_OK;
	if ((rc = mt_map_upsert(&g->frame_name, id, &v, &created)))
		return rc;
	*(uint64_t *)v = *out;
	return MT_OK;
}

/* How many levels frame id stands for (mt_srcline_level_t). */
static int frame_levels(page_t *g, uint64_t id, size_t *n)
{
	return mt_flame_nlevels(&g->lines, id,
				mt_map_find(&g->a->heap.frames, id), n);
}

static int pseudo_name(page_t *g, uint64_t *slot, const char *name,
		       uint64_t *out)
{
	int rc;

	if (!*slot) {
		if ((rc = strings_index(&g->strs, name, strlen(name), out)))
			return rc;
		*slot = *out + 1;
	}
	*out = *slot - 1;
	return MT_OK;
}

/* Whether site s's stack was cut at the depth limit (mt_flame's rule). */
static int stack_cut(const mt_analysis_t *a, const mt_stack_t *st)
{
	return st && st->nframes && a->has_stack_depth &&
	       st->nframes == a->stack_depth;
}

/* The frames of a site, root first, as string indices: "[no stack]" for
 * none, "[truncated]" first for a cut one.  *names is scratch the caller
 * frees. */
static int site_path(page_t *g, const site_t *s, uint64_t **names, size_t *n)
{
	const mt_stack_t *st = s->ref->stack;
	size_t nf = st ? st->nframes : 0, k = 0, total = 0, levels;
	uint64_t *p;
	int rc;

	for (size_t i = 0; i < nf; i++) {
		if ((rc = frame_levels(g, st->frames[i], &levels)))
			return rc;
		total += levels;
	}
	if (!(p = mt_mem_realloc(*names, (total + 1) * sizeof(*p))))
		return MT_ENOMEM;
	*names = p;
	if (!nf)
		rc = pseudo_name(g, &g->no_stack, "[no stack]", &p[k++]);
	else if (stack_cut(g->a, st))
		rc = pseudo_name(g, &g->truncated, "[truncated]", &p[k++]);
	else
		rc = MT_OK;
	for (size_t i = 0; !rc && i < nf; i++) {
		uint64_t id = st->frames[nf - 1 - i];

		if ((rc = frame_levels(g, id, &levels)))
			break;
		for (size_t j = levels; !rc && j-- > 0;)
			rc = frame_name(g, id, j, &p[k++]);
	}
	*n = k;
	return rc;
}

static int build_tree(page_t *g, uint64_t total[F_COUNT])
{
	uint64_t *names = NULL;
	size_t n;
	int rc = MT_OK;

	for (size_t i = 0; i < g->nsites; i++) {
		const site_t *s = &g->sites[i];
		uint64_t parent = 0;

		ADD(site_path(g, s, &names, &n));
		for (size_t k = 0; k < n; k++) {
			size_t at;

			ADD(tree_child(&g->tree, parent, names[k], &at));
			for (int f = 0; f < F_COUNT; f++)
				g->tree.nodes[at].v[f] += s->v[f];
			parent = at + 1;
		}
	}
	for (size_t i = 0; i < g->tree.n; i++) {
		node_t *x = &g->tree.nodes[i];

		x->share = 0;
		for (int f = 0; f < F_COUNT; f++)
			if (total[f] && (double)x->v[f] / (double)total[f] > x->share)
				x->share = (double)x->v[f] / (double)total[f];
	}
cleanup:
	mt_mem_free(names);
	return rc;
}

static const node_t *sort_nodes;

/* Larger share first; on a tie, the older node (a parent before its
 * children, so a cut never keeps a child without its parent). */
static int cmp_share(const void *x, const void *y)
{
	const node_t *a = &sort_nodes[*(const uint32_t *)x];
	const node_t *b = &sort_nodes[*(const uint32_t *)y];

	if (a->share != b->share)
		return a->share < b->share ? 1 : -1;
	return (*(const uint32_t *)x > *(const uint32_t *)y) -
	       (*(const uint32_t *)x < *(const uint32_t *)y);
}

/* "flame":{"total":[...],"nodes":[[name,parent,calls,bytes,peak,leaked]
 * ...],"left_out":N}, the nodes kept in tree order, parent an index + 1
 * into the kept nodes (0: a root). */
static int add_flame(mt_buf_t *b, page_t *g, const uint64_t total[F_COUNT],
		     size_t budget)
{
	const tree_t *t = &g->tree;
	uint32_t *order = NULL;
	uint64_t *kept_at = NULL; /* by node: its index + 1 among the kept */
	size_t nkept = 0, k = 0;
	int rc = MT_OK;

	if (t->n && (!(order = mt_mem_malloc(t->n * sizeof(*order))) ||
		     !(kept_at = mt_mem_calloc(t->n, sizeof(*kept_at))))) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < t->n; i++)
		order[i] = (uint32_t)i;
	if (t->n) {
		sort_nodes = t->nodes;
		qsort(order, t->n, sizeof(*order), cmp_share);
	}
	for (size_t i = 0; i < t->n && i < budget; i++)
		if (t->nodes[order[i]].share * FLAME_SHARE >= 1.0)
			kept_at[order[i]] = 1;
	ADD(mt_buf_add_str(b, "\"flame\":{\"total\":["));
	for (int f = 0; f < F_COUNT; f++) {
		if (f)
			ADD(mt_buf_add_str(b, ","));
		ADD(mt_buf_add_u64(b, total[f]));
	}
	ADD(mt_buf_add_str(b, "],\"nodes\":["));
	for (size_t i = 0; i < t->n; i++) {
		const node_t *x = &t->nodes[i];

		if (!kept_at[i])
			continue;
		kept_at[i] = ++nkept;
		if (nkept > 1)
			ADD(mt_buf_add_str(b, ","));
		ADD(mt_buf_add_str(b, "["));
		ADD(add_str(b, &g->strs, x->name));
		ADD(mt_buf_add_str(b, ","));
		ADD(mt_buf_add_u64(b, x->parent ? kept_at[x->parent - 1] : 0));
		for (int f = 0; f < F_COUNT; f++) {
			ADD(mt_buf_add_str(b, ","));
			ADD(mt_buf_add_u64(b, x->v[f]));
		}
		ADD(mt_buf_add_str(b, "]"));
	}
	k = t->n - nkept;
	ADD(mt_buf_add_str(b, "],\"left_out\":"));
	ADD(mt_buf_add_u64(b, k));
	ADD(mt_buf_add_str(b, "}"));
cleanup:
	mt_mem_free(order);
	mt_mem_free(kept_at);
	return rc;
}

static int add_u64_field(mt_buf_t *b, const char *key, uint64_t v, int first)
{
	int rc;

	if ((!first && (rc = mt_buf_add_str(b, ","))) ||
	    (rc = mt_buf_add_str(b, "\"")) || (rc = mt_buf_add_str(b, key)) ||
	    (rc = mt_buf_add_str(b, "\":")))
		return rc;
	return mt_buf_add_u64(b, v);
}

static int add_verdict(mt_buf_t *b, const mt_analysis_t *a)
{
	const mt_integrity_t *ig = &a->integrity;
	const char *msg = mt_integrity_message(ig);
	int rc, first = 1;

	ADD(mt_buf_add_str(b, "\"verdict\":{\"status\":"));
	ADD(add_json_cstr(b, mt_integrity_status(ig)));
	ADD(mt_buf_add_str(b, ",\"message\":"));
	ADD(msg ? add_json_cstr(b, msg) : mt_buf_add_str(b, "null"));
	ADD(mt_buf_add_str(b, ",\"caveats\":["));
	for (int c = 0; c < MT_CAVEAT_COUNT; c++) {
		if (!(ig->caveats & (1u << c)))
			continue;
		if (!first)
			ADD(mt_buf_add_str(b, ","));
		first = 0;
		ADD(mt_buf_add_str(b, "{\"name\":"));
		ADD(add_json_cstr(b, mt_integrity_caveat_name((mt_caveat_t)c)));
		ADD(mt_buf_add_str(b, ",\"message\":"));
		ADD(add_json_cstr(b, ig->message[c]));
		ADD(mt_buf_add_str(b, "}"));
	}
	ADD(mt_buf_add_str(b, "]}"));
cleanup:
	return rc;
}

/* The summary row's totals, under its names. */
static int add_totals(mt_buf_t *b, const mt_analysis_t *a)
{
	const mt_heap_t *h = &a->heap;
	const struct {
		const char *key;
		uint64_t v;
	} f[] = {
		{ "events", h->events },
		{ "threads", mt_heap_threads(h) },
		{ "allocations", h->allocations },
		{ "frees", h->frees },
		{ "resizes", h->resizes },
		{ "remaps", h->remaps },
		{ "failed_allocations", h->failed_allocations },
		{ "unknown_frees", h->unknown_frees },
		{ "overlapping_allocs", h->overlapping_allocs },
		{ "bytes_allocated", h->bytes_allocated },
		{ "bytes_freed", h->bytes_freed },
		{ "live_allocations", h->live_allocations },
		{ "live_bytes", h->live_bytes },
		{ "peak_live_bytes", h->peak_live_bytes },
		{ "peak_live_allocations", h->peak_live_allocations },
		{ "peak_seq", h->peak_seq },
		{ "temporary_allocations", h->temporary_allocations },
		{ "duration_ns", h->duration_ns },
	};
	int rc;

	ADD(mt_buf_add_str(b, "\"totals\":{"));
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		ADD(add_u64_field(b, f[i].key, f[i].v, i == 0));
	/* A sampled trace's mean: the page says its figures are estimates,
	 * each with its standard error, under the summary row's names. */
	if (h->sample_bytes) {
		const struct {
			const char *key;
			mt_sampling_var_t var;
		} e[] = {
			{ "allocations_stderr", h->var.allocations },
			{ "frees_stderr", h->var.frees },
			{ "resizes_stderr", h->var.resizes },
			{ "remaps_stderr", h->var.remaps },
			{ "bytes_allocated_stderr", h->var.bytes_allocated },
			{ "bytes_freed_stderr", h->var.bytes_freed },
			{ "live_allocations_stderr", h->var.live_allocations },
			{ "live_bytes_stderr", h->var.live_bytes },
			{ "peak_live_bytes_stderr", h->var.peak_live_bytes },
			{ "peak_live_allocations_stderr", h->var.peak_live_allocations },
		};

		ADD(add_u64_field(b, "sample_bytes", h->sample_bytes, 0));
		for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
			ADD(add_u64_field(b, e[i].key, mt_sampling_stderr(e[i].var), 0));
	}
	ADD(mt_buf_add_str(b, "}"));
cleanup:
	return rc;
}

/* A step curve of the pass's series, [x, y, x, y, ...] (mt_plot's). */
static int add_curve(mt_buf_t *b, const mt_plot_series_t *s, int blocks)
{
	uint64_t y = 0;
	int rc;

	ADD(mt_buf_add_str(b, "[0,0"));
	for (size_t i = 0; i < MT_PLOT_BUCKETS; i++) {
		const mt_plot_bucket_t *k = &s->b[i];
		uint64_t xm = blocks ? k->x_bmax : k->x_max;
		uint64_t m = blocks ? k->bmax : k->max;
		uint64_t last = blocks ? k->blast : k->last;
		uint64_t px[2], py[2];

		if (!k->used)
			continue;
		if (xm <= k->x_last) {
			px[0] = xm, py[0] = m, px[1] = k->x_last, py[1] = last;
		} else {
			px[0] = k->x_last, py[0] = last, px[1] = xm, py[1] = m;
		}
		for (int j = 0; j < 2; j++) {
			ADD(mt_buf_add_str(b, ","));
			ADD(mt_buf_add_u64(b, px[j]));
			ADD(mt_buf_add_str(b, ","));
			ADD(mt_buf_add_u64(b, py[j]));
		}
		y = last;
	}
	ADD(mt_buf_add_str(b, ","));
	ADD(mt_buf_add_u64(b, s->x_end));
	ADD(mt_buf_add_str(b, ","));
	ADD(mt_buf_add_u64(b, y));
	ADD(mt_buf_add_str(b, "]"));
cleanup:
	return rc;
}

static int add_series(mt_buf_t *b, const mt_html_pass_t *p)
{
	const mt_plot_curve_t *c = &p->curve;
	int timed = curve_timed(c);
	const mt_plot_series_t *s = timed ? &c->by_t : &c->by_seq;
	int rc;

	ADD(mt_buf_add_str(b, "\"series\":{\"x\":"));
	ADD(mt_buf_add_str(b, timed ? "\"ns\"" : "\"seq\""));
	ADD(add_u64_field(b, "x_end", s->x_end, 0));
	ADD(add_u64_field(b, "heap_events", c->heap_events, 0));
	ADD(mt_buf_add_str(b, ",\"bytes\":"));
	ADD(add_curve(b, s, 0));
	ADD(mt_buf_add_str(b, ",\"blocks\":"));
	ADD(add_curve(b, s, 1));
	ADD(mt_buf_add_str(b, "}"));
cleanup:
	return rc;
}

/* A site's stack for its panel: [[name, where], ...] innermost first,
 * where "file:line", else the module, else "". */
static int add_stack(mt_buf_t *b, page_t *g, const site_t *s)
{
	const mt_stack_t *st = s->ref->stack;
	size_t nf = st ? st->nframes : 0;
	uint64_t idx;
	int rc;

	ADD(mt_buf_add_str(b, "["));
	for (size_t i = 0, n = 0; i < nf; i++) {
		const mt_frame_t *f = mt_map_find(&g->a->heap.frames, st->frames[i]);
		mt_srcline_loc_t loc = { 0 };

		if (f)
			ADD(mt_srcline_resolve(&g->lines, st->frames[i], f, &loc));
		for (size_t k = 0; k < mt_srcline_nlevels(&loc); k++, n++) {
			mt_srcline_level_t l = mt_srcline_level(&loc, k);

			if (n)
				ADD(mt_buf_add_str(b, ","));
			ADD(frame_name(g, st->frames[i], k, &idx));
			ADD(mt_buf_add_str(b, "["));
			ADD(add_str(b, &g->strs, idx));
			ADD(mt_buf_add_str(b, ","));
			/* Where: the level's file:line; a frame without a
			 * line is named "0xOFFSET in MODULE" already, and
			 * its module is no source file. */
			mt_buf_reset(&g->scratch);
			if (l.file) {
				ADD(mt_srcline_add_clean(&g->scratch, l.file));
				ADD(mt_buf_add_str(&g->scratch, ":"));
				ADD(mt_buf_add_u64(&g->scratch, l.line));
			}
			if (l.file && l.inlined)
				ADD(mt_buf_add_str(&g->scratch, " (inlined)"));
			ADD(strings_index(&g->strs, g->scratch.data ?
					  g->scratch.data : "",
					  g->scratch.len, &idx));
			ADD(add_str(b, &g->strs, idx));
			ADD(mt_buf_add_str(b, "]"));
		}
	}
	ADD(mt_buf_add_str(b, "]"));
cleanup:
	return rc;
}

static int add_site_series(mt_buf_t *b, const site_series_t *ss, size_t i)
{
	uint64_t last = 0;
	int rc;

	ADD(mt_buf_add_str(b, "["));
	for (size_t k = 0; k < MT_HTML_SITE_POINTS; k++) {
		const point_t *p = &ss->p[i][k];
		uint64_t max = p->used ? p->max : last;

		/* A bucket's highest, then where it ends. */
		if (k)
			ADD(mt_buf_add_str(b, ","));
		if (p->used && p->max < last)
			max = last;
		ADD(mt_buf_add_u64(b, max));
		ADD(mt_buf_add_str(b, ","));
		if (p->used)
			last = p->last;
		ADD(mt_buf_add_u64(b, last));
	}
	ADD(mt_buf_add_str(b, "]"));
cleanup:
	return rc;
}

static int add_sites(mt_buf_t *b, page_t *g)
{
	size_t n = 0;
	uint64_t idx;
	int rc;

	ADD(mt_buf_add_str(b, "\"sites\":["));
	for (size_t i = 0; i < g->nsites; i++) {
		const site_t *s = &g->sites[i];
		const mt_site_t *site = s->ref->site;

		if (!s->shown)
			continue;
		if (n++)
			ADD(mt_buf_add_str(b, ","));
		ADD(mt_buf_add_str(b, "{"));
		ADD(add_u64_field(b, "stack_id", s->ref->stack_id, 1));
		ADD(strings_index(&g->strs, g->labels[s->ref - g->refs],
				  strlen(g->labels[s->ref - g->refs]), &idx));
		ADD(mt_buf_add_str(b, ",\"label\":"));
		ADD(add_str(b, &g->strs, idx));
		ADD(add_u64_field(b, "calls", s->v[F_CALLS], 0));
		ADD(add_u64_field(b, "bytes_allocated", s->v[F_BYTES], 0));
		ADD(add_u64_field(b, "peak", s->v[F_PEAK], 0));
		ADD(add_u64_field(b, "leaked", s->v[F_LEAKED], 0));
		ADD(add_u64_field(b, "allocations", site->allocations, 0));
		ADD(add_u64_field(b, "live_allocations", site->live_allocations, 0));
		ADD(add_u64_field(b, "peak_live_bytes", site->peak_live_bytes, 0));
		ADD(add_u64_field(b, "temporary_allocations",
				  site->temporary_allocations, 0));
		ADD(mt_buf_add_str(b, ",\"truncated\":"));
		ADD(mt_buf_add_str(b, stack_cut(g->a, s->ref->stack) ? "true" : "false"));
		if (!s->ref->stack) {
			ADD(pseudo_name(g, &g->no_stack, "[no stack]", &idx));
			ADD(mt_buf_add_str(b, ",\"stack\":[["));
			ADD(add_str(b, &g->strs, idx));
			ADD(mt_buf_add_str(b, ","));
			ADD(strings_index(&g->strs, "", 0, &idx));
			ADD(add_str(b, &g->strs, idx));
			ADD(mt_buf_add_str(b, "]]"));
		} else {
			ADD(mt_buf_add_str(b, ",\"stack\":"));
			ADD(add_stack(b, g, s));
		}
		ADD(mt_buf_add_str(b, ",\"series\":"));
		if (g->series && s->series)
			ADD(add_site_series(b, g->series, (size_t)s->series - 1));
		else
			ADD(mt_buf_add_str(b, "null"));
		ADD(mt_buf_add_str(b, "}"));
	}
	ADD(mt_buf_add_str(b, "]"));
	ADD(add_u64_field(b, "sites_total", g->nsites, 0));
cleanup:
	return rc;
}

static int sort_figure;
static const site_t *sort_sites;

static int cmp_figure(const void *x, const void *y)
{
	const site_t *a = &sort_sites[*(const uint32_t *)x];
	const site_t *b = &sort_sites[*(const uint32_t *)y];
	uint64_t va = sort_figure < F_COUNT ? a->v[sort_figure] : a->ref->site->peak_live_bytes;
	uint64_t vb = sort_figure < F_COUNT ? b->v[sort_figure] : b->ref->site->peak_live_bytes;

	if (va != vb)
		return va < vb ? 1 : -1;
	return (a->ref->stack_id > b->ref->stack_id) -
	       (a->ref->stack_id < b->ref->stack_id);
}

/* Mark the top `per` sites by each figure as shown, and give the top
 * MT_HTML_SERIES_SITES by their own peak a series slot. */
static int choose_sites(page_t *g, size_t per, site_series_t *ss)
{
	uint32_t *order;

	if (!g->nsites)
		return MT_OK;
	if (!(order = mt_mem_malloc(g->nsites * sizeof(*order))))
		return MT_ENOMEM;
	sort_sites = g->sites;
	for (sort_figure = 0; sort_figure <= F_COUNT; sort_figure++) {
		for (size_t i = 0; i < g->nsites; i++)
			order[i] = (uint32_t)i;
		qsort(order, g->nsites, sizeof(*order), cmp_figure);
		for (size_t i = 0; i < g->nsites && i < per; i++) {
			site_t *s = &g->sites[order[i]];

			if (sort_figure < F_COUNT && !s->v[sort_figure])
				break;
			s->shown = 1;
			if (sort_figure == F_COUNT && ss && !s->series &&
			    ss->n < MT_HTML_SERIES_SITES && s->ref->site->peak_live_bytes) {
				ss->site_index[ss->n] = s->ref->stack ?
					s->ref->stack->site_index : 0;
				s->series = (int)++ss->n;
			}
		}
	}
	mt_mem_free(order);
	return MT_OK;
}

/* Read the trace again for the chosen sites' series; g->series stays NULL
 * when it cannot be read. */
static int read_series(page_t *g, site_series_t *ss)
{
	const mt_plot_curve_t *c = &g->pass->curve;
	mt_analysis_t again;
	int rc;

	if (!strcmp(g->path, "-") || !ss->n)
		return MT_OK;
	ss->timed = curve_timed(c);
	ss->x_end = ss->timed ? c->by_t.x_end : c->by_seq.x_end;
	/* Over the same allocator's blocks as the first (--allocator). */
	rc = mt_analysis_run_allocator(&again, g->path, g->a->heap.only_allocator,
				       series_observe, ss);
	if (rc == MT_OK && again.heap.events == g->a->heap.events)
		g->series = ss;
	mt_analysis_release(&again);
	return rc == MT_ENOMEM ? MT_ENOMEM : MT_OK;
}

static int add_page(mt_buf_t *b, page_t *g, size_t nodes)
{
	uint64_t total[F_COUNT] = { 0 };
	int rc;

	for (size_t i = 0; i < g->nsites; i++)
		for (int f = 0; f < F_COUNT; f++)
			total[f] += g->sites[i].v[f];
	if (!g->tree.n)
		ADD(build_tree(g, total));

	ADD(mt_buf_add_str(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
			      "<meta charset=\"utf-8\">\n"
			      "<meta name=\"viewport\" content=\"width=device-width\">\n"
			      "<title>memtrace: "));
	/* The program the trace names, else the trace's name, as the
	 * page's heading says it. */
	mt_buf_reset(&g->scratch);
	ADD(mt_identity_describe(&g->a->identity, g->name, MT_IDENTITY_PIDS,
				 &g->scratch));
	for (size_t i = 0; i < g->scratch.len; i++) {
		const char *p = g->scratch.data + i;
		const char *esc = *p == '<' ? "&lt;" : *p == '>' ? "&gt;" :
				  *p == '&' ? "&amp;" : NULL;

		ADD(esc ? mt_buf_add_str(b, esc) : mt_buf_add(b, p, 1));
	}
	ADD(mt_buf_add_str(b, "</title>\n<style>\n"));
	ADD(mt_buf_add_str(b, mt_html_style));
	ADD(mt_buf_add_str(b, "</style>\n</head>\n<body>\n"
			      "<script type=\"application/json\" id=\"memtrace-data\">{"
			      "\"memtrace_html\":1,\"name\":"));
	ADD(add_json_cstr(b, g->name));
	ADD(mt_buf_add_str(b, ",\"program\":"));
	if (mt_identity_known(&g->a->identity))
		ADD(add_json(b, g->scratch.data, g->scratch.len));
	else
		ADD(mt_buf_add_str(b, "null"));
	ADD(mt_buf_add_str(b, ","));
	ADD(add_verdict(b, g->a));
	ADD(mt_buf_add_str(b, ","));
	ADD(add_totals(b, g->a));
	/* What the suppressions left out of the leaked figures, as report
	 * says it; null when nothing was. */
	ADD(mt_buf_add_str(b, ",\"left_out\":"));
	if (g->left.sites) {
		mt_buf_reset(&g->scratch);
		ADD(mt_suppress_add_left_out(&g->scratch, &g->left));
		ADD(add_json(b, g->scratch.data, g->scratch.len));
	} else {
		ADD(mt_buf_add_str(b, "null"));
	}
	ADD(mt_buf_add_str(b, ","));
	ADD(add_series(b, g->pass));
	ADD(mt_buf_add_str(b, ",\"site_points\":"));
	ADD(mt_buf_add_u64(b, MT_HTML_SITE_POINTS));
	ADD(mt_buf_add_str(b, ",\"site_series\":"));
	ADD(mt_buf_add_str(b, g->series ? "true" : !strcmp(g->path, "-") ?
				"\"the trace was read from standard input, once\"" :
				"false"));
	ADD(mt_buf_add_str(b, ","));
	ADD(add_sites(b, g));
	ADD(mt_buf_add_str(b, ","));
	ADD(add_flame(b, g, total, nodes));
	/* The strings last: the sites and the flame graph add to them. */
	ADD(mt_buf_add_str(b, ",\"strings\":["));
	ADD(mt_buf_add(b, g->strs.json.data, g->strs.json.len));
	ADD(mt_buf_add_str(b, "]}</script>\n<script>\n"));
	ADD(mt_buf_add_str(b, mt_html_script));
	ADD(mt_buf_add_str(b, "</script>\n</body>\n</html>\n"));
cleanup:
	return rc;
}

static void page_release(page_t *g)
{
	tree_release(&g->tree);
	strings_release(&g->strs);
	mt_map_release(&g->frame_name);
	mt_buf_release(&g->scratch);
}

static void page_init(page_t *g, size_t name_bytes)
{
	memset(&g->tree, 0, sizeof(g->tree));
	mt_map_init(&g->tree.by_key, sizeof(uint64_t));
	strings_init(&g->strs, name_bytes);
	mt_map_init(&g->frame_name, sizeof(uint64_t));
	mt_buf_init(&g->scratch, 0);
	g->no_stack = g->truncated = 0;
}

int mt_html_render(const mt_analysis_t *a, const mt_html_pass_t *p,
		   const mt_suppress_t *supp, const char *path, const char *name,
		   mt_buf_t *out)
{
	return mt_html_render_labelled(a, p, supp, NULL, path, name, out);
}

int mt_html_render_labelled(const mt_analysis_t *a, const mt_html_pass_t *p,
			    const mt_suppress_t *supp,
			    const mt_label_opts_t *labels, const char *path,
			    const char *name, mt_buf_t *out)
{
	page_t g = { .a = a, .pass = p, .path = path, .name = name };
	site_series_t *ss = NULL;
	size_t per = SITES_PER_FIGURE, nodes = FLAME_NODES, name_bytes = NAME_BYTES;
	size_t mark = out->len, n = 0;
	int rc;

	mt_srcline_init(&g.lines);
	page_init(&g, name_bytes);
	ADD(mt_sites_list(&a->heap, &g.refs, &n));
	g.nsites = n;
	ADD(mt_label_sites(&a->heap, &g.lines, labels, g.refs, n, &g.labels));
	if (n && !(g.sites = mt_mem_calloc(n, sizeof(*g.sites)))) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		site_t *s = &g.sites[i];

		s->ref = &g.refs[i];
		s->v[F_CALLS] = g.refs[i].calls;
		s->v[F_BYTES] = g.refs[i].site->bytes_allocated;
		s->v[F_PEAK] = mt_heap_site_at_peak(&a->heap, g.refs[i].site);
		s->v[F_LEAKED] = g.refs[i].site->live_bytes;
	}
	/* A suppressed site leaks nothing on the page (mt_suppress.h). */
	for (size_t i = 0; i < n; i++) {
		int hit;

		ADD(mt_suppress_site(supp, &a->heap, &g.lines, &g.refs[i], &hit));
		if (!hit)
			continue;
		g.sites[i].v[F_LEAKED] = 0;
		g.left.sites++;
		g.left.live_bytes += g.refs[i].site->live_bytes;
		g.left.live_allocations += g.refs[i].site->live_allocations;
	}
	if (!(ss = mt_mem_calloc(1, sizeof(*ss)))) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	ADD(choose_sites(&g, per, ss));
	ADD(read_series(&g, ss));
	for (;;) {
		ADD(add_page(out, &g, nodes));
		if (out->len - mark <= MT_HTML_MAX_BYTES || (per <= 1 && nodes <= 1 &&
							     name_bytes <= 16))
			break;
		/* Too big: again with half of every budget. */
		mt_buf_truncate(out, mark);
		per = per > 1 ? per / 2 : 1;
		nodes = nodes > 1 ? nodes / 2 : 1;
		name_bytes = name_bytes > 16 ? name_bytes / 2 : 16;
		/* A site still shown keeps its series. */
		for (size_t i = 0; i < n; i++)
			g.sites[i].shown = 0;
		ADD(choose_sites(&g, per, NULL));
		page_release(&g);
		page_init(&g, name_bytes);
	}
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	page_release(&g);
	mt_srcline_release(&g.lines);
	mt_mem_free(ss);
	mt_mem_free(g.sites);
	mt_label_free(g.labels, n);
	mt_mem_free(g.refs);
	return rc;
}
