/*
 * mt-mkman: the build's maker of memtrace's man pages and of its bash
 * completion, from the texts `--help` prints, so that none of them can
 * say what the others do not:
 *
 *   mt-mkman pages DIR SOURCE...  DIR/memtrace-NAME.1 for each command a
 *                                 user runs (the table's usage), and a
 *                                 page for each SOURCE (man/NAME.S.txt),
 *                                 which replaces a command's of its name
 *   mt-mkman completion RUNHELP   the bash completion of memtrace (from
 *                                 the table) and of memtrace-run (from
 *                                 the text the shell command RUNHELP
 *                                 prints, its --help), on stdout
 *
 * A usage text is read as the project writes them all: "usage: PROG ..."
 * and its wrapped lines ("   or: " begins another form), paragraphs, and
 * items, a line indented by two spaces ("  -o, --output FILE   what it
 * does"), the description going on in more deeply indented lines.  A
 * one-line paragraph "Word:" heads a section of its own.  Items whose
 * term is an option make OPTIONS, paragraphs beginning "Exit" EXIT STATUS.
 *
 * A page source is "key: value" lines (name, section, summary, see-also,
 * help: a shell command whose output begins the text), a blank line, and
 * a usage text of its own, in which "@environment FILE" stands for the
 * table of FILE's "## Environment" and the paragraph after it (Markdown,
 * a variable a row), and "@plumbing" for a paragraph naming the table's
 * plumbing commands.
 *
 * It is a build tool: on any error it says why and exits 1.  It must
 * never write a page or a completion from anything but these texts.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/cmd/mt_cli.h"
#include "../analyzer/cmd/mt_commands.h"

#ifndef MT_VERSION
#define MT_VERSION "0.1.0"
#endif

/* ---- errors and memory: a build tool stops at the first ---- */

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fputs("mt-mkman: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	if (!(p = realloc(p, n ? n : 1)))
		die("out of memory");
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *d = xrealloc(NULL, n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* A growing string. */
typedef struct {
	char *s;
	size_t len, cap;
} str_t;

static void str_add(str_t *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void str_adds(str_t *b, const char *s)
{
	str_add(b, s, strlen(s));
}

static char *read_all(FILE *f, const char *what)
{
	str_t b = { 0 };
	char chunk[4096];
	size_t n;

	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		str_add(&b, chunk, n);
	if (ferror(f))
		die("cannot read %s: %s", what, strerror(errno));
	str_add(&b, "", 0);
	return b.s;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	s = read_all(f, path);
	fclose(f);
	return s;
}

/* What the shell command cmd prints; it must exit 0. */
static char *run_output(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	char *s;

	if (!f)
		die("cannot run '%s': %s", cmd, strerror(errno));
	s = read_all(f, cmd);
	if (pclose(f) != 0)
		die("'%s' failed", cmd);
	return s;
}

/* ---- a usage text, as blocks ---- */

typedef enum { B_PARA, B_ITEM, B_HEADING } kind_t;

typedef struct {
	kind_t kind;
	char *term;     /* an item's term; a heading's title */
	char **lines;   /* a paragraph's or an item's description */
	size_t nlines;
	int section;    /* the heading it falls under (its block), or -1 */
} block_t;

typedef struct {
	char *prog;     /* the first word after "usage: " */
	char **forms;   /* the synopsis: a form a string, lines joined by \n */
	size_t nforms;
	block_t *blocks;
	size_t nblocks;
} usage_t;

static void push_line(char ***lines, size_t *n, char *line)
{
	*lines = xrealloc(*lines, (*n + 1) * sizeof(**lines));
	(*lines)[(*n)++] = line;
}

static size_t indent_of(const char *line)
{
	size_t i = 0;

	while (line[i] == ' ')
		i++;
	return i;
}

/* The text split in lines (copies), without their newlines. */
static char **split_lines(const char *text, size_t *n)
{
	char **lines = NULL;

	*n = 0;
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);

		push_line(&lines, n, xstrndup(text, len));
		text += len + (nl != NULL);
	}
	return lines;
}

/* A one-line paragraph "Word:" or "Two words:" is a heading. */
static int is_heading(const char *line)
{
	size_t len = strlen(line);

	if (len < 2 || line[len - 1] != ':' || !isupper((unsigned char)line[0]))
		return 0;
	for (size_t i = 0; i + 1 < len; i++)
		if (!isalpha((unsigned char)line[i]) && line[i] != ' ')
			return 0;
	return 1;
}

static block_t *new_block(usage_t *u, kind_t kind, int section)
{
	block_t *b;

	u->blocks = xrealloc(u->blocks, (u->nblocks + 1) * sizeof(*u->blocks));
	b = &u->blocks[u->nblocks++];
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->section = section;
	return b;
}

/* Parse text into u, appending to what u holds (a page source's body
 * after its help). */
static void parse_usage(usage_t *u, const char *text)
{
	size_t n, i = 0;
	char **lines = split_lines(text, &n);
	int section = -1;

	while (i < n && !lines[i][0])
		i++;
	if (i < n && !strncmp(lines[i], "usage: ", 7)) {
		const char *form = lines[i] + 7;
		size_t plen = strcspn(form, " ");
		str_t f = { 0 };

		free(u->prog);
		u->prog = xstrndup(form, plen);
		str_adds(&f, form);
		for (i++; i < n && lines[i][0]; i++) {
			const char *l = lines[i], *s = l + indent_of(l);

			if (!strncmp(l, "   or: ", 7) ||
			    (!strncmp(s, u->prog, plen) &&
			     (s[plen] == ' ' || !s[plen]))) {
				push_line(&u->forms, &u->nforms, f.s);
				memset(&f, 0, sizeof(f));
				str_adds(&f, strncmp(l, "   or: ", 7) ? s : l + 7);
				continue;
			}
			str_adds(&f, "\n");
			str_adds(&f, indent_of(l) >= 7 ? l + 7 : s);
		}
		push_line(&u->forms, &u->nforms, f.s);
	}
	while (i < n) {
		const char *l = lines[i];
		size_t ind = indent_of(l);
		block_t *b;

		if (!l[0]) {
			i++;
		} else if (ind == 0) {
			if (is_heading(l) && (i + 1 == n || !lines[i + 1][0] ||
					      indent_of(lines[i + 1]) > 0)) {
				b = new_block(u, B_HEADING, -1);
				b->term = xstrndup(l, strlen(l) - 1);
				section = (int)(b - u->blocks);
				i++;
				continue;
			}
			b = new_block(u, B_PARA, section);
			while (i < n && lines[i][0] && indent_of(lines[i]) == 0)
				push_line(&b->lines, &b->nlines, xstrdup(lines[i++]));
		} else if (ind == 2) {
			const char *term = l + 2, *gap = strstr(term, "  ");
			size_t tlen = gap ? (size_t)(gap - term) : strlen(term);

			b = new_block(u, B_ITEM, section);
			b->term = xstrndup(term, tlen);
			if (gap)
				push_line(&b->lines, &b->nlines,
					  xstrdup(gap + indent_of(gap)));
			for (i++; i < n && indent_of(lines[i]) > 2; i++)
				push_line(&b->lines, &b->nlines,
					  xstrdup(lines[i] + indent_of(lines[i])));
		} else {
			/* Lines indented otherwise, with no item above: a
			 * paragraph, of one line at least. */
			b = new_block(u, B_PARA, section);
			do {
				push_line(&b->lines, &b->nlines,
					  xstrdup(lines[i] + indent_of(lines[i])));
				i++;
			} while (i < n && indent_of(lines[i]) > 2);
		}
	}
	for (i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

static int is_option_item(const block_t *b)
{
	return b->kind == B_ITEM && b->term[0] == '-' && b->section < 0;
}

static int is_exit_para(const block_t *b)
{
	return b->kind == B_PARA && !strncmp(b->lines[0], "Exit", 4);
}

/* ---- the options a usage text names ---- */

typedef struct {
	char *name;   /* "--output", "-o" */
	char *value;  /* "FILE", or NULL */
} opt_t;

typedef struct {
	opt_t *v;
	size_t n;
} opts_t;

static void add_opt(opts_t *o, const char *name, size_t len, const char *value,
		    size_t vlen)
{
	for (size_t i = 0; i < o->n; i++)
		if (strlen(o->v[i].name) == len && !memcmp(o->v[i].name, name, len)) {
			if (!o->v[i].value && vlen)
				o->v[i].value = xstrndup(value, vlen);
			return;
		}
	o->v = xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
	o->v[o->n].name = xstrndup(name, len);
	o->v[o->n].value = vlen ? xstrndup(value, vlen) : NULL;
	o->n++;
}

/* An option's name: "-x" or "--name", nothing else ("--" alone is no
 * option). */
static size_t option_len(const char *s)
{
	size_t len;

	if (s[0] != '-' || !(isalnum((unsigned char)s[1]) ||
			     (s[1] == '-' && isalnum((unsigned char)s[2]))))
		return 0;
	if (s[1] != '-')
		return 2;
	len = 2;
	while (isalnum((unsigned char)s[len]) || s[len] == '-')
		len++;
	return len;
}

/* A value's word: capitals (and digits), as FILE, N, SIZE. */
static size_t value_len(const char *s)
{
	size_t len = 0;

	while (isupper((unsigned char)s[len]) || isdigit((unsigned char)s[len]))
		len++;
	return len && isupper((unsigned char)s[0]) ? len : 0;
}

/* The options of the synopsis (each form) and of the option items. */
static void usage_options(const usage_t *u, opts_t *o)
{
	for (size_t f = 0; f < u->nforms; f++) {
		const char *p = u->forms[f];

		while (*p) {
			size_t len;

			if (*p == ' ' || *p == '\n' || *p == '[' || *p == '|' ||
			    *p == ']') {
				p++;
				continue;
			}
			if (!(len = option_len(p)) ||
			    (p[len] && !strchr(" \n]|", p[len]))) {
				p += strcspn(p, " \n");
				continue;
			}
			/* "--name VALUE" in one bracket: the next word. */
			if (p[len] == ' ' && value_len(p + len + 1))
				add_opt(o, p, len, p + len + 1,
					value_len(p + len + 1));
			else
				add_opt(o, p, len, NULL, 0);
			p += len;
		}
	}
	for (size_t i = 0; i < u->nblocks; i++) {
		const block_t *b = &u->blocks[i];
		const char *p, *value;
		size_t vlen;

		if (!is_option_item(b))
			continue;
		/* "-o, --output FILE": the value is the last word's. */
		value = strrchr(b->term, ' ');
		vlen = value ? value_len(value + 1) : 0;
		for (p = b->term; *p;) {
			size_t len = option_len(p);

			if (!len)
				break;
			add_opt(o, p, len, vlen ? value + 1 : NULL, vlen);
			p += len;
			if (strncmp(p, ", ", 2))
				break;
			p += 2;
		}
	}
	add_opt(o, "--help", 6, NULL, 0);
}

/* ---- roff ---- */

/* Text for a line of roff: '\' and '-' escaped, a leading '.' or '\''
 * kept from being a request, `code` in bold. */
static void roff_text(FILE *out, const char *s, size_t n)
{
	int code = 0;

	if (n && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", out);
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\')
			fputs("\\e", out);
		else if (c == '-')
			fputs("\\-", out);
		else if (c == '`' && (code || memchr(s + i + 1, '`', n - i - 1))) {
			fputs(code ? "\\fR" : "\\fB", out);
			code = !code;
		} else
			fputc(c, out);
	}
	if (code)
		fputs("\\fR", out);
}

static void roff_line(FILE *out, const char *s)
{
	roff_text(out, s, strlen(s));
	fputc('\n', out);
}

/* A term: options and literal words in bold, CAPITALS in italics, the
 * punctuation between them as it is. */
static void roff_term(FILE *out, const char *t)
{
	while (*t) {
		size_t word = strcspn(t, " ,|[]()"), value = value_len(t);

		if (!word) {
			roff_text(out, t, 1);
			t++;
			continue;
		}
		fputs(value && (value == word || t[value] == '.') ? "\\fI" : "\\fB",
		      out);
		roff_text(out, t, word);
		fputs("\\fR", out);
		t += word;
	}
	fputc('\n', out);
}

/* An item with no description: a line to show as it is (an example). */
static int is_verbatim(const block_t *b)
{
	return b->kind == B_ITEM && !b->nlines;
}

static void roff_block(FILE *out, const block_t *b, const block_t *prev)
{
	if (is_verbatim(b)) {
		if (!prev || !is_verbatim(prev))
			fputs(".PP\n.RS 4\n.nf\n", out);
		roff_line(out, b->term);
		return;
	}
	if (prev && is_verbatim(prev))
		fputs(".fi\n.RE\n", out);
	if (b->kind == B_ITEM) {
		fputs(".TP\n", out);
		roff_term(out, b->term);
	} else {
		fputs(".PP\n", out);
	}
	for (size_t i = 0; i < b->nlines; i++)
		roff_line(out, b->lines[i]);
}

/* s in capitals, for .TH. */
static void upper(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '-')
			fputs("\\-", out);
		else
			fputc(toupper((unsigned char)*s), out);
	}
}

/* Which section a block is written in. */
static int in_description(const block_t *b, int h)
{
	(void)h;
	return b->section < 0 && b->kind != B_HEADING && !is_option_item(b) &&
	       !is_exit_para(b);
}

static int in_options(const block_t *b, int h)
{
	(void)h;
	return is_option_item(b);
}

static int in_heading(const block_t *b, int h)
{
	return b->section == h && !is_exit_para(b);
}

static int in_exit(const block_t *b, int h)
{
	(void)h;
	return is_exit_para(b);
}

/* ".SH TITLE" and the blocks in(b, h) says are in it; nothing when none
 * is. */
static void write_section(FILE *out, const char *title, const usage_t *u,
			  int (*in)(const block_t *b, int h), int h)
{
	const block_t *prev = NULL;

	for (size_t i = 0; i < u->nblocks; i++) {
		if (!in(&u->blocks[i], h))
			continue;
		if (!prev)
			fprintf(out, ".SH \"%s\"\n", title);
		roff_block(out, &u->blocks[i], prev);
		prev = &u->blocks[i];
	}
	if (prev && is_verbatim(prev))
		fputs(".fi\n.RE\n", out);
}

typedef struct {
	const char *name, *section, *summary;
	const char *see_also; /* "memtrace(1), ..." or NULL */
} page_t;

/*
 * A form's lines after its first width columns (the program, and a
 * command's name), each one too long for a page 80 wide (less its indent) broken before
 * a word, and the rest of it indented by width, as the wrapped lines of
 * the usage texts are.
 */
#define SYNOPSIS_WIDTH 72
static void write_synopsis_lines(FILE *out, const char *l, size_t width)
{
	size_t col = width - 1;

	while (*l) {
		size_t len = strcspn(l, "\n"), take = len;

		/* Break before the last word that fits. */
		while (col + take > SYNOPSIS_WIDTH && take) {
			const char *sp = NULL;

			for (size_t k = take; k > 1; k--)
				if (l[k - 1] == ' ' && col + k - 1 <= SYNOPSIS_WIDTH) {
					sp = l + k - 1;
					break;
				}
			if (!sp || sp == l)
				break;
			take = (size_t)(sp - l);
		}
		roff_text(out, l, take);
		fputc('\n', out);
		if (take < len) {
			/* The rest of this line, indented. */
			fprintf(out, "%*s", (int)width, "");
			col = width;
			l += take + 1;
			continue;
		}
		l += len + (l[len] == '\n');
		col = 0;
	}
}

static void write_page(FILE *out, const page_t *p, const usage_t *u)
{
	fputs(".TH \"", out);
	upper(out, p->name);
	fprintf(out, "\" \"%s\" \"\" \"memtrace %s\" \"memtrace manual\"\n",
		p->section, MT_VERSION);
	fputs(".SH NAME\n", out);
	roff_text(out, p->name, strlen(p->name));
	fputs(" \\- ", out);
	roff_line(out, p->summary);
	if (u->nforms) {
		fputs(".SH SYNOPSIS\n.nf\n", out);
		for (size_t f = 0; f < u->nforms; f++) {
			const char *form = u->forms[f];
			size_t plen = strcspn(form, " \n");

			/* The program in bold, and a command's name with it. */
			if (!strcmp(u->prog, "memtrace") && form[plen] == ' ' &&
			    islower((unsigned char)form[plen + 1]))
				plen += 1 + strcspn(form + plen + 1, " \n");
			fputs("\\fB", out);
			roff_text(out, form, plen);
			fputs("\\fR", out);
			write_synopsis_lines(out, form + plen, plen + 1);
			if (!form[plen])
				fputc('\n', out);
		}
		fputs(".fi\n", out);
	}
	write_section(out, "DESCRIPTION", u, in_description, -1);
	write_section(out, "OPTIONS", u, in_options, -1);
	for (size_t h = 0; h < u->nblocks; h++) {
		char title[64];
		size_t t;

		if (u->blocks[h].kind != B_HEADING)
			continue;
		for (t = 0; u->blocks[h].term[t] && t + 1 < sizeof(title); t++)
			title[t] = (char)toupper((unsigned char)u->blocks[h].term[t]);
		title[t] = '\0';
		write_section(out, title, u, in_heading, (int)h);
	}
	write_section(out, "EXIT STATUS", u, in_exit, -1);
	if (p->see_also) {
		fputs(".SH \"SEE ALSO\"\n", out);
		for (const char *s = p->see_also; *s;) {
			size_t len = strcspn(s, "(");

			/* "name(1), ..." as "\fBname\fR(1), ..." */
			fputs("\\fB", out);
			roff_text(out, s, len);
			fputs("\\fR", out);
			s += len;
			len = strcspn(s, " ");
			roff_text(out, s, len);
			s += len;
			if (*s == ' ') {
				fputc('\n', out);
				s++;
			}
		}
		fputc('\n', out);
	}
}

/* ---- page sources ---- */

/*
 * The Markdown of doc (a file in folder dir, "docs/") as a usage text's:
 * ** dropped, \| as |, a link as its text, followed by the file it names
 * from the top of the tree ("docs/ci-gates.md") unless it is within the
 * page; and "below, " (a section further on) as "doc, ".
 */
static void md_inline(str_t *b, const char *doc, const char *dir, const char *s,
		      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '[') {
			const char *close = memchr(s + i, ']', n - i);

			if (close && close + 1 < s + n && close[1] == '(') {
				const char *t = close + 2;
				const char *end = memchr(t, ')', (size_t)(s + n - t));

				if (end) {
					size_t text = (size_t)(close - s - i - 1);
					size_t file = strcspn(t, "#)");

					if (file == text && !memcmp(t, s + i + 1, text))
						text = 0;
					md_inline(b, doc, dir, s + i + 1, text);
					if (file && !memmem(t, file, "://", 3)) {
						str_adds(b, text ? " (" : "");
						str_adds(b, dir);
						str_add(b, t, file);
						str_adds(b, text ? ")" : "");
					}
					i = (size_t)(end - s);
					continue;
				}
			}
		}
		if (!strncmp(s + i, "below, ", 7) && i + 7 <= n) {
			str_adds(b, doc);
			str_adds(b, ", ");
			i += 6;
			continue;
		}
		if (s[i] == '*' && i + 1 < n && s[i + 1] == '*') {
			i++;
			continue;
		}
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == '|')
			i++;
		str_add(b, s + i, 1);
	}
}

