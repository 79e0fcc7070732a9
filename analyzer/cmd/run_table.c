/*
 * run-table: `memtrace run-table --command CMD --rows REPS FIGURES`, the
 * lines memtrace-run ends with (mt_run_lines.h): how many runs were
 * summarized, the table of min, median and max, and the warning when the
 * runs differ, from the figures run-line printed for each run; with
 * --verdict, first the status memtrace-run exits with, so that the
 * script holds no copy of the --strict rule.
 */
#include <stdio.h>
#include <string.h>

#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../gates/mt_run_lines.h"

static const char usage[] =
	"usage: memtrace run-table --command CMD --rows REPS\n"
	"                          [--verdict [--strict] [--quiet]] FIGURES\n"
	"\n"
	"memtrace-run's closing lines over its runs: how many were summarized,\n"
	"the min, median and max of their allocations, peak live and live bytes\n"
	"at exit (the median of an even number of runs is the mean of the two\n"
	"middle values, rounded down), and a warning when the runs differ.\n"
	"FIGURES holds the first line `memtrace run-line` printed for each run,\n"
	"in order; - reads standard input.\n"
	"\n"
	"  --command CMD    the workload, named by its file name\n"
	"  --rows REPS      the repetitions file, as the lines name it\n"
	"  --verdict        first a line with the status memtrace-run exits\n"
	"                   with: the first non-zero EXIT, else 0\n"
	"  --strict         with --verdict: when every EXIT is 0, the first run\n"
	"                   whose trace is caveated (1), not valid evidence (2)\n"
	"                   or missing (3), and a last line saying which\n"
	"  -q, --quiet      with --verdict: no table and no warning\n"
	"\n"
	"Exit 0, 2 FIGURES holds a line that is no run's figures, 3 FIGURES\n"
	"cannot be read, 4 out of memory, 64 usage.\n";

enum { OPT_COMMAND = MT_CMD_OPT_OWN, OPT_ROWS, OPT_VERDICT };

static const struct option options[] = {
	{ "command", required_argument, NULL, OPT_COMMAND },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "verdict", no_argument, NULL, OPT_VERDICT },
	{ "strict", no_argument, NULL, MT_CMD_OPT_STRICT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	const char *command, *rows;
	int flags;
} opts_t;

static int option(void *ctx, int c, const char *arg)
{
	opts_t *o = ctx;

	if (c == OPT_COMMAND)
		o->command = arg;
	else if (c == OPT_ROWS)
		o->rows = arg;
	else
		o->flags |= c == OPT_VERDICT ? MT_RUN_LINES_VERDICT :
			    c == 'q' ? MT_RUN_LINES_QUIET : MT_RUN_LINES_STRICT;
	return -1;
}

static int run(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.shorts = "q",
		.options = options,
		.option = option,
		.args = { "FIGURES" },
	};
	opts_t o = { 0 };
	mt_buf_t out = MT_BUF_INIT;
	char why[MT_RUN_LINES_WHY_MAX];
	const char *name, *slash;
	int status, first, err = 0, rc;

	if ((status = mt_cmd_parse(&spec, &o, argc, argv, &first)) >= 0)
		return status;
	if (!o.command || !o.rows)
		return mt_cmd_usage_error(usage, "%s", "--command and --rows "
					  "are required");
	if (o.flags & ~MT_RUN_LINES_VERDICT && !(o.flags & MT_RUN_LINES_VERDICT))
		return mt_cmd_usage_error(usage, "%s", "--strict and --quiet "
					  "need --verdict");
	slash = strrchr(o.command, '/');
	name = slash ? slash + 1 : o.command;
	rc = mt_run_lines_table(argv[first], name, o.rows, o.flags, &out, &err, why,
			   sizeof(why));
	if (rc == MT_ENOMEM)
		status = mt_cmd_nomem();
	else if (rc == MT_EIO)
		status = mt_cmd_cannot_read(argv[first], err);
	else if (rc) {
		fprintf(stderr, "memtrace: '%s' is not a list of run figures: "
			"%s\n", argv[first], why);
		status = MT_EXIT_INVALID;
	} else {
		status = mt_cmd_write(NULL, &out, 0);
	}
	mt_buf_release(&out);
	return status;
}

const mt_cmd_t mt_cmd_run_table = {
	.name = "run-table",
	.synopsis = "run-table FIGURES",
	.summary = "memtrace-run's table of min, median and max",
	.usage = usage,
	.run = run,
};
