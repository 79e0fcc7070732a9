/*
 * mt_gate: budgets over a trace or a summary.  It must never let a budget
 * pass on input it could not read (bad input is its own exit status, never
 * 0 or 1), and never print half a report.
 */
#include "mt_gate.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "mt_buf.h"
#include "mt_error.h"
#include "mt_output.h"
#include "mt_profile.h"
#include "mt_units.h"

#define GATE_FAILED 1
/* Frames shown under a failed budget: enough to know the place. */
#define HINT_FRAMES 4

static const char usage[] =
	"usage: memtrace gate TRACE|SUMMARY [--max-peak SIZE] [--max-live SIZE]\n"
	"                     [--max-allocations N] [--max-temporary N]\n"
	"                     [--require-complete]\n"
	"\n"
	"Check a trace, or a summary file written earlier, against budgets: one\n"
	"line per budget on stdout, then the verdict.\n"
	"\n"
	"  --max-peak SIZE      peak_live_bytes at most SIZE\n"
	"  --max-live SIZE      live_bytes (live at exit: leaked) at most SIZE\n"
	"  --max-allocations N  allocations at most N\n"
	"  --max-temporary N    temporary_allocations at most N\n"
	"  --require-complete   the trace's status must be complete\n"
	"\n"
	"SIZE is bytes, or a number with K, M or G (1024-based: 16K is 16384,\n"
	"1.5M is 1572864; KiB, MiB, GiB too).  Exit 0 when every budget holds,\n"
	"1 when one fails, 2 not valid evidence, 3 missing, 4 out of memory,\n"
	"64 usage.\n";

typedef enum { B_PEAK, B_LIVE, B_ALLOCATIONS, B_TEMPORARY, B_COUNT } budget_t;

static const struct {
	const char *option;
	mt_profile_field_t field;
	int is_size;
} budgets[B_COUNT] = {
	[B_PEAK] = { "--max-peak", MT_PF_PEAK_LIVE_BYTES, 1 },
	[B_LIVE] = { "--max-live", MT_PF_LIVE_BYTES, 1 },
	[B_ALLOCATIONS] = { "--max-allocations", MT_PF_ALLOCATIONS, 0 },
	[B_TEMPORARY] = { "--max-temporary", MT_PF_TEMPORARY_ALLOCATIONS, 0 },
};

typedef struct {
	int given[B_COUNT];
	uint64_t limit[B_COUNT];
	int require_complete;
	const char *path;
} gate_opts_t;

static int usage_error(const char *fmt, const char *arg)
{
	fputs("memtrace: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n\n", stderr);
	fputs(usage, stderr);
	return MT_EXIT_USAGE;
}

enum { OPT_PEAK = 256, OPT_LIVE, OPT_ALLOCATIONS, OPT_TEMPORARY, OPT_COMPLETE,
       OPT_HELP };