/* The cells of a Markdown table row "| a | b | c |". */
static size_t md_cells(const char *row, const char **cell, size_t *len, size_t max)
{
	size_t n = 0;
	const char *p = row + 1;

	while (*p && n < max) {
		const char *bar = p;

		while (*bar && !(*bar == '|' && bar[-1] != '\\'))
			bar++;
		if (!*bar)
			break;
		while (*p == ' ')
			p++;
		cell[n] = p;
		len[n] = (size_t)(bar - p);
		while (len[n] && p[len[n] - 1] == ' ')
			len[n]--;
		n++;
		p = bar + 1;
	}
	return n;
}

/* "@environment FILE": FILE's "## Environment" table (variable,
 * default, effect) as items, and the paragraph after it. */
static void expand_environment(str_t *out, const char *path)
{
	char *md = read_file(path), *dir = xstrdup(path), *slash;
	size_t n, i;
	char **lines = split_lines(md, &n);
	int rows = 0;

	slash = strrchr(dir, '/');
	slash = slash ? slash + 1 : dir;
	*slash = '\0';
	for (i = 0; i < n && strcmp(lines[i], "## Environment"); i++)
		;
	if (i == n)
		die("'%s' has no '## Environment'", path);
	for (i++; i < n && lines[i][0] != '|'; i++)
		;
	for (; i < n && lines[i][0] == '|'; i++) {
		const char *cell[3];
		size_t len[3];

		if (md_cells(lines[i], cell, len, 3) != 3)
			die("'%s': a row of its environment table has not 3 cells", path);
		if (!strncmp(cell[0], "variable", len[0]) || cell[0][0] == '-')
			continue;
		str_adds(out, "  ");
		/* The variable without its backquotes: the term is bold. */
		str_add(out, cell[0] + (cell[0][0] == '`'),
			len[0] - 2 * (cell[0][0] == '`'));
		str_adds(out, "\n      ");
		md_inline(out, path, dir, cell[2], len[2]);
		if (strncmp(cell[1], "unset", len[1])) {
			str_adds(out, " (default ");
			md_inline(out, path, dir, cell[1], len[1]);
			str_adds(out, ")");
		}
		str_adds(out, "\n");
		rows++;
	}
	if (!rows)
		die("'%s': no environment table", path);
	for (; i < n && !lines[i][0]; i++)
		;
	str_adds(out, "\n");
	for (; i < n && lines[i][0]; i++) {
		md_inline(out, path, dir, lines[i], strlen(lines[i]));
		str_adds(out, "\n");
	}
	for (i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	free(dir);
	free(md);
}

/* "@plumbing": the commands after the user's, or nothing. */
static void expand_plumbing(str_t *out)
{
	if (mt_ncommands == mt_nuser_commands)
		return;
	for (size_t i = mt_nuser_commands; i < mt_ncommands; i++) {
		str_adds(out, i == mt_nuser_commands ? "" :
			      i + 1 == mt_ncommands ? " and " : ", ");
		str_adds(out, "`");
		str_adds(out, mt_commands[i]->name);
		str_adds(out, "`");
	}
	str_adds(out, "\nare steps of memtrace-run(1)'s script, with no page of their\n"
		      "own: `memtrace help COMMAND` prints each one's usage.\n");
}

static const char *header(char **lines, size_t n, const char *key, int need,
			  const char *path)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < n && lines[i][0]; i++)
		if (!strncmp(lines[i], key, klen) && lines[i][klen] == ':')
			return lines[i] + klen + 1 + indent_of(lines[i] + klen + 1);
	if (need)
		die("'%s' has no '%s:' line", path, key);
	return NULL;
}

