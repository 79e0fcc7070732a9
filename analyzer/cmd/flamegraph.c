/*
 * flamegraph: `memtrace flamegraph TRACE [--metric M] [--strict]
 * [-o FILE]`, the trace's stacks folded for flamegraph.pl, inferno and
 * speedscope (mt_flame).  It must fold only a trace that is evidence, and
 * write the output whole or not at all.
 */
#include <string.h>

#include "../cmd/mt_cmd.h"
#include "../export/mt_flame.h"

static const char usage[] =
	"usage: memtrace flamegraph TRACE [--metric M] [--strict] [-o FILE]\n"
	"\n"
	"Write the trace's stacks folded (\"main;work;leak_here 7000\"), the input\n"
	"of flamegraph.pl, inferno-flamegraph and speedscope.\n"
	"\n"
	"  --metric M           what each stack weighs: allocations (calls, reallocs\n"
	"                       included: the default), bytes (allocated), leaked\n"
	"                       (still live at the end) or peak (live at the peak)\n"
	"  --strict             exit 1 when the trace is not complete\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n";

enum { OPT_METRIC = MT_CMD_OPT_OWN };

static const struct option options[] = {
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "strict", no_argument, NULL, MT_CMD_OPT_STRICT },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static const char *const metric_names[] = {
	[MT_FLAME_ALLOCATIONS] = "allocations",
	[MT_FLAME_BYTES] = "bytes",
	[MT_FLAME_LEAKED] = "leaked",
	[MT_FLAME_PEAK] = "peak",
};

static int option(void *ctx, int c, const char *arg)
{
	(void)c; /* --metric, the one option of its own */
	for (size_t m = 0; m < sizeof(metric_names) / sizeof(metric_names[0]);
	     m++)
		if (!strcmp(arg, metric_names[m])) {
			*(mt_flame_metric_t *)ctx = (mt_flame_metric_t)m;
			return -1;
		}
	return mt_cmd_usage_error(usage,
				  "--metric is allocations, bytes, leaked or "
				  "peak, not '%s'", arg);
}

static int render(void *ctx, const mt_analysis_t *a, const char *path,
		  mt_buf_t *out)
{
	(void)path;
	return mt_flame_render(a, *(mt_flame_metric_t *)ctx, out);
}

static int run(int argc, char **argv)
{
	static const mt_cmd_render_t cmd = {
		.usage = usage,
		.options = options,
		.own = option,
		.render = render,
	};
	mt_flame_metric_t metric = MT_FLAME_ALLOCATIONS;

	return mt_cmd_render_run(&cmd, &metric, argc, argv);
}

const mt_cmd_t mt_cmd_flamegraph = {
	.name = "flamegraph",
	.synopsis = "flamegraph TRACE",
	.summary = "folded stacks for flamegraph.pl, inferno, speedscope",
	.usage = usage,
	.run = run,
};
