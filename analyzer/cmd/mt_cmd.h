/*
 * mt_cmd: the command framework, in the manner of git's builtin/.  A
 * command is one file, analyzer/cmd/NAME.c, that defines an mt_cmd_t (its
 * name, its line in `memtrace --help`, its usage and its run function) and
 * one line in the table of mt_commands.c.  What every command shares lives
 * here, so that it is written once:
 *
 *   - the option parser (mt_cmd_parse()): getopt_long over the command's
 *     table, --help, and the usage errors "unknown option '...'",
 *     "option '...' needs a value", "option '...' does not apply here",
 *     "unexpected argument '...'", "missing TRACE argument";
 *   - the messages and their exit statuses (mt_error.h): a usage error (64),
 *     out of memory (4), an input that cannot be read (3) or is not
 *     evidence (2), an output that cannot be written (73);
 *   - the driver of the commands that read one trace, judge it and render
 *     it (mt_cmd_render_run()).
 *
 * Invariants: every function that prints returns the exit status the CLI
 * uses for what it printed, so a command can return it as it is; the ones
 * that may end a command return -1 to go on.  Nothing here keeps state
 * between calls (getopt is restarted on every parse) or allocates before
 * the command line is known good.
 */
#ifndef MT_CMD_H
#define MT_CMD_H

#include <getopt.h>

#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"
#include "../gates/mt_profile.h"
#include "../rows/mt_rows.h"
#include "../gates/mt_suppress.h"
#include "../gates/mt_ci.h"

/* A command of the table (mt_commands.h). */
typedef struct {
	const char *name;     /* argv[1]: "check" */
	const char *synopsis; /* left column of `memtrace --help`: "check TRACE" */
	const char *summary;  /* its right column */
	const char *usage;    /* the command's --help, and its usage errors' */
	/* argv[0] is the command's name; returns the exit status. */
	int (*run)(int argc, char **argv);
} mt_cmd_t;

/*
 * Option codes (struct option's val).  --help is MT_CMD_OPT_HELP in every
 * table; -o/--output is 'o'.  The codes up to MT_CMD_OPT_OWN are shared
 * by the commands that take the option; a command's options of its own
 * count from MT_CMD_OPT_OWN.
 */
enum {
	MT_CMD_OPT_STRICT = 256,
	MT_CMD_OPT_HELP,
	MT_CMD_OPT_TOP,
	MT_CMD_OPT_ZERO,        /* --include-zero-live */
	MT_CMD_OPT_CAPTURE,
	MT_CMD_OPT_SUMMARY,
	MT_CMD_OPT_EXIT_CODE,
	MT_CMD_OPT_APPEND,
	MT_CMD_OPT_OUT,
	MT_CMD_OPT_INDEX,
	MT_CMD_OPT_CHILD,           /* --child TRACE */
	MT_CMD_OPT_SUPPRESSIONS,    /* --suppressions FILE */
	MT_CMD_OPT_NO_DEFAULT_SUPP, /* --no-default-suppressions */
	MT_CMD_OPT_ALLOCATOR,       /* --allocator NAME */
	MT_CMD_OPT_JUNIT,           /* --junit FILE */
	MT_CMD_OPT_FORMAT,          /* --format FORMAT */
	MT_CMD_OPT_THREADS,         /* --threads N, every command's */
	MT_CMD_OPT_OWN,
};

/*
 * The options of the row commands (check, summary, tree, capture,
 * repetition), in one table: each of them knows them all, so one given to
 * the wrong command is "option '--top' does not apply here" rather than
 * unknown.  Each command's option callback takes its own and answers
 * MT_CMD_NOT_HERE for the rest.
 */
extern const struct option mt_cmd_row_options[];

/* The row options, as bits of what a command takes
 * (mt_cmd_row_opts_t's takes). */
enum {
	MT_CMD_ROW_TOP = 1 << 0,        /* --top N */
	MT_CMD_ROW_ZERO = 1 << 1,       /* --include-zero-live */
	MT_CMD_ROW_STRICT = 1 << 2,     /* --strict */
	MT_CMD_ROW_OUTPUT = 1 << 3,     /* -o, --output FILE */
	MT_CMD_ROW_CAPTURE = 1 << 4,    /* --capture TRACE */
	MT_CMD_ROW_SUMMARY = 1 << 5,    /* --summary FILE */
	MT_CMD_ROW_EXIT_CODE = 1 << 6,  /* --exit-code C */
	MT_CMD_ROW_APPEND = 1 << 7,     /* --append FILE */
	MT_CMD_ROW_OUT = 1 << 8,        /* --out FILE */
	MT_CMD_ROW_INDEX = 1 << 9,      /* --index I */
	MT_CMD_ROW_CHILD = 1 << 10,     /* --child TRACE, again and again */
};

