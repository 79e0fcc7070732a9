/*
 * mt_export: the speedscope and DHAT exports, the folded one through
 * mt_flame and the pprof one through mt_pprof.  It must never name a
 * frame otherwise than the flame graph does, write a total that disagrees
 * with the summary's, nor leave half a document in its output.
 */
#include "../export/mt_export.h"

#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../export/mt_flame.h"
#include "../base/mt_map.h"
#include "../base/mt_mem.h"
#include "../export/mt_pprof.h"
#include "../model/mt_sites.h"
#include "../model/mt_srcline.h"

#ifndef MT_VERSION
#define MT_VERSION "0.1.0"
#endif

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

/* DHAT's "short-lived" threshold, in its time unit (ns here): 1 us. */
#define DHAT_TUTH_NS 1000

int mt_export_format_parse(const char *name, mt_export_format_t *out)
{
	static const char *const names[] = {
		[MT_EXPORT_FOLDED] = "folded",
		[MT_EXPORT_SPEEDSCOPE] = "speedscope",
		[MT_EXPORT_DHAT] = "dhat",
		[MT_EXPORT_PPROF] = "pprof",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i])) {
			*out = (mt_export_format_t)i;
			return 0;
		}
	return -1;
}

/* What the observer keeps of a live block: when it was made, the blocks
 * it counts for, its site. */
typedef struct {
	uint64_t t, count;
	uint32_t site;
} block_t;

void mt_export_times_init(mt_export_times_t *t, mt_export_format_t fmt)
{
	memset(t, 0, sizeof(*t));
	t->follow = fmt == MT_EXPORT_DHAT;
	mt_map_init(&t->allocators, sizeof(mt_map_t));
}

