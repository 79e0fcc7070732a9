/*
 * check: `memtrace check TRACE`, the integrity verdict of a trace as one
 * JSON line, and as the exit status.  It must judge every trace it can
 * read, evidence or not: a trace that is not evidence is a verdict here,
 * never an error.
 */
#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../rows/mt_summary.h"

static const char usage[] =
	"usage: memtrace check TRACE\n"
	"\n"
	"Print the verdict on TRACE as one JSON line: status, message, caveats.\n"
	"Exit 0 when complete, 1 when caveated, 2 when not valid evidence,\n"
	"3 when missing or unreadable.\n"
	"\n"
	MT_CMD_THREADS_USAGE;

static int run(int argc, char **argv)
{
	mt_cmd_row_opts_t o = MT_CMD_ROW_OPTS_INIT(usage, 0);
	mt_analysis_t a;
	mt_buf_t out = MT_BUF_INIT;
	int status, first;

	if ((status = mt_cmd_row_parse(&o, "TRACE", 0, argc, argv, &first)) >= 0)
		return status;
	if ((status = mt_cmd_analyze(&a, argv[first], NULL, NULL)) >= 0)
		goto cleanup;
	if (mt_summary_render_check(&a, &out)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	status = mt_cmd_write(NULL, &out, 0);
	if (!status)
		status = mt_cmd_verdict(&a);
cleanup:
	mt_buf_release(&out);
	mt_analysis_release(&a);
	return status;
}

const mt_cmd_t mt_cmd_check = {
	.name = "check",
	.synopsis = "check TRACE",
	.summary = "print the integrity verdict of a trace",
	.usage = usage,
	.run = run,
};
