/*
 * mt_label: sites named by their first frame in the program's own code.
 * It must never give two sites one label, nor name a site by a frame of
 * the allocator when the stack has one of the program's own.
 */
#include "../model/mt_label.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mt_buf.h"
#include "../base/mt_error.h"
#include "../base/mt_mem.h"

/* Each round of telling equal labels apart adds one level out. */
#define MAX_ROUNDS 6

/* The allocator and the runtime's machinery, by demangled name: the
 * malloc family and its glibc internals, operator new/delete, the
 * string duplicators, and anything in the C++ runtime's namespaces (a
 * template's name may start with its return type). */
static const char machinery[] =
	"^(__libc_|__GI_|_int_)?(malloc|calloc|realloc|reallocarray|free|"
	"posix_memalign|aligned_alloc|memalign|valloc|pvalloc|strdup|strndup|"
	"__strdup|__strndup|wcsdup|xmalloc|xcalloc|xrealloc|xstrdup)"
	"(\\(.*)?$|^operator (new|delete)|"
	"^([^(<]* )?(std|__gnu_cxx|__cxxabiv1)::";

/* Modules that are the runtime, never the program's own code, by the
 * start of their file name. */
static const char *const runtime_modules[] = {
	"libmtpreload", "libc.so", "libc-", "libstdc++.so", "libc++.so",
	"libc++abi.so", "libgcc_s.so", "ld-linux", "ld64.so", "libasan.so",
};

typedef struct {
	char **texts;  /* each level's text, innermost first */
	size_t n, own; /* levels; the first of the program's own */
	size_t depth;  /* levels out of own the label shows */
} site_levels_t;

int mt_label_opts_add(mt_label_opts_t *o, const char *pattern)
{
	size_t old = o->joined ? strlen(o->joined) : 0, len = strlen(pattern);
	char *joined = mt_mem_malloc(old + len + 4);
	regex_t re;

	if (!joined)
		return MT_ENOMEM;
	/* "(a)" first, then "(a)|(b)" */
	if (old)
		snprintf(joined, old + len + 4, "%s|(%s)", o->joined, pattern);
	else
		snprintf(joined, old + len + 4, "(%s)", pattern);
	if (regcomp(&re, joined, REG_EXTENDED | REG_NOSUB)) {
		mt_mem_free(joined);
		return 1;
	}
	mt_label_opts_release(o);
	o->alloc_fn = re;
	o->has_alloc_fn = 1;
	o->joined = joined;
	return MT_OK;
}

void mt_label_opts_release(mt_label_opts_t *o)
{
	if (o->has_alloc_fn)
		regfree(&o->alloc_fn);
	o->has_alloc_fn = 0;
	mt_mem_free(o->joined);
	o->joined = NULL;
}

static regex_t machinery_re;
static int machinery_ready; /* 1 compiled, -1 failed */

static int runtime_module(const mt_frame_t *f)
{
	const char *slash, *base;

	if (!f || !(f->has & MT_HAS_MODULE) || !f->module[0])
		return 0;
	slash = strrchr(f->module, '/');
	base = slash ? slash + 1 : f->module;
	for (size_t i = 0; i < sizeof(runtime_modules) / sizeof(*runtime_modules);
	     i++)
		if (!strncmp(base, runtime_modules[i], strlen(runtime_modules[i])))
			return 1;
	return 0;
}

int mt_label_is_machinery(const mt_label_opts_t *o, const mt_frame_t *f,
			  const mt_srcline_level_t *l)
{
	if (!machinery_ready)
		machinery_ready = regcomp(&machinery_re, machinery,
					  REG_EXTENDED | REG_NOSUB) ? -1 : 1;
	if (runtime_module(f))
		return 1;
	if (!l->function)
		return 0;
	if (machinery_ready == 1 && !regexec(&machinery_re, l->function, 0, NULL, 0))
		return 1;
	return o && o->has_alloc_fn &&
	       !regexec(&o->alloc_fn, l->function, 0, NULL, 0);
}

static void levels_release(site_levels_t *s)
{
	for (size_t i = 0; i < s->n; i++)
		mt_mem_free(s->texts[i]);
	mt_mem_free(s->texts);
	memset(s, 0, sizeof(*s));
}

/* Site ref's levels, and the first of the program's own. */
static int levels_of(const mt_heap_t *h, mt_srcline_t *lines,
		     const mt_label_opts_t *o, const mt_site_ref_t *ref,
		     site_levels_t *out)
{
	const mt_stack_t *st = ref->stack;
	mt_buf_t b = MT_BUF_INIT;
	size_t cap = 0;
	int found = 0, rc = MT_OK;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; st && i < st->nframes; i++) {
		uint64_t id = st->frames[i];
		const mt_frame_t *f = mt_map_find(&h->frames, id);
		mt_srcline_loc_t loc = { 0 };
		size_t nl;

		if (f && (rc = mt_srcline_resolve(lines, id, f, &loc)))
			goto cleanup;
		nl = mt_srcline_nlevels(&loc);
		for (size_t k = 0; k < nl; k++) {
			mt_srcline_level_t l = mt_srcline_level(&loc, k);

			if (out->n == cap) {
				size_t c = cap ? cap * 2 : 8;
				char **grown = mt_mem_realloc(out->texts,
							      c * sizeof(*grown));

				if (!grown) {
					rc = MT_ENOMEM;
					goto cleanup;
				}
				out->texts = grown;
				cap = c;
			}
			mt_buf_reset(&b);
			if ((rc = mt_srcline_add_level(&b, &loc, k, f, 0)) ||
			    (rc = mt_buf_add(&b, "", 1)))
				goto cleanup;
			/* The level's text without " (inlined)": a label
			 * names where, not how the compiler built it. */
			if (l.inlined) {
				char *at = strstr(b.data, " (inlined)");

				if (at)
					memmove(at, at + 10, strlen(at + 10) + 1);
			}
			if (!(out->texts[out->n] = mt_mem_strndup(b.data,
								 strlen(b.data)))) {
				rc = MT_ENOMEM;
				goto cleanup;
			}
			if (!found && !mt_label_is_machinery(o, f, &l)) {
				out->own = out->n;
				found = 1;
			}
			out->n++;
		}
	}
