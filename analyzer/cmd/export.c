/*
 * export: `memtrace export FORMAT TRACE [--strict] [-o FILE]`, the trace's
 * sites in a format another tool opens (mt_export): folded stacks,
 * speedscope's JSON, DHAT's JSON, pprof's gzip-compressed profile.proto.
 * It must export only a trace that is evidence, write the output whole or
 * not at all, and keep `folded` the flame graph's own code path.
 */
#include <string.h>

#include "../cmd/mt_cmd.h"
#include "../export/mt_export.h"

static const char usage[] =
	"usage: memtrace export FORMAT TRACE [--strict] [-o FILE]\n"
	"\n"
	"Write the trace's allocation sites in a format other tools open:\n"
	"\n"
	"  folded      folded stacks weighed by allocation calls, exactly\n"
	"              `memtrace flamegraph TRACE --folded` (flamegraph.pl, inferno)\n"
	"  speedscope  speedscope's JSON: bytes live at the peak, bytes leaked,\n"
	"              bytes allocated and allocation calls\n"
	"              (https://www.speedscope.app, `npx speedscope FILE`)\n"
	"  dhat        DHAT's JSON, version 2 (Valgrind's dh_view.html, the\n"
	"              Firefox Profiler)\n"
	"  pprof       pprof's profile.proto, gzip-compressed: allocations,\n"
	"              bytes allocated, and what is live at the end\n"
	"              (`go tool pprof -http=: FILE`, Pyroscope, Parca)\n"
	"\n"
	"  --strict             exit 1 when the trace is not complete\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n"
	MT_CMD_THREADS_USAGE
	"\n"
	"pprof's output is binary: without -o, a terminal on stdout is refused\n"
	"(exit 73).\n";

static const struct option options[] = {
	{ "strict", no_argument, NULL, MT_CMD_OPT_STRICT },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	mt_export_format_t format;
	mt_export_times_t times;
} export_t;

static void observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev)
{
	mt_export_observe(&((export_t *)ctx)->times, h, ev);
}

static int render(void *ctx, const mt_analysis_t *a, const char *path,
		  mt_buf_t *out)
{
	export_t *e = ctx;

	return mt_export_render(a, e->format, path, &e->times, out);
}

/*
 * Where FORMAT is in argv: the first argument that is no option and no
 * option's value (-o FILE, --output FILE); 0 when there is none.  *help
 * says whether --help is anywhere before "--", which then wins over a
 * bad FORMAT, as it wins over a bad option.  The driver parses the rest,
 * TRACE and the options, as every render command's.
 */
static int format_at(int argc, char **argv, int *help)
{
	int at = 0;

	*help = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			if (!at && i + 1 < argc)
				at = i + 1;
			break;
		}
		if (!strcmp(argv[i], "--help"))
			*help = 1;
		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output"))
			i++;
		else if (!at && (argv[i][0] != '-' || !argv[i][1]))
			at = i;
	}
	return at;
}

static int run(int argc, char **argv)
{
	mt_cmd_render_t cmd = {
		.usage = usage,
		.options = options,
		.observe = observe,
		.render = render,
	};
	export_t e = { 0 };
	char *rest[argc > 0 ? argc : 1];
	int at, help, n = 0, status;

	at = format_at(argc, argv, &help);
	if (!help) {
		if (!at)
			return mt_cmd_usage_error(usage, "missing FORMAT argument");
		if (mt_export_format_parse(argv[at], &e.format))
			return mt_cmd_usage_error(usage,
						  "unknown export format '%s' "
						  "(folded, speedscope, dhat or pprof)",
						  argv[at]);
	}
	for (int i = 0; i < argc; i++)
		if (i != at || !at)
			rest[n++] = argv[i];
	if (e.format == MT_EXPORT_PPROF)
		cmd.binary = "pprof's gzip-compressed profile";
	mt_export_times_init(&e.times, e.format);
	status = mt_cmd_render_run(&cmd, &e, n, rest);
	mt_export_times_release(&e.times);
	return status;
}

const mt_cmd_t mt_cmd_export = {
	.name = "export",
	.synopsis = "export FORMAT TRACE",
	.summary = "the sites for speedscope, DHAT's viewer, pprof, flame graphs",
	.usage = usage,
	.run = run,
};