static void write_file_page(const char *dir, const char *src)
{
	char *text = read_file(src);
	size_t n, i;
	char **lines = split_lines(text, &n);
	page_t p = {
		.name = header(lines, n, "name", 1, src),
		.section = header(lines, n, "section", 1, src),
		.summary = header(lines, n, "summary", 1, src),
		.see_also = header(lines, n, "see-also", 0, src),
	};
	const char *help = header(lines, n, "help", 0, src);
	usage_t u = { .prog = xstrdup(p.name) };
	str_t body = { 0 };
	char *path;
	FILE *out;

	if (help) {
		char *h = run_output(help);

		parse_usage(&u, h);
		free(h);
	}
	for (i = 0; i < n && lines[i][0]; i++)
		;
	for (; i < n; i++) {
		if (!strncmp(lines[i], "@environment ", 13))
			expand_environment(&body, lines[i] + 13);
		else if (!strcmp(lines[i], "@plumbing"))
			expand_plumbing(&body);
		else {
			str_adds(&body, lines[i]);
			str_adds(&body, "\n");
		}
	}
	str_add(&body, "", 0);
	parse_usage(&u, body.s);
	/* memtrace(1) sends its reader on to each command's page (once:
	 * memtrace-run(1) may be a command's and its own see-also's). */
	if (!strcmp(p.name, "memtrace")) {
		str_t see = { 0 };

		str_adds(&see, p.see_also ? p.see_also : "");
		for (i = 0; i < mt_nuser_commands; i++) {
			char page[128];

			snprintf(page, sizeof(page), "memtrace-%s(1)",
				 mt_commands[i]->name);
			if (see.len && strstr(see.s, page))
				continue;
			str_adds(&see, see.len ? ", " : "");
			str_adds(&see, page);
		}
		p.see_also = see.s;
	}
	if (asprintf(&path, "%s/%s.%s", dir, p.name, p.section) < 0)
		die("out of memory");
	if (!(out = fopen(path, "w")))
		die("cannot open '%s': %s", path, strerror(errno));
	write_page(out, &p, &u);
	if (fclose(out))
		die("cannot write '%s': %s", path, strerror(errno));
	free(path);
}