cleanup:
	mt_buf_release(&b);
	if (rc)
		levels_release(out);
	return rc;
}

/* Site i's label at its depth, in *out (mt_mem memory). */
static int make_label(const site_levels_t *s, uint64_t stack_id, int with_id,
		      char **out)
{
	mt_buf_t b = MT_BUF_INIT;
	int rc = MT_OK;

	if (!s->n)
		rc = mt_buf_add_str(&b, stack_id ? "(no frames)" : "(no stack)");
	for (size_t k = s->own; !rc && k < s->n && k <= s->own + s->depth; k++)
		if ((k > s->own && (rc = mt_buf_add_str(&b, " <- "))) ||
		    (rc = mt_buf_add_str(&b, s->texts[k])))
			break;
	if (!rc && with_id && !(rc = mt_buf_add_str(&b, " (stack ")) &&
	    !(rc = mt_buf_add_u64(&b, stack_id)))
		rc = mt_buf_add_str(&b, ")");
	if (!rc && !(*out = mt_mem_strndup(b.data ? b.data : "", b.len)))
		rc = MT_ENOMEM;
	mt_buf_release(&b);
	return rc;
}

/* Whether a site with site i's label has the same levels from its own
 * outward as site i: they differ inside the allocator, and no level out
 * tells them apart. */
static int same_outside(const site_levels_t *lv, char **labels,
			const size_t *order, size_t n, size_t i)
{
	const site_levels_t *a = &lv[i];

	for (size_t k = 0; k < n; k++) {
		const site_levels_t *b = &lv[order[k]];
		size_t m;

		if (order[k] == i || strcmp(labels[order[k]], labels[i]) ||
		    a->n - a->own != b->n - b->own)
			continue;
		for (m = 0; m < a->n - a->own; m++)
			if (strcmp(a->texts[a->own + m], b->texts[b->own + m]))
				break;
		if (m == a->n - a->own)
			return 1;
	}
	return 0;
}

static char **sort_labels;

static int cmp_label(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	int c = strcmp(sort_labels[a], sort_labels[b]);

	return c ? c : (a > b) - (a < b);
}

void mt_label_free(char **labels, size_t n)
{
	for (size_t i = 0; labels && i < n; i++)
		mt_mem_free(labels[i]);
	mt_mem_free(labels);
}

int mt_label_sites(const mt_heap_t *h, mt_srcline_t *lines,
		   const mt_label_opts_t *opts, const mt_site_ref_t *sites,
		   size_t n, char ***out)
{
	site_levels_t *lv = mt_mem_calloc(n ? n : 1, sizeof(*lv));
	char **labels = mt_mem_calloc(n ? n : 1, sizeof(*labels));
	size_t *order = mt_mem_malloc((n ? n : 1) * sizeof(*order));
	unsigned char *dup = mt_mem_calloc(n ? n : 1, 1);
	int rc = MT_OK, any = 1;

	*out = NULL;
	if (!lv || !labels || !order || !dup) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		if ((rc = levels_of(h, lines, opts, &sites[i], &lv[i])) ||
		    (rc = make_label(&lv[i], sites[i].stack_id, 0, &labels[i])))
			goto cleanup;
	for (int round = 0; any && round <= MAX_ROUNDS; round++) {
		any = 0;
		for (size_t i = 0; i < n; i++)
			order[i] = i;
		sort_labels = labels;
		qsort(order, n, sizeof(*order), cmp_label);
		memset(dup, 0, n);
		for (size_t i = 1; i < n; i++)
			if (!strcmp(labels[order[i - 1]], labels[order[i]]))
				dup[order[i - 1]] = dup[order[i]] = any = 1;
		/* Decide every site's step before any label changes: dup
		 * 2 marks a site no level out can tell from another. */
		for (size_t i = 0; any && i < n; i++)
			if (dup[i] && (round == MAX_ROUNDS ||
				       lv[i].own + lv[i].depth + 1 >= lv[i].n ||
				       same_outside(lv, labels, order, n, i)))
				dup[i] = 2;
		for (size_t i = 0; any && i < n; i++) {
			if (!dup[i])
				continue;
			if (dup[i] == 1)
				lv[i].depth++;
			mt_mem_free(labels[i]);
			labels[i] = NULL;
			if ((rc = make_label(&lv[i], sites[i].stack_id,
					     dup[i] == 2, &labels[i])))
				goto cleanup;
		}
	}
	*out = labels;
	labels = NULL;
cleanup:
	for (size_t i = 0; lv && i < n; i++)
		levels_release(&lv[i]);
	mt_mem_free(lv);
	mt_label_free(labels, n);
	mt_mem_free(order);
	mt_mem_free(dup);
	return rc;
}
