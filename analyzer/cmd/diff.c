/*
 * diff: `memtrace diff BASE NEW [--threshold PCT] [--top N] [--json]
 * [--junit FILE] [--format FORMAT]`,
 * two runs side by side (mt_diff).  It must never call a regression on
 * input it could not read: bad input is its own exit status.
 */
#include "../cmd/mt_cmd.h"
#include "../gates/mt_diff.h"
#include "../base/mt_error.h"
#include "../gates/mt_profile.h"
#include "../base/mt_units.h"

#define DIFF_REGRESSED 1
#define DEFAULT_TOP 10
/* The growth allowed by default: 1% of BASE and 1 KiB, both.  Repeated
 * runs of real programs (a bash pipeline, perl, python3 through a pyenv
 * shim) differ by 3 to 2,000 bytes, at most 0.06% of their peak: 1% is
 * over fifteen times that, and the floor keeps a small program's few bytes
 * (3 B of a 300 B peak is 1%) from reading as a regression. */
#define DEFAULT_THRESHOLD 1000 /* thousandths of a percent */
#define DEFAULT_MIN_GROWTH 1024

static const char usage[] =
	"usage: memtrace diff BASE NEW [--threshold PCT] [--min-growth SIZE]\n"
	"                     [--top N] [--json]\n"
	"                     [--suppressions FILE] [--no-default-suppressions]\n"
	"                     [--junit FILE] [--format FORMAT]\n"
	"\n"
	"Compare two runs, each a trace or a summary file: the totals, then the\n"
	"sites (matched by their symbolized stacks) that changed, by growth.\n"
	"\n"
	"  --threshold PCT  growth of peak_live_bytes or live_bytes allowed, in\n"
	"                   percent of BASE (default 1)\n"
	"  --min-growth SIZE\n"
	"                   and in bytes (default 1K): a figure regresses when it\n"
	"                   grows by more than both (growth from 0 always does);\n"
	"                   --threshold 0 --min-growth 0: any growth fails\n"
	"  --top N          changed sites to list (default 10; 0: none)\n"
	"  --json           one JSON object instead of text\n"
	MT_CMD_SUPPRESS_USAGE
	MT_CMD_CI_USAGE
	MT_CMD_THREADS_USAGE
	"\n"
	"Exit 0 when neither grew beyond both, 1 when one did, 2 not valid\n"
	"evidence, 3 missing, 4 out of memory, 64 usage, 73 an output cannot\n"
	"be written.\n";

enum { OPT_THRESHOLD = MT_CMD_OPT_OWN, OPT_JSON, OPT_MIN_GROWTH };

static const struct option options[] = {
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "min-growth", required_argument, NULL, OPT_MIN_GROWTH },
	{ "top", required_argument, NULL, MT_CMD_OPT_TOP },
	{ "json", no_argument, NULL, OPT_JSON },
	MT_CMD_SUPPRESS_OPTIONS,
	MT_CMD_CI_OPTIONS,
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	mt_diff_t d;
	mt_cmd_suppress_opts_t supp;
	mt_cmd_ci_opts_t ci;
} diff_opts_t;

static int option(void *ctx, int c, const char *arg)
{
	diff_opts_t *opts = ctx;
	mt_diff_t *o = &opts->d;
	int taken;

	if (mt_cmd_suppress_option(&opts->supp, c, arg) == -1)
		return -1;
	if ((taken = mt_cmd_ci_option(&opts->ci, usage, c, arg)) != MT_CMD_NOT_HERE)
		return taken;
	switch (c) {
	case OPT_JSON:
		o->json = 1;
		break;
	case OPT_THRESHOLD:
		if (mt_units_parse_pct(arg, &o->threshold))
			return mt_cmd_usage_error(usage,
						  "--threshold needs a percentage "
						  "(0 or more, at most three "
						  "decimals), not '%s'", arg);
		break;
	case OPT_MIN_GROWTH:
		if (mt_units_parse_size(arg, &o->min_growth))
			return mt_cmd_usage_error(usage,
						  "--min-growth needs a size: "
						  "bytes, or with K, M or G "
						  "(1024-based; KB is ambiguous), "
						  "not '%s'", arg);
		break;
	default: /* --top */
		if (mt_units_parse_count(arg, &o->top))
			return mt_cmd_usage_error(usage,
						  "--top needs a number, not '%s'",
						  arg);
		break;
	}
	return -1;
}

int mt_diff_cmd(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.options = options,
		.option = option,
		.args = { "BASE", "NEW" },
	};
	diff_opts_t opts = { .d = { .top = DEFAULT_TOP,
				    .threshold = DEFAULT_THRESHOLD,
				    .min_growth = DEFAULT_MIN_GROWTH } };
	mt_diff_t *o = &opts.d;
	mt_suppress_t supp = MT_SUPPRESS_INIT;
	mt_profile_t base, now;
	mt_buf_t out = MT_BUF_INIT;
	mt_ci_t ci;
	int status, first, have_base = 0, have_now = 0, regressed;

	mt_cmd_ci_start(&opts.ci);
	mt_ci_init(&ci, "diff");
	if ((status = mt_cmd_parse(&spec, &opts, argc, argv, &first)) >= 0)
		goto cleanup;
	if (o->json && opts.ci.format == MT_CMD_FORMAT_GITHUB) {
		status = mt_cmd_usage_error(usage, "%s", "--json and --format "
					    "github are two outputs for standard "
					    "output: give one");
		goto cleanup;
	}
	o->base_path = argv[first];
	o->new_path = argv[first + 1];
	if ((status = mt_cmd_suppress_load(&supp, &opts.supp, usage)) >= 0)
		goto cleanup;
	have_base = 1;
	if ((status = mt_cmd_load_profile(&base, o->base_path)) >= 0)
		goto cleanup;
	have_now = 1;
	if ((status = mt_cmd_load_profile(&now, o->new_path)) >= 0)
		goto cleanup;
	mt_suppress_profile(&supp, &base, &o->left[0]);
	mt_suppress_profile(&supp, &now, &o->left[1]);
	if (mt_cmd_ci_wanted(&opts.ci) && mt_diff_ci(&ci, o, &base, &now)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	if (opts.ci.format == MT_CMD_FORMAT_GITHUB) {
		regressed = mt_ci_failed(&ci) != 0;
		if (mt_ci_github(&out, &ci)) {
			status = mt_cmd_nomem();
			goto cleanup;
		}
	} else if (mt_diff_render(&out, o, &base, &now, &regressed)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	/* The JUnit file first: when it cannot be written, the command
	 * fails before it prints anything, as on any other error. */
	if ((status = mt_cmd_ci_write(&opts.ci, &ci)) ||
	    (status = mt_cmd_write(NULL, &out, 0)))
		goto cleanup;
	status = regressed ? DIFF_REGRESSED : MT_EXIT_OK;
cleanup:
	mt_buf_release(&out);
	if (have_now)
		mt_profile_release(&now);
	if (have_base)
		mt_profile_release(&base);
	mt_suppress_release(&supp);
	mt_ci_release(&ci);
	return status;
}

const mt_cmd_t mt_cmd_diff = {
	.name = "diff",
	.synopsis = "diff BASE NEW",
	.summary = "compare two runs: totals, and sites by growth",
	.usage = usage,
	.run = mt_diff_cmd,
};
