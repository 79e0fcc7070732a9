/*
 * mt_repetitions: the spread of a workload's runs, as `memtrace
 * repetitions FILE [--json]` shows it (cmd/repetitions.c): FILE is a repetitions file (one repetition row per
 * run, format.md section 6, as memtrace-run writes
 * allocations.repetitions.jsonl).
 *
 * For every integer field of the summary line it prints min, median (of
 * an even number of runs: the mean of the two middle values, rounded
 * down, mt_run_lines_median(), as memtrace-run's table), max and spread (max -
 * min, and in percent of the median) over the runs that have a summary,
 * and flags each field that varies.  A deterministic workload gives the
 * same figures every run, so every field is expected to hold still except
 * duration_ns, which is shown but never flagged.  Runs whose exit codes, row states or trace
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

#include <stddef.h>

#include "../base/mt_buf.h"

/* Room enough for mt_repetitions_run()'s why. */
#define MT_REPETITIONS_WHY_MAX 512

/*
 * Read the repetitions file at path and append its statistics to out
 * (text, or one JSON line when json), *varies set when a field or a
 * tally varies.  Returns MT_OK; MT_ENOMEM; MT_EIO, *err the errno of the
 * failed read; or MT_ECORRUPT when path is not a repetitions file, why
 * (cap bytes) saying why.  It prints nothing.
 */
int mt_repetitions_run(const char *path, int json, mt_buf_t *out,
		       int *varies, int *err, char *why, size_t cap);

/* The command (cmd/repetitions.c); argv[0] is "repetitions".  Returns
 * the exit status. */
int mt_repetitions_cmd(int argc, char **argv);

#endif
