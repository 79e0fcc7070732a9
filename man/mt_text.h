/*
 * mt_text: mt-mkman's strings, lines, files and errors.  Every function
 * either does its work or says why on stderr ("mt-mkman: ...") and exits
 * 1: it is a build tool, and a half-made page is worse than none.
 */
#ifndef MT_TEXT_H
#define MT_TEXT_H

#include <stddef.h>

/* "mt-mkman: <fmt ...>" on stderr, then exit(1). */
void mt_text_die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/* realloc, strndup and strdup that never return NULL. */
void *mt_text_realloc(void *p, size_t n);
char *mt_text_strndup(const char *s, size_t n);
char *mt_text_strdup(const char *s);

/* A growing string, always NUL-terminated once added to; { 0 } is
 * empty. */
typedef struct {
	char *s;
	size_t len, cap;
} mt_text_t;

void mt_text_add(mt_text_t *b, const char *s, size_t n);
void mt_text_adds(mt_text_t *b, const char *s);

/* The whole of a file; what the shell command cmd prints (it must exit
 * 0). */
char *mt_text_read_file(const char *path);
char *mt_text_run(const char *cmd);

/* text split in lines (copies, without their newlines), *n of them. */
char **mt_text_lines(const char *text, size_t *n);

/* Append line to the array *lines of *n. */
void mt_text_push_line(char ***lines, size_t *n, char *line);

/* The spaces line begins with. */
size_t mt_text_indent(const char *line);

#endif
