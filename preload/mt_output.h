/*
 * mt_output: where the traces of a process tree go (docs/preload-use.md,
 * "Where traces go").  The first traced process of a tree turns
 * MEMTRACE_OUTPUT into an absolute pattern, once, and hands that to every
 * process below it, so that a child that starts in another directory
 * (`bash -c 'cd sub && ls'`) still writes beside the first:
 *
 * - an absolute value is the pattern as it is;
 * - a relative one is resolved against the current directory, the one
 *   the first process starts in ('%' of the directory written "%%");
 * - unset (or empty), the first process makes a directory of its own in
 *   the current directory, memtrace.PROG.PID (PROG its program's base
 *   name, PID its pid; memtrace.PROG.PID.1 ... .999 when that is taken,
 *   never an existing one), mode 0700, and the pattern is
 *   DIR/memtrace.%p.jsonl.zst: one directory per traced command, holding
 *   the trace of every process of its tree.
 *
 * It must never allocate or keep a descriptor: the system calls (getcwd,
 * mkdir, rmdir) are raw ones.  A failure says so once on stderr
 * ("memtrace: ...; the program runs untraced"); errno may change.
 */
#ifndef MT_OUTPUT_H
#define MT_OUTPUT_H

#include <stddef.h>
#include <sys/types.h>

/* The default trace name inside the directory of an unset MEMTRACE_OUTPUT
 * (format.md, section 2.1). */
#define MT_OUTPUT_DEFAULT_NAME "memtrace.%p.jsonl.zst"

/* Tries of the default directory's name: memtrace.PROG.PID, then .1 to
 * .999 after it. */
#define MT_OUTPUT_DIR_TRIES 1000

/* The longest PROG kept in a directory's name. */
#define MT_OUTPUT_PROG_MAX 64

/*
 * The absolute pattern of the traces from value (MEMTRACE_OUTPUT's value;
 * NULL or empty: unset) into out (cap bytes), as described above; prog is
 * the program's name (a path or base name; NULL or empty: "program", and
 * any byte but [A-Za-z0-9._+-] becomes '_'), pid the process's.  For an
 * unset value, the directory made goes into dir (dcap bytes; "" when none
 * was made), for mt_output_unmake() when tracing cannot start.
 * Returns 0, or -1 after saying why.
 */
int mt_output_pattern(const char *value, const char *prog, pid_t pid, char *out,
		      size_t cap, char *dir, size_t dcap);

/* Remove dir (made by mt_output_pattern) when it is empty; "" is a no-op. */
void mt_output_unmake(const char *dir);

#endif
