/*
 * capture: `memtrace capture --capture TRACE --summary SUMMARY
 * [--exit-code C] [--append FILE] [--strict]`, the seed's capture row
 * (format.md section 5) and the summary it names.  It must write nothing
 * for a workload that failed, and nothing before both outputs are
 * rendered.
 */
#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../rows/mt_rows.h"

static const char usage[] =
	"usage: memtrace capture --capture TRACE --summary SUMMARY [--exit-code C]\n"
	"                        [--append FILE] [--strict] [--child TRACE]...\n"
	"\n"
	"Write TRACE's summary (--top 0 --include-zero-live) to SUMMARY and one\n"
	"capture row to stdout, or appended to FILE.  When C is not 0 the workload\n"
	"failed: nothing is written.  Exits 0 once the row is written, whatever its\n"
	"state; with --strict, the trace's status decides (0, 1, 2 or 3).\n"
	"--child TRACE: the trace of another process of the run (a child, an\n"
	"image it execs), again for each: the summary then covers the whole\n"
	"tree, summed as `memtrace tree` sums it.\n"
	"\n"
	MT_CMD_THREADS_USAGE;

static int run_with(mt_cmd_row_opts_t *o, int argc, char **argv)
{
	mt_row_judgement_t j;
	mt_buf_t row = MT_BUF_INIT;
	int status, first;

	if ((status = mt_cmd_row_parse(o, NULL, 0, argc, argv, &first)) >= 0)
		return status;
	if (!o->capture)
		return mt_cmd_usage_error(usage, "%s", "--capture TRACE is required");
	if (!o->summary)
		return mt_cmd_usage_error(usage, "%s", "--summary SUMMARY is required");
	if (o->exit_code != 0)
		return MT_EXIT_OK; /* the workload failed: nothing to judge */
	if (mt_rows_judge_tree(&j, o->capture, o->children, o->nchildren) ||
	    mt_rows_capture(&row, &j, o->capture, o->summary)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	mt_cmd_row_note(&j, o->capture);
	/* Everything is rendered; only now is anything written. */
	if (j.outcome == MT_ROW_SUMMARY_WRITTEN &&
	    (status = mt_cmd_write(o->summary, &j.summary, 0)))
		goto cleanup;
	if ((status = mt_cmd_write(o->append, &row, 1)))
		goto cleanup;
	status = o->strict ? mt_cmd_row_status(&j) : MT_EXIT_OK;
cleanup:
	mt_buf_release(&row);
	mt_rows_judgement_release(&j);
	return status;
}

static int run(int argc, char **argv)
{
	mt_cmd_row_opts_t o = MT_CMD_ROW_OPTS_INIT(
		usage, MT_CMD_ROW_CAPTURE | MT_CMD_ROW_SUMMARY |
		MT_CMD_ROW_EXIT_CODE | MT_CMD_ROW_APPEND | MT_CMD_ROW_STRICT | MT_CMD_ROW_CHILD);
	int status = run_with(&o, argc, argv);

	mt_cmd_row_release(&o);
	return status;
}

const mt_cmd_t mt_cmd_capture = {
	.name = "capture",
	.synopsis = "capture",
	.summary = "judge a workload's trace and write its capture row",
	.usage = usage,
	.run = run,
};
