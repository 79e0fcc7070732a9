/*
 * gate: `memtrace gate TRACE|SUMMARY [--max-peak SIZE] [--max-live SIZE]
 * [--max-allocations N] [--max-temporary N] [--require-complete]
 * [--allocator NAME] [--junit FILE] [--format FORMAT]`, the budgets a CI job fails a build on (mt_gate).  It must never let a budget
 * pass on input it could not read, nor run without a budget to check.
 */
#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../gates/mt_gate.h"
#include "../gates/mt_profile.h"
#include "../base/mt_units.h"

#define GATE_FAILED 1

static const char usage[] =
	"usage: memtrace gate TRACE|SUMMARY [--max-peak SIZE] [--max-live SIZE]\n"
	"                     [--max-allocations N] [--max-temporary N]\n"
	"                     [--require-complete] [--allocator NAME]\n"
	"                     [--suppressions FILE] [--no-default-suppressions]\n"
	"                     [--junit FILE] [--format FORMAT]\n"
	"\n"
	"Check a trace, or a summary file written earlier, against budgets: one\n"
	"line per budget on stdout, then the verdict.\n"
	"\n"
	"  --max-peak SIZE      peak_live_bytes at most SIZE\n"
	"  --max-live SIZE      live_bytes (live at exit: leaked) at most SIZE\n"
	"  --max-allocations N  allocations at most N\n"
	"  --max-temporary N    temporary_allocations at most N\n"
	"  --require-complete   the trace's status must be complete\n"
	MT_CMD_ALLOCATOR_USAGE
	"                       (a trace only: a summary file's figures are\n"
	"                       every allocator's)\n"
	MT_CMD_SUPPRESS_USAGE
	MT_CMD_CI_USAGE
	MT_CMD_THREADS_USAGE
	"\n"
	"SIZE is bytes, or a number with K, M or G (1024-based: 16K is 16384,\n"
	"1.5M is 1572864; KiB, MiB, GiB too).  Exit 0 when every budget holds,\n"
	"1 when one fails, 2 not valid evidence, 3 missing, 4 out of memory,\n"
	"64 usage, 73 an output cannot be written.\n";

/* A budget's option is MT_CMD_OPT_OWN plus its mt_gate_budget_t. */
enum { OPT_COMPLETE = MT_CMD_OPT_OWN + MT_GATE_BUDGETS };

static const struct option options[] = {
	{ "max-peak", required_argument, NULL, MT_CMD_OPT_OWN + MT_GATE_PEAK },
	{ "max-live", required_argument, NULL, MT_CMD_OPT_OWN + MT_GATE_LIVE },
	{ "max-allocations", required_argument, NULL,
	  MT_CMD_OPT_OWN + MT_GATE_ALLOCATIONS },
	{ "max-temporary", required_argument, NULL,
	  MT_CMD_OPT_OWN + MT_GATE_TEMPORARY },
	{ "require-complete", no_argument, NULL, OPT_COMPLETE },
	MT_CMD_ALLOCATOR_OPTION,
	MT_CMD_SUPPRESS_OPTIONS,
	MT_CMD_CI_OPTIONS,
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	mt_gate_t g;
	mt_cmd_suppress_opts_t supp;
	mt_cmd_ci_opts_t ci;
} gate_opts_t;

