/*
 * mt_launch: how `memtrace record` and `memtrace run` start a command
 * under the collector: the preload and the collector found beside this
 * binary (or where MEMTRACE_PRELOAD and MEMTRACE_COLLECTOR say), and the
 * collector exec'd in record mode (collector/mt_server.h), which builds
 * the command's environment and becomes its parent.  It must never start
 * the command itself: the collector does, so that no collector is ever
 * the command's child.
 */
#ifndef MT_LAUNCH_H
#define MT_LAUNCH_H

#include <limits.h>

/* sysexits' EX_UNAVAILABLE: the preload or the collector is missing. */
#define MT_LAUNCH_UNAVAILABLE 69

typedef struct {
	char preload[PATH_MAX];   /* absolute and resolved */
	char collector[PATH_MAX];
} mt_launch_t;

/*
 * The preload into l->preload: MEMTRACE_PRELOAD when set, else
 * libmtpreload.so beside this binary or in ../lib, resolved, for
 * LD_PRELOAD to carry.  Returns -1, or 69 after saying why as prog
 * ("memtrace", "memtrace-run"): "PROG: cannot find the preload: no
 * 'PATH' (run make, or set MEMTRACE_PRELOAD)", or that its path holds a
 * space or a colon.
 */
int mt_launch_find_preload(mt_launch_t *l, const char *prog);

/* The collector into l->collector: MEMTRACE_COLLECTOR when set, else
 * memtrace-collector beside this binary or in ../libexec/memtrace.
 * Returns -1, or 69 after saying why. */
int mt_launch_find_collector(mt_launch_t *l, const char *prog);

/*
 * Exec l's collector in record mode: it runs cmd (NULL-terminated) with
 * the preload in LD_PRELOAD and its traces named by pattern (absolute,
 * MEMTRACE_OUTPUT's syntax), and exits with cmd's status.  Returns only
 * when the exec failed: 69, or 4, after saying why.
 */
int mt_launch_record(const mt_launch_t *l, const char *pattern,
		     char *const cmd[]);

#endif
