/*
 * html: `memtrace html TRACE [-o FILE] [--strict] [--allocator NAME]
 * [--alloc-fn REGEX] [--suppressions FILE] [--no-default-suppressions]`, the trace as one
 * self-contained HTML page to explore in a browser (mt_html).  It must
 * allocate only once the command line is good, and write the page whole
 * or not at all.
 */
#include <string.h>

#include "../base/mt_error.h"
#include "../cmd/mt_cmd.h"
#include "../render/mt_html.h"
#include "../base/mt_mem.h"

static const char usage[] =
	"usage: memtrace html TRACE [-o FILE] [--strict] [--allocator NAME]\n"
	"                     [--alloc-fn REGEX]\n"
	"                     [--suppressions FILE] [--no-default-suppressions]\n"
	"\n"
	"Write the trace as one self-contained HTML page (at most 5 MiB, nothing\n"
	"fetched): the verdict, the totals, live bytes and blocks over time, a\n"
	"flame graph by calls, bytes, peak or leaked, the top sites with their\n"
	"stacks, each site named by its first frame in the program's own code.\n"
	"Open it in any browser.\n"
	"\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n"
	"  --strict             exit 1 when the trace is not complete\n"
	MT_CMD_ALLOCATOR_USAGE
	"  --alloc-fn REGEX     a function to pass over when naming a site, as\n"
	"                       the allocator is (POSIX extended, repeatable)\n"
	MT_CMD_SUPPRESS_USAGE
	MT_CMD_THREADS_USAGE;

/* --alloc-fn REGEX: one more allocation function for mt_label. */
#define OPT_ALLOC_FN MT_CMD_OPT_OWN

static const struct option options[] = {
	{ "strict", no_argument, NULL, MT_CMD_OPT_STRICT },
	{ "output", required_argument, NULL, 'o' },
	MT_CMD_ALLOCATOR_OPTION,
	MT_CMD_SUPPRESS_OPTIONS,
	{ "alloc-fn", required_argument, NULL, OPT_ALLOC_FN },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	mt_html_pass_t *pass;
	mt_cmd_suppress_opts_t opts;
	mt_suppress_t supp;
	mt_label_opts_t labels;
} html_opts_t;

static int option(void *ctx, int c, const char *arg)
{
	html_opts_t *o = ctx;

	if (c == OPT_ALLOC_FN) {
		int rc = mt_label_opts_add(&o->labels, arg);

		if (rc == MT_ENOMEM)
			return mt_cmd_nomem();
		return rc ? mt_cmd_usage_error(usage, "--alloc-fn needs a "
					       "pattern, not '%s'", arg) : -1;
	}
	return mt_cmd_suppress_option(&o->opts, c, arg);
}

static int prepare(void *ctx)
{
	html_opts_t *o = ctx;
	int status = mt_cmd_suppress_load(&o->supp, &o->opts, usage);

	if (status != -1)
		return status;
	o->pass = mt_mem_malloc(sizeof(*o->pass));
	if (!o->pass)
		return mt_cmd_nomem();
	mt_html_pass_init(o->pass);
	return -1;
}

static void observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev)
{
	mt_html_observe(((html_opts_t *)ctx)->pass, h, ev);
}

static int render(void *ctx, const mt_analysis_t *a, const char *path,
		  mt_buf_t *out)
{
	html_opts_t *o = ctx;

	return mt_html_render_labelled(a, o->pass, &o->supp, &o->labels, path,
				       mt_cmd_trace_name(path), out);
}

static int run(int argc, char **argv)
{
	static const mt_cmd_render_t cmd = {
		.usage = usage,
		.options = options,
		.own = option,
		.prepare = prepare,
		.observe = observe,
		.render = render,
	};
	html_opts_t o = { .supp = MT_SUPPRESS_INIT };
	int status = mt_cmd_render_run(&cmd, &o, argc, argv);

	mt_mem_free(o.pass);
	mt_suppress_release(&o.supp);
	mt_label_opts_release(&o.labels);
	return status;
}

const mt_cmd_t mt_cmd_html = {
	.name = "html",
	.synopsis = "html TRACE -o HTML",
	.summary = "the trace as a self-contained page to explore in a browser",
	.usage = usage,
	.run = run,
};