static int option(void *ctx, int c, const char *arg)
{
	gate_opts_t *o = ctx;
	mt_gate_t *g = &o->g;
	mt_gate_budget_t b = (mt_gate_budget_t)(c - MT_CMD_OPT_OWN);
	int is_size, taken;

	if (mt_cmd_suppress_option(&o->supp, c, arg) == -1)
		return -1;
	if ((taken = mt_cmd_ci_option(&o->ci, usage, c, arg)) != MT_CMD_NOT_HERE)
		return taken;
	if (c == OPT_COMPLETE) {
		g->require_complete = 1;
		return -1;
	}
	if (c == MT_CMD_OPT_ALLOCATOR) {
		g->allocator = arg;
		return -1;
	}
	is_size = mt_gate_budget_is_size(b);
	if (is_size ? mt_units_parse_size(arg, &g->limit[b]) :
		      mt_units_parse_count(arg, &g->limit[b]))
		return mt_cmd_usage_error(usage, "%s needs %s, not '%s'",
					  mt_gate_budget_option(b),
					  is_size ?
					  "a size: bytes, or with K, M or G "
					  "(1024-based; KB is ambiguous)" :
					  "a whole number",
					  arg);
	g->given[b] = 1;
	return -1;
}

int mt_gate_cmd(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.options = options,
		.option = option,
		.args = { "TRACE or SUMMARY" },
	};
	gate_opts_t o = { .g = { .require_complete = 0 } };
	mt_gate_t *g = &o.g;
	mt_suppress_t supp = MT_SUPPRESS_INIT;
	mt_profile_t p;
	mt_buf_t out = MT_BUF_INIT;
	mt_ci_t ci;
	int status, first, failed, checked, any = 0;

	mt_cmd_ci_start(&o.ci);
	mt_ci_init(&ci, "gate");
	if ((status = mt_cmd_parse(&spec, &o, argc, argv, &first)) >= 0)
		goto cleanup_args;
	g->path = argv[first];
	for (int b = 0; b < MT_GATE_BUDGETS; b++)
		any |= g->given[b];
	if (!any && !g->require_complete) {
		status = mt_cmd_usage_error(usage, "%s",
					    "no budget given: use --max-peak, "
					    "--max-live, --max-allocations, "
					    "--max-temporary or --require-complete");
		goto cleanup_args;
	}
	/* The profile is released whatever its load returns, so it is
	 * loaded before anything can end the command. */
	if ((status = mt_cmd_load_profile_allocator(&p, g->path, g->allocator)) >= 0)
		goto cleanup;
	if (g->allocator && !mt_profile_heap(&p)) {
		status = mt_cmd_usage_error(usage,
					    "--allocator needs a trace: '%s' is a "
					    "summary file, whose figures are every "
					    "allocator's", g->path);
		goto cleanup;
	}
	if (g->allocator && !mt_heap_has_allocator(mt_profile_heap(&p), g->allocator)) {
		status = mt_cmd_unknown_allocator(usage, mt_profile_heap(&p),
						  g->path, g->allocator);
		goto cleanup;
	}
	if ((status = mt_cmd_suppress_load(&supp, &o.supp, usage)) >= 0)
		goto cleanup;
	mt_suppress_profile(&supp, &p, &g->left);
	if (mt_cmd_ci_wanted(&o.ci) && mt_gate_ci(&ci, g, &p)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	if (o.ci.format == MT_CMD_FORMAT_GITHUB ?
		    mt_ci_github(&out, &ci) :
		    mt_gate_render(&out, g, &p, &failed, &checked)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	if (o.ci.format == MT_CMD_FORMAT_GITHUB)
		failed = (int)mt_ci_failed(&ci);
	/* The JUnit file first: when it cannot be written, the command
	 * fails before it prints anything, as on any other error. */
	if ((status = mt_cmd_ci_write(&o.ci, &ci)) ||
	    (status = mt_cmd_write(NULL, &out, 0)))
		goto cleanup;
	status = failed ? GATE_FAILED : MT_EXIT_OK;
cleanup:
	mt_buf_release(&out);
	mt_profile_release(&p);
	mt_suppress_release(&supp);
cleanup_args:
	mt_ci_release(&ci);
	return status;
}

const mt_cmd_t mt_cmd_gate = {
	.name = "gate",
	.synopsis = "gate TRACE|SUMMARY",
	.summary = "check a run against budgets: peak, live, allocations",
	.usage = usage,
	.run = mt_gate_cmd,
};
