/*
 * tree: `memtrace tree TRACE... [--json] [--strict] [-o FILE]`, the
 * traces of a process tree summed: for a person, a line for the tree and
 * one per process, children under their parents; with --json, one
 * memtrace.tree/v1 line, then a memtrace.process/v1 line per trace.  It
 * must hold one trace's analysis at a time, whatever the size of the
 * tree.
 */
#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../rows/mt_tree.h"

static const char usage[] =
	"usage: memtrace tree TRACE... [--json] [--strict] [-o FILE]\n"
	"\n"
	"Sum the traces of a process tree (the workload's first, then its\n"
	"children's and the images they exec) and show the tree: a line for\n"
	"the whole, then a line per process, each child under its parent:\n"
	"its program, arguments, pid and parent pid, allocations, peak and\n"
	"status.  The tree's peak is the sum of each process's own peak.\n"
	"  --json               one memtrace.tree/v1 line, then one\n"
	"                       memtrace.process/v1 line per trace, in the\n"
	"                       order given\n"
	"  --strict             exit 1 when a trace is caveated, 2 when one is\n"
	"                       not valid evidence\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n"
	MT_CMD_THREADS_USAGE;

enum { OPT_JSON = MT_CMD_OPT_OWN };

static const struct option options[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "strict", no_argument, NULL, MT_CMD_OPT_STRICT },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	mt_cmd_row_opts_t row;
	int json;
} opts_t;

static int option(void *ctx, int c, const char *arg)
{
	opts_t *o = ctx;

	if (c != OPT_JSON)
		return mt_cmd_row_option(&o->row, c, arg);
	o->json = 1;
	return -1;
}

static int run(int argc, char **argv)
{
	opts_t o = { .row = MT_CMD_ROW_OPTS_INIT(
			     usage, MT_CMD_ROW_STRICT | MT_CMD_ROW_OUTPUT) };
	const mt_cmd_spec_t spec = {
		.usage = usage,
		.shorts = "o:",
		.options = options,
		.option = option,
		.args = { "TRACE" },
		.more = 1,
	};
	mt_tree_t t = MT_TREE_INIT;
	mt_tree_view_t view = MT_TREE_VIEW_INIT;
	mt_buf_t lines = MT_BUF_INIT, out = MT_BUF_INIT;
	int status, first;

	if ((status = mt_cmd_parse(&spec, &o, argc, argv, &first)) >= 0)
		return status;
	/* One trace at a time: memory is one trace's, whatever the tree. */
	for (int i = first; i < argc; i++) {
		mt_analysis_t a;
		int rc;

		if ((status = mt_cmd_analyze(&a, argv[i], NULL, NULL)) >= 0) {
			mt_analysis_release(&a);
			goto cleanup;
		}
		mt_tree_add(&t, argv[i], &a);
		rc = o.json ? mt_tree_render_process(argv[i], &a, &lines) :
			      mt_tree_view_add(&view, argv[i], &a);
		mt_analysis_release(&a);
		if (rc) {
			status = mt_cmd_nomem();
			goto cleanup;
		}
	}
	if (o.json ? mt_tree_render(&t, &out) ||
			     mt_buf_add(&out, lines.data, lines.len) :
		     mt_tree_view_render(&view, &t, &out)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	status = mt_cmd_write(o.row.output, &out, 0);
	if (!status && o.row.strict)
		status = t.invalid ? MT_EXIT_INVALID :
			 t.caveated ? MT_EXIT_CAVEATED : MT_EXIT_OK;
cleanup:
	mt_tree_view_release(&view);
	mt_buf_release(&lines);
	mt_buf_release(&out);
	return status;
}

const mt_cmd_t mt_cmd_tree = {
	.name = "tree",
	.synopsis = "tree TRACE...",
	.summary = "the traces of a process tree: a tree of programs, or JSON",
	.usage = usage,
	.run = run,
};
