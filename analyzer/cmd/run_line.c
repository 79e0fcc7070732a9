/*
 * run-line: `memtrace run-line --index I --runs N --exit STATUS
 * [--signal NAME] [--verbose] REPS TRACE [CHILD...]`, memtrace-run's line
 * for run I (mt_run_lines.h): its figures from the last row of REPS, or summed
 * over the run's traces when it left child traces.  It must hold one
 * trace's analysis at a time, as tree does.
 */
#include <stdio.h>
#include <string.h>

#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../gates/mt_run_lines.h"
#include "../rows/mt_tree.h"
#include "../base/mt_units.h"

static const char usage[] =
	"usage: memtrace run-line --index I --runs N --exit STATUS [--signal NAME]\n"
	"                         [--verbose] REPS TRACE [CHILD...]\n"
	"\n"
	"memtrace-run's account of run I of N, from the last row of REPS (the\n"
	"repetitions file) and the run's traces: TRACE, the workload's, then its\n"
	"child traces.  Prints the run's figures for `memtrace run-table` on one\n"
	"line (EXIT STATE [STATUS ALLOCATIONS PEAK LIVE]), then the run's line\n"
	"for a person; with child traces the figures are the tree's, summed.\n"
	"\n"
	"  --index I        the run's number, from 1\n"
	"  --runs N         how many runs there are\n"
	"  --exit STATUS    the workload's exit status, as the shell gave it\n"
	"  --signal NAME    it died of signal NAME (KILL): said instead of STATUS\n"
	"  -v, --verbose    also a line per process, when there are child traces\n"
	"\n"
	"Exit 0, 2 REPS is not a repetitions file, 3 a file cannot be read, 4 out\n"
	"of memory, 64 usage.\n";

enum { OPT_INDEX = MT_CMD_OPT_OWN, OPT_RUNS, OPT_EXIT, OPT_SIGNAL };

static const struct option options[] = {
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "runs", required_argument, NULL, OPT_RUNS },
	{ "exit", required_argument, NULL, OPT_EXIT },
	{ "signal", required_argument, NULL, OPT_SIGNAL },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	uint64_t index, runs, exit;
	const char *signal;
	int have_index, have_runs, have_exit, verbose;
} opts_t;

