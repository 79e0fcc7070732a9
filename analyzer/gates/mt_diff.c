/*
 * mt_diff: two runs side by side.  It must never match sites by anything
 * that changes between runs of the same program (ids, addresses, offsets),
 * nor call a regression on input it could not read.
 */
#include "../gates/mt_diff.h"


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mt_buf.h"
#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../gates/mt_profile.h"
#include "../base/mt_units.h"

#define SITE_FRAMES 6

/* The totals compared, in the order shown; the first two decide. */
static const struct {
	mt_profile_field_t field;
	int is_size;
} shown[] = {
	{ MT_PF_PEAK_LIVE_BYTES, 1 },
	{ MT_PF_LIVE_BYTES, 1 },
	{ MT_PF_BYTES_ALLOCATED, 1 },
	{ MT_PF_ALLOCATIONS, 0 },
	{ MT_PF_FREES, 0 },
	{ MT_PF_LIVE_ALLOCATIONS, 0 },
	{ MT_PF_PEAK_LIVE_ALLOCATIONS, 0 },
	{ MT_PF_TEMPORARY_ALLOCATIONS, 0 },
	{ MT_PF_FAILED_ALLOCATIONS, 0 },
};
#define NSHOWN (sizeof(shown) / sizeof(shown[0]))
#define NDECIDING 2

/* A site's counts that diff compares, by their site-line names;
 * "allocations" is the site's calls, reallocs included, when both runs
 * are traces (build_side()). */
enum { C_ALLOCATIONS, C_BYTES_ALLOCATED, C_LIVE_ALLOCATIONS, C_LIVE_BYTES,
       C_PEAK, NCOUNTS };
static const char *const count_names[NCOUNTS] = {
	"allocations", "bytes_allocated", "live_allocations", "live_bytes",
	"bytes_at_peak",
};

/* The sites of one run whose stacks read the same. */
typedef struct {
	const char *key;
	size_t key_len;
	const mt_profile_site_t *site; /* the first, for its frames */
	/* count[C_PEAK] is the site's part of peak_live_bytes (its bytes
	 * live at the run's peak) when both runs are traces; a summary
	 * file does not say it, and then it is the sites' own peaks added
	 * up (a site line's peak_live_bytes), which are not simultaneous. */
	uint64_t count[NCOUNTS];
} group_t;

typedef struct {
	const mt_profile_t *p;
	mt_buf_t keys;
	group_t *groups;
	size_t ngroups;
} side_t;

typedef struct {
	const group_t *base, *now;
} pair_t;

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

/* ---- matching ---- */

/* One string of a key, told apart from null and from its neighbours: a
 * tag, its length, ':', its bytes. */
static int add_key_str(mt_buf_t *b, const char *s)
{
	int rc;

	if (!s)
		return mt_buf_add_str(b, "n");
	ADD(mt_buf_add_str(b, "s"));
	ADD(mt_buf_add_u64(b, strlen(s)));
	ADD(mt_buf_add_str(b, ":"));
	ADD(mt_buf_add_str(b, s));
cleanup:
	return rc;
}

static int add_key(mt_buf_t *b, const mt_profile_site_t *s)
{
	int rc = MT_OK;

	for (size_t i = 0; i < s->nframes; i++) {
		const char *m = s->frames[i].module;

		ADD(add_key_str(b, s->frames[i].symbol));
		ADD(add_key_str(b, m ? mt_profile_module_name(m) : NULL));
	}
cleanup:
	return rc;
}

