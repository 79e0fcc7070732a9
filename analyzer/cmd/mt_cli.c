/*
 * mt_cli: the command line's front door: `memtrace --help` (and `help`,
 * `help COMMAND`), the version (`version`, --version, -V), and the
 * dispatch of argv[1] to its command in the table (mt_commands).
 * It must never do a command's work, nor exit() or abort(): every path
 * returns a status.
 */
#include "../cmd/mt_cli.h"

#include <stdio.h>
#include <string.h>

#include "../cmd/mt_cmd.h"
#include "../cmd/mt_commands.h"
#include "../base/mt_error.h"

#ifndef MT_VERSION
#define MT_VERSION "0.1.0"
#endif

static const char usage_head[] =
	"usage: memtrace <command> [<args>]\n"
	"   or: memtrace help [<command>]\n"
	"   or: memtrace version\n"
	"\n"
	"Commands:\n";

static const char usage_tail[] =
	"\n"
	"Run 'memtrace help <command>' or 'memtrace <command> --help' for a\n"
	"command's options; 'memtrace version' (or --version, -V) prints the\n"
	"version.\n"
	"\n"
	"Exit status: 0 done, 1 caveated trace (check, --strict) or a failed\n"
	"verdict (gate, diff, repetitions), 2 not valid evidence,\n"
	"3 trace missing or unreadable, 4 out of memory, 64 usage error,\n"
	"73 an output cannot be written.\n";

const char *mt_cli_usage(char *buf, size_t cap)
{
	size_t len = snprintf(buf, cap, "%s", usage_head);

	for (size_t i = 0; i < mt_ncommands && len < cap; i++)
		len += snprintf(buf + len, cap - len, "  %-20s %s\n",
				mt_commands[i]->synopsis,
				mt_commands[i]->summary);
	if (len < cap)
		snprintf(buf + len, cap - len, "%s", usage_tail);
	return buf;
}

const char *mt_cli_version(void)
{
	return "memtrace " MT_VERSION "\n";
}

int mt_cli_main(int argc, char **argv)
{
	char usage[4096];
	const mt_cmd_t *cmd;

	mt_analysis_set_threads(0); /* the CPUs, unless --threads says */
	if (argc < 2)
		return mt_cmd_usage_error(mt_cli_usage(usage, sizeof(usage)), "%s",
					  "no command given");
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* `help COMMAND` is `COMMAND --help`, and nothing more. */
		if (argc > 3)
			return mt_cmd_usage_error(mt_cli_usage(usage, sizeof(usage)),
						  "unexpected argument '%s'", argv[3]);
		if (!(cmd = mt_commands_find(argv[2])))
			return mt_cmd_usage_error(mt_cli_usage(usage, sizeof(usage)),
						  "unknown command '%s'", argv[2]);
		fputs(cmd->usage, stdout);
		return MT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(mt_cli_usage(usage, sizeof(usage)), stdout);
		return MT_EXIT_OK;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version") ||
	    !strcmp(argv[1], "-V")) {
		fputs(mt_cli_version(), stdout);
		return MT_EXIT_OK;
	}
	if ((cmd = mt_commands_find(argv[1])))
		return cmd->run(argc - 1, argv + 1);
	return mt_cmd_usage_error(mt_cli_usage(usage, sizeof(usage)),
				  "unknown command '%s'", argv[1]);
}
