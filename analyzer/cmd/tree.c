/*
 * tree: `memtrace tree TRACE... [--strict] [-o FILE]`, the traces of a
 * process tree summed into one memtrace.tree/v1 line, then a
 * memtrace.process/v1 line per trace.  It must hold one trace's analysis
 * at a time, whatever the size of the tree.
 */
#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../rows/mt_tree.h"

static const char usage[] =
	"usage: memtrace tree TRACE... [--strict] [-o FILE]\n"
	"\n"
	"Sum the traces of a process tree (the workload's first, then its\n"
	"children's and the images they exec) into one memtrace.tree/v1 line,\n"
	"then write one memtrace.process/v1 line per trace, in the order given.\n"
	"peak_live_bytes is the sum of each process's own peak.\n"
	"  --strict             exit 1 when a trace is caveated, 2 when one is\n"
	"                       not valid evidence\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n";

static int run(int argc, char **argv)
{
	mt_cmd_row_opts_t o = MT_CMD_ROW_OPTS_INIT(
		usage, MT_CMD_ROW_STRICT | MT_CMD_ROW_OUTPUT);
	mt_tree_t t = MT_TREE_INIT;
	mt_buf_t lines = MT_BUF_INIT, out = MT_BUF_INIT;
	int status, first;

	if ((status = mt_cmd_row_parse(&o, "TRACE", 1, argc, argv, &first)) >= 0)
		return status;
	/* One trace at a time: memory is one trace's, whatever the tree. */
	for (int i = first; i < argc; i++) {
		mt_analysis_t a;

		if ((status = mt_cmd_analyze(&a, argv[i], NULL, NULL)) >= 0) {
			mt_analysis_release(&a);
			goto cleanup;
		}
		mt_tree_add(&t, argv[i], &a);
		if (mt_tree_render_process(argv[i], &a, &lines)) {
			mt_analysis_release(&a);
			status = mt_cmd_nomem();
			goto cleanup;
		}
		mt_analysis_release(&a);
	}
	if (mt_tree_render(&t, &out) || mt_buf_add(&out, lines.data, lines.len)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	status = mt_cmd_write(o.output, &out, 0);
	if (!status && o.strict)
		status = t.invalid ? MT_EXIT_INVALID :
			 t.caveated ? MT_EXIT_CAVEATED : MT_EXIT_OK;
cleanup:
	mt_buf_release(&lines);
	mt_buf_release(&out);
	return status;
}

const mt_cmd_t mt_cmd_tree = {
	.name = "tree",
	.synopsis = "tree TRACE...",
	.summary = "the traces of a process tree summed, and a line each",
	.usage = usage,
	.run = run,
};