static int cmp_key(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

static int cmp_group(const void *x, const void *y)
{
	const group_t *a = x, *b = y;
	int c = cmp_key(a->key, a->key_len, b->key, b->key_len);

	if (c)
		return c;
	/* Equal stacks keep their rank order: the first is the biggest. */
	return a->site < b->site ? -1 : a->site > b->site;
}

/* Group one run's sites by key, sorted by key.  With calls, a site's
 * allocations are its calls (mt_profile_site_t.calls); with at_peak, its
 * peak is its part of the run's peak (mt_profile_site_t.at_peak), else
 * its own. */
static int build_side(side_t *sd, const mt_profile_t *p, int calls, int at_peak)
{
	size_t *off = NULL, n = p->nsites, out = 0;
	int rc = MT_OK;

	sd->p = p;
	if (!n)
		return MT_OK;
	off = mt_mem_calloc(n + 1, sizeof(*off));
	sd->groups = mt_mem_calloc(n, sizeof(*sd->groups));
	if (!off || !sd->groups) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	/* Allocated even when every key is empty: each key points into it. */
	ADD(mt_buf_add_str(&sd->keys, ""));
	for (size_t i = 0; i < n; i++) {
		off[i] = sd->keys.len;
		ADD(add_key(&sd->keys, &p->sites[i]));
	}
	off[n] = sd->keys.len;
	for (size_t i = 0; i < n; i++) {
		const mt_profile_site_t *s = &p->sites[i];
		group_t *g = &sd->groups[i];

		g->key = sd->keys.data ? sd->keys.data + off[i] : "";
		g->key_len = off[i + 1] - off[i];
		g->site = s;
		g->count[C_ALLOCATIONS] = calls ? s->calls : s->allocations;
		g->count[C_BYTES_ALLOCATED] = s->bytes_allocated;
		g->count[C_LIVE_ALLOCATIONS] = s->live_allocations;
		g->count[C_LIVE_BYTES] = s->live_bytes;
		g->count[C_PEAK] = at_peak ? s->at_peak : s->peak_live_bytes;
	}
	qsort(sd->groups, n, sizeof(*sd->groups), cmp_group);
	for (size_t i = 0; i < n; i++) {
		group_t *g = &sd->groups[i];

		if (out && !cmp_key(sd->groups[out - 1].key,
				    sd->groups[out - 1].key_len, g->key,
				    g->key_len)) {
			for (int c = 0; c < NCOUNTS; c++)
				sd->groups[out - 1].count[c] += g->count[c];
			continue;
		}
		sd->groups[out++] = *g;
	}
	sd->ngroups = out;
cleanup:
	mt_mem_free(off);
	return rc;
}

static void side_release(side_t *sd)
{
	mt_buf_release(&sd->keys);
	mt_mem_free(sd->groups);
}

typedef __int128 i128;

/* A count in a run; 0 for a run the site is absent from. */
static uint64_t count(const group_t *g, int c)
{
	return g ? g->count[c] : 0;
}

static i128 change(const pair_t *pr, int c)
{
	return (i128)count(pr->now, c) - (i128)count(pr->base, c);
}

static const group_t *either(const pair_t *pr)
{
	return pr->now ? pr->now : pr->base;
}

/* The orders of the changed sites: by their change in the figure that
 * regressed, the peak's first; then in the others. */
#define NORDER 4
static const int by_peak[NORDER] = { C_PEAK, C_LIVE_BYTES, C_BYTES_ALLOCATED,
				     C_ALLOCATIONS };
static const int by_live[NORDER] = { C_LIVE_BYTES, C_PEAK, C_BYTES_ALLOCATED,
				     C_ALLOCATIONS };

static int cmp_pair(const void *x, const void *y, void *ctx)
{
	const pair_t *a = x, *b = y;
	const int *order = ctx;
	i128 da, db;
	const group_t *ga = either(a), *gb = either(b);

	for (size_t i = 0; i < NORDER; i++)
		if ((da = change(a, order[i])) != (db = change(b, order[i])))
			return da > db ? -1 : 1;
	return cmp_key(ga->key, ga->key_len, gb->key, gb->key_len);
}

static int changed(const pair_t *pr)
{
	if (!pr->base || !pr->now)
		return 1;
	for (int c = 0; c < NCOUNTS; c++)
		if (change(pr, c))
			return 1;
	return 0;
}

/* Pair the groups of two sides by key, keeping the changed pairs, by
 * growth in the counts of order (NORDER of them).  *unchanged counts the
 * others. */
static int pair_sites(const side_t *b, const side_t *n, const int *order,
		      pair_t **out, size_t *npairs, size_t *unchanged)
{
	size_t i = 0, j = 0, k = 0;
	pair_t *pairs;

	*out = NULL;
	*npairs = *unchanged = 0;
	if (!b->ngroups && !n->ngroups)
		return MT_OK;
	pairs = mt_mem_calloc(b->ngroups + n->ngroups, sizeof(*pairs));
	if (!pairs)
		return MT_ENOMEM;
	while (i < b->ngroups || j < n->ngroups) {
		pair_t pr = { NULL, NULL };
		int c = i == b->ngroups ? 1 :
			j == n->ngroups ? -1 :
			cmp_key(b->groups[i].key, b->groups[i].key_len,
				n->groups[j].key, n->groups[j].key_len);

		if (c <= 0)
			pr.base = &b->groups[i++];
		if (c >= 0)
			pr.now = &n->groups[j++];
		if (changed(&pr))
			pairs[k++] = pr;
		else
			++*unchanged;
	}
	qsort_r(pairs, k, sizeof(*pairs), cmp_pair, (void *)order);
	*out = pairs;
	*npairs = k;
	return MT_OK;
}

/* ---- rendering ---- */

typedef struct {
	const mt_diff_t *o;
	const mt_profile_t *base, *now;
	pair_t *pairs;
	size_t npairs, unchanged;
	int compare_sites;
	/* Both runs are traces: a site's C_PEAK is its part of the peak. */
	int at_peak;
	int regressed[NDECIDING];
} diff_t;

/* Whether the sites go by their change at the peak: unless live_bytes
 * alone regressed. */
static int by_peak_first(const diff_t *d)
{
	return d->regressed[0] || !d->regressed[1];
}

static const char *source_name(const mt_profile_t *p)
{
	return p->source == MT_PROFILE_TRACE ? "trace" : "summary";
}

/* Pad to width with spaces on the left: the text from mark on. */
static int pad_left(mt_buf_t *b, size_t mark, size_t width)
{
	size_t len = b->len - mark;
	char spaces[32];
	int rc;

	if (len >= width)
		return MT_OK;
	memset(spaces, ' ', sizeof(spaces));
	if ((rc = mt_buf_add(b, spaces, width - len)))
		return rc;
	memmove(b->data + mark + (width - len), b->data + mark, len);
	memset(b->data + mark, ' ', width - len);
	return MT_OK;
}

static int add_cell(mt_buf_t *b, uint64_t v, int is_size, size_t width)
{
	size_t mark = b->len;
	int rc;

	ADD(is_size ? mt_units_add_size(b, v) : mt_buf_add_u64(b, v));
	ADD(pad_left(b, mark, width));
cleanup:
	if (rc)
		mt_buf_truncate(b, mark);
	return rc;
}

static int add_note(mt_buf_t *b, const char *which, const mt_profile_t *p,
		    int compare_sites)
{
	int rc = MT_OK;

	ADD(mt_profile_add_sampled_note(b, which, p->sample_bytes));
	if (strcmp(p->status, "complete")) {
		ADD(mt_buf_add_str(b, "note: "));
		ADD(mt_buf_add_str(b, which));
		ADD(mt_buf_add_str(b, " is "));
		ADD(mt_buf_add_str(b, p->status));
		ADD(mt_buf_add_str(b, ": its figures cover only the events "
				      "its trace holds\n"));
	}
	if (p->source == MT_PROFILE_SUMMARY) {
		ADD(mt_buf_add_str(b, "note: "));
		ADD(mt_buf_add_str(b, which));
		if (!p->nsites) {
			ADD(mt_buf_add_str(b, " is a summary without site lines: "
					      "sites are not compared\n"));
		} else {
			ADD(mt_buf_add_str(b, " is a summary: only its "));
			ADD(mt_buf_add_u64(b, p->nsites));
			ADD(mt_buf_add_str(b, p->nsites == 1 ? " listed site is" :
							       " listed sites are"));
			ADD(mt_buf_add_str(b, compare_sites ?
					      " compared (a site it does not "
					      "list is taken as absent)\n" :
					      " known\n"));
		}
	}
cleanup:
	return rc;
}

static int add_site_counts(mt_buf_t *b, const char *label, uint64_t base,
			   uint64_t now, int is_size)
{
	int rc;

	ADD(mt_buf_add_str(b, label));
	ADD(is_size ? mt_units_add_size_change(b, base, now) :
		      mt_units_add_count_change(b, base, now));
	ADD(mt_buf_add_str(b, " ("));
	ADD(is_size ? mt_units_add_size(b, base) : mt_buf_add_u64(b, base));
	ADD(mt_buf_add_str(b, " -> "));
	ADD(is_size ? mt_units_add_size(b, now) : mt_buf_add_u64(b, now));
	ADD(mt_buf_add_str(b, ")"));
cleanup:
	return rc;
}

/* The table's columns: a field name, then BASE, NEW, the change and the
 * change in percent, each right-aligned. */
#define COL_NAME 22
#define COL_VALUE 13
#define COL_PCT 9

static int add_header(mt_buf_t *b)
{
	static const char *const cols[] = { "base", "new", "change", "%" };
	size_t mark;
	int rc;

	ADD(mt_buf_add_str(b, "  field"));
	for (size_t k = 5; k < COL_NAME; k++)
		ADD(mt_buf_add_str(b, " "));
	for (int i = 0; i < 4; i++) {
		mark = b->len;
		ADD(mt_buf_add_str(b, cols[i]));
		ADD(pad_left(b, mark, i == 3 ? COL_PCT : COL_VALUE));
	}
	ADD(mt_buf_add_str(b, "\n"));
cleanup:
	return rc;
}

/* "1%", or "1% and 1.0 KiB" with a floor: the growth allowed. */
static int add_threshold(mt_buf_t *b, const mt_diff_t *o)
{
	int rc;

	ADD(mt_units_add_milli(b, o->threshold));
	ADD(mt_buf_add_str(b, "%"));
	if (o->min_growth) {
		ADD(mt_buf_add_str(b, " and "));
		ADD(mt_units_add_size(b, o->min_growth));
	}
cleanup:
	return rc;
}

/* "memtrace diff: live_bytes grew from ... beyond the threshold of 1%
 * and 1.0 KiB", no newline. */
static int add_verdict(mt_buf_t *b, const diff_t *d)
{
	const mt_diff_t *o = d->o;
	int rc = MT_OK;

	ADD(mt_buf_add_str(b, "memtrace diff: "));
	if (d->regressed[0] || d->regressed[1]) {
		for (int i = 0, first = 1; i < NDECIDING; i++) {
			mt_profile_field_t f = shown[i].field;

			if (!d->regressed[i])
				continue;
			ADD(mt_buf_add_str(b, first ? "" : " and "));
			ADD(mt_buf_add_str(b, mt_profile_field_name(f)));
			ADD(mt_buf_add_str(b, " grew from "));
			ADD(mt_units_add_size(b, d->base->total[f]));
			ADD(mt_buf_add_str(b, " to "));
			ADD(mt_units_add_size(b, d->now->total[f]));
			ADD(mt_buf_add_str(b, " ("));
			ADD(mt_units_add_pct_change(b, d->base->total[f],
						    d->now->total[f]));
			ADD(mt_buf_add_str(b, ")"));
			first = 0;
		}
		ADD(mt_buf_add_str(b, ", beyond the threshold of "));
	} else {
		ADD(mt_buf_add_str(b, "neither peak_live_bytes nor live_bytes "
				      "grew beyond the threshold of "));
	}
	ADD(add_threshold(b, o));
cleanup:
	return rc;
}

static int render_text(mt_buf_t *b, const diff_t *d)
{
	const mt_diff_t *o = d->o;
	int rc = MT_OK;

	ADD(mt_buf_add_str(b, "memtrace diff: BASE "));
	ADD(mt_buf_add_str(b, o->base_path));
	ADD(mt_buf_add_str(b, " ("));
	ADD(mt_buf_add_str(b, source_name(d->base)));
	ADD(mt_buf_add_str(b, ", "));
	ADD(mt_buf_add_str(b, d->base->status));
	ADD(mt_buf_add_str(b, "), NEW "));
	ADD(mt_buf_add_str(b, o->new_path));
	ADD(mt_buf_add_str(b, " ("));
	ADD(mt_buf_add_str(b, source_name(d->now)));
	ADD(mt_buf_add_str(b, ", "));
	ADD(mt_buf_add_str(b, d->now->status));
	ADD(mt_buf_add_str(b, ")\n"));
	ADD(add_note(b, "BASE", d->base, d->compare_sites));
	ADD(add_note(b, "NEW", d->now, d->compare_sites));
	for (int i = 0; i < 2; i++) {
		if (!o->left[i].sites)
			continue;
		ADD(mt_buf_add_str(b, i ? "NEW " : "BASE "));
		ADD(mt_suppress_add_left_out(b, &o->left[i]));
		ADD(mt_buf_add_str(b, "\n"));
	}
	ADD(add_header(b));
	for (size_t i = 0; i < NSHOWN; i++) {
		mt_profile_field_t f = shown[i].field;
		uint64_t bv = d->base->total[f], nv = d->now->total[f];
		size_t mark;

		ADD(mt_buf_add_str(b, "  "));
		mark = b->len;
		ADD(mt_buf_add_str(b, mt_profile_field_name(f)));
		for (size_t k = b->len - mark; k < COL_NAME; k++)
			ADD(mt_buf_add_str(b, " "));
		ADD(add_cell(b, bv, shown[i].is_size, COL_VALUE));
		ADD(add_cell(b, nv, shown[i].is_size, COL_VALUE));
		mark = b->len;
		ADD(shown[i].is_size ? mt_units_add_size_change(b, bv, nv) :
				       mt_units_add_count_change(b, bv, nv));
		ADD(pad_left(b, mark, COL_VALUE));
		mark = b->len;
		ADD(mt_units_add_pct_change(b, bv, nv));
		ADD(pad_left(b, mark, COL_PCT));
		if (i < NDECIDING && d->regressed[i])
			ADD(mt_buf_add_str(b, "  REGRESSED"));
		ADD(mt_buf_add_str(b, "\n"));
	}
	if (d->compare_sites) {
		ADD(mt_buf_add_str(b, !by_peak_first(d) ? "sites by growth of live bytes: " :
				      d->at_peak ? "sites by growth at the peak: " :
				      "sites by growth of their own peaks: "));
		ADD(mt_buf_add_u64(b, d->npairs));
		ADD(mt_buf_add_str(b, " changed, "));
		ADD(mt_buf_add_u64(b, d->unchanged));
		ADD(mt_buf_add_str(b, " unchanged"));
		if (d->npairs > o->top) {
			ADD(mt_buf_add_str(b, "; the first "));
			ADD(mt_buf_add_u64(b, o->top));
			ADD(mt_buf_add_str(b, " (--top)"));
		}
		ADD(mt_buf_add_str(b, d->npairs && o->top ? ":\n" : "\n"));
	}
	for (size_t i = 0; d->compare_sites && i < d->npairs && i < o->top; i++) {
		const pair_t *pr = &d->pairs[i];
		const group_t *bg = pr->base, *ng = pr->now;

		ADD(add_site_counts(b, d->at_peak ? "  at peak " : "  own peak ",
				    count(bg, C_PEAK), count(ng, C_PEAK), 1));
		ADD(add_site_counts(b, ", live ", count(bg, C_LIVE_BYTES),
				    count(ng, C_LIVE_BYTES), 1));
		ADD(add_site_counts(b, ", allocated ", count(bg, C_BYTES_ALLOCATED),
				    count(ng, C_BYTES_ALLOCATED), 1));
		ADD(add_site_counts(b, ", allocations ", count(bg, C_ALLOCATIONS),
				    count(ng, C_ALLOCATIONS), 0));
		if (!bg)
			ADD(mt_buf_add_str(b, d->base->source == MT_PROFILE_SUMMARY ?
					      ", not listed in BASE" :
					      ", only in NEW"));
		if (!ng)
			ADD(mt_buf_add_str(b, d->now->source == MT_PROFILE_SUMMARY ?
					      ", not listed in NEW" :
					      ", only in BASE"));
		ADD(mt_buf_add_str(b, "\n      "));
		ADD(mt_profile_add_frames(b, pr->now ? d->now : d->base,
					    either(pr)->site, SITE_FRAMES));
		ADD(mt_buf_add_str(b, "\n"));
	}
	ADD(add_verdict(b, d));
	ADD(mt_buf_add_str(b, "\n"));
cleanup:
	return rc;
}

static int add_json_field(mt_buf_t *b, const char *key, uint64_t v, int comma)
{
	int rc;

	ADD(mt_buf_add_str(b, comma ? ",\"" : "\""));
	ADD(mt_buf_add_str(b, key));
	ADD(mt_buf_add_str(b, "\":"));
	ADD(mt_buf_add_u64(b, v));
cleanup:
	return rc;
}

static int add_json_change(mt_buf_t *b, const char *key, i128 v, int comma)
{
	int rc;

	if (v > INT64_MAX)
		v = INT64_MAX;
	if (v < INT64_MIN)
		v = INT64_MIN;
	ADD(mt_buf_add_str(b, comma ? ",\"" : "\""));
	ADD(mt_buf_add_str(b, key));
	ADD(mt_buf_add_str(b, "\":"));
	ADD(mt_buf_add_i64(b, (int64_t)v));
cleanup:
	return rc;
}

static int add_json_run(mt_buf_t *b, const char *path, const mt_profile_t *p)
{
	int rc;

	ADD(mt_buf_add_str(b, "{\"path\":"));
	ADD(mt_buf_add_json_cstr_or_null(b, path));
	ADD(mt_buf_add_str(b, ",\"source\":"));
	ADD(mt_buf_add_json_cstr_or_null(b, source_name(p)));
	ADD(mt_buf_add_str(b, ",\"status\":"));
	ADD(mt_buf_add_json_cstr_or_null(b, p->status));
	ADD(add_json_field(b, "sites", p->nsites, 1));
	ADD(mt_buf_add_str(b, "}"));
cleanup:
	return rc;
}

/* A count's name in the JSON: a site's peak is "bytes_at_peak" between
 * two traces, else the site lines' own "peak_live_bytes". */
static const char *count_name(const diff_t *d, int c)
{
	return c == C_PEAK && !d->at_peak ? "peak_live_bytes" : count_names[c];
}

static int render_json(mt_buf_t *b, const diff_t *d)
{
	int rc = MT_OK, first = 1;

	ADD(mt_buf_add_str(b, "{\"schema\":\"memtrace.diff/v1\",\"base\":"));
	ADD(add_json_run(b, d->o->base_path, d->base));
	ADD(mt_buf_add_str(b, ",\"new\":"));
	ADD(add_json_run(b, d->o->new_path, d->now));
	ADD(mt_buf_add_str(b, ",\"threshold_pct\":"));
	ADD(mt_units_add_milli(b, d->o->threshold));
	ADD(add_json_field(b, "min_growth_bytes", d->o->min_growth, 1));
	ADD(mt_buf_add_str(b, ",\"regressed\":["));
	for (int i = 0; i < NDECIDING; i++) {
		if (!d->regressed[i])
			continue;
		ADD(mt_buf_add_str(b, first ? "" : ","));
		ADD(mt_buf_add_json_cstr_or_null(b,
			mt_profile_field_name(shown[i].field)));
		first = 0;
	}
	ADD(mt_buf_add_str(b, "],\"totals\":{"));
	for (size_t i = 0; i < NSHOWN; i++) {
		mt_profile_field_t f = shown[i].field;
		uint64_t bv = d->base->total[f], nv = d->now->total[f];

		ADD(mt_buf_add_str(b, i ? ",\"" : "\""));
		ADD(mt_buf_add_str(b, mt_profile_field_name(f)));
		ADD(mt_buf_add_str(b, "\":{"));
		ADD(add_json_field(b, "base", bv, 0));
		ADD(add_json_field(b, "new", nv, 1));
		ADD(add_json_change(b, "change", (i128)nv - (i128)bv, 1));
		ADD(mt_buf_add_str(b, "}"));
	}
	ADD(mt_buf_add_str(b, "},\"sites_compared\":"));
	ADD(mt_buf_add_str(b, d->compare_sites ? "true" : "false"));
	ADD(add_json_field(b, "sites_changed", d->npairs, 1));
	ADD(add_json_field(b, "sites_unchanged", d->unchanged, 1));
	ADD(mt_buf_add_str(b, ",\"sites\":["));
	for (size_t i = 0; d->compare_sites && i < d->npairs && i < d->o->top; i++) {
		const pair_t *pr = &d->pairs[i];
		const mt_profile_site_t *s = either(pr)->site;
		const group_t *g[2] = { pr->base, pr->now };

		ADD(mt_buf_add_str(b, i ? ",{" : "{"));
		for (int k = 0; k < 2; k++) {
			ADD(mt_buf_add_str(b, k ? ",\"new\":" : "\"base\":"));
			if (!g[k]) {
				ADD(mt_buf_add_str(b, "null"));
				continue;
			}
			ADD(mt_buf_add_str(b, "{"));
			for (int c = 0; c < NCOUNTS; c++)
				ADD(add_json_field(b, count_name(d, c), g[k]->count[c], c));
			ADD(mt_buf_add_str(b, "}"));
		}
		ADD(mt_buf_add_str(b, ",\"change\":{"));
		for (int c = 0; c < NCOUNTS; c++)
			ADD(add_json_change(b, count_name(d, c), change(pr, c), c));
		ADD(mt_buf_add_str(b, "},\"frames\":["));
		for (size_t f = 0; f < s->nframes; f++) {
			ADD(mt_buf_add_str(b, f ? ",{\"symbol\":" : "{\"symbol\":"));
			ADD(mt_buf_add_json_cstr_or_null(b, s->frames[f].symbol));
			ADD(mt_buf_add_str(b, ",\"module\":"));
			ADD(mt_buf_add_json_cstr_or_null(b, s->frames[f].module));
			ADD(mt_buf_add_str(b, "}"));
		}
		ADD(mt_buf_add_str(b, "]}"));
	}
	ADD(mt_buf_add_str(b, "]}\n"));
cleanup:
	return rc;
}

/* Whether a deciding figure grew beyond what o allows: by more than the
 * threshold's percent of base and more than min_growth bytes.  Growth
 * from nothing is beyond any: a new leak is never noise. */
static int beyond(const mt_diff_t *o, uint64_t base, uint64_t now)
{
	return mt_units_grew_beyond(base, now, o->threshold) &&
	       (!base || now - base > o->min_growth);
}

/* Compare base and now into d, with the sides' groups in sb and sn:
 * release with finish() whatever it returns.  MT_OK or MT_ENOMEM. */
static int compare(diff_t *d, side_t *sb, side_t *sn, const mt_diff_t *o,
		   const mt_profile_t *base, const mt_profile_t *now)
{
	int calls;

	memset(d, 0, sizeof(*d));
	memset(sb, 0, sizeof(*sb)); /* empty sides need no release */
	memset(sn, 0, sizeof(*sn));
	d->o = o;
	d->base = base;
	d->now = now;
	/* A summary without site lines says nothing of its sites. */
	d->compare_sites = !(base->source == MT_PROFILE_SUMMARY && !base->nsites) &&
			   !(now->source == MT_PROFILE_SUMMARY && !now->nsites);
	for (int i = 0; i < NDECIDING; i++)
		d->regressed[i] = beyond(o, base->total[shown[i].field],
					 now->total[shown[i].field]);
	/* A site's reallocs are calls, as the report counts them; but a
	 * summary file's site line counts alloc events only, and a site must
	 * be counted alike in both runs, or every realloc would read as a
	 * change. */
	calls = base->source == MT_PROFILE_TRACE && now->source == MT_PROFILE_TRACE;
	d->at_peak = base->has_at_peak && now->has_at_peak;
	if (build_side(sb, base, calls, d->at_peak) ||
	    build_side(sn, now, calls, d->at_peak) ||
	    (d->compare_sites &&
	     pair_sites(sb, sn, by_peak_first(d) ? by_peak : by_live,
			&d->pairs, &d->npairs, &d->unchanged)))
		return MT_ENOMEM;
	return MT_OK;
}

static void finish(diff_t *d, side_t *sb, side_t *sn)
{
	mt_mem_free(d->pairs);
	side_release(sb);
	side_release(sn);
}

int mt_diff_render(mt_buf_t *out, const mt_diff_t *o, const mt_profile_t *base,
		   const mt_profile_t *now, int *regressed)
{
	side_t sb, sn;
	diff_t d;
	int rc = compare(&d, &sb, &sn, o, base, now);

	if (!rc && (o->json ? render_json(out, &d) : render_text(out, &d)))
		rc = MT_ENOMEM;
	*regressed = d.regressed[0] || d.regressed[1];
	finish(&d, &sb, &sn);
	return rc;
}

/* ---- CI cases ---- */

/* Deciding figure i's growth at a site: its part of the peak (or its
 * own peak, from a summary file) for peak_live_bytes, live bytes for
 * live_bytes. */
static i128 figure_change(const pair_t *pr, int i)
{
	return change(pr, i == 0 ? C_PEAK : C_LIVE_BYTES);
}

/* The changed site that grew most in deciding figure i; NULL when none
 * grew in it. */
static const pair_t *grew_most(const diff_t *d, int i)
{
	const pair_t *best = NULL;
	i128 most = 0;

	for (size_t k = 0; k < d->npairs; k++) {
		i128 c = figure_change(&d->pairs[k], i);

		/* Pairs come by growth: the first of equals is kept. */
		if (c > most) {
			most = c;
			best = &d->pairs[k];
		}
	}
	return best;
}

static int add_case(mt_ci_t *c, const diff_t *d, int i)
{
	mt_profile_field_t f = shown[i].field;
	uint64_t bv = d->base->total[f], nv = d->now->total[f];
	mt_ci_case_t *k = mt_ci_add(c);
	const pair_t *pr;
	int rc = MT_OK;

	k->failed = d->regressed[i];
	ADD(mt_buf_add_str(&k->name, mt_profile_field_name(f)));
	ADD(mt_buf_add_str(&k->message, mt_profile_field_name(f)));
	ADD(mt_buf_add_str(&k->message, k->failed ? " grew from " : " went from "));
	ADD(mt_units_add_size(&k->message, bv));
	ADD(mt_buf_add_str(&k->message, " to "));
	ADD(mt_units_add_size(&k->message, nv));
	ADD(mt_buf_add_str(&k->message, " ("));
	ADD(mt_units_add_pct_change(&k->message, bv, nv));
	ADD(mt_buf_add_str(&k->message, k->failed ?
				"), beyond the threshold of " :
				"), within the threshold of "));
	ADD(add_threshold(&k->message, d->o));
	if (!k->failed || !(pr = grew_most(d, i)))
		goto cleanup;
	/* It grew, so NEW has it. */
	ADD(add_site_counts(&k->site, i == 1 ? "live grew most: " :
				      d->at_peak ? "at peak grew most: " :
				      "site peak grew most: ",
			    count(pr->base, i == 0 ? C_PEAK : C_LIVE_BYTES),
			    count(pr->now, i == 0 ? C_PEAK : C_LIVE_BYTES), 1));
	ADD(mt_buf_add_str(&k->site, " from "));
	ADD(mt_profile_add_frames(&k->site, d->now, pr->now->site, SITE_FRAMES));
	ADD(mt_ci_set_site(c, k, d->now, pr->now->site));
cleanup:
	return rc;
}

int mt_diff_ci(mt_ci_t *c, const mt_diff_t *o, const mt_profile_t *base,
	       const mt_profile_t *now)
{
	side_t sb, sn;
	diff_t d;
	int rc = compare(&d, &sb, &sn, o, base, now);

	_Static_assert(NDECIDING <= MT_CI_CASES_MAX, "a case per figure");
	if (rc)
		goto cleanup;
	ADD(mt_buf_add_str(&c->suite, "memtrace diff "));
	ADD(mt_buf_add_str(&c->suite, o->base_path));
	ADD(mt_buf_add_str(&c->suite, " "));
	ADD(mt_buf_add_str(&c->suite, o->new_path));
	for (int i = 0; i < NDECIDING; i++)
		ADD(add_case(c, &d, i));
	ADD(add_note(&c->notes, "BASE", base, d.compare_sites));
	ADD(add_note(&c->notes, "NEW", now, d.compare_sites));
	ADD(add_verdict(&c->verdict, &d));
cleanup:
	finish(&d, &sb, &sn);
	return rc;
}
