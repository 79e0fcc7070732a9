/*
 * mt_usage: a usage text, as every memtrace --help is written, read into
 * blocks: the synopsis ("usage: PROG ...", its wrapped lines, "   or: "
 * or the program's name beginning another form), paragraphs, items (a
 * line indented by two spaces, "  -o, --output FILE   what it does", the
 * description going on in more deeply indented lines), and headings (a
 * one-line paragraph "Word:", under which what follows falls); and the
 * options such a text names.
 */
#ifndef MT_USAGE_H
#define MT_USAGE_H

#include <stddef.h>

typedef enum { MT_USAGE_PARA, MT_USAGE_ITEM, MT_USAGE_HEADING } mt_usage_kind_t;

/* A block: a paragraph, an item, a heading. */
typedef struct {
	mt_usage_kind_t kind;
	char *term;     /* an item's term; a heading's title */
	char **lines;   /* a paragraph's or an item's description */
	size_t nlines;
	int section;    /* the heading it falls under (its block), or -1 */
} mt_usage_block_t;

/* A usage text: its synopsis and its blocks; { 0 } is empty. */
typedef struct {
	char *prog;     /* the first word after "usage: " */
	char **forms;   /* the synopsis: a form a string, lines joined by \n */
	size_t nforms;
	mt_usage_block_t *blocks;
	size_t nblocks;
} mt_usage_t;

/* An option a text names, and the options of a text ({ 0 }: none). */
typedef struct {
	char *name;   /* "--output", "-o" */
	char *value;  /* "FILE", or NULL */
} mt_usage_opt_t;

typedef struct {
	mt_usage_opt_t *v;
	size_t n;
} mt_usage_opts_t;

/* Parse text into u (zeroed at first), after what u holds already: a
 * page source's own text follows its program's --help. */
void mt_usage_parse(mt_usage_t *u, const char *text);

/* An item whose term is an option, under no heading: OPTIONS. */
int mt_usage_is_option(const mt_usage_block_t *b);

/* A paragraph beginning "Exit": EXIT STATUS. */
int mt_usage_is_exit(const mt_usage_block_t *b);

/* The length of the value's word s begins with (capitals and digits: FILE,
 * N, SIZE), or 0. */
size_t mt_usage_value_len(const char *s);

/* Every option u names, in its synopsis and its option items, with the
 * value it takes ("--output", "FILE"), once each, and --help. */
void mt_usage_options(const mt_usage_t *u, mt_usage_opts_t *o);

#endif
