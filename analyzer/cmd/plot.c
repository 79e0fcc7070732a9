/*
 * plot: `memtrace plot TRACE [-o FILE] [--strict]`, the live heap over
 * time as a self-contained SVG (mt_plot).  It must allocate the curve
 * only once the command line is good, and write the SVG whole or not at
 * all.
 */
#include <string.h>

#include "../cmd/mt_cmd.h"
#include "../base/mt_mem.h"
#include "../render/mt_plot.h"

static const char usage[] =
	"usage: memtrace plot TRACE [-o FILE] [--strict]\n"
	"\n"
	"Draw the live heap over time (and the live blocks on a second axis) as a\n"
	"self-contained SVG, the peak marked: open it in any browser.\n"
	"\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n"
	"  --strict             exit 1 when the trace is not complete\n"
	MT_CMD_THREADS_USAGE;

static const struct option options[] = {
	{ "strict", no_argument, NULL, MT_CMD_OPT_STRICT },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The curve is made once the command line is known good: --help and a
 * usage error allocate nothing. */
static int prepare(void *ctx)
{
	mt_plot_curve_t **curve = ctx;

	*curve = mt_mem_malloc(sizeof(**curve));
	if (!*curve)
		return mt_cmd_nomem();
	mt_plot_curve_init(*curve);
	return -1;
}

static void observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev)
{
	mt_plot_observe(*(mt_plot_curve_t **)ctx, h, ev);
}

static int render(void *ctx, const mt_analysis_t *a, const char *path,
		  mt_buf_t *out)
{
	return mt_plot_render(a, *(mt_plot_curve_t **)ctx, mt_cmd_trace_name(path),
			      out);
}

static int run(int argc, char **argv)
{
	static const mt_cmd_render_t cmd = {
		.usage = usage,
		.options = options,
		.prepare = prepare,
		.observe = observe,
		.render = render,
	};
	mt_plot_curve_t *curve = NULL;
	int status = mt_cmd_render_run(&cmd, &curve, argc, argv);

	mt_mem_free(curve);
	return status;
}

const mt_cmd_t mt_cmd_plot = {
	.name = "plot",
	.synopsis = "plot TRACE -o SVG",
	.summary = "the live heap over time as a self-contained SVG",
	.usage = usage,
	.run = run,
};
