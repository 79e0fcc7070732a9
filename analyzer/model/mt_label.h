/*
 * mt_label: the name a site goes by in a list, where the user can act on
 * it: the first level (mt_srcline_level_t) of its stack, innermost first,
 * in the program's own code, past the allocator and the runtime's
 * allocation machinery (the malloc family, operator new and delete,
 * strdup, anything in std:: or __gnu_cxx::, and frames in the preload,
 * libc, libstdc++ or the dynamic loader), and any function the caller's
 * --alloc-fn pattern names; "NAME at FILE:LINE", or "0xOFFSET in MODULE"
 * without a line.  A stack that is machinery throughout is named by its
 * innermost level.  Two sites never share a label: where the first own
 * levels agree, each label adds the next levels out (" <- NAME at
 * FILE:LINE") until they differ, and " (stack N)" when they never do.
 *
 * Invariants: it never changes the sites nor the heap; labels are
 * mt_mem memory, whole or absent.
 */
#ifndef MT_LABEL_H
#define MT_LABEL_H

#include <regex.h>
#include <stddef.h>

#include "../model/mt_heap.h"
#include "../model/mt_sites.h"
#include "../model/mt_srcline.h"

typedef struct {
	regex_t alloc_fn; /* the caller's --alloc-fn, when has_alloc_fn */
	int has_alloc_fn;
	char *joined;     /* every pattern added, as one: (a)|(b) */
} mt_label_opts_t;

/* Add pattern (POSIX extended, unanchored, on demangled names) to o's:
 * MT_OK, MT_ENOMEM, or 1 when it is no pattern (o then as it was). */
int mt_label_opts_add(mt_label_opts_t *o, const char *pattern);
void mt_label_opts_release(mt_label_opts_t *o);

/* Whether level l of frame f (NULL: unknown) is the allocator's or the
 * runtime's, not the program's own (opts may be NULL). */
int mt_label_is_machinery(const mt_label_opts_t *opts, const mt_frame_t *f,
			  const mt_srcline_level_t *l);

/*
 * The labels of sites[0, n) of heap h, in *out (an array of n strings,
 * all mt_mem memory; free with mt_label_free()).  opts may be NULL.
 * MT_OK or MT_ENOMEM.
 */
int mt_label_sites(const mt_heap_t *h, mt_srcline_t *lines,
		   const mt_label_opts_t *opts, const mt_site_ref_t *sites,
		   size_t n, char ***out);
void mt_label_free(char **labels, size_t n);

#endif