void mt_export_times_release(mt_export_times_t *t)
{
	size_t pos = 0;
	uint64_t id;
	void *v;

	while (mt_map_iter(&t->allocators, &pos, &id, &v))
		mt_map_release(v);
	mt_map_release(&t->allocators);
	mt_mem_free(t->sites);
	t->sites = NULL;
	t->nsites = 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* A block's lifetime up to now, weighed by the blocks it counts for. */
static uint64_t lifetime(const block_t *b, uint64_t now)
{
	return mul_sat(now > b->t ? now - b->t : 0, b->count);
}

/* The observer's figures of site index, grown zeroed as sites come;
 * NULL when out of memory. */
static mt_export_site_t *site_figures(mt_export_times_t *t, uint32_t index)
{
	if (index >= t->nsites) {
		size_t n = t->nsites ? t->nsites : 64;
		mt_export_site_t *p;

		while (n <= index)
			n *= 2;
		if (!(p = mt_mem_realloc(t->sites, n * sizeof(*p))))
			return NULL;
		memset(p + t->nsites, 0, (n - t->nsites) * sizeof(*p));
		t->sites = p;
		t->nsites = n;
	}
	return &t->sites[index];
}

static const mt_site_t *heap_site(const mt_heap_t *h, uint32_t index)
{
	return index ? &h->sites[index] : &h->no_stack;
}

/* The block at ptr in blocks ends now, if one is there: its lifetime
 * goes to its site, which the event touched. */
static void end_block(mt_export_times_t *t, mt_map_t *blocks, uint64_t ptr,
		      uint32_t touched[3], size_t *ntouched)
{
	block_t b;

	if (!mt_map_remove(blocks, ptr, &b))
		return;
	/* Its site has figures: the event that made the block touched it. */
	t->sites[b.site].lifetimes = add_sat(t->sites[b.site].lifetimes,
					     lifetime(&b, t->now));
	touched[(*ntouched)++] = b.site;
}

/* After event ev moved site index's blocks: its blocks at the global
 * peak (saved before the first change after a peak, unless ev made the
 * peak), its blocks when its bytes peaked. */
static void site_moved(mt_export_times_t *t, const mt_heap_t *h,
		       const mt_event_t *ev, uint32_t index)
{
	const mt_site_t *s = heap_site(h, index);
	mt_export_site_t *f = site_figures(t, index);

	if (!f) {
		t->failed = 1;
		return;
	}
	if (ev->seq != h->peak_seq && f->peak_epoch != h->peak_epoch) {
		f->at_peak_blocks = f->blocks;
		f->peak_epoch = h->peak_epoch;
	}
	f->blocks = s->live_allocations;
	if (s->live_bytes > f->max_bytes) {
		f->max_bytes = s->live_bytes;
		f->max_blocks = s->live_allocations;
	}
}

/*
 * Follow the heap's blocks through a block event it applied, as
 * mt_heap.c moves them: a free ends the block at ptr; an alloc ends the
 * block it replaces at ptr and makes one; a resize or remap ends the
 * block at ptr and any it replaces at new_ptr, and makes one where the
 * heap put it, in the site the heap gave it.
 */
static void follow_block(mt_export_times_t *t, const mt_heap_t *h,
			 const mt_event_t *ev)
{
	mt_allocator_t *const *ap = mt_map_find(&h->allocators, ev->allocator_id);
	const mt_allocator_t *a = ap ? *ap : NULL;
	uint32_t touched[3];
	size_t ntouched = 0;
	uint64_t ptr = ev->kind == MT_KIND_REMAP ? ev->new_ptr : ev->ptr;
	mt_block_t hb;
	mt_map_t *blocks;
	void *v;
	int created;

	if (!a || a->skipped)
		return;
	if (mt_map_upsert(&t->allocators, a->id, &v, &created))
		goto fail;
	blocks = v;
	if (created)
		mt_map_init(blocks, sizeof(block_t));
	end_block(t, blocks, ev->ptr, touched, &ntouched);
	if (ev->kind == MT_KIND_REMAP)
		end_block(t, blocks, ev->new_ptr, touched, &ntouched);
	if (ev->kind != MT_KIND_FREE && mt_blocks_find(&a->blocks, ptr, &hb)) {
		block_t b = {
			.t = t->now,
			.count = mt_heap_block_count(h, a, &hb),
			.site = hb.site,
		};

		if (!site_figures(t, b.site) ||
		    mt_map_upsert(blocks, ptr, &v, NULL))
			goto fail;
		*(block_t *)v = b;
		touched[ntouched++] = b.site;
	}
	for (size_t i = 0; i < ntouched; i++) {
		size_t k = 0;

		while (k < i && touched[k] != touched[i])
			k++;
		if (k == i)
			site_moved(t, h, ev, touched[i]);
	}
	return;
fail:
	t->failed = 1;
}

void mt_export_observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev)
{
	mt_export_times_t *t = ctx;

	/* t never goes down: an event without one happens at the last. */
	if (ev->has & MT_HAS_T)
		t->now = ev->t;
	/* The event that made the first highest peak (peak_seq) is the one
	 * DHAT's t-gmax names. */
	if (ev->seq == h->peak_seq)
		t->peak_t = t->now;
	if (!t->follow || t->failed)
		return;
	switch (ev->kind) {
	case MT_KIND_ALLOC:
	case MT_KIND_FREE:
	case MT_KIND_RESIZE:
	case MT_KIND_REMAP:
		follow_block(t, h, ev);
		break;
	default:
		break;
	}
}

/* Where an entry's text is in the table, by the hash of its text. */
struct entry_pos {
	uint64_t index;
	size_t off, len;
};

/* The frame table both JSON formats build: each frame once, by frame id,
 * its entry appended to table as it is first met. */
typedef struct {
	const mt_heap_t *h;
	mt_export_format_t fmt;
	mt_srcline_t lines;
	mt_map_t index;  /* frame id -> uint64_t, its index */
	mt_map_t by_text; /* hash of an entry's text -> entry_t */
	mt_buf_t entry;  /* scratch: an entry's text */
	mt_buf_t table;  /* the entries, ',' between them */
	mt_buf_t name;   /* scratch: a frame's flame graph name */
	uint64_t n;      /* entries so far */
	uint64_t no_stack, truncated; /* index + 1 of the pseudo-frames, or 0 */
} frames_t;

