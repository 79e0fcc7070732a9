/*
 * mt_cli: the memtrace command line (format.md sections 4 to 7): finds
 * argv[1] in the table of commands (mt_commands.h) and runs it, or
 * answers --help, help [COMMAND] and the version itself; returns the exit
 * status.
 *
 * It is callable more than once in one process (the out-of-memory test
 * runs every command under each allocation failure), so it keeps no state
 * between calls and frees everything it allocates whatever the outcome.
 */
#ifndef MT_CLI_H
#define MT_CLI_H

#include <stddef.h>

int mt_cli_main(int argc, char **argv);

/* The program's usage, `memtrace --help`: a line a command of the table,
 * written into buf (no allocation: the out-of-memory sweep runs it too). */
const char *mt_cli_usage(char *buf, size_t cap);

/* What `memtrace version` prints: "memtrace X.Y.Z" and a newline. */
const char *mt_cli_version(void);

#endif