/* What the row commands' options say, as mt_cmd_row_option() reads
 * them; usage and takes (MT_CMD_ROW_*) are the command's. */
typedef struct {
	const char *usage;
	unsigned takes;
	uint64_t top; /* --top: 10 unless given */
	int include_zero_live, strict;
	const char *output, *capture, *summary, *append, *out;
	int64_t exit_code;
	uint64_t index;
	int have_index;
	/* --child TRACE, in the order given (mt_mem memory: release with
	 * mt_cmd_row_release()). */
	char **children;
	size_t nchildren;
} mt_cmd_row_opts_t;

#define MT_CMD_ROW_OPTS_INIT(u, t) { .usage = (u), .takes = (t), .top = 10 }

/* The option callback (mt_cmd_spec_t's) of every row command, ctx its
 * mt_cmd_row_opts_t: option c into it when the command takes it, else
 * MT_CMD_NOT_HERE; -1, or the usage error's status for a bad number. */
int mt_cmd_row_option(void *ctx, int c, const char *arg);

/*
 * mt_cmd_parse() for a row command: mt_cmd_row_options (and -o) into o,
 * those o->takes leaves out "does not apply here", then the argument
 * named arg (NULL: none), again and again when more (TRACE...).
 */
int mt_cmd_row_parse(mt_cmd_row_opts_t *o, const char *arg, int more,
		     int argc, char **argv, int *first);

/* Release what parsing o kept (its children), whatever parsing returned. */
void mt_cmd_row_release(mt_cmd_row_opts_t *o);

/*
 * The suppression options of report, gate and diff (mt_suppress): each
 * puts MT_CMD_SUPPRESS_OPTIONS in its table and its usage the lines of
 * MT_CMD_SUPPRESS_USAGE.
 */
typedef struct {
	const char *file;  /* --suppressions FILE, or NULL */
	int no_defaults;   /* --no-default-suppressions */
} mt_cmd_suppress_opts_t;

#define MT_CMD_SUPPRESS_OPTIONS                                               \
	{ "suppressions", required_argument, NULL, MT_CMD_OPT_SUPPRESSIONS }, \
	{ "no-default-suppressions", no_argument, NULL, MT_CMD_OPT_NO_DEFAULT_SUPP }

#define MT_CMD_SUPPRESS_USAGE                                                  \
	"  --suppressions FILE  leave out of the live figures the sites FILE's\n" \
	"                       leak:PATTERN lines match (LSan's format)\n"       \
	"  --no-default-suppressions\n"                                           \
	"                       count glibc's own runtime allocations (thread\n"  \
	"                       TLS, stdio buffers) as live, too\n"

/* Take option c into o: -1 when it is a suppression option, else
 * MT_CMD_NOT_HERE. */
int mt_cmd_suppress_option(mt_cmd_suppress_opts_t *o, int c, const char *arg);

/*
 * Make the list o asks for into s (empty: MT_SUPPRESS_INIT): the default
 * patterns unless --no-default-suppressions, then FILE's.  Returns -1, or
 * the status after saying why: 3 FILE cannot be read, 64 (with usage) a
 * line of it is not KIND:PATTERN, 4 out of memory.  mt_suppress_release(s)
 * must follow, whatever it returns.
 */
int mt_cmd_suppress_load(mt_suppress_t *s, const mt_cmd_suppress_opts_t *o,
			 const char *usage);

/*
 * The CI outputs of gate and diff (mt_ci): --junit FILE writes the checks
 * as JUnit XML to FILE besides the report, --format github prints GitHub
 * Actions workflow commands instead of the text.  Each puts
 * MT_CMD_CI_OPTIONS in its table and MT_CMD_CI_USAGE in its usage.
 */
typedef enum {
	MT_CMD_FORMAT_TEXT,
	MT_CMD_FORMAT_GITHUB,
} mt_cmd_format_t;

typedef struct {
	const char *junit;      /* --junit FILE, or NULL */
	mt_cmd_format_t format; /* --format */
	uint64_t start_ns;      /* set by mt_cmd_ci_start() */
} mt_cmd_ci_opts_t;

#define MT_CMD_CI_OPTIONS                                          \
	{ "junit", required_argument, NULL, MT_CMD_OPT_JUNIT },    \
	{ "format", required_argument, NULL, MT_CMD_OPT_FORMAT }

