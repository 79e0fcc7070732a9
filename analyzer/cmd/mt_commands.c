/*
 * mt_commands: the command table.  It must hold nothing but the list:
 * a command's options, usage and work are its own file's (cmd/NAME.c).
 */
#include "../cmd/mt_commands.h"

#include <string.h>

/* One line a command, in the order of `memtrace --help`: first the ones
 * a user runs (each has its page, memtrace-NAME(1), and its completion),
 * then MT_PLUMBING, the steps of memtrace-run's script. */
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

#define MT_PLUMBING(X)   \
	X(run_line)      \
	X(run_table)     \
	X(oom_fail)      \
	X(run_options)   \
	X(run_dir)

#define DECLARE(name) extern const mt_cmd_t mt_cmd_##name;
MT_COMMANDS(DECLARE)
MT_PLUMBING(DECLARE)

#define ENTRY(name) &mt_cmd_##name,
const mt_cmd_t *const mt_commands[] = { MT_COMMANDS(ENTRY) MT_PLUMBING(ENTRY) };
const size_t mt_ncommands = sizeof(mt_commands) / sizeof(mt_commands[0]);

#define ONE(name) +1
const size_t mt_nuser_commands = 0 MT_COMMANDS(ONE);

const mt_cmd_t *mt_commands_find(const char *name)
{
	for (size_t i = 0; i < mt_ncommands; i++)
		if (!strcmp(mt_commands[i]->name, name))
			return mt_commands[i];
	return NULL;
}
