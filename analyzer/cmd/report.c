/*
 * report: `memtrace report TRACE [--top N] [--strict] [-o FILE]`, the
 * report people read (mt_report).  It must take its figures from a trace
 * that is evidence only, and write the report whole or not at all.
 */
#include <string.h>

#include "../mt_cmd.h"
#include "../mt_units.h"
#include "../mt_report.h"

#define DEFAULT_TOP 10

static const char usage[] =
	"usage: memtrace report TRACE [--top N] [--strict] [-o FILE]\n"
	"\n"
	"Write a report to read: the integrity verdict, the totals, then the top\n"
	"sites by peak contribution, by bytes leaked, by calls and by temporary\n"
	"allocations, each with its stack and source lines.\n"
	"\n"
	"  --top N              sites in each list (default 10; 0: totals alone)\n"
	"  --strict             exit 1 when the trace is not complete\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n";

static const struct option options[] = {
	{ "top", required_argument, NULL, MT_CMD_OPT_TOP },
	{ "strict", no_argument, NULL, MT_CMD_OPT_STRICT },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int option(void *ctx, int c, const char *arg)
{
	(void)c; /* --top, the one option of its own */
	if (mt_units_parse_count(arg, ctx))
		return mt_cmd_usage_error(usage, "--top needs a number, not '%s'",
					  arg);
	return -1;
}

static int render(void *ctx, const mt_analysis_t *a, const char *path,
		  mt_buf_t *out)
{
	return mt_report_render(a, strcmp(path, "-") ? path : "standard input",
				*(uint64_t *)ctx, out);
}

static int run(int argc, char **argv)
{
	static const mt_cmd_render_t cmd = {
		.usage = usage,
		.options = options,
		.own = option,
		.render = render,
	};
	uint64_t top = DEFAULT_TOP;

	return mt_cmd_render_run(&cmd, &top, argc, argv);
}

const mt_cmd_t mt_cmd_report = {
	.name = "report",
	.synopsis = "report TRACE",
	.summary = "a report to read: verdict, totals, top sites, lines",
	.usage = usage,
	.run = run,
};
