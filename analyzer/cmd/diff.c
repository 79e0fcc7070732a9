/*
 * diff: `memtrace diff BASE NEW [--threshold PCT] [--top N] [--json]`,
 * two runs side by side (mt_diff).  It must never call a regression on
 * input it could not read: bad input is its own exit status.
 */
#include "../mt_cmd.h"
#include "../mt_diff.h"
#include "../mt_error.h"
#include "../mt_profile.h"
#include "../mt_units.h"

#define DIFF_REGRESSED 1
#define DEFAULT_TOP 10

static const char usage[] =
	"usage: memtrace diff BASE NEW [--threshold PCT] [--top N] [--json]\n"
	"\n"
	"Compare two runs, each a trace or a summary file: the totals, then the\n"
	"sites (matched by their symbolized stacks) that changed, by growth.\n"
	"\n"
	"  --threshold PCT  growth of peak_live_bytes or live_bytes allowed, in\n"
	"                   percent of BASE (default 0: any growth fails)\n"
	"  --top N          changed sites to list (default 10; 0: none)\n"
	"  --json           one JSON object instead of text\n"
	"\n"
	"Exit 0 when neither grew beyond PCT, 1 when one did, 2 not valid\n"
	"evidence, 3 missing, 4 out of memory, 64 usage.\n";

enum { OPT_THRESHOLD = MT_CMD_OPT_OWN, OPT_JSON };

static const struct option options[] = {
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "top", required_argument, NULL, MT_CMD_OPT_TOP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int option(void *ctx, int c, const char *arg)
{
	mt_diff_t *o = ctx;

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
	mt_diff_t o = { .top = DEFAULT_TOP };
	mt_profile_t base, now;
	mt_buf_t out = MT_BUF_INIT;
	int status, first, have_base = 0, have_now = 0, regressed;

	if ((status = mt_cmd_parse(&spec, &o, argc, argv, &first)) >= 0)
		return status;
	o.base_path = argv[first];
	o.new_path = argv[first + 1];
	have_base = 1;
	if ((status = mt_cmd_load_profile(&base, o.base_path)) >= 0)
		goto cleanup;
	have_now = 1;
	if ((status = mt_cmd_load_profile(&now, o.new_path)) >= 0)
		goto cleanup;
	if (mt_diff_render(&out, &o, &base, &now, &regressed)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	if ((status = mt_cmd_write(NULL, &out, 0)))
		goto cleanup;
	status = regressed ? DIFF_REGRESSED : MT_EXIT_OK;
cleanup:
	mt_buf_release(&out);
	if (have_now)
		mt_profile_release(&now);
	if (have_base)
		mt_profile_release(&base);
	return status;
}

const mt_cmd_t mt_cmd_diff = {
	.name = "diff",
	.synopsis = "diff BASE NEW",
	.summary = "compare two runs: totals, and sites by growth",
	.usage = usage,
	.run = mt_diff_cmd,
};
