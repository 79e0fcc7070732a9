/*
 * mt_complete: the bash completion, written from the usage texts.  It
 * must never complete an option the usage text does not name.
 */
#include "mt_complete.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_text.h"
#include "mt_usage.h"
#include "../analyzer/cmd/mt_commands.h"

#ifndef MT_VERSION
#define MT_VERSION "0.1.0"
#endif

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

static void print_options(const mt_usage_opts_t *o)
{
	for (size_t i = 0; i < o->n; i++)
		printf("%s%s", i ? " " : "", o->v[i].name);
}

/* The case arms "'CMD --opt'|...) echo KIND ;;" of the options of
 * command cmd that take a value. */
static void print_value_arms(const char *cmd, const mt_usage_opts_t *o)
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

void mt_complete_write(const char *run_help)
{
	char *text = mt_text_run(run_help);
	mt_usage_t run = { 0 };
	mt_usage_opts_t run_opts = { 0 };

	mt_usage_parse(&run, text);
	mt_usage_options(&run, &run_opts);
	printf("# bash completion for memtrace and memtrace-run, made by mt-mkman\n"
	       "# from their --help texts (memtrace %s).\n\n", MT_VERSION);
	printf("_memtrace_commands='");
	for (size_t i = 0; i < mt_nuser_commands; i++)
		printf("%s%s", i ? " " : "", mt_commands[i]->name);
	printf("'\n_memtrace_run_options='");
	print_options(&run_opts);
	printf("'\n\n# A command's options.\n_memtrace_options()\n{\n\tcase $1 in\n");
	for (size_t i = 0; i < mt_nuser_commands; i++) {
		mt_usage_t u = { 0 };
		mt_usage_opts_t o = { 0 };

		mt_usage_parse(&u, mt_commands[i]->usage);
		mt_usage_options(&u, &o);
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
		mt_usage_t u = { 0 };
		mt_usage_opts_t o = { 0 };

		mt_usage_parse(&u, mt_commands[i]->usage);
		mt_usage_options(&u, &o);
		print_value_arms(mt_commands[i]->name, &o);
	}
	/* memtrace-run's, "$1 $2" being " --opt". */
	print_value_arms("", &run_opts);
	printf("\t*) return 1 ;;\n\tesac\n}\n\n%s", completion_body);
	if (fflush(stdout) || ferror(stdout))
		mt_text_die("cannot write the completion: %s", strerror(errno));
	free(text);
}