static int option(void *ctx, int c, const char *arg)
{
	opts_t *o = ctx;

	switch (c) {
	case 'v':
		o->verbose = 1;
		return -1;
	case OPT_SIGNAL:
		if (!*arg || strchr(arg, ' '))
			return mt_cmd_usage_error(usage, "--signal needs a "
						  "signal's name, not '%s'", arg);
		o->signal = arg;
		return -1;
	default:
		break;
	}
	if (mt_units_parse_count(arg, c == OPT_INDEX ? &o->index :
				 c == OPT_RUNS ? &o->runs : &o->exit))
		return mt_cmd_usage_error(usage, "--%s needs a whole number, "
					  "not '%s'", c == OPT_INDEX ? "index" :
					  c == OPT_RUNS ? "runs" : "exit", arg);
	if (c == OPT_INDEX)
		o->have_index = 1;
	else if (c == OPT_RUNS)
		o->have_runs = 1;
	else
		o->have_exit = 1;
	return -1;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* "  NAME: N allocations, peak SIZE, STATUS", or "  NAME: invalid". */
static int add_process(mt_buf_t *b, const char *path, const mt_analysis_t *a)
{
	size_t mark = b->len;
	int rc;

	if ((rc = mt_buf_add_str(b, "  ")) ||
	    (rc = mt_buf_add_str(b, base_name(path))) ||
	    (rc = mt_buf_add_str(b, ": ")) ||
	    (rc = a->integrity.invalid ?
			  mt_buf_add_str(b, "invalid") :
			  mt_run_lines_add_figures(b, a->heap.allocations,
					      a->heap.peak_live_bytes,
					      mt_integrity_status(&a->integrity))) ||
	    (rc = mt_buf_add_str(b, "\n")))
		mt_buf_truncate(b, mark);
	return rc;
}

/* The tree of argv[0..n): its sum into *t, and a line per process into
 * procs (under --verbose).  -1, or the status after saying why. */
static int sum_tree(mt_tree_t *t, char **argv, int n, int verbose,
		    mt_buf_t *procs)
{
	for (int i = 0; i < n; i++) {
		mt_analysis_t a;
		int status, rc = MT_OK;

		if ((status = mt_cmd_analyze(&a, argv[i], NULL, NULL)) >= 0) {
			mt_analysis_release(&a);
			return status;
		}
		mt_tree_add(t, argv[i], &a);
		if (verbose)
			rc = add_process(procs, argv[i], &a);
		mt_analysis_release(&a);
		if (rc)
			return mt_cmd_nomem();
	}
	return -1;
}

static int run(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.shorts = "v",
		.options = options,
		.option = option,
		.args = { "REPS", "TRACE" },
		.more = 1,
	};
	opts_t o = { 0 };
	mt_run_lines_row_t row;
	mt_tree_t t = MT_TREE_INIT;
	mt_buf_t out = MT_BUF_INIT, procs = MT_BUF_INIT;
	char why[MT_RUN_LINES_WHY_MAX];
	int status, first, err = 0, rc, children;
	uint64_t fig[3];
	const char *state;

	if ((status = mt_cmd_parse(&spec, &o, argc, argv, &first)) >= 0)
		return status;
	if (!o.have_index || !o.have_runs || !o.have_exit)
		return mt_cmd_usage_error(usage, "%s", "--index, --runs and "
					  "--exit are required");
	rc = mt_run_lines_last_row(argv[first], &row, &err, why, sizeof(why));
	if (rc == MT_ENOMEM)
		return mt_cmd_nomem();
	if (rc == MT_EIO)
		return mt_cmd_cannot_read(argv[first], err);
	if (rc) {
		fprintf(stderr, "memtrace: '%s' is not a repetitions file: %s\n",
			argv[first], why);
		return MT_EXIT_INVALID;
	}
	state = row.state[0] ? row.state : NULL;
	children = argc - first - 2;
	fig[0] = row.allocations;
	fig[1] = row.peak_live_bytes;
	fig[2] = row.live_bytes;
	if (state && !strcmp(state, "summary_written") && children > 0) {
		if ((status = sum_tree(&t, argv + first + 1, argc - first - 1,
				       o.verbose, &procs)) >= 0) {
			mt_buf_release(&procs);
			return status; /* said already */
		}
		fig[0] = t.allocations;
		fig[1] = t.peak_live_bytes;
		fig[2] = t.live_bytes;
	}
	/* The figures for run-table. */
	if (mt_buf_add_u64(&out, o.exit) || mt_buf_add_str(&out, " ") ||
	    mt_buf_add_str(&out, state ? state : "-"))
		goto cleanup;
	if (state && !strcmp(state, "summary_written"))
		for (int i = -1; i < 3; i++)
			if (mt_buf_add_str(&out, " ") ||
			    (i < 0 ? mt_buf_add_str(&out, row.status) :
				     mt_buf_add_u64(&out, fig[i])))
				goto cleanup;
	/* The run's line. */
	if (mt_buf_add_str(&out, "\nrun ") || mt_buf_add_u64(&out, o.index) ||
	    mt_buf_add_str(&out, "/") || mt_buf_add_u64(&out, o.runs) ||
	    mt_buf_add_str(&out, o.signal ? ": killed by SIG" : ": exit "))
		goto cleanup;
	if (o.signal ? mt_buf_add_str(&out, o.signal) :
		       mt_buf_add_u64(&out, o.exit))
		goto cleanup;
	if (!state) {
		rc = mt_buf_add_str(&out, ", no row\n");
	} else if (strcmp(state, "summary_written")) {
		rc = mt_buf_add_str(&out, ", ") || mt_buf_add_str(&out, state) ||
		     mt_buf_add_str(&out,
				    !strcmp(state, "workload_failed") ?
					    " (trace not summarized)\n" :
				    !strcmp(state, "capture_missing") ?
					    " (no trace: a static or set-user-ID program?)\n" :
					    "\n");
	} else if (children <= 0) {
		rc = mt_buf_add_str(&out, ", ") ||
		     mt_run_lines_add_figures(&out, fig[0], fig[1], row.status) ||
		     mt_buf_add_str(&out, "\n");
	} else {
		rc = mt_buf_add_str(&out, ", ") ||
		     mt_buf_add_u64(&out, t.processes) ||
		     mt_buf_add_str(&out, " processes: ") ||
		     mt_run_lines_add_figures(&out, fig[0], fig[1],
					 t.status ? t.status : "complete") ||
		     (t.status && (mt_buf_add_str(&out, " in ") ||
				   mt_buf_add_str(&out, base_name(t.trace)))) ||
		     mt_buf_add_str(&out, " (") ||
		     mt_buf_add_str(&out, base_name(argv[first + 1])) ||
		     mt_buf_add_str(&out, " and ") ||
		     mt_units_add_count(&out, (uint64_t)children, "child trace",
					"child traces") ||
		     mt_buf_add_str(&out, ")\n") ||
		     mt_buf_add(&out, procs.data, procs.len);
	}
	if (!rc) {
		status = mt_cmd_write(NULL, &out, 0); /* says why itself */
		goto done;
	}
cleanup:
	status = mt_cmd_nomem();
done:
	mt_buf_release(&procs);
	mt_buf_release(&out);
	return status;
}

const mt_cmd_t mt_cmd_run_line = {
	.name = "run-line",
	.synopsis = "run-line REPS TRACE",
	.summary = "memtrace-run's line for one run",
	.usage = usage,
	.run = run,
};
