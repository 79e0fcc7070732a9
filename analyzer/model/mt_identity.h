/*
 * mt_identity: which program a trace came from, as its trace.start line
 * says (format.md section 2: pid, ppid, exe, argv, time_ns), kept by the
 * analysis's one pass (mt_analysis_t.identity) for every view to name the
 * program: report, html, tree, memtrace-run's lines and the exports.
 *
 * Every field is optional, as in the spec: an old trace or a hand-written
 * fixture has none, and each view then names the trace by its file as it
 * always did.  What is kept is bounded (a path, and MT_IDENTITY_ARGS_MAX
 * bytes of arguments), so a command line of any length costs the same.
 *
 * The text mt_identity_describe() writes is plain text, one line: the
 * renderers escape it for what they write (JSON, html).  It must never
 * allocate but through mt_buf, nor read anything but line 1.
 */
#ifndef MT_IDENTITY_H
#define MT_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include "../base/mt_buf.h"

/* The bytes of exe kept (a longer path is cut, on a character's start). */
#define MT_IDENTITY_EXE_MAX 4096
/* The bytes of argv kept, each argument with its NUL; the arguments past
 * them are dropped and counted as args_cut. */
#define MT_IDENTITY_ARGS_MAX 4096
/* The most bytes of the command mt_identity_describe() writes before it
 * cuts it with "...": a view's title, not the whole command line. */
#define MT_IDENTITY_TEXT_MAX 240

typedef struct {
	int has_pid, has_ppid, has_time;
	uint64_t pid, ppid, time_ns; /* time_ns: realtime at trace.start */
	size_t exe_len;              /* 0: no exe */
	char exe[MT_IDENTITY_EXE_MAX + 1];
	size_t argc;                 /* arguments kept in args */
	int args_cut;                /* some were dropped */
	size_t args_len;
	char args[MT_IDENTITY_ARGS_MAX]; /* argc NUL-terminated strings */
} mt_identity_t;

/* An identity with no field, what a trace without trace.start has. */
void mt_identity_init(mt_identity_t *id);

/*
 * The identity of the trace.start line at line[0..len) (not
 * NUL-terminated): the fields it has that are well formed (pid and ppid
 * positive integers, exe a string, argv an array of strings, time_ns an
 * integer); others are left unset, never an error, as readers ignore what
 * they do not know.  A NUL or a byte below 0x20 in a string is kept as
 * '?'.  MT_OK, or MT_ENOMEM when json-c cannot allocate.
 */
int mt_identity_read(mt_identity_t *id, const char *line, size_t len);

/* Whether the trace names its program (an exe or an argv). */
int mt_identity_known(const mt_identity_t *id);

/* Argument i (< id->argc), NUL-terminated. */
const char *mt_identity_arg(const mt_identity_t *id, size_t i);

enum {
	/* Append " (pid N, parent M)", with what is known of the two. */
	MT_IDENTITY_PIDS = 1 << 0,
};

/*
 * The program, "EXE ARG1 ARG2..." (argv[0] stands for the executable when
 * exe is absent), each argument shell-quoted when it holds a space or
 * another byte a shell would read, cut at MT_IDENTITY_TEXT_MAX bytes with
 * "...".  When the trace does not name its program, fallback (the trace's
 * file, as the caller names it) instead.  flags as above.  MT_OK or
 * MT_ENOMEM (out as it was).
 */
int mt_identity_describe(const mt_identity_t *id, const char *fallback,
			 unsigned flags, mt_buf_t *out);

#endif