static void write_command_page(const char *dir, const mt_cmd_t *cmd)
{
	char *path, *name;
	usage_t u = { 0 };
	page_t p = { .section = "1", .summary = cmd->summary,
		     .see_also = "memtrace(1)" };
	FILE *out;

	if (asprintf(&name, "memtrace-%s", cmd->name) < 0 ||
	    asprintf(&path, "%s/%s.1", dir, name) < 0)
		die("out of memory");
	p.name = name;
	parse_usage(&u, cmd->usage);
	if (!(out = fopen(path, "w")))
		die("cannot open '%s': %s", path, strerror(errno));
	write_page(out, &p, &u);
	if (fclose(out))
		die("cannot write '%s': %s", path, strerror(errno));
	free(path);
	free(name);
}

/* ---- bash completion ---- */

/* How a value is completed: a file, a trace file, a directory, or not
 * at all (a number, a size, a name). */
static const char *value_kind(const char *value)
{
	if (!value)
		return NULL;
	if (!strcmp(value, "TRACE"))
		return "trace";
	if (!strcmp(value, "FILE") || !strcmp(value, "SUMMARY") ||
	    !strcmp(value, "LOG") || !strcmp(value, "REPS") ||
	    !strcmp(value, "FIGURES"))
		return "file";
	if (!strcmp(value, "DIR"))
		return "dir";
	return "none";
}

