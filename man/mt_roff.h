/*
 * mt_roff: a usage text (mt_usage) written as a man page: NAME, SYNOPSIS,
 * DESCRIPTION (its paragraphs and the items that are no option), OPTIONS,
 * a section a heading, EXIT STATUS, SEE ALSO.
 */
#ifndef MT_ROFF_H
#define MT_ROFF_H

#include <stdio.h>

#include "mt_usage.h"

/* What the page is, beside its text. */
typedef struct {
	const char *name, *section, *summary;
	const char *see_also; /* "memtrace(1), ..." or NULL */
} mt_roff_page_t;

/* The page p of text u, in roff for man(7), to out. */
void mt_roff_page(FILE *out, const mt_roff_page_t *p, const mt_usage_t *u);

#endif
