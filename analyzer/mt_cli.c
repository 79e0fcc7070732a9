/*
 * mt_cli: the command line: commands check, summary, capture and
 * repetition live here; report, flamegraph, plot, gate, diff and
 * repetitions in their own modules, dispatched from here.  Each command
 * computes everything first and writes last, so an error (out of memory
 * above all) leaves no output behind.  It must never exit() or abort on
 * bad input: every path returns a status.
 */
#include "mt_cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_analysis.h"
#include "mt_buf.h"
#include "mt_diff.h"
#include "mt_error.h"
#include "mt_flame.h"
#include "mt_gate.h"
#include "mt_mem.h"
#include "mt_output.h"
#include "mt_plot.h"
#include "mt_repetitions.h"
#include "mt_report.h"
#include "mt_rows.h"
#include "mt_summary.h"
#include "mt_tree.h"

#ifndef MT_VERSION
#define MT_VERSION "0.1.0"
#endif

#define DEFAULT_TOP 10

static const char usage_main[] =
	"usage: memtrace <command> [<args>]\n"
	"\n"
	"Commands:\n"
	"  check TRACE          print the integrity verdict of a trace\n"
	"  summary TRACE        write the summary line and the top sites\n"
	"  tree TRACE...        the traces of a process tree summed, and a line each\n"
	"  capture              judge a workload's trace and write its capture row\n"
	"  repetition           record one repetition row of a workload run\n"
	"  gate TRACE|SUMMARY   check a run against budgets: peak, live, allocations\n"
	"  diff BASE NEW        compare two runs: totals, and sites by growth\n"
	"  repetitions FILE     min, median, max and spread of a workload's runs\n"
	"  report TRACE         a report to read: verdict, totals, top sites, lines\n"
	"  flamegraph TRACE     folded stacks for flamegraph.pl, inferno, speedscope\n"
	"  plot TRACE -o SVG    the live heap over time as a self-contained SVG\n"
	"\n"
	"Run 'memtrace <command> --help' for a command's options.\n"
	"Exit status: 0 done, 1 caveated trace (check, --strict) or a failed\n"
	"verdict (gate, diff, repetitions), 2 not valid evidence,\n"
	"3 trace missing or unreadable, 4 out of memory, 64 usage error,\n"
	"73 an output cannot be written.\n";

static const char usage_check[] =
	"usage: memtrace check TRACE\n"
	"\n"
	"Print the verdict on TRACE as one JSON line: status, message, caveats.\n"
	"Exit 0 when complete, 1 when caveated, 2 when not valid evidence,\n"
	"3 when missing or unreadable.\n";

static const char usage_summary[] =
	"usage: memtrace summary TRACE [--top N] [--include-zero-live] [--strict] [-o FILE]\n"
	"\n"
	"  --top N              site lines after the summary line (default 10;\n"
	"                       0 writes the summary line alone)\n"
	"  --include-zero-live  also list allocators and sites with no live bytes\n"
	"  --strict             exit 1 when the trace is not complete\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n";

static const char usage_tree[] =
	"usage: memtrace tree TRACE... [--strict] [-o FILE]\n"
	"\n"
	"Sum the traces of a process tree (the workload's first, then its\n"
	"children's and the images they exec) into one memtrace.tree/v1 line,\n"
	"then write one memtrace.process/v1 line per trace, in the order given.\n"
	"peak_live_bytes is the sum of each process's own peak.\n"
	"  --strict             exit 1 when a trace is caveated, 2 when one is\n"
	"                       not valid evidence\n"
	"  -o, --output FILE    write to FILE (replaced whole) instead of stdout\n";

static const char usage_capture[] =
	"usage: memtrace capture --capture TRACE --summary SUMMARY [--exit-code C]\n"
	"                        [--append FILE] [--strict]\n"
	"\n"
	"Write TRACE's summary (--top 0 --include-zero-live) to SUMMARY and one\n"
	"capture row to stdout, or appended to FILE.  When C is not 0 the workload\n"
	"failed: nothing is written.  Exits 0 once the row is written, whatever its\n"
	"state; with --strict, the trace's status decides (0, 1, 2 or 3).\n";

static const char usage_repetition[] =
	"usage: memtrace repetition --capture TRACE --out FILE --index I\n"
	"                           [--exit-code C] [--strict]\n"
	"\n"
	"Write one repetition row for run I (from 1) of a workload: it replaces\n"
	"FILE when I is 1 and is appended to it otherwise.  Exits 0 once the row\n"
	"is written, whatever its state; with --strict, the trace's status decides.\n";

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
	fputs("memtrace: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n\n", stderr);
	fputs(usage, stderr);
	return MT_EXIT_USAGE;
}

