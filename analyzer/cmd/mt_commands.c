/*
 * mt_commands: the command table.  It must hold nothing but the list:
 * a command's options, usage and work are its own file's (cmd/NAME.c).
 */
#include "../cmd/mt_commands.h"

#include <string.h>

/* One line a command, in the order of `memtrace --help`: the ones a
 * user runs, each with its page, memtrace-NAME(1), and its completion. */
#define MT_COMMANDS(X)   \
	X(record)        \
	X(check)         \
	X(summary)       \
	X(tree)          \
	X(capture)       \
	X(repetition)    \
	X(gate)          \
	X(diff)          \
	X(repetitions)   \
	X(report)        \
	X(flamegraph)    \
	X(plot)          \
	X(html)          \
	X(export)        \
	X(top)

#define DECLARE(name) extern const mt_cmd_t mt_cmd_##name;
MT_COMMANDS(DECLARE)
extern const mt_cmd_t mt_cmd_run;

#define ENTRY(name) &mt_cmd_##name,
const mt_cmd_t *const mt_commands[] = { MT_COMMANDS(ENTRY) };
const size_t mt_ncommands = sizeof(mt_commands) / sizeof(mt_commands[0]);

const size_t mt_nuser_commands = sizeof(mt_commands) / sizeof(mt_commands[0]);

const mt_cmd_t *mt_commands_find(const char *name)
{
	/* `memtrace run` is memtrace-run's: its usage, page and
	 * completion are memtrace-run's, so the table leaves it out. */
	if (!strcmp(name, mt_cmd_run.name))
		return &mt_cmd_run;
	for (size_t i = 0; i < mt_ncommands; i++)
		if (!strcmp(mt_commands[i]->name, name))
			return mt_commands[i];
	return NULL;
}
