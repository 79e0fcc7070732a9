/*
 * mt_page: a man page from a command of the table or from a page source.
 * It must never write a page from anything but those texts and the files
 * they name.
 */
#include "mt_page.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_roff.h"
#include "mt_text.h"
#include "mt_usage.h"
#include "../analyzer/cmd/mt_commands.h"

/*
 * The Markdown of doc (a file in folder dir, "docs/") as a usage text's:
 * ** dropped, \| as |, a link as its text, followed by the file it names
 * from the top of the tree ("docs/ci-gates.md") unless it is within the
 * page; and "below, " (a section further on) as "doc, ".
 */
static void md_inline(mt_text_t *b, const char *doc, const char *dir, const char *s,
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
						mt_text_adds(b, text ? " (" : "");
						mt_text_adds(b, dir);
						mt_text_add(b, t, file);
						mt_text_adds(b, text ? ")" : "");
					}
					i = (size_t)(end - s);
					continue;
				}
			}
		}
		if (!strncmp(s + i, "below, ", 7) && i + 7 <= n) {
			mt_text_adds(b, doc);
			mt_text_adds(b, ", ");
			i += 6;
			continue;
		}
		if (s[i] == '*' && i + 1 < n && s[i + 1] == '*') {
			i++;
			continue;
		}
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == '|')
			i++;
		mt_text_add(b, s + i, 1);
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
static void expand_environment(mt_text_t *out, const char *path)
{
	char *md = mt_text_read_file(path), *dir = mt_text_strdup(path), *slash;
	size_t n, i;
	char **lines = mt_text_lines(md, &n);
	int rows = 0;

	slash = strrchr(dir, '/');
	slash = slash ? slash + 1 : dir;
	*slash = '\0';
	for (i = 0; i < n && strcmp(lines[i], "## Environment"); i++)
		;
	if (i == n)
		mt_text_die("'%s' has no '## Environment'", path);
	for (i++; i < n && lines[i][0] != '|'; i++)
		;
	for (; i < n && lines[i][0] == '|'; i++) {
		const char *cell[3];
		size_t len[3];

		if (md_cells(lines[i], cell, len, 3) != 3)
			mt_text_die("'%s': a row of its environment table has not 3 cells", path);
		if (!strncmp(cell[0], "variable", len[0]) || cell[0][0] == '-')
			continue;
		mt_text_adds(out, "  ");
		/* The variable without its backquotes: the term is bold. */
		mt_text_add(out, cell[0] + (cell[0][0] == '`'),
			len[0] - 2 * (cell[0][0] == '`'));
		mt_text_adds(out, "\n      ");
		md_inline(out, path, dir, cell[2], len[2]);
		if (strncmp(cell[1], "unset", len[1])) {
			mt_text_adds(out, " (default ");
			md_inline(out, path, dir, cell[1], len[1]);
			mt_text_adds(out, ")");
		}
		mt_text_adds(out, "\n");
		rows++;
	}
	if (!rows)
		mt_text_die("'%s': no environment table", path);
	for (; i < n && !lines[i][0]; i++)
		;
	mt_text_adds(out, "\n");
	for (; i < n && lines[i][0]; i++) {
		md_inline(out, path, dir, lines[i], strlen(lines[i]));
		mt_text_adds(out, "\n");
	}
	for (i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	free(dir);
	free(md);
}

/* "@plumbing": the commands after the user's, or nothing. */
static void expand_plumbing(mt_text_t *out)
{
	if (mt_ncommands == mt_nuser_commands)
		return;
	for (size_t i = mt_nuser_commands; i < mt_ncommands; i++) {
		mt_text_adds(out, i == mt_nuser_commands ? "" :
			      i + 1 == mt_ncommands ? " and " : ", ");
		mt_text_adds(out, "`");
		mt_text_adds(out, mt_commands[i]->name);
		mt_text_adds(out, "`");
	}
	mt_text_adds(out, "\nare steps of memtrace-run(1)'s script, with no page of their\n"
		      "own: `memtrace help COMMAND` prints each one's usage.\n");
}

static const char *header(char **lines, size_t n, const char *key, int need,
			  const char *path)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < n && lines[i][0]; i++)
		if (!strncmp(lines[i], key, klen) && lines[i][klen] == ':')
			return lines[i] + klen + 1 + mt_text_indent(lines[i] + klen + 1);
	if (need)
		mt_text_die("'%s' has no '%s:' line", path, key);
	return NULL;
}

void mt_page_from_source(const char *dir, const char *src)
{
	char *text = mt_text_read_file(src);
	size_t n, i;
	char **lines = mt_text_lines(text, &n);
	mt_roff_page_t p = {
		.name = header(lines, n, "name", 1, src),
		.section = header(lines, n, "section", 1, src),
		.summary = header(lines, n, "summary", 1, src),
		.see_also = header(lines, n, "see-also", 0, src),
	};
	const char *help = header(lines, n, "help", 0, src);
	mt_usage_t u = { .prog = mt_text_strdup(p.name) };
	mt_text_t body = { 0 };
	char *path;
	FILE *out;

	if (help) {
		char *h = mt_text_run(help);

		mt_usage_parse(&u, h);
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
			mt_text_adds(&body, lines[i]);
			mt_text_adds(&body, "\n");
		}
	}
	mt_text_add(&body, "", 0);
	mt_usage_parse(&u, body.s);
	/* memtrace(1) sends its reader on to each command's page (once:
	 * memtrace-run(1) may be a command's and its own see-also's). */
	if (!strcmp(p.name, "memtrace")) {
		mt_text_t see = { 0 };

		mt_text_adds(&see, p.see_also ? p.see_also : "");
		for (i = 0; i < mt_nuser_commands; i++) {
			char page[128];

			snprintf(page, sizeof(page), "memtrace-%s(1)",
				 mt_commands[i]->name);
			if (see.len && strstr(see.s, page))
				continue;
			mt_text_adds(&see, see.len ? ", " : "");
			mt_text_adds(&see, page);
		}
		p.see_also = see.s;
	}
	if (asprintf(&path, "%s/%s.%s", dir, p.name, p.section) < 0)
		mt_text_die("out of memory");
	if (!(out = fopen(path, "w")))
		mt_text_die("cannot open '%s': %s", path, strerror(errno));
	mt_roff_page(out, &p, &u);
	if (fclose(out))
		mt_text_die("cannot write '%s': %s", path, strerror(errno));
	free(path);
}

void mt_page_of_command(const char *dir, const mt_cmd_t *cmd)
{
	char *path, *name;
	mt_usage_t u = { 0 };
	mt_roff_page_t p = { .section = "1", .summary = cmd->summary,
		     .see_also = "memtrace(1)" };
	FILE *out;

	if (asprintf(&name, "memtrace-%s", cmd->name) < 0 ||
	    asprintf(&path, "%s/%s.1", dir, name) < 0)
		mt_text_die("out of memory");
	p.name = name;
	mt_usage_parse(&u, cmd->usage);
	if (!(out = fopen(path, "w")))
		mt_text_die("cannot open '%s': %s", path, strerror(errno));
	mt_roff_page(out, &p, &u);
	if (fclose(out))
		mt_text_die("cannot write '%s': %s", path, strerror(errno));
	free(path);
	free(name);
}