static void print_options(const opts_t *o)
{
	for (size_t i = 0; i < o->n; i++)
		printf("%s%s", i ? " " : "", o->v[i].name);
}

/* The case arms "'CMD --opt'|...) echo KIND ;;" of the options of
 * command cmd that take a value. */
static void print_value_arms(const char *cmd, const opts_t *o)
{
	static const char *const kinds[] = { "trace", "file", "dir", "none" };

	for (size_t k = 0; k < 4; k++) {
		int any = 0;

		for (size_t i = 0; i < o->n; i++) {
			const char *kind = value_kind(o->v[i].value);

			if (!kind || strcmp(kind, kinds[k]))
				continue;
			printf("%s'%s %s'", any++ ? "|" : "\t", cmd, o->v[i].name);
		}
		if (any)
			printf(") echo %s ;;\n", kinds[k]);
	}
}

static const char completion_body[] =
	"# A trace file: *.jsonl, *.jsonl.zst, *.jsonl.gz, and the directories\n"
	"# on the way to one.\n"
	"_memtrace_traces()\n"
	"{\n"
	"\tlocal f\n"
	"\tcompopt -o filenames 2>/dev/null\n"
	"\twhile IFS= read -r f; do\n"
	"\t\tcase $f in\n"
	"\t\t*.jsonl|*.jsonl.zst|*.jsonl.gz) COMPREPLY+=(\"$f\") ;;\n"
	"\t\t*) [ -d \"$f\" ] && COMPREPLY+=(\"$f\") ;;\n"
	"\t\tesac\n"
	"\tdone < <(compgen -f -- \"$1\")\n"
	"}\n"
	"\n"
	"# A value of KIND (_memtrace_value's answer) for the word $2.\n"
	"_memtrace_complete_value()\n"
	"{\n"
	"\tcase $1 in\n"
	"\ttrace) _memtrace_traces \"$2\" ;;\n"
	"\tfile) compopt -o filenames 2>/dev/null\n"
	"\t\tCOMPREPLY=($(compgen -f -- \"$2\")) ;;\n"
	"\tdir) compopt -o filenames 2>/dev/null\n"
	"\t\tCOMPREPLY=($(compgen -d -- \"$2\")) ;;\n"
	"\tesac\n"
	"}\n"
	"\n"
	"_memtrace()\n"
	"{\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]-} kind\n"
	"\n"
	"\tCOMPREPLY=()\n"
	"\tif [ \"$COMP_CWORD\" -le 1 ]; then\n"
	"\t\tCOMPREPLY=($(compgen -W \"$_memtrace_commands help version --help --version -V\" -- \"$cur\"))\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif [ \"$cmd\" = help ]; then\n"
	"\t\t[ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W \"$_memtrace_commands\" -- \"$cur\"))\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif kind=$(_memtrace_value \"$cmd\" \"${COMP_WORDS[COMP_CWORD-1]}\"); then\n"
	"\t\t_memtrace_complete_value \"$kind\" \"$cur\"\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tcase $cur in\n"
	"\t-*) COMPREPLY=($(compgen -W \"$(_memtrace_options \"$cmd\")\" -- \"$cur\")) ;;\n"
	"\t*) _memtrace_traces \"$cur\" ;;\n"
	"\tesac\n"
	"}\n"
	"complete -F _memtrace memtrace\n"
	"\n"
	"# memtrace-run: its options, then the program to run (after -- or the\n"
	"# first word that is no option), then that program's arguments.\n"
	"_memtrace_run()\n"
	"{\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} i kind\n"
	"\n"
	"\tCOMPREPLY=()\n"
	"\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	"\t\tcase ${COMP_WORDS[i]} in\n"
	"\t\t--) break ;;\n"
	"\t\t-*) _memtrace_value '' \"${COMP_WORDS[i]}\" >/dev/null && ((i++)) ;;\n"
	"\t\t*) break ;;\n"
	"\t\tesac\n"
	"\tdone\n"
	"\tif [ \"$i\" -lt \"$COMP_CWORD\" ]; then\n"
	"\t\t# The program, then its own arguments: files.\n"
	"\t\t[ \"${COMP_WORDS[i]}\" = -- ] && ((i++))\n"
	"\t\tif [ \"$i\" -eq \"$COMP_CWORD\" ]; then\n"
	"\t\t\tCOMPREPLY=($(compgen -c -- \"$cur\"))\n"
	"\t\telse\n"
	"\t\t\t_memtrace_complete_value file \"$cur\"\n"
	"\t\tfi\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif kind=$(_memtrace_value '' \"${COMP_WORDS[COMP_CWORD-1]}\"); then\n"
	"\t\t_memtrace_complete_value \"$kind\" \"$cur\"\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tcase $cur in\n"
	"\t-*) COMPREPLY=($(compgen -W \"$_memtrace_run_options\" -- \"$cur\")) ;;\n"
	"\t*) COMPREPLY=($(compgen -c -- \"$cur\")) ;;\n"
	"\tesac\n"
	"}\n"
	"complete -F _memtrace_run memtrace-run\n";