#define MT_CMD_CI_USAGE                                                        \
	"  --junit FILE         also write the checks to FILE as JUnit XML (one\n" \
	"                       test case each), whole or not at all\n"          \
	"  --format FORMAT      text (the default), or github: GitHub Actions\n" \
	"                       workflow commands (::error:: per failed check)\n"

/* Note when the command began, for the JUnit suite's time. */
void mt_cmd_ci_start(mt_cmd_ci_opts_t *o);

/* Take option c into o: -1 when it is a CI option, the usage error's
 * status for a FORMAT that is neither text nor github, else
 * MT_CMD_NOT_HERE. */
int mt_cmd_ci_option(mt_cmd_ci_opts_t *o, const char *usage, int c,
		     const char *arg);

/* Whether the command must fill an mt_ci_t: --junit or --format github. */
int mt_cmd_ci_wanted(const mt_cmd_ci_opts_t *o);

/* With --junit, write c's JUnit XML to FILE through a temporary file and
 * rename(2) (mt_output_replace()), c's time the command's so far.
 * Returns 0 (also without --junit), or 73 ("cannot write 'FILE'") or 4
 * after saying so; FILE is then as it was. */
int mt_cmd_ci_write(const mt_cmd_ci_opts_t *o, mt_ci_t *c);

/* An option callback's answer for an option the command knows of but
 * does not take. */
#define MT_CMD_NOT_HERE (-2)

/* How a command reads its command line. */
typedef struct {
	const char *usage;
	const char *shorts;            /* getopt's short options ("o:"), or NULL */
	const struct option *options;  /* ends with a NULL name */
	/*
	 * Called for every option but --help, in order, with its code and
	 * its value (NULL when it takes none): -1 when taken,
	 * MT_CMD_NOT_HERE, or the status to return (a usage error it
	 * printed).  NULL: the table has no option but --help.
	 */
	int (*option)(void *ctx, int c, const char *arg);
	/* The arguments after the options, by name, in order ("TRACE", or
	 * "BASE", "NEW"); more: the last may be given again (TRACE...). */
	const char *args[3];
	int more;
	/* --help prints the usage as soon as it is met (report, flamegraph,
	 * plot); otherwise once every option is read, so a bad option
	 * after it is still an error (the other commands). */
	int help_at_once;
	/* The command reads no trace: --threads is no option of its. */
	int no_threads;
} mt_cmd_spec_t;

/*
 * --threads N, which mt_cmd_parse() takes for every command (its table
 * need not list it): the threads a pass over a trace reads and parses
 * with (mt_analysis_set_threads()); 1 to 256, the CPUs available unless
 * given.  The output is the same for any N.
 */
#define MT_CMD_THREADS_USAGE                                                   \
	"  --threads N          read and parse the trace on N threads (default:\n" \
	"                       the CPUs available); the output is the same\n"
/* top's: it follows a file as it grows, on its own thread. */
#define MT_CMD_TOP_THREADS_USAGE                                               \
	"  --threads N          taken, and unused: a growing trace is read on\n"  \
	"                       one thread\n"

/*
 * Parse argv (argv[0] the command's name) as spec says, handing each
 * option to spec->option with ctx (but --threads, taken here).  --help prints the usage on stdout and
 * returns 0.  Returns -1 when the command line is good, with its
 * arguments argv[*first..argc); else the status after saying why.
 */
int mt_cmd_parse(const mt_cmd_spec_t *spec, void *ctx, int argc, char **argv,
		 int *first);

/* "memtrace: <fmt ...>", a blank line, the usage, on stderr; returns 64. */
int mt_cmd_usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * --allocator NAME, for the commands that look at one allocator's blocks
 * (report, gate): MT_CMD_ALLOCATOR_OPTION in the table, the usage line
 * MT_CMD_ALLOCATOR_USAGE.  A name the trace never declared is a usage
 * error: mt_cmd_unknown_allocator() says "no allocator 'NAME' in 'PATH';
 * its allocators: 'libc', 'pool'", a blank line, the usage, and returns
 * 64.
 */
#define MT_CMD_ALLOCATOR_OPTION \
	{ "allocator", required_argument, NULL, MT_CMD_OPT_ALLOCATOR }
#define MT_CMD_ALLOCATOR_USAGE                                                 \
	"  --allocator NAME     the blocks of allocator NAME alone (libc, or a\n" \
	"                       name the program gave through memtrace.h)\n"
int mt_cmd_unknown_allocator(const char *usage, const mt_heap_t *h,
			     const char *path, const char *name);

/* "memtrace: out of memory"; returns 4. */
int mt_cmd_nomem(void);

/* "memtrace: cannot read 'PATH': <strerror(err)>"; returns 3. */
int mt_cmd_cannot_read(const char *path, int err);

