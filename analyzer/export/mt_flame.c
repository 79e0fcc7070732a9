/*
 * mt_flame: folded stacks.  It must never write a line a folded-stack
 * reader would split wrongly (a ';' or a newline inside a frame's name),
 * nor half an output.
 */
#include "../export/mt_flame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../model/mt_sites.h"
#include "../model/mt_srcline.h"

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

typedef struct {
	size_t off, len; /* the folded frames in the text buffer */
	uint64_t value;
} folded_t;

static uint64_t figure(const mt_heap_t *h, const mt_site_ref_t *ref,
		       mt_flame_metric_t metric)
{
	const mt_site_t *s = ref->site;

	switch (metric) {
	case MT_FLAME_BYTES:
		return s->bytes_allocated;
	case MT_FLAME_LEAKED:
		return s->live_bytes;
	case MT_FLAME_PEAK:
		return mt_heap_site_at_peak(h, s);
	default:
		/* Calls, reallocs included, as the report's: the stacks whose
		 * bytes --metric bytes shows are the stacks that made calls. */
		return ref->calls;
	}
}

/* Append s with ';' and control bytes as '?'. */
static int add_name(mt_buf_t *b, const char *s, size_t n)
{
	size_t mark = b->len;

	while (n) {
		size_t run = 0;
		int rc;

		while (run < n && s[run] != ';' &&
		       (unsigned char)s[run] >= 0x20 && s[run] != 0x7f)
			run++;
		if ((rc = mt_buf_add(b, s, run)) ||
		    (run < n && (rc = mt_buf_add_str(b, "?")))) {
			mt_buf_truncate(b, mark);
			return rc;
		}
		if (run < n)
			run++;
		s += run;
		n -= run;
	}
	return MT_OK;
}

int mt_flame_add_level(mt_buf_t *b, mt_srcline_t *lines, uint64_t id,
		       const mt_frame_t *f, size_t level)
{
	mt_srcline_loc_t loc = { 0 };
	mt_srcline_level_t l;
	size_t mark = b->len;
	int rc;

	if (f && (rc = mt_srcline_resolve(lines, id, f, &loc)))
		return rc;
	l = mt_srcline_level(&loc, level);
	if (l.function)
		return add_name(b, l.function, strlen(l.function));
	if (l.inlined)
		return mt_buf_add_str(b, "??");
	if (!f)
		return mt_buf_add_str(b, "?");
	/* No symbol: "0xOFFSET in MODULE", as gate, diff and the OOM sweep
	 * name it (mt_profile_add_frames()), and report with the full path. */
	if ((f->has & MT_HAS_MODULE) && (f->has & MT_HAS_MODULE_OFFSET) &&
	    f->module[0]) {
		const char *slash = strrchr(f->module, '/');
		const char *file = slash && slash[1] ? slash + 1 : f->module;

		if ((rc = mt_buf_add_hex(b, f->module_offset)) ||
		    (rc = mt_buf_add_str(b, " in ")) ||
		    (rc = add_name(b, file, strlen(file))))
			mt_buf_truncate(b, mark);
		return rc;
	}
	return mt_buf_add_hex(b, f->ip);
}

int mt_flame_nlevels(mt_srcline_t *lines, uint64_t id, const mt_frame_t *f,
		     size_t *n)
{
	mt_srcline_loc_t loc = { 0 };
	int rc;

	*n = 1;
	if (f && (rc = mt_srcline_resolve(lines, id, f, &loc)))
		return rc;
	*n = mt_srcline_nlevels(&loc);
	return MT_OK;
}

int mt_flame_add_frame(mt_buf_t *b, mt_srcline_t *lines, uint64_t id,
		       const mt_frame_t *f)
{
	size_t mark = b->len, n;
	int rc;

	if ((rc = mt_flame_nlevels(lines, id, f, &n)))
		return rc;
	for (size_t i = n; i-- > 0;)
		if ((rc = mt_flame_add_level(b, lines, id, f, i)) ||
		    (i && (rc = mt_buf_add_str(b, ";")))) {
			mt_buf_truncate(b, mark);
			return rc;
		}
	return MT_OK;
}

static int cmp_folded(const void *x, const void *y, void *text)
{
	const folded_t *a = x, *b = y;
	const char *t = text;
	int c = memcmp(t + a->off, t + b->off, a->len < b->len ? a->len : b->len);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

int mt_flame_render(const mt_analysis_t *a, mt_flame_metric_t metric,
		    mt_buf_t *out)
{
	const mt_heap_t *h = &a->heap;
	mt_srcline_t lines;
	mt_site_ref_t *sites = NULL;
	folded_t *lines_of = NULL;
	mt_buf_t text = MT_BUF_INIT;
	size_t nsites = 0, n = 0, mark = out->len;
	int rc;

	mt_srcline_init(&lines);
	lines.names_only = 1;
	ADD(mt_sites_list(h, &sites, &nsites));
	lines_of = mt_mem_malloc((nsites ? nsites : 1) * sizeof(*lines_of));
	if (!lines_of) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < nsites; i++) {
		const mt_stack_t *st = sites[i].stack;
		uint64_t value = figure(h, &sites[i], metric);
		size_t start = text.len;

		if (!value)
			continue;
		if (!st || !st->nframes)
			ADD(mt_buf_add_str(&text, "[no stack]"));
		/* As many frames as the preload keeps: the stack was most
		 * likely cut there, and its outermost frame is no root. */
		else if (a->has_stack_depth &&
			 st->nframes == a->stack_depth)
			ADD(mt_buf_add_str(&text, "[truncated];"));
		for (size_t k = st ? st->nframes : 0; k-- > 0;) {
			uint64_t id = st->frames[k];

			ADD(mt_flame_add_frame(&text, &lines, id,
				      mt_map_find(&h->frames, id)));
			if (k)
				ADD(mt_buf_add_str(&text, ";"));
		}
		lines_of[n++] = (folded_t){ start, text.len - start, value };
	}
	qsort_r(lines_of, n, sizeof(*lines_of), cmp_folded, text.data);
	for (size_t i = 0; i < n;) {
		uint64_t sum = 0;
		size_t j = i;

		for (; j < n && !cmp_folded(&lines_of[i], &lines_of[j], text.data); j++)
			sum += lines_of[j].value;
		ADD(mt_buf_add(out, text.data + lines_of[i].off, lines_of[i].len));
		ADD(mt_buf_add_str(out, " "));
		ADD(mt_buf_add_u64(out, sum));
		ADD(mt_buf_add_str(out, "\n"));
		i = j;
	}
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	mt_buf_release(&text);
	mt_mem_free(lines_of);
	mt_mem_free(sites);
	mt_srcline_release(&lines);
	return rc;
}