static int nomem(void)
{
	fputs("memtrace: out of memory\n", stderr);
	return MT_EXIT_NOMEM;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* Run an analysis for check and summary; reports failures itself.
 * Returns -1 to go on, else the exit status. */
static int analyze(mt_analysis_t *a, const char *path)
{
	int rc = mt_analysis_run(a, path);

	if (rc == MT_ENOMEM)
		return nomem();
	if (rc == MT_EIO) {
		fprintf(stderr, "memtrace: cannot read '%s': %s\n", path,
			strerror(a->error_errno));
		return MT_EXIT_MISSING;
	}
	return -1;
}

static int verdict_status(const mt_integrity_t *ig)
{
	if (ig->invalid)
		return MT_EXIT_INVALID;
	return mt_integrity_complete(ig) ? MT_EXIT_OK : MT_EXIT_CAVEATED;
}

static int write_output(const char *path, const mt_buf_t *b, int append)
{
	int rc;

	if (!path)
		rc = mt_output_stdout(b->data, b->len);
	else if (append)
		rc = mt_output_append(path, b->data, b->len);
	else
		rc = mt_output_replace(path, b->data, b->len);
	if (rc == MT_ENOMEM)
		return nomem();
	if (rc) {
		fprintf(stderr, "memtrace: cannot write '%s': %s\n",
			path ? path : "standard output", strerror(errno));
		return MT_EXIT_CANTCREAT;
	}
	return MT_EXIT_OK;
}

enum {
	OPT_TOP = 256, OPT_ZERO, OPT_STRICT, OPT_CAPTURE, OPT_SUMMARY,
	OPT_EXIT_CODE, OPT_APPEND, OPT_OUT, OPT_INDEX, OPT_HELP,
};

static const struct option long_options[] = {
	{ "top", required_argument, NULL, OPT_TOP },
	{ "include-zero-live", no_argument, NULL, OPT_ZERO },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "output", required_argument, NULL, 'o' },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "summary", required_argument, NULL, OPT_SUMMARY },
	{ "exit-code", required_argument, NULL, OPT_EXIT_CODE },
	{ "append", required_argument, NULL, OPT_APPEND },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	const char *usage;
	unsigned allowed; /* bit per option (OPT_* - OPT_TOP), and 'o' */
	uint64_t top;
	int include_zero_live, strict, help;
	const char *output, *capture, *summary, *append, *out;
	int64_t exit_code;
	uint64_t index;
	int have_index;
	const char *positional;
} opts_t;

#define ALLOW(o) (1u << ((o) - OPT_TOP))
#define ALLOW_O (1u << 31)

/* Returns -1 when the options are fine, else the exit status; the
 * positional arguments are argv[optind..argc), npositional of them (-1:
 * one or more). */
static int parse_options(opts_t *o, int argc, char **argv, int npositional)
{
	int c, idx = -1;

	o->top = DEFAULT_TOP;
	optind = 0; /* glibc: start afresh, so the CLI can run again */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", long_options, &idx)) != -1) {
		unsigned bit = c == 'o' ? ALLOW_O :
			       c >= OPT_TOP ? ALLOW(c) : 0;
		char name[32];

		/* argv[optind - 1] is the option's value when it has one. */
		if (idx >= 0)
			snprintf(name, sizeof(name), "--%s",
				 long_options[idx].name);
		else
			snprintf(name, sizeof(name), "-%c", c);
		idx = -1;

		if (c == '?')
			return usage_error(o->usage, "unknown option '%s'",
					   argv[optind - 1]);
		if (c == ':')
			return usage_error(o->usage, "option '%s' needs a value",
					   argv[optind - 1]);
		if (!(o->allowed & bit) && c != OPT_HELP)
			return usage_error(o->usage,
					   "option '%s' does not apply here",
					   name);
		switch (c) {
		case OPT_HELP:
			o->help = 1;
			break;
		case OPT_TOP:
			if (parse_u64(optarg, &o->top))
				return usage_error(o->usage,
						   "--top needs a number, not '%s'",
						   optarg);
			break;
		case OPT_ZERO:
			o->include_zero_live = 1;
			break;
		case OPT_STRICT:
			o->strict = 1;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_CAPTURE:
			o->capture = optarg;
			break;
		case OPT_SUMMARY:
			o->summary = optarg;
			break;
		case OPT_APPEND:
			o->append = optarg;
			break;
		case OPT_OUT:
			o->out = optarg;
			break;
		case OPT_EXIT_CODE:
			if (parse_i64(optarg, &o->exit_code))
				return usage_error(o->usage,
						   "--exit-code needs an integer, not '%s'",
						   optarg);
			break;
		case OPT_INDEX:
			if (parse_u64(optarg, &o->index))
				return usage_error(o->usage,
						   "--index needs a number, not '%s'",
						   optarg);
			o->have_index = 1;
			break;
		}
	}
	if (o->help) {
		fputs(o->usage, stdout);
		return MT_EXIT_OK;
	}
	/* npositional < 0: one or more. */
	if (npositional >= 0 && argc - optind > npositional)
		return usage_error(o->usage, "unexpected argument '%s'",
				   argv[optind + npositional]);
	if (argc - optind < (npositional < 0 ? 1 : npositional))
		return usage_error(o->usage, "%s", "missing TRACE argument");
	if (npositional)
		o->positional = argv[optind];
	return -1;
}