/* "memtrace: 'PATH' is not valid memtrace evidence: <why>"; returns 2. */
int mt_cmd_not_evidence(const char *path, const char *why);

/* A trace's name for a page's title: its file name without the
 * directories, "standard input" for "-". */
const char *mt_cmd_trace_name(const char *path);

/*
 * Write b whole: to standard output when path is NULL, else appended to
 * path in one write (append) or replacing it through a temporary file.
 * Returns 0, or 73 ("cannot write 'PATH'") or 4 after saying so.
 */
int mt_cmd_write(const char *path, const mt_buf_t *b, int append);

/*
 * Analyze path (observed when observe is not NULL).  Returns -1 when the
 * pass ran, whatever its verdict, else the status after saying why (3
 * unreadable, 4 out of memory).  mt_analysis_release(a) must follow,
 * whatever it returns.
 */
int mt_cmd_analyze(mt_analysis_t *a, const char *path,
		   mt_analysis_observer_t *observe, void *ctx);

/* mt_cmd_analyze(), and then a trace that is not evidence is status 2. */
int mt_cmd_load(mt_analysis_t *a, const char *path,
		mt_analysis_observer_t *observe, void *ctx);

/* The same, with the blocks of the allocators named allocator alone in
 * the figures (mt_analysis_run_allocator(); NULL: all of them). */
int mt_cmd_analyze_allocator(mt_analysis_t *a, const char *path,
			     const char *allocator,
			     mt_analysis_observer_t *observe, void *ctx);
int mt_cmd_load_allocator(mt_analysis_t *a, const char *path,
			  const char *allocator,
			  mt_analysis_observer_t *observe, void *ctx);

/*
 * Load path, a trace or a summary file (mt_profile_load()).  Returns -1
 * when it is evidence to use, else the status after saying why (2 not
 * evidence, 3 missing or unreadable, 4 out of memory).
 * mt_profile_release(p) must follow, whatever it returns.
 */
int mt_cmd_load_profile(mt_profile_t *p, const char *path);
/* The same, of one allocator's blocks (mt_profile_load_allocator()). */
int mt_cmd_load_profile_allocator(mt_profile_t *p, const char *path,
				  const char *allocator);

/* The trace's verdict as a status: 0 complete, 1 caveated, 2 not
 * evidence. */
int mt_cmd_verdict(const mt_analysis_t *a);

/* The status once everything is written: 0, or 1 for a caveated trace
 * under --strict. */
int mt_cmd_done(const mt_analysis_t *a, int strict);

/* --strict for the row commands (capture, repetition): the trace's
 * status, 3 when it is missing, 2 when it is no summary. */
int mt_cmd_row_status(const mt_row_judgement_t *j);

/* A row that says summary_invalid: stderr says why (cannot read, or not
 * evidence).  Nothing for any other outcome. */
void mt_cmd_row_note(const mt_row_judgement_t *j, const char *path);

/*
 * The driver of a command that reads one trace, judges it and renders it
 * (report, flamegraph, plot): its options, exactly one trace, the pass
 * (over one allocator's blocks when its table has MT_CMD_ALLOCATOR_OPTION
 * and the command line --allocator NAME; a name the trace never declared
 * is then a usage error), the render into a buffer, the write (standard
 * output or -o), and the status (mt_cmd_done).  Every such command has
 * --strict (MT_CMD_OPT_STRICT), -o/--output ('o') and --help; its table
 * lists them, and its own options for `own`.
 *
 *   own(ctx, c, arg)   an option that is not a shared one, as
 *                      mt_cmd_spec_t's option callback; NULL: none
 *   prepare(ctx)       optional, after the command line, before the
 *                      pass: -1, or the status to return
 *   observe            optional: the pass's observer, given ctx
 *   render(ctx, ...)   MT_OK or MT_ENOMEM, on a trace that is evidence
 *   binary             optional: what the output is, when it is binary
 *                      ("pprof's gzip-compressed profile"); without -o,
 *                      a terminal on standard output is then refused
 *                      before the pass, as gzip refuses one, with a line
 *                      that names it and MT_EXIT_CANTCREAT
 */
typedef struct {
	const char *usage;
	const struct option *options;
	int (*own)(void *ctx, int c, const char *arg);
	int (*prepare)(void *ctx);
	mt_analysis_observer_t *observe;
	int (*render)(void *ctx, const mt_analysis_t *a, const char *path,
		      mt_buf_t *out);
	const char *binary;
} mt_cmd_render_t;

/* Run cmd with argv; returns the command's exit status. */
int mt_cmd_render_run(const mt_cmd_render_t *cmd, void *ctx, int argc,
		      char **argv);

#endif