static void write_completion(const char *run_help)
{
	char *text = run_output(run_help);
	usage_t run = { 0 };
	opts_t run_opts = { 0 };

	parse_usage(&run, text);
	usage_options(&run, &run_opts);
	printf("# bash completion for memtrace and memtrace-run, made by mt-mkman\n"
	       "# from their --help texts (memtrace %s).\n\n", MT_VERSION);
	printf("_memtrace_commands='");
	for (size_t i = 0; i < mt_nuser_commands; i++)
		printf("%s%s", i ? " " : "", mt_commands[i]->name);
	printf("'\n_memtrace_run_options='");
	print_options(&run_opts);
	printf("'\n\n# A command's options.\n_memtrace_options()\n{\n\tcase $1 in\n");
	for (size_t i = 0; i < mt_nuser_commands; i++) {
		usage_t u = { 0 };
		opts_t o = { 0 };

		parse_usage(&u, mt_commands[i]->usage);
		usage_options(&u, &o);
		printf("\t%s) echo '", mt_commands[i]->name);
		print_options(&o);
		printf("' ;;\n");
	}
	printf("\tesac\n}\n\n"
	       "# How the value of option $2 of command $1 (memtrace-run's: '') is\n"
	       "# completed: trace, file, dir or none; status 1 for an option that\n"
	       "# takes no value.\n"
	       "_memtrace_value()\n{\n\tcase \"$1 $2\" in\n");
	for (size_t i = 0; i < mt_nuser_commands; i++) {
		usage_t u = { 0 };
		opts_t o = { 0 };

		parse_usage(&u, mt_commands[i]->usage);
		usage_options(&u, &o);
		print_value_arms(mt_commands[i]->name, &o);
	}
	/* memtrace-run's, "$1 $2" being " --opt". */
	print_value_arms("", &run_opts);
	printf("\t*) return 1 ;;\n\tesac\n}\n\n%s", completion_body);
	if (fflush(stdout) || ferror(stdout))
		die("cannot write the completion: %s", strerror(errno));
	free(text);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "pages")) {
		for (size_t i = 0; i < mt_nuser_commands; i++)
			write_command_page(argv[2], mt_commands[i]);
		for (int i = 3; i < argc; i++)
			write_file_page(argv[2], argv[i]);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "completion")) {
		write_completion(argv[2]);
		return 0;
	}
	fputs("usage: mt-mkman pages DIR SOURCE...\n"
	      "   or: mt-mkman completion RUNHELP\n", stderr);
	return 64;
}
