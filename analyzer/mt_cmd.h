/*
 * mt_cmd: what the commands for people (report, flamegraph, plot) share
 * with each other and with the rest of the CLI: the same messages and
 * exit statuses for usage errors, unreadable traces, traces that are not
 * evidence and outputs that cannot be written; the list of a heap's sites;
 * and durations and counts for a person (sizes are mt_units').
 *
 * Invariants: every function that prints returns the exit status the CLI
 * uses for what it printed (mt_error.h), so a command can return it as it
 * is; the appenders append a whole item or nothing (mt_buf).
 */
#ifndef MT_CMD_H
#define MT_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "mt_analysis.h"
#include "mt_buf.h"

/* "memtrace: <fmt with arg>", a blank line, the usage; returns 64. */
int mt_cmd_usage_error(const char *usage, const char *fmt, const char *arg);

/* "memtrace: out of memory"; returns 4. */
int mt_cmd_nomem(void);

/*
 * For a getopt_long() result c of ':' (the optstring begins with ':'),
 * "option '...' needs a value"; for '?' or anything else the command does
 * not know, "unknown option '...'": the usage error naming
 * argv[optind - 1].  Returns 64.
 */
int mt_cmd_bad_option(const char *usage, int c, char **argv);

/*
 * After the options: exactly one argument, the trace, into *path.
 * Returns -1 when so, else the usage error's status.
 */
int mt_cmd_one_trace(const char *usage, int argc, char **argv,
		     const char **path);

/*
 * Analyze path (observed when observe is not NULL).  Returns -1 when the
 * trace is valid evidence, else the exit status after saying why on
 * stderr: 3 unreadable, 2 not evidence, 4 out of memory.  Whatever it
 * returns, mt_analysis_release(a) must follow.
 */
int mt_cmd_load(mt_analysis_t *a, const char *path,
		mt_analysis_observer_t *observe, void *ctx);

/* Write b whole to path (replaced through a temporary file), or to
 * standard output when path is NULL.  Returns 0, 73 or 4. */
int mt_cmd_write(const char *path, const mt_buf_t *b);

/* The status once everything is written: 0, or 1 for a caveated trace
 * under --strict. */
int mt_cmd_done(const mt_analysis_t *a, int strict);

/*
 * A command for people, whole, as report, flamegraph and plot run: its
 * options, exactly one trace, the pass, the render into a buffer, the
 * write (standard output or -o), and the status (mt_cmd_done).  Every
 * such command has --strict, -o/--output and --help; its options table
 * lists them with the values below, and its own from MT_CMD_OPT_OWN.
 *
 *   own(ctx, c, arg)   an option that is not a shared one: -1 when taken,
 *                      else the status to return (a usage error)
 *   prepare(ctx)       optional, after the options and the trace, before
 *                      the pass: -1, or the status to return
 *   observe            optional: the pass's observer, given ctx
 *   render(ctx, ...)   MT_OK or MT_ENOMEM, on a trace that is evidence
 */
enum { MT_CMD_OPT_STRICT = 256, MT_CMD_OPT_HELP, MT_CMD_OPT_OWN };

struct option;

typedef struct {
	const char *usage;
	const struct option *options;
	int (*own)(void *ctx, int c, const char *arg);
	int (*prepare)(void *ctx);
	mt_analysis_observer_t *observe;
	int (*render)(void *ctx, const mt_analysis_t *a, const char *path,
		      mt_buf_t *out);
} mt_cmd_render_t;

/* Run cmd with argv; returns the command's exit status. */
int mt_cmd_render_run(const mt_cmd_render_t *cmd, void *ctx, int argc,
		      char **argv);

typedef struct {
	uint64_t stack_id;
	const mt_site_t *site;
	const mt_stack_t *stack; /* NULL for site 0, the allocations without a stack */
	uint64_t calls; /* mt_heap_site_calls(): allocations, resizes, remaps */
} mt_cmd_site_t;

/*
 * Every site that made a call (mt_heap_site_calls()) or holds bytes, site
 * 0 first when it did, then the stacks in the table's order.  *out is
 * mt_mem memory for the caller to free (NULL when there are none).  MT_OK
 * or MT_ENOMEM.
 */
int mt_cmd_sites(const mt_heap_t *h, mt_cmd_site_t **out, size_t *n);

/* "850 ns", "3.4 ms", "12.0 s": one decimal above nanoseconds. */
int mt_cmd_add_duration(mt_buf_t *b, uint64_t ns);

/* n and then one or the other word: "1 call", "2 calls". */
int mt_cmd_add_count(mt_buf_t *b, uint64_t n, const char *one,
		     const char *many);

#endif
