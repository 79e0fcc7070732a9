/*
 * oom-fail: `memtrace oom-fail TRACE N`, the allocation an out-of-memory
 * sweep run failed (MEMTRACE_FAIL_AT=N) and its stack, for
 * `memtrace-run --oom-sweep` (mt_run_lines.h).  A run that made fewer than N
 * allocations is an answer (exit 1), not an error.  With --exit, the
 * run's row and lines as the sweep prints them instead, whatever the run
 * did.
 */
#include <stdio.h>
#include <string.h>

#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../gates/mt_run_lines.h"
#include "../base/mt_units.h"

#define NO_SUCH_ALLOCATION 1

static const char usage[] =
	"usage: memtrace oom-fail TRACE N\n"
	"   or: memtrace oom-fail --exit STATUS [--signal NAME] [--hung S]\n"
	"                         [--stopped] [--quiet] --log LOG TRACE N\n"
	"\n"
	"Find the allocation that MEMTRACE_FAIL_AT=N failed in TRACE (its\n"
	"alloc.fail with \"fail_at\":N) and print two lines: the call and its size\n"
	"(\"malloc of 512 B\"), then its stack as report names frames (\"symbol\n"
	"(module) < caller (module) < ...\", at most 8 frames), or \"(no stack\n"
	"recorded)\".\n"
	"\n"
	"With --exit, memtrace-run --oom-sweep's account of run N instead: the\n"
	"run's row on one line (FAILED RESULT: FAILED is fail, or none when the\n"
	"program made fewer than N allocations; RESULT is clean, error, crash,\n"
	"hang or stopped), then the run's line, \"N=N CALL: RESULT\", and for a\n"
	"crash or a hang the failed call's stack and the run's files.\n"
	"\n"
	"  --exit STATUS    the run's exit status, as the shell gave it\n"
	"  --signal NAME    it died of signal NAME (SEGV): a crash\n"
	"  --hung S         the watchdog killed it after S seconds: a hang\n"
	"  --stopped        memtrace-run was interrupted during the run\n"
	"  -q, --quiet      no line for a run that exited, clean or with an error\n"
	"  --log LOG        where the run's output went\n"
	"\n"
	"Exit 0 when allocation N failed (with --exit: whatever the run did), 1\n"
	"when the trace holds no such allocation (the program made fewer), 3\n"
	"TRACE cannot be read, 4 out of memory, 64 usage.\n";

enum { OPT_EXIT = MT_CMD_OPT_OWN, OPT_SIGNAL, OPT_HUNG, OPT_STOPPED, OPT_LOG };

static const struct option options[] = {
	{ "exit", required_argument, NULL, OPT_EXIT },
	{ "signal", required_argument, NULL, OPT_SIGNAL },
	{ "hung", required_argument, NULL, OPT_HUNG },
	{ "stopped", no_argument, NULL, OPT_STOPPED },
	{ "quiet", no_argument, NULL, 'q' },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	mt_run_lines_oom_run_t run;
	int have_exit, run_options;
} opts_t;

static int option(void *ctx, int c, const char *arg)
{
	opts_t *o = ctx;
	uint64_t v;

	o->run_options |= c != OPT_EXIT;
	switch (c) {
	case 'q':
		o->run.quiet = 1;
		return -1;
	case OPT_STOPPED:
		o->run.stopped = 1;
		return -1;
	case OPT_LOG:
		o->run.log = arg;
		return -1;
	case OPT_SIGNAL:
		if (!*arg || strchr(arg, ' '))
			return mt_cmd_usage_error(usage, "--signal needs a "
						  "signal's name, not '%s'", arg);
		o->run.signal = arg;
		return -1;
	case OPT_HUNG:
		if (mt_units_parse_count(arg, &v))
			return mt_cmd_usage_error(usage, "--hung needs a whole "
						  "number of seconds, not '%s'",
						  arg);
		o->run.hung = arg;
		return -1;
	default:
		if (mt_units_parse_count(arg, &o->run.exit))
			return mt_cmd_usage_error(usage, "--exit needs a whole "
						  "number, not '%s'", arg);
		o->have_exit = 1;
		return -1;
	}
}

static int run(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.shorts = "q",
		.options = options,
		.option = option,
		.args = { "TRACE", "N" },
	};
	opts_t o = { 0 };
	mt_buf_t out = MT_BUF_INIT;
	uint64_t n;
	int status, first, found = 1, err = 0, rc;

	if ((status = mt_cmd_parse(&spec, &o, argc, argv, &first)) >= 0)
		return status;
	if (o.run_options && !o.have_exit)
		return mt_cmd_usage_error(usage, "%s", "--signal, --hung, "
					  "--stopped, --quiet and --log need --exit");
	if (o.have_exit && !o.run.log)
		return mt_cmd_usage_error(usage, "%s", "--exit needs --log");
	if (mt_units_parse_count(argv[first + 1], &n) || !n)
		return mt_cmd_usage_error(usage, "N needs a whole number, 1 or "
					  "more, not '%s'", argv[first + 1]);
	if (o.have_exit) {
		o.run.n = n;
		o.run.trace = argv[first];
		rc = mt_run_lines_oom_line(&o.run, &out, &err);
	} else {
		rc = mt_run_lines_oom(argv[first], n, &out, &found, &err);
	}
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
