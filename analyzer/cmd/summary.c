/*
 * summary: `memtrace summary TRACE [--top N] [--include-zero-live]
 * [--strict] [-o FILE]`, the summary line and the top sites (format.md
 * section 4).  It must never write a summary of a trace that is not
 * evidence, nor a line past its size limit.
 */
#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../rows/mt_summary.h"

#include <stdio.h>

static const char usage[] =
	"usage: memtrace summary TRACE [--top N] [--include-zero-live] [--strict] [-o FILE]\n"
	"\n"
	"  --top N              site lines after the summary line (default 10;\n"
	"                       0 writes the summary line alone)\n"
	"  --include-zero-live  also list allocators and sites with no live bytes\n"
	"  --strict             exit 1 when the trace is not complete\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n"
	MT_CMD_THREADS_USAGE;

static int run(int argc, char **argv)
{
	mt_cmd_row_opts_t o = MT_CMD_ROW_OPTS_INIT(
		usage, MT_CMD_ROW_TOP | MT_CMD_ROW_ZERO | MT_CMD_ROW_STRICT |
		MT_CMD_ROW_OUTPUT);
	mt_analysis_t a;
	mt_buf_t out = MT_BUF_INIT;
	const char *path;
	int status, first, rc;

	if ((status = mt_cmd_row_parse(&o, "TRACE", 0, argc, argv, &first)) >= 0)
		return status;
	path = argv[first];
	if ((status = mt_cmd_load(&a, path, NULL, NULL)) >= 0)
		goto cleanup;
	rc = mt_summary_render(&a, o.top, o.include_zero_live, &out);
	if (rc == MT_ETOOLONG) {
		fprintf(stderr,
			"memtrace: the summary of '%s' is longer than %d bytes\n",
			path, MT_SUMMARY_LINE_MAX);
		status = MT_EXIT_INVALID;
		goto cleanup;
	}
	if (rc) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	status = mt_cmd_write(o.output, &out, 0);
	if (!status && o.strict)
		status = mt_cmd_verdict(&a);
cleanup:
	mt_buf_release(&out);
	mt_analysis_release(&a);
	return status;
}

const mt_cmd_t mt_cmd_summary = {
	.name = "summary",
	.synopsis = "summary TRACE",
	.summary = "write the summary line and the top sites",
	.usage = usage,
	.run = run,
};
