/*
 * mt_suppress: LSan-style leak suppressions over a site's frames.  It must
 * never change a figure but the live ones, never allocate while
 * matching, and never read a pattern as more than the text it was given.
 */
#include "../gates/mt_suppress.h"

#include <stdio.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../base/mt_units.h"

const char *const mt_suppress_defaults[] = {
	"_dl_allocate_tls",    /* a thread's TLS blocks and DTV (ld.so) */
	"allocate_dtv",        /* the DTV itself, when named */
	"_dl_update_slotinfo", /* TLS of a module loaded by dlopen */
	"__libc_setup_tls",    /* a static program's TLS */
	"_IO_file_doallocate", /* a stdio stream's buffer */
	NULL,
};

void mt_suppress_release(mt_suppress_t *s)
{
	for (size_t i = 0; i < s->n; i++)
		mt_mem_free(s->patterns[i]);
	mt_mem_free(s->patterns);
	*s = (mt_suppress_t)MT_SUPPRESS_INIT;
}

int mt_suppress_add(mt_suppress_t *s, const char *pattern, size_t len)
{
	char *copy;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		char **p = mt_mem_realloc(s->patterns, cap * sizeof(*p));

		if (!p)
			return MT_ENOMEM;
		s->patterns = p;
		s->cap = cap;
	}
	if (!(copy = mt_mem_strndup(pattern, len)))
		return MT_ENOMEM;
	s->patterns[s->n++] = copy;
	return MT_OK;
}

int mt_suppress_add_defaults(mt_suppress_t *s)
{
	int rc;

	for (size_t i = 0; mt_suppress_defaults[i]; i++)
		if ((rc = mt_suppress_add(s, mt_suppress_defaults[i],
					  strlen(mt_suppress_defaults[i]))))
			return rc;
	return MT_OK;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

int mt_suppress_parse(mt_suppress_t *s, const char *text, size_t len,
		      char *why, size_t cap)
{
	size_t lineno = 0, pos = 0;

	while (pos < len) {
		const char *line = text + pos, *end = memchr(line, '\n', len - pos);
		size_t n = end ? (size_t)(end - line) : len - pos;
		const char *colon;
		int rc;

		pos += n + (end != NULL);
		lineno++;
		while (n && blank(*line))
			line++, n--;
		while (n && blank(line[n - 1]))
			n--;
		if (!n || *line == '#')
			continue;
		colon = memchr(line, ':', n);
		if (!colon) {
			snprintf(why, cap, "line %zu is not KIND:PATTERN "
				 "(leak:PATTERN)", lineno);
			return 1;
		}
		if ((size_t)(colon - line) != 4 || memcmp(line, "leak", 4))
			continue;
		n -= 5;
		line += 5;
		while (n && blank(*line))
			line++, n--;
		if (!n) {
			snprintf(why, cap, "line %zu has an empty pattern", lineno);
			return 1;
		}
		if ((rc = mt_suppress_add(s, line, n)))
			return rc;
	}
	return MT_OK;
}

/* Whether p (up to pend) matches str from its start, `*` any run, to its
 * end when anchored. */
static int match_here(const char *p, const char *pend, const char *str,
		      int anchored_end)
{
	while (p < pend) {
		if (*p == '*') {
			while (p < pend && *p == '*')
				p++;
			if (p == pend)
				return 1;
			for (const char *t = str; *t; t++)
				if (match_here(p, pend, t, anchored_end))
					return 1;
			return 0;
		}
		if (*str != *p)
			return 0;
		p++;
		str++;
	}
	return !anchored_end || !*str;
}

int mt_suppress_glob(const char *pattern, const char *str)
{
	size_t len = strlen(pattern);
	const char *p = pattern, *pend = pattern + len;
	int start = 0, end = 0;

	if (p < pend && *p == '^')
		start = 1, p++;
	if (pend > p && pend[-1] == '$')
		end = 1, pend--;
	if (start)
		return match_here(p, pend, str, end);
	/* Unanchored: a match starting anywhere, as a leading `*`. */
	for (const char *t = str;; t++) {
		if (match_here(p, pend, t, end))
			return 1;
		if (!*t)
			return 0;
	}
}

int mt_suppress_frame(const mt_suppress_t *s, const char *symbol,
		      const char *module)
{
	for (size_t i = 0; i < s->n; i++)
		if ((symbol && mt_suppress_glob(s->patterns[i], symbol)) ||
		    (module && mt_suppress_glob(s->patterns[i], module)))
			return 1;
	return 0;
}

void mt_suppress_profile(const mt_suppress_t *s, mt_profile_t *p,
			 mt_suppress_left_t *left)
{
	memset(left, 0, sizeof(*left));
	if (!s->n)
		return;
	for (size_t i = 0; i < p->nsites; i++) {
		mt_profile_site_t *site = &p->sites[i];
		int hit = 0;

		if (!site->live_bytes && !site->live_allocations)
			continue;
		for (size_t f = 0; f < site->nframes && !hit; f++)
			hit = mt_suppress_frame(s, site->frames[f].symbol,
						site->frames[f].module);
		if (!hit)
			continue;
		left->sites++;
		left->live_allocations += site->live_allocations;
		left->live_bytes += site->live_bytes;
		/* A summary file's sites may say more than its totals. */
		p->total[MT_PF_LIVE_ALLOCATIONS] -=
			site->live_allocations < p->total[MT_PF_LIVE_ALLOCATIONS] ?
			site->live_allocations : p->total[MT_PF_LIVE_ALLOCATIONS];
		p->total[MT_PF_LIVE_BYTES] -=
			site->live_bytes < p->total[MT_PF_LIVE_BYTES] ?
			site->live_bytes : p->total[MT_PF_LIVE_BYTES];
		site->live_allocations = 0;
		site->live_bytes = 0;
	}
}

int mt_suppress_site(const mt_suppress_t *s, const mt_heap_t *h,
		     mt_srcline_t *lines, const mt_site_ref_t *ref, int *hit)
{
	int rc = MT_OK;

	*hit = 0;
	if (!s->n || !ref->site->live_bytes || !ref->stack)
		return MT_OK;
	for (size_t i = 0; i < ref->stack->nframes && !*hit; i++) {
		uint64_t id = ref->stack->frames[i];
		const mt_frame_t *f = mt_map_find(&h->frames, id);
		mt_srcline_loc_t loc;

		if (!f)
			continue;
		if ((rc = mt_srcline_resolve(lines, id, f, &loc)))
			return rc;
		*hit = mt_suppress_frame(s, f->symbol, f->module) ||
		       (loc.function && mt_suppress_frame(s, loc.function, NULL));
	}
	return rc;
}

int mt_suppress_add_left_out(mt_buf_t *b, const mt_suppress_left_t *left)
{
	int rc;

	if ((rc = mt_buf_add_str(b, "left out: ")) ||
	    (rc = mt_units_add_size(b, left->live_bytes)) ||
	    (rc = mt_buf_add_str(b, " in ")) ||
	    (rc = mt_units_add_count(b, left->live_allocations, "block",
				     "blocks")) ||
	    (rc = mt_buf_add_str(b, " from ")) ||
	    (rc = mt_units_add_count(b, left->sites, "site", "sites")))
		return rc;
	return mt_buf_add_str(b, ", known runtime allocations (suppressions)");
}