static int cmd_check(int argc, char **argv)
{
	opts_t o = { .usage = usage_check };
	mt_analysis_t a;
	mt_buf_t out = MT_BUF_INIT;
	int status;

	if ((status = parse_options(&o, argc, argv, 1)) >= 0)
		return status;
	if ((status = analyze(&a, o.positional)) >= 0)
		goto cleanup;
	if (mt_summary_render_check(&a, &out)) {
		status = nomem();
		goto cleanup;
	}
	status = write_output(NULL, &out, 0);
	if (!status)
		status = verdict_status(&a.integrity);
cleanup:
	mt_buf_release(&out);
	mt_analysis_release(&a);
	return status;
}

static int cmd_summary(int argc, char **argv)
{
	opts_t o = { .usage = usage_summary,
		     .allowed = ALLOW(OPT_TOP) | ALLOW(OPT_ZERO) |
				ALLOW(OPT_STRICT) | ALLOW_O };
	mt_analysis_t a;
	mt_buf_t out = MT_BUF_INIT;
	int status, rc;

	if ((status = parse_options(&o, argc, argv, 1)) >= 0)
		return status;
	if ((status = analyze(&a, o.positional)) >= 0)
		goto cleanup;
	if (a.integrity.invalid) {
		fprintf(stderr,
			"memtrace: '%s' is not valid memtrace evidence: %s\n",
			o.positional, a.integrity.invalid_message);
		status = MT_EXIT_INVALID;
		goto cleanup;
	}
	rc = mt_summary_render(&a, o.top, o.include_zero_live, &out);
	if (rc == MT_ETOOLONG) {
		fprintf(stderr,
			"memtrace: the summary of '%s' is longer than %d bytes\n",
			o.positional, MT_SUMMARY_LINE_MAX);
		status = MT_EXIT_INVALID;
		goto cleanup;
	}
	if (rc) {
		status = nomem();
		goto cleanup;
	}
	status = write_output(o.output, &out, 0);
	if (!status && o.strict)
		status = verdict_status(&a.integrity);
cleanup:
	mt_buf_release(&out);
	mt_analysis_release(&a);
	return status;
}

static int cmd_tree(int argc, char **argv)
{
	opts_t o = { .usage = usage_tree, .allowed = ALLOW(OPT_STRICT) | ALLOW_O };
	mt_tree_t t = MT_TREE_INIT;
	mt_buf_t lines = MT_BUF_INIT, out = MT_BUF_INIT;
	int status, first;

	if ((status = parse_options(&o, argc, argv, -1)) >= 0)
		return status;
	first = optind;
	/* One trace at a time: memory is one trace's, whatever the tree. */
	for (int i = first; i < argc; i++) {
		mt_analysis_t a;

		if ((status = analyze(&a, argv[i])) >= 0)
			goto cleanup;
		mt_tree_add(&t, argv[i], &a);
		if (mt_tree_render_process(argv[i], &a, &lines)) {
			mt_analysis_release(&a);
			status = nomem();
			goto cleanup;
		}
		mt_analysis_release(&a);
	}
	if (mt_tree_render(&t, &out) || mt_buf_add(&out, lines.data, lines.len)) {
		status = nomem();
		goto cleanup;
	}
	status = write_output(o.output, &out, 0);
	if (!status && o.strict)
		status = t.invalid ? MT_EXIT_INVALID :
			 t.caveated ? MT_EXIT_CAVEATED : MT_EXIT_OK;
cleanup:
	mt_buf_release(&lines);
	mt_buf_release(&out);
	return status;
}

/* --strict for the row commands: the trace's status is the exit status. */
static int row_status(const mt_row_judgement_t *j)
{
	switch (j->outcome) {
	case MT_ROW_CAPTURE_MISSING:
		return MT_EXIT_MISSING;
	case MT_ROW_SUMMARY_INVALID:
		return MT_EXIT_INVALID;
	default:
		return verdict_status(&j->analysis.integrity);
	}
}

/* The row says summary_invalid; stderr says why. */
static void note_invalid(const mt_row_judgement_t *j, const char *path)
{
	if (j->outcome != MT_ROW_SUMMARY_INVALID)
		return;
	if (j->read_errno)
		fprintf(stderr, "memtrace: cannot read '%s': %s\n", path,
			strerror(j->read_errno));
	else if (j->why)
		fprintf(stderr, "memtrace: '%s' is not valid memtrace evidence: %s\n",
			path, j->why);
}

