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

/* The commands of `memtrace --help`, mt_ncommands of them, each with a
 * man page and a completion; mt_nuser_commands is the same count.  One
 * more, `run`, is found by name alone: memtrace-run (scripts/) execs it,
 * and its usage, page and completion are memtrace-run's. */
extern const mt_cmd_t *const mt_commands[];
extern const size_t mt_ncommands;
extern const size_t mt_nuser_commands;

/* The command named name (run too), or NULL. */
const mt_cmd_t *mt_commands_find(const char *name);

#endif
