/*
 * mt_usage: a usage text read into blocks, and the options it names.  It
 * must never guess: a line that is no synopsis, item or heading is a
 * paragraph.
 */
#include "mt_usage.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "mt_text.h"

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

static mt_usage_block_t *new_block(mt_usage_t *u, mt_usage_kind_t kind, int section)
{
	mt_usage_block_t *b;

	u->blocks = mt_text_realloc(u->blocks, (u->nblocks + 1) * sizeof(*u->blocks));
	b = &u->blocks[u->nblocks++];
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->section = section;
	return b;
}

/* Parse text into u, appending to what u holds (a page source's body
 * after its help). */
void mt_usage_parse(mt_usage_t *u, const char *text)
{
	size_t n, i = 0;
	char **lines = mt_text_lines(text, &n);
	int section = -1;

	while (i < n && !lines[i][0])
		i++;
	if (i < n && !strncmp(lines[i], "usage: ", 7)) {
		const char *form = lines[i] + 7;
		size_t plen = strcspn(form, " ");
		mt_text_t f = { 0 };

		free(u->prog);
		u->prog = mt_text_strndup(form, plen);
		mt_text_adds(&f, form);
		for (i++; i < n && lines[i][0]; i++) {
			const char *l = lines[i], *s = l + mt_text_indent(l);

			if (!strncmp(l, "   or: ", 7) ||
			    (!strncmp(s, u->prog, plen) &&
			     (s[plen] == ' ' || !s[plen]))) {
				mt_text_push_line(&u->forms, &u->nforms, f.s);
				memset(&f, 0, sizeof(f));
				mt_text_adds(&f, strncmp(l, "   or: ", 7) ? s : l + 7);
				continue;
			}
			mt_text_adds(&f, "\n");
			mt_text_adds(&f, mt_text_indent(l) >= 7 ? l + 7 : s);
		}
		mt_text_push_line(&u->forms, &u->nforms, f.s);
	}
	while (i < n) {
		const char *l = lines[i];
		size_t ind = mt_text_indent(l);
		mt_usage_block_t *b;

		if (!l[0]) {
			i++;
		} else if (ind == 0) {
			if (is_heading(l) && (i + 1 == n || !lines[i + 1][0] ||
					      mt_text_indent(lines[i + 1]) > 0)) {
				b = new_block(u, MT_USAGE_HEADING, -1);
				b->term = mt_text_strndup(l, strlen(l) - 1);
				section = (int)(b - u->blocks);
				i++;
				continue;
			}
			b = new_block(u, MT_USAGE_PARA, section);
			while (i < n && lines[i][0] && mt_text_indent(lines[i]) == 0)
				mt_text_push_line(&b->lines, &b->nlines, mt_text_strdup(lines[i++]));
		} else if (ind == 2) {
			const char *term = l + 2, *gap = strstr(term, "  ");
			size_t tlen = gap ? (size_t)(gap - term) : strlen(term);

			b = new_block(u, MT_USAGE_ITEM, section);
			b->term = mt_text_strndup(term, tlen);
			if (gap)
				mt_text_push_line(&b->lines, &b->nlines,
					  mt_text_strdup(gap + mt_text_indent(gap)));
			for (i++; i < n && mt_text_indent(lines[i]) > 2; i++)
				mt_text_push_line(&b->lines, &b->nlines,
					  mt_text_strdup(lines[i] + mt_text_indent(lines[i])));
		} else {
			/* Lines indented otherwise, with no item above: a
			 * paragraph, of one line at least. */
			b = new_block(u, MT_USAGE_PARA, section);
			do {
				mt_text_push_line(&b->lines, &b->nlines,
					  mt_text_strdup(lines[i] + mt_text_indent(lines[i])));
				i++;
			} while (i < n && mt_text_indent(lines[i]) > 2);
		}
	}
	for (i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

int mt_usage_is_option(const mt_usage_block_t *b)
{
	return b->kind == MT_USAGE_ITEM && b->term[0] == '-' && b->section < 0;
}

int mt_usage_is_exit(const mt_usage_block_t *b)
{
	return b->kind == MT_USAGE_PARA && !strncmp(b->lines[0], "Exit", 4);
}

static void add_opt(mt_usage_opts_t *o, const char *name, size_t len, const char *value,
		    size_t vlen)
{
	for (size_t i = 0; i < o->n; i++)
		if (strlen(o->v[i].name) == len && !memcmp(o->v[i].name, name, len)) {
			if (!o->v[i].value && vlen)
				o->v[i].value = mt_text_strndup(value, vlen);
			return;
		}
	o->v = mt_text_realloc(o->v, (o->n + 1) * sizeof(*o->v));
	o->v[o->n].name = mt_text_strndup(name, len);
	o->v[o->n].value = vlen ? mt_text_strndup(value, vlen) : NULL;
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
size_t mt_usage_value_len(const char *s)
{
	size_t len = 0;

	while (isupper((unsigned char)s[len]) || isdigit((unsigned char)s[len]))
		len++;
	return len && isupper((unsigned char)s[0]) ? len : 0;
}

/* The options of the synopsis (each form) and of the option items. */
void mt_usage_options(const mt_usage_t *u, mt_usage_opts_t *o)
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
			if (p[len] == ' ' && mt_usage_value_len(p + len + 1))
				add_opt(o, p, len, p + len + 1,
					mt_usage_value_len(p + len + 1));
			else
				add_opt(o, p, len, NULL, 0);
			p += len;
		}
	}
	for (size_t i = 0; i < u->nblocks; i++) {
		const mt_usage_block_t *b = &u->blocks[i];
		const char *p, *value;
		size_t vlen;

		if (!mt_usage_is_option(b))
			continue;
		/* "-o, --output FILE": the value is the last word's. */
		value = strrchr(b->term, ' ');
		vlen = value ? mt_usage_value_len(value + 1) : 0;
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

