/*
 * mt_gate: the budget check a CI job fails a build on, as `memtrace gate
 * TRACE|SUMMARY [--max-peak SIZE] [--max-live SIZE] [--max-allocations N]
 * [--max-temporary N] [--require-complete]` runs it (cmd/gate.c).
 *
 * Each budget given is checked against the trace's or the summary's
 * totals (peak_live_bytes, live_bytes, allocations,
 * temporary_allocations, status); a limit holds when the value is at most
 * the limit.  It prints, on stdout, one line per budget ("ok" or "FAIL",
 * the budget, its limit and the value; under a failed size or count
 * budget, the site that weighs most in it), then a verdict line.
 *
 * Returns the exit status: 0 every budget holds, 1 one or more failed,
 * 2 the input is not valid evidence, 3 it is missing or unreadable, 4 out
 * of memory, 64 usage (no budget given, a bad SIZE or N).  Everything is
 * computed before anything is printed, so a failure prints nothing on
 * stdout.  Like every command it keeps no state between calls.
 */
#ifndef MT_GATE_H
#define MT_GATE_H

#include <stdint.h>

#include "../base/mt_buf.h"
#include "../gates/mt_ci.h"
#include "../gates/mt_profile.h"
#include "../gates/mt_suppress.h"

typedef enum {
	MT_GATE_PEAK,        /* --max-peak SIZE: peak_live_bytes */
	MT_GATE_LIVE,        /* --max-live SIZE: live_bytes */
	MT_GATE_ALLOCATIONS, /* --max-allocations N: allocations */
	MT_GATE_TEMPORARY,   /* --max-temporary N: temporary_allocations */
	MT_GATE_BUDGETS,
} mt_gate_budget_t;

/* The budgets to check, and the input's name for the verdict line. */
typedef struct {
	int given[MT_GATE_BUDGETS];
	uint64_t limit[MT_GATE_BUDGETS];
	int require_complete;
	const char *path;
	/* --allocator NAME: the figures are its blocks' alone, which the
	 * verdict line says; NULL: every allocator's. */
	const char *allocator;
	/* What suppressions left out of live_bytes (mt_suppress_profile()),
	 * said on the --max-live line when not nothing. */
	mt_suppress_left_t left;
} mt_gate_t;

/* A budget's option ("--max-peak"), as the report names it. */
const char *mt_gate_budget_option(mt_gate_budget_t b);

/* Whether a budget's limit is a size (else a count). */
int mt_gate_budget_is_size(mt_gate_budget_t b);

/*
 * Append the report of g's budgets over p (evidence) to out: a line per
 * budget given, then the verdict.  *failed and *checked count the budgets
 * that failed and those checked.  MT_OK or MT_ENOMEM.
 */
int mt_gate_render(mt_buf_t *out, const mt_gate_t *g, const mt_profile_t *p,
		   int *failed, int *checked);

/*
 * The same checks as cases of c (mt_ci), for --junit and --format github:
 * one per budget given, in the report's order, a failed one with the
 * report's hint as its site and that site's source line; the suite's
 * name ("memtrace gate PATH"), the note lines and the verdict line.
 * MT_OK or MT_ENOMEM.
 */
int mt_gate_ci(mt_ci_t *c, const mt_gate_t *g, const mt_profile_t *p);

/* The command (cmd/gate.c); argv[0] is "gate".  Returns the exit status. */
int mt_gate_cmd(int argc, char **argv);

#endif