static const struct option long_options[] = {
	{ "max-peak", required_argument, NULL, OPT_PEAK },
	{ "max-live", required_argument, NULL, OPT_LIVE },
	{ "max-allocations", required_argument, NULL, OPT_ALLOCATIONS },
	{ "max-temporary", required_argument, NULL, OPT_TEMPORARY },
	{ "require-complete", no_argument, NULL, OPT_COMPLETE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Returns -1 to go on, else the exit status. */
static int parse_options(gate_opts_t *o, int argc, char **argv)
{
	int c, help = 0, any = 0;

	optind = 0; /* glibc: start afresh, the CLI may run again */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", long_options, NULL)) != -1) {
		budget_t b;

		switch (c) {
		case OPT_HELP:
			help = 1;
			continue;
		case OPT_COMPLETE:
			o->require_complete = 1;
			continue;
		case '?':
			return usage_error("unknown option '%s'", argv[optind - 1]);
		case ':':
			return usage_error("option '%s' needs a value",
					   argv[optind - 1]);
		default:
			break;
		}
		b = (budget_t)(c - OPT_PEAK);
		if (budgets[b].is_size ? mt_units_parse_size(optarg, &o->limit[b]) :
					 mt_units_parse_count(optarg, &o->limit[b])) {
			fprintf(stderr, "memtrace: %s needs %s, not '%s'\n\n",
				budgets[b].option,
				budgets[b].is_size ?
					"a size: bytes, or with K, M or G "
					"(1024-based; KB is ambiguous)" :
					"a whole number",
				optarg);
			fputs(usage, stderr);
			return MT_EXIT_USAGE;
		}
		o->given[b] = 1;
	}
	if (help) {
		fputs(usage, stdout);
		return MT_EXIT_OK;
	}
	if (argc - optind > 1)
		return usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (argc - optind < 1)
		return usage_error("%s", "missing TRACE or SUMMARY argument");
	o->path = argv[optind];
	for (int b = 0; b < B_COUNT; b++)
		any |= o->given[b];
	if (!any && !o->require_complete)
		return usage_error("%s", "no budget given: use --max-peak, "
					 "--max-live, --max-allocations, "
					 "--max-temporary or --require-complete");
	return -1;
}

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

/* A number, and for a size its reading: "16600 (16.2 KiB)". */
static int add_value(mt_buf_t *b, uint64_t v, int is_size)
{
	int rc;

	ADD(mt_buf_add_u64(b, v));
	if (is_size) {
		ADD(mt_buf_add_str(b, " ("));
		ADD(mt_units_add_size(b, v));
		ADD(mt_buf_add_str(b, ")"));
	}
cleanup:
	return rc;
}

/* The site that weighs most in budget b: the most live bytes, the
 * highest peak of its own, the most calls (its allocations, and its
 * reallocs when the input is a trace: a site that reallocs in a loop
 * costs calls as one that allocates does).  NULL when no site has any
 * (or the summary file lists none). */
static const mt_profile_site_t *heaviest(const mt_profile_t *p, budget_t b)
{
	const mt_profile_site_t *best = NULL;

	for (size_t i = 0; i < p->nsites; i++) {
		const mt_profile_site_t *s = &p->sites[i];
		uint64_t v = b == B_LIVE ? s->live_bytes :
			     b == B_PEAK ? s->peak_live_bytes : s->calls;
		uint64_t bv = !best ? 0 :
			      b == B_LIVE ? best->live_bytes :
			      b == B_PEAK ? best->peak_live_bytes : best->calls;

		/* Sites come ranked: the first of equals is kept. */
		if (v > bv)
			best = s;
	}
	return best;
}

static int add_hint(mt_buf_t *out, const mt_profile_t *p, budget_t b)
{
	const mt_profile_site_t *s = heaviest(p, b);
	int rc = MT_OK;

	if (!s || b == B_TEMPORARY)
		return MT_OK;
	switch (b) {
	case B_LIVE:
		ADD(mt_buf_add_str(out, "     most live bytes: "));
		ADD(mt_units_add_size(out, s->live_bytes));
		ADD(mt_buf_add_str(out, " in "));
		ADD(mt_buf_add_u64(out, s->live_allocations));
		ADD(mt_buf_add_str(out, s->live_allocations == 1 ?
					" block from " : " blocks from "));
		break;
	case B_PEAK:
		ADD(mt_buf_add_str(out, "     highest site peak: "));
		ADD(mt_units_add_size(out, s->peak_live_bytes));
		ADD(mt_buf_add_str(out, " from "));
		break;
	default:
		/* Calls, not allocations: a site's reallocs may take its
		 * calls past the allocations total on the line above. */
		ADD(mt_buf_add_str(out, "     most calls: "));
		ADD(mt_buf_add_u64(out, s->calls));
		ADD(mt_buf_add_str(out, " from "));
		break;
	}
	ADD(mt_profile_add_frames(out, s, HINT_FRAMES));
	ADD(mt_buf_add_str(out, "\n"));
cleanup:
	return rc;
}

static int render(mt_buf_t *out, const gate_opts_t *o, const mt_profile_t *p,
		  int *failed, int *checked)
{
	int complete = !strcmp(p->status, "complete");
	int rc = MT_OK;

	*failed = *checked = 0;
	for (int i = 0; i < B_COUNT; i++) {
		budget_t b = (budget_t)i;
		uint64_t v = p->total[budgets[b].field];
		int fail;

		if (!o->given[b])
			continue;
		fail = v > o->limit[b];
		++*checked;
		*failed += fail;
		ADD(mt_buf_add_str(out, fail ? "FAIL " : "ok   "));
		ADD(mt_buf_add_str(out, budgets[b].option));
		ADD(mt_buf_add_str(out, " "));
		ADD(add_value(out, o->limit[b], budgets[b].is_size));
		ADD(mt_buf_add_str(out, ": "));
		ADD(mt_buf_add_str(out, mt_profile_field_name(budgets[b].field)));
		ADD(mt_buf_add_str(out, " is "));
		ADD(add_value(out, v, budgets[b].is_size));
		if (fail) {
			ADD(mt_buf_add_str(out, ", "));
			ADD(add_value(out, v - o->limit[b], budgets[b].is_size));
			ADD(mt_buf_add_str(out, " over"));
		}
		ADD(mt_buf_add_str(out, "\n"));
		if (fail)
			ADD(add_hint(out, p, b));
	}
	if (o->require_complete) {
		++*checked;
		*failed += !complete;
		ADD(mt_buf_add_str(out, complete ? "ok   " : "FAIL "));
		ADD(mt_buf_add_str(out, "--require-complete: status is "));
		ADD(mt_buf_add_str(out, p->status));
		if (!complete && p->message) {
			ADD(mt_buf_add_str(out, ": "));
			ADD(mt_buf_add_str(out, p->message));
		}
		ADD(mt_buf_add_str(out, "\n"));
	} else if (!complete) {
		ADD(mt_buf_add_str(out, "note: the "));
		ADD(mt_buf_add_str(out, p->source == MT_PROFILE_TRACE ?
					"trace" : "summarized trace"));
		ADD(mt_buf_add_str(out, " is "));
		ADD(mt_buf_add_str(out, p->status));
		ADD(mt_buf_add_str(out, ": its figures cover only the events it "
					"holds (--require-complete fails on it)\n"));
	}
	ADD(mt_buf_add_str(out, "memtrace gate: "));
	ADD(mt_buf_add_str(out, o->path));
	ADD(mt_buf_add_str(out, ": "));
	if (*failed) {
		ADD(mt_buf_add_u64(out, (uint64_t)*failed));
		ADD(mt_buf_add_str(out, " of "));
		ADD(mt_buf_add_u64(out, (uint64_t)*checked));
		ADD(mt_buf_add_str(out, *checked == 1 ? " budget failed\n" :
							" budgets failed\n"));
	} else {
		ADD(mt_buf_add_u64(out, (uint64_t)*checked));
		ADD(mt_buf_add_str(out, *checked == 1 ? " budget holds\n" :
							" budgets hold\n"));
	}
cleanup:
	return rc;
}

int mt_gate_cmd(int argc, char **argv)
{
	gate_opts_t o;
	mt_profile_t p;
	mt_buf_t out = MT_BUF_INIT;
	int status, failed, checked;

	memset(&o, 0, sizeof(o));
	if ((status = parse_options(&o, argc, argv)) >= 0)
		return status;
	if ((status = mt_profile_load_for_cli(&p, o.path)) >= 0)
		goto cleanup;
	if (render(&out, &o, &p, &failed, &checked)) {
		fputs("memtrace: out of memory\n", stderr);
		status = MT_EXIT_NOMEM;
		goto cleanup;
	}
	if (mt_output_stdout(out.data, out.len)) {
		fprintf(stderr, "memtrace: cannot write 'standard output': %s\n",
			strerror(errno));
		status = MT_EXIT_CANTCREAT;
		goto cleanup;
	}
	status = failed ? GATE_FAILED : MT_EXIT_OK;
cleanup:
	mt_buf_release(&out);
	mt_profile_release(&p);
	return status;
}
