/*
 * repetitions: `memtrace repetitions FILE [--json]`, min, median, max and
 * spread of a workload's runs (mt_repetitions).  It must never flag a
 * field on a file it could not read: a bad file is its own exit status.
 */
#include <stdio.h>

#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../gates/mt_repetitions.h"

#define VARIES 1

static const char usage[] =
	"usage: memtrace repetitions FILE [--json]\n"
	"\n"
	"Read a repetitions file (memtrace-run's allocations.repetitions.jsonl)\n"
	"and print, for each field of the summary line, min, median, max and\n"
	"spread across the runs, flagging the fields that vary (duration_ns\n"
	"aside: timing always does).\n"
	"\n"
	"  --json   one JSON object instead of text\n"
	"\n"
	"Exit 0 when nothing varies, 1 when something does, 2 not a repetitions\n"
	"file, 3 missing, 4 out of memory, 64 usage.\n";

enum { OPT_JSON = MT_CMD_OPT_OWN };

static const struct option options[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int option(void *ctx, int c, const char *arg)
{
	(void)c; /* --json, the one option */
	(void)arg;
	*(int *)ctx = 1;
	return -1;
}

int mt_repetitions_cmd(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.no_threads = 1,
		.options = options,
		.option = option,
		.args = { "FILE" },
	};
	mt_buf_t out = MT_BUF_INIT;
	char why[MT_REPETITIONS_WHY_MAX];
	int status, first, json = 0, varies, err = 0, rc;
	const char *path;

	if ((status = mt_cmd_parse(&spec, &json, argc, argv, &first)) >= 0)
		return status;
	path = argv[first];
	rc = mt_repetitions_run(path, json, &out, &varies, &err, why,
				sizeof(why));
	if (rc == MT_ENOMEM)
		status = mt_cmd_nomem();
	else if (rc == MT_EIO)
		status = mt_cmd_cannot_read(path, err);
	else if (rc) {
		fprintf(stderr, "memtrace: '%s' is not a repetitions file: %s\n",
			path, why);
		status = MT_EXIT_INVALID;
	} else if (!(status = mt_cmd_write(NULL, &out, 0)))
		status = varies ? VARIES : MT_EXIT_OK;
	mt_buf_release(&out);
	return status;
}

const mt_cmd_t mt_cmd_repetitions = {
	.name = "repetitions",
	.synopsis = "repetitions FILE",
	.summary = "min, median, max and spread of a workload's runs",
	.usage = usage,
	.run = mt_repetitions_cmd,
};
