/*
 * mt_name: the names of the traces of a process tree, from the pattern in
 * MEMTRACE_OUTPUT.  %p is a process's pid and %% a literal %; the first
 * process of a tree may write a name without %p (the user's own), and
 * every process below it writes the pattern for descendants, which always
 * names the pid, so no process writes over another's trace.
 *
 * Pure functions on strings: no allocation, no system call, no state.
 * Every output goes into the caller's buffer, NUL-terminated, and a name
 * that does not fit is refused (-1), never cut.
 */
#ifndef MT_NAME_H
#define MT_NAME_H

#include <stddef.h>
#include <sys/types.h>

/* Expand %p (pid) and %% in pattern into out (cap bytes).  Returns 0, or
 * -1 when the name does not fit (out is then unspecified). */
int mt_name_expand(const char *pattern, pid_t pid, char *out, size_t cap);

/* 1 when pattern has a %p that mt_name_expand replaces ("%%p" is a
 * literal "%p"), else 0. */
int mt_name_has_pid(const char *pattern);

/* Copy name into out (cap bytes) with ins put before the extension of its
 * last component: out.jsonl and ".%p" give out.%p.jsonl; a name without
 * an extension (or a dot file) gets ins at its end; .jsonl.zst counts as
 * one extension.  Returns 0, or -1 when it does not fit. */
int mt_name_insert_before_ext(const char *name, const char *ins, char *out,
			      size_t cap);

/* The pattern of a process's descendants into out (cap bytes): pattern
 * itself when it names %p, else the name with ".%p" before its extension
 * (out.jsonl -> out.%p.jsonl), so a child never writes over its parent's
 * trace.  Returns 0, or -1 when that pattern does not fit: the caller
 * must not trace then, or its children would truncate its trace. */
int mt_name_child_pattern(const char *pattern, char *out, size_t cap);

#endif
