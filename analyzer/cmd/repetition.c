/*
 * repetition: `memtrace repetition --capture TRACE --out FILE --index I
 * [--exit-code C] [--strict]`, one repetition row of a workload's run
 * (format.md section 6): run 1 replaces FILE, the others append to it.
 * It must write a row for every run, a failed workload's too.
 */
#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../rows/mt_rows.h"

static const char usage[] =
	"usage: memtrace repetition --capture TRACE --out FILE --index I\n"
	"                           [--exit-code C] [--strict] [--child TRACE]...\n"
	"\n"
	"Write one repetition row for run I (from 1) of a workload: it replaces\n"
	"FILE when I is 1 and is appended to it otherwise.  Exits 0 once the row\n"
	"is written, whatever its state; with --strict, the trace's status decides.\n"
	"--child TRACE: the trace of another process of the run (a child, an\n"
	"image it execs), again for each: the summary then covers the whole\n"
	"tree, summed as `memtrace tree` sums it.\n"
	"\n"
	MT_CMD_THREADS_USAGE;

static int run_with(mt_cmd_row_opts_t *o, int argc, char **argv)
{
	mt_row_judgement_t j;
	mt_buf_t row = MT_BUF_INIT;
	int status, first, have_j = 0;

	if ((status = mt_cmd_row_parse(o, NULL, 0, argc, argv, &first)) >= 0)
		return status;
	if (!o->capture)
		return mt_cmd_usage_error(usage, "%s", "--capture TRACE is required");
	if (!o->out)
		return mt_cmd_usage_error(usage, "%s", "--out FILE is required");
	if (!o->have_index)
		return mt_cmd_usage_error(usage, "%s", "--index I is required");
	if (o->index == 0)
		return mt_cmd_usage_error(usage, "%s",
					  "--index counts runs from 1; 0 is not a run");
	if (o->exit_code == 0) {
		have_j = 1;
		if (mt_rows_judge_tree(&j, o->capture, o->children, o->nchildren)) {
			status = mt_cmd_nomem();
			goto cleanup;
		}
		mt_cmd_row_note(&j, o->capture);
	}
	if (mt_rows_repetition(&row, have_j ? &j : NULL, o->index, o->exit_code)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	if ((status = mt_cmd_write(o->out, &row, o->index > 1)))
		goto cleanup;
	status = o->strict && have_j ? mt_cmd_row_status(&j) :
		 o->strict ? MT_EXIT_CAVEATED : MT_EXIT_OK;
cleanup:
	mt_buf_release(&row);
	if (have_j)
		mt_rows_judgement_release(&j);
	return status;
}

static int run(int argc, char **argv)
{
	mt_cmd_row_opts_t o = MT_CMD_ROW_OPTS_INIT(
		usage, MT_CMD_ROW_CAPTURE | MT_CMD_ROW_OUT | MT_CMD_ROW_INDEX |
		MT_CMD_ROW_EXIT_CODE | MT_CMD_ROW_STRICT | MT_CMD_ROW_CHILD);
	int status = run_with(&o, argc, argv);

	mt_cmd_row_release(&o);
	return status;
}

const mt_cmd_t mt_cmd_repetition = {
	.name = "repetition",
	.synopsis = "repetition",
	.summary = "record one repetition row of a workload run",
	.usage = usage,
	.run = run,
};