static int cmd_capture(int argc, char **argv)
{
	opts_t o = { .usage = usage_capture,
		     .allowed = ALLOW(OPT_CAPTURE) | ALLOW(OPT_SUMMARY) |
				ALLOW(OPT_EXIT_CODE) | ALLOW(OPT_APPEND) |
				ALLOW(OPT_STRICT) };
	mt_row_judgement_t j;
	mt_buf_t row = MT_BUF_INIT;
	int status, have_j = 0;

	if ((status = parse_options(&o, argc, argv, 0)) >= 0)
		return status;
	if (!o.capture)
		return usage_error(o.usage, "%s", "--capture TRACE is required");
	if (!o.summary)
		return usage_error(o.usage, "%s", "--summary SUMMARY is required");
	if (o.exit_code != 0)
		return MT_EXIT_OK; /* the workload failed: nothing to judge */
	have_j = 1;
	if (mt_rows_judge(&j, o.capture) || mt_rows_capture(&row, &j, o.capture,
							    o.summary)) {
		status = nomem();
		goto cleanup;
	}
	note_invalid(&j, o.capture);
	/* Everything is rendered; only now is anything written. */
	if (j.outcome == MT_ROW_SUMMARY_WRITTEN &&
	    (status = write_output(o.summary, &j.summary, 0)))
		goto cleanup;
	if ((status = write_output(o.append, &row, 1)))
		goto cleanup;
	status = o.strict ? row_status(&j) : MT_EXIT_OK;
cleanup:
	mt_buf_release(&row);
	if (have_j)
		mt_rows_judgement_release(&j);
	return status;
}

static int cmd_repetition(int argc, char **argv)
{
	opts_t o = { .usage = usage_repetition,
		     .allowed = ALLOW(OPT_CAPTURE) | ALLOW(OPT_OUT) |
				ALLOW(OPT_INDEX) | ALLOW(OPT_EXIT_CODE) |
				ALLOW(OPT_STRICT) };
	mt_row_judgement_t j;
	mt_buf_t row = MT_BUF_INIT;
	int status, have_j = 0;

	if ((status = parse_options(&o, argc, argv, 0)) >= 0)
		return status;
	if (!o.capture)
		return usage_error(o.usage, "%s", "--capture TRACE is required");
	if (!o.out)
		return usage_error(o.usage, "%s", "--out FILE is required");
	if (!o.have_index)
		return usage_error(o.usage, "%s", "--index I is required");
	if (o.index == 0)
		return usage_error(o.usage, "%s",
				   "--index counts runs from 1; 0 is not a run");
	if (o.exit_code == 0) {
		have_j = 1;
		if (mt_rows_judge(&j, o.capture)) {
			status = nomem();
			goto cleanup;
		}
		note_invalid(&j, o.capture);
	}
	if (mt_rows_repetition(&row, have_j ? &j : NULL, o.index, o.exit_code)) {
		status = nomem();
		goto cleanup;
	}
	if ((status = write_output(o.out, &row, o.index > 1)))
		goto cleanup;
	status = o.strict && have_j ? row_status(&j) :
		 o.strict ? MT_EXIT_CAVEATED : MT_EXIT_OK;
cleanup:
	mt_buf_release(&row);
	if (have_j)
		mt_rows_judgement_release(&j);
	return status;
}

int mt_cli_main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2)
		return usage_error(usage_main, "%s", "no command given");
	cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage_main, stdout);
		return MT_EXIT_OK;
	}
	if (!strcmp(cmd, "--version")) {
		fputs("memtrace " MT_VERSION "\n", stdout);
		return MT_EXIT_OK;
	}
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(cmd, "summary"))
		return cmd_summary(argc - 1, argv + 1);
	if (!strcmp(cmd, "tree"))
		return cmd_tree(argc - 1, argv + 1);
	if (!strcmp(cmd, "capture"))
		return cmd_capture(argc - 1, argv + 1);
	if (!strcmp(cmd, "repetition"))
		return cmd_repetition(argc - 1, argv + 1);
	if (!strcmp(cmd, "gate"))
		return mt_gate_cmd(argc - 1, argv + 1);
	if (!strcmp(cmd, "diff"))
		return mt_diff_cmd(argc - 1, argv + 1);
	if (!strcmp(cmd, "repetitions"))
		return mt_repetitions_cmd(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return mt_report_cmd(argc - 1, argv + 1);
	if (!strcmp(cmd, "flamegraph"))
		return mt_flame_cmd(argc - 1, argv + 1);
	if (!strcmp(cmd, "plot"))
		return mt_plot_cmd(argc - 1, argv + 1);
	return usage_error(usage_main, "unknown command '%s'", cmd);
}
