/*
 * mt_repetitions: `memtrace repetitions FILE [--json]`, the spread of a
 * workload's runs: FILE is a repetitions file (one repetition row per
 * run, format.md section 6, as memtrace-run writes
 * allocations.repetitions.jsonl).
 *
 * For every integer field of the summary line it prints min, median (of
 * an even number of runs: the mean of the two middle values, rounded
 * down, as memtrace-run), max and spread (max - min, and in percent of the
 * median) over the runs that have a summary, and flags each field that
 * varies.  A deterministic workload gives the same figures every run, so
 * every field is expected to hold still except duration_ns, which is
 * shown but never flagged.  Runs whose exit codes, row states or trace
 * statuses differ are flagged too.
 *
 * Returns the exit status: 0 nothing varies, 1 something does, 2 FILE is
 * not a repetitions file (a line that is not a repetition row, or no line
 * at all), 3 missing or unreadable, 4 out of memory, 64 usage.  Text for
 * people on stdout, or with --json one JSON object on one line; nothing is
 * printed before everything is computed.
 */
#ifndef MT_REPETITIONS_H
#define MT_REPETITIONS_H

/* argv[0] is "repetitions". */
int mt_repetitions_cmd(int argc, char **argv);

#endif
