/*
 * report: `memtrace report TRACE [--top N] [--strict] [-o FILE]
 * [--allocator NAME] [--alloc-fn REGEX] [--suppressions FILE]
 * [--no-default-suppressions]`,
 * the report people read (mt_report).  It must take its figures from a
 * trace that is evidence only, and write the report whole or not at all.
 */
#include <string.h>

#include "../base/mt_error.h"
#include "../cmd/mt_cmd.h"
#include "../base/mt_units.h"
#include "../render/mt_report.h"

#define DEFAULT_TOP 10

static const char usage[] =
	"usage: memtrace report TRACE [--top N] [--strict] [-o FILE]\n"
	"                       [--allocator NAME] [--alloc-fn REGEX]\n"
	"                       [--suppressions FILE] [--no-default-suppressions]\n"
	"\n"
	"Write a report to read: the integrity verdict, the totals, then the top\n"
	"sites by peak contribution, by bytes leaked, by calls and by temporary\n"
	"allocations, each named by its first frame in the program's own code,\n"
	"with its stack and source lines.\n"
	"\n"
	"  --top N              sites in each list (default 10; 0: totals alone)\n"
	"  --strict             exit 1 when the trace is not complete\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n"
	MT_CMD_ALLOCATOR_USAGE
	"  --alloc-fn REGEX     a function to pass over when naming a site, as\n"
	"                       the allocator is (POSIX extended, repeatable)\n"
	MT_CMD_SUPPRESS_USAGE
	MT_CMD_THREADS_USAGE;

/* --alloc-fn REGEX: one more allocation function for mt_label. */
#define OPT_ALLOC_FN MT_CMD_OPT_OWN

static const struct option options[] = {
	{ "top", required_argument, NULL, MT_CMD_OPT_TOP },
	{ "strict", no_argument, NULL, MT_CMD_OPT_STRICT },
	{ "output", required_argument, NULL, 'o' },
	MT_CMD_ALLOCATOR_OPTION,
	MT_CMD_SUPPRESS_OPTIONS,
	{ "alloc-fn", required_argument, NULL, OPT_ALLOC_FN },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	uint64_t top;
	mt_cmd_suppress_opts_t opts;
	mt_suppress_t supp;
	mt_label_opts_t labels;
} report_opts_t;

static int option(void *ctx, int c, const char *arg)
{
	report_opts_t *o = ctx;

	if (c == OPT_ALLOC_FN) {
		int rc = mt_label_opts_add(&o->labels, arg);

		if (rc == MT_ENOMEM)
			return mt_cmd_nomem();
		return rc ? mt_cmd_usage_error(usage, "--alloc-fn needs a "
					       "pattern, not '%s'", arg) : -1;
	}
	if (mt_cmd_suppress_option(&o->opts, c, arg) == -1)
		return -1;
	/* --top, the one other option of its own */
	if (mt_units_parse_count(arg, &o->top))
		return mt_cmd_usage_error(usage, "--top needs a number, not '%s'",
					  arg);
	return -1;
}

static int prepare(void *ctx)
{
	report_opts_t *o = ctx;

	return mt_cmd_suppress_load(&o->supp, &o->opts, usage);
}

static int render(void *ctx, const mt_analysis_t *a, const char *path,
		  mt_buf_t *out)
{
	report_opts_t *o = ctx;

	return mt_report_render_labelled(a, strcmp(path, "-") ? path :
						     "standard input",
					 o->top, &o->supp, &o->labels, out);
}

static int run(int argc, char **argv)
{
	static const mt_cmd_render_t cmd = {
		.usage = usage,
		.options = options,
		.own = option,
		.prepare = prepare,
		.render = render,
	};
	report_opts_t o = { .top = DEFAULT_TOP, .supp = MT_SUPPRESS_INIT };
	int status = mt_cmd_render_run(&cmd, &o, argc, argv);

	mt_suppress_release(&o.supp);
	mt_label_opts_release(&o.labels);
	return status;
}

const mt_cmd_t mt_cmd_report = {
	.name = "report",
	.synopsis = "report TRACE",
	.summary = "a report to read: verdict, totals, top sites, lines",
	.usage = usage,
	.run = run,
};
