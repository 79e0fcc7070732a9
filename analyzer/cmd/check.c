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
	"3 when missing or unreadable.\n";

static int option(void *ctx, int c, const char *arg)
{
	(void)ctx;
	(void)c;
	(void)arg;
	return MT_CMD_NOT_HERE; /* no option but --help */
}

static int run(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.shorts = "o:",
		.options = mt_cmd_row_options,
		.option = option,
		.args = { "TRACE" },
	};
	mt_analysis_t a;
	mt_buf_t out = MT_BUF_INIT;
	int status, first;

	if ((status = mt_cmd_parse(&spec, NULL, argc, argv, &first)) >= 0)
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
