/*
 * flamegraph: `memtrace flamegraph TRACE [--metric M] [--folded]
 * [--strict] [-o FILE]`, the trace's stacks as an interactive SVG flame
 * graph (mt_flamesvg), or folded for flamegraph.pl, inferno and speedscope
 * (mt_flame).  It must draw only a trace that is evidence, and write the
 * output whole or not at all.
 */
#include <string.h>

#include "../cmd/mt_cmd.h"
#include "../export/mt_flame.h"
#include "../render/mt_flamesvg.h"

static const char usage[] =
	"usage: memtrace flamegraph TRACE [--metric M] [--folded] [--strict] [-o FILE]\n"
	"\n"
	"Write the trace's flame graph, a self-contained SVG to open in a browser:\n"
	"click a frame to zoom, Search (or Ctrl-F) to highlight frames by regexp.\n"
	"\n"
	"  --metric M           what each stack weighs: allocations (calls, reallocs\n"
	"                       included: the default), bytes (allocated), leaked\n"
	"                       (still live at the end) or peak (live at the peak)\n"
	"  --folded             write the stacks folded instead (\"main;work;leak 7000\"),\n"
	"                       the input of flamegraph.pl, inferno and speedscope\n"
	"  --strict             exit 1 when the trace is not complete\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n"
	MT_CMD_THREADS_USAGE;

enum { OPT_METRIC = MT_CMD_OPT_OWN, OPT_FOLDED };

typedef struct {
	mt_flame_metric_t metric;
	int folded;
} flame_opts_t;

static const struct option options[] = {
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "folded", no_argument, NULL, OPT_FOLDED },
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
	flame_opts_t *o = ctx;

	if (c == OPT_FOLDED) {
		o->folded = 1;
		return -1;
	}
	for (size_t m = 0; m < sizeof(metric_names) / sizeof(metric_names[0]);
	     m++)
		if (!strcmp(arg, metric_names[m])) {
			o->metric = (mt_flame_metric_t)m;
			return -1;
		}
	return mt_cmd_usage_error(usage,
				  "--metric is allocations, bytes, leaked or "
				  "peak, not '%s'", arg);
}

static int render(void *ctx, const mt_analysis_t *a, const char *path,
		  mt_buf_t *out)
{
	const flame_opts_t *o = ctx;

	if (o->folded)
		return mt_flame_render(a, o->metric, out);
	return mt_flamesvg_render(a, o->metric, mt_cmd_trace_name(path), out);
}

static int run(int argc, char **argv)
{
	static const mt_cmd_render_t cmd = {
		.usage = usage,
		.options = options,
		.own = option,
		.render = render,
	};
	flame_opts_t o = { MT_FLAME_ALLOCATIONS, 0 };

	return mt_cmd_render_run(&cmd, &o, argc, argv);
}

const mt_cmd_t mt_cmd_flamegraph = {
	.name = "flamegraph",
	.synopsis = "flamegraph TRACE",
	.summary = "an interactive SVG flame graph (or folded stacks)",
	.usage = usage,
	.run = run,
};
