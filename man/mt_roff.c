/*
 * mt_roff: a usage text as a man page.  It must never let the text make a
 * request of roff: every '\\' and '-' is escaped, a line's leading '.'
 * or '\'' kept from being one.
 */
#include "mt_roff.h"

#include <ctype.h>
#include <string.h>

#ifndef MT_VERSION
#define MT_VERSION "0.1.0"
#endif

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
		size_t word = strcspn(t, " ,|[]()"), value = mt_usage_value_len(t);

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
static int is_verbatim(const mt_usage_block_t *b)
{
	return b->kind == MT_USAGE_ITEM && !b->nlines;
}

static void roff_block(FILE *out, const mt_usage_block_t *b, const mt_usage_block_t *prev)
{
	if (is_verbatim(b)) {
		if (!prev || !is_verbatim(prev))
			fputs(".PP\n.RS 4\n.nf\n", out);
		roff_line(out, b->term);
		return;
	}
	if (prev && is_verbatim(prev))
		fputs(".fi\n.RE\n", out);
	if (b->kind == MT_USAGE_ITEM) {
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
static int in_description(const mt_usage_block_t *b, int h)
{
	(void)h;
	return b->section < 0 && b->kind != MT_USAGE_HEADING && !mt_usage_is_option(b) &&
	       !mt_usage_is_exit(b);
}

static int in_options(const mt_usage_block_t *b, int h)
{
	(void)h;
	return mt_usage_is_option(b);
}

static int in_heading(const mt_usage_block_t *b, int h)
{
	return b->section == h && !mt_usage_is_exit(b);
}

static int in_exit(const mt_usage_block_t *b, int h)
{
	(void)h;
	return mt_usage_is_exit(b);
}

/* ".SH TITLE" and the blocks in(b, h) says are in it; nothing when none
 * is. */
static void write_section(FILE *out, const char *title, const mt_usage_t *u,
			  int (*in)(const mt_usage_block_t *b, int h), int h)
{
	const mt_usage_block_t *prev = NULL;

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

void mt_roff_page(FILE *out, const mt_roff_page_t *p, const mt_usage_t *u)
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

		if (u->blocks[h].kind != MT_USAGE_HEADING)
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

