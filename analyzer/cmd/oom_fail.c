/*
 * oom-fail: `memtrace oom-fail TRACE N`, the allocation an out-of-memory
 * sweep run failed (MEMTRACE_FAIL_AT=N) and its stack, for
 * `memtrace-run --oom-sweep` (mt_runs.h).  A run that made fewer than N
 * allocations is an answer (exit 1), not an error.
 */
#include <stdio.h>

#include "../mt_cmd.h"
#include "../mt_error.h"
#include "../mt_runs.h"
#include "../mt_units.h"

#define NO_SUCH_ALLOCATION 1

static const char usage[] =
	"usage: memtrace oom-fail TRACE N\n"
	"\n"
	"Find the allocation that MEMTRACE_FAIL_AT=N failed in TRACE (its\n"
	"alloc.fail with \"fail_at\":N) and print two lines: the call and its size\n"
	"(\"malloc of 512 B\"), then its stack as report names frames (\"symbol\n"
	"(module) < caller (module) < ...\", at most 8 frames), or \"(no stack\n"
	"recorded)\".\n"
	"\n"
	"Exit 0 when allocation N failed, 1 when the trace holds no such\n"
	"allocation (the program made fewer), 3 TRACE cannot be read, 4 out of\n"
	"memory, 64 usage.\n";

static const struct option options[] = {
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int run(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.options = options,
		.args = { "TRACE", "N" },
	};
	mt_buf_t out = MT_BUF_INIT;
	uint64_t n;
	int status, first, found, err = 0, rc;

	if ((status = mt_cmd_parse(&spec, NULL, argc, argv, &first)) >= 0)
		return status;
	if (mt_units_parse_count(argv[first + 1], &n) || !n)
		return mt_cmd_usage_error(usage, "N needs a whole number, 1 or "
					  "more, not '%s'", argv[first + 1]);
	rc = mt_runs_oom(argv[first], n, &out, &found, &err);
	if (rc == MT_ENOMEM)
		status = mt_cmd_nomem();
	else if (rc)
		status = mt_cmd_cannot_read(argv[first], err);
	else if (!found)
		status = NO_SUCH_ALLOCATION;
	else
		status = mt_cmd_write(NULL, &out, 0);
	mt_buf_release(&out);
	return status;
}

const mt_cmd_t mt_cmd_oom_fail = {
	.name = "oom-fail",
	.synopsis = "oom-fail TRACE N",
	.summary = "the allocation an OOM sweep run failed, and its stack",
	.usage = usage,
	.run = run,
};
