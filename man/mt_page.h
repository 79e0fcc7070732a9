/*
 * mt_page: memtrace's man pages, each made from the text its reader
 * would otherwise get from --help: a command's usage in the table, or a
 * page source (man/NAME.SECTION.txt).
 *
 * A page source is "key: value" lines (name, section, summary, see-also,
 * help: a shell command whose output begins the text), a blank line, and
 * a usage text of its own, in which "@environment FILE" stands for the
 * table of FILE's "## Environment" and the paragraph after it (Markdown,
 * a variable a row), and "@plumbing" for a paragraph naming the table's
 * plumbing commands, or nothing when there is none.
 */
#ifndef MT_PAGE_H
#define MT_PAGE_H

#include "../analyzer/cmd/mt_cmd.h"

/* DIR/NAME.SECTION from the page source src. */
void mt_page_from_source(const char *dir, const char *src);

/* DIR/memtrace-NAME.1 from the command's usage and summary. */
void mt_page_of_command(const char *dir, const mt_cmd_t *cmd);

#endif
