/*
 * mt_commands: the table of memtrace's commands, in the order
 * `memtrace --help` lists them.  A command is one file, cmd/NAME.c,
 * defining `const mt_cmd_t mt_cmd_NAME`, and one line in MT_COMMANDS
 * (mt_commands.c).
 */
#ifndef MT_COMMANDS_H
#define MT_COMMANDS_H

#include <stddef.h>

#include "../cmd/mt_cmd.h"

/* Every command, mt_ncommands of them.  The first mt_nuser_commands are
 * the ones a user runs, with a man page and a completion each; the rest
 * are plumbing for memtrace-run's script, documented by --help alone. */
extern const mt_cmd_t *const mt_commands[];
extern const size_t mt_ncommands;
extern const size_t mt_nuser_commands;

/* The command named name, or NULL. */
const mt_cmd_t *mt_commands_find(const char *name);

#endif
