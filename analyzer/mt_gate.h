/*
 * mt_gate: `memtrace gate TRACE|SUMMARY [--max-peak SIZE] [--max-live SIZE]
 * [--max-allocations N] [--max-temporary N] [--require-complete]`, the
 * budget check a CI job fails a build on.
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

/* argv[0] is "gate". */
int mt_gate_cmd(int argc, char **argv);

#endif
