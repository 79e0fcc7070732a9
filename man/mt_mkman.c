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
 * mt_usage reads a usage text, mt_roff writes one as a page, mt_page
 * makes each page, mt_complete the completion.  It is a build tool: on
 * any error it says why and exits 1 (mt_text).
 */
#include <stdio.h>
#include <string.h>

#include "mt_complete.h"
#include "mt_page.h"
#include "../analyzer/cmd/mt_commands.h"

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "pages")) {
		for (size_t i = 0; i < mt_nuser_commands; i++)
			mt_page_of_command(argv[2], mt_commands[i]);
		for (int i = 3; i < argc; i++)
			mt_page_from_source(argv[2], argv[i]);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "completion")) {
		mt_complete_write(argv[2]);
		return 0;
	}
	fputs("usage: mt-mkman pages DIR SOURCE...\n"
	      "   or: mt-mkman completion RUNHELP\n", stderr);
	return 64;
}