static void frames_init(frames_t *t, const mt_heap_t *h,
			mt_export_format_t fmt)
{
	memset(t, 0, sizeof(*t));
	t->h = h;
	t->fmt = fmt;
	mt_srcline_init(&t->lines);
	mt_map_init(&t->index, sizeof(uint64_t));
	mt_map_init(&t->by_text, sizeof(struct entry_pos));
	mt_buf_init(&t->entry, 0);
	mt_buf_init(&t->table, 0);
	mt_buf_init(&t->name, 0);
	/* DHAT's frame 0 is "[root]", which no program point names. */
	if (fmt == MT_EXPORT_DHAT)
		t->n = 1;
}

static void frames_release(frames_t *t)
{
	mt_buf_release(&t->name);
	mt_buf_release(&t->table);
	mt_map_release(&t->index);
	mt_map_release(&t->by_text);
	mt_buf_release(&t->entry);
	mt_srcline_release(&t->lines);
}

typedef struct entry_pos entry_t;

static uint64_t hash_text(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/*
 * The index of the entry named name[0..len), with file:line when known:
 * an entry already in the table with the same text (two frames the flame
 * graph names alike, at one line or none, are one frame, as they are one
 * name in a folded stack), else a new one.
 */
static int add_entry(frames_t *t, const char *name, size_t len, uint64_t ip,
		     int has_ip, const mt_srcline_level_t *loc,
		     const mt_frame_t *f, uint64_t *out)
{
	mt_buf_t *e = &t->entry, text = MT_BUF_INIT;
	size_t mark = t->table.len;
	uint64_t key = 0;
	entry_t *found;
	void *v;
	int created = 0, rc;

	mt_buf_reset(e);
	if (t->fmt == MT_EXPORT_SPEEDSCOPE) {
		ADD(mt_buf_add_str(e, "{\"name\":"));
		ADD(mt_buf_add_json_str(e, name, len));
		if (loc && loc->file) {
			ADD(mt_buf_add_str(e, ",\"file\":"));
			ADD(mt_buf_add_json_str(e, loc->file, strlen(loc->file)));
			if (loc->line) {
				ADD(mt_buf_add_str(e, ",\"line\":"));
				ADD(mt_buf_add_u64(e, loc->line));
			}
		}
		ADD(mt_buf_add_str(e, "}"));
	} else {
		/* Valgrind's describe_IP: "0xIP: NAME (FILE:LINE)", else
		 * "(in MODULE)", which the Firefox Profiler's importer
		 * reads apart. */
		if (has_ip) {
			ADD(mt_buf_add_hex(&text, ip));
			ADD(mt_buf_add_str(&text, ": "));
		}
		ADD(mt_buf_add(&text, name, len));
		if (loc && loc->file) {
			ADD(mt_buf_add_str(&text, " ("));
			ADD(mt_srcline_add_clean(&text, loc->file));
			ADD(mt_buf_add_str(&text, ":"));
			ADD(mt_buf_add_u64(&text, loc->line));
			ADD(mt_buf_add_str(&text, ")"));
		} else if (f && (f->has & MT_HAS_MODULE) && f->module[0] &&
			   (f->has & MT_HAS_MODULE_OFFSET) && loc &&
			   loc->function) {
			/* A name without "in MODULE" already (the level
			 * without a function is "0xOFFSET in MODULE"). */
			ADD(mt_buf_add_str(&text, " (in "));
			ADD(mt_srcline_add_clean(&text, f->module));
			ADD(mt_buf_add_str(&text, ")"));
		}
		ADD(mt_buf_add_json_str(e, text.data ? text.data : "", text.len));
	}
	/* Probe past entries whose text only shares the hash. */
	for (key = hash_text(e->data, e->len);
	     (found = mt_map_find(&t->by_text, key)); key++)
		if (found->len == e->len &&
		    !memcmp(t->table.data + found->off, e->data, e->len)) {
			*out = found->index;
			goto cleanup;
		}
	if (t->n > (t->fmt == MT_EXPORT_DHAT))
		ADD(mt_buf_add_str(&t->table, ","));
	ADD(mt_map_upsert(&t->by_text, key, &v, &created));
	*(entry_t *)v = (entry_t){ t->n, t->table.len, e->len };
	ADD(mt_buf_add(&t->table, e->data, e->len));
	*out = t->n++;
cleanup:
	if (rc) {
		if (created)
			mt_map_remove(&t->by_text, key, NULL);
		mt_buf_truncate(&t->table, mark);
	}
	mt_buf_release(&text);
	return rc;
}

/* The index of a pseudo-frame ("[no stack]", "[truncated]"), *slot its
 * index + 1 once it has one. */
static int pseudo_index(frames_t *t, uint64_t *slot, const char *name,
			uint64_t *out)
{
	int rc;

	if (!*slot) {
		if ((rc = add_entry(t, name, strlen(name), 0, 0, NULL, NULL,
				    out)))
			return rc;
		*slot = *out + 1;
	}
	*out = *slot - 1;
	return MT_OK;
}

/* The index of level level of frame id (mt_srcline_level_t): one
 * entry per inlined call, each with its own name and line. */
static int frame_index(frames_t *t, uint64_t id, size_t level, uint64_t *out)
{
	const mt_frame_t *f = mt_map_find(&t->h->frames, id);
	mt_srcline_loc_t loc = { 0 };
	mt_srcline_level_t l;
	void *v;
	int created, rc;
	uint64_t *found = level ? NULL : mt_map_find(&t->index, id);

	if (found) {
		*out = *found;
		return MT_OK;
	}
	if (f && (rc = mt_srcline_resolve(&t->lines, id, f, &loc)))
		return rc;
	l = mt_srcline_level(&loc, level);
	mt_buf_reset(&t->name);
	if ((rc = mt_flame_add_level(&t->name, &t->lines, id, f, level)))
		return rc;
	if ((rc = add_entry(t, t->name.data ? t->name.data : "", t->name.len,
			    f ? f->ip : 0, f != NULL, &l, f, out)))
		return rc;
	if (level)
		return MT_OK;
	if ((rc = mt_map_upsert(&t->index, id, &v, &created)))
		return rc;
	*(uint64_t *)v = *out;
	return MT_OK;
}

/* How many levels frame id stands for. */
static size_t frame_levels(frames_t *t, uint64_t id)
{
	size_t n = 1;

	if (mt_flame_nlevels(&t->lines, id, mt_map_find(&t->h->frames, id), &n))
		return 1; /* an allocation failure shows at frame_index() */
	return n;
}

/* Append site s's frame indices as a JSON array: root first for
 * speedscope, innermost first for DHAT. */
static int add_stack(frames_t *t, const mt_analysis_t *a,
		     const mt_site_ref_t *s, mt_buf_t *b)
{
	const mt_stack_t *st = s->stack;
	int cut = st && st->nframes && a->has_stack_depth &&
		  st->nframes == a->stack_depth;
	int root_first = t->fmt == MT_EXPORT_SPEEDSCOPE;
	size_t mark = b->len, n = st ? st->nframes : 0;
	uint64_t idx;
	int rc;

	ADD(mt_buf_add_str(b, "["));
	if (!n) {
		ADD(pseudo_index(t, &t->no_stack, "[no stack]", &idx));
		ADD(mt_buf_add_u64(b, idx));
	}
	if (cut && root_first) {
		ADD(pseudo_index(t, &t->truncated, "[truncated]", &idx));
		ADD(mt_buf_add_u64(b, idx));
		ADD(mt_buf_add_str(b, ","));
	}
	for (size_t i = 0, k = 0; i < n; i++) {
		uint64_t id = st->frames[root_first ? n - 1 - i : i];
		size_t levels = frame_levels(t, id);

		for (size_t j = 0; j < levels; j++, k++) {
			ADD(frame_index(t, id, root_first ? levels - 1 - j : j,
					&idx));
			if (k)
				ADD(mt_buf_add_str(b, ","));
			ADD(mt_buf_add_u64(b, idx));
		}
	}
	if (cut && !root_first) {
		ADD(pseudo_index(t, &t->truncated, "[truncated]", &idx));
		ADD(mt_buf_add_str(b, ","));
		ADD(mt_buf_add_u64(b, idx));
	}
	rc = mt_buf_add_str(b, "]");
cleanup:
	if (rc)
		mt_buf_truncate(b, mark);
	return rc;
}

static int cmp_stack_id(const void *x, const void *y)
{
	const mt_site_ref_t *a = x, *b = y;

	return (a->stack_id > b->stack_id) - (a->stack_id < b->stack_id);
}

/* The sites, in stack id order. */
static int sorted_sites(const mt_heap_t *h, mt_site_ref_t **sites, size_t *n)
{
	int rc = mt_sites_list(h, sites, n);

	if (!rc && *n)
		qsort(*sites, *n, sizeof(**sites), cmp_stack_id);
	return rc;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* speedscope's profiles, in the document's order: the first is the one
 * it opens. */
enum { P_PEAK, P_LEAKED, P_BYTES, P_CALLS, P_COUNT };

/* The speedscope document around its frame table and its profiles'
 * samples and weights. */
static int add_speedscope(mt_buf_t *out, const mt_buf_t *table,
			  const mt_buf_t samples[P_COUNT],
			  const mt_buf_t weights[P_COUNT],
			  const uint64_t total[P_COUNT], const mt_buf_t *name)
{
	static const char *const head[P_COUNT] = {
		[P_PEAK] = "{\"type\":\"sampled\",\"name\":\"bytes live at "
			   "the peak\",\"unit\":\"bytes\",",
		[P_LEAKED] = "{\"type\":\"sampled\",\"name\":\"bytes leaked\","
			     "\"unit\":\"bytes\",",
		[P_BYTES] = "{\"type\":\"sampled\",\"name\":\"bytes allocated\","
			    "\"unit\":\"bytes\",",
		[P_CALLS] = "{\"type\":\"sampled\",\"name\":\"allocation "
			    "calls\",\"unit\":\"none\",",
	};
	size_t mark = out->len;
	int rc;

	ADD(mt_buf_add_str(out, "{\"$schema\":\"https://www.speedscope.app/"
			   "file-format-schema.json\",\"shared\":"
			   "{\"frames\":["));
	ADD(mt_buf_add(out, table->data, table->len));
	ADD(mt_buf_add_str(out, "]},\"profiles\":["));
	for (int p = 0; p < P_COUNT; p++) {
		if (p)
			ADD(mt_buf_add_str(out, ","));
		ADD(mt_buf_add_str(out, head[p]));
		ADD(mt_buf_add_str(out, "\"startValue\":0,\"endValue\":"));
		ADD(mt_buf_add_u64(out, total[p]));
		ADD(mt_buf_add_str(out, ",\"samples\":["));
		ADD(mt_buf_add(out, samples[p].data, samples[p].len));
		ADD(mt_buf_add_str(out, "],\"weights\":["));
		ADD(mt_buf_add(out, weights[p].data, weights[p].len));
		ADD(mt_buf_add_str(out, "]}"));
	}
	/* The program the trace names, else the trace's file name. */
	ADD(mt_buf_add_str(out, "],\"name\":"));
	ADD(mt_buf_add_json_str(out, name->data, name->len));
	ADD(mt_buf_add_str(out, ",\"activeProfileIndex\":0,"
			   "\"exporter\":\"memtrace " MT_VERSION "\"}\n"));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	return rc;
}

static int render_speedscope(const mt_analysis_t *a, const char *path,
			     mt_buf_t *out)
{
	const mt_heap_t *h = &a->heap;
	frames_t t;
	mt_site_ref_t *sites = NULL;
	size_t nsites = 0;
	mt_buf_t samples[P_COUNT], weights[P_COUNT];
	mt_buf_t stack = MT_BUF_INIT;
	uint64_t total[P_COUNT] = { 0 };
	int rc;

	for (int p = 0; p < P_COUNT; p++) {
		mt_buf_init(&samples[p], 0);
		mt_buf_init(&weights[p], 0);
	}
	frames_init(&t, h, MT_EXPORT_SPEEDSCOPE);
	ADD(sorted_sites(h, &sites, &nsites));
	for (size_t i = 0; i < nsites; i++) {
		const mt_site_t *site = sites[i].site;
		uint64_t value[P_COUNT] = {
			[P_PEAK] = mt_heap_site_at_peak(h, site),
			[P_LEAKED] = site->live_bytes,
			[P_BYTES] = site->bytes_allocated,
			[P_CALLS] = sites[i].calls,
		};
		int any = 0;

		for (int p = 0; p < P_COUNT; p++)
			any |= value[p] != 0;
		if (!any)
			continue;
		mt_buf_reset(&stack);
		ADD(add_stack(&t, a, &sites[i], &stack));
		for (int p = 0; p < P_COUNT; p++) {
			if (!value[p])
				continue;
			if (samples[p].len) {
				ADD(mt_buf_add_str(&samples[p], ","));
				ADD(mt_buf_add_str(&weights[p], ","));
			}
			ADD(mt_buf_add(&samples[p], stack.data, stack.len));
			ADD(mt_buf_add_u64(&weights[p], value[p]));
			total[p] += value[p];
		}
	}
	mt_buf_reset(&stack);
	ADD(mt_identity_describe(&a->identity, base_name(path), MT_IDENTITY_PIDS,
				 &stack));
	rc = add_speedscope(out, &t.table, samples, weights, total, &stack);
cleanup:
	for (int p = 0; p < P_COUNT; p++) {
		mt_buf_release(&samples[p]);
		mt_buf_release(&weights[p]);
	}
	mt_buf_release(&stack);
	mt_mem_free(sites);
	frames_release(&t);
	return rc;
}

/* Each site's lifetimes (tl), by site index: those of the blocks that
 * ended, and of those still live, up to the trace's end. */
static int site_lifetimes(const mt_heap_t *h, const mt_export_times_t *t,
			  uint64_t **out)
{
	uint64_t *tl = mt_mem_calloc(t->nsites ? t->nsites : 1, sizeof(*tl));
	size_t apos = 0;
	uint64_t id;
	void *v;

	if (!tl)
		return MT_ENOMEM;
	for (size_t i = 0; i < t->nsites; i++)
		tl[i] = t->sites[i].lifetimes;
	while (mt_map_iter(&t->allocators, &apos, &id, &v)) {
		size_t bpos = 0;
		uint64_t ptr;
		void *bv;

		while (mt_map_iter(v, &bpos, &ptr, &bv)) {
			const block_t *b = bv;

			tl[b->site] = add_sat(tl[b->site],
					      lifetime(b, h->duration_ns));
		}
	}
	*out = tl;
	return MT_OK;
}

/* One program point: "name":value pairs of a site's figures. */
static int add_pp(mt_buf_t *b, const mt_heap_t *h, const mt_site_ref_t *s,
		  const mt_export_times_t *t, const uint64_t *tl,
		  const mt_buf_t *fs)
{
	const mt_site_t *site = s->site;
	uint32_t index = s->stack ? s->stack->site_index : 0;
	/* A site the observer never saw has had no block. */
	static const mt_export_site_t none;
	const mt_export_site_t *f = index < t->nsites ? &t->sites[index] : &none;
	const struct {
		const char *key;
		uint64_t value;
	} fields[] = {
		{ "{\"tb\":", site->bytes_allocated },
		{ ",\"tbk\":", s->calls },
		{ ",\"tl\":", index < t->nsites ? tl[index] : 0 },
		{ ",\"mb\":", site->peak_live_bytes },
		{ ",\"mbk\":", f->max_blocks },
		{ ",\"gb\":", mt_heap_site_at_peak(h, site) },
		{ ",\"gbk\":", f->peak_epoch == h->peak_epoch ?
					 f->at_peak_blocks : site->live_allocations },
		{ ",\"eb\":", site->live_bytes },
		{ ",\"ebk\":", site->live_allocations },
	};
	int rc;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if ((rc = mt_buf_add_str(b, fields[i].key)) ||
		    (rc = mt_buf_add_u64(b, fields[i].value)))
			return rc;
	if ((rc = mt_buf_add_str(b, ",\"fs\":")) ||
	    (rc = mt_buf_add(b, fs->data, fs->len)))
		return rc;
	return mt_buf_add_str(b, "}");
}

static int render_dhat(const mt_analysis_t *a, const char *path,
		       const mt_export_times_t *times, mt_buf_t *out)
{
	const mt_heap_t *h = &a->heap;
	frames_t t;
	mt_site_ref_t *sites = NULL;
	size_t nsites = 0, npps = 0, mark = out->len;
	mt_buf_t pps = MT_BUF_INIT, fs = MT_BUF_INIT;
	uint64_t *tl = NULL;
	int rc;

	frames_init(&t, h, MT_EXPORT_DHAT);
	if (times->failed) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	ADD(site_lifetimes(h, times, &tl));
	ADD(sorted_sites(h, &sites, &nsites));
	for (size_t i = 0; i < nsites; i++) {
		/* A program point is where blocks were made: a site that only
		 * freed others' blocks has none of its own. */
		if (!sites[i].calls && !sites[i].site->bytes_allocated &&
		    !sites[i].site->live_allocations)
			continue;
		mt_buf_reset(&fs);
		ADD(add_stack(&t, a, &sites[i], &fs));
		if (npps++)
			ADD(mt_buf_add_str(&pps, ","));
		ADD(add_pp(&pps, h, &sites[i], times, tl, &fs));
	}
	ADD(mt_buf_add_str(out, "{\"dhatFileVersion\":2,\"mode\":\"heap\","
			   "\"verb\":\"Allocated\",\"bklt\":true,"
			   "\"bkacc\":false,\"tu\":\"ns\",\"Mtu\":\"ms\","
			   "\"tuth\":"));
	ADD(mt_buf_add_u64(out, DHAT_TUTH_NS));
	/* The program and its pid as trace.start names them; the trace's
	 * path and pid 0 when it does not. */
	mt_buf_reset(&fs);
	ADD(mt_identity_describe(&a->identity, path, 0, &fs));
	ADD(mt_buf_add_str(out, ",\"cmd\":"));
	ADD(mt_buf_add_json_str(out, fs.data, fs.len));
	ADD(mt_buf_add_str(out, ",\"pid\":"));
	ADD(mt_buf_add_u64(out, a->identity.has_pid ? a->identity.pid : 0));
	ADD(mt_buf_add_str(out, ",\"te\":"));
	ADD(mt_buf_add_u64(out, h->duration_ns));
	ADD(mt_buf_add_str(out, ",\"tg\":"));
	ADD(mt_buf_add_u64(out, h->peak_live_bytes ? times->peak_t : 0));
	ADD(mt_buf_add_str(out, ",\"pps\":["));
	ADD(mt_buf_add(out, pps.data, pps.len));
	ADD(mt_buf_add_str(out, "],\"ftbl\":[\"[root]\""));
	if (t.table.len) {
		ADD(mt_buf_add_str(out, ","));
		ADD(mt_buf_add(out, t.table.data, t.table.len));
	}
	ADD(mt_buf_add_str(out, "]}\n"));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	mt_mem_free(tl);
	mt_buf_release(&fs);
	mt_buf_release(&pps);
	mt_mem_free(sites);
	frames_release(&t);
	return rc;
}

/* profile.proto, then gzip: the raw profile is built whole first, so the
 * compressed one is whole or absent. */
static int render_pprof(const mt_analysis_t *a, mt_buf_t *out)
{
	mt_buf_t raw = MT_BUF_INIT;
	int rc = mt_pprof_render(a, &raw);

	if (!rc)
		rc = mt_pprof_gzip(raw.data, raw.len, out);
	mt_buf_release(&raw);
	return rc;
}

int mt_export_render(const mt_analysis_t *a, mt_export_format_t fmt,
		     const char *path, const mt_export_times_t *times,
		     mt_buf_t *out)
{
	switch (fmt) {
	case MT_EXPORT_PPROF:
		return render_pprof(a, out);
	case MT_EXPORT_SPEEDSCOPE:
		return render_speedscope(a, path, out);
	case MT_EXPORT_DHAT:
		return render_dhat(a, path, times, out);
	default:
		/* The flame graph's own code path, its default metric. */
		return mt_flame_render(a, MT_FLAME_ALLOCATIONS, out);
	}
}
