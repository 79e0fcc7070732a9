/*
 * mt_text: what mt-mkman does with text: a growing string, lines, the
 * whole of a file or of a command's output, and its one way to fail (a
 * message and exit 1: a build tool stops at the first error).  It must
 * never return a NULL it was asked to allocate.
 */
#include "mt_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mt_text_die(const char *fmt, ...)
{
	va_list ap;

	fputs("mt-mkman: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void *mt_text_realloc(void *p, size_t n)
{
	if (!(p = realloc(p, n ? n : 1)))
		mt_text_die("out of memory");
	return p;
}

char *mt_text_strndup(const char *s, size_t n)
{
	char *d = mt_text_realloc(NULL, n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *mt_text_strdup(const char *s)
{
	return mt_text_strndup(s, strlen(s));
}

void mt_text_add(mt_text_t *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = mt_text_realloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void mt_text_adds(mt_text_t *b, const char *s)
{
	mt_text_add(b, s, strlen(s));
}

static char *read_all(FILE *f, const char *what)
{
	mt_text_t b = { 0 };
	char chunk[4096];
	size_t n;

	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		mt_text_add(&b, chunk, n);
	if (ferror(f))
		mt_text_die("cannot read %s: %s", what, strerror(errno));
	mt_text_add(&b, "", 0);
	return b.s;
}

char *mt_text_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;

	if (!f)
		mt_text_die("cannot open '%s': %s", path, strerror(errno));
	s = read_all(f, path);
	fclose(f);
	return s;
}

/* What the shell command cmd prints; it must exit 0. */
char *mt_text_run(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	char *s;

	if (!f)
		mt_text_die("cannot run '%s': %s", cmd, strerror(errno));
	s = read_all(f, cmd);
	if (pclose(f) != 0)
		mt_text_die("'%s' failed", cmd);
	return s;
}

void mt_text_push_line(char ***lines, size_t *n, char *line)
{
	*lines = mt_text_realloc(*lines, (*n + 1) * sizeof(**lines));
	(*lines)[(*n)++] = line;
}

size_t mt_text_indent(const char *line)
{
	size_t i = 0;

	while (line[i] == ' ')
		i++;
	return i;
}

/* The text split in lines (copies), without their newlines. */
char **mt_text_lines(const char *text, size_t *n)
{
	char **lines = NULL;

	*n = 0;
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);

		mt_text_push_line(&lines, n, mt_text_strndup(text, len));
		text += len + (nl != NULL);
	}
	return lines;
}

